/* The RDFC run (rdfc.h, steps 1-5 of Vicini 2015 §3.5) as a sequence of
 * FEATUREFILTER passes and per-pixel steps, which each backend runs its
 * own way (rdfc_cpu.c on OpenMP, cuda/rdfc_cuda.cu as kernels): the order
 * of the steps and what each reads and writes is written once, here. */
#include <string.h>

#include "rdfc.h"

typedef struct rdfc_step
{
  const lull_rdfc_ops* ops;
  int width, height;
  float* const* P;
} rdfc_step;

static lull_rdfc_pixels step_of(const rdfc_step* s, int kind, int channels)
{
  lull_rdfc_pixels a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  a.width = s->width;
  a.height = s->height;
  a.channels = channels;
  return a;
}

static lull_rdfc_pass pass_of(const rdfc_step* s)
{
  lull_rdfc_pass p;
  memset(&p, 0, sizeof p);
  p.width = s->width;
  p.height = s->height;
  return p;
}

static lull_status pixels(const rdfc_step* s, const lull_rdfc_pixels* a, lull_error* err)
{
  return s->ops->pixels(s->ops->ctx, a, err);
}

/* Planes dst..dst+n = a binary step of planes a.., b.. */
static lull_status binary(const rdfc_step* s, int kind, int dst, int a, int b, int n,
                          lull_error* err)
{
  lull_rdfc_pixels p = step_of(s, kind, n);
  for (int c = 0; c < n; ++c) {
    p.src[c] = s->P[a + c];
    p.src2[c] = b >= 0 ? s->P[b + c] : NULL;
    p.dst[c] = s->P[dst + c];
  }
  return pixels(s, &p, err);
}

/* TWOBUFFERVAR: dst = 1/4 (a - b)^2 blurred by the Gaussian of sigma 0.5
 * (n planes; scratch: n planes at tmp). */
static lull_status two_buffer_variance(const rdfc_step* s, int dst, int a, int b, int n, int tmp,
                                       lull_error* err)
{
  lull_status status = binary(s, LULL_RDFC_TWO_BUFFER_H, tmp, a, b, n, err);
  if (status == LULL_OK)
    status = binary(s, LULL_RDFC_BLUR_V, dst, tmp, -1, n, err);
  return status;
}

static lull_status box(const rdfc_step* s, int dst, int src, int n, int radius, lull_error* err)
{
  lull_rdfc_pixels p = step_of(s, LULL_RDFC_BOX, n);
  p.radius = radius;
  for (int c = 0; c < n; ++c) {
    p.src[c] = s->P[src + c];
    p.dst[c] = s->P[dst + c];
  }
  return pixels(s, &p, err);
}

/* Step 1: the colour guide and its variance. */
static lull_status color_variance(const rdfc_step* s, const lull_rdfc_images* im, int halves,
                                  lull_error* err)
{
  enum { CA = LULL_RDFC_P_CA, CB = LULL_RDFC_P_CB, C = LULL_RDFC_P_C, CV = LULL_RDFC_P_CV,
         GIVEN = LULL_RDFC_P_GIVEN, TMP = LULL_RDFC_P_TMP };
  if (!halves) {
    lull_status status = binary(s, LULL_RDFC_COPY, C, CA, -1, 3, err);
    if (status == LULL_OK)
      status = binary(s, LULL_RDFC_COPY, CV, GIVEN, -1, 3, err);
    return status;
  }
  lull_status status = binary(s, LULL_RDFC_MEAN, C, CA, CB, 3, err);
  if (status != LULL_OK)
    return status;
  if (!im->variance.data) {
    /* no sample variance to scale: the two-buffer variance itself,
     * averaged over a box (one estimate a pixel is too noisy for the
     * weights' denominators: docs/rdfc.md) */
    status = two_buffer_variance(s, TMP + 3, CA, CB, 3, TMP, err);
    if (status == LULL_OK)
      status = box(s, CV, TMP + 3, 3, LULL_RDFC_VARIANCE_BOX, err);
    return status;
  }
  /* SCALESAMPLEVAR: the given variance, scaled by the ratio of the
   * two-buffer variance's and its own means over 21 x 21 boxes */
  status = binary(s, LULL_RDFC_SQUARED_HALF, TMP, CA, CB, 3, err);
  if (status == LULL_OK)
    status = box(s, TMP + 3, TMP, 3, LULL_RDFC_SCALE_RADIUS, err);
  if (status == LULL_OK)
    status = box(s, TMP, GIVEN, 3, LULL_RDFC_SCALE_RADIUS, err);
  if (status == LULL_OK) {
    lull_rdfc_pixels p = step_of(s, LULL_RDFC_SCALE, 3);
    for (int c = 0; c < 3; ++c) {
      p.src[c] = s->P[TMP + 3 + c];
      p.src2[c] = s->P[TMP + c];
      p.src3[c] = s->P[GIVEN + c];
      p.dst[c] = s->P[CV + c];
    }
    status = pixels(s, &p, err);
  }
  return status;
}

int lull_rdfc_feature_layout(const lull_rdfc_images* im, int feature_end[LULL_RDFC_MAX_FEATURES])
{
  const lull_regression_features fa = lull_regression_half_features(im, 0);
  const int channels[LULL_RDFC_MAX_FEATURES] = {
      fa.albedo->data ? 3 : 0, fa.normal->data ? 3 : 0,
      fa.depth->data ? 1 : (fa.position->data ? 3 : 0)};
  int nfeat = 0, end = 0;
  for (int j = 0; j < LULL_RDFC_MAX_FEATURES; ++j)
    if (channels[j]) {
      end += channels[j];
      feature_end[nfeat++] = end;
    }
  return nfeat;
}

/* Step 2: the feature guides, their variance and squared gradient;
 * feature halves prefiltered (§3.3.1). */
static lull_status feature_guides(const rdfc_step* s, const lull_rdfc_images* im,
                                  const lull_progress_span* span, lull_error* err)
{
  enum { FA = LULL_RDFC_P_FA, FB = LULL_RDFC_P_FB, F = LULL_RDFC_P_F, FV = LULL_RDFC_P_FV,
         FG = LULL_RDFC_P_FG, TMP = LULL_RDFC_P_TMP };
  int feature_end[LULL_RDFC_MAX_FEATURES];
  const int nfeat = lull_rdfc_feature_layout(im, feature_end);
  const int nf = nfeat ? feature_end[nfeat - 1] : 0;
  const int feature_halves = lull_regression_feature_halves(im);
  lull_status status = LULL_OK;
  for (int j = 0, c0 = 0; j < nfeat && status == LULL_OK; c0 = feature_end[j++]) {
    const int n = feature_end[j] - c0;
    if (!feature_halves || lull_regression_feature_shared(im, c0)) {
      /* given once: taken as noise-free */
      status = binary(s, LULL_RDFC_COPY, F + c0, FA + c0, -1, n, err);
      if (status == LULL_OK)
        status = binary(s, LULL_RDFC_SQUARED_HALF, FV + c0, FA + c0, FA + c0, n, err);
      continue;
    }
    /* the guide: the mean of the halves, its variance theirs; then the
     * halves filtered by NL-means, and the same of the filtered halves */
    status = binary(s, LULL_RDFC_MEAN, F + c0, FA + c0, FB + c0, n, err);
    if (status == LULL_OK)
      status = two_buffer_variance(s, FV + c0, FA + c0, FB + c0, n, TMP, err);
    lull_rdfc_pass p = pass_of(s);
    p.nb = 2;
    p.nu = n;
    p.use_color = 1;
    p.gc = n;
    p.patch = LULL_RDFC_PREFILTER_PATCH;
    p.kc2 = LULL_RDFC_PREFILTER_K * LULL_RDFC_PREFILTER_K;
    p.radius = LULL_RDFC_PREFILTER_RADIUS;
    for (int c = 0; c < n; ++c) {
      p.u[0][c] = s->P[FA + c0 + c];
      p.u[1][c] = s->P[FB + c0 + c];
      p.g[c] = s->P[F + c0 + c];
      p.gv[c] = s->P[FV + c0 + c];
      p.out[0][c] = s->P[TMP + c];
      p.out[1][c] = s->P[TMP + 3 + c];
    }
    const lull_progress_span sub =
        lull_progress_subspan(span, (double)c0 / nf, (double)feature_end[j] / nf);
    if (status == LULL_OK)
      status = s->ops->pass(s->ops->ctx, &p, &sub, err);
    if (status == LULL_OK)
      status = binary(s, LULL_RDFC_MEAN, F + c0, TMP, TMP + 3, n, err);
    /* the filtered halves move into the halves' planes, which are done */
    if (status == LULL_OK)
      status = binary(s, LULL_RDFC_COPY, FA + c0, TMP, -1, n, err);
    if (status == LULL_OK)
      status = binary(s, LULL_RDFC_COPY, FB + c0, TMP + 3, -1, n, err);
    if (status == LULL_OK)
      status = two_buffer_variance(s, FV + c0, FA + c0, FB + c0, n, TMP, err);
  }
  if (status == LULL_OK && nf)
    status = binary(s, LULL_RDFC_GRADIENT, FG, F, -1, nf, err);
  return status;
}

/* A filter of three planes (errors, selection maps) guided by the colour
 * (k_c 1, no features): NL-means. */
static lull_status smooth_planes(const rdfc_step* s, int src, int dst, int patch, int radius,
                                 const lull_progress_span* span, lull_error* err)
{
  lull_rdfc_pass p = pass_of(s);
  p.nb = 1;
  p.nu = 3;
  p.use_color = 1;
  p.gc = 3;
  p.patch = patch;
  p.kc2 = 1.0f;
  p.radius = radius;
  for (int c = 0; c < 3; ++c) {
    p.u[0][c] = s->P[src + c];
    p.g[c] = s->P[LULL_RDFC_P_C + c];
    p.gv[c] = s->P[LULL_RDFC_P_CV + c];
    p.out[0][c] = s->P[dst + c];
  }
  return s->ops->pass(s->ops->ctx, &p, span, err);
}

lull_status lull_rdfc_run(const lull_rdfc_ops* ops, const lull_rdfc_params* params,
                          const lull_rdfc_images* im, int width, int height, float* const* P,
                          const lull_progress_span* span, lull_error* err)
{
  const rdfc_step st = {ops, width, height, P};
  const rdfc_step* s = &st;
  const int halves = lull_regression_has_halves(im);
  const int nb = halves ? 2 : 1;
  int feature_end[LULL_RDFC_MAX_FEATURES];
  const int nfeat = lull_rdfc_feature_layout(im, feature_end);
  const int nf = nfeat ? feature_end[nfeat - 1] : 0;

  lull_status status = color_variance(s, im, halves, err);
  lull_progress_span sub = lull_progress_subspan(span, 0.0, 0.15);
  if (status == LULL_OK)
    status = feature_guides(s, im, &sub, err);

  /* step 3: the candidates r, g, b */
  static const int patch[3] = {LULL_RDFC_PATCH_R, LULL_RDFC_PATCH_G, LULL_RDFC_PATCH_B};
  for (int k = 0; k < 3 && status == LULL_OK; ++k) {
    lull_rdfc_pass p = pass_of(s);
    p.nb = nb;
    p.nu = 3;
    p.use_color = k < 2;
    p.gc = 3;
    p.patch = patch[k];
    p.kc2 = params->k_color * params->k_color;
    p.nf = nf;
    p.nfeat = nfeat;
    memcpy(p.feature_end, feature_end, sizeof feature_end);
    p.kf2 = params->k_feature * params->k_feature;
    p.tau = k < 2 ? params->tau : 0.1f * params->tau;
    for (int c = 0; c < nf; ++c) {
      p.f[c] = P[LULL_RDFC_P_F + c];
      p.fv[c] = P[LULL_RDFC_P_FV + c];
      p.fg[c] = P[LULL_RDFC_P_FG + c];
    }
    p.radius = params->radius;
    for (int c = 0; c < 3; ++c) {
      p.u[0][c] = P[LULL_RDFC_P_CA + c];
      p.u[1][c] = P[LULL_RDFC_P_CB + c];
      p.uv[c] = P[LULL_RDFC_P_CV + c];
      p.g[c] = P[LULL_RDFC_P_C + c];
      p.gv[c] = P[LULL_RDFC_P_CV + c];
      p.out[0][c] = P[LULL_RDFC_P_CAND + 6 * k + c];
      p.out[1][c] = P[LULL_RDFC_P_CAND + 6 * k + 3 + c];
      if (!halves)
        p.out_var[c] = P[LULL_RDFC_P_OV + 3 * k + c];
    }
    p.sure = P[LULL_RDFC_P_SURE + k];
    p.derivative = P[LULL_RDFC_P_D + k];
    sub = lull_progress_subspan(span, 0.15 + 0.2 * k, 0.35 + 0.2 * k);
    status = ops->pass(ops->ctx, &p, &sub, err);
  }

  /* step 4: the errors smoothed, the selection, smoothed, the blend */
  sub = lull_progress_subspan(span, 0.75, 0.77);
  if (status == LULL_OK)
    status = smooth_planes(s, LULL_RDFC_P_SURE, LULL_RDFC_P_E, LULL_RDFC_SURE_PATCH,
                           LULL_RDFC_SURE_RADIUS, &sub, err);
  if (status == LULL_OK) {
    lull_rdfc_pixels a = step_of(s, LULL_RDFC_SELECT, 3);
    for (int c = 0; c < 3; ++c) {
      a.src[c] = P[LULL_RDFC_P_E + c];
      a.dst[c] = P[LULL_RDFC_P_SEL + c];
    }
    a.src2[0] = P[LULL_RDFC_P_D];
    a.src2[1] = P[LULL_RDFC_P_D + 1];
    status = pixels(s, &a, err);
  }
  sub = lull_progress_subspan(span, 0.77, 0.85);
  if (status == LULL_OK)
    status = smooth_planes(s, LULL_RDFC_P_SEL, LULL_RDFC_P_SEL + 3, LULL_RDFC_SELECT_PATCH,
                           LULL_RDFC_SELECT_RADIUS, &sub, err);
  if (status == LULL_OK) {
    lull_rdfc_pixels a = step_of(s, LULL_RDFC_BLEND, 3);
    a.flag = halves;
    for (int k = 0; k < 18; ++k)
      a.src[k] = P[LULL_RDFC_P_CAND + k];
    for (int k = 0; k < 9; ++k)
      a.src3[k] = P[LULL_RDFC_P_OV + k];
    for (int k = 0; k < 3; ++k)
      a.src2[k] = P[LULL_RDFC_P_SEL + 3 + k];
    for (int k = 0; k < 12; ++k)
      a.dst[k] = P[LULL_RDFC_P_PASS1 + k];
    status = pixels(s, &a, err);
  }
  if (status == LULL_OK && halves)
    status = two_buffer_variance(s, LULL_RDFC_P_PASS1 + 9, LULL_RDFC_P_PASS1,
                                 LULL_RDFC_P_PASS1 + 3, 3, LULL_RDFC_P_TMP, err);

  /* step 5: the second pass */
  if (status == LULL_OK && !params->second_pass) {
    status = binary(s, LULL_RDFC_COPY, LULL_RDFC_P_OUT, LULL_RDFC_P_PASS1, -1, 3 * nb, err);
    if (status == LULL_OK && !halves)
      status = binary(s, LULL_RDFC_COPY, LULL_RDFC_P_OUT + 6, LULL_RDFC_P_PASS1 + 9, -1, 3, err);
  } else if (status == LULL_OK) {
    lull_rdfc_pass p = pass_of(s);
    p.nb = nb;
    p.nu = 3;
    p.use_color = 1;
    p.gc = 3;
    p.patch = LULL_RDFC_SECOND_PATCH;
    p.kc2 = params->k_color * params->k_color;
    p.radius = params->radius / 2 > 1 ? params->radius / 2 : 1;
    for (int c = 0; c < 3; ++c) {
      p.u[0][c] = P[LULL_RDFC_P_PASS1 + c];
      p.u[1][c] = P[LULL_RDFC_P_PASS1 + 3 + c];
      p.uv[c] = P[LULL_RDFC_P_PASS1 + 9 + c];
      p.g[c] = P[LULL_RDFC_P_PASS1 + 6 + c];
      p.gv[c] = P[LULL_RDFC_P_PASS1 + 9 + c];
      p.out[0][c] = P[LULL_RDFC_P_OUT + c];
      p.out[1][c] = P[LULL_RDFC_P_OUT + 3 + c];
      if (!halves)
        p.out_var[c] = P[LULL_RDFC_P_OUT + 6 + c];
    }
    sub = lull_progress_subspan(span, 0.85, 1.0);
    status = ops->pass(ops->ctx, &p, &sub, err);
  }

  /* the result: the mean of the buffers, and its variance (halves: the
   * two-buffer variance of the second pass) */
  if (status != LULL_OK)
    return status;
  if (halves) {
    status = binary(s, LULL_RDFC_MEAN, LULL_RDFC_P_RESULT, LULL_RDFC_P_OUT, LULL_RDFC_P_OUT + 3, 3,
                    err);
    if (status == LULL_OK)
      status = two_buffer_variance(s, LULL_RDFC_P_RESULT + 3, LULL_RDFC_P_OUT, LULL_RDFC_P_OUT + 3,
                                   3, LULL_RDFC_P_TMP, err);
    return status;
  }
  status = binary(s, LULL_RDFC_COPY, LULL_RDFC_P_RESULT, LULL_RDFC_P_OUT, -1, 3, err);
  if (status == LULL_OK)
    status = binary(s, LULL_RDFC_COPY, LULL_RDFC_P_RESULT + 3, LULL_RDFC_P_OUT + 6, -1, 3, err);
  return status;
}
