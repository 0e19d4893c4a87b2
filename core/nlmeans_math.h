/* NL-means distances and two-buffer estimates, shared by the filters that
 * weigh pixels by the similarity of their noisy neighbourhoods
 * (GradientDomain, Regression) on both backends.
 *
 * The distance of two pixels' values u_p, u_q with noise variances V_p,
 * V_q is the squared difference less its expected noise, over the noise
 * scaled by k^2 (Rousselle, Knaus and Zwicker 2012; Vicini 2015 eq. 3.7
 * and 5.9): E[(u_p - u_q)^2] = (mu_p - mu_q)^2 + V_p + V_q for independent
 * noise, so the numerator estimates the squared difference of the true
 * values without bias.  The symmetric form (V_p + V_q where the 2012 paper
 * has V_p + min(V_p, V_q)) keeps the distance of (p, q) equal to that of
 * (q, p) bit for bit, so one weight serves both directions of a pair. */
#pragma once

#include "platform.h"

/* Numerator of one channel's distance: (u_p - u_q)^2 - (V_p + V_q). */
LULL_HD float lull_nlm_excess(float up, float uq, float var_p, float var_q)
{
  const float d = up - uq;
  return d * d - (var_p + var_q);
}

/* One channel's normalised distance (eq. 5.9). */
LULL_HD float lull_nlm_distance(float up, float uq, float var_p, float var_q, float k)
{
  const float v = var_p + var_q;
  return lull_nlm_excess(up, uq, var_p, var_q) / (1e-10f + k * k * v);
}

/* Var[(A + B) / 2] of two independent half-buffer estimates whose
 * difference is d: ((A - B) / 2)^2 in expectation. */
LULL_HD float lull_two_buffer_variance(float d)
{
  return 0.25f * d * d;
}

/* The error of an estimator at one pixel and channel from the two
 * half-buffers (Bitterli et al. 2016 §5.3): x_a, x_b the estimator run on
 * each half, r_a, r_b unbiased estimates of the pixel from the halves.
 * E[(x_a - r_b)^2] = bias^2 + Var[x_a] + Var[r_b] (independent halves) and
 * E[(x_a - x_b)^2] = 2 Var[x_a]; the estimator on the mean of the halves
 * has about bias^2 + Var[x_a] / 2 (the exact identity
 * ((e_a + e_b) / 2)^2 = (e_a^2 + e_b^2) / 2 - (e_a - e_b)^2 / 4), so this
 * returns that plus Var[r] (the same for every estimator, so it does not
 * change which is smallest). */
LULL_HD float lull_two_buffer_error(float x_a, float x_b, float r_a, float r_b)
{
  const float ea = x_a - r_b, eb = x_b - r_a, d = x_a - x_b;
  return 0.5f * (ea * ea + eb * eb) - 0.25f * d * d;
}
