/* Frame sequences: names with a frame number, frame ranges, shards and
 * resuming.
 *
 * "####" is Blender's placeholder (the frame zero-padded to as many digits
 * as there are #), "%04d" / "%d" the printf style of Nuke, ffmpeg and
 * OIDN's scripts.  A render farm (Flamenco, OpenCue, Deadline) runs the
 * same command on N machines with --shard I/N: frame k goes to shard k mod
 * N, so every frame is denoised exactly once with no shared state. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Finds a placeholder in name: returns its start, sets its length and width. */
static const char* find_placeholder(const char* name, size_t* length, int* width)
{
  for (const char* p = name; *p; ++p) {
    if (*p == '#') {
      size_t n = 0;
      while (p[n] == '#')
        ++n;
      *length = n;
      *width = (int)n;
      return p;
    }
    if (*p == '%') {
      const char* q = p + 1;
      int w = 0;
      if (*q == '0')
        ++q;
      while (*q >= '0' && *q <= '9' && w < 100)
        w = w * 10 + (*q++ - '0');
      if (*q == 'd') {
        *length = (size_t)(q + 1 - p);
        *width = w;
        return p;
      }
    }
  }
  return NULL;
}

int cli_pattern_parse(const char* name, cli_pattern* pattern, char* err, size_t err_size)
{
  memset(pattern, 0, sizeof *pattern);
  if (strlen(name) >= sizeof pattern->prefix) {
    snprintf(err, err_size, "%.100s...: name too long", name);
    return 1;
  }
  size_t length = 0;
  int width = 0;
  const char* at = find_placeholder(name, &length, &width);
  if (!at) {
    memcpy(pattern->prefix, name, strlen(name) + 1);
    return 0;
  }
  size_t other_length;
  int other_width;
  if (find_placeholder(at + length, &other_length, &other_width)) {
    snprintf(err, err_size, "%s: more than one frame number (#### or %%04d)", name);
    return 1;
  }
  if (strchr(at, '/')) {
    snprintf(err, err_size, "%s: the frame number must be in the file name, not a folder", name);
    return 1;
  }
  memcpy(pattern->prefix, name, (size_t)(at - name));
  pattern->prefix[at - name] = '\0';
  memcpy(pattern->suffix, at + length, strlen(at + length) + 1);
  pattern->width = width;
  pattern->is_pattern = 1;
  return 0;
}

int cli_pattern_format(const cli_pattern* pattern, long frame, char* out, size_t size)
{
  const int n = pattern->is_pattern ? snprintf(out, size, "%s%0*ld%s", pattern->prefix,
                                               pattern->width, frame, pattern->suffix)
                                    : snprintf(out, size, "%s", pattern->prefix);
  return n < 0 || (size_t)n >= size;
}

static int compare_long(const void* a, const void* b)
{
  const long x = *(const long*)a, y = *(const long*)b;
  return (x > y) - (x < y);
}

/* Sorts and removes repeats; returns the new count. */
static long sort_unique(long* frames, long count)
{
  if (!frames || count <= 0)
    return 0;
  qsort(frames, (size_t)count, sizeof *frames, compare_long);
  long n = 0;
  for (long i = 0; i < count; ++i)
    if (n == 0 || frames[n - 1] != frames[i])
      frames[n++] = frames[i];
  return n;
}

/* Appends to a growing array; non-zero when out of memory. */
static int push(long** frames, long* count, long* capacity, long frame)
{
  if (*count == *capacity) {
    const long grown = *capacity ? 2 * *capacity : 64;
    long* more = realloc(*frames, (size_t)grown * sizeof **frames);
    if (!more)
      return 1;
    *frames = more;
    *capacity = grown;
  }
  (*frames)[(*count)++] = frame;
  return 0;
}

long cli_pattern_scan(const cli_pattern* pattern, long** frames, char* err, size_t err_size)
{
  *frames = NULL;
  /* the folder and the part of the file name before the number */
  char dir[CLI_PATH_SIZE];
  const char* slash = strrchr(pattern->prefix, '/');
  const char* file_prefix = slash ? slash + 1 : pattern->prefix;
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == pattern->prefix)
    snprintf(dir, sizeof dir, "/");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - pattern->prefix), pattern->prefix);
  DIR* d = opendir(dir);
  if (!d) {
    snprintf(err, err_size, "%s: %s", dir, strerror(errno));
    return -1;
  }
  const size_t prefix_length = strlen(file_prefix), suffix_length = strlen(pattern->suffix);
  long count = 0, capacity = 0;
  const struct dirent* entry;
  while ((entry = readdir(d)) != NULL) {
    const char* name = entry->d_name;
    const size_t length = strlen(name);
    if (length <= prefix_length + suffix_length || strncmp(name, file_prefix, prefix_length) != 0 ||
        strcmp(name + length - suffix_length, pattern->suffix) != 0)
      continue;
    char digits[32];
    const size_t n = length - prefix_length - suffix_length;
    if (n >= sizeof digits)
      continue;
    memcpy(digits, name + prefix_length, n);
    digits[n] = '\0';
    char* end;
    errno = 0;
    const long frame = strtol(digits, &end, 10);
    if (errno || *end || !(digits[0] == '-' || (digits[0] >= '0' && digits[0] <= '9')))
      continue;
    /* only names the pattern writes ("0012", not "00012" or "12" for ####) */
    char again[32];
    snprintf(again, sizeof again, "%0*ld", pattern->width, frame);
    if (strcmp(again, digits) != 0)
      continue;
    if (push(frames, &count, &capacity, frame)) {
      closedir(d);
      free(*frames);
      *frames = NULL;
      snprintf(err, err_size, "out of memory");
      return -1;
    }
  }
  closedir(d);
  return sort_unique(*frames, count);
}

long cli_frames_parse(const char* text, long** frames, char* err, size_t err_size)
{
  /* frames in all; numbers within +-1e9, so that last - first cannot
   * overflow (and no frame name needs more than 10 digits) */
  enum { MAX_FRAMES = 10000000, MAX_FRAME_NUMBER = 1000000000 };
  *frames = NULL;
  long count = 0, capacity = 0;
  const char* p = text;
  while (*p) {
    char* end;
    errno = 0;
    const long first = strtol(p, &end, 10);
    long last = first;
    if (errno || end == p)
      goto bad;
    p = end;
    if (*p == '-') {
      const char* q = p + 1;
      errno = 0;
      last = strtol(q, &end, 10);
      if (errno || end == q)
        goto bad;
      p = end;
    }
    if (first < -MAX_FRAME_NUMBER || last > MAX_FRAME_NUMBER) {
      free(*frames);
      *frames = NULL;
      snprintf(err, err_size, "--frames %s: frame numbers beyond +-%ld", text,
               (long)MAX_FRAME_NUMBER);
      return -1;
    }
    if (last < first || last - first >= MAX_FRAMES - count) {
      free(*frames);
      *frames = NULL;
      snprintf(err, err_size, "--frames %s: empty or too long range", text);
      return -1;
    }
    for (long f = first; f <= last; ++f)
      if (push(frames, &count, &capacity, f)) {
        free(*frames);
        *frames = NULL;
        snprintf(err, err_size, "out of memory");
        return -1;
      }
    if (*p == ',')
      ++p;
    else if (*p)
      goto bad;
  }
  if (count == 0)
    goto bad;
  return sort_unique(*frames, count);
bad:
  free(*frames);
  *frames = NULL;
  snprintf(err, err_size, "--frames %s: expected frames like 1-100 or 1,5,10-20", text);
  return -1;
}

int cli_shard_has(long frame, int index, int count)
{
  return ((frame % count) + count) % count == index;
}

int cli_same_file(const char* a, const char* b)
{
  struct stat sa, sb;
  return a[0] && b[0] && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* Removes the folders make_parent_dirs made for path (empty ones only). */
static void remove_made_dirs(const char* path, size_t made)
{
  if (!made)
    return;
  char dir[CLI_PATH_SIZE];
  const char* slash = strrchr(path, '/');
  const size_t n = slash ? (size_t)(slash - path) : 0;
  if (n >= sizeof dir || made > n)
    return;
  memcpy(dir, path, n);
  dir[n] = '\0';
  /* deepest first (past a failed mkdir the deeper ones do not exist);
   * rmdir removes only empty folders, so nothing another process put there
   * goes */
  for (size_t end = n; end >= made; --end) {
    if (end < n && dir[end] != '/')
      continue;
    dir[end] = '\0';
    if (rmdir(dir) != 0 && errno != ENOENT)
      return;
  }
}

/* Creates the missing folders of path's parent (as mkdir -p); 0, or 1 with
 * err.  *made: where in path the first folder it made ends (0: none). */
static int make_parent_dirs(const char* path, size_t* made, char* err, size_t err_size)
{
  char dir[CLI_PATH_SIZE];
  *made = 0;
  const char* slash = strrchr(path, '/');
  if (!slash || slash == path)
    return 0; /* the current folder or the root */
  const size_t n = (size_t)(slash - path);
  if (n >= sizeof dir) {
    snprintf(err, err_size, "%s: path too long", path);
    return 1;
  }
  memcpy(dir, path, n);
  dir[n] = '\0';
  /* each prefix ending before a '/', then the folder itself */
  for (size_t i = 1; i <= n; ++i) {
    if (i < n && dir[i] != '/')
      continue;
    const char saved = dir[i];
    dir[i] = '\0';
    struct stat st;
    if (stat(dir, &st) != 0) {
      if (mkdir(dir, 0777) == 0) {
        if (!*made)
          *made = i; /* the first folder this call made */
      } else if (errno != EEXIST) {
        snprintf(err, err_size, "%s: cannot create the folder %s: %s", path, dir,
                 strerror(errno));
        dir[i] = saved;
        remove_made_dirs(path, *made);
        *made = 0;
        return 1;
      }
    }
    dir[i] = saved;
  }
  return 0;
}

int cli_write_file(const char* path, const lull_io_image* image, int srgb, char* err,
                   size_t err_size)
{
  size_t made = 0;
  if (make_parent_dirs(path, &made, err, err_size))
    return 1;
  const int status = lull_io_write(path, image, srgb, err, err_size);
  if (status)
    remove_made_dirs(path, made);
  return status;
}

int cli_output_is_newer(const char* output, const char* input)
{
  struct stat out, in;
  if (stat(output, &out) != 0 || stat(input, &in) != 0)
    return 0;
  if (out.st_mtim.tv_sec != in.st_mtim.tv_sec)
    return out.st_mtim.tv_sec > in.st_mtim.tv_sec;
  return out.st_mtim.tv_nsec > in.st_mtim.tv_nsec;
}
