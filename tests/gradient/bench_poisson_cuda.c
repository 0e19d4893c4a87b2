/* GPU benchmark of the Poisson filter's CUDA solver (not a test: it
 * reports, it asserts nothing about time).
 *
 *   bench_poisson_cuda [--repeats N] [--gd-repeats N] [--gd-only]
 *
 * The GPU counterpart of bench_poisson.c, on the same synthetic data
 * (synthetic.h: smooth shading, edges, primal noise 0.1, gradient noise
 * 0.01, and 1% gradient outliers), 1280x720 and 1024x1024, RGB, the data
 * in device memory:
 *
 *   - L2 by DCT: median time of the exact solve, its three kernels, GB/s
 *     under the model below, and the time with each fixed number of signal
 *     pairs per DCT block against the plan's choice;
 *   - one weighted CG iteration (Jacobi): (t(120) - t(20)) / 100 iterations
 *     of L2 by CG, its two kernels, GB/s;
 *   - L1: Karras' default preset (20 IRLS x 50 CG, no preconditioner, the
 *     first solve by CG) sets the L1 objective to reach; lull's
 *     configurations are timed with the objective they reach (computed on
 *     the CPU from the GPU's result, lull_poisson_objective), and the
 *     fastest at or below the target is named;
 *   - the whole filter (load, repair, solve, store) on device images, L2
 *     and the default L1;
 *   - GradientDomain (the whole filter with its defaults: guide, features,
 *     three candidates, selection) on poisson_cases.c's synthetic halves
 *     and features, with the time per kind of kernel.
 * Times are medians of --repeats runs (cudaEvents around the enqueued
 * work); the per-kernel split comes from a separate run that waits after
 * each kernel.
 *
 * Traffic model (RGB float): X_FORWARD reads the primal and both gradients
 * and writes the transposed image (48 B/px), Y_SOLVE and X_INVERSE read
 * and write it (24 B/px each): 96 B/px for L2.  A Jacobi-PCG iteration:
 * APPLY reads r, p and 1/diag (neighbours from cache) and the three
 * weights and writes p' and A p' (64 B/px); UPDATE reads x, p', A p', r
 * and 1/diag and writes x and r (76 B/px): 140 B/px. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gradient_domain_cuda.h"
#include "poisson_cases.h"
#include "poisson_cuda.h"
#include "synthetic.h"
#include "test_util.h"

static int compare(const void* a, const void* b)
{
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n)
{
  qsort(v, (size_t)n, sizeof *v, compare);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void check_cuda(cudaError_t code, const char* what)
{
  if (code != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(code));
    exit(1);
  }
}

/* Launchers that time each kind of kernel (waiting after each), or pass
 * through. */
typedef struct timing
{
  lull_pk_launchers inner;
  cudaStream_t stream;
  cudaEvent_t start, stop;
  int per_kernel;
  double ms[LULL_PK_KINDS];
  int count[LULL_PK_KINDS];
} timing;

static cudaError_t timed_launch(void* ctx, const lull_pk_launch* l)
{
  timing* t = ctx;
  if (!t->per_kernel)
    return t->inner.launch(t->inner.ctx, l);
  cudaEventRecord(t->start, t->stream);
  const cudaError_t code = t->inner.launch(t->inner.ctx, l);
  cudaEventRecord(t->stop, t->stream);
  cudaEventSynchronize(t->stop);
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, t->start, t->stop);
  t->ms[l->kind] += ms;
  t->count[l->kind]++;
  return code;
}

typedef struct bench
{
  int w, h;
  size_t n;
  synthetic s;
  lull_pk_plan plan;
  lull_pk_buffers buf;
  unsigned char* scratch;
  timing timer;
  lull_pk_launchers launchers;
  lull_poisson_images images; /* device images for the whole filter */
  float* device_images[4];
  int repeats, threads;
} bench;

/* 1% of the x and y gradients get a wild value in [-1, 1] (all channels);
 * bench_poisson.c's data in kind. */
static void add_outliers(synthetic* s)
{
  unsigned rng = 4321u;
  const int n = s->w * s->h;
  for (int k = 0; k < n / 50; ++k) {
    float* const* g = k % 2 ? s->gy : s->gx;
    const int i = (int)(lull_test_random(&rng) * (float)n) % n;
    const float v = 2.0f * (lull_test_random(&rng) - 0.5f);
    for (int c = 0; c < 3; ++c)
      g[c][i] += v;
  }
}

static void upload_planes(float* const dst[3], float* const src[3], size_t n)
{
  for (int c = 0; c < 3; ++c)
    check_cuda(cudaMemcpy(dst[c], src[c], n * sizeof(float), cudaMemcpyHostToDevice), "upload");
}

static int state_iterations(const bench* b)
{
  lull_pk_state st;
  check_cuda(cudaMemcpy(&st, b->buf.state, sizeof st, cudaMemcpyDeviceToHost), "state");
  return st.iterations;
}

/* The relative residual at the end of the last CG solve (0 after a DCT
 * solve, which keeps no residual: exact up to rounding). */
static double state_residual(const bench* b)
{
  lull_pk_state st;
  check_cuda(cudaMemcpy(&st, b->buf.state, sizeof st, cudaMemcpyDeviceToHost), "state");
  double r = 0.0;
  for (int c = 0; c < 3; ++c)
    if (st.rhs2[c] > 0.0)
      r = fmax(r, sqrt(st.rr[c] / st.rhs2[c]));
  return r;
}

typedef struct run_result
{
  double ms;        /* median */
  double objective; /* L1 objective of the result */
  int iterations;   /* CG iterations of one run */
  double residual;  /* the last CG solve: max over channels of |r| / |A^T W^2 b| */
} run_result;

/* One enqueued piece of work (a solve, the filter). */
typedef lull_status (*work_fn)(bench* b, const lull_poisson_params* p, lull_error* err);

/* Median of `repeats` runs of fn, timed with events on the bench's stream;
 * x = primal before each run (not timed). */
static double time_median(bench* b, const lull_poisson_params* p, int repeats, work_fn fn)
{
  double* t = calloc((size_t)repeats, sizeof(double));
  lull_error err = {LULL_OK, ""};
  for (int k = 0; k < repeats; ++k) {
    for (int c = 0; c < 3; ++c)
      cudaMemcpyAsync(b->buf.x[c], b->buf.b[c], b->n * sizeof(float), cudaMemcpyDeviceToDevice,
                      b->timer.stream);
    cudaEventRecord(b->timer.start, b->timer.stream);
    if (fn(b, p, &err) != LULL_OK)
      fprintf(stderr, "run failed: %s\n", err.message);
    cudaEventRecord(b->timer.stop, b->timer.stream);
    check_cuda(cudaEventSynchronize(b->timer.stop), "run");
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, b->timer.start, b->timer.stop);
    t[k] = ms;
  }
  const double result = median(t, repeats);
  free(t);
  return result;
}

static lull_status solve(bench* b, const lull_poisson_params* p, lull_error* err)
{
  const lull_pk_args args = lull_pk_args_make(&b->plan, &b->buf, p->alpha);
  return lull_pk_solve(&b->plan, p, &args, &b->launchers, NULL, err);
}

static lull_status filter(bench* b, const lull_poisson_params* p, lull_error* err)
{
  return lull_pk_filter_enqueue(&b->plan, p, &b->images, b->scratch, &b->launchers, NULL, err);
}

/* Solves from x = primal `repeats` times: the median time, the CG
 * iterations of one run and the L1 objective of the result. */
static run_result time_solve(bench* b, const lull_poisson_params* p, int repeats)
{
  run_result r = {0.0, 0.0, 0, 0.0};
  const int before = state_iterations(b);
  r.ms = time_median(b, p, repeats, solve);
  r.iterations = (state_iterations(b) - before) / repeats;
  r.residual = state_residual(b);
  for (int c = 0; c < 3; ++c)
    check_cuda(cudaMemcpy(b->s.x[c], b->buf.x[c], b->n * sizeof(float), cudaMemcpyDeviceToHost),
               "download");
  lull_poisson_system sys = synthetic_system(&b->s, p->alpha);
  sys.threads = b->threads;
  r.objective = lull_poisson_objective(&sys, (const float* const*)b->s.x, 1);
  return r;
}

static void print_split(const timing* t, const char* what)
{
  /* by kind, so that a new kind cannot shift the names */
  static const char* const names[LULL_PK_KINDS] = {
      [LULL_PK_CLEAR] = "clear",
      [LULL_PK_DCT_TABLES] = "dct_tables",
      [LULL_PK_DCT_X_FORWARD] = "dct_x_forward",
      [LULL_PK_DCT_Y_SOLVE] = "dct_y_solve",
      [LULL_PK_DCT_X_INVERSE] = "dct_x_inverse",
      [LULL_PK_LOAD] = "load",
      [LULL_PK_REPAIR] = "repair",
      [LULL_PK_WEIGHTS_RESET] = "weights_reset",
      [LULL_PK_CG_INIT] = "cg_init",
      [LULL_PK_CG_APPLY] = "cg_apply",
      [LULL_PK_CG_UPDATE] = "cg_update",
      [LULL_PK_PRECOND_SUMS] = "precond_sums",
      [LULL_PK_REWEIGHT] = "reweight",
      [LULL_PK_SCALE_WEIGHTS] = "scale_weights",
      [LULL_PK_MEAN_WEIGHTS] = "mean_weights",
      [LULL_PK_PRIMAL_MEAN] = "primal_mean",
      [LULL_PK_FINITE_OR] = "finite_or",
      [LULL_PK_STORE] = "store",
      [LULL_PK_CG_DIRECTION] = "cg_direction",
      [LULL_PK_MEAN_OFFSET] = "mean_offset",
      [LULL_PK_SHIFT] = "shift",
      [LULL_PK_CG_START] = "cg_start",
      [LULL_PK_CG_UPDATE_DEFLATED] = "cg_update_deflated",
      [LULL_PK_GD_AXPY] = "gd_axpy",
      [LULL_PK_GD_ZERO] = "gd_zero",
      [LULL_PK_GD_GRADIENTS] = "gd_gradients",
      [LULL_PK_GD_HALF_VARIANCE] = "gd_half_variance",
      [LULL_PK_GD_BOX_MEAN] = "gd_box_mean",
      [LULL_PK_GD_MAX] = "gd_max",
      [LULL_PK_GD_FEATURE_LOAD] = "gd_feature_load",
      [LULL_PK_GD_FEATURE_RANGE] = "gd_feature_range",
      [LULL_PK_GD_FEATURE_NORMALIZE] = "gd_feature_normalize",
      [LULL_PK_GD_FEATURE_SCALE] = "gd_feature_scale",
      [LULL_PK_GD_WEIGHTS] = "gd_weights",
      [LULL_PK_GD_STENCIL] = "gd_stencil",
      [LULL_PK_GD_SCORE] = "gd_score",
      [LULL_PK_GD_KEEP_BEST] = "gd_keep_best",
      [LULL_PK_GD_POST_SCALE] = "gd_post_scale",
      [LULL_PK_GD_POST] = "gd_post",
  };
  printf("  %s, per kernel (waiting after each):", what);
  for (int k = 0; k < LULL_PK_KINDS; ++k)
    if (t->count[k])
      printf(" %s %.4f ms x %d", names[k] ? names[k] : "?", t->ms[k] / t->count[k], t->count[k]);
  printf("\n");
}

/* Per-kernel split of one run. */
static void split(bench* b, const lull_poisson_params* p, const char* what)
{
  memset(b->timer.ms, 0, sizeof b->timer.ms);
  memset(b->timer.count, 0, sizeof b->timer.count);
  b->timer.per_kernel = 1;
  (void)time_solve(b, p, 1);
  b->timer.per_kernel = 0;
  print_split(&b->timer, what);
}

/* Packed device images of the data for the whole filter. */
static void images_make(bench* b)
{
  const size_t bytes = b->n * 3 * sizeof(float);
  float* host = malloc(bytes);
  float* const* src[3] = {b->s.b, b->s.gx, b->s.gy};
  lull_image* views[4] = {&b->images.color, &b->images.gradient_x, &b->images.gradient_y,
                          &b->images.output};
  for (int k = 0; k < 4; ++k) {
    check_cuda(cudaMalloc((void**)&b->device_images[k], bytes), "cudaMalloc");
    if (k < 3) {
      for (size_t i = 0; i < b->n; ++i)
        for (int c = 0; c < 3; ++c)
          host[3 * i + (size_t)c] = src[k][c][i];
      check_cuda(cudaMemcpy(b->device_images[k], host, bytes, cudaMemcpyHostToDevice), "upload");
    }
    views[k]->data = (unsigned char*)b->device_images[k];
    views[k]->format = LULL_FORMAT_FLOAT3;
    views[k]->width = b->w;
    views[k]->height = b->h;
    views[k]->pixel_stride = 12;
    views[k]->row_stride = 12 * (size_t)b->w;
  }
  free(host);
}

static void bench_size(int w, int h, int repeats, const struct cudaDeviceProp* prop)
{
  bench b;
  memset(&b, 0, sizeof b);
  b.w = w;
  b.h = h;
  b.n = (size_t)w * (size_t)h;
  b.repeats = repeats;
  b.threads = 8;
  const double mp = (double)b.n / 1e6;
  printf("\n== %dx%d (%.2f MP), %s ==\n", w, h, mp, prop->name);
  synthetic_init(&b.s, w, h, 0.1f, 0.01f, 99u);
  add_outliers(&b.s);
  int max_smem = 0;
  cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  lull_error err = {LULL_OK, ""};
  if (lull_pk_plan_make(w, h, 3, 0, 1, prop->multiProcessorCount, (size_t)max_smem, &b.plan,
                        &err) != LULL_OK) {
    fprintf(stderr, "plan: %s\n", err.message);
    exit(1);
  }
  check_cuda(cudaMalloc((void**)&b.scratch, b.plan.scratch_bytes), "cudaMalloc");
  lull_pk_layout(&b.plan, b.scratch, &b.buf);
  check_cuda(cudaStreamCreate(&b.timer.stream), "stream");
  cudaEventCreate(&b.timer.start);
  cudaEventCreate(&b.timer.stop);
  b.timer.inner = lull_pk_stream_launchers(&b.timer.stream);
  b.launchers.ctx = &b.timer;
  b.launchers.launch = timed_launch;
  b.launchers.sync = NULL;
  printf("DCT: x %d pairs/block%s, %zu B shared; y %d pairs/block%s, %zu B shared; pixel kernels "
         "%d blocks\n", b.plan.x_shape.pairs, b.plan.x_shape.global ? " (global)" : "",
         b.plan.x_shape.smem, b.plan.y_shape.pairs, b.plan.y_shape.global ? " (global)" : "",
         b.plan.y_shape.smem, b.plan.grid);
  if (lull_pk_prepare(&b.plan, &b.buf, &b.launchers, &err) != LULL_OK)
    fprintf(stderr, "prepare: %s\n", err.message);
  upload_planes(b.buf.b, b.s.b, b.n);
  upload_planes(b.buf.gx, b.s.gx, b.n);
  upload_planes(b.buf.gy, b.s.gy, b.n);

  lull_poisson_params p = lull_poisson_default_params();
  p.norm = LULL_POISSON_NORM_L2;
  (void)time_solve(&b, &p, 3); /* warm-up */
  const run_result l2 = time_solve(&b, &p, 5 * repeats);
  printf("L2 by DCT: %.3f ms (median of %d), %.0f GB/s (96 B/px model)\n", l2.ms, 5 * repeats,
         96.0 * (double)b.n / (l2.ms * 1e-3) / 1e9);
  split(&b, &p, "L2 by DCT");
  /* the plan's choice of signal pairs per DCT block against each fixed one */
  const lull_dct_shape auto_x = b.plan.x_shape, auto_y = b.plan.y_shape;
  printf("  L2 by DCT with P signal pairs per block (plan: x %d, y %d):", auto_x.pairs,
         auto_y.pairs);
  for (int pairs = 1; pairs <= 8; ++pairs) {
    b.plan.x_shape = lull_pk_dct_shape(w, 3 * h, prop->multiProcessorCount, (size_t)max_smem, pairs);
    b.plan.y_shape = lull_pk_dct_shape(h, 3 * w, prop->multiProcessorCount, (size_t)max_smem, pairs);
    if (b.plan.x_shape.global || b.plan.y_shape.global)
      break;
    printf(" P=%d %.3f ms", pairs, time_solve(&b, &p, 5 * repeats).ms);
  }
  printf("\n");
  b.plan.x_shape = auto_x;
  b.plan.y_shape = auto_y;

  p.solver = LULL_POISSON_SOLVER_CG;
  p.cg_iterations = 20;
  const run_result cg20 = time_solve(&b, &p, repeats);
  p.cg_iterations = 120;
  const run_result cg120 = time_solve(&b, &p, repeats);
  const double per = (cg120.ms - cg20.ms) / (cg120.iterations - cg20.iterations);
  printf("Jacobi PCG: %.4f ms per iteration ((%.3f - %.3f) ms / %d iterations), %.0f GB/s (140 "
         "B/px model); relative residual after 20 / 120 iterations %.1e / %.1e\n", per, cg120.ms,
         cg20.ms, cg120.iterations - cg20.iterations, 140.0 * (double)b.n / (per * 1e-3) / 1e9,
         cg20.residual, cg120.residual);
  split(&b, &p, "L2 by CG, 120 iterations");

  /* L1: Karras' L1D preset sets the target */
  p = lull_poisson_default_params();
  p.solver = LULL_POISSON_SOLVER_CG;
  p.preconditioner = LULL_POISSON_PRECOND_NONE;
  p.irls_iterations = 20;
  p.cg_iterations = 50;
  const run_result karras = time_solve(&b, &p, repeats);
  printf("L1, Karras L1D (20 IRLS x 50 CG, no preconditioner, %d iterations): %.2f ms, objective "
         "%.6g, last solve's relative residual %.1e\n", karras.iterations, karras.ms,
         karras.objective, karras.residual);
  /* lull's configurations: the exact first solve, warm starts; on the GPU a
   * DCT-preconditioned iteration costs three DCT passes more */
  static const int configs[][3] = {
      {7, 20, LULL_POISSON_PRECOND_JACOBI}, {7, 10, LULL_POISSON_PRECOND_JACOBI},
      {5, 20, LULL_POISSON_PRECOND_JACOBI}, {10, 10, LULL_POISSON_PRECOND_JACOBI},
      {10, 20, LULL_POISSON_PRECOND_JACOBI}, {7, 50, LULL_POISSON_PRECOND_JACOBI},
      {20, 10, LULL_POISSON_PRECOND_JACOBI}, {20, 9, LULL_POISSON_PRECOND_JACOBI},
      {20, 8, LULL_POISSON_PRECOND_JACOBI}, {20, 7, LULL_POISSON_PRECOND_JACOBI},
      {16, 10, LULL_POISSON_PRECOND_JACOBI}, {5, 5, LULL_POISSON_PRECOND_DCT},
      {7, 5, LULL_POISSON_PRECOND_DCT},     {7, 10, LULL_POISSON_PRECOND_DCT},
      {10, 5, LULL_POISSON_PRECOND_DCT}};
  static const char* const precond_names[] = {"none", "Jacobi", "DCT"};
  double best = INFINITY;
  int best_k = -1;
  printf("  irls x cg  precond       ms  objective  vs L1D  ms/iteration  residual\n");
  for (size_t k = 0; k < sizeof configs / sizeof configs[0]; ++k) {
    p = lull_poisson_default_params();
    p.irls_iterations = configs[k][0];
    p.cg_iterations = configs[k][1];
    p.preconditioner = configs[k][2];
    const run_result r = time_solve(&b, &p, repeats);
    printf("  %4d x %-3d %-7s %8.3f  %.6g  %+.1e  %.4f        %.1e\n", configs[k][0],
           configs[k][1], precond_names[configs[k][2]], r.ms, r.objective,
           (r.objective - karras.objective) / karras.objective, r.ms / LULL_MAX(r.iterations, 1),
           r.residual);
    if (r.objective <= karras.objective && r.ms < best) {
      best = r.ms;
      best_k = (int)k;
    }
  }
  if (best_k >= 0)
    printf("fastest at or below L1D's objective: %d x %d %s, %.3f ms (L1D %.3f ms in the same run: "
           "%.1fx)\n", configs[best_k][0], configs[best_k][1], precond_names[configs[best_k][2]],
           best, karras.ms, karras.ms / best);
  else
    printf("no configuration reached L1D's objective\n");
  p = lull_poisson_default_params();
  split(&b, &p, "L1 default (7 x 20, Jacobi)");

  images_make(&b);
  p.norm = LULL_POISSON_NORM_L2;
  const double filter_l2 = time_median(&b, &p, repeats, filter);
  p = lull_poisson_default_params();
  const double filter_l1 = time_median(&b, &p, repeats, filter);
  printf("whole filter on device images (load, repair, solve, store): L2 %.3f ms, L1 default %.2f "
         "ms\n", filter_l2, filter_l1);

  for (int k = 0; k < 4; ++k)
    cudaFree(b.device_images[k]);
  cudaEventDestroy(b.timer.start);
  cudaEventDestroy(b.timer.stop);
  cudaStreamDestroy(b.timer.stream);
  cudaFree(b.scratch);
  synthetic_free(&b.s);
}

/* A packed device image of `channels` floats per pixel (data NULL: empty). */
static lull_image device_image(const float* data, int channels, int w, int h, float** keep)
{
  const size_t bytes = (size_t)w * (size_t)h * (size_t)channels * sizeof(float);
  check_cuda(cudaMalloc((void**)keep, bytes), "cudaMalloc");
  if (data)
    check_cuda(cudaMemcpy(*keep, data, bytes, cudaMemcpyHostToDevice), "upload");
  return lull_test_float_view(*keep, channels, w, h);
}

/* GradientDomain with its defaults on device images: median of `repeats`
 * whole runs, and the per-kernel split of one more. */
static void bench_gradient_domain(int w, int h, int repeats, const struct cudaDeviceProp* prop)
{
  const double mp = (double)w * (double)h / 1e6;
  poisson_data d;
  poisson_data_make(&d, w, h, 3, 0, 29u);
  poisson_features f;
  poisson_features_make(&f, w, h);
  float* keep[14];
  int nk = 0;
  lull_gradient_domain_images im;
  memset(&im, 0, sizeof im);
  const float* color[9] = {d.color, d.gx, d.gy, d.color_a, d.color_b, d.gx_a, d.gx_b, d.gy_a, d.gy_b};
  lull_image* views[9] = {&im.color,        &im.gradient_x,   &im.gradient_y,
                          &im.color_a,      &im.color_b,      &im.gradient_x_a,
                          &im.gradient_x_b, &im.gradient_y_a, &im.gradient_y_b};
  for (int k = 0; k < 9; ++k)
    *views[k] = device_image(color[k], 3, w, h, &keep[nk++]);
  im.albedo = device_image(f.albedo, 3, w, h, &keep[nk++]);
  im.normal = device_image(f.normal, 3, w, h, &keep[nk++]);
  im.depth = device_image(f.depth, 1, w, h, &keep[nk++]);
  im.feature_variance = device_image(f.variance, 3, w, h, &keep[nk++]);
  im.output = device_image(NULL, 3, w, h, &keep[nk++]);
  int max_smem = 0;
  cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  lull_error err = {LULL_OK, ""};
  lull_gdk_plan plan;
  if (lull_gdk_plan_make(w, h, 3, prop->multiProcessorCount, (size_t)max_smem, &plan, &err) != LULL_OK) {
    fprintf(stderr, "plan: %s\n", err.message);
    exit(1);
  }
  unsigned char* scratch = NULL;
  check_cuda(cudaMalloc((void**)&scratch, plan.scratch_bytes), "cudaMalloc");
  timing timer;
  memset(&timer, 0, sizeof timer);
  check_cuda(cudaStreamCreate(&timer.stream), "stream");
  cudaEventCreate(&timer.start);
  cudaEventCreate(&timer.stop);
  timer.inner = lull_pk_stream_launchers(&timer.stream);
  const lull_pk_launchers launchers = {&timer, timed_launch, timer.inner.sync};
  const lull_gradient_domain_params p = lull_gradient_domain_default_params();
  double* t = calloc((size_t)repeats + 1, sizeof(double));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int k = 0; k <= repeats; ++k) { /* run 0 warms up */
    cudaEventRecord(start, timer.stream);
    if (lull_gdk_filter_enqueue(&plan, &p, &im, scratch, &launchers, NULL, &err) != LULL_OK)
      fprintf(stderr, "GradientDomain: %s\n", err.message);
    cudaEventRecord(stop, timer.stream);
    check_cuda(cudaEventSynchronize(stop), "GradientDomain");
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    t[k] = ms;
  }
  const double ms = median(t + 1, repeats);
  printf("\n== GradientDomain %dx%d (%.2f MP), %s ==\n", w, h, mp, prop->name);
  printf("whole filter (defaults: 3 candidates, 7 IRLS x 20 CG, selection): %.1f ms (median of "
         "%d) = %.3f s per MP; %.0f MB of device memory\n", ms, repeats, ms / 1e3 / mp,
         (double)plan.scratch_bytes / 1048576.0);
  timer.per_kernel = 1;
  (void)lull_gdk_filter_enqueue(&plan, &p, &im, scratch, &launchers, NULL, &err);
  check_cuda(cudaStreamSynchronize(timer.stream), "GradientDomain");
  print_split(&timer, "GradientDomain");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaEventDestroy(timer.start);
  cudaEventDestroy(timer.stop);
  cudaStreamDestroy(timer.stream);
  cudaFree(scratch);
  for (int k = 0; k < nk; ++k)
    cudaFree(keep[k]);
  free(t);
  poisson_features_free(&f);
  poisson_data_free(&d);
}

int main(int argc, char** argv)
{
  int repeats = 10, gd_repeats = 3, gd_only = 0;
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
      repeats = atoi(argv[++i]);
    else if (strcmp(argv[i], "--gd-repeats") == 0 && i + 1 < argc)
      gd_repeats = atoi(argv[++i]);
    else if (strcmp(argv[i], "--gd-only") == 0)
      gd_only = 1;
    else {
      fprintf(stderr, "usage: bench_poisson_cuda [--repeats N] [--gd-repeats N] [--gd-only]\n");
      return 2;
    }
  if (gd_repeats < 1)
    gd_repeats = 1;
  if (repeats < 1)
    repeats = 1;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fprintf(stderr, "bench_poisson_cuda: no CUDA device\n");
    return 1;
  }
  struct cudaDeviceProp prop;
  check_cuda(cudaGetDeviceProperties(&prop, 0), "device");
  if (!gd_only) {
    bench_size(1280, 720, repeats, &prop);
    bench_size(1024, 1024, repeats, &prop);
  }
  bench_gradient_domain(1280, 720, gd_repeats, &prop);
  bench_gradient_domain(1024, 1024, gd_repeats, &prop);
  return 0;
}
