/* The CUDA Poisson filter's kernels run on the CPU (no GPU needed; CI runs
 * this).
 *
 * The kernels are host-and-device bodies (cuda/poisson_kernels.cuh,
 * cuda/dct_cuda.cuh); this test runs exactly those bodies, block by block,
 * phase by phase, thread by thread, in the order the library's scheduling
 * launches them (lull_pk_filter_enqueue with emulating launchers), and
 * compares the result with the CPU filter (lull_poisson_cpu) on the cases
 * of poisson_cases.h: L2 by DCT (mixed radices, a prime length, 1-pixel
 * sides, alpha = 0), by CG with each preconditioner and a tolerance, L1 by
 * IRLS, halves and outputVariance, RGBA, non-finite inputs.  Each case also
 * runs with the FFT buffers in global memory (shared memory too small) and
 * with one signal pair per block.  Then: progress reaches 1 and a cancel
 * leaves the output untouched; the gradient scenes when exported
 * (tests/gpu/export_gradient_testdata.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pk_emulator.cuh"

extern "C" {
#include "gpu_test_util.h"
#include "poisson_cases.h"
#include "test_util.h"
}

/* -- running both filters ---------------------------------------------------- */

static lull_poisson_images images_of(const poisson_data* d, int inputs, float* out,
                                     float* variance, int variance_channels)
{
  const int w = d->width, h = d->height, ch = d->channels;
  lull_poisson_images im;
  memset(&im, 0, sizeof im);
  if (inputs != INPUT_HALVES) {
    im.color = lull_test_float_view(d->color, ch, w, h);
    im.gradient_x = lull_test_float_view(d->gx, ch, w, h);
    im.gradient_y = lull_test_float_view(d->gy, ch, w, h);
  }
  if (inputs != INPUT_FULL) {
    im.color_a = lull_test_float_view(d->color_a, ch, w, h);
    im.color_b = lull_test_float_view(d->color_b, ch, w, h);
    im.gradient_x_a = lull_test_float_view(d->gx_a, ch, w, h);
    im.gradient_x_b = lull_test_float_view(d->gx_b, ch, w, h);
    im.gradient_y_a = lull_test_float_view(d->gy_a, ch, w, h);
    im.gradient_y_b = lull_test_float_view(d->gy_b, ch, w, h);
  }
  im.output = lull_test_float_view(out, ch, w, h);
  if (variance_channels)
    im.output_variance = lull_test_float_view(variance, variance_channels, w, h);
  return im;
}

/* The emulated CUDA filter with shared memory `max_smem` per block. */
static lull_status run_emulated(const lull_poisson_params* p, const lull_poisson_images* im,
                                size_t max_smem, const lull_progress* progress, lull_error* err)
{
  const lull_image* primal = im->color.data ? &im->color : &im->color_a;
  lull_pk_plan plan;
  lull_status status = lull_pk_plan_make(
      im->output.width, im->output.height, LULL_MIN(lull_format_channels(primal->format), 3),
      im->output_variance.data != NULL, p->preconditioner == LULL_POISSON_PRECOND_DCT, 4,
      max_smem, &plan, err);
  if (status != LULL_OK)
    return status;
  unsigned char* scratch = pk_emulator_scratch(plan.scratch_bytes);
  if (!scratch)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  pk_emulator emu = {0};
  const lull_pk_launchers launchers = {&emu, pk_emulator_launch, pk_emulator_sync};
  status = lull_pk_filter_enqueue(&plan, p, im, scratch, &launchers, progress, err);
  free(scratch);
  return status;
}

/* max_smem settings: generous, one pair per block, global memory */
static const size_t SMEM_SETTINGS[3] = {227 * 1024, 0, 0};

static void run_case(const poisson_case* c, int smem_setting)
{
  poisson_data d;
  poisson_data_make(&d, c->width, c->height, c->channels, c->poison, 77u);
  const size_t n = (size_t)c->width * (size_t)c->height;
  const int vc = c->variance_channels;
  float* ref = (float*)malloc(n * (size_t)c->channels * sizeof(float));
  float* emu = (float*)malloc(n * (size_t)c->channels * sizeof(float));
  float* ref_var = (float*)calloc(n * 3, sizeof(float));
  float* emu_var = (float*)calloc(n * 3, sizeof(float));
  for (size_t i = 0; i < n * (size_t)c->channels; ++i)
    ref[i] = emu[i] = -12345.0f; /* every value must be written */
  const lull_poisson_params p = poisson_case_params(c);
  lull_poisson_images im = images_of(&d, c->inputs, ref, ref_var, vc);
  lull_error err = {LULL_OK, ""};
  CHECK_EQ_INT(lull_poisson_cpu(&p, &im, 2, NULL, &err), LULL_OK);
  im = images_of(&d, c->inputs, emu, emu_var, vc);
  size_t smem = SMEM_SETTINGS[smem_setting];
  if (smem_setting == 1) /* room for one signal pair of the longer axis and its table */
    smem = 3 * sizeof(float2) * (size_t)LULL_MAX(c->width, c->height);
  const lull_status status = run_emulated(&p, &im, smem, NULL, &err);
  CHECK_EQ_INT(status, LULL_OK);
  if (status != LULL_OK)
    fprintf(stderr, "%s: %s\n", c->name, err.message);
  const size_t count = n * (size_t)c->channels;
  const double diff = poisson_rel_max_diff(emu, ref, count);
  const double vdiff = vc ? poisson_rel_max_diff(emu_var, ref_var, n * (size_t)vc) : 0.0;
  printf("%-20s %4dx%-4d smem %d: max |emu - cpu| / max |cpu| %.2e (variance %.2e), tolerance %.0e\n",
         c->name, c->width, c->height, smem_setting, diff, vdiff, c->tolerance);
  CHECK(diff <= c->tolerance);
  CHECK(vdiff <= 10 * c->tolerance); /* a difference of two results: 10x the relative error */
  CHECK(lull_test_all_finite(emu, count));
  if (c->channels == 4) /* alpha is copied through */
    for (size_t i = 0; i < n; ++i)
      if (emu[4 * i + 3] != d.color[4 * i + 3]) {
        CHECK(emu[4 * i + 3] == d.color[4 * i + 3]);
        break;
      }
  free(ref);
  free(emu);
  free(ref_var);
  free(emu_var);
  poisson_data_free(&d);
}

/* -- progress and cancellation ------------------------------------------------ */

static void test_progress(void)
{
  poisson_data d;
  poisson_data_make(&d, 24, 20, 3, 0, 5u);
  const size_t count = 24 * 20 * 3;
  float* out = (float*)malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i)
    out[i] = 7.0f;
  lull_poisson_params p = lull_poisson_default_params();
  p.cg_iterations = 17;
  const lull_poisson_images im = images_of(&d, INPUT_FULL, out, NULL, 0);
  poisson_progress_log log = {0, -1, 0.0, 1};
  const lull_progress progress = {poisson_on_progress, &log};
  lull_error err = {LULL_OK, ""};
  CHECK_EQ_INT(run_emulated(&p, &im, 96 * 1024, &progress, &err), LULL_OK);
  printf("progress: %d reports, last %.3f, monotone %d\n", log.calls, log.last, log.monotone);
  CHECK(log.calls > 7);
  CHECK(log.monotone);
  CHECK(log.last == 1.0);
  /* cancelled in the middle: CANCELLED, the output untouched */
  for (size_t i = 0; i < count; ++i)
    out[i] = 7.0f;
  poisson_progress_log stop = {0, 5, 0.0, 1};
  const lull_progress cancel = {poisson_on_progress, &stop};
  CHECK_EQ_INT(run_emulated(&p, &im, 96 * 1024, &cancel, &err), LULL_ERROR_CANCELLED);
  for (size_t i = 0; i < count; ++i)
    if (out[i] != 7.0f) {
      CHECK(out[i] == 7.0f);
      break;
    }
  free(out);
  poisson_data_free(&d);
}

/* -- the plan --------------------------------------------------------------------- */

static void test_plan(void)
{
  lull_error err = {LULL_OK, ""};
  lull_pk_plan plan;
  /* 1280 = 4^4 5: 5 passes; 720 = 4^2 3^2 5: 5 passes; 1279 is prime: 1 */
  CHECK_EQ_INT(lull_pk_plan_make(1280, 720, 3, 0, 0, 132, 227 * 1024, &plan, &err), LULL_OK);
  CHECK_EQ_INT(plan.ax.passes, 5);
  CHECK_EQ_INT(plan.ay.passes, 5);
  CHECK(!plan.x_shape.global && !plan.y_shape.global);
  CHECK(plan.x_shape.smem <= 96 * 1024 && plan.y_shape.smem <= 96 * 1024);
  CHECK(plan.x_shape.groups * 2 * plan.x_shape.pairs >= 3 * 720);
  CHECK(plan.y_shape.groups * 2 * plan.y_shape.pairs >= 3 * 1280);
  int radix = 0, ns = 0;
  CHECK_EQ_INT(lull_fft_factor(1279, 0, &radix, &ns), 1);
  CHECK_EQ_INT(radix, 1279);
  CHECK_EQ_INT(lull_fft_factor(720, 4, &radix, &ns), 5);
  CHECK_EQ_INT(radix, 5);
  CHECK_EQ_INT(ns, 144);
  CHECK_EQ_INT(lull_fft_factor(37 * 41 * 8, 2, &radix, &ns), 3);
  CHECK_EQ_INT(radix, 37 * 41); /* what is left after the small primes: one pass */
  /* a row too long for shared memory: global FFT buffers */
  CHECK_EQ_INT(lull_pk_plan_make(20000, 2, 1, 0, 0, 132, 227 * 1024, &plan, &err), LULL_OK);
  CHECK(plan.x_shape.global);
  CHECK(!plan.y_shape.global);
  CHECK_EQ_INT(lull_pk_plan_make((1 << 26) + 1, 1, 1, 0, 0, 132, 227 * 1024, &plan, &err),
               LULL_ERROR_INVALID_ARGUMENT);
}

/* -- the gradient scenes, when exported ---------------------------------------- */

static void run_scenes(void)
{
  static const char* const scenes[] = {"cornell", "window", "textured"};
  for (size_t s = 0; s < sizeof scenes / sizeof scenes[0]; ++s) {
    poisson_data d;
    if (!poisson_scene_load(&d, scenes[s], NULL, NULL)) {
      printf("%s: not exported (tests/gpu/export_gradient_testdata.py), skipped\n", scenes[s]);
      continue;
    }
    const size_t count = (size_t)d.width * (size_t)d.height * 3;
    for (int norm = 1; norm <= 2; ++norm) {
      float* ref = (float*)malloc(count * sizeof(float));
      float* emu = (float*)malloc(count * sizeof(float));
      lull_poisson_params p = lull_poisson_default_params();
      p.norm = norm;
      lull_error err = {LULL_OK, ""};
      lull_poisson_images im = images_of(&d, INPUT_FULL, ref, NULL, 0);
      CHECK_EQ_INT(lull_poisson_cpu(&p, &im, 2, NULL, &err), LULL_OK);
      im = images_of(&d, INPUT_FULL, emu, NULL, 0);
      CHECK_EQ_INT(run_emulated(&p, &im, 227 * 1024, NULL, &err), LULL_OK);
      const double diff = poisson_rel_max_diff(emu, ref, count);
      const double tol = norm == 2 ? POISSON_TOL_DCT : POISSON_TOL_L1;
      printf("%-20s %4dx%-4d L%d: max |emu - cpu| / max |cpu| %.2e, tolerance %.0e\n", scenes[s],
             d.width, d.height, norm, diff, tol);
      CHECK(diff <= tol);
      free(ref);
      free(emu);
    }
    poisson_data_free(&d);
  }
}

int main(void)
{
  test_plan();
  for (size_t k = 0; k < sizeof POISSON_CASES / sizeof POISSON_CASES[0]; ++k)
    for (int setting = 0; setting < 3; ++setting)
      run_case(&POISSON_CASES[k], setting);
  test_progress();
  run_scenes();
  return lull_test_result("poisson_emulation");
}
