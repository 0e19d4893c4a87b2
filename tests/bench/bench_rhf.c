/* Benchmark of the RHF filter (ray histogram fusion) through the public
 * API, on the CPU and on a CUDA device in the same run: synthetic inputs
 * of 16 samples a pixel binned into 8 bins (as gdpt writes them; the
 * filter's cost does not depend on the content), the default window (13 x
 * 13), patch (3 x 3) and two scales, every image in a device buffer (no
 * copies timed).  Sizes: 256 x 192 (gdpt's scenes), 640 x 640 (Szeracki
 * et al.'s GPU timing), 1280 x 720 (their CPU timing).  Reports the
 * median of --runs runs on CUDA (after a warm-up run) and of --cpu-runs on
 * the CPU, and the ratio of the medians.
 *
 *   bench_rhf [--runs N] [--cpu-runs M] [--sizes 256,640,720] [--devices cpu,cuda]
 *             [--cpu-threads T] [--bins B] */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

#include "bench_util.h"
#include "rhf_math.h"

/* A step edge and a gradient, each sample the expected value times an
 * exponential factor (a linear congruential generator: no libc rand). */
static void make(int w, int h, int bins, float* color, float* hist)
{
  unsigned state = 12345u;
  const size_t n = (size_t)w * (size_t)h;
  memset(hist, 0, n * (size_t)bins * 3 * sizeof(float));
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) {
      const float e = ((i % (size_t)w) < (size_t)w / 2 ? 0.1f : 0.9f) * (1.0f + 0.2f * c);
      double sum = 0.0;
      for (int s = 0; s < 16; ++s) {
        state = state * 1664525u + 1013904223u;
        const float u = (float)(state >> 8) / 16777216.0f;
        const float v = e * -logf(1.0f - 0.999f * u);
        sum += v;
        int k0;
        float w0;
        lull_rhf_bin(v, bins, 2.2f, 2.5f, &k0, &w0);
        hist[(i * (size_t)bins + (size_t)k0) * 3 + (size_t)c] += w0;
        if (k0 + 1 < bins)
          hist[(i * (size_t)bins + (size_t)k0 + 1) * 3 + (size_t)c] += 1.0f - w0;
      }
      color[3 * i + (size_t)c] = (float)(sum / 16.0);
    }
}

/* Median ms of `runs` runs after `warm` untimed ones; -1 on an error. */
static double time_device(OIDNDevice device, int w, int h, int bins, const float* color,
                          const float* hist, int warm, int runs)
{
  const size_t n = (size_t)w * (size_t)h;
  OIDNBuffer cb = oidnNewBuffer(device, n * 12), hb = oidnNewBuffer(device, n * 12 * (size_t)bins),
             ob = oidnNewBuffer(device, n * 12);
  oidnWriteBuffer(cb, 0, n * 12, color);
  oidnWriteBuffer(hb, 0, n * 12 * (size_t)bins, hist);
  OIDNFilter f = oidnNewFilter(device, "RHF");
  oidnSetFilterImage(f, "color", cb, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 0, 0, 0);
  for (int k = 0; k < bins; ++k) {
    char name[32];
    snprintf(name, sizeof name, "histogram%d", k);
    oidnSetFilterImage(f, name, hb, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 12 * (size_t)k,
                       12 * (size_t)bins, 0);
  }
  oidnSetFilterImage(f, "output", ob, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 0, 0, 0);
  oidnCommitFilter(f);
  const double median = bench_filter_median_ms(device, f, warm, runs);
  oidnReleaseFilter(f);
  oidnReleaseBuffer(cb);
  oidnReleaseBuffer(hb);
  oidnReleaseBuffer(ob);
  return median;
}

int main(int argc, char** argv)
{
  int runs = 10, cpu_runs = 3, cpu_threads = 0, bins = 8;
  const char* sizes = "256,640,720";
  const char* devices = "cpu,cuda";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--runs"))
      runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--cpu-runs"))
      cpu_runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--sizes"))
      sizes = argv[i + 1];
    else if (!strcmp(argv[i], "--devices"))
      devices = argv[i + 1];
    else if (!strcmp(argv[i], "--cpu-threads"))
      cpu_threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--bins"))
      bins = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: bench_rhf [--runs N] [--cpu-runs M] [--sizes 256,640,720] "
                      "[--devices cpu,cuda] [--cpu-threads T] [--bins B]\n");
      return 2;
    }
  }
  if (bins < 1 || bins > LULL_RHF_MAX_BINS) {
    fprintf(stderr, "bench_rhf: --bins 1 to %d\n", LULL_RHF_MAX_BINS);
    return 2;
  }
  OIDNDevice cpu = NULL, cuda = NULL;
  if (bench_has_word(devices, "cpu") && cpu_runs > 0) {
    cpu = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
    if (cpu_threads > 0)
      oidnSetDeviceInt(cpu, "numThreads", cpu_threads);
    oidnCommitDevice(cpu);
  }
  if (bench_has_word(devices, "cuda") && runs > 0) {
    cuda = oidnNewDevice(OIDN_DEVICE_TYPE_CUDA);
    const char* message = NULL;
    if (cuda)
      oidnCommitDevice(cuda);
    if (!cuda || oidnGetDeviceError(cuda, &message) != OIDN_ERROR_NONE) {
      fprintf(stderr, "no CUDA device: %s\n", message ? message : "");
      if (cuda)
        oidnReleaseDevice(cuda);
      cuda = NULL;
    }
  }
  printf("RHF (%d bins, window 13 x 13, patch 3 x 3, 2 scales), median ms: CUDA of %d runs, "
         "CPU of %d runs\n", bins, runs, cpu_runs);
  printf("%-10s %12s %12s %12s\n", "size", "CUDA ms", "CPU ms", "CPU / CUDA");
  static const struct
  {
    const char* key;
    int w, h;
  } all[] = {{"256", 256, 192}, {"640", 640, 640}, {"720", 1280, 720}, {"1080", 1920, 1080}};
  for (size_t s = 0; s < sizeof all / sizeof *all; ++s) {
    if (!bench_has_word(sizes, all[s].key))
      continue;
    const int w = all[s].w, h = all[s].h;
    const size_t n = (size_t)w * (size_t)h;
    float* color = malloc(n * 12);
    float* hist = malloc(n * 12 * (size_t)bins);
    if (!color || !hist) {
      fprintf(stderr, "out of memory\n");
      free(color);
      free(hist);
      return 1;
    }
    make(w, h, bins, color, hist);
    const double g = cuda ? time_device(cuda, w, h, bins, color, hist, 1, runs) : -1.0;
    const double c = cpu ? time_device(cpu, w, h, bins, color, hist, 0, cpu_runs) : -1.0;
    char size[32];
    snprintf(size, sizeof size, "%dx%d", w, h);
    char gs[32] = "-", cs[32] = "-", ratio[32] = "-";
    if (g > 0)
      snprintf(gs, sizeof gs, "%.2f", g);
    if (c > 0)
      snprintf(cs, sizeof cs, "%.1f", c);
    if (g > 0 && c > 0)
      snprintf(ratio, sizeof ratio, "%.1f", c / g);
    printf("%-10s %12s %12s %12s\n", size, gs, cs, ratio);
    free(color);
    free(hist);
  }
  if (cpu)
    oidnReleaseDevice(cpu);
  if (cuda)
    oidnReleaseDevice(cuda);
  return 0;
}
