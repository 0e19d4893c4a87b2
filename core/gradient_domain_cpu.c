/* The GradientDomain filter on the CPU: the pipeline of gradient_domain.h
 * (guide, features, candidates, selection) over the Poisson solver
 * (poisson_cg.c, poisson_dct.c) and the patch constraints
 * (gradient_domain_patch.c). */
#include "gradient_domain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradient_domain_patch.h"
#include "gradient_domain_post.h"
#include "gradient_domain_planes.h"
#include "poisson_input.h"
#include "poisson_math.h"
#include "threads.h"

static const lull_gd_candidate CANDIDATES[LULL_GD_CANDIDATES] = LULL_GD_CANDIDATE_TABLE;

lull_gradient_domain_params lull_gradient_domain_default_params(void)
{
  lull_gradient_domain_params p;
  /* The thesis uses 0.5 (§5.4).  On the test renders 0.2 and 0.5 are
   * within 5% of each other (either way per scene); with a very noisy
   * primal 0.2 is much better (test_gradient_domain_api's synthetic data:
   * RMSE 0.014 vs 0.021), and it matches the Poisson filter. */
  p.alpha = 0.2f;
  p.irls_iterations = 7;
  p.irls_reg_init = 0.05f;
  p.irls_reg_factor = 0.5f;
  /* each IRLS step starts from the last one's solution, so few iterations
   * per solve suffice: the test scenes' relMSE (256x192, selection) is the
   * same for 10, 20 and 50 (cornell 0.00017, window 0.00086-0.00087,
   * textured 0.00031 against the 8192-spp references), and 20 takes about
   * half of 50's time */
  p.cg_iterations = 20;
  p.cg_tolerance = 1e-3f;
  p.candidate = -1;
  return p;
}

lull_poisson_input lull_gradient_domain_input(const lull_gradient_domain_images* im)
{
  const lull_poisson_input in = {&im->color,        &im->gradient_x,   &im->gradient_y,
                                 &im->color_a,      &im->color_b,      &im->gradient_x_a,
                                 &im->gradient_x_b, &im->gradient_y_a, &im->gradient_y_b};
  return in;
}

int lull_gradient_domain_feature_sources(const lull_gradient_domain_images* im,
                                         lull_gd_feature_source out[3])
{
  const lull_image* geometry = im->depth.data ? &im->depth : &im->position;
  const lull_gd_feature_source all[3] = {
      {&im->albedo, 3, 0}, {&im->normal, 3, 1}, {geometry, im->depth.data ? 1 : 3, 2}};
  int count = 0;
  for (int s = 0; s < 3; ++s)
    if (all[s].image->data)
      out[count++] = all[s];
  return count;
}

void lull_gd_candidate_range(int candidate, int* first, int* last)
{
  *first = candidate >= 0 ? candidate : 0;
  *last = candidate >= 0 ? candidate : LULL_GD_CANDIDATES - 1;
}

lull_progress_span lull_gd_guide_span(const lull_progress_span* whole, int step)
{
  return lull_progress_subspan(whole, 0.03 * step, 0.03 * (step + 1));
}

lull_progress_span lull_gd_candidate_span(const lull_progress_span* whole, int k, int first,
                                          int last)
{
  const double share = 0.85 / (last - first + 1);
  return lull_progress_subspan(whole, 0.15 + share * (k - first), 0.15 + share * (k - first + 1));
}

lull_progress_span lull_gd_solve_span(const lull_progress_span* candidate, int with_halves)
{
  return lull_progress_subspan(candidate, LULL_GD_PROGRESS_CONSTRAINTS,
                               with_halves ? 0.8 : 0.95);
}

lull_progress_span lull_gd_halves_span(const lull_progress_span* candidate)
{
  return lull_progress_subspan(candidate, 0.8, 0.95);
}

lull_poisson_params lull_gradient_domain_solve_params(const lull_gradient_domain_params* params)
{
  lull_poisson_params p = lull_poisson_default_params();
  p.alpha = params->alpha;
  p.norm = LULL_POISSON_NORM_L1;
  p.solver = LULL_POISSON_SOLVER_CG;
  p.irls_iterations = params->irls_iterations;
  p.irls_reg_init = params->irls_reg_init;
  p.irls_reg_factor = params->irls_reg_factor;
  p.cg_iterations = params->cg_iterations;
  p.cg_tolerance = params->cg_tolerance;
  p.preconditioner = LULL_POISSON_PRECOND_JACOBI;
  return p;
}

lull_status lull_gradient_domain_validate(const lull_gradient_domain_params* params,
                                          const lull_gradient_domain_images* images,
                                          lull_error* err)
{
  const lull_poisson_input in = lull_gradient_domain_input(images);
  lull_status status = lull_poisson_input_validate(&in, &images->output, err);
  if (status != LULL_OK)
    return status;
  if (!images->color_a.data)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "GradientDomain needs the half-buffers colorA, colorB, gradientXA, "
                     "gradientXB, gradientYA, gradientYB (the colour weights use their variance)");
  const struct
  {
    const lull_image* image;
    const char* name;
    int channels;
  } features[] = {{&images->albedo, "albedo", 1}, /* 1 and 2 channels the OIDN way */
                  {&images->normal, "normal", 1},
                  {&images->depth, "depth", 1},
                  {&images->position, "position", 3},
                  {&images->feature_variance, "featureVariance", 3}};
  for (size_t i = 0; i < sizeof features / sizeof features[0]; ++i) {
    const lull_image* f = features[i].image;
    if (!f->data)
      continue;
    if (f->width != images->output.width || f->height != images->output.height)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "image size mismatch");
    if (lull_format_channels(f->format) < features[i].channels)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "%s must have at least %d channels",
                       features[i].name, features[i].channels);
  }
  if (!(params->alpha > 0.0f) || !isfinite(params->alpha))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "alpha must be positive and finite");
  if (params->irls_iterations < 1 || params->cg_iterations < 1)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "iteration counts must be >= 1");
  if (!(params->irls_reg_init > 0.0f) || !(params->irls_reg_factor > 0.0f) ||
      !isfinite(params->irls_reg_init) || !isfinite(params->irls_reg_factor))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "IRLS regularisation must be positive");
  if (!(params->cg_tolerance >= 0.0f))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "cgTolerance must be >= 0");
  if (params->candidate < -1 || params->candidate >= LULL_GD_CANDIDATES)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "candidate must be -1 (automatic), 0, 1 or 2");
  return LULL_OK;
}

typedef struct gd_run
{
  int w, h, nc, threads;
  size_t n, stride;
  float* block;
  lull_stencil stencil;
  lull_poisson_dct dct;
} gd_run;

static float* plane(const gd_run* r, int index)
{
  return r->block + (size_t)index * r->stride;
}

size_t lull_gradient_domain_cpu_memory(int width, int height)
{
  const size_t n = ((size_t)width * (size_t)height + 15) / 16 * 16;
  return (size_t)LULL_GD_W_PLANES * n * sizeof(float);
}

/* A Poisson system over planes b, gx, gy (3 each) with the run's weights. */
static lull_poisson_system system_of(const gd_run* r, int b, int gx, int gy, float alpha)
{
  lull_poisson_system sys;
  memset(&sys, 0, sizeof sys);
  sys.width = r->w;
  sys.height = r->h;
  sys.channels = r->nc;
  sys.threads = r->threads;
  sys.alpha2 = alpha * alpha;
  sys.wa = plane(r, LULL_GD_W_WA);
  sys.wx = plane(r, LULL_GD_W_WX);
  sys.wy = plane(r, LULL_GD_W_WY);
  sys.zero = plane(r, LULL_GD_W_ZERO);
  for (int c = 0; c < 3; ++c) {
    sys.primal[c] = plane(r, b + c);
    sys.gx[c] = plane(r, gx + c);
    sys.gy[c] = plane(r, gy + c);
  }
  return sys;
}

static void planes3(const gd_run* r, int first, float* out[3])
{
  for (int c = 0; c < 3; ++c)
    out[c] = plane(r, first + c);
}

/* Plain Poisson reconstruction of one data set into planes `into`. */
static lull_status reconstruct(const gd_run* r, int b, int gx, int gy, int norm, float alpha,
                               int into, const lull_progress_span* span, lull_error* err)
{
  lull_poisson_params p = lull_poisson_default_params();
  p.alpha = alpha;
  p.norm = norm;
  lull_poisson_system sys = system_of(r, b, gx, gy, p.alpha);
  float* x[3];
  planes3(r, into, x);
  for (int c = 0; c < r->nc && c < 3; ++c)
    memcpy(x[c], plane(r, b + c), r->n * sizeof(float));
  return lull_poisson_solve(&p, &sys, x, &r->dct, span, NULL, err);
}

/* The L2 second pass (§5.3.1): primal b with the gradients of x, alpha
 * 0.05, solved exactly, into `into`. */
static lull_status second_pass(const gd_run* r, int b, const float* const x[3], int into,
                               lull_error* err)
{
  const int w = r->w, h = r->h;
  for (int c = 0; c < r->nc; ++c) {
    float* gx = plane(r, LULL_GD_W_DGX + c);
    float* gy = plane(r, LULL_GD_W_DGY + c);
    const float* xc = x[c];
#pragma omp parallel for schedule(static) num_threads(r->threads)
    for (int y = 0; y < h; ++y)
      for (int px = 0; px < w; ++px) {
        const size_t i = (size_t)y * (size_t)w + (size_t)px;
        gx[i] = px + 1 < w ? xc[i + 1] - xc[i] : 0.0f;
        gy[i] = y + 1 < h ? xc[i + (size_t)w] - xc[i] : 0.0f;
      }
  }
  return reconstruct(r, b, LULL_GD_W_DGX, LULL_GD_W_DGY, LULL_POISSON_NORM_L2,
                     LULL_GD_SECOND_PASS_ALPHA, into, NULL, err);
}

/* The guide's variance (§5.3.2): the two-buffer variance of the L1
 * reconstructions, blurred, and at least its raw value. */
static void blur_variance(const gd_run* r, int var)
{
  float* tmp = plane(r, LULL_GD_W_SCRATCH);
  float* blur = plane(r, LULL_GD_W_SCRATCH + 1);
  for (int c = 0; c < r->nc; ++c) {
    float* v = plane(r, var + c);
    lull_box_mean(r->w, r->h, v, blur, tmp, LULL_GD_VARIANCE_BLUR, 0, r->w, 0, r->h, r->threads);
    for (size_t i = 0; i < r->n; ++i)
      v[i] = LULL_MAX(v[i], blur[i]);
  }
}

static void guide_variance(const gd_run* r)
{
  for (int c = 0; c < r->nc; ++c) {
    float* v = plane(r, LULL_GD_W_VAR + c);
    const float* d = plane(r, LULL_GD_W_UD + c);
    for (size_t i = 0; i < r->n; ++i)
      v[i] = lull_two_buffer_variance(d[i]);
  }
  blur_variance(r, LULL_GD_W_VAR);
}

/* Loads the features normalised to [0, 1] (§5.3.2), their variances and
 * scales; returns the number of feature channels. */
static int load_features(const gd_run* r, const lull_gradient_domain_images* im,
                         lull_gd_features* f)
{
  lull_gd_feature_source sources[3];
  const int count = lull_gradient_domain_feature_sources(im, sources);
  memset(f, 0, sizeof *f);
  const int w = r->w, h = r->h;
  for (int s = 0; s < count; ++s) {
    const lull_image* image = sources[s].image;
    for (int c = 0; c < sources[s].channels; ++c) {
      const int j = f->count++;
      float* value = plane(r, LULL_GD_W_F + j);
      float* variance = plane(r, LULL_GD_W_FVAR + j);
      float* scale = plane(r, LULL_GD_W_FSCALE + j);
      float lo = INFINITY, hi = -INFINITY;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          float v[4], fv[4] = {0, 0, 0, 0};
          lull_image_load(image, x, y, v);
          lull_expand_rgb(v, lull_format_channels(image->format));
          if (im->feature_variance.data)
            lull_image_load(&im->feature_variance, x, y, fv);
          const size_t i = (size_t)y * (size_t)w + (size_t)x;
          value[i] = isfinite(v[c]) ? v[c] : 0.0f;
          const float var = fv[sources[s].variance_channel];
          variance[i] = isfinite(var) && var > 0.0f ? var : 0.0f;
          lo = LULL_MIN(lo, value[i]);
          hi = LULL_MAX(hi, value[i]);
        }
      const float range = hi > lo ? hi - lo : 1.0f;
      const float inv = 1.0f / range;
      for (size_t i = 0; i < r->n; ++i) {
        value[i] = (value[i] - lo) * inv;
        variance[i] *= inv * inv;
      }
      /* V_j = max(1e-3, Var, |grad f|^2), central differences (eq. 5.12) */
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const size_t i = (size_t)y * (size_t)w + (size_t)x;
          const int xl = x > 0 ? x - 1 : x, xr = x + 1 < w ? x + 1 : x;
          const int yu = y > 0 ? y - 1 : y, yd = y + 1 < h ? y + 1 : y;
          const float gx = (value[(size_t)y * w + xr] - value[(size_t)y * w + xl]) /
                           (float)LULL_MAX(1, xr - xl);
          const float gy = (value[(size_t)yd * w + x] - value[(size_t)yu * w + x]) /
                           (float)LULL_MAX(1, yd - yu);
          scale[i] = lull_gd_feature_scale(variance[i], gx * gx + gy * gy);
        }
      f->value[j] = value;
      f->variance[j] = variance;
      f->scale[j] = scale;
    }
  }
  return f->count;
}

/* One candidate: weights, stencil, the extended L1 solve, its half
 * difference, the second pass for the full data and each half. */
static lull_status run_candidate(const gd_run* r, const lull_gradient_domain_params* params,
                                 const lull_gd_guide* guide, const lull_gd_features* features,
                                 const lull_gd_candidate* cand, int with_halves,
                                 const lull_progress_span* span, lull_error* err)
{
  float* weights[LULL_GD_PATCH];
  for (int k = 0; k < LULL_GD_PATCH; ++k)
    weights[k] = plane(r, LULL_GD_W_PATCH + k);
  lull_gd_patch_weights(r->w, r->h, guide, features, cand, LULL_GD_WEIGHT_THRESHOLD,
                        LULL_GD_NLM_RADIUS, weights, plane(r, LULL_GD_W_SCRATCH), r->threads);
  /* The extended problem under L1 (§5.3.1; SOLVEL1 of §5.2), from the
   * guide.  IRLS reweights the Poisson rows (the data and gradient
   * residuals, where the outliers L1 is for live); the patch rows keep their
   * weights D_p, so their term is assembled once per candidate.  Reweighting
   * the patch rows too (re-assembling the stencil from each patch's
   * residual every step) measured no better on the test scenes (cornell
   * 0.00166 vs 0.00167, textured 0.00101 vs 0.00102, window 0.00237 vs
   * 0.00203 relMSE at 128x96, 32 spp, alpha 0.5) for 6 more assemblies. */
  memset(r->stencil.coef, 0, (size_t)LULL_STENCIL_TAPS * r->stencil.stride * sizeof(float));
  lull_gd_patch_stencil(r->w, r->h, features, (const float* const*)weights,
                        (lull_stencil*)&r->stencil, r->threads);
  lull_status status = lull_progress_span_report(span, LULL_GD_PROGRESS_CONSTRAINTS, err);
  if (status != LULL_OK)
    return status;
  const lull_poisson_params p = lull_gradient_domain_solve_params(params);
  lull_poisson_system sys = system_of(r, LULL_GD_W_B, LULL_GD_W_GX, LULL_GD_W_GY, params->alpha);
  sys.patch = &r->stencil;
  float* x[3];
  planes3(r, LULL_GD_W_X, x);
  for (int c = 0; c < r->nc; ++c)
    memcpy(x[c], plane(r, LULL_GD_W_U + c), r->n * sizeof(float));
  const lull_progress_span solve = lull_gd_solve_span(span, with_halves);
  status = lull_poisson_solve(&p, &sys, x, NULL, &solve, NULL, err);
  if (status != LULL_OK)
    return status;

  if (with_halves) {
    /* x_A - x_B with the final weights: one linear solve for the
     * difference of the halves' data, from the guides' difference */
    const int diffs[3][3] = {{LULL_GD_W_DB, LULL_GD_W_BA, LULL_GD_W_BB},
                             {LULL_GD_W_DGX, LULL_GD_W_GXA, LULL_GD_W_GXB},
                             {LULL_GD_W_DGY, LULL_GD_W_GYA, LULL_GD_W_GYB}};
    for (int c = 0; c < r->nc; ++c)
      for (size_t i = 0; i < r->n; ++i) {
        for (int k = 0; k < 3; ++k)
          plane(r, diffs[k][0] + c)[i] =
              plane(r, diffs[k][1] + c)[i] - plane(r, diffs[k][2] + c)[i];
        plane(r, LULL_GD_W_D + c)[i] = plane(r, LULL_GD_W_UD + c)[i];
      }
    lull_poisson_system diff =
        system_of(r, LULL_GD_W_DB, LULL_GD_W_DGX, LULL_GD_W_DGY, params->alpha);
    diff.patch = &r->stencil;
    float* d[3];
    planes3(r, LULL_GD_W_D, d);
    const lull_progress_span sub = lull_gd_halves_span(span);
    status = lull_poisson_cg(&p, &diff, d, NULL, &sub, NULL, err);
    if (status != LULL_OK)
      return status;
  }
  status = second_pass(r, LULL_GD_W_B, (const float* const*)x, LULL_GD_W_FINAL, err);
  if (status != LULL_OK || !with_halves)
    return status;
  /* x_A = x + d/2 and x_B = x - d/2 (x is the solve of their mean); the
   * second pass of each half into LULL_GD_W_FA, LULL_GD_W_FB */
  for (int half = 0; half < 2 && status == LULL_OK; ++half) {
    const float step = half == 0 ? 0.5f : -1.0f; /* x -> x + d/2 -> x - d/2 */
    for (int c = 0; c < r->nc; ++c) {
      float* out = plane(r, LULL_GD_W_X + c);
      const float* dc = plane(r, LULL_GD_W_D + c);
      for (size_t i = 0; i < r->n; ++i)
        out[i] += step * dc[i];
    }
    status = second_pass(r, half == 0 ? LULL_GD_W_BA : LULL_GD_W_BB, (const float* const*)x,
                         half == 0 ? LULL_GD_W_FA : LULL_GD_W_FB, err);
  }
  return status;
}

/* Per-pixel error estimate of the candidate in LULL_GD_W_FINAL/LULL_GD_W_FA/
 * LULL_GD_W_FB, relative to the guide (as relMSE).  The first candidate's
 * goes to LULL_GD_W_RAW0; for the others, the difference D to it is
 * smoothed with D^2 over the error window into LULL_GD_W_SCORE and
 * LULL_GD_W_SCRATCH + 3 (lull_gd_choice_score turns them into a score). */
static void candidate_score(const gd_run* r, int first)
{
  float* raw = first ? plane(r, LULL_GD_W_RAW0) : plane(r, LULL_GD_W_SCRATCH);
  float* raw2 = plane(r, LULL_GD_W_SCRATCH + 2);
  const float* raw0 = plane(r, LULL_GD_W_RAW0);
#define LULL_GD_SET3(p) {plane(r, p), plane(r, (p) + 1), plane(r, (p) + 2)}
  const float* const sets[4][3] = {LULL_GD_SET3(LULL_GD_W_FA), LULL_GD_SET3(LULL_GD_W_FB),
                                   LULL_GD_SET3(LULL_GD_W_RA), LULL_GD_SET3(LULL_GD_W_RB)};
  const float* const guide[3] = LULL_GD_SET3(LULL_GD_W_U);
#undef LULL_GD_SET3
#pragma omp parallel for schedule(static) num_threads(r->threads)
  for (ptrdiff_t i = 0; i < (ptrdiff_t)r->n; ++i) {
    const float s = lull_gd_pixel_error(sets, guide, r->nc, (size_t)i);
    if (first) {
      raw[i] = s;
    } else {
      const float d = s - raw0[i];
      raw[i] = d;
      raw2[i] = d * d;
    }
  }
  if (first)
    return;
  float* tmp = plane(r, LULL_GD_W_SCRATCH + 1);
  lull_box_mean(r->w, r->h, raw, plane(r, LULL_GD_W_SCORE), tmp, LULL_GD_ERROR_RADIUS, 0,
                   r->w, 0, r->h, r->threads);
  lull_box_mean(r->w, r->h, raw2, plane(r, LULL_GD_W_SCRATCH + 3), tmp, LULL_GD_ERROR_RADIUS,
                   0, r->w, 0, r->h, r->threads);
}

/* The first candidate is the choice (score 0) until another one's score
 * (lull_gd_choice_score) is lower. */
static void keep_best(const gd_run* r, int first)
{
  float* best_score = plane(r, LULL_GD_W_BEST_SCORE);
  const float* mean_d = plane(r, LULL_GD_W_SCORE);
  const float* mean_d2 = plane(r, LULL_GD_W_SCRATCH + 3);
  for (size_t i = 0; i < r->n; ++i) {
    const int x = (int)(i % (size_t)r->w), y = (int)(i / (size_t)r->w);
    const float score = lull_gd_choice_at(first, mean_d[i], mean_d2[i], x, y, r->w, r->h);
    if (first || score < best_score[i]) {
      best_score[i] = score;
      for (int c = 0; c < r->nc; ++c) {
        plane(r, LULL_GD_W_BEST + c)[i] = plane(r, LULL_GD_W_FINAL + c)[i];
        plane(r, LULL_GD_W_BEST_VAR + c)[i] = lull_two_buffer_variance(
            plane(r, LULL_GD_W_FA + c)[i] - plane(r, LULL_GD_W_FB + c)[i]);
      }
    }
  }
}

/* A colour guide from 3 value and 3 variance planes. */
static lull_gd_guide guide_of(const gd_run* r, int value, int variance)
{
  lull_gd_guide guide;
  guide.channels = r->nc;
  for (int c = 0; c < 3; ++c) {
    guide.value[c] = plane(r, value + c);
    guide.variance[c] = plane(r, variance + c);
  }
  return guide;
}

/* The post-filter of the chosen result (gradient_domain_planes.h) into
 * LULL_GD_W_FINAL.  The guide, the feature scales and the stencil's planes
 * are free once the candidates are done. */
static void post_filter(const gd_run* r, const lull_gd_features* features)
{
  blur_variance(r, LULL_GD_W_BEST_VAR);
  lull_gd_features post = *features;
  for (int j = 0; j < post.count; ++j) {
    float* scale = plane(r, LULL_GD_W_FSCALE + j);
    for (size_t i = 0; i < r->n; ++i)
      scale[i] = lull_gd_post_scale(post.variance[j][i]);
    post.scale[j] = scale;
  }
  lull_gd_llr* sums = (lull_gd_llr*)plane(r, LULL_GD_W_POST_SUMS);
  float *best[3], *best_var[3], *u[3], *u_var[3], *out[3];
  planes3(r, LULL_GD_W_BEST, best);
  planes3(r, LULL_GD_W_BEST_VAR, best_var);
  planes3(r, LULL_GD_W_U, u);
  planes3(r, LULL_GD_W_VAR, u_var);
  planes3(r, LULL_GD_W_FINAL, out);
  /* pass 1, guided by the chosen result, into the guide's planes */
  lull_gd_guide guide = guide_of(r, LULL_GD_W_BEST, LULL_GD_W_BEST_VAR);
  const lull_gd_candidate pass1 = {LULL_GD_POST_KC1, LULL_GD_POST_KF, 1.0f};
  lull_gd_post_pass(r->w, r->h, r->nc, &guide, &post, &pass1, LULL_GD_POST_RADIUS,
                    LULL_GD_POST_NLM, LULL_GD_POST_RIDGE, (const float* const*)best,
                    (const float* const*)best_var, u, u_var, sums,
                    plane(r, LULL_GD_W_POST_WEIGHT), plane(r, LULL_GD_W_SCRATCH), r->threads);
  /* pass 2, guided by pass 1 */
  guide = guide_of(r, LULL_GD_W_U, LULL_GD_W_VAR);
  const lull_gd_candidate pass2 = {LULL_GD_POST_KC2, LULL_GD_POST_KF, 1.0f};
  lull_gd_post_pass(r->w, r->h, r->nc, &guide, &post, &pass2, LULL_GD_POST_RADIUS,
                    LULL_GD_POST_NLM, LULL_GD_POST_RIDGE, (const float* const*)best, NULL, out,
                    NULL, sums, plane(r, LULL_GD_W_POST_WEIGHT), plane(r, LULL_GD_W_SCRATCH),
                    r->threads);
}

static lull_status run(gd_run* r, const lull_gradient_domain_params* params,
                       const lull_gradient_domain_images* images, const lull_progress* progress,
                       lull_error* err)
{
  const lull_poisson_input in = lull_gradient_domain_input(images);
  float* b[4];
  float *gx[3], *gy[3];
  planes3(r, LULL_GD_W_B, b);
  b[3] = plane(r, LULL_GD_W_ALPHA);
  planes3(r, LULL_GD_W_GX, gx);
  planes3(r, LULL_GD_W_GY, gy);
  lull_poisson_input_load(&in, LULL_POISSON_INPUT_FULL, r->nc, b, gx, gy, r->threads);
  planes3(r, LULL_GD_W_BA, b);
  b[3] = NULL;
  planes3(r, LULL_GD_W_GXA, gx);
  planes3(r, LULL_GD_W_GYA, gy);
  lull_poisson_input_load(&in, LULL_POISSON_INPUT_A, r->nc, b, gx, gy, r->threads);
  planes3(r, LULL_GD_W_BB, b);
  planes3(r, LULL_GD_W_GXB, gx);
  planes3(r, LULL_GD_W_GYB, gy);
  lull_poisson_input_load(&in, LULL_POISSON_INPUT_B, r->nc, b, gx, gy, r->threads);
  memset(plane(r, LULL_GD_W_ZERO), 0, r->n * sizeof(float));

  const lull_progress_span whole = {progress, 0.0, 1.0};
  lull_status status = lull_progress_span_report(&whole, 0.0, err);
  /* 1. guide and references (gradient_domain_planes.h) */
  const int steps[LULL_GD_GUIDE_STEP_COUNT][5] = LULL_GD_GUIDE_STEPS;
  for (int s = 0; s < LULL_GD_GUIDE_STEP_COUNT && status == LULL_OK; ++s) {
    const lull_progress_span span = lull_gd_guide_span(&whole, s);
    status = reconstruct(r, steps[s][0], steps[s][1], steps[s][2], steps[s][3], LULL_GD_GUIDE_ALPHA,
                         steps[s][4], &span, err);
  }
  if (status != LULL_OK)
    return status;
  for (int c = 0; c < r->nc; ++c)
    for (size_t i = 0; i < r->n; ++i)
      plane(r, LULL_GD_W_UD + c)[i] = plane(r, LULL_GD_W_FA + c)[i] - plane(r, LULL_GD_W_FB + c)[i];
  guide_variance(r);
  const lull_gd_guide guide = guide_of(r, LULL_GD_W_U, LULL_GD_W_VAR);
  lull_gd_features features;
  load_features(r, images, &features);

  /* 2. candidates; 3. selection */
  const int single = params->candidate >= 0;
  int first, last;
  lull_gd_candidate_range(params->candidate, &first, &last);
  for (int k = first; k <= last && status == LULL_OK; ++k) {
    const lull_progress_span span = lull_gd_candidate_span(&whole, k, first, last);
    status = run_candidate(r, params, &guide, &features, &CANDIDATES[k], !single, &span, err);
    if (status == LULL_OK && !single) {
      candidate_score(r, k == first);
      keep_best(r, k == first);
    }
  }
  if (status != LULL_OK)
    return status;
  if (!single)
    post_filter(r, &features);
  float* result[3];
  planes3(r, LULL_GD_W_FINAL, result);
  lull_poisson_system sys = system_of(r, LULL_GD_W_B, LULL_GD_W_GX, LULL_GD_W_GY, params->alpha);
  float* primal[3];
  planes3(r, LULL_GD_W_B, primal);
  lull_poisson_finite_or(&sys, result, (const float* const*)primal);
  /* the last report before the store, so that a cancel there leaves the
   * output as it was (as Poisson's does) */
  status = lull_progress_span_report(&whole, 1.0, err);
  if (status != LULL_OK)
    return status;
  lull_poisson_store(&images->output, r->nc, (const float* const*)result, plane(r, LULL_GD_W_ALPHA),
                     r->threads);
  return LULL_OK;
}

lull_status lull_gradient_domain_cpu(const lull_gradient_domain_params* params,
                                     const lull_gradient_domain_images* images, int num_threads,
                                     const lull_progress* progress, lull_error* err)
{
  lull_status status = lull_gradient_domain_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const lull_poisson_input in = lull_gradient_domain_input(images);
  gd_run r;
  memset(&r, 0, sizeof r);
  r.w = images->output.width;
  r.h = images->output.height;
  r.nc = lull_poisson_input_channels(&in);
  r.threads = lull_thread_count(num_threads);
  r.n = (size_t)r.w * (size_t)r.h;
  r.stride = (r.n + 15) / 16 * 16;
  const size_t planes = LULL_GD_W_PLANES;
  if (r.stride > ((size_t)-1) / sizeof(float) / planes)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "image is too large");
  r.block = aligned_alloc(64, planes * r.stride * sizeof(float));
  if (!r.block)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory (GradientDomain needs %zu MB)",
                     lull_gradient_domain_cpu_memory(r.w, r.h) >> 20);
  memset(r.block, 0, planes * r.stride * sizeof(float));
  r.stencil.coef = plane(&r, LULL_GD_W_STENCIL);
  r.stencil.stride = r.stride;
  status = lull_poisson_dct_init(&r.dct, r.w, r.h, r.threads, err);
  if (status == LULL_OK)
    status = run(&r, params, images, progress, err);
  lull_poisson_dct_free(&r.dct);
  free(r.block);
  return status;
}
