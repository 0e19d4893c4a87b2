/* packedGuides: the compact working buffers of atrous_cuda.h (CP, GP).
 *
 *   CP = (r, g, b, sqrt v) as four fp16 values, all times the image's
 *        packing scale s (below): colour to 2^-11 relative; the variance
 *        travels as its square root, which has the colour's units, so one
 *        scale serves both and sqrt v covers the variances of late levels
 *        (which shrink by about 5x per level) as well as fireflies.
 *   GP = (oct normal, half2 (ar, ag), half2 (ab, 0), fp32 gx): normals
 *        octahedron-encoded (Cigolle et al. 2014, "A Survey of Efficient
 *        Representations for Independent Unit Vectors", JCGT 3(2), §3.3:
 *        project onto |x| + |y| + |z| = 1 and fold the lower half over the
 *        diagonals) as two snorm16 values, angular error below 1e-4; a
 *        missing normal is the code -32768, outside the snorm range; albedo
 *        fp16; depth (or position x) fp32, as depth needs its precision.
 * The kernels unpack into fp32 when they stage a tile, so the arithmetic
 * per tap is the same as without packing. */
#pragma once

#include <cuda_fp16.h>

#include "../core/half.h"
#include "kernel_body.cuh"

#define LULL_HALF_MAX 65504.0f

LULL_BODY unsigned lull_pack_half2(float lo, float hi)
{
  lo = fminf(fmaxf(lo, -LULL_HALF_MAX), LULL_HALF_MAX);
  hi = fminf(fmaxf(hi, -LULL_HALF_MAX), LULL_HALF_MAX);
  return (unsigned)__half_as_ushort(__float2half_rn(lo)) |
         ((unsigned)__half_as_ushort(__float2half_rn(hi)) << 16);
}

LULL_BODY float lull_unpack_half_lo(unsigned v)
{
  return __half2float(__ushort_as_half((unsigned short)(v & 0xffffu)));
}

LULL_BODY float lull_unpack_half_hi(unsigned v)
{
  return __half2float(__ushort_as_half((unsigned short)(v >> 16)));
}

/* -- the packing scale ---------------------------------------------------
 *
 * fp16 keeps 11 bits from 2^-14 to 65504 (30 binades), but renders in
 * physical units, HDR highlights divided by a dark albedo (demodulation
 * lifts albedos to 0.02, a factor of up to 50), or inputScale put the
 * colour anywhere in fp32's range: unscaled, a packed run clipped every
 * value above 65504 and flushed dark images to zero.  So the colour is
 * packed times a power of two s, found per run from a bound b on the
 * magnitudes the packed words will hold (the prepare launch reduces it
 * over the image first, atrous_prepare.cuh): s puts b in [2^14, 2^15),
 * half of fp16's range below its top, as everything the levels compute
 * from the colour stays within b (weighted means, the luminance, sqrt of
 * the variance of values within b), and leaves the 28 binades below for
 * the rest of the image.  The levels are scale-equivariant (the colour
 * test divides luminance differences by sqrt(Var) + 1e-10, where the
 * 1e-10 matters only for exactly flat regions), so only the last step
 * divides by s again.  A power of two, so scaling and unscaling are exact
 * and fp16 rounds the scaled values as it rounds the unscaled ones
 * wherever both are normal numbers. */

/* The exponent k of s = 2^k for bound b given as its float bits (b >= 0,
 * as the reduction's unsigned maximum of non-negative floats); 0 when b is
 * 0 (all black, or no finite pixel); k in [-100, 100], so s and 1 / s are
 * normal floats. */
LULL_BODY int lull_pack_scale_exponent(unsigned bound_bits)
{
  if (bound_bits == 0u)
    return 0;
  /* b = m 2^(E - 127) with m in [1, 2): s = 2^(141 - E) puts it in
   * [2^14, 2^15); E = 0 (subnormal) and E = 255 (inf) fall to the clamp */
  const int k = 141 - (int)((bound_bits >> 23) & 0xffu);
  return k < -100 ? -100 : (k > 100 ? 100 : k);
}

/* The packing scale s of a bound (prepare multiplies by it) and 1 / s (the
 * finish step multiplies by that). */
LULL_BODY float lull_pack_scale(unsigned bound_bits)
{
  return lull_pow2(lull_pack_scale_exponent(bound_bits));
}

LULL_BODY float lull_pack_unscale(unsigned bound_bits)
{
  return lull_pow2(-lull_pack_scale_exponent(bound_bits));
}

/* -- colour and variance ------------------------------------------------- */

/* (r, g, b) and sd = sqrt v, already scaled by s */
LULL_BODY uint2 lull_pack_color_sd(float r, float g, float b, float sd)
{
  return make_uint2(lull_pack_half2(r, g), lull_pack_half2(b, sd));
}

LULL_BODY uint2 lull_pack_color(float4 c)
{
  const float s = LULL_SQRT(c.w > 0.0f ? c.w : 0.0f); /* rounded to fp16 next */
  return lull_pack_color_sd(c.x, c.y, c.z, s);
}

LULL_BODY float4 lull_unpack_color(uint2 p)
{
  const float s = lull_unpack_half_hi(p.y);
  return make_float4(lull_unpack_half_lo(p.x), lull_unpack_half_hi(p.x), lull_unpack_half_lo(p.y),
                     s * s);
}

/* -- normals --------------------------------------------------------------- */

enum { LULL_OCT_MISSING = 0x8000 };

LULL_BODY float lull_sign_not_zero(float v)
{
  return v >= 0.0f ? 1.0f : -1.0f;
}

LULL_BODY int lull_snorm16(float v)
{
  const int i = (int)rintf(v * 32767.0f);
  return i < -32767 ? -32767 : (i > 32767 ? 32767 : i);
}

/* (nx, ny, nz) unit, or missing != 0. */
LULL_BODY unsigned lull_oct_encode(float nx, float ny, float nz, float missing)
{
  if (missing != 0.0f)
    return LULL_OCT_MISSING | (LULL_OCT_MISSING << 16);
  /* by the multifunction unit: the sum is in [1, sqrt 3] for a unit normal */
  const float inv = LULL_RCP(fabsf(nx) + fabsf(ny) + fabsf(nz));
  float u = nx * inv, v = ny * inv;
  if (nz < 0.0f) {
    const float fu = (1.0f - fabsf(v)) * lull_sign_not_zero(u);
    v = (1.0f - fabsf(u)) * lull_sign_not_zero(v);
    u = fu;
  }
  return ((unsigned)lull_snorm16(u) & 0xffffu) | (((unsigned)lull_snorm16(v) & 0xffffu) << 16);
}

/* (nx, ny, nz, missing flag), as G0 holds it.  Without branches (the
 * fold and the missing code are selects), so that a kernel staging a tile
 * can issue the loads of several pixels before it decodes the first. */
LULL_BODY float4 lull_oct_decode(unsigned bits)
{
  const int iu = (int)(short)(unsigned short)(bits & 0xffffu);
  const int iv = (int)(short)(unsigned short)(bits >> 16);
  const float u = (float)iu * (1.0f / 32767.0f), v = (float)iv * (1.0f / 32767.0f);
  const float z = 1.0f - fabsf(u) - fabsf(v);
  const int fold = z < 0.0f;
  const float fu = fold ? (1.0f - fabsf(v)) * lull_sign_not_zero(u) : u;
  const float fv = fold ? (1.0f - fabsf(u)) * lull_sign_not_zero(v) : v;
  /* the missing code decodes to a finite vector too, which is discarded */
  const float inv = LULL_RSQRT(fu * fu + fv * fv + z * z);
  return iu == -32768 ? make_float4(0.0f, 0.0f, 0.0f, 1.0f)
                      : make_float4(fu * inv, fv * inv, z * inv, 0.0f);
}

/* -- all guides of a pixel ------------------------------------------------- */

LULL_BODY uint4 lull_pack_guides(float4 g0, float4 g1)
{
  return make_uint4(lull_oct_encode(g0.x, g0.y, g0.z, g0.w), lull_pack_half2(g1.x, g1.y),
                    lull_pack_half2(g1.z, 0.0f), lull_float_bits(g1.w));
}

LULL_BODY void lull_unpack_guides(uint4 p, float4* g0, float4* g1)
{
  *g0 = lull_oct_decode(p.x);
  *g1 = make_float4(lull_unpack_half_lo(p.y), lull_unpack_half_hi(p.y), lull_unpack_half_lo(p.z),
                    lull_bits_float(p.w));
}
