/* The DDID filter on the CPU (ddid.h says what a run does, ddid_math.h
 * gives the formulas).  Threads take rows of pixels; each thread has its
 * own scratch for a pixel's window (lull_ddid_pixel_scratch), and the
 * step's twiddles are computed once per iteration.  The time grows with
 * the window's cube (the separable DFT at every pixel): the last
 * iteration, r_n = 2 sigma_s, takes most of it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ddid.h"
#include "ddid_math.h"
#include "feature_planes.h"
#include "rdfc_math.h"
#include "regression_math.h"
#include "threads.h"

/* The shared plane layout (ddid.h) under short names. */
enum
{
  P_A = LULL_DDID_P_A,
  P_B = LULL_DDID_P_B,
  P_Y = LULL_DDID_P_Y,
  P_V = LULL_DDID_P_V,
  P_G = LULL_DDID_P_G,
  P_TMP = LULL_DDID_P_TMP,
  P_ALPHA = LULL_DDID_P_ALPHA,
  P_F = LULL_DDID_P_F,
  P_FB = LULL_DDID_P_FB,
  P_COUNT = LULL_DDID_P_COUNT,
};

lull_ddid_params lull_ddid_default_params(void)
{
  lull_ddid_params p;
  p.iterations = 8;
  p.sigma_spatial = 13.0f;
  p.range = 5.3f;
  p.frequency = 200.0f; /* the thesis: 13, for white noise (docs/ddid.md) */
  p.log_alpha = 15.0f;
  p.k_feature = 0.2f;
  p.hdr = 1;
  p.srgb = 0;
  p.nonnegative = 0;
  p.input_scale = NAN;
  return p;
}

static int has(const lull_image* image)
{
  return image->data != NULL;
}

lull_status lull_ddid_validate(const lull_ddid_params* params, const lull_ddid_images* images,
                               lull_error* err)
{
  const lull_status status = lull_regression_validate_images(images, 1, err);
  if (status != LULL_OK)
    return status;
  if (has(&images->output_variance))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "DDID does not write outputVariance");
  if (!lull_regression_has_halves(images) && !has(&images->variance))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "DDID needs the colour's variance: give 'variance' with 'color', or the "
                     "halves 'colorA' and 'colorB'");
  if (!(params->iterations >= 1 && params->iterations <= 16))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid iterations (1 to 16)");
  if (!(params->sigma_spatial >= 0.5f && params->sigma_spatial <= 20.0f))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid spatialSigma (0.5 to 20)");
  if (!(params->range > 0.0f && params->frequency > 0.0f && params->log_alpha >= 0.0f &&
        params->k_feature >= 0.0f && isfinite(params->range) && isfinite(params->frequency) &&
        isfinite(params->log_alpha) && isfinite(params->k_feature)))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT,
                     "rangeScale and frequencyScale must be positive, logAlpha and "
                     "featureSensitivity not negative");
  return lull_regression_validate_color(params->hdr, params->srgb, params->input_scale, err);
}

/* r_n is largest in the last iteration (n = 1) */
int lull_ddid_reach(const lull_ddid_params* params)
{
  return params->iterations * lull_ddid_params_step(params, 1).radius + 3;
}

size_t lull_ddid_cpu_memory(const lull_ddid_params* params, int width, int height,
                            int num_threads)
{
  const int r = lull_ddid_params_step(params, 1).radius;
  const size_t W = (size_t)(2 * r + 1);
  const size_t per_thread = lull_ddid_pixel_scratch(r);
  return ((size_t)P_COUNT * (size_t)width * (size_t)height + 2 * W * W +
          per_thread * (size_t)lull_thread_count(num_threads)) *
         sizeof(float);
}

/* The operations' context: the steps' scratch (their twiddles, then each
 * thread's window) and the thread count. */
typedef struct cpu_steps
{
  float* twiddles;
  float* scratch;
  int threads;
} cpu_steps;

/* A per-pixel step of rdfc_math.h over the image (its blurs and boxes). */
static lull_status cpu_pixels(void* ctx, const lull_rdfc_pixels* a, lull_error* err)
{
  (void)err;
#pragma omp parallel for schedule(static) num_threads(((const cpu_steps*)ctx)->threads)
  for (int y = 0; y < a->height; ++y)
    for (int x = 0; x < a->width; ++x)
      lull_rdfc_pixel_body(a, x, y);
  return LULL_OK;
}

/* The inputs into P: colour into P_A (the halves' mean with halves),
 * variance into P_V (RGB), features into P_F, the 4th channel. */
static void load(const lull_ddid_params* params, const lull_ddid_images* im, float scale,
                 const lull_ddid_ops* ops, float* const* P, int threads)
{
  const int w = im->output.width, h = im->output.height;
  const size_t n = (size_t)w * (size_t)h;
  const int halves = lull_regression_has_halves(im);
  const lull_image* color = halves ? &im->color_a : &im->color;
  float* alpha = lull_format_channels(color->format) == 4 ? P[P_ALPHA] : NULL;
  lull_fp_load_color(color, scale, params->srgb, params->nonnegative, &P[P_A], alpha, threads);
  if (halves) {
    lull_fp_load_color(&im->color_b, scale, params->srgb, params->nonnegative, &P[P_B],
                       alpha ? P[P_TMP] : NULL, threads);
    if (alpha)
      for (size_t i = 0; i < n; ++i)
        alpha[i] = 0.5f * (alpha[i] + P[P_TMP][i]);
    if (!has(&im->variance))
      (void)lull_ddid_halves_variance(ops, P, w, h, NULL); /* cannot fail on the CPU */
    for (int c = 0; c < 3; ++c)
      for (size_t i = 0; i < n; ++i)
        P[P_A + c][i] = 0.5f * (P[P_A + c][i] + P[P_B + c][i]);
  }
  if (has(&im->variance))
    lull_fp_load_variance(&im->variance, scale, &P[P_V], threads);
  const lull_regression_features fa = lull_regression_half_features(im, 0);
  const int nf = lull_regression_feature_channels(&fa);
  if (nf && params->k_feature > 0.0f) {
    lull_feature_scales scales;
    lull_fp_feature_scales(&fa, P[P_TMP], w, h, threads, &scales);
    lull_fp_load_features(&fa, &scales, &P[P_F], w, h, threads);
    if (lull_regression_feature_halves(im)) {
      const lull_regression_features fb = lull_regression_half_features(im, 1);
      lull_fp_load_features(&fb, &scales, &P[P_FB], w, h, threads);
      for (int c = 0; c < nf; ++c)
        for (size_t i = 0; i < n; ++i)
          P[P_F + c][i] = 0.5f * (P[P_F + c][i] + P[P_FB + c][i]);
    }
  }
}

/* Colour and variance to the DCT colour space: y into P_Y and P_G (the
 * first guide), the variance of each DCT channel in place. */
static void to_dct(float* const* P, size_t n, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long long i = 0; i < (long long)n; ++i) {
    float u[3], v[3], y[3], vy[3];
    for (int c = 0; c < 3; ++c) {
      u[c] = P[P_A + c][i];
      v[c] = P[P_V + c][i];
    }
    lull_ddid_to_dct(u, v, y, vy);
    for (int k = 0; k < 3; ++k) {
      P[P_Y + k][i] = y[k];
      P[P_G + k][i] = y[k];
      P[P_V + k][i] = vy[k];
    }
  }
}

/* One step: threads take rows, in bands of about 2% of the image between
 * progress reports. */
static lull_status cpu_step(void* ctx, const lull_ddid_planes* pl, const lull_ddid_step* st,
                            const lull_progress_span* span, lull_error* err)
{
  const cpu_steps* c = (const cpu_steps*)ctx;
  const int W = 2 * st->radius + 1, h = pl->height;
  float* er = c->twiddles;
  float* ei = c->twiddles + (size_t)W * (size_t)W;
  lull_ddid_twiddles(st->radius, er, ei);
  const size_t per_thread = lull_ddid_pixel_scratch(st->radius);
  const int band = LULL_MAX(1, h / 50);
  for (int y0 = 0; y0 < h; y0 += band) {
    const int y1 = LULL_MIN(h, y0 + band);
#pragma omp parallel for schedule(dynamic, 1) num_threads(c->threads)
    for (int y = y0; y < y1; ++y) {
      float* s = c->scratch + (size_t)lull_thread_index() * per_thread;
      for (int x = 0; x < pl->width; ++x)
        lull_ddid_pixel(pl, st, er, ei, x, y, s);
    }
    const lull_status status = lull_progress_span_report(span, (double)y1 / h, err);
    if (status != LULL_OK)
      return status;
  }
  return LULL_OK;
}

lull_status lull_ddid_cpu(const lull_ddid_params* params, const lull_ddid_images* images,
                          int num_threads, const lull_progress* progress, lull_error* err)
{
  lull_status status = lull_ddid_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const int threads = lull_thread_count(num_threads);
  const int w = images->output.width, h = images->output.height;
  const int halves = lull_regression_has_halves(images);
  const lull_image* color = halves ? &images->color_a : &images->color;
  float scale = 1.0f;
  status = lull_fp_color_scale(images, params->input_scale, params->srgb, threads, &scale, err);
  if (status != LULL_OK)
    return status;
  const size_t n = (size_t)w * (size_t)h;
  float* block = malloc(lull_ddid_cpu_memory(params, w, h, threads));
  if (!block)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  float* P[P_COUNT];
  for (int k = 0; k < P_COUNT; ++k)
    P[k] = block + (size_t)k * n;
  const int r = lull_ddid_params_step(params, 1).radius;
  float* twiddles = block + (size_t)P_COUNT * n;
  float* scratch = twiddles + 2 * (size_t)(2 * r + 1) * (size_t)(2 * r + 1);

  cpu_steps steps = {twiddles, scratch, threads};
  const lull_ddid_ops ops = {&steps, cpu_step, cpu_pixels};
  load(params, images, scale, &ops, P, threads);
  to_dct(P, n, threads);
  lull_ddid_state state;
  lull_ddid_state_init(&state, images, w, h, P);
  status = lull_ddid_iterate(&ops, params, &state, progress, err);
  if (status == LULL_OK) {
    const float inv = 1.0f / scale;
    const int nc = lull_format_channels(images->output.format);
    const int color_channels = lull_format_channels(color->format);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const size_t i = (size_t)y * (size_t)w + (size_t)x;
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        const float g[3] = {state.result[0][i], state.result[1][i], state.result[2][i]};
        lull_ddid_from_dct(g, v);
        for (int c = 0; c < 3; ++c)
          v[c] = lull_reg_color_out(v[c], inv, params->hdr, params->srgb);
        if (nc == 4 && color_channels == 4)
          v[3] = P[P_ALPHA][i];
        lull_image_store_n(&images->output, x, y, v, LULL_MIN(nc, color_channels == 4 ? 4 : 3));
      }
  }
  free(block);
  if (status != LULL_OK)
    return status;
  return lull_progress_report(progress, 1.0, err);
}
