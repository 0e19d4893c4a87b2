/* Benchmark of the CPU filters through the public API: ATrous, RT (hdr)
 * and ATrous with colorMode 0 ("ATrous0"), ATrous with inputScale 1
 * ("ATrous1": without the automatic scale's pass over the colour) and RT
 * in its default LDR mode ("RTldr": the output clamped to [0, 1], a loop
 * of its own, which a change once kept GCC from vectorising) at
 * 1280x720, 1920x1080 and
 * 3840x2160 with colour + albedo + normal + depth (synthetic, noisy
 * inputs: the filter's cost does not depend on content), 5 levels.
 * Reports the median of repeated runs, ms per megapixel and the threads
 * used.  --filter runs one of the five (for profiling).
 *
 *   bench_atrous_cpu [--threads N] [--runs N] [--sizes 720,1080,2160]
 *                    [--filter ATrous|RT|ATrous0|ATrous1|RTldr]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <OpenImageDenoise/oidn.h>

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int compare_double(const void* a, const void* b)
{
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n)
{
  qsort(v, (size_t)n, sizeof *v, compare_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static float frand(unsigned* s)
{
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) / 16777216.0f;
}

/* Times ATrous and RT at one size; returns 0, or 1 after printing why. */
static int bench_size(OIDNDevice device, int w, int h, int runs, const char* only)
{
  const size_t n = (size_t)w * (size_t)h;
  float* color = malloc(n * 3 * sizeof(float));
  float* albedo = malloc(n * 3 * sizeof(float));
  float* normal = malloc(n * 3 * sizeof(float));
  float* depth = malloc(n * sizeof(float));
  float* output = malloc(n * 3 * sizeof(float));
  double* t = malloc((size_t)runs * sizeof(double));
  int status = 0;
  if (!color || !albedo || !normal || !depth || !output || !t) {
    fprintf(stderr, "out of memory at %dx%d\n", w, h);
    status = 1;
  }
  unsigned s = 1;
  for (size_t i = 0; i < n && status == 0; ++i) {
    for (int c = 0; c < 3; ++c) {
      color[3 * i + (size_t)c] = frand(&s) * 2.0f;
      albedo[3 * i + (size_t)c] = 0.2f + 0.6f * (float)((i / 64) % 2);
    }
    normal[3 * i] = (float)((i % (size_t)w) > (size_t)w / 2);
    normal[3 * i + 1] = 0.0f;
    normal[3 * i + 2] = 1.0f;
    depth[i] = 1.0f + 0.001f * (float)(i % (size_t)w);
  }
  /* ATrous with its defaults (SVGF's variance-guided colour test), RT,
   * ATrous with Dammertz's fixed colour sigma (colorMode 0), and ATrous
   * with an explicit inputScale (no automatic scale), RT as OIDN's
   * default (LDR) */
  const char* filters[] = {"ATrous", "RT", "ATrous", "ATrous", "RT"};
  const char* labels[] = {"ATrous", "RT", "ATrous0", "ATrous1", "RTldr"};
  for (int k = 0; k < 5 && status == 0; ++k) {
    if (only && strcmp(only, labels[k]) != 0)
      continue;
    OIDNFilter f = oidnNewFilter(device, filters[k]);
    if (k == 2)
      oidnSetFilterInt(f, "colorMode", 0);
    if (k == 3)
      oidnSetFilterFloat(f, "inputScale", 1.0f);
    oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "albedo", albedo, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "normal", normal, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "depth", depth, OIDN_FORMAT_FLOAT, (size_t)w, (size_t)h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 0, 0, 0);
    if (k == 1)
      oidnSetFilterBool(f, "hdr", true);
    oidnCommitFilter(f);
    oidnExecuteFilter(f); /* warm-up: page faults, thread pool */
    for (int r = 0; r < runs; ++r) {
      const double t0 = now_ms();
      oidnExecuteFilter(f);
      t[r] = now_ms() - t0;
    }
    const char* message = NULL;
    if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE) {
      fprintf(stderr, "%s: %s\n", labels[k], message);
      status = 1;
    } else {
      const double ms = median(t, runs);
      char size[32];
      snprintf(size, sizeof size, "%dx%d", w, h);
      printf("%-8s %-11s %10.1f %10.1f\n", labels[k], size, ms, ms / ((double)n * 1e-6));
    }
    oidnReleaseFilter(f);
  }
  free(color);
  free(albedo);
  free(normal);
  free(depth);
  free(output);
  free(t);
  return status;
}

int main(int argc, char** argv)
{
  int threads = 0, runs = 7;
  const char* sizes = "720,1080,2160";
  const char* only = NULL; /* one of the labels, for profiling */
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
      sizes = argv[++i];
    else if (!strcmp(argv[i], "--filter") && i + 1 < argc)
      only = argv[++i];
    else {
      fprintf(stderr,
              "usage: %s [--threads N] [--runs N] [--sizes 720,1080,2160]"
              " [--filter ATrous|RT|ATrous0|ATrous1|RTldr]\n",
              argv[0]);
      return 2;
    }
  }
  if (only && strcmp(only, "ATrous") != 0 && strcmp(only, "RT") != 0 &&
      strcmp(only, "ATrous0") != 0 && strcmp(only, "ATrous1") != 0 &&
      strcmp(only, "RTldr") != 0) {
    fprintf(stderr, "unknown filter '%s' (ATrous, RT, ATrous0, ATrous1 or RTldr)\n", only);
    return 2;
  }
  if (runs < 1 || runs > 1000) {
    fprintf(stderr, "runs must be in [1, 1000]\n");
    return 2;
  }

  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  if (threads > 0)
    oidnSetDeviceInt(device, "numThreads", threads);
  oidnCommitDevice(device);
  const char* message = NULL;
  if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE) {
    fprintf(stderr, "device: %s\n", message);
    return 1;
  }
  printf("device: %s, %d threads, median of %d runs after 1 warm-up\n",
         oidnGetPhysicalDeviceString(oidnGetNumPhysicalDevices() - 1, "name"),
         oidnGetDeviceInt(device, "numThreads"), runs);
  printf("%-8s %-11s %10s %10s\n", "filter", "size", "ms", "ms/MP");

  char list[64];
  snprintf(list, sizeof list, "%s", sizes);
  int status = 0;
  for (char* tok = strtok(list, ","); tok && status == 0; tok = strtok(NULL, ",")) {
    const int h = atoi(tok);
    const int w = h == 720 ? 1280 : h == 1080 ? 1920 : h == 2160 ? 3840 : h;
    if (h < 1 || h > 16384) {
      fprintf(stderr, "bad size '%s'\n", tok);
      status = 2;
      break;
    }
    status = bench_size(device, w, h, runs, only);
  }
  oidnReleaseDevice(device);
  return status;
}
