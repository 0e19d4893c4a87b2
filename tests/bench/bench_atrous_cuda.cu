/* Benchmark of the CUDA à-trous filter: baseline vs permuted schedule
 * (Dolp et al. 2024) vs permuted with packedGuides, per level and in total,
 * at 512^2, 1280x720, 1920x1080 and 3840x2160 with colour + albedo + normal
 * + depth, 5 levels, the ATrous defaults (variance-guided colour test).
 *
 *   build/bin/bench_atrous_cuda [repeats [size-index [profile]]]
 *
 * size-index 0..3 runs one size only; "profile" runs each kernel once
 * (no warm-up, no graph), for ncu.
 *
 * The kernels run in the library's own order (lull_atrous_enqueue) with
 * launchers that record CUDA events between the steps: "prepare" is the
 * prepare kernel and the layout tables, "level l" the level's guide kernel
 * and level kernel (the last level also the finish kernel).  Times are
 * medians of `repeats` runs (default 50) after 5 warm-up runs; "total" is
 * the median of the whole filter replayed as a CUDA graph, which removes
 * launch gaps.  Bytes are the minimum each step must move (every buffer
 * read once and written once); GB/s = those bytes / time, next to a
 * device-to-device copy measured in the same run.  H2D / D2H copies of the
 * inputs and the output (pinned host memory) are timed separately.
 *
 * "colorMode 0" is Dammertz's own filter (a fixed colour sigma: no
 * variance estimate, no guide kernels), the test the issue's reference
 * kernel computes, as graph replays of both schedules and of permuted with
 * packedGuides.
 *
 * "API" is the library as a program calls it: oidnExecuteFilter on a CUDA
 * device with these cudaMalloc'd images shared, wall time per call on the
 * host clock (median), synchronous, and per call of a queue of
 * oidnExecuteFilterAsync ended by one oidnSyncDevice; next to the graph
 * replay it shows what launching and checking cost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <OpenImageDenoise/oidn.h>

#include "atrous_permuted.cuh"
#include "bench_cuda_check.h"

/* modes: baseline, permuted, permuted with packedGuides, and the packed
 * run with the level kernel built for OCC_BLOCKS blocks per multiprocessor
 * (up to 72 registers) instead of the library's 8 (63 registers) */
enum { LEVELS = 5, MAX_REPEATS = 1000, MODES = 4, TABLE_MODES = 3, OCC_BLOCKS = 7 };

LULL_PERMUTED_KERNEL(bench_packed_occ, 1, LULL_ATROUS_GEOMETRY_DEPTH, 1, OCC_BLOCKS)

static __global__ void bench_finish(const lull_atrous_level_args a)
{
  permuted_finish_body(&a, LULL_THREAD_HERE());
}

static int cmp_float(const void* a, const void* b)
{
  const float x = *(const float*)a, y = *(const float*)b;
  return x < y ? -1 : x > y;
}

static float median(float* v, int n)
{
  qsort(v, (size_t)n, sizeof(float), cmp_float);
  return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Wall time of the filter through the OIDN API (see the header): median of
 * `repeats` synchronous calls, and the mean of a queue of as many
 * asynchronous calls; negative when the API reports an error. */
static bool api_keep_going(void* user, double done)
{
  (void)user;
  (void)done;
  return true;
}

/* direct: with a progress monitor, which keeps the library's launches off
 * its cached graphs (cuda/atrous_graph.cu) and syncs between levels */
static void api_times(float* const images[5], int w, int h, int packed, int direct, int repeats,
                      float* samples, double* sync_ms, double* async_ms)
{
  *sync_ms = *async_ms = -1.0;
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CUDA);
  oidnCommitDevice(device);
  OIDNFilter filter = oidnNewFilter(device, "ATrous");
  static const char* const names[5] = {"color", "albedo", "normal", "depth", "output"};
  for (int k = 0; k < 5; ++k)
    oidnSetSharedFilterImage(filter, names[k], images[k],
                             k == 3 ? OIDN_FORMAT_FLOAT : OIDN_FORMAT_FLOAT3, (size_t)w,
                             (size_t)h, 0, 0, 0);
  oidnSetFilterInt(filter, "iterations", LEVELS);
  oidnSetFilterBool(filter, "packedGuides", packed);
  if (direct)
    oidnSetFilterProgressMonitorFunction(filter, api_keep_going, NULL);
  oidnCommitFilter(filter);
  for (int r = 0; r < 5; ++r)
    oidnExecuteFilter(filter);
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now_ms();
    oidnExecuteFilter(filter);
    samples[r] = (float)(now_ms() - t0);
  }
  const double t0 = now_ms();
  for (int r = 0; r < repeats; ++r)
    oidnExecuteFilterAsync(filter);
  oidnSyncDevice(device);
  const double queue = (now_ms() - t0) / repeats;
  const char* message = NULL;
  if (oidnGetDeviceError(device, &message) == OIDN_ERROR_NONE) {
    *sync_ms = median(samples, repeats);
    *async_ms = queue;
  } else {
    fprintf(stderr, "API: %s\n", message ? message : "error");
  }
  oidnReleaseFilter(filter);
  oidnReleaseDevice(device);
}

static lull_image view(float* p, int channels, int w, int h)
{
  lull_image v;
  v.data = (unsigned char*)p;
  v.format = (lull_format)channels; /* FLOAT..FLOAT4 = 1..4 */
  v.width = w;
  v.height = h;
  v.pixel_stride = (size_t)channels * 4;
  v.row_stride = v.pixel_stride * (size_t)w;
  return v;
}

/* Launchers that record an event before each step (and the library's
 * launchers for the actual work). */
typedef struct timed
{
  cudaStream_t stream;
  lull_atrous_launchers real;
  cudaEvent_t ev[LEVELS + 2];
  cudaEvent_t mid[LEVELS]; /* between a level's guide kernel and its filter */
  int level;
  int variant; /* 0: the library's kernels; 1: bench_packed_occ */
} timed;

static cudaError_t timed_prepare(void* ctx, const lull_atrous_prepare_args* a)
{
  timed* t = (timed*)ctx;
  t->level = 0;
  cudaError_t code = cudaEventRecord(t->ev[0], t->stream);
  return code == cudaSuccess ? t->real.prepare(t->real.ctx, a) : code;
}

static cudaError_t timed_tables(void* ctx, int* tables, int w, int h, int levels)
{
  timed* t = (timed*)ctx;
  return t->real.layout_tables(t->real.ctx, tables, w, h, levels);
}

/* the library's stream_level, with an event between the two kernels */
static cudaError_t timed_level(void* ctx, const lull_atrous_level_args* a, int permuted,
                               int variance_mode, int geometry_kind)
{
  timed* t = (timed*)ctx;
  const int l = t->level++;
  cudaError_t code = cudaEventRecord(t->ev[1 + l], t->stream);
  if (code == cudaSuccess && variance_mode)
    code = lull_atrous_level_guides_launch(a, t->stream);
  if (code == cudaSuccess)
    code = cudaEventRecord(t->mid[l], t->stream);
  if (code != cudaSuccess)
    return code;
  if (!permuted)
    return lull_atrous_baseline_launch(a, variance_mode, geometry_kind, t->stream);
  if (!t->variant)
    return lull_atrous_permuted_launch(a, variance_mode, geometry_kind, t->stream);
  const dim3 block(PERM_BW, PERM_BH);
  const dim3 grid((unsigned)((a->width + PERM_BW - 1) / PERM_BW),
                  (unsigned)((a->height + PERM_OUT_H - 1) / PERM_OUT_H));
  bench_packed_occ<<<grid, block, 0, t->stream>>>(*a);
  if (a->last)
    bench_finish<<<dim3((unsigned)((a->width + 31) / 32), (unsigned)((a->height + 7) / 8)),
                   dim3(32, 8), 0, t->stream>>>(*a);
  return cudaGetLastError();
}

/* Median time of the whole filter replayed as a CUDA graph, launched by
 * the library's own launchers (no launch gaps). */
static float graph_ms(const lull_atrous_plan* plan, const lull_atrous_params* params,
                      const lull_atrous_images* images, unsigned char* scratch, timed* t,
                      int repeats, float* samples)
{
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  lull_error err = {LULL_OK, ""};
  CHECK_CUDA(cudaStreamBeginCapture(t->stream, cudaStreamCaptureModeThreadLocal));
  if (lull_atrous_enqueue(plan, params, images, scratch, &t->real, NULL, &err) != LULL_OK) {
    fprintf(stderr, "enqueue: %s\n", err.message);
    exit(1);
  }
  CHECK_CUDA(cudaStreamEndCapture(t->stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = -5; r < repeats; ++r) {
    CHECK_CUDA(cudaEventRecord(t->ev[0], t->stream));
    CHECK_CUDA(cudaGraphLaunch(exec, t->stream));
    CHECK_CUDA(cudaEventRecord(t->ev[1], t->stream));
    CHECK_CUDA(cudaEventSynchronize(t->ev[1]));
    if (r >= 0)
      CHECK_CUDA(cudaEventElapsedTime(&samples[r], t->ev[0], t->ev[1]));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return median(samples, repeats);
}

/* Graph-replay time of Dammertz's own filter (colorMode 0: a fixed colour
 * sigma, no variance estimate, no guide kernels) under `schedule`, with
 * packedGuides or not: the test the issue's reference kernel computes
 * (colour, normal, depth). */
static float fixed_colour_ms(const lull_atrous_images* images, int schedule, int packed, timed* t,
                             int repeats, float* samples)
{
  lull_atrous_params params = lull_atrous_default_params();
  params.iterations = LEVELS;
  params.color_mode = LULL_ATROUS_COLOR_FIXED;
  params.packed_guides = packed;
  lull_atrous_plan plan;
  lull_error err = {LULL_OK, ""};
  if (lull_atrous_plan_make(&params, images, schedule, &plan, &err) != LULL_OK) {
    fprintf(stderr, "plan: %s\n", err.message);
    exit(1);
  }
  unsigned char* scratch;
  CHECK_CUDA(cudaMalloc(&scratch, plan.scratch_bytes));
  const float ms = graph_ms(&plan, &params, images, scratch, t, repeats, samples);
  cudaFree(scratch);
  return ms;
}

/* Host data: noisy colour over smooth albedo, two planes, a depth ramp. */
static void fill_host(float* host, int w, int h)
{
  const size_t n = (size_t)w * h;
  unsigned seed = 12345u;
  float* col = host;
  float* alb = host + 3 * n;
  float* nrm = host + 6 * n;
  float* dep = host + 9 * n;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * w + x;
      const int side = x * 2 > w + y / 3;
      for (int c = 0; c < 3; ++c) {
        seed = seed * 1664525u + 1013904223u;
        const float noise = (float)(seed >> 8) / 16777216.0f;
        alb[3 * i + c] = side ? 0.6f - 0.1f * c : 0.3f + 0.1f * c;
        col[3 * i + c] = alb[3 * i + c] * (0.2f + 1.6f * noise);
      }
      nrm[3 * i + 0] = side ? 0.6f : 0.0f;
      nrm[3 * i + 1] = 0.0f;
      nrm[3 * i + 2] = side ? 0.8f : 1.0f;
      dep[i] = side ? 4.0f + 0.001f * x : 2.0f + 0.002f * y;
    }
}

/* Minimum bytes per pixel of each step (atrous_cuda.h for the buffers):
 * prepare reads 40 (colour, albedo, normal 12 each, depth 4; packed: and
 * the colour once more, for the packing scale's bound) and writes C, G0,
 * G1, IG (fp32: 52) or CP, GP, IG (28); the guide kernel reads C and
 * writes LG; a level reads C, G0, G1, LG, IG and writes C (baseline), C and
 * the moved guides (permuted); the last level writes the 12-byte output
 * (baseline) or the original-layout colour (fp32, or fp16 with packed
 * buffers) that the finish kernel reads and stores (permuted). */
static double step_bytes(int mode, int step)
{
  const double c = mode == 2 ? 8 : 16, g = mode == 2 ? 16 : 32;
  if (step < 0) /* packed: the bound kernel reads the colour first */
    return 40 + c + g + 4 + (mode == 2 ? 12 : 0);
  const double guide = c + 8;
  const double in = c + g + 8 + 4;
  if (step == LEVELS - 1)
    return guide + in + (mode == 0 ? 12 : 2 * c + 12);
  return guide + in + (mode == 0 ? c : c + g + 4);
}

int main(int argc, char** argv)
{
  int repeats = argc > 1 ? atoi(argv[1]) : 50;
  if (repeats < 1 || repeats > MAX_REPEATS)
    repeats = 50;
  const int only = argc > 2 ? atoi(argv[2]) : -1;
  const int profile = argc > 3 && strcmp(argv[3], "profile") == 0;
  const int warmup = profile ? 0 : 5;
  if (profile)
    repeats = 1;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount,
         prop.l2CacheSize >> 20);
  CHECK_CUDA(lull_atrous_kernels_configure());
  timed t;
  memset(&t, 0, sizeof t);
  CHECK_CUDA(cudaStreamCreateWithFlags(&t.stream, cudaStreamNonBlocking));
  t.real = lull_atrous_stream_launchers(&t.stream);
  for (int i = 0; i < LEVELS + 2; ++i)
    CHECK_CUDA(cudaEventCreate(&t.ev[i]));
  for (int i = 0; i < LEVELS; ++i)
    CHECK_CUDA(cudaEventCreate(&t.mid[i]));
  CHECK_CUDA(cudaFuncSetAttribute((const void*)bench_packed_occ,
                                  cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
  lull_atrous_launchers timing;
  memset(&timing, 0, sizeof timing);
  timing.ctx = &t;
  timing.prepare = timed_prepare;
  timing.layout_tables = timed_tables;
  timing.level = timed_level;

  /* the copy ceiling: 1 GiB device-to-device, read + write counted */
  if (!profile) {
    void *a, *b;
    const size_t bytes = (size_t)1 << 30;
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMalloc(&b, bytes));
    CHECK_CUDA(cudaMemsetAsync(a, 1, bytes, t.stream));
    float ms[10];
    for (int r = 0; r < 12; ++r) {
      CHECK_CUDA(cudaEventRecord(t.ev[0], t.stream));
      CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, t.stream));
      CHECK_CUDA(cudaEventRecord(t.ev[1], t.stream));
      CHECK_CUDA(cudaEventSynchronize(t.ev[1]));
      if (r >= 2)
        CHECK_CUDA(cudaEventElapsedTime(&ms[r - 2], t.ev[0], t.ev[1]));
    }
    printf("device-to-device copy: %.0f GB/s (read + write)\n\n",
           2.0 * bytes / (median(ms, 10) * 1e-3) / 1e9);
    cudaFree(a);
    cudaFree(b);
  }

  static const int sizes[4][2] = {{512, 512}, {1280, 720}, {1920, 1080}, {3840, 2160}};
  static float per[LEVELS + 1][MAX_REPEATS], guide[LEVELS][MAX_REPEATS], samples[MAX_REPEATS];
  for (int si = 0; si < 4; ++si) {
    if (only >= 0 && si != only)
      continue;
    const int w = sizes[si][0], h = sizes[si][1];
    const size_t n = (size_t)w * h;
    const double px = (double)n;
    float *color, *albedo, *normal, *depth, *output, *host;
    CHECK_CUDA(cudaMalloc(&color, n * 12));
    CHECK_CUDA(cudaMalloc(&albedo, n * 12));
    CHECK_CUDA(cudaMalloc(&normal, n * 12));
    CHECK_CUDA(cudaMalloc(&depth, n * 4));
    CHECK_CUDA(cudaMalloc(&output, n * 12));
    CHECK_CUDA(cudaMallocHost((void**)&host, n * 10 * sizeof(float)));
    fill_host(host, w, h);
    float h2d[7], d2h[7];
    for (int r = 0; r < 7; ++r) {
      CHECK_CUDA(cudaEventRecord(t.ev[0], t.stream));
      CHECK_CUDA(cudaMemcpyAsync(color, host, n * 12, cudaMemcpyHostToDevice, t.stream));
      CHECK_CUDA(cudaMemcpyAsync(albedo, host + 3 * n, n * 12, cudaMemcpyHostToDevice, t.stream));
      CHECK_CUDA(cudaMemcpyAsync(normal, host + 6 * n, n * 12, cudaMemcpyHostToDevice, t.stream));
      CHECK_CUDA(cudaMemcpyAsync(depth, host + 9 * n, n * 4, cudaMemcpyHostToDevice, t.stream));
      CHECK_CUDA(cudaEventRecord(t.ev[1], t.stream));
      CHECK_CUDA(cudaEventSynchronize(t.ev[1]));
      CHECK_CUDA(cudaEventElapsedTime(&h2d[r], t.ev[0], t.ev[1]));
    }
    lull_atrous_images images;
    memset(&images, 0, sizeof images);
    images.color = view(color, 3, w, h);
    images.albedo = view(albedo, 3, w, h);
    images.normal = view(normal, 3, w, h);
    images.depth = view(depth, 1, w, h);
    images.output = view(output, 3, w, h);
    lull_atrous_params params = lull_atrous_default_params();
    params.iterations = LEVELS;
    printf("== %dx%d (%.2f MP), colour+albedo+normal+depth, %d levels\n", w, h, px / 1e6, LEVELS);
    float step_ms[MODES][LEVELS + 1], guide_ms[MODES][LEVELS], total_ms[MODES];
    int finite[MODES];
    for (int mode = 0; mode < MODES; ++mode) {
      params.packed_guides = mode >= 2;
      t.variant = mode == 3;
      lull_atrous_plan plan;
      lull_error err = {LULL_OK, ""};
      if (lull_atrous_plan_make(&params, &images, mode == 0 ? 0 : 1, &plan, &err) != LULL_OK) {
        fprintf(stderr, "plan: %s\n", err.message);
        return 1;
      }
      unsigned char* scratch;
      CHECK_CUDA(cudaMalloc(&scratch, plan.scratch_bytes));
      for (int r = -warmup; r < repeats; ++r) {
        if (lull_atrous_enqueue(&plan, &params, &images, scratch, &timing, NULL, &err) != LULL_OK) {
          fprintf(stderr, "enqueue: %s\n", err.message);
          return 1;
        }
        CHECK_CUDA(cudaEventRecord(t.ev[LEVELS + 1], t.stream));
        CHECK_CUDA(cudaEventSynchronize(t.ev[LEVELS + 1]));
        if (r < 0)
          continue;
        for (int k = 0; k <= LEVELS; ++k)
          CHECK_CUDA(cudaEventElapsedTime(&per[k][r], t.ev[k], t.ev[k + 1]));
        for (int k = 0; k < LEVELS; ++k)
          CHECK_CUDA(cudaEventElapsedTime(&guide[k][r], t.ev[k + 1], t.mid[k]));
      }
      for (int k = 0; k <= LEVELS; ++k)
        step_ms[mode][k] = median(per[k], repeats);
      for (int k = 0; k < LEVELS; ++k)
        guide_ms[mode][k] = median(guide[k], repeats);
      total_ms[mode] = 0;
      if (!profile && mode < TABLE_MODES)
        total_ms[mode] = graph_ms(&plan, &params, &images, scratch, &t, repeats, samples);
      CHECK_CUDA(cudaMemcpy(host, output, n * 12, cudaMemcpyDeviceToHost));
      finite[mode] = 1;
      for (size_t i = 0; i < n * 3; ++i)
        finite[mode] &= host[i] - host[i] == 0.0f;
      cudaFree(scratch);
    }
    for (int r = 0; r < 7; ++r) {
      CHECK_CUDA(cudaEventRecord(t.ev[0], t.stream));
      CHECK_CUDA(cudaMemcpyAsync(host, output, n * 12, cudaMemcpyDeviceToHost, t.stream));
      CHECK_CUDA(cudaEventRecord(t.ev[1], t.stream));
      CHECK_CUDA(cudaEventSynchronize(t.ev[1]));
      CHECK_CUDA(cudaEventElapsedTime(&d2h[r], t.ev[0], t.ev[1]));
    }
    printf("  %-8s %8s %8s %8s %7s %7s %6s %6s %6s %11s\n", "step", "base ms", "perm ms",
           "pack ms", "b/p", "p/pk", "b GB/s", "p GB/s", "pk GB/s", "B/px b/p/pk");
    for (int k = 0; k <= LEVELS; ++k) {
      char name[16];
      if (k == 0)
        snprintf(name, sizeof name, "prepare");
      else
        snprintf(name, sizeof name, "level %d", k - 1);
      double gbs[TABLE_MODES], bytes[TABLE_MODES];
      for (int m = 0; m < TABLE_MODES; ++m) {
        bytes[m] = step_bytes(m, k - 1);
        gbs[m] = bytes[m] * px / (step_ms[m][k] * 1e6);
      }
      printf("  %-8s %8.4f %8.4f %8.4f %6.2fx %6.2fx %6.0f %6.0f %7.0f %3.0f/%3.0f/%3.0f\n", name,
             step_ms[0][k], step_ms[1][k], step_ms[2][k], step_ms[0][k] / step_ms[1][k],
             step_ms[1][k] / step_ms[2][k], gbs[0], gbs[1], gbs[2], bytes[0], bytes[1], bytes[2]);
    }
    float lv[MODES] = {0, 0, 0, 0};
    for (int m = 0; m < MODES; ++m)
      for (int k = 1; k <= LEVELS; ++k)
        lv[m] += step_ms[m][k];
    printf("  %-8s %8.4f %8.4f %8.4f %6.2fx %6.2fx   (sum of the %d levels)\n", "levels", lv[0],
           lv[1], lv[2], lv[0] / lv[1], lv[1] / lv[2], LEVELS);
    printf("  %-8s %8.4f %8.4f %8.4f %6.2fx %6.2fx   (graph replay: prepare + levels)\n", "total",
           total_ms[0], total_ms[1], total_ms[2], total_ms[0] / total_ms[1],
           total_ms[1] / total_ms[2]);
    printf("  of which the guide kernel (gl, il), ms:");
    for (int m = 0; m < TABLE_MODES; ++m) {
      printf("  %s", m == 0 ? "base" : (m == 1 ? "perm" : "pack"));
      for (int k = 0; k < LEVELS; ++k)
        printf(" %.4f", guide_ms[m][k]);
    }
    printf("\n  packed, level kernels with %d blocks/SM (ms):", OCC_BLOCKS);
    for (int k = 1; k <= LEVELS; ++k)
      printf(" %.4f", step_ms[3][k]);
    printf(" = %.4f (the library's kernel: %.4f); output finite: %s\n", lv[3], lv[2],
           finite[3] ? "yes" : "NO");
    if (!profile) {
      const float fb = fixed_colour_ms(&images, 0, 0, &t, repeats, samples);
      const float fp = fixed_colour_ms(&images, 1, 0, &t, repeats, samples);
      const float fk = fixed_colour_ms(&images, 1, 1, &t, repeats, samples);
      printf("  colorMode 0 (fixed colour sigma), graph replay: baseline %.4f ms, permuted %.4f ms "
             "(%.2fx), packed %.4f ms (%.2fx)\n", fb, fp, fb / fp, fk, fb / fk);
      float* const api_images[5] = {color, albedo, normal, depth, output};
      for (int packed = 0; packed <= 1; ++packed)
        for (int direct = 0; direct <= 1; ++direct) {
          double sync_ms, async_ms;
          api_times(api_images, w, h, packed, direct, repeats, samples, &sync_ms, &async_ms);
          const float graph = total_ms[1 + packed];
          printf("  API %-8s %s: %.4f ms a call (%.2fx the graph's %.4f), async queue %.4f ms a "
                 "call (%.2fx)\n", packed ? "packed" : "permuted",
                 direct ? "progress monitor" : "plain           ", sync_ms, sync_ms / graph, graph,
                 async_ms, async_ms / graph);
        }
    }
    printf("  H2D inputs %.3f ms (%.1f GB/s), D2H output %.3f ms; output finite: %s %s %s\n\n",
           median(h2d, 7), px * 40 / (median(h2d, 7) * 1e6), median(d2h, 7),
           finite[0] ? "yes" : "NO", finite[1] ? "yes" : "NO", finite[2] ? "yes" : "NO");
    cudaFreeHost(host);
    cudaFree(color);
    cudaFree(albedo);
    cudaFree(normal);
    cudaFree(depth);
    cudaFree(output);
  }
  return 0;
}
