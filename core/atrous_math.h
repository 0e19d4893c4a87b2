/* Per-pixel formulas of the edge-avoiding à-trous filter, shared verbatim by
 * the CPU backend (atrous_cpu.c) and the CUDA kernels (cuda/atrous_*.cu).
 *
 * One level i of the filter (Dammertz et al. 2010, §2.2, eq. 2-4):
 *
 *   c_{i+1}(p) = sum_q h_i(q) w(p,q) c_i(q) / sum_q h_i(q) w(p,q)
 *
 * with h_i the 5x5 B3-spline kernel whose taps are 2^i pixels apart and w the
 * product of edge-stopping functions.  Every edge-stopping function here has
 * the form exp(-E), so the product is exp(-(E_color + E_normal + E_geometry +
 * E_albedo)) and costs a single exponential per tap.  The terms:
 *
 *   color, fixed (Dammertz eq. 5, with the squared distance of the paper's
 *   listing):      E = |I_p - I_q|^2 / sigma_i^2,  sigma_i = sigma_0 2^-i
 *   color, variance-guided (Schied et al. 2017, SVGF §4.4, eq. 4):
 *                  E = |g_p - g_q| / (sigma_l sqrt(g3x3(Var l)_p) + eps)
 *     where g = g3x3(l) is the level's luminance smoothed by the same 3x3
 *     binomial as the variance.  SVGF compares the raw luminances; at the
 *     16-64 spp of offline renders the weights then follow the pixel noise
 *     (bright outliers are rejected, which darkens the result, and the
 *     accepted neighbourhoods are blotchy).  Comparing prefiltered
 *     luminances is the joint/cross bilateral idea (Petschnigg et al. 2004,
 *     Eisemann and Durand 2004); it lowered relMSE by 15-30% on our test
 *     renders and removed the 1.7% darkening bias.
 *   normal (Dammertz eq. 5 on unit normals, |n_p - n_q|^2 = 2 (1 - n_p.n_q)):
 *                  E = 2 (1 - n_p . n_q) / sigma_n^2
 *     (missing normals, zero in the input, match each other only: see
 *     lull_normal_dot)
 *   geometry, depth or position (SVGF eq. 3, |dz| over the depth change
 *   expected across |p - q| pixels, generalised to positions and squared
 *   like the other terms):
 *                  E = |g_p - g_q|^2 / (|p - q| sigma_g s_p)^2
 *     where s_p is the pixel footprint: how much depth (or world position)
 *     changes from p to its smoother neighbour in x or y, so the test is
 *     independent of scene scale and of the step width of the level.
 *   albedo (Dammertz eq. 5 applied to the albedo buffer):
 *                  E = |a_p - a_q|^2 / sigma_a^2
 *
 * Variance is carried through the levels as in SVGF §4.4:
 *   Var_{i+1}(p) = sum_q h^2 w^2 Var_i(q) / (sum_q h w)^2. */
#pragma once

#include <math.h>
#include <stdint.h>

#include "half.h"
#include "image.h"
#include "platform.h"

/* Largest exponent evaluated; exp(-80) is below the smallest normal float. */
#define LULL_EXP_CUTOFF 80.0f

/* log2(e), the factor between exp and the GPU's 2^x */
#define LULL_LOG2E 1.44269504088896341f

/* 1-D B3-spline taps (1/16, 1/4, 3/8, 1/4, 1/16), Dammertz 2010 §2.2. */
LULL_HD float lull_b3_tap(int offset)
{
  const int a = offset < 0 ? -offset : offset;
  return a == 0 ? 0.375f : (a == 1 ? 0.25f : 0.0625f);
}

/* exp(-e) for e >= 0, relative error below 5e-6 (the rounding of -e log2(e)
 * in float dominates; NaN and +inf give exp(-80)), branch-free so the CPU
 * loops vectorise; both backends call it so they agree to rounding.
 * Range reduction: -e log2(e) = n + f with n = round(...) and |f| <= 1/2,
 * 2^f by a degree-5 minimax polynomial (error 3.6e-7), 2^n by the exponent
 * field: n >= -116 after the cutoff, so p 2^n is a normal float. */
LULL_HD float lull_exp_neg(float e)
{
  e = e < LULL_EXP_CUTOFF ? e : LULL_EXP_CUTOFF;
  const float t = -e * LULL_LOG2E; /* in [-115.5, 0] */
  /* round to nearest by the 1.5 * 2^23 trick: no libm call, no compare
   * (a compare here stops GCC from vectorising the loops that inline this) */
  const float n = (t + 12582912.0f) - 12582912.0f;
  const float f = t - n; /* [-0.5, 0.5] */
  float p = 1.302133581e-3f;
  p = p * f + 9.661022586e-3f;
  p = p * f + 5.551334302e-2f;
  p = p * f + 2.402241297e-1f;
  p = p * f + 6.931466898e-1f;
  p = p * f + 1.0f;
  /* p 2^n by adding n to p's exponent field: p is in [0.7, 1.42] and
   * p 2^n normal, so this is the product exactly, one integer add instead
   * of building 2^n and a multiply on the FMA pipes */
  return lull_bits_float(lull_float_bits(p) + ((uint32_t)(int)n << 23));
}

/* Rec. 709 luminance, the quantity SVGF's variance and colour test use. */
LULL_HD float lull_luminance(float r, float g, float b)
{
  return 0.2126f * r + 0.7152f * g + 0.0722f * b;
}

/* The luminance the filter tracks for 1 to 3 filtered colour channels:
 * the channel itself, the mean of two, or Rec. 709. */
LULL_HD float lull_luminance_of(int channels, float r, float g, float b)
{
  if (channels == 1)
    return r;
  if (channels == 2)
    return 0.5f * (r + g);
  return lull_luminance(r, g, b);
}

/* lull_luminance_of as three weights, for a kernel that evaluates it for
 * many pixels without branching on channels: w[0] r + w[1] g + w[2] b
 * gives the same values (the scalings by 1 and 0.5 are exact, the absent
 * channels add +0, and Rec. 709 keeps its order of operations). */
LULL_HD void lull_luminance_weights(int channels, float w[3])
{
  w[0] = channels == 1 ? 1.0f : (channels == 2 ? 0.5f : 0.2126f);
  w[1] = channels == 1 ? 0.0f : (channels == 2 ? 0.5f : 0.7152f);
  w[2] = channels <= 2 ? 0.0f : 0.0722f;
}

/* -- edge-stopping exponents (see the header comment for the formulas) -- */

LULL_HD float lull_edge_color_fixed(float dr, float dg, float db, float inv_sigma2)
{
  return (dr * dr + dg * dg + db * db) * inv_sigma2;
}

/* inv_scale_p = 1 / (sigma_l sqrt(Var_p) + eps), computed once per pixel */
LULL_HD float lull_edge_luminance(float lp, float lq, float inv_scale_p)
{
  return fabsf(lp - lq) * inv_scale_p;
}

/* distance2: |g_p - g_q|^2 (depth or position); inv_scale2_p =
 * 1 / (sigma_g s_p)^2; inv_pixel_distance2 = 1 / |p - q|^2 (0 at p itself).
 * The two factors multiply first: a kernel evaluating many taps of one
 * centre computes their product once per centre and tap distance. */
LULL_HD float lull_edge_geometry(float distance2, float inv_scale2_p, float inv_pixel_distance2)
{
  return distance2 * (inv_scale2_p * inv_pixel_distance2);
}

LULL_HD float lull_edge_albedo(float dr, float dg, float db, float inv_sigma2)
{
  return (dr * dr + dg * dg + db * db) * inv_sigma2;
}

/* -- a tap's exponent with the centre's factors applied once per centre --
 *
 * Both backends evaluate 25 taps per centre, so they rearrange the terms
 * above to do once per centre what depends on the centre alone (same
 * formulas; results differ by float rounding only):
 *   - normal (the header's E with d = lull_normal_dot(p, q)):
 *     2 k_n (1 - d) = 2 k_n + (-2 k_n d): the centre's normal and missing
 *     flag carry the factor -2 k_n (lull_normal_dot of the scaled centre
 *     and q gives -2 k_n d) and the constant 2 k_n joins the tap constant.
 *     d is not clamped to 1: for unit normals rounding takes it at most a
 *     few 1e-7 above 1, which changes a weight by 2 k_n times that (2e-6
 *     relative at the default sigma_n), less than the rounding of d itself
 *     does in the other direction, and a clamp would cost two of the GPU's
 *     ~25 instructions per tap (cuda/NOTES.md);
 *   - geometry: unchanged; the difference g_p - g_q comes first (scaling
 *     g_p and g_q by sqrt(ig_p) before subtracting cancels in flat regions,
 *     where s g is many times the difference: on the dof_glossy render a
 *     tiled and an untiled run, which evaluate some taps in different
 *     code paths, then differed by 1.5e-5 instead of 6e-7);
 *   - the B3 kernel weight h (Dammertz 2010 §2.2): h exp(-E) =
 *     exp(-(E + ln(1 / h))), ln(1 / h) in the tap constant.
 * A weight is then lull_edge_weight(colour term + lull_tap_constant +
 * lull_normal_dot of the scaled centre + geometry + albedo); the GPU
 * carries the same sum times -log2(e) (lull_edge_weight_log2). */

/* The factor k = 1 / sigma^2 of the normal and albedo tests (header: E =
 * k |g_p - g_q|^2), 0 when the test is off (sigma 0, or no guide).  sigma^2
 * is held at sigma2_min.  For the normal the term is 2 k_n (1 - d) with d
 * a float dot of unit normals, a few 1e-7 off 1 by rounding: with sigma_n
 * below ~0.01 that noise alone rejects every tap, all weights fall to the
 * floor of lull_edge_weight and the filter blurs across the edges it was
 * to keep; below ~1e-19, k = inf gave 0 * inf = NaN and swapped the two
 * sides of an edge.  sigma_n 0.01 already weighs a 1 degree difference at
 * e^-3.  The albedo term has no such noise (the centre's difference is
 * exactly 0): it only needs k finite. */
#define LULL_NORMAL_SIGMA2_MIN 1e-4f  /* sigma_n 0.01 */
#define LULL_ALBEDO_SIGMA2_MIN 1e-12f /* sigma_a 1e-6 */

LULL_HD float lull_edge_factor(float sigma, int has_guide, float sigma2_min)
{
  if (!has_guide || !(sigma > 0.0f))
    return 0.0f;
  const float s2 = sigma * sigma;
  return 1.0f / (s2 > sigma2_min ? s2 : sigma2_min);
}

/* 2 k_n + ln(1 / h) for kernel weight h (1 for an unweighted tap). */
LULL_HD float lull_tap_constant(float k_normal, float h)
{
  return 2.0f * k_normal - logf(h);
}

/* exp(-exponent), the weight of a tap in the CPU backend (the GPU kernels
 * carry the exponent in the form of lull_edge_weight_log2). */
LULL_HD float lull_edge_weight(float exponent)
{
  return lull_exp_neg(exponent);
}

/* 2 k_n log2(e): the factor the centre's normal (and missing flag) carries
 * when the exponent is carried as n = -log2(e) E, so that the normal term
 * -log2(e) 2 k_n (1 - d) is the scaled dot minus this factor. */
LULL_HD float lull_normal_scale_log2(float k_normal)
{
  return 2.0f * k_normal * LULL_LOG2E;
}

/* The same weight from n = -log2(e) E, the form the GPU kernels carry the
 * exponent in: the factor -log2(e) is folded into their per-level and
 * per-centre constants (cuda/atrous_common.cuh), so the multifunction
 * unit's 2^x (ex2.approx.ftz, relative error about 2^-22) takes n as it
 * is, 2 instructions instead of lull_exp_neg's ~23.  The clamp is
 * lull_exp_neg's (NaN and -inf give exp(-80)).  The CPU and GPU results
 * differ by float rounding only; tests/gpu holds them within 1e-4
 * relative (measured <= 2e-6).  On the host (the kernels' CPU emulation)
 * exp2f. */
LULL_HD float lull_edge_weight_log2(float n)
{
  /* fmaxf: NaN gives the other operand, as the select n > lo ? n : lo
   * would, in one instruction instead of a compare and a select */
  n = fmaxf(n, -LULL_LOG2E * LULL_EXP_CUTOFF);
#if defined(__CUDA_ARCH__)
  float w;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(w) : "f"(n));
  return w;
#else
  return exp2f(n);
#endif
}

/* -- per-pixel preparation of the inputs -- */

LULL_HD int lull_isfinite3(float a, float b, float c)
{
  /* (x - x) is NaN for NaN and for +-Inf, 0 otherwise */
  return (a - a) == 0.0f && (b - b) == 0.0f && (c - c) == 0.0f;
}

/* Albedo used for demodulation: small albedos are lifted to eps so that dark
 * materials and missing albedo (0) neither divide by zero nor amplify noise
 * (SVGF §4.1 demodulates by the surface albedo; the lift is ours). */
#define LULL_DEMODULATION_EPS 0.02f

LULL_HD float lull_demodulation_albedo(float albedo)
{
  return albedo > LULL_DEMODULATION_EPS ? albedo : LULL_DEMODULATION_EPS;
}

/* Normalises a normal and returns its "missing" flag: 1 for a zero-length
 * normal (Cycles writes 0 for the background and for some specular hits),
 * which stays (0, 0, 0).  The GPU takes 1 / sqrt from the multifunction
 * unit (rsqrtf, 2 ulp): IEEE 1 / sqrtf costs a Newton step and two
 * slow-path branches, ~20 instructions per normal in prepare's staging,
 * for a difference of an ulp or two in the unit normal. */
LULL_HD float lull_normalize_normal(float n[3])
{
  float len2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
  if (len2 > FLT_MAX) {
    /* finite components beyond ~1e19, whose squares overflowed: the
     * normal had come out (0, 0, 0) yet present, and every tap's normal
     * weight hit the floor.  Scaled down first (exactly: a power of two;
     * then 3 (FLT_MAX 2^-66)^2 < FLT_MAX) */
    n[0] *= 0x1p-66f;
    n[1] *= 0x1p-66f;
    n[2] *= 0x1p-66f;
    len2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
  }
  if (len2 > 1e-12f) {
#if defined(__CUDA_ARCH__)
    const float inv = rsqrtf(len2);
#else
    const float inv = 1.0f / sqrtf(len2);
#endif
    n[0] *= inv;
    n[1] *= inv;
    n[2] *= inv;
    return 0.0f;
  }
  n[0] = n[1] = n[2] = 0.0f;
  return 1.0f;
}

/* The dot product the normal test uses, with the missing flags m as a
 * fourth component: two missing normals match (1), a missing normal and a
 * real one do not (0), two real normals give n_p . n_q. */
LULL_HD float lull_normal_dot(float ax, float ay, float az, float am, float bx, float by,
                              float bz, float bm)
{
  return ax * bx + ay * by + az * bz + am * bm;
}

/* 3x3 binomial taps (1/4, 1/2, 1/4): the prefilter of SVGF §4.4 for the
 * variance, and of the luminance guide of the colour test. */
LULL_HD float lull_binomial3_tap(int offset)
{
  return offset == 0 ? 0.5f : 0.25f;
}

/* Pixel footprint of the geometry buffer: the change towards the smoother
 * neighbour on each axis (one-sided, so a silhouette next to p does not make
 * p's own surface look steep), the larger of the two axes, floored relative
 * to the magnitude so flat or constant regions keep a finite scale.
 * d_left .. d_down are the distances from p to its 4 neighbours (a missing
 * neighbour at the border passes the other side's distance). */
LULL_HD float lull_geometry_footprint(float d_left, float d_right, float d_up, float d_down,
                                      float magnitude)
{
  const float gx = d_left < d_right ? d_left : d_right;
  const float gy = d_up < d_down ? d_up : d_down;
  const float g = gx > gy ? gx : gy;
  const float floor_g = 1e-4f * magnitude + 1e-12f;
  return g > floor_g ? g : floor_g;
}

/* The smallest (sigma_g s_p)^2 the geometry test divides by.  The
 * footprint's floor alone does not keep ig finite: sigma_g = 1e-8 over
 * all-zero depth gives (1e-8 1e-12)^2 = 1e-40, and 1 / that is inf in
 * float, so a tap at equal depth (the centre always) gets the geometry
 * exponent 0 inf = NaN: the CPU then turned every weight into exp(-80) (a
 * box filter) while the GPU, which skips the centre's term, kept the
 * centre.  With the cap ig <= 1e30: 0 ig stays 0 (equal depths do not
 * count, as for any other sigma); ig times the GPU's -log2(e) and the
 * inverse pixel distances (<= 1) stays finite; a difference of 1e-15 or
 * more already gives an exponent of 1 or more, and one whose product
 * overflows to inf gives weight exp(-80) through lull_exp_neg's and
 * lull_edge_weight_log2's clamp, as any far depth does.  Scales above
 * 1e-15 (every scene in practice: sigma_g s_p >= 1e-4 sigma_g |depth|)
 * are unchanged. */
#define LULL_GEOMETRY_MIN_SCALE2 1e-30f

/* ig = 1 / (sigma_g s_p)^2 (SVGF eq. 3 as squared in the header comment),
 * from sigma_g and the footprint s_p of lull_geometry_footprint; the square
 * capped below by LULL_GEOMETRY_MIN_SCALE2 with a select (branch-free for
 * the CPU's vectorised rows).  An infinite square (a footprint near
 * FLT_MAX) gives 0: no geometry test. */
LULL_HD float lull_geometry_inv_scale2(float sigma_g, float footprint)
{
  const float scale = sigma_g * footprint;
  const float scale2 = scale * scale;
  return LULL_RCP(scale2 > LULL_GEOMETRY_MIN_SCALE2 ? scale2 : LULL_GEOMETRY_MIN_SCALE2);
}

/* sRGB transfer functions for LDR input with srgb=true (IEC 61966-2-1). */
LULL_HD float lull_srgb_to_linear(float v)
{
  return v <= 0.04045f ? v * (1.0f / 12.92f) : powf((v + 0.055f) * (1.0f / 1.055f), 2.4f);
}

LULL_HD float lull_linear_to_srgb(float v)
{
  return v <= 0.0031308f ? v * 12.92f : 1.055f * powf(v, 1.0f / 2.4f) - 0.055f;
}

/* -- prepare: per-pixel input conversion shared by the backends ------------ */

/* A colour channel as the filter sees it: scaled by inputScale, then
 * magnitudes beyond 1e15 clamped (so squares and their sums stay finite in
 * float; after the scale, so that a scale can bring any finite range into
 * the filter's), negatives read as 0 when the colour is radiance
 * (nonnegative: OIDN's RT sanitizes its colour so), then linearised when
 * the input is sRGB. */
#define LULL_COLOR_MAX 1e15f

LULL_HD float lull_prepare_color_channel(float v, float input_scale, int srgb, int nonnegative)
{
  const float lo = nonnegative ? 0.0f : -LULL_COLOR_MAX;
  v *= input_scale;
  v = v > LULL_COLOR_MAX ? LULL_COLOR_MAX : (v < lo ? lo : v);
  return srgb ? lull_srgb_to_linear(v) : v;
}

/* -- the automatic input scale ----------------------------------------------
 *
 * inputScale NaN ("automatic", OIDN's default) gives the variance-guided
 * filter a power of two s = 2^k that puts the geometric mean of the
 * colour's finite non-zero magnitudes in [1, 2).  That filter depends on
 * the colour's scale only through two absolute constants: the eps of
 * lull_luminance_inv_scale (dark renders, around 1e-8 and below, were
 * filtered harder) and the clamp of lull_prepare_color_channel (bright
 * ones, above 1e15, were clipped).  With s the filter sees every render at
 * the same scale, and since multiplying by a power of two is exact, the
 * result for the colour 2^j c is 2^j times the result for c, bit for bit,
 * over the whole float range (tests: atrous_scale).  Both backends count
 * the same values, as integers, so they pick the same s.
 *
 * The geometric mean alone let a wide range clip: with most of an image at
 * 1e-20 and a few pixels at 1, the mean's scale took those above 1e15,
 * where the clamp made them nearly black (0.0004 for 1).  So s is lowered
 * until the largest finite magnitude stays below 2^49 (< 1e15); a power of
 * two still, so the result stays exactly scale-equivariant. */

/* Adds colour value v to the counts: its biased exponent field (0 for a
 * subnormal) when v is finite and non-zero. */
LULL_HD void lull_auto_scale_add(float v, unsigned long long* sum, unsigned long long* count)
{
  const uint32_t bits = lull_float_bits(v) & 0x7fffffffu;
  if (bits != 0u && bits < 0x7f800000u) {
    *sum += bits >> 23;
    *count += 1u;
  }
}

/* s from the counts: 2^(127 - mean exponent field), at most 2^(175 - e)
 * for the exponent field e of the largest finite magnitude (a value below
 * 2^(e - 126) then stays below 2^49 < LULL_COLOR_MAX), k in [-126, 126] so
 * that s and 1 / s are normal floats; 1 when no value counted. */
LULL_HD float lull_auto_scale(unsigned long long sum, unsigned long long count,
                              float max_magnitude)
{
  if (count == 0u)
    return 1.0f;
  int k = 127 - (int)(sum / count);
  const int e = (int)((lull_float_bits(max_magnitude) & 0x7fffffffu) >> 23);
  if (e > 0 && e < 255 && 175 - e < k)
    k = 175 - e;
  return lull_pow2(k < -126 ? -126 : (k > 126 ? 126 : k));
}

/* Radius of the neighbourhood whose finite colours replace a non-finite one. */
#define LULL_INPAINT_RADIUS 2

/* The 4 neighbours of (x, y) whose distances give the footprint: left,
 * right, up, down; at a border the missing side is mirrored to the other
 * one; a coordinate outside [0, size) means the axis has a single pixel. */
LULL_HD void lull_footprint_neighbours(int x, int y, int w, int h, int xs[4], int ys[4])
{
  xs[0] = x > 0 ? x - 1 : x + 1;
  xs[1] = x < w - 1 ? x + 1 : x - 1;
  xs[2] = xs[3] = x;
  ys[0] = ys[1] = y;
  ys[2] = y > 0 ? y - 1 : y + 1;
  ys[3] = y < h - 1 ? y + 1 : y - 1;
}

/* Luminance variance from a given variance image pixel c (channels nc),
 * in the demodulated units the filter works in (a_r, a_g, a_b: the albedo
 * used for demodulation, 1 without).  Three channels: Var(sum_k w_k c_k /
 * a_k) for independent channels; one channel: a luminance variance divided
 * by the squared luminance of the albedo.  The image is in the colour
 * image's units, so the colour's scale s (inputScale) applies squared,
 * as (var s) s: var s^2 may be a float where s^2 is not.  Non-finite or
 * negative input: 0 (unknown); a finite one whose scaled value overflows:
 * FLT_MAX (it had become 0, so more variance meant less filtering). */
LULL_HD float lull_variance_luminance(const float c[4], int nc, float a_r, float a_g, float a_b,
                                      float s)
{
  float var;
  if (nc >= 3) {
    var = 0.2126f * 0.2126f * c[0] / (a_r * a_r) + 0.7152f * 0.7152f * c[1] / (a_g * a_g) +
          0.0722f * 0.0722f * c[2] / (a_b * a_b);
  } else {
    const float la = lull_luminance(a_r, a_g, a_b);
    var = c[0] / (la * la);
  }
  const int finite =
      (c[0] - c[0]) == 0.0f && (nc < 3 || ((c[1] - c[1]) == 0.0f && (c[2] - c[2]) == 0.0f));
  var = var * s * s;
  if (!finite || !(var > 0.0f))
    return 0.0f;
  return lull_hold_in_range(var);
}

/* -- per-pixel steps of the levels, around the taps ------------------------ */

/* il = 1 / (sigma_l sqrt(Var) + eps), the colour test's scale (SVGF §4.4,
 * eq. 4), from the 3x3-prefiltered variance var >= 0 of the pixel; eps
 * keeps il finite where the variance is 0. */
LULL_HD float lull_luminance_inv_scale(float sigma_l, float var)
{
  return LULL_RCP(sigma_l * LULL_SQRT(var) + 1e-10f);
}

/* The luminance variance of level 0 from guide-weighted moments of the
 * neighbourhood (SVGF §4.2's spatial estimate): sw = sum w, sd = sum w d,
 * sd2 = sum w d^2 with d = l_q - l_p, so Var = E[d^2] - E[d]^2, which can
 * round below 0 (clamped; a select, for the CPU's vectorised rows).
 * sw >= 1: the centre's own weight is 1. */
LULL_HD float lull_moments_variance(float sw, float sd, float sd2)
{
  const float inv = LULL_RCP(sw);
  const float mean = sd * inv;
  const float var = sd2 * inv - mean * mean;
  return var > 0.0f ? var : 0.0f;
}

/* A filtered colour and its variance. */
typedef struct lull_rgbv
{
  float r, g, b, v;
} lull_rgbv;

/* The end of a level (Dammertz 2010 eq. 2; SVGF §4.4 for the variance):
 * from the sums sw = sum h w, sr, sg, sb = sum h w c and sv = sum h^2 w^2
 * Var over the taps, the filtered colour c = sum h w c / sum h w and
 * variance Var = sum h^2 w^2 Var / (sum h w)^2.  sw > 0: the centre tap
 * has weight h > 0.  Returned by value, not through an array: in the CPU's
 * `omp simd` loops an array local to the body stays in memory (one copy a
 * lane), and the loop was no longer vectorised. */
LULL_HD lull_rgbv lull_normalise_sums(float sw, float sr, float sg, float sb, float sv)
{
  const float inv = LULL_RCP(sw);
  lull_rgbv o;
  o.r = sr * inv;
  o.g = sg * inv;
  o.b = sb * inv;
  o.v = sv * inv * inv;
  return o;
}

/* An output channel from the filtered linear value v (remodulated): sRGB
 * encoded when the input was sRGB (negatives to 0 first), the input scale
 * undone (inv_scale = 1 / inputScale) and held in the float range
 * (lull_hold_in_range), clamped to [0, 1] when asked.  srgb
 * and clamp are the same for a whole image: the CPU calls this in a loop
 * that vectorises with srgb = 0 (powf does not) and hoists the clamp's
 * test. */
LULL_HD float lull_encode_output(float v, int srgb, float inv_scale, int clamp)
{
  if (srgb)
    v = lull_linear_to_srgb(v > 0.0f ? v : 0.0f);
  v *= inv_scale;
  /* one selection or the other: with both, GCC stopped vectorising the
   * CPU's clamped (LDR) output loop (1.3 instead of 0.1 ns a value) */
  return clamp ? (v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v)) : lull_hold_in_range(v);
}
