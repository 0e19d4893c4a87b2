/* Benchmark of temporal mode through the public API: a filter per frame
 * against the same filter with temporal=true, ATrous (the default) or
 * Regression (--filter; RT's quality HIGH runs Regression outside temporal
 * mode and its a-trous in it, so RT would compare two filters), at
 * 1280x720, 1920x1080 and 3840x2160, on the CPU
 * or a CUDA device, with every image in a device buffer (no copies
 * timed).  Synthetic inputs: a textured background panning by a
 * fractional motion (history valid almost everywhere, as in a moving
 * shot) and per-frame noise; colour, albedo, normal, depth and motion.
 * Reports the median time of a frame over --runs frames (after two warm-up
 * frames: the first allocates the history, the second has none to read)
 * and the overhead of temporal mode.
 *
 *   bench_temporal [--device cpu|cuda] [--filter ATrous|Regression] [--runs N]
 *                  [--sizes 720,1080,2160]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <OpenImageDenoise/oidn.h>

#include "bench_util.h"



/* Frame t's images (interleaved floats) into host arrays. */
static void make_frame(int w, int h, int t, float* color, float* albedo, float* normal,
                       float* depth, float* motion, unsigned* seed)
{
  const float mx = 0.7f, my = -0.4f; /* pixels a frame, x right, rows down */
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      const float u = (float)x - mx * (float)t, v = (float)y - my * (float)t;
      const float a = 0.45f + 0.25f * sinf(0.031f * u) * cosf(0.023f * v);
      for (int c = 0; c < 3; ++c) {
        albedo[3 * i + (size_t)c] = a;
        color[3 * i + (size_t)c] = a * (0.5f + (float)(bench_next(seed) & 1023) / 1023.0f);
        normal[3 * i + (size_t)c] = c == 2 ? -1.0f : 0.0f;
      }
      depth[i] = 5.0f + 0.001f * (float)y;
      motion[2 * i] = -mx;
      motion[2 * i + 1] = my;
    }
}

typedef struct images
{
  OIDNBuffer b[6]; /* color, albedo, normal, depth, motion, output */
  float* host[5];
} images;

static const char* const names[6] = {"color", "albedo", "normal", "depth", "motion", "output"};
static const int channels[6] = {3, 3, 3, 1, 2, 3};

static double run(OIDNDevice device, const char* type, int w, int h, int temporal, int runs)
{
  const size_t n = (size_t)w * (size_t)h;
  images im;
  for (int k = 0; k < 6; ++k) {
    im.b[k] = oidnNewBuffer(device, n * (size_t)channels[k] * sizeof(float));
    if (k < 5)
      im.host[k] = malloc(n * (size_t)channels[k] * sizeof(float));
  }
  OIDNFilter f = oidnNewFilter(device, type);
  for (int k = 0; k < 6; ++k) {
    if (k == 4 && !temporal)
      continue;
    oidnSetFilterImage(f, names[k], im.b[k], (OIDNFormat)(OIDN_FORMAT_FLOAT + channels[k] - 1),
                       (size_t)w, (size_t)h, 0, 0, 0);
  }
  oidnSetFilterBool(f, "hdr", true);
  oidnSetFilterBool(f, "temporal", temporal);
  unsigned seed = 12345u;
  double* times = malloc(sizeof(double) * (size_t)runs);
  for (int t = 0; t < runs + 2; ++t) {
    make_frame(w, h, t, im.host[0], im.host[1], im.host[2], im.host[3], im.host[4], &seed);
    for (int k = 0; k < 5; ++k)
      oidnWriteBuffer(im.b[k], 0, n * (size_t)channels[k] * sizeof(float), im.host[k]);
    if (temporal)
      oidnSetFilterInt(f, "frame", t);
    oidnCommitFilter(f);
    oidnSyncDevice(device);
    const double start = bench_now_ms();
    oidnExecuteFilter(f);
    const double ms = bench_now_ms() - start;
    if (t >= 2)
      times[t - 2] = ms;
  }
  const char* message = NULL;
  if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE)
    fprintf(stderr, "bench_temporal: %s\n", message ? message : "error");
  qsort(times, (size_t)runs, sizeof *times, bench_compare_double);
  const double median = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
  free(times);
  oidnReleaseFilter(f);
  for (int k = 0; k < 6; ++k) {
    oidnReleaseBuffer(im.b[k]);
    if (k < 5)
      free(im.host[k]);
  }
  return median;
}

int main(int argc, char** argv)
{
  const char* device_name = "cpu";
  const char* type = "ATrous";
  int runs = 9;
  char sizes[64] = "720,1080,2160";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
      device_name = argv[++i];
    else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc &&
             (strcmp(argv[i + 1], "ATrous") == 0 || strcmp(argv[i + 1], "Regression") == 0))
      type = argv[++i];
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
      snprintf(sizes, sizeof sizes, "%s", argv[++i]);
    else {
      fprintf(stderr, "usage: bench_temporal [--device cpu|cuda] [--filter ATrous|Regression] "
                      "[--runs N] [--sizes 720,1080]\n");
      return 2;
    }
  }
  if (runs < 1)
    runs = 1;
  OIDNDevice device = oidnNewDevice(strcmp(device_name, "cuda") == 0 ? OIDN_DEVICE_TYPE_CUDA
                                                                      : OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  const char* message = NULL;
  if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE) {
    fprintf(stderr, "bench_temporal: device %s: %s\n", device_name, message ? message : "error");
    return 1;
  }
  printf("bench_temporal: %s per frame vs temporal, %s, median of %d frames\n", type,
         device_name, runs);
  for (char* tok = strtok(sizes, ","); tok; tok = strtok(NULL, ",")) {
    const int h = atoi(tok), w = h == 2160 ? 3840 : h == 1080 ? 1920 : h == 720 ? 1280 : h;
    if (h <= 0)
      continue;
    const double spatial = run(device, type, w, h, 0, runs);
    const double temporal = run(device, type, w, h, 1, runs);
    printf("%dx%d: per frame %.3f ms, temporal %.3f ms (+%.1f%%)\n", w, h, spatial, temporal,
           100.0 * (temporal / spatial - 1.0));
    fflush(stdout);
  }
  oidnReleaseDevice(device);
  return 0;
}
