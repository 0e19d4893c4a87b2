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

/* One channel's distance of a pair (eq. 3.7 for the colour, where
 * V = Var; eq. 3.10 for a feature, where V = max(tau, Var, |grad|^2)):
 * the squared difference less its expected noise, Var_p + min(Var_p,
 * Var_q) (the minimum keeps a noisier neighbour from blurring the centre:
 * biased, better, §3.2.2), over the noise scaled by k^2.  k2 = k^2. */
LULL_HD float lull_rdfc_term(float up, float uq, float var_p, float var_q, float v_p, float v_q,
                             float k2)
{
  const float d = up - uq;
  return (d * d - (var_p + fminf(var_p, var_q))) / (LULL_RDFC_EPSILON + k2 * (v_p + v_q));
}

/* The symmetric distance of eq. 3.9: the centre against the mean of its
 * two opposite neighbours, whose variance is a quarter of the sum, and
 * the shared part a quarter of the two minima. */
LULL_HD float lull_rdfc_symmetric_term(float up, float uq1, float uq2, float var_p, float var_q1,
                                       float var_q2, float v_p, float v_q1, float v_q2, float k2)
{
  const float d = up - 0.5f * (uq1 + uq2);
  const float shared = 0.25f * (fminf(var_p, var_q1) + fminf(var_p, var_q2));
  return (d * d - (var_p + shared)) / (LULL_RDFC_EPSILON + k2 * (v_p + 0.25f * (v_q1 + v_q2)));
}

/* The weight of a distance (eq. 3.8 and 3.12): exp(-max(D, 0)). */
LULL_HD float lull_rdfc_weight(float distance)
{
  return lull_exp_neg(fmaxf(distance, 0.0f));
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
    a = fminf(1.0f, fmaxf(0.0f, s / (a1 + a2) - 1.0f));
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
  return fmaxf(tau, fmaxf(variance, gradient2));
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
  return 0.01f * fmaxf(fabsf(u), 1e-3f);
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
