/* Benchmark of the CUDA à-trous filter: baseline vs permuted schedule
 * (Dolp et al. 2024), per level and in total, at 512^2, 1280x720,
 * 1920x1080 and 3840x2160 with colour + albedo + normal + depth, 5 levels.
 *
 *   build-cuda/bin/bench_atrous_cuda [repeats [size-index [profile]]]
 *
 * size-index 0..3 runs one size only; "profile" runs each kernel once
 * (no warm-up, no graph), for ncu.
 *
 * Times are medians of `repeats` runs (default 50) after 5 warm-up runs,
 * measured with CUDA events around each kernel; "total" is the median of
 * the whole filter (prepare + 5 levels) replayed as a CUDA graph, which
 * removes launch gaps.  Bytes are the minimum each kernel must move (every
 * buffer read once and written once); GB/s = those bytes / time, next to a
 * device-to-device copy measured in the same run.  H2D / D2H copies of the
 * inputs and the output (pinned host memory) are timed separately. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atrous_cuda.h"

#define CHECK_CUDA(x)                                                                   \
  do {                                                                                  \
    const cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                            \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

enum { LEVELS = 5, MAX_REPEATS = 1000 };

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

typedef struct run_setup
{
  int w, h;
  float *color, *albedo, *normal, *depth, *output; /* device images */
  unsigned char* scratch;
  lull_atrous_prepare_args pa;
  lull_atrous_level_args la[2][LEVELS]; /* [schedule][level] */
} run_setup;

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

static void setup(run_setup* s, int w, int h)
{
  memset(s, 0, sizeof *s);
  s->w = w;
  s->h = h;
  const size_t n = (size_t)w * h;
  CHECK_CUDA(cudaMalloc(&s->color, n * 12));
  CHECK_CUDA(cudaMalloc(&s->albedo, n * 12));
  CHECK_CUDA(cudaMalloc(&s->normal, n * 12));
  CHECK_CUDA(cudaMalloc(&s->depth, n * 4));
  CHECK_CUDA(cudaMalloc(&s->output, n * 12));
  /* c[2], g0[2], g1[2], ig[2], lg, tables */
  const size_t tables = (size_t)LEVELS * 2 * ((size_t)w + h) * sizeof(int);
  CHECK_CUDA(cudaMalloc(&s->scratch, 6 * n * 16 + 2 * n * 4 + n * 8 + tables));
  float4* c[2] = {(float4*)s->scratch, (float4*)(s->scratch + n * 16)};
  float4* g0[2] = {(float4*)(s->scratch + 2 * n * 16), (float4*)(s->scratch + 3 * n * 16)};
  float4* g1[2] = {(float4*)(s->scratch + 4 * n * 16), (float4*)(s->scratch + 5 * n * 16)};
  float* ig[2] = {(float*)(s->scratch + 6 * n * 16), (float*)(s->scratch + 6 * n * 16 + n * 4)};
  float2* lg = (float2*)(s->scratch + 6 * n * 16 + 2 * n * 4);
  int* tab = (int*)(s->scratch + 6 * n * 16 + 2 * n * 4 + n * 8);

  lull_atrous_prepare_args* pa = &s->pa;
  pa->color = view(s->color, 3, w, h);
  pa->albedo = view(s->albedo, 3, w, h);
  pa->normal = view(s->normal, 3, w, h);
  pa->geometry = view(s->depth, 1, w, h);
  pa->width = w;
  pa->height = h;
  pa->channels = 3;
  pa->has_albedo = pa->has_normal = 1;
  pa->geometry_kind = LULL_ATROUS_GEOMETRY_DEPTH;
  pa->demodulate = 1;
  pa->variance_mode = 1;
  pa->input_scale = 1.0f;
  pa->sigma_depth = 4.0f;
  pa->k_normal = 1.0f / (0.2f * 0.2f);
  pa->k_albedo = 1.0f / (0.1f * 0.1f);
  pa->raw = c[1];
  pa->c_plain = c[0];
  pa->c_out = c[1];
  pa->g0 = g0[0];
  pa->g1 = g1[0];
  pa->ig = ig[0];

  for (int sched = 0; sched < 2; ++sched) {
    int cur = 1, gcur = 0;
    for (int l = 0; l < LEVELS; ++l) {
      lull_atrous_level_args* a = &s->la[sched][l];
      const int last = l == LEVELS - 1;
      a->c_in = c[cur];
      a->c_out = c[1 - cur];
      a->g0_in = g0[gcur];
      a->g1_in = g1[gcur];
      a->ig_in = ig[gcur];
      a->lg = lg;
      if (sched && !last) {
        a->g0_out = g0[1 - gcur];
        a->g1_out = g1[1 - gcur];
        a->ig_out = ig[1 - gcur];
      }
      if (sched) {
        a->fwd_x = tab + (size_t)l * w;
        a->inv_x = tab + ((size_t)LEVELS + l) * w;
        a->fwd_y = tab + 2 * (size_t)LEVELS * w + (size_t)l * h;
        a->inv_y = tab + 2 * (size_t)LEVELS * w + ((size_t)LEVELS + l) * h;
      }
      a->width = w;
      a->height = h;
      a->level = l;
      a->last = last;
      a->channels = 3;
      a->k_normal = pa->k_normal;
      a->k_albedo = pa->k_albedo;
      a->k_color = 1.0f;
      a->sigma_luminance = 4.0f;
      for (int d2 = 0; d2 < 9; ++d2) {
        const int dd = d2 << (2 * l);
        a->inv_d2[d2] = dd ? 1.0f / (float)dd : 0.0f;
      }
      a->output = view(s->output, 3, w, h);
      a->demodulate = 1;
      a->out_channels = 3;
      a->inv_scale = 1.0f;
      cur = 1 - cur;
      if (sched && !last)
        gcur = 1 - gcur;
    }
  }
  CHECK_CUDA(lull_atrous_layout_tables_launch(tab, w, h, LEVELS, 0));
}

static void release(run_setup* s)
{
  cudaFree(s->color);
  cudaFree(s->albedo);
  cudaFree(s->normal);
  cudaFree(s->depth);
  cudaFree(s->output);
  cudaFree(s->scratch);
}

static void launch_level(const run_setup* s, int sched, int l, cudaStream_t st)
{
  CHECK_CUDA(lull_atrous_level_guides_launch(&s->la[sched][l], st));
  if (sched)
    CHECK_CUDA(lull_atrous_permuted_launch(&s->la[1][l], 1, LULL_ATROUS_GEOMETRY_DEPTH, st));
  else
    CHECK_CUDA(lull_atrous_baseline_launch(&s->la[0][l], 1, LULL_ATROUS_GEOMETRY_DEPTH, st));
}

static void launch_all(const run_setup* s, int sched, cudaStream_t st)
{
  CHECK_CUDA(lull_atrous_prepare_launch(&s->pa, st));
  for (int l = 0; l < LEVELS; ++l)
    launch_level(s, sched, l, st);
}

/* Host data: noisy colour over smooth albedo, two planes, a depth ramp. */
static void fill_inputs(run_setup* s, float* host, cudaStream_t st, float* h2d_ms)
{
  const int w = s->w, h = s->h;
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
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  float times[7];
  for (int r = 0; r < 7; ++r) {
    CHECK_CUDA(cudaEventRecord(e0, st));
    CHECK_CUDA(cudaMemcpyAsync(s->color, col, n * 12, cudaMemcpyHostToDevice, st));
    CHECK_CUDA(cudaMemcpyAsync(s->albedo, alb, n * 12, cudaMemcpyHostToDevice, st));
    CHECK_CUDA(cudaMemcpyAsync(s->normal, nrm, n * 12, cudaMemcpyHostToDevice, st));
    CHECK_CUDA(cudaMemcpyAsync(s->depth, dep, n * 4, cudaMemcpyHostToDevice, st));
    CHECK_CUDA(cudaEventRecord(e1, st));
    CHECK_CUDA(cudaEventSynchronize(e1));
    CHECK_CUDA(cudaEventElapsedTime(&times[r], e0, e1));
  }
  *h2d_ms = median(times, 7);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
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
  cudaStream_t st;
  CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t ev[LEVELS + 2];
  for (int i = 0; i < LEVELS + 2; ++i)
    CHECK_CUDA(cudaEventCreate(&ev[i]));

  /* the copy ceiling: 1 GiB device-to-device, read + write counted */
  if (!profile) {
    void *a, *b;
    const size_t bytes = (size_t)1 << 30;
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMalloc(&b, bytes));
    CHECK_CUDA(cudaMemsetAsync(a, 1, bytes, st));
    float t[10];
    for (int r = 0; r < 12; ++r) {
      CHECK_CUDA(cudaEventRecord(ev[0], st));
      CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, st));
      CHECK_CUDA(cudaEventRecord(ev[1], st));
      CHECK_CUDA(cudaEventSynchronize(ev[1]));
      if (r >= 2)
        CHECK_CUDA(cudaEventElapsedTime(&t[r - 2], ev[0], ev[1]));
    }
    printf("device-to-device copy: %.0f GB/s (read + write)\n\n",
           2.0 * bytes / (median(t, 10) * 1e-3) / 1e9);
    cudaFree(a);
    cudaFree(b);
  }

  static const int sizes[4][2] = {{512, 512}, {1280, 720}, {1920, 1080}, {3840, 2160}};
  /* minimum bytes per pixel: see atrous_cuda.h for the buffers */
  const double prepare_bytes = 40 + 48 + (16 + 16 + 16) + 20 + (16 + 16 + 16 + 4) + 16;
  /* guide kernel: C in, LG out (24); level: C, G0, G1, LG, IG in (60);
   * out: C (16) or C, G0, G1, IG (52); last level: 12 B of output */
  const double level_bytes[2] = {24 + 60 + 16, 24 + 60 + 52};
  const double last_bytes[2] = {24 + 60 + 12, 24 + 60 + 16 + 16 + 12};
  static float samples[MAX_REPEATS];
  for (int si = 0; si < 4; ++si) {
    if (only >= 0 && si != only)
      continue;
    const int w = sizes[si][0], h = sizes[si][1];
    const double px = (double)w * h;
    run_setup s;
    setup(&s, w, h);
    float* host = NULL;
    CHECK_CUDA(cudaMallocHost((void**)&host, (size_t)w * h * 10 * sizeof(float)));
    float h2d = 0;
    fill_inputs(&s, host, st, &h2d);
    printf("== %dx%d (%.2f MP), colour+albedo+normal+depth, %d levels\n", w, h, px / 1e6, LEVELS);
    float level_ms[2][LEVELS], prep_ms[2], total_ms[2];
    for (int sched = 0; sched < 2; ++sched) {
      static float per[LEVELS + 1][MAX_REPEATS];
      for (int r = -warmup; r < repeats; ++r) {
        CHECK_CUDA(cudaEventRecord(ev[0], st));
        CHECK_CUDA(lull_atrous_prepare_launch(&s.pa, st));
        CHECK_CUDA(cudaEventRecord(ev[1], st));
        for (int l = 0; l < LEVELS; ++l) {
          launch_level(&s, sched, l, st);
          CHECK_CUDA(cudaEventRecord(ev[l + 2], st));
        }
        CHECK_CUDA(cudaEventSynchronize(ev[LEVELS + 1]));
        if (r < 0)
          continue;
        for (int k = 0; k <= LEVELS; ++k)
          CHECK_CUDA(cudaEventElapsedTime(&per[k][r], ev[k], ev[k + 1]));
      }
      prep_ms[sched] = median(per[0], repeats);
      for (int l = 0; l < LEVELS; ++l)
        level_ms[sched][l] = median(per[l + 1], repeats);
      total_ms[sched] = 0;
      if (profile)
        continue;
      /* the whole filter as a graph */
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      CHECK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
      launch_all(&s, sched, st);
      CHECK_CUDA(cudaStreamEndCapture(st, &graph));
      CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
      for (int r = -5; r < repeats; ++r) {
        CHECK_CUDA(cudaEventRecord(ev[0], st));
        CHECK_CUDA(cudaGraphLaunch(exec, st));
        CHECK_CUDA(cudaEventRecord(ev[1], st));
        CHECK_CUDA(cudaEventSynchronize(ev[1]));
        if (r >= 0)
          CHECK_CUDA(cudaEventElapsedTime(&samples[r], ev[0], ev[1]));
      }
      total_ms[sched] = median(samples, repeats);
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
    }
    /* output back to the host */
    float d2h[7];
    for (int r = 0; r < 7; ++r) {
      CHECK_CUDA(cudaEventRecord(ev[0], st));
      CHECK_CUDA(cudaMemcpyAsync(host, s.output, (size_t)w * h * 12, cudaMemcpyDeviceToHost, st));
      CHECK_CUDA(cudaEventRecord(ev[1], st));
      CHECK_CUDA(cudaEventSynchronize(ev[1]));
      CHECK_CUDA(cudaEventElapsedTime(&d2h[r], ev[0], ev[1]));
    }
    int finite = 1;
    for (size_t i = 0; i < (size_t)w * h * 3; ++i)
      finite &= host[i] == host[i] && host[i] - host[i] == 0.0f;
    printf("  %-9s %10s %10s %8s %9s %9s %6s\n", "kernel", "base ms", "perm ms", "speedup",
           "base GB/s", "perm GB/s", "B/px");
    printf("  %-9s %10.4f %10.4f %8s %9.0f %9.0f %6.0f\n", "prepare", prep_ms[0], prep_ms[1], "",
           prepare_bytes * px / (prep_ms[0] * 1e6), prepare_bytes * px / (prep_ms[1] * 1e6),
           prepare_bytes);
    for (int l = 0; l < LEVELS; ++l) {
      const int last = l == LEVELS - 1;
      const double bb = last ? last_bytes[0] : level_bytes[0];
      const double bp = last ? last_bytes[1] : level_bytes[1];
      char name[16];
      snprintf(name, sizeof name, "level %d", l);
      printf("  %-9s %10.4f %10.4f %7.2fx %9.0f %9.0f %3.0f/%-3.0f\n", name, level_ms[0][l],
             level_ms[1][l], level_ms[0][l] / level_ms[1][l], bb * px / (level_ms[0][l] * 1e6),
             bp * px / (level_ms[1][l] * 1e6), bb, bp);
    }
    float lv[2] = {0, 0};
    for (int l = 0; l < LEVELS; ++l) {
      lv[0] += level_ms[0][l];
      lv[1] += level_ms[1][l];
    }
    printf("  %-9s %10.4f %10.4f %7.2fx   (sum of the 5 levels)\n", "levels", lv[0], lv[1],
           lv[0] / lv[1]);
    printf("  %-9s %10.4f %10.4f %7.2fx   (graph replay: prepare + levels)\n", "total",
           total_ms[0], total_ms[1], total_ms[0] / total_ms[1]);
    printf("  H2D inputs %.3f ms (%.1f GB/s), D2H output %.3f ms; output finite: %s\n\n", h2d,
           px * 40 / (h2d * 1e6), median(d2h, 7), finite ? "yes" : "NO");
    cudaFreeHost(host);
    release(&s);
  }
  return 0;
}
