/* Benchmark of the Regression filter (or --filter RDFC or DDID, which take
 * the same images and, with one buffer, its variance) through the public
 * API, on the CPU and on a CUDA device in the same run: two halves
 * (colorA, colorB) and one buffer, with albedo, normal and depth, at
 * 1280x720, 1920x1080 and 3840x2160 (and sizes 256, 512, 1024: squares,
 * the sizes of Vicini 2015's Tables 4.1 and 3.1), every image in a device
 * buffer (no copies timed).  Synthetic
 * inputs: a textured, shaded scene with per-half noise and a few fireflies
 * (the filter's cost does not depend on the content).  Reports the median
 * time of --runs runs on CUDA (after a warm-up run: the first allocates)
 * and of --cpu-runs on the CPU, and the ratio CPU / CUDA of the medians.
 *
 *   bench_regression [--filter Regression|RDFC|DDID] [--runs N] [--cpu-runs M] [--sizes 720,1080,2160]
 *                    [--modes halves,one] [--devices cpu,cuda] [--cpu-threads T]
 *                    [--cpu-sizes 720,...] [--cpu-modes halves,one]
 *
 * The CPU side is slow (about a minute a frame of halves at 720p on 2 cores;
 * docs/performance.md): --cpu-runs 0 skips it, --cpu-sizes and
 * --cpu-modes (default: as --sizes, --modes) pick fewer. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <OpenImageDenoise/oidn.h>

#include "bench_util.h"



enum { I_COLOR_A, I_COLOR_B, I_COLOR, I_ALBEDO, I_NORMAL, I_DEPTH, I_VARIANCE, I_COUNT };
static const char* const image_names[I_COUNT] = {"colorA", "colorB", "color",   "albedo",
                                                 "normal", "depth",  "variance"};
static const int image_channels[I_COUNT] = {3, 3, 3, 3, 3, 1, 3};

/* the filter timed (--filter) */
static const char* filter_name = "Regression";

static void make_scene(int w, int h, float* im[I_COUNT])
{
  unsigned seed = 12345u;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      const int right = x * 3 > w + y;
      const float a = 0.45f + 0.25f * sinf(0.031f * (float)x) * cosf(0.023f * (float)y);
      const float shade = 0.2f + 0.8f * (float)y / (float)h;
      for (int c = 0; c < 3; ++c) {
        const float clean = a * shade * (right ? 2.0f : 1.0f);
        for (int k = 0; k < 2; ++k) {
          float v = clean * (0.4f + 1.2f * bench_random01(&seed));
          if (bench_random01(&seed) < 0.002f)
            v *= 30.0f;
          im[k][3 * i + (size_t)c] = v;
        }
        im[I_COLOR][3 * i + (size_t)c] = 0.5f * (im[0][3 * i + (size_t)c] + im[1][3 * i + (size_t)c]);
        /* the mean's variance: each half uniform over 1.2 clean wide */
        im[I_VARIANCE][3 * i + (size_t)c] = 0.06f * clean * clean;
        im[I_ALBEDO][3 * i + (size_t)c] = a;
        im[I_NORMAL][3 * i + (size_t)c] = c == 2 ? (right ? 0.8f : 1.0f) : (c == 0 && right ? 0.6f : 0.0f);
      }
      im[I_DEPTH][i] = right ? 5.0f + 0.001f * (float)x : 3.0f + 0.002f * (float)y;
    }
}

/* Median ms of `runs` runs (after `warm` untimed ones); -1 on an error. */
static double time_device(OIDNDevice device, int w, int h, int halves, float* const host[I_COUNT],
                          int warm, int runs)
{
  const size_t n = (size_t)w * (size_t)h;
  OIDNBuffer b[I_COUNT] = {0};
  OIDNFilter f = oidnNewFilter(device, filter_name);
  for (int k = 0; k < I_COUNT; ++k) {
    if (halves ? k == I_COLOR : k <= I_COLOR_B)
      continue;
    /* Regression estimates the variance; RDFC and DDID take it (one buffer) */
    if (k == I_VARIANCE && (halves || strcmp(filter_name, "Regression") == 0))
      continue;
    const size_t bytes = n * (size_t)image_channels[k] * sizeof(float);
    b[k] = oidnNewBuffer(device, bytes);
    oidnWriteBuffer(b[k], 0, bytes, host[k]);
    oidnSetFilterImage(f, image_names[k], b[k], image_channels[k] == 3 ? OIDN_FORMAT_FLOAT3 : OIDN_FORMAT_FLOAT,
                       (size_t)w, (size_t)h, 0, 0, 0);
  }
  OIDNBuffer out = oidnNewBuffer(device, n * 3 * sizeof(float));
  oidnSetFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 0, 0, 0);
  oidnCommitFilter(f);
  const double median = bench_filter_median_ms(device, f, warm, runs);
  oidnReleaseFilter(f);
  oidnReleaseBuffer(out);
  for (int k = 0; k < I_COUNT; ++k)
    if (b[k])
      oidnReleaseBuffer(b[k]);
  return median;
}

int main(int argc, char** argv)
{
  int runs = 10, cpu_runs = 3, cpu_threads = 0;
  const char* sizes = "720,1080,2160";
  const char* modes = "halves,one";
  const char* devices = "cpu,cuda";
  const char* cpu_sizes = NULL;
  const char* cpu_modes = NULL;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 == argc) { /* an option without its value, --help included */
      fprintf(stderr, "usage: bench_regression [--filter Regression|RDFC|DDID] [--runs N] [--cpu-runs M] "
                      "[--sizes 720,1024,1080,2160] "
                      "[--modes halves,one] [--devices cpu,cuda] [--cpu-threads T] "
                      "[--cpu-sizes ...] [--cpu-modes ...]\n");
      return 2;
    }
    if (!strcmp(argv[i], "--filter"))
      filter_name = argv[i + 1];
    else if (!strcmp(argv[i], "--runs"))
      runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--cpu-runs"))
      cpu_runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--sizes"))
      sizes = argv[i + 1];
    else if (!strcmp(argv[i], "--modes"))
      modes = argv[i + 1];
    else if (!strcmp(argv[i], "--devices"))
      devices = argv[i + 1];
    else if (!strcmp(argv[i], "--cpu-sizes"))
      cpu_sizes = argv[i + 1];
    else if (!strcmp(argv[i], "--cpu-modes"))
      cpu_modes = argv[i + 1];
    else if (!strcmp(argv[i], "--cpu-threads"))
      cpu_threads = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (!cpu_sizes)
    cpu_sizes = sizes;
  if (!cpu_modes)
    cpu_modes = modes;
  OIDNDevice cpu = NULL, cuda = NULL;
  if (bench_has_word(devices, "cpu") && cpu_runs > 0) {
    cpu = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
    if (cpu_threads > 0)
      oidnSetDeviceInt(cpu, "numThreads", cpu_threads);
    oidnCommitDevice(cpu);
  }
  if (bench_has_word(devices, "cuda") && runs > 0) {
    cuda = oidnNewDevice(OIDN_DEVICE_TYPE_CUDA);
    if (cuda)
      oidnCommitDevice(cuda);
    const char* message = NULL;
    if (!cuda || oidnGetDeviceError(cuda, &message) != OIDN_ERROR_NONE) {
      fprintf(stderr, "no CUDA device: %s\n", message ? message : "");
      if (cuda)
        oidnReleaseDevice(cuda);
      cuda = NULL;
    }
  }
  char threads_text[32] = "all cores";
  if (cpu_threads > 0)
    snprintf(threads_text, sizeof threads_text, "%d threads", cpu_threads);
  printf("%s (albedo, normal, depth), median ms: CUDA of %d runs, CPU (%s) of %d runs\n",
         filter_name, runs, threads_text, cpu_runs);
  printf("%-10s %-7s %12s %12s %12s\n", "size", "mode", "CUDA ms", "CPU ms", "CPU / CUDA");
  static const struct
  {
    const char* key;
    int w, h;
  } all_sizes[] = {{"256", 256, 256}, {"512", 512, 512}, {"720", 1280, 720}, {"1024", 1024, 1024}, {"1080", 1920, 1080}, {"2160", 3840, 2160}};
  for (size_t s = 0; s < sizeof all_sizes / sizeof *all_sizes; ++s) {
    if (!bench_has_word(sizes, all_sizes[s].key))
      continue;
    const int w = all_sizes[s].w, h = all_sizes[s].h;
    float* host[I_COUNT];
    for (int k = 0; k < I_COUNT; ++k)
      host[k] = malloc((size_t)w * (size_t)h * (size_t)image_channels[k] * sizeof(float));
    make_scene(w, h, host);
    for (int halves = 1; halves >= 0; --halves) {
      if (!bench_has_word(modes, halves ? "halves" : "one"))
        continue;
      const double g = cuda ? time_device(cuda, w, h, halves, host, 1, runs) : -1.0;
      const int on_cpu = cpu && bench_has_word(cpu_sizes, all_sizes[s].key) &&
                         bench_has_word(cpu_modes, halves ? "halves" : "one");
      const double c = on_cpu ? time_device(cpu, w, h, halves, host, 0, cpu_runs) : -1.0;
      char gs[32] = "n/a", cs[32] = "n/a", rs[32] = "n/a";
      if (g > 0)
        snprintf(gs, sizeof gs, "%.2f", g);
      if (c > 0)
        snprintf(cs, sizeof cs, "%.1f", c);
      if (g > 0 && c > 0)
        snprintf(rs, sizeof rs, "%.1fx", c / g);
      printf("%4dx%-5d %-7s %12s %12s %12s\n", w, h, halves ? "halves" : "one", gs, cs, rs);
      fflush(stdout);
    }
    for (int k = 0; k < I_COUNT; ++k)
      free(host[k]);
  }
  if (cpu)
    oidnReleaseDevice(cpu);
  if (cuda)
    oidnReleaseDevice(cuda);
  return 0;
}
