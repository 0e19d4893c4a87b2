/* Atomic replacement of a file: write a new file in the destination's
 * directory, flush it to disk, rename it over the destination.  rename(2)
 * within one file system is atomic, so readers (and a crash) see either
 * the old file or the complete new one, never a truncated mix. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io_internal.h"

/* The directory part of path ("." when there is none). */
static void directory_of(const char* path, char* dir, size_t size)
{
  const char* slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, size, ".");
  else if (slash == path)
    snprintf(dir, size, "/");
  else
    snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/* Writing through a symbolic link replaces the file it points to, not the
 * link itself. */
static int resolve_destination(const char* path, char* out, size_t size)
{
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    char* real = realpath(path, NULL);
    if (real) {
      const int n = snprintf(out, size, "%s", real);
      free(real);
      return n < 0 || (size_t)n >= size;
    }
    /* a dangling link: write where it points would be surprising; replace it */
  }
  const int n = snprintf(out, size, "%s", path);
  return n < 0 || (size_t)n >= size;
}

int lull_io_temp_create(lull_io_temp_file* file, const char* path, char* err, size_t err_size)
{
  memset(file, 0, sizeof *file);
  file->fd = -1;
  if (resolve_destination(path, file->final_path, sizeof file->final_path))
    return lull_io_fail(err, err_size, path, "path too long");
  struct stat st;
  /* the rename replaces only a regular file: not a directory, nor a device,
   * FIFO or socket (as root, -o /dev/null deleted /dev/null) */
  if (stat(file->final_path, &st) == 0 && !S_ISREG(st.st_mode))
    return lull_io_fail(err, err_size, path,
                        S_ISDIR(st.st_mode)
                            ? "is a directory"
                            : "is not a regular file (a device, FIFO or socket); write to a file");

  char dir[sizeof file->final_path];
  directory_of(file->final_path, dir, sizeof dir);
  const char* slash = strrchr(file->final_path, '/');
  const char* base = slash ? slash + 1 : file->final_path;

  /* A hidden name that says what it is, unique per process and attempt;
   * O_EXCL makes a collision retry instead of sharing a file. */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  unsigned long seed = (unsigned long)now.tv_nsec ^ ((unsigned long)getpid() << 16);
  for (int attempt = 0; attempt < 100; ++attempt) {
    seed = seed * 6364136223846793005ul + 1442695040888963407ul;
    const int n = snprintf(file->temp_path, sizeof file->temp_path, "%s/.%.180s.lull-%06lx.tmp",
                           dir, base, (seed >> 33) & 0xfffffful);
    if (n < 0 || (size_t)n >= sizeof file->temp_path)
      return lull_io_fail(err, err_size, path, "path too long");
    file->fd = open(file->temp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (file->fd >= 0)
      break;
    if (errno != EEXIST)
      return lull_io_fail(err, err_size, path, "cannot create a file in %s: %s", dir,
                          strerror(errno));
  }
  if (file->fd < 0)
    return lull_io_fail(err, err_size, path, "cannot create a temporary file in %s", dir);
  /* replacing a file keeps its permissions */
  if (stat(file->final_path, &st) == 0)
    (void)fchmod(file->fd, st.st_mode & 07777);
  return 0;
}

int lull_io_temp_commit(lull_io_temp_file* file, char* err, size_t err_size)
{
  /* Writers may have written through their own handle: reopen to flush. */
  if (file->fd < 0)
    file->fd = open(file->temp_path, O_WRONLY | O_CLOEXEC);
  if (file->fd < 0 || fsync(file->fd) != 0) {
    const int e = errno;
    lull_io_temp_discard(file);
    return lull_io_fail(err, err_size, file->final_path, "cannot write: %s", strerror(e));
  }
  close(file->fd);
  file->fd = -1;
  if (rename(file->temp_path, file->final_path) != 0) {
    const int e = errno;
    lull_io_temp_discard(file);
    return lull_io_fail(err, err_size, file->final_path, "cannot replace: %s", strerror(e));
  }
  /* make the rename itself durable (best effort: not all file systems allow it) */
  char dir[sizeof file->final_path];
  directory_of(file->final_path, dir, sizeof dir);
  const int dfd = open(dir, O_RDONLY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
  return 0;
}

void lull_io_temp_discard(lull_io_temp_file* file)
{
  if (file->fd >= 0)
    close(file->fd);
  file->fd = -1;
  if (file->temp_path[0])
    unlink(file->temp_path);
  file->temp_path[0] = '\0';
}
