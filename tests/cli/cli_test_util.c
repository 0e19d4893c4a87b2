#define _XOPEN_SOURCE 700

#include "cli_test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"
#include "test_util.h"
#if defined(LULL_IO_HAS_OIIO)
  #include "exr_fixtures.h"
#endif

extern char** environ;

static int remove_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw)
{
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

int cli_scratch(const char* name, char* out, size_t size)
{
  char root[1024];
  snprintf(root, sizeof root, "%s/cli_scratch", LULL_TEST_BINARY_DIR);
  mkdir(root, 0777);
  if (snprintf(out, size, "%s/%s", root, name) >= (int)size)
    return 1;
  nftw(out, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  return mkdir(out, 0777) != 0;
}

int cli_tool_built(const char* tool)
{
  if (tool && tool[0])
    return 0;
  printf("the command-line tool is not built (LULL_TOOLS=OFF): skipped\n");
  return 77;
}

lull_io_image cli_read(const char* path)
{
  lull_io_image image;
  char err[512];
  if (lull_io_read(path, &image, err, sizeof err))
    fprintf(stderr, "%s\n", err);
  return image;
}

int cli_start(const char* tool, const char* dir, const char* const* args)
{
  const char* argv[64];
  int n = 0;
  argv[n++] = tool;
  for (int i = 0; args[i] && n < 63; ++i)
    argv[n++] = args[i];
  argv[n] = NULL;
  char out[1200], err[1200];
  snprintf(out, sizeof out, "%s/stdout.txt", dir);
  snprintf(err, sizeof err, "%s/stderr.txt", dir);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  pid_t pid;
  const int status = posix_spawn(&pid, tool, &actions, NULL, (char* const*)argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  return status == 0 ? (int)pid : -1;
}

int cli_wait_signal(int pid, int* signal)
{
  *signal = 0;
  if (pid < 0)
    return -1;
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (!WIFSIGNALED(status))
    return -1;
  *signal = WTERMSIG(status);
  return 128 + *signal;
}

int cli_wait(int pid)
{
  int signal;
  return cli_wait_signal(pid, &signal);
}

int cli_run(const char* tool, const char* dir, const char* const* args)
{
  return cli_wait(cli_start(tool, dir, args));
}

int cli_expect(const char* tool, const char* dir, int status, const char* const* args,
               const char* file, int line)
{
  const int got = cli_run(tool, dir, args);
  if (got != status) {
    char* err = cli_slurp(dir, "stderr.txt");
    fprintf(stderr, "%s:%d: exit status %d, expected %d; stderr:\n%s", file, line, got, status,
            err ? err : "");
    free(err);
    ++lull_test_failures;
  }
  return got;
}

int cli_said(const char* dir, const char* stream, const char* text)
{
  char* s = cli_slurp(dir, stream);
  const int found = s && strstr(s, text) != NULL;
  if (!found)
    fprintf(stderr, "expected '%s' in %s: %s\n", text, stream, s ? s : "");
  free(s);
  return found;
}

void cli_path(char* out, size_t size, const char* dir, const char* name)
{
  snprintf(out, size, "%s/%s", dir, name);
}

char* cli_slurp(const char* dir, const char* name)
{
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "rb");
  size_t size = 0, capacity = 4096;
  char* text = malloc(capacity);
  if (!text)
    return NULL;
  if (f) {
    size_t n;
    while ((n = fread(text + size, 1, capacity - size - 1, f)) > 0) {
      size += n;
      if (capacity - size < 2) {
        char* more = realloc(text, capacity * 2);
        if (!more)
          break;
        text = more;
        capacity *= 2;
      }
    }
    fclose(f);
  }
  text[size] = '\0';
  return text;
}

int cli_count_lines(const char* text)
{
  int n = 0;
  for (const char* p = text; *p; ++p)
    n += *p == '\n';
  return n;
}

int cli_scene_make(cli_scene* s, int width, int height, unsigned seed, float noise)
{
  memset(s, 0, sizeof *s);
  s->width = width;
  s->height = height;
  const size_t n = (size_t)width * (size_t)height;
  s->clean = malloc(n * 3 * sizeof(float));
  s->noisy = malloc(n * 3 * sizeof(float));
  s->alpha = malloc(n * sizeof(float));
  s->albedo = malloc(n * 3 * sizeof(float));
  s->normal = malloc(n * 3 * sizeof(float));
  s->depth = malloc(n * sizeof(float));
  s->position = malloc(n * 3 * sizeof(float));
  if (!s->clean || !s->noisy || !s->alpha || !s->albedo || !s->normal || !s->depth ||
      !s->position)
    return 1;
  unsigned state = seed ? seed : 1;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const size_t i = (size_t)y * (size_t)width + (size_t)x;
      const int box = x > width / 3 && x < 2 * width / 3 && y > height / 3;
      const float left[3] = {0.8f, 0.2f, 0.2f}, right[3] = {0.2f, 0.7f, 0.3f},
                  grey[3] = {0.6f, 0.6f, 0.6f};
      const float* a = box ? grey : x < width / 2 ? left : right;
      const float light = 0.3f + 0.7f * (float)y / (float)height; /* smooth shading */
      const float n3[3] = {box ? 0.6f : 0.0f, 0.0f, box ? 0.8f : 1.0f};
      const float z = box ? 2.0f : 3.0f;
      for (int c = 0; c < 3; ++c) {
        s->albedo[i * 3 + c] = a[c];
        s->clean[i * 3 + c] = a[c] * light;
        /* Monte Carlo-like: unbiased multiplicative noise */
        const float u = lull_test_random(&state);
        s->noisy[i * 3 + c] = s->clean[i * 3 + c] * (1.0f + noise * (2.0f * u - 1.0f) * 1.7f);
        s->normal[i * 3 + c] = n3[c];
      }
      s->alpha[i] = (x + y) % 17 == 0 ? 0.5f : 1.0f;
      s->depth[i] = z;
      s->position[i * 3 + 0] = (float)x / (float)width;
      s->position[i * 3 + 1] = (float)y / (float)height;
      s->position[i * 3 + 2] = z;
    }
  return 0;
}

void cli_scene_free(cli_scene* s)
{
  free(s->clean);
  free(s->noisy);
  free(s->alpha);
  free(s->albedo);
  free(s->normal);
  free(s->depth);
  free(s->position);
  memset(s, 0, sizeof *s);
}

int cli_scene_write_plain(const cli_scene* s, const char* what, const char* path)
{
  const float* data = strcmp(what, "clean") == 0    ? s->clean
                      : strcmp(what, "albedo") == 0 ? s->albedo
                      : strcmp(what, "normal") == 0 ? s->normal
                                                    : s->noisy;
  lull_io_image image;
  memset(&image, 0, sizeof image);
  image.width = s->width;
  image.height = s->height;
  static const char* const rgb[] = {"R", "G", "B"};
  char err[512];
  int status = !lull_io_add_pass(&image, "", "", 3, rgb, data) ||
               lull_io_write(path, &image, 1, err, sizeof err);
  if (status)
    fprintf(stderr, "cannot write %s: %s\n", path, err);
  lull_io_free(&image);
  return status;
}

int cli_scene_write_blender(const cli_scene* s, const char* path, const char* const* layers,
                            int num_layers, int noisy_image_pass)
{
#if defined(LULL_IO_HAS_OIIO)
  enum { MAX = 32 * 8 };
  const size_t n = (size_t)s->width * (size_t)s->height;
  float* planes = malloc(n * MAX * sizeof(float));
  char(*names)[96] = malloc(MAX * sizeof *names);
  fixture_channel channels[MAX];
  int count = 0;
  if (!planes || !names) {
    free(planes);
    free(names);
    return 1;
  }
  /* pass, channels, source, channels in source, half */
  struct
  {
    const char* pass;
    const char* chans;
    const float* src;
    int stride;
    int half;
  } passes[] = {{"Combined", "RGB", noisy_image_pass ? s->clean : s->noisy, 3, 1},
                {"Combined", "A", s->alpha, 1, 1},
                {"Denoising Albedo", "RGB", s->albedo, 3, 1},
                {"Denoising Normal", "XYZ", s->normal, 3, 0},
                {"Denoising Depth", "Z", s->depth, 1, 0},
                {"Position", "XYZ", s->position, 3, 0},
                {"Emit", "RGB", s->albedo, 3, 1},
                {"Noisy Image", "RGB", s->noisy, 3, 1}};
  const int num_passes = noisy_image_pass ? 8 : 7;
  for (int l = 0; l < num_layers; ++l)
    for (int p = 0; p < num_passes; ++p)
      for (int c = 0; passes[p].chans[c] && count < MAX; ++c) {
        float* plane = planes + (size_t)count * n;
        for (size_t i = 0; i < n; ++i) /* layers differ a little */
          plane[i] = passes[p].src[i * (size_t)passes[p].stride + (size_t)c] *
                     (1.0f + 0.1f * (float)l);
        snprintf(names[count], sizeof names[count], "%s.%s.%c", layers[l], passes[p].pass,
                 passes[p].chans[c]);
        channels[count].name = names[count];
        channels[count].half = passes[p].half;
        channels[count].part = 0;
        channels[count].plane = plane;
        ++count;
      }
  static const char* const attributes[] = {"BlenderMultiChannel", "Blender V2.55.1 and newer",
                                           "cycles.ViewLayer.samples", "4",
                                           "Note", "lull test fixture", NULL};
  static const char* const part[] = {"rgba"};
  const int status =
      fixture_write_exr(path, s->width, s->height, channels, count, part, 1, attributes, NULL);
  free(planes);
  free(names);
  return status;
#else
  (void)s;
  (void)path;
  (void)layers;
  (void)num_layers;
  (void)noisy_image_pass;
  return 1;
#endif
}

double cli_pass_rel_mse(const lull_io_pass* pass, const float* reference, int width, int height)
{
  const size_t n = (size_t)width * (size_t)height;
  float* rgb = malloc(n * 3 * sizeof(float));
  if (!rgb)
    return INFINITY;
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c)
      rgb[i * 3 + (size_t)c] =
          pass->data[i * (size_t)pass->channels + (size_t)(c < pass->channels ? c : 0)];
  const double e = lull_metric_rel_mse(rgb, reference, (size_t)width, (size_t)height, 3);
  free(rgb);
  return e;
}

int cli_file_exists(const char* path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

int cli_same_bytes(const char* a, const char* b)
{
  FILE* fa = fopen(a, "rb");
  FILE* fb = fopen(b, "rb");
  int same = fa && fb;
  while (same) {
    const int ca = fgetc(fa), cb = fgetc(fb);
    if (ca != cb)
      same = 0;
    if (ca == EOF || cb == EOF)
      break;
  }
  if (fa)
    fclose(fa);
  if (fb)
    fclose(fb);
  return same;
}

int cli_copy_file(const char* from, const char* to)
{
  FILE* in = fopen(from, "rb");
  FILE* out = in ? fopen(to, "wb") : NULL;
  int ok = in && out;
  char buffer[65536];
  size_t n;
  while (ok && (n = fread(buffer, 1, sizeof buffer, in)) > 0)
    ok = fwrite(buffer, 1, n, out) == n;
  if (in)
    fclose(in);
  if (out)
    ok = (fclose(out) == 0) && ok;
  return !ok;
}

int cli_temp_files(const char* dir)
{
  DIR* d = opendir(dir);
  if (!d)
    return 0;
  int n = 0;
  const struct dirent* e;
  while ((e = readdir(d)) != NULL)
    n += e->d_name[0] == '.' && strstr(e->d_name, ".lull-") && strstr(e->d_name, ".tmp");
  closedir(d);
  return n;
}

int cli_touch(const char* path, double offset)
{
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const double t = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec + offset;
  struct timespec times[2];
  times[0].tv_sec = (time_t)floor(t);
  times[0].tv_nsec = (long)((t - floor(t)) * 1e9);
  times[1] = times[0];
  return utimensat(AT_FDCWD, path, times, 0);
}

long long cli_mtime(const char* path)
{
  struct stat st;
  if (stat(path, &st) != 0)
    return -1;
  return (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
}
