/* Device functions of one à-trous level, shared by the baseline and the
 * permuted schedule so that the two compute the same arithmetic and differ
 * only in where pixels live (tests/gpu compares them bit for bit away from
 * the border).  The per-pixel formulas themselves are core/atrous_math.h's.
 *
 * Summation order.  Both schedules sum each row of 5 taps left to right in
 * the original image's x order, then combine the 5 row sums as
 * ((R(-2) + R(+2)) + (R(-1) + R(+1))) + R(0).  Float addition commutes, so
 * this result does not depend on whether a sub-image of the permuted layout
 * runs upwards or downwards (σ_b reverses half of them, §3.4): the permuted
 * kernel can stream rows in memory order and still match the baseline
 * exactly.  (The CPU sums all 25 taps in one running sum; the two orders
 * differ by float rounding only.) */
#pragma once

#include "atrous_cuda.h"
#include "image_access.cuh"

#define LULL_DEVICE __device__ __forceinline__

/* The data of the pixel being filtered. */
typedef struct atrous_center
{
  float r, g, b, gl, inv_l;
  float nx, ny, nz, nm, gx, gy, gz, inv_g;
  float ar, ag, ab;
} atrous_center;

/* The data of one tap. */
typedef struct atrous_tap
{
  float r, g, b, v, gl;
  float nx, ny, nz, nm, gx, gy, gz;
  float ar, ag, ab;
} atrous_tap;

/* Weighted sums of one row of taps or of the whole kernel. */
typedef struct atrous_sums
{
  float w, r, g, b, v;
} atrous_sums;

/* Row sums, paired as the symmetric combination needs them. */
typedef struct atrous_rows
{
  atrous_sums outer; /* rows -2 and +2 */
  atrous_sums inner; /* rows -1 and +1 */
  atrous_sums mid;   /* row 0 */
} atrous_rows;

LULL_DEVICE void atrous_sums_zero(atrous_sums* s)
{
  s->w = s->r = s->g = s->b = s->v = 0.0f;
}

/* Luminance of the filtered colour (atrous_cpu.c's luminance_of). */
LULL_DEVICE float atrous_luminance(int channels, float r, float g, float b)
{
  if (channels == 1)
    return r;
  if (channels == 2)
    return 0.5f * (r + g);
  return lull_luminance(r, g, b);
}

/* One tap (Dammertz 2010 eq. 2-5, SVGF eq. 3-4; atrous_math.h): the
 * product of the edge-stopping functions is exp(-(sum of exponents)), and
 * the variance is carried as sum h^2 w^2 Var (SVGF §4.4). */
LULL_DEVICE void atrous_accumulate(atrous_sums* s, const atrous_center* c, const atrous_tap* q,
                                   float h, float inv_d2, const lull_atrous_level_args* a,
                                   const int variance_mode, const int geometry_kind)
{
  const float dgx = c->gx - q->gx;
  float dist2 = dgx * dgx;
  if (geometry_kind == LULL_ATROUS_GEOMETRY_POSITION) {
    const float dgy = c->gy - q->gy, dgz = c->gz - q->gz;
    dist2 = dgx * dgx + dgy * dgy + dgz * dgz;
  }
  const float color = variance_mode
                          ? lull_edge_luminance(c->gl, q->gl, c->inv_l)
                          : lull_edge_color_fixed(c->r - q->r, c->g - q->g, c->b - q->b, a->k_color);
  const float e = color +
                  lull_edge_normal(lull_normal_dot(c->nx, c->ny, c->nz, c->nm, q->nx, q->ny,
                                                   q->nz, q->nm),
                                   a->k_normal) +
                  lull_edge_geometry(dist2, c->inv_g, inv_d2) +
                  lull_edge_albedo(c->ar - q->ar, c->ag - q->ag, c->ab - q->ab, a->k_albedo);
#if defined(LULL_ATROUS_FAST_EXP)
  /* measurement variant (bench_atrous_cuda_fastexp): the GPU's exp2 unit
   * instead of lull_exp_neg's polynomial; same clamp, NaN gives exp(-80) */
  const float ec = e < LULL_EXP_CUTOFF ? e : LULL_EXP_CUTOFF;
  const float wgt = h * exp2f(-1.44269504088896341f * ec);
#else
  const float wgt = h * lull_edge_weight(e);
#endif
  s->w += wgt;
  s->r += wgt * q->r;
  s->g += wgt * q->g;
  s->b += wgt * q->b;
  s->v += wgt * wgt * q->v;
}

/* Adds the row sum of tap row dy (as seen from the centre) to the pairs.
 * The first row of a pair to arrive is assigned, the second added, so rows
 * may arrive in either vertical order. */
LULL_DEVICE void atrous_rows_add(atrous_rows* rows, const atrous_sums* row, int dy, int first)
{
  atrous_sums* pair = (dy == 0) ? &rows->mid : ((dy == 2 || dy == -2) ? &rows->outer : &rows->inner);
  if (first) {
    *pair = *row;
  } else {
    pair->w += row->w;
    pair->r += row->r;
    pair->g += row->g;
    pair->b += row->b;
    pair->v += row->v;
  }
}

LULL_DEVICE atrous_sums atrous_rows_total(const atrous_rows* rows)
{
  atrous_sums t;
  t.w = (rows->outer.w + rows->inner.w) + rows->mid.w;
  t.r = (rows->outer.r + rows->inner.r) + rows->mid.r;
  t.g = (rows->outer.g + rows->inner.g) + rows->mid.g;
  t.b = (rows->outer.b + rows->inner.b) + rows->mid.b;
  t.v = (rows->outer.v + rows->inner.v) + rows->mid.v;
  return t;
}

/* The colour test's inputs at original pixel (ox, oy) for the current level
 * (atrous_cpu.c, prepare_level_guides): the luminance guide g3x3(l) and
 * 1 / (sigma_l sqrt(g3x3(Var)) + eps), both with SVGF's 3x3 binomial
 * (§4.4), read from the original 3x3 neighbourhood wherever the layout put
 * it (fwd_x/y NULL: original layout).  Same order and border rule as the
 * CPU. */
LULL_DEVICE float2 atrous_level_guides(const lull_atrous_level_args* a, int ox, int oy)
{
  float sum_v = 0.0f, sum_l = 0.0f, sum_w = 0.0f;
  for (int dy = -1; dy <= 1; ++dy) {
    const int yy = oy + dy;
    if (yy < 0 || yy >= a->height)
      continue;
    const int py = a->fwd_y ? __ldg(a->fwd_y + yy) : yy;
    for (int dx = -1; dx <= 1; ++dx) {
      const int xx = ox + dx;
      if (xx < 0 || xx >= a->width)
        continue;
      const int px = a->fwd_x ? __ldg(a->fwd_x + xx) : xx;
      const float k = lull_binomial3_tap(dx) * lull_binomial3_tap(dy);
      const float4 c = __ldg(a->c_in + (size_t)py * (size_t)a->width + (size_t)px);
      sum_v += k * c.w;
      sum_l += k * atrous_luminance(a->channels, c.x, c.y, c.z);
      sum_w += k;
    }
  }
  return make_float2(sum_l / sum_w, 1.0f / (a->sigma_luminance * sqrtf(sum_v / sum_w) + 1e-10f));
}

/* Tap data of a pixel from the working buffers. */
LULL_DEVICE atrous_tap atrous_tap_load(const lull_atrous_level_args* a, size_t i,
                                       const int geometry_kind)
{
  const float4 c = __ldg(a->c_in + i);
  const float4 g0 = __ldg(a->g0_in + i);
  const float4 g1 = __ldg(a->g1_in + i);
  atrous_tap q;
  q.r = c.x;
  q.g = c.y;
  q.b = c.z;
  q.v = c.w;
  q.gl = a->lg ? __ldg(&a->lg[i].x) : 0.0f;
  q.nx = g0.x;
  q.ny = g0.y;
  q.nz = g0.z;
  q.nm = g0.w;
  q.gx = g1.w;
  q.gy = q.gz = 0.0f;
  if (geometry_kind == LULL_ATROUS_GEOMETRY_POSITION) {
    const float2 g2 = __ldg(a->g2_in + i);
    q.gy = g2.x;
    q.gz = g2.y;
  }
  q.ar = g1.x;
  q.ag = g1.y;
  q.ab = g1.z;
  return q;
}

/* The centre's data: its tap data plus ig and (variance mode) il. */
LULL_DEVICE atrous_center atrous_center_from(const atrous_tap* q, float inv_g, float inv_l)
{
  atrous_center c;
  c.r = q->r;
  c.g = q->g;
  c.b = q->b;
  c.gl = q->gl;
  c.inv_l = inv_l;
  c.nx = q->nx;
  c.ny = q->ny;
  c.nz = q->nz;
  c.nm = q->nm;
  c.gx = q->gx;
  c.gy = q->gy;
  c.gz = q->gz;
  c.inv_g = inv_g;
  c.ar = q->ar;
  c.ag = q->ag;
  c.ab = q->ab;
  return c;
}

/* Normalises the sums (the centre tap has weight h > 0, so w > 0) into the
 * next level's (r, g, b, v); SVGF §4.4: Var / (sum w)^2. */
LULL_DEVICE float4 atrous_normalise(const atrous_sums* t)
{
  const float inv = 1.0f / t->w;
  float4 o;
  o.x = t->r * inv;
  o.y = t->g * inv;
  o.z = t->b * inv;
  o.w = t->v * inv * inv;
  return o;
}

/* The finish step of core/atrous.h in two halves: multiply the albedo back
 * (in the last level, which has the albedo at hand) ... */
LULL_DEVICE float4 atrous_remodulate(const lull_atrous_level_args* a, float4 rgbv, float ar,
                                     float ag, float ab)
{
  if (a->demodulate) {
    rgbv.x *= lull_demodulation_albedo(ar);
    rgbv.y *= lull_demodulation_albedo(ag);
    rgbv.z *= lull_demodulation_albedo(ab);
  }
  rgbv.w = 0.0f;
  return rgbv;
}

/* ... then undo sRGB and the scale, clamp, and store output pixel (x, y)
 * with the alpha channel passed through. */
LULL_DEVICE void atrous_encode_store(const lull_atrous_level_args* a, int x, int y, float4 rgb)
{
  const size_t i = (size_t)y * (size_t)a->width + (size_t)x;
  float c[4] = {rgb.x, rgb.y, rgb.z, a->has_alpha ? a->alpha[i] : 0.0f};
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    if (a->srgb)
      c[k] = lull_linear_to_srgb(c[k] > 0.0f ? c[k] : 0.0f);
    c[k] *= a->inv_scale;
    if (a->clamp_output)
      c[k] = c[k] < 0.0f ? 0.0f : (c[k] > 1.0f ? 1.0f : c[k]);
  }
  lull_cuda_image_store_n(&a->output, x, y, c, a->out_channels);
}
