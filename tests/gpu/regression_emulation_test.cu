/* The CUDA Regression filter's kernels run on the CPU (no GPU needed; CI
 * runs this) against the CPU filter (lull_regression_cpu).
 *
 * The whole CUDA schedule (cuda/regression_schedule.cu: the constants'
 * reductions, loads and repairs, fireflies, guides, the feature
 * prefilter, the regression passes' fits and gathers, the selection, the
 * second pass, the one-buffer pilot and variance, the store and a tiled
 * run's staging) runs through emulating launchers: each tile kernel's
 * body block by block, its steps for every thread of the block in turn
 * (the steps pass data between threads only through shared memory), each
 * pixel kernel pixel by pixel.  The one-buffer pilot is the CPU's à-trous
 * filter here (on the GPU, the CUDA one: cuda_regression_test.c checks
 * that).  On the host the arithmetic is the CPU filter's up to the order
 * of some sums, so the results agree to float rounding on every case of
 * regression_cases.c.  Then: progress reaches 1, and a cancel leaves the
 * output untouched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regression_kernels.cuh"

extern "C" {
#include "regression_cases.h"
#include "test_util.h"
}

/* mean |emulation - cpu| / mean |cpu|.  On x86-64 the two agree bit for
 * bit; a host compiler that contracts products into FMAs (built with
 * -mfma -ffp-contract=fast: mean 5e-6 at most, outputVariance 2e-4)
 * moves them a little; a wrong index moves them by 1e-2 or more. */
static const double MEAN_TOLERANCE = 5e-5;
static const double VARIANCE_TOLERANCE = 2e-3;
static const double OUTLIER_SHARE = 0.002; /* values beyond 1e-3 of the largest */

/* -- the emulating launchers ------------------------------------------------------ */

/* (host and device as the tile run is; it runs on the host only) */
template <class State>
struct cpu_exec
{
  State* s;
  template <class F>
  __host__ __device__ void each(F&& f)
  {
    for (int t = 0; t < LULL_RK_THREADS; ++t)
      f(t, s[t]);
  }
  __host__ __device__ void sync() {}
};

template <class Acc>
static void emu_tiles_of(const lull_rk_tile_args* a)
{
  const int th = LULL_RK_TILE_W / a->nb;
  const int bx = (a->width + LULL_RK_TILE_W - 1) / LULL_RK_TILE_W, by = (a->height + th - 1) / th;
  const int bz = a->kind == LULL_RK_SMOOTH ? a->sets : 1;
  typedef typename Acc::State State;
  State* states = (State*)calloc(LULL_RK_THREADS, sizeof(State));
  float* smem =
      (float*)calloc(lull_rk_tile_smem_floats(a->nb, a->patch, LULL_RK_GROUP), sizeof(float));
  cpu_exec<State> ex = {states};
  for (int z = 0; z < bz; ++z)
    for (int y = 0; y < by; ++y)
      for (int x = 0; x < bx; ++x)
        lull_rk_tile_run<Acc, LULL_RK_GROUP>(a, x, y, z, smem, ex);
  free(states);
  free(smem);
}

template <int N>
static void emu_pass(const lull_rk_tile_args* a)
{
  if (a->kind == LULL_RK_FIT)
    emu_tiles_of<lull_rk_fit<N>>(a);
  else
    emu_tiles_of<lull_rk_gather<N>>(a);
}

static cudaError_t emu_tiles(void*, const lull_rk_tile_args* a)
{
  if (a->kind == LULL_RK_SMOOTH) {
    emu_tiles_of<lull_rk_smooth>(a);
    return cudaSuccess;
  }
  switch (a->n) {
    case 3: emu_pass<3>(a); break;
    case 4: emu_pass<4>(a); break;
    case 6: emu_pass<6>(a); break;
    case 7: emu_pass<7>(a); break;
    case 9: emu_pass<9>(a); break;
    case 10: emu_pass<10>(a); break;
    case 12: emu_pass<12>(a); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

static cudaError_t emu_pixels(void*, const lull_rk_pixel_args* a)
{
  for (int y = 0; y < a->height; ++y)
    for (int x = 0; x < a->width; ++x) {
      if (a->kind != LULL_RK_FIREFLY_LEVEL)
        lull_rk_pixel_body(a, x, y);
      else if (a->radius == LULL_REG_FIREFLY_RADIUS_HALVES && !a->flag)
        lull_rk_firefly_level_at<LULL_REG_FIREFLY_RADIUS_HALVES, 0>(a, x, y);
      else if (a->radius == LULL_REG_FIREFLY_RADIUS_ONE && a->flag)
        lull_rk_firefly_level_at<LULL_REG_FIREFLY_RADIUS_ONE, 1>(a, x, y);
      else
        return cudaErrorInvalidValue;
    }
  return cudaSuccess;
}

static cudaError_t emu_reduce(void*, const lull_rk_reduce_args* a)
{
  if (a->finalize) {
    lull_rk_reduce_finalize(a);
    return cudaSuccess;
  }
  static lull_rk_partial part[LULL_RK_THREADS];
  for (int b = 0; b < LULL_RK_REDUCE_BLOCKS; ++b) {
    for (int t = 0; t < LULL_RK_THREADS; ++t)
      lull_rk_reduce_thread(a, b, t, &part[t]);
    lull_rk_reduce_block(part, &a->partials[b]);
  }
  return cudaSuccess;
}

static lull_status emu_pilot(void*, const lull_atrous_params* params,
                             const lull_atrous_images* images, unsigned char*, size_t,
                             lull_error* err)
{
  return lull_atrous_cpu(params, images, 1, NULL, err);
}

static lull_rk_launchers emu_launchers(void)
{
  lull_rk_launchers l;
  memset(&l, 0, sizeof l);
  l.pixels = emu_pixels;
  l.tiles = emu_tiles;
  l.reduce = emu_reduce;
  l.pilot = emu_pilot;
  return l;
}

/* The emulated CUDA run of validated images. */
static lull_status emu_run(const lull_regression_params* params,
                           const lull_regression_images* images, const lull_progress* progress,
                           lull_error* err)
{
  const lull_rk_launchers l = emu_launchers();
  const size_t bytes = lull_rk_filter_bytes(params, images, params->memory_cap);
  unsigned char* memory = (unsigned char*)calloc(1, bytes);
  if (!memory)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  const lull_status status =
      lull_rk_filter(params, images, params->memory_cap, memory, &l, progress, err);
  free(memory);
  return status;
}

/* -- the cases ------------------------------------------------------------------------ */

static void run_case(const reg_case* c)
{
  reg_data d;
  reg_data_make(&d, c, 1234u + (unsigned)c->width);
  const size_t n = (size_t)c->width * (size_t)c->height;
  const size_t count = n * (size_t)c->channels;
  float* cpu = (float*)calloc(count, sizeof(float));
  float* emu = (float*)calloc(count, sizeof(float));
  float* cpu_var = (float*)calloc(3 * n, sizeof(float));
  float* emu_var = (float*)calloc(3 * n, sizeof(float));
  const lull_regression_params params = reg_case_params(c);
  lull_regression_images im = reg_case_images(&d, c, cpu, cpu_var);
  lull_error err;
  CHECK_EQ_INT(lull_regression_cpu(&params, &im, 2, NULL, &err), LULL_OK);
  im = reg_case_images(&d, c, emu, emu_var);
  CHECK_EQ_INT(emu_run(&params, &im, NULL, &err), LULL_OK);
  CHECK(lull_test_all_finite(emu, count));
  const reg_agreement a = reg_agreement_of(emu, cpu, count);
  printf("%-36s %3dx%-3d emulation vs CPU: max rel %.2e, mean rel %.2e, beyond 1e-3: %.3f%%",
         c->name, c->width, c->height, a.max_rel, a.mean_rel, 100.0 * a.outliers);
  CHECK(a.mean_rel <= MEAN_TOLERANCE);
  CHECK(a.outliers <= OUTLIER_SHARE);
  if (c->halves && c->out_variance) {
    const reg_agreement v = reg_agreement_of(emu_var, cpu_var, 3 * n);
    printf("; variance mean rel %.2e", v.mean_rel);
    CHECK(lull_test_all_finite(emu_var, 3 * n));
    CHECK(v.mean_rel <= VARIANCE_TOLERANCE);
  }
  printf("\n");
  free(cpu);
  free(emu);
  free(cpu_var);
  free(emu_var);
  reg_data_free(&d);
}

typedef struct progress_log
{
  double last;
  int calls, cancel_at;
} progress_log;

static int on_progress(void* user, double done)
{
  progress_log* p = (progress_log*)user;
  CHECK(done >= p->last);
  p->last = done;
  return ++p->calls != p->cancel_at;
}

/* Progress rises to 1; a cancel at the first report leaves the output as
 * it was. */
static void run_progress(void)
{
  const reg_case c = {"progress", 24, 20, 1, REG_ALBEDO, 3, 0, 0, 0, 0, 3, 4, -1};
  reg_data d;
  reg_data_make(&d, &c, 99u);
  const size_t count = (size_t)c.width * (size_t)c.height * 3;
  float* out = (float*)calloc(count, sizeof(float));
  const lull_regression_params params = reg_case_params(&c);
  lull_regression_images im = reg_case_images(&d, &c, out, NULL);
  progress_log log = {0.0, 0, -1};
  lull_progress progress = {on_progress, &log};
  lull_error err;
  CHECK_EQ_INT(emu_run(&params, &im, &progress, &err), LULL_OK);
  CHECK(log.last == 1.0);
  CHECK(log.calls > 3);
  for (size_t i = 0; i < count; ++i)
    out[i] = -7.0f;
  progress_log cancel = {0.0, 0, 1};
  progress.user = &cancel;
  CHECK_EQ_INT(emu_run(&params, &im, &progress, &err), LULL_ERROR_CANCELLED);
  int untouched = 1;
  for (size_t i = 0; i < count; ++i)
    untouched &= out[i] == -7.0f;
  CHECK(untouched);
  printf("progress: %d reports up to %.2f; a cancel leaves the output %s\n", log.calls, log.last,
         untouched ? "untouched" : "CHANGED");
  free(out);
  reg_data_free(&d);
}

int main(int argc, char** argv)
{
  /* an optional case name (substring) picks the cases */
  for (int k = 0; k < reg_case_count; ++k)
    if (argc < 2 || strstr(reg_cases[k].name, argv[1]))
      run_case(&reg_cases[k]);
  if (argc < 2)
    run_progress();
  return lull_test_result("regression_emulation");
}
