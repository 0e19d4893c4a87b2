/* Size limits and memory exhaustion, with OIDN's exact error codes.
 *
 *   - images over 65536 pixels per side, or whose width * height *
 *     channels exceeds INT32_MAX (OIDN's rule), or whose strides and
 *     offsets would overflow size_t, are refused with
 *     OIDN_ERROR_INVALID_ARGUMENT, for shared and buffer images alike; the
 *     largest images OIDN allows are accepted;
 *   - buffers larger than memory give OIDN_ERROR_OUT_OF_MEMORY;
 *   - the core's size arithmetic saturates instead of wrapping;
 *   - the CPU backend's cache of working planes reuses a block for a run of
 *     the same or a smaller size, allocates for a larger one, keeps one
 *     block at most and frees it when cleared (LeakSanitizer checks);
 *   - numThreads far above the processors (up to INT_MAX) runs with the
 *     processors there are (a million threads overflowed the OpenMP
 *     runtime's stack: a crash found through fuzz_api's numThreads values);
 *   - in a child process whose address space is limited (RLIMIT_AS), every
 *     filter type on an image too large for the limit fails with
 *     OIDN_ERROR_OUT_OF_MEMORY and the device keeps working: a small run
 *     afterwards succeeds.  (Skipped under AddressSanitizer, which reserves
 *     terabytes of address space for itself.) */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <OpenImageDenoise/oidn.h>

#include "atrous.h"
#include "planes.h"
#include "sanitizer.h"
#include "test_util.h"

static void expect(OIDNDevice device, OIDNError want, const char* fragment, int line)
{
  const char* message = NULL;
  const OIDNError code = oidnGetDeviceError(device, &message);
  if (code != want || (fragment && (!message || !strstr(message, fragment)))) {
    fprintf(stderr, "%s:%d: error %d '%s', wanted %d '%s'\n", __FILE__, line, (int)code,
            message ? message : "", (int)want, fragment ? fragment : "");
    ++lull_test_failures;
  }
}
#define EXPECT(device, code, fragment) expect(device, code, fragment, __LINE__)

static void test_image_limits(void)
{
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  OIDNFilter f = oidnNewFilter(device, "ATrous");
  static float pixels[64];
  OIDNBuffer buffer = oidnNewBuffer(device, 4096);
  EXPECT(device, OIDN_ERROR_NONE, NULL);

  /* per side */
  static const size_t sides[][2] = {{65537, 1}, {1, 65537}, {(size_t)1 << 32, 1},
                                    {SIZE_MAX, SIZE_MAX}};
  for (size_t k = 0; k < sizeof sides / sizeof sides[0]; ++k) {
    oidnSetSharedFilterImage(f, "color", pixels, OIDN_FORMAT_FLOAT3, sides[k][0], sides[k][1], 0,
                             0, 0);
    EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "too large");
    oidnSetFilterImage(f, "color", buffer, OIDN_FORMAT_FLOAT3, sides[k][0], sides[k][1], 0, 0, 0);
    EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "too large");
  }
  /* width * height * channels must fit an int (OIDN): 65536 x 32768 x 1
   * is one too many, 65536 x 32767 x 1 fits; 65536 x 65536 x 3 overflows
   * 32 bits too */
  oidnSetSharedFilterImage(f, "color", pixels, OIDN_FORMAT_FLOAT, 65536, 32768, 0, 0, 0);
  EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "too large");
  oidnSetSharedFilterImage(f, "color", pixels, OIDN_FORMAT_FLOAT3, 65536, 65536, 0, 0, 0);
  EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "too large");
  oidnSetSharedFilterImage(f, "color", pixels, OIDN_FORMAT_FLOAT, 65536, 32767, 0, 0, 0);
  EXPECT(device, OIDN_ERROR_NONE, NULL); /* accepted (never run) */
  oidnUnsetFilterImage(f, "color");

  /* strides whose products overflow size_t */
  oidnSetSharedFilterImage(f, "color", pixels, OIDN_FORMAT_FLOAT3, 2, 2, 0, SIZE_MAX / 2, 0);
  EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "pixel stride is too large");
  oidnSetSharedFilterImage(f, "color", pixels, OIDN_FORMAT_FLOAT3, 2, 2, 0, 0, SIZE_MAX / 2);
  EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "row stride is too large");
  oidnSetSharedFilterImage(f, "color", pixels, OIDN_FORMAT_FLOAT3, 65536, 2, 0,
                           SIZE_MAX / 65536, 0);
  EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "too large");
  /* an offset that wraps the address space */
  oidnSetSharedFilterImage(f, "color", pixels, OIDN_FORMAT_FLOAT3, 2, 2, SIZE_MAX - 8, 0, 0);
  EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "wraps");
  /* buffer regions: offset and span checked without overflow */
  oidnSetFilterImage(f, "color", buffer, OIDN_FORMAT_FLOAT3, 2, 2, SIZE_MAX, 0, 0);
  EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "out of bounds");
  oidnSetFilterImage(f, "color", buffer, OIDN_FORMAT_FLOAT3, 2, 2, 4096 - 47, 0, 0);
  EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "out of bounds");
  oidnSetFilterImage(f, "color", buffer, OIDN_FORMAT_FLOAT3, 2, 2, 4096 - 48, 0, 0);
  EXPECT(device, OIDN_ERROR_NONE, NULL); /* the last 48 bytes: fits exactly */
  oidnSetFilterImage(f, "color", buffer, OIDN_FORMAT_FLOAT3, 1024, 1024, 0, 0, 0);
  EXPECT(device, OIDN_ERROR_INVALID_ARGUMENT, "out of bounds");

  /* buffers: larger than memory */
  OIDNBuffer huge = oidnNewBuffer(device, SIZE_MAX);
  CHECK(huge == NULL);
  EXPECT(device, OIDN_ERROR_OUT_OF_MEMORY, "out of memory");
  huge = oidnNewBuffer(device, (size_t)1 << 62);
  CHECK(huge == NULL);
  EXPECT(device, OIDN_ERROR_OUT_OF_MEMORY, "out of memory");

  oidnReleaseBuffer(buffer);
  oidnReleaseFilter(f);
  oidnReleaseDevice(device);
  EXPECT(NULL, OIDN_ERROR_NONE, NULL);
}

static void test_thread_limits(void)
{
  static const int requests[] = {1 << 20, 2147483647, 100000};
  static float in[24 * 20 * 3], out[24 * 20 * 3];
  for (size_t k = 0; k < sizeof requests / sizeof requests[0]; ++k) {
    OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
    oidnSetDeviceInt(device, "numThreads", requests[k]);
    oidnCommitDevice(device);
    EXPECT(device, OIDN_ERROR_NONE, NULL);
    const int threads = oidnGetDeviceInt(device, "numThreads");
    CHECK(threads >= 1 && threads <= 4096);
    static const char* const types[] = {"ATrous", "Gaussian", "Poisson"};
    for (int t = 0; t < 3; ++t) {
      OIDNFilter f = oidnNewFilter(device, types[t]);
      oidnSetSharedFilterImage(f, "color", in, OIDN_FORMAT_FLOAT3, 24, 20, 0, 0, 0);
      if (t == 2) {
        oidnSetSharedFilterImage(f, "gradientX", in, OIDN_FORMAT_FLOAT3, 24, 20, 0, 0, 0);
        oidnSetSharedFilterImage(f, "gradientY", in, OIDN_FORMAT_FLOAT3, 24, 20, 0, 0, 0);
      }
      oidnSetSharedFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, 24, 20, 0, 0, 0);
      oidnCommitFilter(f);
      oidnExecuteFilter(f);
      EXPECT(device, OIDN_ERROR_NONE, NULL);
      oidnReleaseFilter(f);
    }
    printf("  numThreads %d runs with %d threads\n", requests[k], threads);
    oidnReleaseDevice(device);
  }
}

static void test_core_arithmetic(void)
{
  /* the planes of the largest image OIDN allows fit size_t; beyond, the
   * byte count saturates */
  const size_t big = lull_planes_bytes(65536, 65536, 32);
  CHECK(big != SIZE_MAX && big >= (size_t)65536 * 65536 * 32 * sizeof(float));
  CHECK(lull_planes_bytes(SIZE_MAX, 2, 1) == SIZE_MAX);
  CHECK(lull_planes_bytes((size_t)1 << 33, (size_t)1 << 33, 1) == SIZE_MAX);
  CHECK(lull_planes_bytes(SIZE_MAX / 4, 1, 8) == SIZE_MAX);
  lull_planes pl;
  CHECK(!lull_planes_init(&pl, SIZE_MAX, 2, 4));
  CHECK(!lull_planes_init(&pl, (size_t)1 << 40, (size_t)1 << 20, 4));
  lull_atrous_images im;
  memset(&im, 0, sizeof im);
  im.color.width = 65536;
  im.color.height = 65536;
  CHECK(lull_atrous_cpu_scratch_bytes(&im) > (size_t)1 << 36);
}

/* -- out of memory in a child with a small address space -------------------- */
#if !defined(LULL_ASAN)

enum { BIG_W = 8192, BIG_H = 8192 }; /* 0.8 GB of input; filters need several GB */

typedef struct big_case
{
  const char* type;
  const char* images[10];
} big_case;

static int run_out_of_memory(void)
{
  static const big_case cases[] = {
      {"ATrous", {"color", NULL}},
      {"RT", {"color", "albedo", "normal", NULL}},
      {"RTLightmap", {"color", NULL}},
      {"Gaussian", {"color", NULL}},
      {"Poisson", {"color", "gradientX", "gradientY", NULL}},
      {"GradientDomain",
       {"colorA", "colorB", "gradientXA", "gradientXB", "gradientYA", "gradientYB", NULL}},
  };
  const size_t n = (size_t)BIG_W * BIG_H * 3;
  float* in = calloc(n, sizeof(float)); /* lazily zero: no memory touched */
  float* out = calloc(n, sizeof(float));
  if (!in || !out) {
    fprintf(stderr, "cannot reserve the test images\n");
    return 1;
  }
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnSetDeviceInt(device, "numThreads", 2);
  oidnCommitDevice(device);
  /* a small run first, so the thread pools exist before the limit */
  static float small_in[16 * 16 * 3], small_out[16 * 16 * 3];
  OIDNFilter warm = oidnNewFilter(device, "ATrous");
  oidnSetSharedFilterImage(warm, "color", small_in, OIDN_FORMAT_FLOAT3, 16, 16, 0, 0, 0);
  oidnSetSharedFilterImage(warm, "output", small_out, OIDN_FORMAT_FLOAT3, 16, 16, 0, 0, 0);
  oidnCommitFilter(warm);
  oidnExecuteFilter(warm);
  EXPECT(device, OIDN_ERROR_NONE, NULL);

  /* what is mapped now plus 1.5 GB: less than any filter needs at 8192^2 */
  struct rlimit limit;
  FILE* f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (!f || fscanf(f, "%lu", &pages) != 1) {
    fprintf(stderr, "cannot read /proc/self/statm\n");
    return 1;
  }
  fclose(f);
  limit.rlim_cur = limit.rlim_max =
      (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)3 << 29);
  if (setrlimit(RLIMIT_AS, &limit) != 0) {
    fprintf(stderr, "cannot limit the address space\n");
    return 1;
  }

  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    OIDNFilter filter = oidnNewFilter(device, cases[k].type);
    for (int i = 0; cases[k].images[i]; ++i)
      oidnSetSharedFilterImage(filter, cases[k].images[i], in, OIDN_FORMAT_FLOAT3, BIG_W, BIG_H, 0,
                               0, 0);
    oidnSetSharedFilterImage(filter, "output", out, OIDN_FORMAT_FLOAT3, BIG_W, BIG_H, 0, 0, 0);
    oidnCommitFilter(filter);
    EXPECT(device, OIDN_ERROR_NONE, NULL);
    oidnExecuteFilter(filter);
    const char* message = NULL;
    const OIDNError code = oidnGetDeviceError(device, &message);
    printf("  %s on %dx%d under the limit: error %d (%s)\n", cases[k].type, BIG_W, BIG_H,
           (int)code, message ? message : "");
    CHECK_EQ_INT(code, OIDN_ERROR_OUT_OF_MEMORY);
    oidnReleaseFilter(filter);
    /* the device still works */
    oidnExecuteFilter(warm);
    EXPECT(device, OIDN_ERROR_NONE, NULL);
  }
  oidnReleaseFilter(warm);
  oidnReleaseDevice(device);
  free(in);
  free(out);
  return lull_test_failures != 0;
}
#endif

static void test_planes_cache(void)
{
  lull_planes_cache cache;
  memset(&cache, 0, sizeof cache);
  lull_planes a, b, c, d;
  CHECK(lull_planes_init_cached(&a, 64, 32, 4, &cache));
  const float* first = a.block;
  lull_planes_release(&a, &cache);
  CHECK(cache.slot != NULL);
  /* smaller: the cached block, and the cache is empty while it is used */
  CHECK(lull_planes_init_cached(&b, 32, 32, 4, &cache));
  CHECK(b.block == first);
  CHECK(cache.slot == NULL);
  CHECK(b.plane[3] == b.block + 3 * b.stride);
  /* a second run meanwhile allocates its own */
  CHECK(lull_planes_init_cached(&c, 128, 128, 4, &cache));
  CHECK(c.block != first);
  lull_planes_release(&b, &cache);
  lull_planes_release(&c, &cache); /* replaces (and frees) b's */
  /* larger than the cached block: a new one (the cached one freed) */
  CHECK(lull_planes_init_cached(&d, 256, 256, 4, &cache));
  CHECK(d.bytes >= lull_planes_bytes(256, 256, 4));
  CHECK(cache.slot == NULL);
  lull_planes_release(&d, &cache);
  lull_planes_cache_clear(&cache);
  CHECK(cache.slot == NULL);
  lull_planes_cache_clear(&cache); /* clearing an empty cache is harmless */
}

int main(void)
{
#if !defined(LULL_ASAN)
  /* first, before any thread exists: the child may use OpenMP freely */
  fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    const int failed = run_out_of_memory();
    fflush(stdout);
    fflush(stderr);
    _exit(failed);
  }
  int status = 0;
  CHECK(child > 0 && waitpid(child, &status, 0) == child);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "out-of-memory child failed (status %d)\n", status);
    ++lull_test_failures;
  }
#else
  printf("  (the address-space limit is skipped under AddressSanitizer)\n");
#endif
  test_image_limits();
  test_thread_limits();
  test_core_arithmetic();
  test_planes_cache();
  return lull_test_result("hardening_limits");
}
