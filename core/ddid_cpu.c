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
#include "poisson_solver.h"
#include "rdfc_math.h"
#include "regression_math.h"
#include "threads.h"

/* Working planes. */
enum
{
  P_A = 0,      /* colour A, or the one buffer */
  P_B = 3,      /* colour B */
  P_Y = 6,      /* the noisy colour, DCT space */
  P_V = 9,      /* its variance */
  P_G = 12,     /* the guide */
  P_GN = 15,    /* the next guide */
  P_TMP = 18,   /* 6 planes of scratch */
  P_ALPHA = 24, /* the 4th colour channel */
  P_F = 25,     /* features (A, or given once), up to 9 */
  P_FB = 34,    /* features of B */
  P_COUNT = 43,
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

static lull_ddid_step step_of(const lull_ddid_params* p, int n)
{
  return lull_ddid_step_of(n, p->iterations, p->sigma_spatial, p->range, p->frequency,
                           p->log_alpha);
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
  return params->iterations * step_of(params, 1).radius + 3;
}

size_t lull_ddid_cpu_memory(const lull_ddid_params* params, int width, int height,
                            int num_threads)
{
  const int r = step_of(params, 1).radius;
  const size_t W = (size_t)(2 * r + 1);
  const size_t per_thread = lull_ddid_pixel_scratch(r);
  return ((size_t)P_COUNT * (size_t)width * (size_t)height + 2 * W * W +
          per_thread * (size_t)lull_thread_count(num_threads)) *
         sizeof(float);
}

/* A per-pixel step of rdfc_math.h over the image (its blurs and boxes). */
static void rdfc_step(const lull_rdfc_pixels* a, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < a->height; ++y)
    for (int x = 0; x < a->width; ++x)
      lull_rdfc_pixel_body(a, x, y);
}

/* The halves' variance without a given one: 1/4 (A - B)^2 blurred by
 * TWOBUFFERVAR's Gaussian and averaged over RDFC's box, into P_V. */
static void halves_variance(float* const* P, int w, int h, int threads)
{
  lull_rdfc_pixels a;
  memset(&a, 0, sizeof a);
  a.width = w;
  a.height = h;
  a.channels = 3;
  a.kind = LULL_RDFC_TWO_BUFFER_H;
  for (int c = 0; c < 3; ++c) {
    a.src[c] = P[P_A + c];
    a.src2[c] = P[P_B + c];
    a.dst[c] = P[P_TMP + c];
  }
  rdfc_step(&a, threads);
  a.kind = LULL_RDFC_BLUR_V;
  for (int c = 0; c < 3; ++c) {
    a.src[c] = P[P_TMP + c];
    a.dst[c] = P[P_TMP + 3 + c];
  }
  rdfc_step(&a, threads);
  a.kind = LULL_RDFC_BOX;
  a.radius = 2;
  for (int c = 0; c < 3; ++c) {
    a.src[c] = P[P_TMP + 3 + c];
    a.dst[c] = P[P_V + c];
  }
  rdfc_step(&a, threads);
}

/* The inputs into P: colour into P_A (the halves' mean with halves),
 * variance into P_V (RGB), features into P_F, the 4th channel. */
static void load(const lull_ddid_params* params, const lull_ddid_images* im, float scale,
                 float* const* P, int threads)
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
      halves_variance(P, w, h, threads);
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

/* Colour and variance to the DCT colour space (eq. 4.11-4.12): y into
 * P_Y and P_G (the first guide), the variance of each DCT channel (the
 * channels' noise taken as independent) in place. */
static void to_dct(float* const* P, size_t n, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long long i = 0; i < (long long)n; ++i) {
    float u[3], v[3];
    for (int c = 0; c < 3; ++c) {
      u[c] = P[P_A + c][i];
      v[c] = P[P_V + c][i];
    }
    for (int k = 0; k < 3; ++k) {
      float s = 0.0f, sv = 0.0f;
      for (int c = 0; c < 3; ++c) {
        const float m = lull_ddid_dct(k, c);
        s += m * u[c];
        sv += m * m * v[c];
      }
      P[P_Y + k][i] = s;
      P[P_G + k][i] = s;
      P[P_V + k][i] = sv;
    }
  }
}

/* The iterations of §4.3 on P_Y, P_V from the guide P_G; the result in
 * P_G.  Progress by the work done (the windows' cubes). */
static lull_status iterate(const lull_ddid_params* params, int nf, float* const* P, int w, int h,
                           float* twiddles, float* scratch, int threads,
                           const lull_progress* progress, lull_error* err)
{
  double total = 0.0, done = 0.0;
  for (int n = params->iterations; n >= 1; --n) {
    const double W = 2.0 * step_of(params, n).radius + 1.0;
    total += W * W * W;
  }
  const float* g[3] = {P[P_G], P[P_G + 1], P[P_G + 2]};
  float* out[3] = {P[P_GN], P[P_GN + 1], P[P_GN + 2]};
  for (int n = params->iterations; n >= 1; --n) {
    const lull_ddid_step st = step_of(params, n);
    const int W = 2 * st.radius + 1;
    float* er = twiddles;
    float* ei = twiddles + (size_t)W * (size_t)W;
    lull_ddid_twiddles(st.radius, er, ei);
    lull_ddid_planes pl;
    memset(&pl, 0, sizeof pl);
    pl.width = w;
    pl.height = h;
    for (int c = 0; c < 3; ++c) {
      pl.g[c] = g[c];
      pl.y[c] = P[P_Y + c];
      pl.v[c] = P[P_V + c];
      pl.out[c] = out[c];
    }
    pl.nf = params->k_feature > 0.0f ? nf : 0;
    for (int c = 0; c < pl.nf; ++c)
      pl.f[c] = P[P_F + c];
    pl.inv_2kf2 = pl.nf ? 1.0f / (2.0f * params->k_feature * params->k_feature) : 0.0f;
    const size_t per_thread = lull_ddid_pixel_scratch(st.radius);
    /* rows between progress reports: a band of about 2% of the image */
    const int band = LULL_MAX(1, h / 50);
    const lull_progress_span span = {progress, done / total,
                                     (done + (double)W * W * W) / total};
    for (int y0 = 0; y0 < h; y0 += band) {
      const int y1 = LULL_MIN(h, y0 + band);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
      for (int y = y0; y < y1; ++y) {
        float* s = scratch + (size_t)lull_thread_index() * per_thread;
        for (int x = 0; x < w; ++x)
          lull_ddid_pixel(&pl, &st, er, ei, x, y, s);
      }
      const lull_status status = lull_progress_span_report(&span, (double)y1 / h, err);
      if (status != LULL_OK)
        return status;
    }
    done += (double)W * W * W;
    for (int c = 0; c < 3; ++c) {
      float* t = (float*)g[c];
      g[c] = out[c];
      out[c] = t;
    }
  }
  /* the result where P_G's planes are */
  for (int c = 0; c < 3; ++c)
    if (g[c] != P[P_G + c])
      memcpy(P[P_G + c], g[c], (size_t)w * (size_t)h * sizeof(float));
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
  const int r = step_of(params, 1).radius;
  float* twiddles = block + (size_t)P_COUNT * n;
  float* scratch = twiddles + 2 * (size_t)(2 * r + 1) * (size_t)(2 * r + 1);

  load(params, images, scale, P, threads);
  to_dct(P, n, threads);
  const lull_regression_features fa = lull_regression_half_features(images, 0);
  status = iterate(params, lull_regression_feature_channels(&fa), P, w, h, twiddles, scratch,
                   threads, progress, err);
  if (status == LULL_OK) {
    const float inv = 1.0f / scale;
    const int nc = lull_format_channels(images->output.format);
    const int color_channels = lull_format_channels(color->format);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const size_t i = (size_t)y * (size_t)w + (size_t)x;
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int c = 0; c < 3; ++c) {
          float s = 0.0f; /* the inverse DCT: the transpose */
          for (int k = 0; k < 3; ++k)
            s += lull_ddid_dct(k, c) * P[P_G + k][i];
          v[c] = lull_reg_color_out(s, inv, params->hdr, params->srgb);
        }
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
