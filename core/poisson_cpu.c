/* The Poisson filter on the CPU: reads the views, repairs non-finite input,
 * runs the solver (poisson_cg.c, poisson_dct.c) on the full image and, for
 * the variance output, on each half-buffer, and writes the results. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planes.h"
#include "poisson.h"
#include "poisson_input.h"
#include "poisson_solver.h"
#include "threads.h"

lull_poisson_params lull_poisson_default_params(void)
{
  lull_poisson_params p;
  p.alpha = 0.2f; /* G-PT's reconstructAlpha (gradient-domain.md §1.2) */
  p.norm = LULL_POISSON_NORM_L1;
  p.solver = LULL_POISSON_SOLVER_DCT;
  p.irls_iterations = 7;
  p.irls_reg_init = 0.05f;
  p.irls_reg_factor = 0.5f;
  p.irls_weight_power = 1;
  /* Karras' presets use 50; with the exact first solve and warm starts the
   * L1 objective is the same to six digits with 20 (bench_poisson, 720p:
   * 66134.9 for 7 x 50 and 7 x 20 Jacobi) in 40% of the time. */
  p.cg_iterations = 20;
  p.cg_tolerance = 0.0f;
  p.preconditioner = LULL_POISSON_PRECOND_JACOBI;
  return p;
}

static lull_status validate_params(const lull_poisson_params* p, lull_error* err)
{
  if (!(p->alpha >= 0.0f) || !isfinite(p->alpha))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "alpha must be finite and >= 0");
  if (p->norm != LULL_POISSON_NORM_L1 && p->norm != LULL_POISSON_NORM_L2)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "norm must be 1 (L1) or 2 (L2)");
  if (p->solver != LULL_POISSON_SOLVER_DCT && p->solver != LULL_POISSON_SOLVER_CG)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "solver must be 0 (DCT) or 1 (CG)");
  if (p->preconditioner < LULL_POISSON_PRECOND_NONE || p->preconditioner > LULL_POISSON_PRECOND_DCT)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT,
                     "preconditioner must be 0 (none), 1 (Jacobi) or 2 (DCT)");
  if (p->irls_iterations < 1 || p->cg_iterations < 0)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "iteration counts out of range");
  if (!(p->irls_reg_init > 0.0f) || !(p->irls_reg_factor > 0.0f) || !isfinite(p->irls_reg_init) ||
      !isfinite(p->irls_reg_factor))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "IRLS regularisation must be positive");
  if (!(p->cg_tolerance >= 0.0f))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "cgTolerance must be >= 0");
  if (p->irls_weight_power != 1 && p->irls_weight_power != 2)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "IRLS weight power must be 1 or 2");
  return LULL_OK;
}

lull_status lull_poisson_validate(const lull_poisson_params* params,
                                  const lull_poisson_images* images, lull_error* err)
{
  const lull_poisson_input in = lull_poisson_input_of(images);
  lull_status status = lull_poisson_input_validate(&in, &images->output, err);
  if (status != LULL_OK)
    return status;
  const lull_image* v = &images->output_variance;
  if (v->data) {
    if (!images->color_a.data)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                       "outputVariance needs the half-buffers (colorA, colorB, gradientXA, "
                       "gradientXB, gradientYA, gradientYB)");
    if (v->width != images->output.width || v->height != images->output.height)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "image size mismatch");
    const int nc = lull_poisson_input_channels(&in);
    const int vc = lull_format_channels(v->format);
    if (vc != 1 && vc != nc)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                       "outputVariance must have 1 channel or as many as the solved colour");
  }
  return validate_params(params, err);
}

/* Planes of the run: the system's inputs, the weights, three solutions. */
enum
{
  P_B0, P_B1, P_B2, P_GX0, P_GX1, P_GX2, P_GY0, P_GY1, P_GY2, P_ALPHA,
  P_WA, P_WX, P_WY, P_ZERO,
  P_X0, P_X1, P_X2, P_XA0, P_XA1, P_XA2, P_XB0, P_XB1, P_XB2,
  P_COUNT
};

static void system_init(lull_poisson_system* sys, lull_planes* pl, int w, int h, int nc,
                        float alpha, int threads)
{
  memset(sys, 0, sizeof *sys);
  sys->width = w;
  sys->height = h;
  sys->channels = nc;
  sys->threads = threads;
  sys->alpha2 = alpha * alpha;
  sys->wa = lull_plane(pl, P_WA);
  sys->wx = lull_plane(pl, P_WX);
  sys->wy = lull_plane(pl, P_WY);
  sys->zero = lull_plane_c(pl, P_ZERO);
  for (int c = 0; c < 3; ++c) {
    sys->primal[c] = lull_plane_c(pl, P_B0 + c);
    sys->gx[c] = lull_plane_c(pl, P_GX0 + c);
    sys->gy[c] = lull_plane_c(pl, P_GY0 + c);
  }
}

/* Loads one set of inputs (which = full, A or B), solves from the primal,
 * and leaves the solution in planes first..first+2 (and the full set's
 * 4th channel in P_ALPHA). */
static lull_status solve_set(const lull_poisson_params* params, const lull_poisson_input* in,
                             int which, lull_poisson_system* sys, lull_planes* pl, int first,
                             const lull_poisson_dct* dct, const lull_progress_span* span,
                             lull_error* err)
{
  const size_t n = (size_t)sys->width * (size_t)sys->height;
  float* b[4] = {lull_plane(pl, P_B0), lull_plane(pl, P_B1), lull_plane(pl, P_B2),
                 which == LULL_POISSON_INPUT_FULL ? lull_plane(pl, P_ALPHA) : NULL};
  float* gx[3] = {lull_plane(pl, P_GX0), lull_plane(pl, P_GX1), lull_plane(pl, P_GX2)};
  float* gy[3] = {lull_plane(pl, P_GY0), lull_plane(pl, P_GY1), lull_plane(pl, P_GY2)};
  float* x[3] = {lull_plane(pl, first), lull_plane(pl, first + 1), lull_plane(pl, first + 2)};
  lull_poisson_input_load(in, which, sys->channels, b, gx, gy, sys->threads);
  for (int c = 0; c < sys->channels && c < 3; ++c)
    memcpy(x[c], b[c], n * sizeof(float));
  lull_status status = lull_poisson_solve(params, sys, x, dct, span, NULL, err);
  if (status == LULL_OK)
    lull_poisson_finite_or(sys, x, (const float* const*)b);
  return status;
}

lull_status lull_poisson_cpu(const lull_poisson_params* params, const lull_poisson_images* images,
                             int num_threads, const lull_progress* progress, lull_error* err)
{
  lull_status status = lull_poisson_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const lull_poisson_input in = lull_poisson_input_of(images);
  const int w = images->output.width, h = images->output.height;
  const int nc = lull_poisson_input_channels(&in);
  const int threads = lull_thread_count(num_threads);
  const int variance = images->output_variance.data != NULL;

  lull_planes pl;
  if (!lull_planes_init(&pl, (size_t)w, (size_t)h, P_COUNT))
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  lull_plane_fill(&pl, P_ZERO, 0.0f);
  lull_poisson_dct dct;
  status = lull_poisson_dct_init(&dct, w, h, threads, err);
  lull_poisson_system sys;
  system_init(&sys, &pl, w, h, nc, params->alpha, threads);

  const lull_progress_span whole = {progress, 0.0, 1.0};
  const double parts = variance ? 3.0 : 1.0;
  lull_progress_span span = lull_progress_subspan(&whole, 0.0, 1.0 / parts);
  if (status == LULL_OK)
    status = lull_progress_span_report(&whole, 0.0, err);
  if (status == LULL_OK)
    status = solve_set(params, &in, LULL_POISSON_INPUT_FULL, &sys, &pl, P_X0, &dct, &span, err);
  if (status == LULL_OK && variance) {
    span = lull_progress_subspan(&whole, 1.0 / 3.0, 2.0 / 3.0);
    status = solve_set(params, &in, LULL_POISSON_INPUT_A, &sys, &pl, P_XA0, &dct, &span, err);
    span = lull_progress_subspan(&whole, 2.0 / 3.0, 1.0);
    if (status == LULL_OK)
      status = solve_set(params, &in, LULL_POISSON_INPUT_B, &sys, &pl, P_XB0, &dct, &span, err);
  }
  if (status == LULL_OK) {
    const float* x[3] = {lull_plane_c(&pl, P_X0), lull_plane_c(&pl, P_X1), lull_plane_c(&pl, P_X2)};
    lull_poisson_store(&images->output, nc, x, lull_plane_c(&pl, P_ALPHA), threads);
    if (variance) {
      const float* xa[3] = {lull_plane_c(&pl, P_XA0), lull_plane_c(&pl, P_XA1),
                            lull_plane_c(&pl, P_XA2)};
      const float* xb[3] = {lull_plane_c(&pl, P_XB0), lull_plane_c(&pl, P_XB1),
                            lull_plane_c(&pl, P_XB2)};
      lull_poisson_store_variance(&images->output_variance, nc, xa, xb, threads);
    }
  }
  lull_poisson_dct_free(&dct);
  lull_planes_free(&pl);
  return status;
}
