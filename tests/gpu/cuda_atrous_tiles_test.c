/* The CUDA à-trous filter in tiles (cuda/atrous_tiles.cu, with the tile
 * driver of core/atrous_tiled.c):
 *   - maxMemoryMB on the CUDA device tiles the run, and the tiled output
 *     equals the untiled one (each tile's interior sees the input it sees
 *     untiled): baseline, permuted and packed, a few-tile grid and the
 *     smallest tiles (maxMemoryMB 0), in place, and into strided outputs
 *     (16 bytes a pixel, and 13, whose odd addresses take the tile copy's
 *     1-byte words) whose bytes between pixels stay untouched.  Away from the image's
 *     border only float rounding differs (and, packed, each tile's own
 *     packing scale); the permuted schedule's taps at the image's border
 *     are mirrored within the sub-images of the window being filtered
 *     (Dolp et al. 2024 §3.4, §4.1), which a window narrower than the image
 *     arranges differently, so there the tiled result differs as much as
 *     the permuted schedule differs from the baseline (BORDER_TOLERANCE);
 *   - the scratch the device allocates stays within the cap;
 *   - without maxMemoryMB, a run whose scratch does not fit the GPU's free
 *     memory tiles by itself and succeeds, with the untiled result. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu_test_util.h"
#include "half.h"
#include "test_util.h"

/* tiled against untiled, max |a - b| / (|b| + 1e-3) over every value:
 * fp32 differs by summation order only (measured on the H100: see the
 * output); packedGuides by each tile's packing scale, fp16's 4.9e-4 */
#define FP32_TOLERANCE 1e-4
#define PACKED_TOLERANCE 2e-3
/* the permuted schedule's border band, tiled vs untiled, rel L1:
 * measured 1.0e-4 to 2.1e-4 on the H100 (the permuted schedule differs
 * from the baseline there by 1e-3 to 6e-3, cuda_atrous_test.c) */
#define BORDER_TOLERANCE 2e-2

enum { SENTINEL = 0x5A };

typedef struct run_options
{
  int schedule, packed;
  int max_memory_mb; /* -1: the default */
  int in_place;      /* output = the colour buffer */
  int stride;        /* the output's bytes a pixel (0: packed) */
  int half;          /* output HALF3 (6 bytes: the copy's 2-byte words) */
  int cancel_at;     /* > 0: a progress monitor that stops at that call */
} run_options;

/* A progress monitor: the calls, whether the values never went down, and
 * the call that answers "stop" (0: never). */
typedef struct progress_log
{
  int calls, ones, cancel_at, monotonic;
  int busy_at_one; /* the stream still had work when 1 was reported */
  double last;
} progress_log;

static bool log_progress(void* user, double done)
{
  progress_log* p = (progress_log*)user;
  p->calls += 1;
  p->ones += done == 1.0;
  /* the device runs on the default stream (oidnNewDevice gives no other):
   * 1 means the output is written, the tiles' last copies included */
  if (done == 1.0)
    p->busy_at_one += cudaStreamQuery(NULL) != cudaSuccess;
  p->monotonic &= done >= p->last && done <= 1.0;
  p->last = done;
  return p->cancel_at <= 0 || p->calls < p->cancel_at;
}

static OIDNBuffer new_filled_buffer(OIDNDevice device, const void* data, size_t bytes)
{
  OIDNBuffer b = oidnNewBuffer(device, bytes);
  oidnWriteBuffer(b, 0, bytes, data);
  return b;
}

/* The scene's inputs in device buffers. */
typedef struct scene_buffers
{
  OIDNBuffer color, albedo, normal, depth, output;
  size_t output_bytes;
} scene_buffers;

static scene_buffers upload(OIDNDevice device, const gpu_scene* s, const run_options* o)
{
  const size_t n = (size_t)s->width * (size_t)s->height;
  scene_buffers b;
  b.color = new_filled_buffer(device, s->color, n * 3 * sizeof(float));
  b.albedo = new_filled_buffer(device, s->albedo, n * 3 * sizeof(float));
  b.normal = new_filled_buffer(device, s->normal, n * 3 * sizeof(float));
  b.depth = new_filled_buffer(device, s->depth, n * sizeof(float));
  b.output_bytes = n * (size_t)(o->stride ? o->stride : (o->half ? 6 : 12));
  b.output = NULL;
  if (!o->in_place) {
    b.output = oidnNewBuffer(device, b.output_bytes);
    unsigned char* fill = malloc(b.output_bytes);
    memset(fill, SENTINEL, b.output_bytes);
    oidnWriteBuffer(b.output, 0, b.output_bytes, fill);
    free(fill);
  }
  return b;
}

static void release_buffers(scene_buffers* b)
{
  oidnReleaseBuffer(b->color);
  oidnReleaseBuffer(b->albedo);
  oidnReleaseBuffer(b->normal);
  oidnReleaseBuffer(b->depth);
  if (b->output)
    oidnReleaseBuffer(b->output);
}

/* Runs ATrous (5 levels) on buffers b; the output's three channels into
 * out, and with a strided output checks the bytes between pixels kept
 * their sentinel.  Returns the device's error code. */
static int run_on(OIDNDevice device, const gpu_scene* s, scene_buffers* b, const run_options* o,
                  float* out)
{
  const size_t w = (size_t)s->width, h = (size_t)s->height, n = w * h;
  OIDNBuffer ob = o->in_place ? b->color : b->output;
  OIDNFilter f = oidnNewFilter(device, "ATrous");
  oidnSetFilterImage(f, "color", b->color, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  oidnSetFilterImage(f, "albedo", b->albedo, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  oidnSetFilterImage(f, "normal", b->normal, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  oidnSetFilterImage(f, "depth", b->depth, OIDN_FORMAT_FLOAT, w, h, 0, 0, 0);
  oidnSetFilterImage(f, "output", ob, o->half ? OIDN_FORMAT_HALF3 : OIDN_FORMAT_FLOAT3, w, h, 0,
                     (size_t)o->stride, 0);
  oidnSetFilterInt(f, "iterations", 5);
  oidnSetFilterInt(f, "schedule", o->schedule);
  oidnSetFilterBool(f, "packedGuides", o->packed);
  oidnSetFilterInt(f, "maxMemoryMB", o->max_memory_mb);
  progress_log progress = {0, 0, o->cancel_at, 1, 0, 0.0};
  if (o->cancel_at)
    oidnSetFilterProgressMonitorFunction(f, log_progress, &progress);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  const char* message = NULL;
  const int code = oidnGetDeviceError(device, &message);
  oidnReleaseFilter(f);
  if (o->cancel_at) {
    printf("progress monitor stopping at call %d: %d calls, last %.3f, error %d\n",
           o->cancel_at, progress.calls, progress.last, code);
    CHECK(progress.monotonic);
    CHECK(progress.calls >= LULL_MIN(o->cancel_at, 3));
    /* a complete run reports 1 once, last (after the tiles' last copy) */
    CHECK_EQ_INT(progress.ones, code == OIDN_ERROR_NONE);
    CHECK_EQ_INT(progress.busy_at_one, 0);
    /* tiled: each tile reports (permuted under 8 MB: 35 tiles; untiled a
     * run reports 6 times) */
    if (code == OIDN_ERROR_NONE && o->max_memory_mb > 0)
      CHECK(progress.calls >= 35);
    if (code == OIDN_ERROR_NONE)
      CHECK_EQ_INT(progress.last == 1.0, 1);
    return code;
  }
  if (code != OIDN_ERROR_NONE) {
    fprintf(stderr, "ATrous: error %d: %s\n", code, message ? message : "");
    return code;
  }
  const size_t value_bytes = o->half ? sizeof(uint16_t) : sizeof(float);
  const size_t pixel_bytes = 3 * value_bytes;
  const size_t stride = o->stride ? (size_t)o->stride : pixel_bytes;
  unsigned char* raw = malloc(n * stride);
  oidnReadBuffer(ob, 0, n * stride, raw);
  size_t touched = 0;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char* pixel = raw + i * stride;
    for (size_t k = 0; k < 3; ++k) {
      if (o->half) {
        uint16_t h16;
        memcpy(&h16, pixel + k * value_bytes, sizeof h16);
        out[3 * i + k] = lull_half_to_float(h16);
      } else {
        memcpy(&out[3 * i + k], pixel + k * value_bytes, sizeof(float));
      }
    }
    for (size_t k = pixel_bytes; k < stride; ++k)
      touched += pixel[k] != SENTINEL;
  }
  CHECK_EQ_INT((int)touched, 0);
  free(raw);
  return gpu_device_error(device, "ATrous read-back");
}

static int run_once(OIDNDevice device, const gpu_scene* s, const run_options* o, float* out)
{
  scene_buffers b = upload(device, s, o);
  const int code = run_on(device, s, &b, o, out);
  release_buffers(&b);
  return code;
}

/* Max |a - b| / (|b| + floor) over the pixels at least `margin` from the
 * image's border (3 channels). */
static double interior_max_rel(const float* a, const float* b, int w, int h, int margin,
                               double floor)
{
  double worst = 0.0;
  for (int y = margin; y < h - margin; ++y)
    for (int x = margin; x < w - margin; ++x)
      for (int c = 0; c < 3; ++c) {
        const size_t i = ((size_t)y * (size_t)w + (size_t)x) * 3 + (size_t)c;
        const double d = fabs((double)a[i] - (double)b[i]) / (fabs((double)b[i]) + floor);
        worst = d > worst || d != d ? d : worst;
      }
  return worst;
}

/* How much of the test runs: everything; the grids alone (for
 * compute-sanitizer, whose own memory would upset the memory checks); one
 * grid of a smaller image per schedule (for racecheck, which takes seconds
 * a tile) */
typedef enum test_scope { SCOPE_ALL, SCOPE_GRIDS, SCOPE_RACE } test_scope;

/* The tiled runs against the untiled one of the same mode. */
static void run_grids(OIDNDevice gpu, test_scope scope)
{
  const int race = scope == SCOPE_RACE;
  const int w = race ? 320 : 512, h = race ? 240 : 384;
  const size_t count = (size_t)w * h * 3;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 4242u);
  float* want = malloc(count * sizeof(float));
  float* got = malloc(count * sizeof(float));
  static const struct
  {
    const char* name;
    int schedule, packed;
  } modes[3] = {{"baseline", 0, 0}, {"permuted", 1, 0}, {"packed", 1, 1}};
  for (int m = 0; m < 3; ++m) {
    const run_options plain = {modes[m].schedule, modes[m].packed, -1, 0, 0, 0, 0};
    CHECK_EQ_INT(run_once(gpu, &s, &plain, want), OIDN_ERROR_NONE);
    /* 8 MB: a grid of 15 or 35 tiles within the cap; 0: the smallest
     * tiles, as wide as the overlap (48, over the cap); for racecheck, 4
     * MB on 320 x 240: 20 of those */
    static const run_options variants[5] = {{0, 0, 8, 0, 0, 0, 0},
                                            {0, 0, 0, 0, 0, 0, 0},
                                            {0, 0, 8, 1, 0, 0, 0},
                                            {0, 0, 8, 0, 16, 0, 0},
                                            {0, 0, 8, 0, 13, 0, 0}};
    static const char* const what[5] = {"", "", " in place", " stride 16", " stride 13"};
    for (int v = 0; v < (race ? 1 : 5); ++v) {
      run_options o = variants[v];
      o.max_memory_mb = race ? 4 : o.max_memory_mb;
      o.schedule = modes[m].schedule;
      o.packed = modes[m].packed;
      CHECK_EQ_INT(run_once(gpu, &s, &o, got), OIDN_ERROR_NONE);
      const int margin = gpu_atrous_margin(5);
      const double all = gpu_max_rel_diff(got, want, count, 1e-3);
      const double inner = interior_max_rel(got, want, w, h, margin, 1e-3);
      const double border = gpu_border_rel_l1(got, want, w, h, 3, margin);
      char label[32];
      snprintf(label, sizeof label, "%d MB%s", o.max_memory_mb, what[v]);
      printf("%-9s %-15s tiled vs untiled: max rel %.2e (away from the border %.2e), border "
             "rel L1 %.2e\n", modes[m].name, label, all, inner, border);
      const double tolerance = modes[m].packed ? PACKED_TOLERANCE : FP32_TOLERANCE;
      CHECK(inner <= tolerance);
      /* the baseline has no mirrored taps: everywhere */
      if (modes[m].schedule == 0)
        CHECK(all <= tolerance);
      CHECK(border <= BORDER_TOLERANCE);
    }
  }
  if (race) {
    free(want);
    free(got);
    gpu_scene_free(&s);
    return;
  }
  /* HALF3 output (the copy's 2-byte words), permuted: against untiled */
  const run_options half_plain = {1, 0, -1, 0, 0, 1, 0};
  run_options half_tiled = half_plain;
  half_tiled.max_memory_mb = 8;
  CHECK_EQ_INT(run_once(gpu, &s, &half_plain, want), OIDN_ERROR_NONE);
  CHECK_EQ_INT(run_once(gpu, &s, &half_tiled, got), OIDN_ERROR_NONE);
  const double half_rel = interior_max_rel(got, want, w, h, gpu_atrous_margin(5), 1e-3);
  printf("permuted  8 MB HALF3      tiled vs untiled: max rel %.2e away from the border\n",
         half_rel);
  CHECK(half_rel <= 2e-3); /* a step of half precision */
  /* a progress monitor over the tiles: the values rise to 1; stopping at
   * the third call cancels the run */
  run_options watched = {1, 0, 8, 0, 0, 0, 1000000};
  CHECK_EQ_INT(run_once(gpu, &s, &watched, got), OIDN_ERROR_NONE);
  watched.cancel_at = 3;
  CHECK_EQ_INT(run_once(gpu, &s, &watched, got), OIDN_ERROR_CANCELLED);
  free(want);
  free(got);
  gpu_scene_free(&s);
}

static size_t free_memory(void)
{
  size_t free_bytes = 0, total = 0;
  CHECK_EQ_INT(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  return free_bytes;
}

/* The device memory a capped run takes stays within the cap: on a fresh
 * device, after a small run (which loads the kernels), the free memory
 * drops by at most the cap (plus the allocator's 2 MB granularity and
 * slack), where the same run untiled takes far more. */
static void run_memory(void)
{
  enum { CAP_MB = 12, SLACK_MB = 4 }; /* 35 tiles within the cap */
  OIDNDevice gpu = gpu_new_device(OIDN_DEVICE_TYPE_CUDA);
  gpu_scene small, s;
  gpu_scene_make(&small, 64, 48, 7u);
  gpu_scene_make(&s, 768, 512, 8u);
  float* out = malloc((size_t)768 * 512 * 3 * sizeof(float));
  run_options o = {1, 0, -1, 0, 0, 0, 0};
  CHECK_EQ_INT(run_once(gpu, &small, &o, out), OIDN_ERROR_NONE);
  scene_buffers b = upload(gpu, &s, &o);
  oidnSyncDevice(gpu);
  const size_t before = free_memory();
  o.max_memory_mb = CAP_MB;
  CHECK_EQ_INT(run_on(gpu, &s, &b, &o, out), OIDN_ERROR_NONE);
  const size_t capped = free_memory();
  o.max_memory_mb = -1;
  CHECK_EQ_INT(run_on(gpu, &s, &b, &o, out), OIDN_ERROR_NONE);
  const size_t untiled = free_memory();
  const double mb = 1048576.0;
  const double took = ((double)before - (double)capped) / mb;
  const double took_untiled = ((double)before - (double)untiled) / mb;
  printf("768x512 device memory: %.1f MB under maxMemoryMB %d, %.1f MB untiled\n", took, CAP_MB,
         took_untiled);
  CHECK(took <= CAP_MB + SLACK_MB);
  CHECK(took_untiled > 2 * (CAP_MB + SLACK_MB)); /* the cap is what kept it small */
  release_buffers(&b);
  free(out);
  gpu_scene_free(&small);
  gpu_scene_free(&s);
  oidnReleaseDevice(gpu);
}

/* On a GPU whose memory is nearly full, without maxMemoryMB and with one
 * larger than the free memory: the run tiles by itself instead of
 * failing, with the untiled result. */
static void run_full_gpu(void)
{
  enum { LEFT_MB = 64 };
  const int w = 1280, h = 720;
  const size_t count = (size_t)w * h * 3;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 9u);
  float* want = malloc(count * sizeof(float));
  float* got = malloc(count * sizeof(float));
  const run_options o = {1, 0, -1, 0, 0, 0, 0};
  OIDNDevice roomy = gpu_new_device(OIDN_DEVICE_TYPE_CUDA);
  CHECK_EQ_INT(run_once(roomy, &s, &o, want), OIDN_ERROR_NONE);
  oidnReleaseDevice(roomy); /* and its scratch */

  OIDNDevice gpu = gpu_new_device(OIDN_DEVICE_TYPE_CUDA);
  scene_buffers b = upload(gpu, &s, &o);
  oidnSyncDevice(gpu);
  /* all but LEFT_MB of the free memory taken */
  const size_t left = (size_t)LEFT_MB << 20, free_bytes = free_memory();
  void* filler = NULL;
  CHECK(free_bytes > left);
  CHECK_EQ_INT(cudaMalloc(&filler, free_bytes - left), cudaSuccess);
  const size_t now_free = free_memory();
  for (int k = 0; k < 2; ++k) {
    run_options capped = o;
    capped.max_memory_mb = k ? 100000 : -1;
    const int code = run_on(gpu, &s, &b, &capped, got);
    printf("1280x720 with %.0f MB of the GPU free, maxMemoryMB %d: error %d",
           (double)now_free / 1048576.0, capped.max_memory_mb, code);
    CHECK_EQ_INT(code, OIDN_ERROR_NONE);
    if (code == OIDN_ERROR_NONE) {
      /* the grid depends on the free memory: the border as in run_grids */
      const int margin = gpu_atrous_margin(5);
      const double inner = interior_max_rel(got, want, w, h, margin, 1e-3);
      const double border = gpu_border_rel_l1(got, want, w, h, 3, margin);
      printf(", against an untiled run max rel %.2e away from the border, border rel L1 %.2e",
             inner, border);
      CHECK(inner <= FP32_TOLERANCE);
      CHECK(border <= BORDER_TOLERANCE);
    }
    printf("\n");
  }
  cudaFree(filler);
  release_buffers(&b);
  oidnReleaseDevice(gpu);
  free(want);
  free(got);
  gpu_scene_free(&s);
}

/* argument "grids" or "race": the scopes of test_scope */
int main(int argc, char** argv)
{
  const char* arg = argc > 1 ? argv[1] : "";
  const test_scope scope = strcmp(arg, "grids") == 0  ? SCOPE_GRIDS
                           : strcmp(arg, "race") == 0 ? SCOPE_RACE
                                                      : SCOPE_ALL;
  OIDNDevice gpu = gpu_new_device(OIDN_DEVICE_TYPE_CUDA);
  if (!gpu) {
    fprintf(stderr, "cuda_atrous_tiles: no CUDA device\n");
    return 1;
  }
  run_grids(gpu, scope);
  oidnReleaseDevice(gpu);
  if (scope == SCOPE_ALL) {
    run_memory();
    run_full_gpu();
  }
  return lull_test_result("cuda_atrous_tiles");
}
