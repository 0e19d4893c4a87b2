/* The GradientDomain filter on CUDA: the CPU run of
 * core/gradient_domain_cpu.c (guide, features, candidates, selection) as a
 * sequence of kernels on the launchers, over the same working planes
 * (core/gradient_domain_planes.h) in one device block.  The Poisson solves
 * are the Poisson filter's (poisson_schedule.cu) with the patch stencil
 * added to their operator.  Nothing here waits for the GPU except the
 * progress reports. */
#include <string.h>

#include "backend_cuda.h"
#include "gradient_domain_cuda.h"

enum { ALIGN = 256 };

static const lull_gd_candidate CANDIDATES[LULL_GD_CANDIDATES] = LULL_GD_CANDIDATE_TABLE;

lull_status lull_gdk_plan_make(int width, int height, int channels, int num_sms, size_t max_smem,
                               lull_gdk_plan* plan, lull_error* err)
{
  memset(plan, 0, sizeof *plan);
  lull_status status =
      lull_pk_plan_make(width, height, channels, 0, 0, num_sms, max_smem, &plan->solver, err);
  if (status != LULL_OK)
    return status;
  const size_t n = (size_t)width * (size_t)height;
  plan->plane_stride = (n + 63) / 64 * 64;
  plan->solver_bytes = (plan->solver.scratch_bytes + ALIGN - 1) / ALIGN * ALIGN;
  const size_t planes = LULL_GD_W_PLANES;
  if (plan->plane_stride > ((size_t)-1 - plan->solver_bytes) / sizeof(float) / planes)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "image too large");
  plan->scratch_bytes = plan->solver_bytes + planes * plan->plane_stride * sizeof(float);
  return LULL_OK;
}

/* One run: the plan, the launchers, the solver's buffers and the planes. */
typedef struct gd_run
{
  const lull_gdk_plan* plan;
  const lull_pk_launchers* launchers;
  lull_pk_buffers buf;
  float* block;
  int nc;
} gd_run;

static float* plane(const gd_run* r, int index)
{
  return r->block + (size_t)index * r->plan->plane_stride;
}

/* Arguments with the run's buffers and alpha; the plane kernels' operands
 * cleared. */
static lull_pk_args args_of(const gd_run* r, float alpha)
{
  lull_pk_args a = lull_pk_args_make(&r->plan->solver, &r->buf, alpha);
  a.gd.plane_stride = r->plan->plane_stride;
  return a;
}

static lull_status run_kind(const gd_run* r, int kind, const lull_pk_args* a, lull_error* err)
{
  return lull_pk_launch_kind(&r->plan->solver, r->launchers, kind, a, err);
}

/* dst = src + f src2 (src2 < 0: a copy) over `channels` planes from each
 * first plane. */
static lull_status axpy(const gd_run* r, int dst, int src, float f, int src2, int channels,
                        lull_error* err)
{
  lull_pk_args a = args_of(r, 0.0f);
  a.channels = channels;
  for (int c = 0; c < channels; ++c) {
    a.gd.dst[c] = plane(r, dst + c);
    a.gd.src[c] = plane(r, src + c);
    a.gd.src2[c] = src2 >= 0 ? plane(r, src2 + c) : NULL;
  }
  a.gd.f = f;
  return run_kind(r, LULL_PK_GD_AXPY, &a, err);
}

/* Arguments of a Poisson system over planes b, gx, gy solved into x. */
static lull_pk_args system_of(const gd_run* r, int b, int gx, int gy, int x, float alpha)
{
  lull_pk_args a = args_of(r, alpha);
  for (int c = 0; c < 3; ++c) {
    a.primal[c] = plane(r, b + c);
    a.gx[c] = plane(r, gx + c);
    a.gy[c] = plane(r, gy + c);
    a.x[c] = plane(r, x + c);
  }
  return a;
}

/* Plain Poisson reconstruction of one data set into planes `into`
 * (gradient_domain_cpu.c, reconstruct). */
static lull_status reconstruct(const gd_run* r, int b, int gx, int gy, int norm, float alpha,
                               int into, const lull_progress_span* span, lull_error* err)
{
  lull_poisson_params p = lull_poisson_default_params();
  p.alpha = alpha;
  p.norm = norm;
  const lull_pk_args a = system_of(r, b, gx, gy, into, alpha);
  lull_status status = axpy(r, into, b, 0.0f, -1, r->nc, err);
  if (status == LULL_OK)
    status = lull_pk_solve(&r->plan->solver, &p, &a, r->launchers, span, err);
  return status;
}

/* The L2 second pass (§5.3.1): primal b with the gradients of planes x,
 * alpha 0.05, into `into`. */
static lull_status second_pass(const gd_run* r, int b, int x, int into, lull_error* err)
{
  lull_pk_args a = args_of(r, 0.0f);
  for (int c = 0; c < 3; ++c) {
    a.gd.src[c] = plane(r, x + c);
    a.gd.dst[c] = plane(r, LULL_GD_W_DGX + c);
    a.gd.dst2[c] = plane(r, LULL_GD_W_DGY + c);
  }
  lull_status status = run_kind(r, LULL_PK_GD_GRADIENTS, &a, err);
  if (status == LULL_OK)
    status = reconstruct(r, b, LULL_GD_W_DGX, LULL_GD_W_DGY, LULL_POISSON_NORM_L2,
                         LULL_GD_SECOND_PASS_ALPHA, into, NULL, err);
  return status;
}

/* Box mean of `channels` planes from src into dst. */
static lull_status box_mean(const gd_run* r, int src, int dst, int channels, int radius,
                            lull_error* err)
{
  lull_pk_args a = args_of(r, 0.0f);
  a.channels = channels;
  for (int c = 0; c < channels; ++c) {
    a.gd.src[c] = plane(r, src + c);
    a.gd.dst[c] = plane(r, dst + c);
  }
  a.gd.count = radius;
  return run_kind(r, LULL_PK_GD_BOX_MEAN, &a, err);
}

/* The guide's variance: the two-buffer variance of the L1 reconstructions,
 * blurred, and at least its raw value (gradient_domain_cpu.c). */
static lull_status blur_variance(const gd_run* r, int var, lull_error* err)
{
  lull_pk_args a = args_of(r, 0.0f);
  lull_status status =
      box_mean(r, var, LULL_GD_W_SCRATCH + 1, r->nc, LULL_GD_VARIANCE_BLUR, err);
  for (int c = 0; c < 3; ++c) {
    a.gd.src[c] = plane(r, LULL_GD_W_SCRATCH + 1 + c);
    a.gd.dst[c] = plane(r, var + c);
  }
  if (status == LULL_OK)
    status = run_kind(r, LULL_PK_GD_MAX, &a, err);
  return status;
}

static lull_status guide_variance(const gd_run* r, lull_error* err)
{
  lull_pk_args a = args_of(r, 0.0f);
  for (int c = 0; c < 3; ++c) {
    a.gd.src[c] = plane(r, LULL_GD_W_UD + c);
    a.gd.dst[c] = plane(r, LULL_GD_W_VAR + c);
  }
  lull_status status = run_kind(r, LULL_PK_GD_HALF_VARIANCE, &a, err);
  if (status == LULL_OK)
    status = blur_variance(r, LULL_GD_W_VAR, err);
  return status;
}

/* The features normalised to [0, 1], their variances and scales
 * (gradient_domain_cpu.c, load_features). */
static lull_status load_features(const gd_run* r, const lull_gradient_domain_images* im,
                                 lull_gd_features* f, lull_error* err)
{
  lull_gd_feature_source sources[3];
  const int count = lull_gradient_domain_feature_sources(im, sources);
  memset(f, 0, sizeof *f);
  lull_status status = LULL_OK;
  for (int s = 0; s < count && status == LULL_OK; ++s) {
    for (int c = 0; c < sources[s].channels && status == LULL_OK; ++c) {
      const int j = f->count++;
      lull_pk_args a = args_of(r, 0.0f);
      a.gd.feature_image = *sources[s].image;
      a.gd.feature_variance = im->feature_variance;
      a.gd.feature_channel = c;
      a.gd.variance_channel = sources[s].variance_channel;
      a.gd.dst[0] = plane(r, LULL_GD_W_F + j);
      a.gd.dst2[0] = plane(r, LULL_GD_W_FVAR + j);
      a.gd.src[0] = plane(r, LULL_GD_W_F + j);
      a.gd.src2[0] = plane(r, LULL_GD_W_FVAR + j);
      status = run_kind(r, LULL_PK_GD_FEATURE_LOAD, &a, err);
      if (status == LULL_OK)
        status = run_kind(r, LULL_PK_GD_FEATURE_RANGE, &a, err);
      if (status == LULL_OK)
        status = run_kind(r, LULL_PK_GD_FEATURE_NORMALIZE, &a, err);
      a.gd.dst[0] = plane(r, LULL_GD_W_FSCALE + j);
      if (status == LULL_OK)
        status = run_kind(r, LULL_PK_GD_FEATURE_SCALE, &a, err);
      f->value[j] = plane(r, LULL_GD_W_F + j);
      f->variance[j] = plane(r, LULL_GD_W_FVAR + j);
      f->scale[j] = plane(r, LULL_GD_W_FSCALE + j);
    }
  }
  return status;
}

/* One candidate: weights, stencil, the extended L1 solve, its half
 * difference, the second pass for the full data and each half
 * (gradient_domain_cpu.c, run_candidate). */
static lull_status run_candidate(const gd_run* r, const lull_gradient_domain_params* params,
                                 const lull_gd_guide* guide, const lull_gd_features* features,
                                 const lull_gd_candidate* cand, int with_halves,
                                 const lull_progress_span* span, lull_error* err)
{
  lull_pk_args w = args_of(r, 0.0f);
  w.gd.guide = *guide;
  w.gd.features = *features;
  w.gd.candidate = *cand;
  for (int k = 0; k < LULL_GD_PATCH; ++k)
    w.gd.weights[k] = plane(r, LULL_GD_W_PATCH + k);
  w.gd.stencil = plane(r, LULL_GD_W_STENCIL);
  lull_status status = run_kind(r, LULL_PK_GD_WEIGHTS, &w, err);
  lull_pk_args z = args_of(r, 0.0f);
  z.gd.dst[0] = w.gd.stencil;
  z.gd.count = LULL_STENCIL_TAPS;
  if (status == LULL_OK)
    status = run_kind(r, LULL_PK_GD_ZERO, &z, err);
  const int classes = (2 * LULL_GD_RADIUS + 1) * (2 * LULL_GD_RADIUS + 1);
  for (int phase = 0; phase < classes && status == LULL_OK; ++phase) {
    w.gd.phase = phase;
    status = run_kind(r, LULL_PK_GD_STENCIL, &w, err);
  }
  if (status == LULL_OK)
    status = lull_pk_report(r->launchers, span, LULL_GD_PROGRESS_CONSTRAINTS, err);
  if (status != LULL_OK)
    return status;

  const lull_poisson_params p = lull_gradient_domain_solve_params(params);
  lull_pk_args sys =
      system_of(r, LULL_GD_W_B, LULL_GD_W_GX, LULL_GD_W_GY, LULL_GD_W_X, params->alpha);
  sys.stencil = plane(r, LULL_GD_W_STENCIL);
  sys.stencil_stride = r->plan->plane_stride;
  status = axpy(r, LULL_GD_W_X, LULL_GD_W_U, 0.0f, -1, r->nc, err);
  const lull_progress_span solve = lull_gd_solve_span(span, with_halves);
  if (status == LULL_OK)
    status = lull_pk_solve(&r->plan->solver, &p, &sys, r->launchers, &solve, err);
  if (status != LULL_OK)
    return status;

  if (with_halves) {
    /* x_A - x_B with the final weights: one linear solve for the
     * difference of the halves' data, from the guides' difference */
    const int diffs[4][3] = {{LULL_GD_W_DB, LULL_GD_W_BA, LULL_GD_W_BB},
                             {LULL_GD_W_DGX, LULL_GD_W_GXA, LULL_GD_W_GXB},
                             {LULL_GD_W_DGY, LULL_GD_W_GYA, LULL_GD_W_GYB},
                             {LULL_GD_W_D, LULL_GD_W_UD, -1}};
    for (int k = 0; k < 4 && status == LULL_OK; ++k)
      status = axpy(r, diffs[k][0], diffs[k][1], -1.0f, diffs[k][2], r->nc, err);
    lull_pk_args diff =
        system_of(r, LULL_GD_W_DB, LULL_GD_W_DGX, LULL_GD_W_DGY, LULL_GD_W_D, params->alpha);
    diff.stencil = sys.stencil;
    diff.stencil_stride = sys.stencil_stride;
    const lull_progress_span sub = lull_gd_halves_span(span);
    if (status == LULL_OK)
      status = lull_pk_cg(&r->plan->solver, &p, &diff, r->launchers, &sub, err);
    if (status != LULL_OK)
      return status;
  }
  status = second_pass(r, LULL_GD_W_B, LULL_GD_W_X, LULL_GD_W_FINAL, err);
  if (status != LULL_OK || !with_halves)
    return status;
  /* x_A = x + d/2 and x_B = x - d/2 (x is the solve of their mean) */
  for (int half = 0; half < 2 && status == LULL_OK; ++half) {
    status = axpy(r, LULL_GD_W_X, LULL_GD_W_X, half == 0 ? 0.5f : -1.0f, LULL_GD_W_D, r->nc, err);
    if (status == LULL_OK)
      status = second_pass(r, half == 0 ? LULL_GD_W_BA : LULL_GD_W_BB, LULL_GD_W_X,
                           half == 0 ? LULL_GD_W_FA : LULL_GD_W_FB, err);
  }
  return status;
}

/* The candidate's error estimate, its score against the first candidate's,
 * and the best so far (gradient_domain_cpu.c, candidate_score and
 * keep_best). */
static lull_status select_candidate(const gd_run* r, int first, lull_error* err)
{
  lull_pk_args a = args_of(r, 0.0f);
  const int sets[4] = {LULL_GD_W_FA, LULL_GD_W_FB, LULL_GD_W_RA, LULL_GD_W_RB};
  for (int s = 0; s < 4; ++s)
    for (int c = 0; c < 3; ++c)
      a.gd.score_sets[s][c] = plane(r, sets[s] + c);
  for (int c = 0; c < 3; ++c)
    a.gd.guide_value[c] = plane(r, LULL_GD_W_U + c);
  a.gd.src[0] = plane(r, LULL_GD_W_RAW0);
  a.gd.dst[0] = plane(r, first ? LULL_GD_W_RAW0 : LULL_GD_W_SCRATCH);
  a.gd.dst2[0] = plane(r, LULL_GD_W_SCRATCH + 2);
  a.gd.first = first;
  lull_status status = run_kind(r, LULL_PK_GD_SCORE, &a, err);
  if (status == LULL_OK && !first)
    status = box_mean(r, LULL_GD_W_SCRATCH, LULL_GD_W_SCORE, 1, LULL_GD_ERROR_RADIUS, err);
  if (status == LULL_OK && !first)
    status = box_mean(r, LULL_GD_W_SCRATCH + 2, LULL_GD_W_SCRATCH + 3, 1, LULL_GD_ERROR_RADIUS,
                      err);
  a = args_of(r, 0.0f);
  a.gd.src[0] = plane(r, LULL_GD_W_SCORE);
  a.gd.src[1] = plane(r, LULL_GD_W_SCRATCH + 3);
  a.gd.dst[0] = plane(r, LULL_GD_W_BEST_SCORE);
  for (int c = 0; c < 3; ++c) {
    a.gd.src2[c] = plane(r, LULL_GD_W_FINAL + c);
    a.gd.dst2[c] = plane(r, LULL_GD_W_BEST + c);
    a.gd.score_sets[0][c] = plane(r, LULL_GD_W_FA + c);
    a.gd.score_sets[1][c] = plane(r, LULL_GD_W_FB + c);
    a.gd.best_var[c] = plane(r, LULL_GD_W_BEST_VAR + c);
  }
  a.gd.first = first;
  if (status == LULL_OK)
    status = run_kind(r, LULL_PK_GD_KEEP_BEST, &a, err);
  return status;
}

/* A colour guide from 3 value and 3 variance planes. */
static lull_gd_guide guide_of(const gd_run* r, int value, int variance)
{
  lull_gd_guide guide;
  memset(&guide, 0, sizeof guide);
  guide.channels = r->nc;
  for (int c = 0; c < 3; ++c) {
    guide.value[c] = plane(r, value + c);
    guide.variance[c] = plane(r, variance + c);
  }
  return guide;
}

/* One pass of the post-filter: regresses planes x (variance x_var) with
 * the guide's weights into out (and out_var when >= 0). */
static lull_status post_pass(const gd_run* r, const lull_gd_guide* guide,
                             const lull_gd_features* features, float kc, int x, int x_var,
                             int out, int out_var, lull_error* err)
{
  lull_pk_args a = args_of(r, 0.0f);
  a.channels = r->nc;
  a.gd.guide = *guide;
  a.gd.features = *features;
  a.gd.candidate.kc = kc;
  a.gd.candidate.kf = LULL_GD_POST_KF;
  a.gd.candidate.beta = 1.0f;
  a.gd.count = LULL_GD_POST_RADIUS;
  for (int c = 0; c < 3; ++c) {
    a.gd.src[c] = plane(r, x + c);
    a.gd.src2[c] = plane(r, x_var + c);
    a.gd.dst[c] = plane(r, out + c);
    a.gd.dst2[c] = out_var >= 0 ? plane(r, out_var + c) : NULL;
  }
  return run_kind(r, LULL_PK_GD_POST, &a, err);
}

/* The post-filter of the chosen result into LULL_GD_W_FINAL
 * (gradient_domain_cpu.c, post_filter). */
static lull_status post_filter(const gd_run* r, const lull_gd_features* features,
                               lull_error* err)
{
  lull_status status = blur_variance(r, LULL_GD_W_BEST_VAR, err);
  lull_gd_features post = *features;
  for (int j = 0; j < post.count && status == LULL_OK; ++j) {
    lull_pk_args a = args_of(r, 0.0f);
    a.gd.src[0] = post.variance[j];
    a.gd.dst[0] = plane(r, LULL_GD_W_FSCALE + j);
    post.scale[j] = a.gd.dst[0];
    status = run_kind(r, LULL_PK_GD_POST_SCALE, &a, err);
  }
  lull_gd_guide guide = guide_of(r, LULL_GD_W_BEST, LULL_GD_W_BEST_VAR);
  if (status == LULL_OK)
    status = post_pass(r, &guide, &post, LULL_GD_POST_KC1, LULL_GD_W_BEST, LULL_GD_W_BEST_VAR,
                       LULL_GD_W_U, LULL_GD_W_VAR, err);
  guide = guide_of(r, LULL_GD_W_U, LULL_GD_W_VAR);
  if (status == LULL_OK)
    status = post_pass(r, &guide, &post, LULL_GD_POST_KC2, LULL_GD_W_BEST, LULL_GD_W_BEST_VAR,
                       LULL_GD_W_FINAL, -1, err);
  return status;
}

/* One input set (full, A or B) into planes b, gx, gy: LOAD and REPAIR of
 * the Poisson filter (poisson_schedule.cu, solve_set). */
static lull_status load_set(const gd_run* r, const lull_gradient_domain_images* im, int which,
                            int b, int gx, int gy, lull_error* err)
{
  lull_pk_args a = args_of(r, 0.0f);
  const lull_poisson_input in = lull_gradient_domain_input(im);
  lull_pk_set_inputs(&a, &in, which);
  a.buf.alpha = plane(r, LULL_GD_W_ALPHA);
  for (int c = 0; c < 3; ++c) {
    a.buf.gx[c] = plane(r, gx + c);
    a.buf.gy[c] = plane(r, gy + c);
    a.repaired[c] = plane(r, b + c);
    a.x[c] = plane(r, LULL_GD_W_X + c); /* REPAIR's copy: overwritten later */
  }
  lull_status status = run_kind(r, LULL_PK_LOAD, &a, err);
  if (status == LULL_OK)
    status = run_kind(r, LULL_PK_REPAIR, &a, err);
  return status;
}

static lull_status run(gd_run* r, const lull_gradient_domain_params* params,
                       const lull_gradient_domain_images* images, const lull_progress* progress,
                       lull_error* err)
{
  const lull_progress_span whole = {progress, 0.0, 1.0};
  lull_pk_args z = args_of(r, 0.0f);
  z.gd.dst[0] = r->block;
  z.gd.count = LULL_GD_W_PLANES;
  lull_status status = lull_pk_prepare(&r->plan->solver, &r->buf, r->launchers, err);
  if (status == LULL_OK)
    status = run_kind(r, LULL_PK_GD_ZERO, &z, err);
  const int sets[3][4] = {{LULL_POISSON_INPUT_FULL, LULL_GD_W_B, LULL_GD_W_GX, LULL_GD_W_GY},
                          {LULL_POISSON_INPUT_A, LULL_GD_W_BA, LULL_GD_W_GXA, LULL_GD_W_GYA},
                          {LULL_POISSON_INPUT_B, LULL_GD_W_BB, LULL_GD_W_GXB, LULL_GD_W_GYB}};
  for (int s = 0; s < 3 && status == LULL_OK; ++s)
    status = load_set(r, images, sets[s][0], sets[s][1], sets[s][2], sets[s][3], err);
  if (status == LULL_OK)
    status = lull_pk_report(r->launchers, &whole, 0.0, err);

  /* 1. guide and references (gradient_domain_planes.h) */
  const int steps[LULL_GD_GUIDE_STEP_COUNT][5] = LULL_GD_GUIDE_STEPS;
  for (int s = 0; s < LULL_GD_GUIDE_STEP_COUNT && status == LULL_OK; ++s) {
    const lull_progress_span span = lull_gd_guide_span(&whole, s);
    status = reconstruct(r, steps[s][0], steps[s][1], steps[s][2], steps[s][3],
                         LULL_GD_GUIDE_ALPHA, steps[s][4], &span, err);
  }
  if (status == LULL_OK)
    status = axpy(r, LULL_GD_W_UD, LULL_GD_W_FA, -1.0f, LULL_GD_W_FB, r->nc, err);
  if (status == LULL_OK)
    status = guide_variance(r, err);
  const lull_gd_guide guide = guide_of(r, LULL_GD_W_U, LULL_GD_W_VAR);
  lull_gd_features features;
  if (status == LULL_OK)
    status = load_features(r, images, &features, err);

  /* 2. candidates; 3. selection */
  const int single = params->candidate >= 0;
  int first, last;
  lull_gd_candidate_range(params->candidate, &first, &last);
  for (int k = first; k <= last && status == LULL_OK; ++k) {
    const lull_progress_span span = lull_gd_candidate_span(&whole, k, first, last);
    status = run_candidate(r, params, &guide, &features, &CANDIDATES[k], !single, &span, err);
    if (status == LULL_OK && !single)
      status = select_candidate(r, k == first, err);
  }
  if (status == LULL_OK && !single)
    status = post_filter(r, &features, err);
  if (status != LULL_OK)
    return status;
  const int result = LULL_GD_W_FINAL;
  lull_pk_args out = system_of(r, LULL_GD_W_B, LULL_GD_W_GX, LULL_GD_W_GY, result, params->alpha);
  status = run_kind(r, LULL_PK_FINITE_OR, &out, err);
  for (int c = 0; c < 3; ++c)
    out.buf.x[c] = plane(r, result + c);
  out.output = images->output;
  out.alpha = plane(r, LULL_GD_W_ALPHA);
  /* the last report before the store, so that a cancel there leaves the
   * output as it was (gradient_domain_cpu.c) */
  if (status == LULL_OK)
    status = lull_pk_report(r->launchers, &whole, 1.0, err);
  if (status == LULL_OK)
    status = run_kind(r, LULL_PK_STORE, &out, err);
  return status;
}

lull_status lull_gdk_filter_enqueue(lull_gdk_plan* plan, const lull_gradient_domain_params* params,
                                    const lull_gradient_domain_images* images,
                                    unsigned char* scratch, const lull_pk_launchers* launchers,
                                    const lull_progress* progress, lull_error* err)
{
  gd_run r;
  memset(&r, 0, sizeof r);
  r.plan = plan;
  r.launchers = launchers;
  r.nc = plan->solver.channels;
  lull_pk_layout(&plan->solver, scratch, &r.buf);
  r.block = (float*)(scratch + plan->solver_bytes);
  return run(&r, params, images, progress, err);
}

lull_status lull_cuda_gradient_domain(lull_cuda_backend* cuda,
                                      const lull_gradient_domain_params* params,
                                      const lull_gradient_domain_images* images,
                                      const lull_progress* progress, lull_error* err)
{
  lull_status status = lull_gradient_domain_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const lull_poisson_input in = lull_gradient_domain_input(images);
  const int channels = lull_poisson_input_channels(&in);
  size_t max_smem = 0;
  status = lull_cuda_max_shared_memory(cuda, &max_smem, err);
  if (status != LULL_OK)
    return status;
  lull_gdk_plan plan;
  status = lull_gdk_plan_make(images->output.width, images->output.height, channels, cuda->num_sms,
                              max_smem, &plan, err);
  if (status != LULL_OK)
    return status;
  unsigned char* scratch = (unsigned char*)lull_cuda_scratch(cuda, plan.scratch_bytes, err);
  if (!scratch)
    return err ? err->code : LULL_ERROR_OUT_OF_MEMORY;
  const lull_pk_launchers launchers = lull_pk_stream_launchers(&cuda->stream);
  return lull_gdk_filter_enqueue(&plan, params, images, scratch, &launchers, progress, err);
}
