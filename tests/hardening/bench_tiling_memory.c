/* Memory and time of the ATrous filter under maxMemoryMB (a program, not a
 * test: it reports, it asserts nothing).
 *
 *   bench_tiling_memory [SIDE] [CAP_MB...]      (default 2048; -1 256 64 16)
 *
 * For each cap, a child process makes SIDE x SIDE colour, albedo, normal and
 * depth images (touched, so they count), reads its peak resident memory
 * (VmHWM), runs the filter (RT's default configuration, 2 threads) three
 * times and reads the peak again: the growth is what the filter needed on
 * top of its inputs and output.  Prints that growth and the median time;
 * the ratios to the uncapped run are measured in the same run. */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <OpenImageDenoise/oidn.h>

#include "peak_memory.h"

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare(const void* a, const void* b)
{
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Runs in a child; writes "growth_kb seconds" to fd. */
static void measure(int side, int cap_mb, int fd)
{
  const size_t n = (size_t)side * (size_t)side;
  float* color = malloc(n * 3 * sizeof(float));
  float* albedo = malloc(n * 3 * sizeof(float));
  float* normal = malloc(n * 3 * sizeof(float));
  float* depth = malloc(n * sizeof(float));
  float* out = malloc(n * 3 * sizeof(float));
  unsigned s = 1;
  for (size_t i = 0; i < n * 3; ++i) {
    s = s * 1664525u + 1013904223u;
    color[i] = (float)(s >> 8) / 16777216.0f;
    albedo[i] = 0.5f;
    normal[i] = (i % 3) == 2 ? 1.0f : 0.0f;
    out[i] = 1.0f; /* not 0: GCC would turn malloc + zeroing into calloc (untouched pages) */
  }
  for (size_t i = 0; i < n; ++i)
    depth[i] = 1.0f + 1e-4f * (float)(i % (size_t)side);
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnSetDeviceInt(device, "numThreads", 2);
  oidnCommitDevice(device);
  OIDNFilter f = oidnNewFilter(device, "ATrous");
  const size_t w = (size_t)side;
  oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, w, w, 0, 0, 0);
  oidnSetSharedFilterImage(f, "albedo", albedo, OIDN_FORMAT_FLOAT3, w, w, 0, 0, 0);
  oidnSetSharedFilterImage(f, "normal", normal, OIDN_FORMAT_FLOAT3, w, w, 0, 0, 0);
  oidnSetSharedFilterImage(f, "depth", depth, OIDN_FORMAT_FLOAT, w, w, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, w, w, 0, 0, 0);
  oidnSetFilterInt(f, "maxMemoryMB", cap_mb);
  oidnCommitFilter(f);
  const long before = lull_peak_memory_kb();
  double times[3];
  for (int r = 0; r < 3; ++r) {
    const double t0 = now();
    oidnExecuteFilter(f);
    times[r] = now() - t0;
  }
  const long after = lull_peak_memory_kb();
  const char* message = NULL;
  if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE)
    fprintf(stderr, "error: %s\n", message);
  qsort(times, 3, sizeof times[0], compare);
  char result[64];
  const int len = snprintf(result, sizeof result, "%ld %.4f\n", after - before, times[1]);
  if (write(fd, result, (size_t)len) != len)
    _exit(1);
  oidnReleaseFilter(f);
  oidnReleaseDevice(device);
  _exit(0);
}

int main(int argc, char** argv)
{
  const int side = argc > 1 ? atoi(argv[1]) : 2048;
  int caps[16] = {-1, 256, 64, 16};
  int count = 4;
  if (argc > 2) {
    count = 0;
    for (int i = 2; i < argc && count < 16; ++i)
      caps[count++] = atoi(argv[i]);
  }
  printf("ATrous (RT defaults), %d x %d, 2 threads: peak memory on top of the images, median "
         "of 3 runs\n", side, side);
  double base_time = 0.0;
  for (int k = 0; k < count; ++k) {
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0)
      return 1;
    fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
      close(pipe_fd[0]);
      measure(side, caps[k], pipe_fd[1]);
    }
    close(pipe_fd[1]);
    char text[64] = {0};
    const ssize_t got = read(pipe_fd[0], text, sizeof text - 1);
    close(pipe_fd[0]);
    waitpid(child, NULL, 0);
    long kb = 0;
    double seconds = 0.0;
    if (got <= 0 || sscanf(text, "%ld %lf", &kb, &seconds) != 2) {
      printf("maxMemoryMB %5d: failed\n", caps[k]);
      continue;
    }
    if (k == 0)
      base_time = seconds;
    printf("maxMemoryMB %5d: %7.1f MB, %.3f s (%.2fx the first)\n", caps[k], (double)kb / 1024.0,
           seconds, base_time > 0.0 ? seconds / base_time : 1.0);
  }
  return 0;
}
