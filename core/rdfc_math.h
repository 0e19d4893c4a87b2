/* Per-pixel formulas of the RDFC filter ("Robust Denoising using Feature
 * and Color information", Rousselle, Manzi and Zwicker 2013), as Vicini
 * 2015 ch. 3 describes and implements it, shared by the CPU backend
 * (rdfc_cpu.c) and the CUDA kernels (cuda/rdfc_kernels.cuh).  rdfc.h says
 * what a whole run does.
 *
 * Notation of the thesis: u the noisy value, Var its noise variance, k the
 * sensitivity (k_c for the colour, k_f for the features), p the centre,
 * q1 = p + o and q2 = p - o the two neighbours at offset +-o. */
#pragma once

#include <math.h>

#include "atrous_math.h"
#include "platform.h"

enum
{
  LULL_RDFC_MAX_FEATURES = 3,          /* albedo, normal, depth or position */
  LULL_RDFC_MAX_FEATURE_CHANNELS = 9,
  LULL_RDFC_CANDIDATES = 3,            /* r, g, b of §3.5 */
};

/* epsilon of eq. 3.7 and 3.10: keeps a distance of two noise-free values
 * finite. */
#define LULL_RDFC_EPSILON 1e-10f
/* d_max^2 of §3.2.4: the symmetric weight only counts where both
 * neighbours' own distances are below it. */
#define LULL_RDFC_SYMMETRIC_LIMIT 25.0f

/* min and max by comparison: one instruction each on both backends
 * (libm's fminf and fmaxf are calls on the CPU, kept for their NaN rules,
 * which nothing here needs: a NaN distance gives weight 1 either way) */
LULL_HD float lull_rdfc_min(float a, float b)
{
  return a < b ? a : b;
}

LULL_HD float lull_rdfc_max(float a, float b)
{
  return a > b ? a : b;
}

/* One channel's distance of a pair (eq. 3.7 for the colour, where
 * V = Var; eq. 3.10 for a feature, where V = max(tau, Var, |grad|^2)):
 * the squared difference less its expected noise, Var_p + min(Var_p,
 * Var_q) (the minimum keeps a noisier neighbour from blurring the centre:
 * biased, better, §3.2.2), over the noise scaled by k^2.  k2 = k^2. */
LULL_HD float lull_rdfc_term(float up, float uq, float var_p, float var_q, float v_p, float v_q,
                             float k2)
{
  const float d = up - uq;
  return (d * d - (var_p + lull_rdfc_min(var_p, var_q))) / (LULL_RDFC_EPSILON + k2 * (v_p + v_q));
}

/* The symmetric distance of eq. 3.9: the centre against the mean of its
 * two opposite neighbours, whose variance is a quarter of the sum, and
 * the shared part a quarter of the two minima. */
LULL_HD float lull_rdfc_symmetric_term(float up, float uq1, float uq2, float var_p, float var_q1,
                                       float var_q2, float v_p, float v_q1, float v_q2, float k2)
{
  const float d = up - 0.5f * (uq1 + uq2);
  const float shared = 0.25f * (lull_rdfc_min(var_p, var_q1) + lull_rdfc_min(var_p, var_q2));
  return (d * d - (var_p + shared)) / (LULL_RDFC_EPSILON + k2 * (v_p + 0.25f * (v_q1 + v_q2)));
}

/* The weight of a distance (eq. 3.8 and 3.12): exp(-max(D, 0)). */
LULL_HD float lull_rdfc_weight(float distance)
{
  return lull_exp_neg(lull_rdfc_max(distance, 0.0f));
}

/* The weights of q1 and q2 from their distances d1, d2 and the symmetric
 * distance ds (§3.2.4): the symmetric weight blends in, by
 * a = clamp(w_s / (w_1 + w_2) - 1, 0, 1), only where it exceeds the sum of
 * the two one-sided weights and both one-sided distances are below
 * d_max^2; both_inside 0 (one neighbour outside the image) leaves the
 * one-sided weights. */
LULL_HD void lull_rdfc_symmetric_weights(float d1, float d2, float ds, int both_inside, float* w1,
                                         float* w2)
{
  const float a1 = lull_rdfc_weight(d1), a2 = lull_rdfc_weight(d2);
  float a = 0.0f;
  if (both_inside && d1 < LULL_RDFC_SYMMETRIC_LIMIT && d2 < LULL_RDFC_SYMMETRIC_LIMIT) {
    const float s = lull_rdfc_weight(ds);
    a = lull_rdfc_min(1.0f, lull_rdfc_max(0.0f, s / (a1 + a2) - 1.0f));
    *w1 = a * s + (1.0f - a) * a1;
    *w2 = a * s + (1.0f - a) * a2;
    return;
  }
  *w1 = a1;
  *w2 = a2;
}

/* V of eq. 3.10: the feature's variance, but at least the squared
 * gradient (a centre on an edge of the feature is not held to it) and the
 * threshold tau (one noise-free feature would otherwise stop all
 * filtering). */
LULL_HD float lull_rdfc_feature_floor(float tau, float variance, float gradient2)
{
  return lull_rdfc_max(tau, lull_rdfc_max(variance, gradient2));
}

/* |grad f|^2 by central differences of the four neighbours' values (the
 * image's edge repeated at its border). */
LULL_HD float lull_rdfc_gradient2(float left, float right, float up, float down)
{
  const float gx = 0.5f * (right - left), gy = 0.5f * (down - up);
  return gx * gx + gy * gy;
}

/* SURE of one channel (eq. 3.15): (F - u)^2 - sigma^2 + 2 sigma^2 dF/du. */
LULL_HD float lull_rdfc_sure(float filtered, float noisy, float variance, float derivative)
{
  const float e = filtered - noisy;
  return e * e - variance + 2.0f * variance * derivative;
}

/* The step of eq. 3.16's finite difference: 1% of the value (values are
 * brought to a scale of order 1 first, so the floor only keeps the step of
 * a black pixel from being 0). */
LULL_HD float lull_rdfc_delta(float u)
{
  return 0.01f * lull_rdfc_max(fabsf(u), 1e-3f);
}

/* dF/du of eq. 3.16: the filter's result F = N / W at the centre, and
 * after the centre's value moved by delta: the neighbours' sums N1, W1
 * with the weights that move makes, plus the centre (weight 1) at
 * u + delta. */
LULL_HD float lull_rdfc_derivative(float filtered, float n1, float w1, float u, float delta)
{
  return ((n1 + u + delta) / (w1 + 1.0f) - filtered) / delta;
}

/* The binary selection maps of §3.5 (pseudocode lines 23-25) from the
 * filtered error estimates e and the derivative terms d of the three
 * candidates r (0), g (1) and b (2): the smallest error, but r (which
 * tends to keep noise) only where it also filters more than g (d_r <= d_g).
 * Exactly one of the three is 1. */
LULL_HD void lull_rdfc_select(const float e[3], float d_r, float d_g, float sel[3])
{
  const int r_filters_more = d_r <= d_g;
  sel[0] = (e[0] < e[1] && e[0] < e[2] && r_filters_more) ? 1.0f : 0.0f;
  sel[1] = (e[1] < e[2] && (e[1] <= e[0] || !r_filters_more)) ? 1.0f : 0.0f;
  sel[2] = (e[2] <= e[1] && (e[2] <= e[0] || !r_filters_more)) ? 1.0f : 0.0f;
}

/* Gaussian of standard deviation 0.5 (TWOBUFFERVAR, §3.5) on three taps:
 * the side taps' share; the centre has 1 - 2 side. */
#define LULL_RDFC_BLUR_SIDE 0.10650698f /* e^-2 / (1 + 2 e^-2) */

/* -- one FEATUREFILTER (§3.5), as both backends run it ------------------------ */

/* nb buffers of nu channels filtered over the window of radius `radius`
 * with the weights of the guide (colour weights, when use_color: patches
 * of radius `patch`) and the features (when nf > 0).  Planes of
 * width x height floats, row stride = width. */
typedef struct lull_rdfc_pass
{
  int width, height;
  int nb, nu;
  const float* u[2][3];   /* the data, per buffer */
  const float* uv[3];     /* the data's variance (one buffer, for out_var) */
  int use_color;
  int gc, patch;
  float kc2;              /* k_c^2 */
  const float* g[3];      /* the guide (the mean of the buffers) */
  const float* gv[3];     /* its variance */
  int nf;                 /* feature channels (0: no feature weights) */
  int nfeat;              /* features, and where each one's channels end */
  int feature_end[LULL_RDFC_MAX_FEATURES];
  float kf2, tau;
  const float* f[LULL_RDFC_MAX_FEATURE_CHANNELS];  /* the feature guides */
  const float* fv[LULL_RDFC_MAX_FEATURE_CHANNELS]; /* their variance */
  const float* fg[LULL_RDFC_MAX_FEATURE_CHANNELS]; /* their squared gradient */
  int radius;
  float* out[2][3];
  float* sure;            /* optional (the data are the guide's halves): SURE, eq. 3.15 */
  float* derivative;      /* with sure: the sum over channels of dF/du */
  float* out_var[3];      /* optional (one buffer): sum w^2 uv / (sum w)^2 */
} lull_rdfc_pass;

/* The colour terms of pixel i against i1 = i + o and i2 = i - o: the
 * channel means of the one-sided (eq. 3.7) and symmetric (eq. 3.9)
 * distances into t[0], t[1], t[2].  shift moves the centre's value of
 * channel shift_c (eq. 3.16's finite difference; shift_c -1: none). */
LULL_HD void lull_rdfc_color_terms(const lull_rdfc_pass* p, size_t i, size_t i1, size_t i2,
                                   float shift, int shift_c, float t[3])
{
  float s1 = 0.0f, s2 = 0.0f, ss = 0.0f;
  for (int c = 0; c < p->gc; ++c) {
    const float* g = p->g[c];
    const float* v = p->gv[c];
    const float up = g[i] + (c == shift_c ? shift : 0.0f);
    s1 += lull_rdfc_term(up, g[i1], v[i], v[i1], v[i], v[i1], p->kc2);
    s2 += lull_rdfc_term(up, g[i2], v[i], v[i2], v[i], v[i2], p->kc2);
    ss += lull_rdfc_symmetric_term(up, g[i1], g[i2], v[i], v[i1], v[i2], v[i], v[i1], v[i2], p->kc2);
  }
  const float inv = 1.0f / (float)p->gc;
  t[0] = s1 * inv;
  t[1] = s2 * inv;
  t[2] = ss * inv;
}

/* The feature weights of q1 = i1 and q2 = i2 for centre i: per feature
 * the symmetric blend of its pair weights (eq. 3.10-3.12, §3.2.4), the
 * smallest over the features (eq. 3.13). */
LULL_HD void lull_rdfc_feature_weights(const lull_rdfc_pass* p, size_t i, size_t i1, size_t i2,
                                       int both_inside, float* w1, float* w2)
{
  float m1 = 1.0f, m2 = 1.0f;
  int c = 0;
  for (int j = 0; j < p->nfeat; ++j) {
    float s1 = 0.0f, s2 = 0.0f, ss = 0.0f;
    const int c0 = c;
    for (; c < p->feature_end[j]; ++c) {
      const float* f = p->f[c];
      const float* v = p->fv[c];
      const float* g = p->fg[c];
      const float vp = lull_rdfc_feature_floor(p->tau, v[i], g[i]);
      const float v1 = lull_rdfc_feature_floor(p->tau, v[i1], g[i1]);
      const float v2 = lull_rdfc_feature_floor(p->tau, v[i2], g[i2]);
      s1 += lull_rdfc_term(f[i], f[i1], v[i], v[i1], vp, v1, p->kf2);
      s2 += lull_rdfc_term(f[i], f[i2], v[i], v[i2], vp, v2, p->kf2);
      ss += lull_rdfc_symmetric_term(f[i], f[i1], f[i2], v[i], v[i1], v[i2], vp, v1, v2, p->kf2);
    }
    const float inv = 1.0f / (float)(c - c0);
    float a1, a2;
    lull_rdfc_symmetric_weights(s1 * inv, s2 * inv, ss * inv, both_inside, &a1, &a2);
    m1 = lull_rdfc_min(m1, a1);
    m2 = lull_rdfc_min(m2, a2);
  }
  *w1 = m1;
  *w2 = m2;
}

/* The pair weights after the centre's value of channel c moved by
 * lull_rdfc_delta (eq. 3.16): its own term of each patch distance moves
 * (a share 1 / (gc (2f + 1)^2) of the distance d[0..2] at the centre), and
 * its own pair weight (wc[0..1] at the centre) moves its patch-wise weight
 * (wb[0..1]) by a share 1 / (2f + 1)^2; the other terms are held.  f1, f2
 * the feature weights, in1, in2 whether q1, q2 are inside the image. */
LULL_HD void lull_rdfc_moved_weights(const lull_rdfc_pass* p, size_t i, size_t i1, size_t i2,
                                     int c, const float d[3], const float wc[2], const float wb[2],
                                     float f1, float f2, int in1, int in2, float* v1, float* v2)
{
  const float inv_patch = 1.0f / (float)((2 * p->patch + 1) * (2 * p->patch + 1));
  /* only channel c's terms move: their change over gc is the change of
   * the channel mean */
  const float* g = p->g[c];
  const float* v = p->gv[c];
  const float up = g[i], moved = up + lull_rdfc_delta(up);
  const float k2 = p->kc2;
  const float share = inv_patch / (float)p->gc;
  const float c1 = lull_rdfc_term(moved, g[i1], v[i], v[i1], v[i], v[i1], k2) -
                   lull_rdfc_term(up, g[i1], v[i], v[i1], v[i], v[i1], k2);
  const float c2 = lull_rdfc_term(moved, g[i2], v[i], v[i2], v[i], v[i2], k2) -
                   lull_rdfc_term(up, g[i2], v[i], v[i2], v[i], v[i2], k2);
  const float cs =
      lull_rdfc_symmetric_term(moved, g[i1], g[i2], v[i], v[i1], v[i2], v[i], v[i1], v[i2], k2) -
      lull_rdfc_symmetric_term(up, g[i1], g[i2], v[i], v[i1], v[i2], v[i], v[i1], v[i2], k2);
  float a1, a2;
  lull_rdfc_symmetric_weights(d[0] + c1 * share, d[1] + c2 * share, d[2] + cs * share,
                              in1 && in2, &a1, &a2);
  const float b1 = wb[0] + (a1 - wc[0]) * inv_patch, b2 = wb[1] + (a2 - wc[1]) * inv_patch;
  *v1 = in1 ? lull_rdfc_min(b1, f1) : 0.0f;
  *v2 = in2 ? lull_rdfc_min(b2, f2) : 0.0f;
}

/* -- the per-pixel steps between the passes ------------------------------------ */

typedef enum lull_rdfc_pixel_kind
{
  LULL_RDFC_COPY,          /* dst = src */
  LULL_RDFC_MEAN,          /* dst = (src + src2) / 2 */
  LULL_RDFC_TWO_BUFFER_H,  /* dst = 1/4 (src - src2)^2, blurred along rows (TWOBUFFERVAR) */
  LULL_RDFC_BLUR_V,        /* dst = src blurred along columns (TWOBUFFERVAR's other half) */
  LULL_RDFC_SQUARED_HALF,  /* dst = 1/4 (src - src2)^2 */
  LULL_RDFC_BOX,           /* dst = the mean of src over the window's part inside the image */
  LULL_RDFC_SCALE,         /* SCALESAMPLEVAR: dst = src3 src / src2 (src2 > 0), else src */
  LULL_RDFC_GRADIENT,      /* dst = |grad src|^2 */
  LULL_RDFC_SELECT,        /* src: the smoothed errors, src2: d_r, d_g -> dst: the maps */
  LULL_RDFC_BLEND,         /* src: the candidates (k, buffer, channel), src2: the smoothed
                            * maps, src3: one buffer's variances -> dst[0..5] the blend's
                            * buffers, dst[6..8] their mean, dst[9..11] (one buffer) its
                            * variance; flag: halves */
} lull_rdfc_pixel_kind;

typedef struct lull_rdfc_pixels
{
  int kind;
  int width, height;
  int channels; /* planes per operand (the kinds of one operand set) */
  int radius;   /* BOX */
  int flag;
  const float* src[18];
  const float* src2[9];
  const float* src3[9];
  float* dst[12];
} lull_rdfc_pixels;

LULL_HD void lull_rdfc_pixel_body(const lull_rdfc_pixels* a, int x, int y)
{
  const int w = a->width, h = a->height;
  if (x >= w || y >= h)
    return;
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  const float side = LULL_RDFC_BLUR_SIDE, centre = 1.0f - 2.0f * LULL_RDFC_BLUR_SIDE;
  switch (a->kind) {
    case LULL_RDFC_COPY:
      for (int c = 0; c < a->channels; ++c)
        a->dst[c][i] = a->src[c][i];
      break;
    case LULL_RDFC_MEAN:
      for (int c = 0; c < a->channels; ++c)
        a->dst[c][i] = 0.5f * (a->src[c][i] + a->src2[c][i]);
      break;
    case LULL_RDFC_TWO_BUFFER_H:
      for (int c = 0; c < a->channels; ++c) {
        float s = 0.0f;
        for (int k = -1; k <= 1; ++k) {
          const int xx = x + k < 0 ? 0 : (x + k >= w ? w - 1 : x + k);
          const size_t j = (size_t)y * (size_t)w + (size_t)xx;
          const float d = a->src[c][j] - a->src2[c][j];
          s += (k ? side : centre) * 0.25f * d * d;
        }
        a->dst[c][i] = s;
      }
      break;
    case LULL_RDFC_BLUR_V:
      for (int c = 0; c < a->channels; ++c) {
        float s = 0.0f;
        for (int k = -1; k <= 1; ++k) {
          const int yy = y + k < 0 ? 0 : (y + k >= h ? h - 1 : y + k);
          s += (k ? side : centre) * a->src[c][(size_t)yy * (size_t)w + (size_t)x];
        }
        a->dst[c][i] = s;
      }
      break;
    case LULL_RDFC_SQUARED_HALF:
      for (int c = 0; c < a->channels; ++c) {
        const float d = a->src[c][i] - a->src2[c][i];
        a->dst[c][i] = 0.25f * d * d;
      }
      break;
    case LULL_RDFC_BOX: {
      const int r = a->radius;
      const int xa = x - r < 0 ? 0 : x - r, xb = x + r >= w ? w - 1 : x + r;
      const int ya = y - r < 0 ? 0 : y - r, yb = y + r >= h ? h - 1 : y + r;
      const float inv = 1.0f / (float)((xb - xa + 1) * (yb - ya + 1));
      for (int c = 0; c < a->channels; ++c) {
        float s = 0.0f;
        for (int yy = ya; yy <= yb; ++yy)
          for (int xx = xa; xx <= xb; ++xx)
            s += a->src[c][(size_t)yy * (size_t)w + (size_t)xx];
        a->dst[c][i] = s * inv;
      }
      break;
    }
    case LULL_RDFC_SCALE:
      for (int c = 0; c < a->channels; ++c)
        a->dst[c][i] = a->src2[c][i] > 0.0f ? a->src3[c][i] * (a->src[c][i] / a->src2[c][i])
                                            : a->src[c][i];
      break;
    case LULL_RDFC_GRADIENT:
      for (int c = 0; c < a->channels; ++c) {
        const float* f = a->src[c];
        const size_t row = (size_t)y * (size_t)w;
        const int xl = x > 0 ? x - 1 : 0, xr = x + 1 < w ? x + 1 : w - 1;
        const int yu = y > 0 ? y - 1 : 0, yd = y + 1 < h ? y + 1 : h - 1;
        a->dst[c][i] = lull_rdfc_gradient2(f[row + (size_t)xl], f[row + (size_t)xr],
                                           f[(size_t)yu * (size_t)w + (size_t)x],
                                           f[(size_t)yd * (size_t)w + (size_t)x]);
      }
      break;
    case LULL_RDFC_SELECT: {
      const float e[3] = {a->src[0][i], a->src[1][i], a->src[2][i]};
      float sel[3];
      lull_rdfc_select(e, a->src2[0][i], a->src2[1][i], sel);
      for (int k = 0; k < 3; ++k)
        a->dst[k][i] = sel[k];
      break;
    }
    case LULL_RDFC_BLEND: {
      const int halves = a->flag;
      float sel[3], total = 0.0f;
      for (int k = 0; k < 3; ++k)
        total += sel[k] = a->src2[k][i];
      /* the maps are weighted means of binary maps of sum 1: total is 1
       * but for rounding */
      for (int k = 0; k < 3; ++k)
        sel[k] /= total;
      for (int c = 0; c < 3; ++c) {
        float v[2] = {0.0f, 0.0f}, sd = 0.0f;
        for (int k = 0; k < 3; ++k) {
          for (int b = 0; b < (halves ? 2 : 1); ++b)
            v[b] += sel[k] * a->src[6 * k + 3 * b + c][i];
          if (!halves)
            sd += sel[k] * sqrtf(a->src3[3 * k + c][i]);
        }
        a->dst[c][i] = v[0];
        a->dst[3 + c][i] = v[1];
        a->dst[6 + c][i] = halves ? 0.5f * (v[0] + v[1]) : v[0];
        /* one buffer: the candidates' noise taken as fully correlated
         * (they filter the same pixels), an upper bound */
        if (!halves)
          a->dst[9 + c][i] = sd * sd;
      }
      break;
    }
    default: break;
  }
}

/* A given variance as the filter reads it: scaled by the colour's scale
 * squared (s2), negative as 0, non-finite as NaN (repaired after). */
LULL_HD float lull_rdfc_variance_in(float v, float s2)
{
  return (v - v == 0.0f) ? lull_rdfc_max(v, 0.0f) * s2 : NAN;
}
