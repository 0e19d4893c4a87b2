/* Per-pixel formulas of the weighted screened Poisson problem, shared by the
 * CPU backend (poisson_cg.c, poisson_dct.c) and the CUDA kernels.
 *
 * The least-squares rows (Vicini 2015 §5.2, eq. 5.2) are, per pixel i and
 * colour channel, with squared row weights w (1 for L2; IRLS weights for
 * L1; the same weight for the three channels of a row):
 *
 *   data      sqrt(wa_i) alpha (x_i - b_i)
 *   x-edge    sqrt(wx_i) (x_{i+1} - x_i - dx_i)     (wx_i = 0 in the last column)
 *   y-edge    sqrt(wy_i) (x_{i+W} - x_i - dy_i)     (wy_i = 0 in the last row)
 *
 * so the normal equations A^T W^2 A x = A^T W^2 b (eq. 5.3 with weights)
 * have a 5-point operator and right-hand side given below.  Callers pass
 * weight 0 for an absent neighbour (and any finite value for it). */
#pragma once

#include <math.h>

#include "image.h"
#include "platform.h"

/* (A^T W^2 A x)_i. */
LULL_HD float lull_poisson_apply(float alpha2, float wa, float x, float wx_left, float x_left,
                                 float wx, float x_right, float wy_up, float x_up, float wy,
                                 float x_down)
{
  return alpha2 * wa * x + wx * (x - x_right) + wx_left * (x - x_left) + wy * (x - x_down) +
         wy_up * (x - x_up);
}

/* The mean of two half-buffer values (Kettunen et al. 2015 §3.2.5: the
 * full buffer is their mean), halved first so that two finite values near
 * FLT_MAX do not overflow to inf (which then counted as missing: 0). */
LULL_HD float lull_poisson_half_mean(float a, float b)
{
  return 0.5f * a + 0.5f * b;
}

/* The two-buffer variance of that mean, Var[(a + b) / 2] ~ ((a - b) / 2)^2
 * (§3.2.5), from halved values and held at FLT_MAX: the difference and its
 * square overflowed for halves ~1e20 apart, and a firefly of 1e25 made the
 * whole outputVariance inf. */
LULL_HD float lull_poisson_two_buffer_variance(float a, float b)
{
  const float h = 0.5f * a - 0.5f * b;
  return lull_hold_in_range(h * h);
}

/* (A^T W^2 b)_i: alpha^2 b plus the weighted divergence of the gradients,
 * (H^T g)_i = g_{i-1} - g_i. */
LULL_HD float lull_poisson_rhs(float alpha2, float wa, float b, float wx_left, float dx_left,
                               float wx, float dx, float wy_up, float dy_up, float wy, float dy)
{
  return alpha2 * wa * b + wx_left * dx_left - wx * dx + wy_up * dy_up - wy * dy;
}

/* Diagonal of A^T W^2 A (the Jacobi preconditioner). */
LULL_HD float lull_poisson_diagonal(float alpha2, float wa, float wx_left, float wx, float wy_up,
                                    float wy)
{
  return alpha2 * wa + wx_left + wx + wy_up + wy;
}

/* Eigenvalue of the free-boundary path-graph Laplacian of length n for
 * DCT-II frequency k: 2 - 2 cos(pi k / n) (gradient-domain.md §3.1),
 * written 4 sin^2(pi k / 2n) so low frequencies keep their precision.  The
 * constant-weight operator a I + c L has eigenvalue a + c (l_x(k) + l_y(l))
 * at frequency (k, l). */
LULL_HD float lull_poisson_axis_eigenvalue(int k, int n)
{
  const float pi = 3.14159265358979323846f;
  const float s = sinf(pi * (float)k / (2.0f * (float)n));
  return 4.0f * s * s;
}

/* -- when conjugate gradients stop --------------------------------------------
 *
 * A channel's CG solve stops when its residual r.r falls to tolerance^2
 * times b.b (cgTolerance), and never runs below a floor of 1e-7 relative:
 * the vectors are float, so past that the recursively updated residual is
 * rounding noise, p.Ap loses its sign and size, and the steps r.z / p.Ap
 * grew without bound (a 3x1 image reached 1e38 after 1000 iterations at the
 * default cgTolerance 0; on a singular system, alpha 0, the constant
 * drifted within the default 20 iterations).  It also stops when r.z is no
 * longer positive and finite (the preconditioned residual is lost to
 * rounding).  The CPU solver and the CUDA kernels share these two
 * functions, so they stop at the same iteration. */
#define LULL_CG_TOLERANCE_FLOOR 1e-7

/* Whether a channel with residual r.r (rr) and r.z (rz) keeps iterating:
 * rhs2 = b.b, tolerance = cgTolerance. */
LULL_HD int lull_cg_continues(double rr, double rz, double rhs2, float tolerance)
{
  const double t = (double)tolerance > LULL_CG_TOLERANCE_FLOOR ? (double)tolerance
                                                                : LULL_CG_TOLERANCE_FLOOR;
  return rr > t * t * rhs2 && rz > 0.0 && rz < HUGE_VAL;
}

/* CG deflated by the constant (poisson_cg.c, cg_solve): the constant's
 * exact solve at the start, sum wa (b - x) / sum wa (0 at alpha 0, where
 * the constant is free), and the constant mu = sum wa z / sum wa taken out
 * of each direction, z - mu + beta p.  sum wa is 0 or not finite only for
 * weights that are, and then nothing is deflated.
 *
 * Only where the constant is a weak direction: its eigenvalue, alpha^2
 * times the data weights (mean 1 before IRLS), below 16 times the lowest
 * nonzero one of the image's Laplacian along its longer side.  Above that
 * CG resolves the constant as it does every other direction, and the
 * deflation's sums only cost (on the GPU they made the update kernel
 * spill: a CG iteration 13% slower, L1 at 720p 13.0 -> 14.7 ms). */
LULL_HD int lull_cg_deflates(float alpha2, int width, int height)
{
  const int n = width > height ? width : height;
  return n < 2 || alpha2 < 16.0f * lull_poisson_axis_eigenvalue(1, n);
}

LULL_HD float lull_cg_constant(double weighted_residual, double wsum, float alpha2)
{
  return alpha2 > 0.0f && wsum > 0.0 && wsum < HUGE_VAL ? (float)(weighted_residual / wsum) : 0.0f;
}

LULL_HD float lull_cg_deflation(double wz, double wsum)
{
  return wsum > 0.0 && wsum < HUGE_VAL ? (float)(wz / wsum) : 0.0f;
}

LULL_HD float lull_cg_direction(float z, float mu, float beta, float p)
{
  return (z - mu) + beta * p;
}

/* r.(z - mu) = r.z - mu sum r: r.z of the deflated direction, which CG's
 * step, beta and stop take.  r sums to 0 in exact arithmetic; in float it
 * keeps rounding along the constant that no deflated direction can
 * remove, and plain r.z counted it: CG then ran on with steps growing
 * without bound (2x1 at alpha 0.2: 108 for values of 1; GradientDomain
 * after 1000 iterations: 1e32; a review helper's finding). */
LULL_HD double lull_cg_deflated_rz(double rz, float mu, double rsum)
{
  return rz - (double)mu * rsum;
}

/* IRLS row weight (the factor on the row's squared residual) from the RGB
 * length of its residual, |e|, and the regulariser eps (§5.2, SOLVEL1).
 *
 * Minimising sum |e| by least squares needs the factor 1/(|e| + eps):
 * |e| = |e|^2 / |e|.  The thesis' pseudocode sets W = 1/(|e| + eps) and
 * then solves with W^2, i.e. the factor 1/(|e| + eps)^2, which minimises
 * sum log|e| (a sparsity prior), not the L1 objective.  test_poisson_l1
 * compares both on the L1 objective; power 1 wins there and is the
 * default (Karras' solver uses it too). */
LULL_HD float lull_irls_weight(float residual_norm, float eps, int power)
{
  const float f = 1.0f / (residual_norm + eps);
  return power == 2 ? f * f : f;
}

/* Symmetric 9x9 stencil of the patch-constraint term (GradientDomain,
 * §5.3.4: A^T W^2 A of radius-2 patches couples pixels up to 4 apart).
 * Tap 0 is the centre; taps 1..40 are the offsets (dx, dy) with dy > 0, or
 * dy = 0 and dx > 0; the coefficient of the mirrored offset is read from
 * the neighbour: (K x)_i = c_0[i] x_i + sum_t c_t[i] x_{i+o_t} + c_t[i-o_t] x_{i-o_t}. */
enum { LULL_STENCIL_RADIUS = 4, LULL_STENCIL_TAPS = 41 };

LULL_HD void lull_stencil_offset(int tap, int* dx, int* dy)
{
  if (tap == 0) {
    *dx = 0;
    *dy = 0;
  } else if (tap <= LULL_STENCIL_RADIUS) {
    *dx = tap;
    *dy = 0;
  } else {
    const int t = tap - LULL_STENCIL_RADIUS - 1; /* 0 .. 35: rows dy = 1..4 of 9 taps */
    *dy = 1 + t / (2 * LULL_STENCIL_RADIUS + 1);
    *dx = t % (2 * LULL_STENCIL_RADIUS + 1) - LULL_STENCIL_RADIUS;
  }
}

/* The tap storing the coupling of offset (dx, dy) and whether it is stored
 * at the other pixel (mirrored); -1 when |dx| or |dy| > 4. */
LULL_HD int lull_stencil_tap(int dx, int dy, int* mirrored)
{
  *mirrored = 0;
  if (dx < -LULL_STENCIL_RADIUS || dx > LULL_STENCIL_RADIUS || dy < -LULL_STENCIL_RADIUS ||
      dy > LULL_STENCIL_RADIUS)
    return -1;
  if (dy < 0 || (dy == 0 && dx < 0)) {
    dx = -dx;
    dy = -dy;
    *mirrored = 1;
  }
  if (dy == 0)
    return dx;
  return LULL_STENCIL_RADIUS + 1 + (dy - 1) * (2 * LULL_STENCIL_RADIUS + 1) + dx +
         LULL_STENCIL_RADIUS;
}
