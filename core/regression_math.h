/* Per-pixel formulas of the "Regression" filter, shared by the CPU backend
 * (regression_cpu.c) and the CUDA kernels (cuda/regression_kernels.cuh).
 *
 * The filter is a weighted first-order regression of the colour on the
 * features over a window around each pixel, after NFOR (Bitterli, Rousselle,
 * Moon, Iglesias-Guitian, Adler, Mitchell, Jarosz and Novak 2016,
 * "Nonlinearly Weighted First-order Regression for Denoising Monte Carlo
 * Renderings"): the weights are NL-means weights on a colour guide only
 * (§5.2: feature weights help zero-order models but hurt first-order ones,
 * which model the features' influence themselves), the design row of a
 * neighbour q of the centre p is
 *
 *     x_q = [1, (q_x - p_x) / R, (q_y - p_y) / R, f_q - f_p]
 *
 * (the screen offset and the features, centred on the centre's), and the
 * coefficients minimise sum_q w_pq || y_q - x_q^T beta_p ||^2 (eq. 4-5).
 * Each fit predicts every pixel of its window; a pixel's result is the
 * weighted mean of the predictions of all windows that hold it (§5.2,
 * "collaborative filtering").  See regression.h for the whole run. */
#pragma once

#include <math.h>

#include "atrous_math.h"
#include "image.h"
#include "nlmeans_math.h"
#include "platform.h"

enum
{
  /* feature channels: albedo 3, normal 3, depth 1 or position 3 */
  LULL_REG_MAX_FEATURES = 9,
  /* columns of the design row: constant, screen x and y, features */
  LULL_REG_MAX_COLUMNS = 3 + LULL_REG_MAX_FEATURES,
  /* entries of the upper triangle of X^T W X */
  LULL_REG_MAX_GRAM = LULL_REG_MAX_COLUMNS * (LULL_REG_MAX_COLUMNS + 1) / 2,
  /* channels regressed at once: colour and what else shares its fits */
  LULL_REG_MAX_Y = 6,
  /* bandwidths (NL-means k) tried at once */
  LULL_REG_MAX_BANDWIDTHS = 2,
};

/* Loops over a row's columns, fully unrolled in the CUDA kernels (whose
 * column count is a compile-time constant, so the normal equations stay in
 * registers); no effect on the CPU. */
#if defined(__CUDA_ARCH__)
  #define LULL_REG_UNROLL _Pragma("unroll")
#else
  #define LULL_REG_UNROLL
#endif

/* -- NL-means weights ------------------------------------------------------ */

/* One pixel pair's term of the patch distance over the guide's nc
 * channels: the mean over the channels of the normalised distance of
 * eq. 3.7 at k = 1, (u_p - u_q)^2 - (V_p + V_q) over V_p + V_q (the
 * bandwidth divides the patch mean later: lull_reg_weight, so one term
 * serves every bandwidth).  The patch distance of a pair of centres is the
 * mean of these terms over the patch (Rousselle et al. 2012).  Each term
 * is at least -1 (equal values), so one pixel of huge variance (a firefly
 * in a half, whose two-buffer variance is then huge) moves the patch mean
 * by little: a ratio of the patch's summed excess and summed variance
 * instead let one such pixel turn every pair of patches that held it into
 * a match (every weight 1 around a firefly of dof_glossy). */
LULL_HD float lull_reg_pair_term(const float* gp, const float* gq, const float* vp,
                                 const float* vq, int nc)
{
  float d = 0.0f;
  LULL_REG_UNROLL
  for (int c = 0; c < nc; ++c)
    d += lull_nlm_distance(gp[c], gq[c], vp[c], vq[c], 1.0f);
  return d / (float)nc;
}

/* The NL-means weight of a pair from its patch distance D at k = 1 and
 * the bandwidth k (eq. 3.8 of Vicini 2015): exp(-max(0, D / k^2)), by the
 * branch-free exponential both backends share (lull_exp_neg), so that the
 * CPU's rows of weights vectorise. */
LULL_HD float lull_reg_weight(float distance, float k)
{
  return lull_exp_neg(LULL_MAX(0.0f, distance / (k * k)));
}

/* -- the regression ---------------------------------------------------------- */

/* Design row of neighbour q of centre p (eq. 4): offset (dx, dy) = q - p in
 * units of the window radius, features centred on the centre's. */
LULL_HD int lull_reg_row(int dx, int dy, float inv_radius, const float* fp, const float* fq,
                         int nf, float* x)
{
  x[0] = 1.0f;
  x[1] = (float)dx * inv_radius;
  x[2] = (float)dy * inv_radius;
  LULL_REG_UNROLL
  for (int j = 0; j < nf; ++j)
    x[3 + j] = fq[j] - fp[j];
  return 3 + nf;
}

/* Index of entry (i, j), i <= j, of the packed upper triangle of an n x n
 * symmetric matrix stored row by row. */
LULL_HD int lull_reg_packed(int i, int j, int n)
{
  return i * n - i * (i - 1) / 2 + (j - i);
}

/* Adds w x x^T to the Gram matrix (packed) and w x y^T to the right-hand
 * sides rhs[c * n + i] of the nc channels of y. */
LULL_HD void lull_reg_accumulate(float* gram, float* rhs, const float* x, int n, float w,
                                 const float* y, int nc)
{
  int e = 0;
  LULL_REG_UNROLL
  for (int i = 0; i < n; ++i) {
    const float wx = w * x[i];
    LULL_REG_UNROLL
    for (int j = i; j < n; ++j)
      gram[e++] += wx * x[j];
    LULL_REG_UNROLL
    for (int c = 0; c < nc; ++c)
      rhs[c * n + i] += wx * y[c];
  }
}

/* Solves the normal equations (X^T W X + ridge) beta = X^T W y of nc
 * channels, beta[c * n + i], by Cholesky in place of a copy, and returns
 * the diagonal entry (0, 0) of the inverse, which is the regression's
 * weight of the centre's own value in its intercept (the "hat" value of the
 * centre, whose weight is 1).  The ridge adds ridge * sum w to the
 * diagonal of the non-constant columns (features are of order 1, so it is
 * relative to the window's weight): it keeps windows whose features are
 * nearly collinear or constant regular, and shrinks their slopes towards
 * the window's mean rather than letting noise fit them.  A matrix that is
 * not positive definite even so (a window of one weighted pixel: sum w
 * only) falls back to the weighted mean, returning 1 / sum w. */
LULL_HD float lull_reg_solve(const float* gram, const float* rhs, int n, int nc, float ridge,
                             float* beta)
{
  float l[LULL_REG_MAX_COLUMNS * LULL_REG_MAX_COLUMNS];
  const float s0 = gram[0];
  int ok = s0 > 0.0f;
  for (int j = 0; j < n && ok; ++j) {
    for (int i = j; i < n; ++i) {
      float s = gram[lull_reg_packed(j, i, n)];
      if (i == j && j > 0)
        s += ridge * s0;
      for (int k = 0; k < j; ++k)
        s -= l[i * n + k] * l[j * n + k];
      if (i == j) {
        if (!(s > 1e-7f * s0)) {
          ok = 0;
          break;
        }
        l[j * n + j] = sqrtf(s);
      } else {
        l[i * n + j] = s / l[j * n + j];
      }
    }
  }
  if (!ok) {
    const float inv = s0 > 0.0f ? 1.0f / s0 : 0.0f;
    for (int c = 0; c < nc; ++c) {
      beta[c * n] = rhs[c * n] * inv;
      for (int i = 1; i < n; ++i)
        beta[c * n + i] = 0.0f;
    }
    return inv;
  }
  for (int c = 0; c < nc; ++c) {
    float* b = beta + c * n;
    for (int i = 0; i < n; ++i) { /* L z = rhs */
      float s = rhs[c * n + i];
      for (int k = 0; k < i; ++k)
        s -= l[i * n + k] * b[k];
      b[i] = s / l[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) { /* L^T beta = z */
      float s = b[i];
      for (int k = i + 1; k < n; ++k)
        s -= l[k * n + i] * b[k];
      b[i] = s / l[i * n + i];
    }
  }
  /* (A^-1)_00 = || L^-1 e_0 ||^2: solve L z = e_0 */
  float z[LULL_REG_MAX_COLUMNS];
  float h = 0.0f;
  for (int i = 0; i < n; ++i) {
    float s = i == 0 ? 1.0f : 0.0f;
    for (int k = 0; k < i; ++k)
      s -= l[i * n + k] * z[k];
    z[i] = s / l[i * n + i];
    h += z[i] * z[i];
  }
  return h;
}

/* The prediction x^T beta of one channel. */
LULL_HD float lull_reg_predict(const float* beta, const float* x, int n)
{
  float s = 0.0f;
  LULL_REG_UNROLL
  for (int i = 0; i < n; ++i)
    s += beta[i] * x[i];
  return s;
}

/* A prediction held within [lo, hi], the range of the values its fit saw
 * (with weight above LULL_REG_RANGE_WEIGHT).  Why: a first-order fit
 * extrapolates along its feature slopes, and where the features are noisy
 * (depth of field blurs albedo and normal into mixtures) a fit with a steep
 * slope predicted values far outside its window's data, which the
 * collaborative mean spread as a bright or black square of the window's
 * size.  A local model's prediction has no business beyond the data it
 * was fitted to. */
#define LULL_REG_RANGE_WEIGHT 0.05f
LULL_HD float lull_reg_hold(float v, float lo, float hi)
{
  return lo <= hi ? LULL_MIN(LULL_MAX(v, lo), hi) : v;
}

/* -- inputs ------------------------------------------------------------------ */

/* The colour guide of the weights: log(1 + max(0, v)) of the (scaled)
 * colour.  Why: bright, rarely sampled highlights have a huge variance, and
 * NL-means normalises distances by the variance, so in linear units such a
 * pixel matched any neighbour and spread into it; in log units its
 * variance is bounded by its relative noise (dof_glossy at 16 spp: relMSE
 * 0.061 -> 0.036, the others unchanged).  Only the weights see the log:
 * the regression fits the linear colour, so the result stays unbiased. */
LULL_HD float lull_reg_log_guide(float v)
{
  return logf(1.0f + LULL_MAX(0.0f, v));
}

/* The depth feature: depth over the image's mean depth, at most 64 (the
 * background's 1e10 of Cycles' Z pass becomes a plain step).  Why linear:
 * shading varies smoothly with position, which depth (with the screen
 * offset) spans locally; log depth bent it (cornell at 16 spp: 0.00078 ->
 * 0.00060 with the ridge below). */
LULL_HD float lull_reg_depth_feature(float depth, float inv_mean)
{
  const float d = depth * inv_mean;
  return d < 64.0f ? d : 64.0f; /* NaN and inf: 64 */
}

/* The level above which a pixel's luminance is a firefly (§ "fireflies" in
 * regression.h): tau times the 75th percentile of the luminances around
 * it, plus z standard deviations of the noise there (from the median of
 * the two-buffer variances around it, which a few outliers do not move;
 * the median of a chi-square of one degree of freedom is 0.455 of its
 * mean). */
LULL_HD float lull_reg_firefly_level(float p75, float median_variance, float tau, float z)
{
  return tau * p75 + z * sqrtf(median_variance / 0.455f);
}

/* -- constants of a run, shared by the backends' schedules ------------------
 *
 * (regression.h says what each step does; docs/regression.md how each
 * value was measured.) */
enum
{
  /* fireflies of the halves: 5x5 against both halves, 2 p75 + 12 sigma */
  LULL_REG_FIREFLY_RADIUS_HALVES = 2,
  /* of one buffer: 7x7 against itself, 2 p75, isolated (at most 20
   * candidates in the 15x15 window) */
  LULL_REG_FIREFLY_RADIUS_ONE = 3,
  LULL_REG_FIREFLY_ISOLATED_ONE = 20,
  LULL_REG_FIREFLY_ISOLATION_RADIUS = 7,
  /* the variance of the halves' log guides: over 3x3 */
  LULL_REG_GUIDE_VARIANCE_RADIUS = 1,
  /* prefiltering of feature halves (§5.1; NFOR's F = 3, R = 5, k = 0.5) */
  LULL_REG_PREFILTER_RADIUS = 5,
  LULL_REG_PREFILTER_PATCH = 3,
  /* smoothing of the error estimates and the choice (§5.3; NFOR's F = 1,
   * R = 9, k = 1) */
  LULL_REG_SELECT_RADIUS = 9,
  LULL_REG_SELECT_PATCH = 1,
  /* one buffer: the pilot's residual averaged over 5x5 */
  LULL_REG_ONE_VARIANCE_RADIUS = 2,
};
#define LULL_REG_FIREFLY_TAU 2.0f
#define LULL_REG_FIREFLY_Z_HALVES 12.0f
#define LULL_REG_PREFILTER_K 0.5f
#define LULL_REG_SELECT_K 1.0f
/* one buffer: the guide's variance is a quarter of the colour's (the pilot
 * is far less noisy than the colour, but its noise is not independent of
 * it) */
#define LULL_REG_ONE_GUIDE_VARIANCE 0.25f
/* ... and at most this (log units): the residual against the pilot is no
 * noise estimate at a strong edge, where the pilot is smooth and the colour
 * is not; there it had reached 1e3 in a ring around a bright 10x10 block,
 * whose pixels then matched any other and the block lost half its value. */
#define LULL_REG_ONE_GUIDE_VARIANCE_MAX 1.0f

/* -- per-pixel steps around the regression ------------------------------------ */

/* A colour channel as the filter works on it: negative values read as 0
 * when nonnegative (RT, as OIDN sanitizes its input), linearised when sRGB
 * (clamped to [0, 1] first), times the input scale.  NaN stays NaN, for
 * the repair. */
LULL_HD float lull_reg_color_in(float v, float scale, int srgb, int nonnegative)
{
  if (nonnegative && v < 0.0f)
    v = 0.0f;
  if (srgb)
    v = lull_srgb_to_linear(LULL_MIN(LULL_MAX(v, 0.0f), 1.0f));
  return v * scale;
}

/* A result channel as stored: the scale undone (inv = 1 / scale), held in
 * the float range, and for LDR colour clamped to [0, 1] and encoded. */
LULL_HD float lull_reg_color_out(float v, float inv, int hdr, int srgb)
{
  float o = lull_hold_in_range(v * inv);
  if (!hdr) {
    o = LULL_MIN(LULL_MAX(o, 0.0f), 1.0f);
    if (srgb)
      o = lull_linear_to_srgb(o);
  }
  return o;
}

/* A position channel as a feature: about the centroid c, over the mean
 * distance to it (inv = 1 / that), held within [-64, 64] (NaN stays NaN,
 * for the repair). */
LULL_HD float lull_reg_position_feature(float v, float c, float inv)
{
  const float f = (v - c) * inv;
  return f > 64.0f ? 64.0f : (f < -64.0f ? -64.0f : f);
}

/* The luminance the firefly test ranks: the channels' mean, at least 0. */
LULL_HD float lull_reg_firefly_luminance(float r, float g, float b)
{
  return LULL_MAX(0.0f, (r + g + b) * (1.0f / 3.0f));
}

/* Var of one half from the two: E[(a - b)^2] / 2. */
LULL_HD float lull_reg_half_variance(float a, float b)
{
  const float d = a - b;
  return 0.5f * d * d;
}

/* One buffer: the guide's variance from the colour's variance v and the
 * pilot's value (the guide is log(1 + pilot), whose derivative is
 * 1 / (1 + pilot)). */
LULL_HD float lull_reg_one_guide_variance(float v, float pilot)
{
  const float pv = LULL_MAX(0.0f, pilot);
  const float g = LULL_REG_ONE_GUIDE_VARIANCE * v / ((1.0f + pv) * (1.0f + pv));
  return LULL_MIN(g, LULL_REG_ONE_GUIDE_VARIANCE_MAX);
}

/* A given variance as the filter uses it: scaled by the input scale's
 * square s2; a negative value asks for the filter's own estimate est
 * (temporal mode's LULL_TEMPORAL_ESTIMATE where the history has no
 * moments yet); 0 where not finite. */
LULL_HD float lull_reg_variance_in(float v, float s2, float est)
{
  if (v < 0.0f)
    return est;
  const float s = v * s2;
  return (s - s) == 0.0f && s > 0.0f ? s : 0.0f; /* s - s: NaN for NaN and inf */
}

/* The bandwidth choice of a pixel and channel (§5.3): 0 where the first
 * candidate's smoothed error is at most the second's, else 1; the choices
 * are smoothed in turn and blend the candidates (lull_reg_blend). */
LULL_HD float lull_reg_choice(float error0, float error1)
{
  return error0 <= error1 ? 0.0f : 1.0f;
}

LULL_HD float lull_reg_blend(float t, float x0, float x1)
{
  return (1.0f - t) * x0 + t * x1;
}
