/* Device functions of one à-trous level, shared by the baseline and the
 * permuted schedule so that the two compute the same arithmetic and differ
 * only in where pixels live (tests/gpu compares them bit for bit away from
 * the border).  The per-pixel formulas are core/atrous_math.h's.
 *
 * Evaluating a tap.  The exponent of the weight h w(p, q) is the sum of the
 * edge-stopping exponents of atrous_math.h in the rearranged form both
 * backends use (atrous_math.h, lull_tap_constant), carried as
 * n = -log2(e) E so that the exp2 unit takes it as it is
 * (lull_edge_weight_log2): the constant -log2(e) (2 k_n + ln(1 / h)) is
 * one per class of taps (dx^2 + dy^2 in {0, 1, 2, 4, 5, 8},
 * lull_atrous_level_args), the centre's normal and flag carry
 * 2 k_n log2(e), its il and ig carry -log2(e), and the albedo is scaled
 * by sqrt(k_a log2(e)) when a pixel is loaded.  Results agree with the CPU
 * within float rounding (tests/gpu: 1e-4 relative, measured ~1e-6).
 *
 * Summation order.  Each pixel sums its 25 taps in one running sum, in the
 * order the permuted layout stores them: tap rows by increasing memory
 * position, and within a row by increasing memory position.  In layout l a
 * memory step of 1 is 2^l pixels in the image, in the direction
 * lull_layout_direction gives (σ_b reverses half of the sub-images, Dolp et
 * al. 2024 §3.4), so the baseline walks the image taps in that direction
 * and both schedules add the same numbers in the same order.  (The CPU adds
 * in raster order; the orders differ by float rounding only.) */
#pragma once

#include <float.h>

#include "atrous_cuda.h"
#include "atrous_layout.h"
#include "atrous_packing.cuh"
#include "image_access.cuh"
#include "kernel_body.cuh"

/* The data of one tap; albedo times sqrt(k_a log2(e)). */
typedef struct atrous_tap
{
  float r, g, b, v, gl;
  float nx, ny, nz, nm;
  float gx, gy, gz;
  float ar, ag, ab;
} atrous_tap;

/* The centre's terms (see the header comment). */
typedef struct atrous_center
{
  float r, g, b;           /* fixed colour test */
  float gl, il;            /* variance-guided colour test; il times -log2(e) */
  float nx, ny, nz, nm;    /* normal and missing flag, times 2 k_n log2(e) */
  float ig;                /* -log2(e) / (sigma_g s_p)^2 */
  float gx, gy, gz;        /* geometry */
  float ar, ag, ab;        /* albedo times sqrt(k_a log2(e)) */
} atrous_center;

/* Weighted sums of a pixel's taps. */
typedef struct atrous_sums
{
  float w, r, g, b, v;
} atrous_sums;

LULL_BODY void atrous_sums_zero(atrous_sums* s)
{
  s->w = s->r = s->g = s->b = s->v = 0.0f;
}

/* The tap data of a pixel from its unpacked buffers (albedo scaled here,
 * rounded on its own so every kernel gets the same bits). */
LULL_BODY atrous_tap atrous_tap_make(float4 c, float gl, float4 g0, float4 g1, float2 g2,
                                     float sqrt_k_albedo)
{
  atrous_tap q;
  q.r = c.x;
  q.g = c.y;
  q.b = c.z;
  q.v = c.w;
  q.gl = gl;
  q.nx = g0.x;
  q.ny = g0.y;
  q.nz = g0.z;
  q.nm = g0.w;
  q.gx = g1.w;
  q.gy = g2.x;
  q.gz = g2.y;
  q.ar = LULL_MUL_RN(g1.x, sqrt_k_albedo);
  q.ag = LULL_MUL_RN(g1.y, sqrt_k_albedo);
  q.ab = LULL_MUL_RN(g1.z, sqrt_k_albedo);
  return q;
}

/* The words a tap is made of, as loaded: fetching and decoding are apart
 * so that a kernel staging a tile issues the loads of several pixels
 * before it waits for the first (the staging loop stalled on every
 * pixel's loads in turn).  Only the fields of the buffers in use are
 * filled. */
typedef struct atrous_raw
{
  float4 c, g0, g1; /* fp32 buffers */
  uint2 cp;         /* packed buffers */
  uint4 gp;
  float gl;
  float2 g2;
} atrous_raw;

/* The words of pixel i of the level's input (`variance_mode`,
 * `geometry_kind` and `packed` are compile-time constants of the caller). */
LULL_BODY atrous_raw atrous_tap_fetch(const lull_atrous_level_args* a, size_t i,
                                      const int variance_mode, const int geometry_kind,
                                      const int packed)
{
  atrous_raw r;
  if (packed) {
    r.cp = LULL_LDG(a->in.cp + i);
    r.gp = LULL_LDG(a->in.gp + i);
  } else {
    r.c = LULL_LDG(a->in.c + i);
    r.g0 = LULL_LDG(a->in.g0 + i);
    r.g1 = LULL_LDG(a->in.g1 + i);
  }
  r.gl = variance_mode ? LULL_LDG(&a->lg[i].x) : 0.0f;
  r.g2 = geometry_kind == LULL_ATROUS_GEOMETRY_POSITION ? LULL_LDG(a->in.g2 + i)
                                                        : make_float2(0.0f, 0.0f);
  return r;
}

/* The tap data of fetched words. */
LULL_BODY atrous_tap atrous_tap_decode(const lull_atrous_level_args* a, const atrous_raw* r,
                                       const int packed)
{
  float4 c, g0, g1;
  if (packed) {
    c = lull_unpack_color(r->cp);
    lull_unpack_guides(r->gp, &g0, &g1);
  } else {
    c = r->c;
    g0 = r->g0;
    g1 = r->g1;
  }
  return atrous_tap_make(c, r->gl, g0, g1, r->g2, a->sqrt_k_albedo);
}

/* Tap data of pixel i of the level's input (fp32 or packed buffers). */
LULL_BODY atrous_tap atrous_tap_load(const lull_atrous_level_args* a, size_t i,
                                     const int variance_mode, const int geometry_kind,
                                     const int packed)
{
  const atrous_raw r = atrous_tap_fetch(a, i, variance_mode, geometry_kind, packed);
  return atrous_tap_decode(a, &r, packed);
}

/* The centre's terms from its own tap data, ig and (variance mode) il. */
LULL_BODY atrous_center atrous_center_make(const atrous_tap* q, float ig, float il,
                                           const lull_atrous_level_args* a)
{
  atrous_center c;
  c.r = q->r;
  c.g = q->g;
  c.b = q->b;
  c.gl = q->gl;
  c.il = LULL_MUL_RN(il, -LULL_LOG2E);
  const float m = a->normal_scale;
  c.nx = LULL_MUL_RN(q->nx, m);
  c.ny = LULL_MUL_RN(q->ny, m);
  c.nz = LULL_MUL_RN(q->nz, m);
  c.nm = LULL_MUL_RN(q->nm, m);
  c.ig = LULL_MUL_RN(ig, -LULL_LOG2E);
  c.gx = q->gx;
  c.gy = q->gy;
  c.gz = q->gz;
  c.ar = q->ar;
  c.ag = q->ag;
  c.ab = q->ab;
  return c;
}

/* n plus lull_normal_dot of the centre's scaled normal and flag (c) and
 * the tap's (q), chained into n: one FFMA per component, where the dot
 * and an add took five. */
LULL_BODY float atrous_add_normal_dot(float n, float cx, float cy, float cz, float cm, float qx,
                                      float qy, float qz, float qm)
{
  n = fmaf(cx, qx, n);
  n = fmaf(cy, qy, n);
  n = fmaf(cz, qz, n);
  return fmaf(cm, qm, n);
}

/* The fixed colour test's factor -log2(e) / sigma_i^2 (Dammertz 2010 eq. 5,
 * sigma_i = sigma_0 2^-i) for the colour a level kernel reads.  Packed
 * colour is the input's times the packing scale s (atrous_packing.cuh),
 * so its differences are s times larger and the factor is divided by s^2:
 * exactly, s being a power of two, so packed and fp32 runs weigh the same
 * colours alike up to fp16 rounding.  The product is held at -FLT_MAX, so
 * that a zero difference still gives 0 (not 0 * inf) where s^-2 takes it
 * beyond the float range: any other difference then rejects the tap, the
 * limit of a sigma that small next to the colour. */
LULL_BODY float atrous_color_scale(const lull_atrous_level_args* a, const int packed)
{
  if (!packed)
    return a->color_scale;
  const float u = lull_pack_unscale(LULL_LDG(&a->stats->bound));
  return fmaxf(a->color_scale * u * u, -FLT_MAX);
}

/* One tap of class d2 = dx^2 + dy^2 (in steps; a compile-time constant
 * after unrolling): Dammertz 2010 eq. 2-5, SVGF eq. 3-4 as rearranged in
 * atrous_math.h, as n = -log2(e) E: the factor is in the constants (the
 * tap class's base, the centre's il and ig, atrous_cuda.h), the centre's
 * normal carries +2 k_n log2(e), so the normal term chains into n (one
 * FFMA per component), and the albedo, scaled by sqrt(k_a log2(e)) when
 * loaded, is subtracted channel by channel (one FFMA each).
 * tests/gpu/sass_per_tap.sh counts 25.8 SASS instructions per tap in the
 * packed kernel as built for 8 blocks per multiprocessor (25.7 for 7;
 * 27.8 with the former clamp of the normal term, a minimum and an add).
 * The variance is carried as sum h^2 w^2 Var (SVGF §4.4).  color_scale:
 * the fixed colour test's -log2(e) / sigma_i^2 in the units of the
 * colour the kernel reads (atrous_color_scale). */
LULL_BODY void atrous_accumulate(atrous_sums* s, const atrous_center* c, const atrous_tap* q,
                                 const int d2, const lull_atrous_level_args* a,
                                 const float color_scale, const int variance_mode,
                                 const int geometry_kind)
{
  float n = variance_mode
                ? lull_edge_luminance(c->gl, q->gl, c->il) + a->base[d2]
                : lull_edge_color_fixed(c->r - q->r, c->g - q->g, c->b - q->b, color_scale) +
                      a->base[d2];
  n = atrous_add_normal_dot(n, c->nx, c->ny, c->nz, c->nm, q->nx, q->ny, q->nz, q->nm);
  if (d2 != 0) { /* the centre's own geometry term is 0 */
    const float dgx = c->gx - q->gx;
    float dist2 = dgx * dgx;
    if (geometry_kind == LULL_ATROUS_GEOMETRY_POSITION) {
      const float dgy = c->gy - q->gy, dgz = c->gz - q->gz;
      dist2 = dgx * dgx + dgy * dgy + dgz * dgz;
    }
    n += lull_edge_geometry(dist2, c->ig, a->inv_d2[d2]);
  }
  const float dar = c->ar - q->ar, dag = c->ag - q->ag, dab = c->ab - q->ab;
  n -= dar * dar;
  n -= dag * dag;
  n -= dab * dab;
  const float w = lull_edge_weight_log2(n);
  s->w += w;
  s->r += w * q->r;
  s->g += w * q->g;
  s->b += w * q->b;
  s->v += w * w * q->v;
}

/* The sums normalised into the next level's (r, g, b, v)
 * (lull_normalise_sums; 1 / w by the multifunction unit: w is normal and
 * finite). */
LULL_BODY float4 atrous_normalise(const atrous_sums* t)
{
  const lull_rgbv o = lull_normalise_sums(t->w, t->r, t->g, t->b, t->v);
  return make_float4(o.r, o.g, o.b, o.v);
}

/* The finish step of core/atrous.h in two halves: multiply the albedo back
 * (in the last level, which has the albedo at hand) ... */
LULL_BODY float4 atrous_remodulate(const lull_atrous_level_args* a, float4 rgbv, float ar,
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
LULL_BODY void atrous_encode_store(const lull_atrous_level_args* a, int x, int y, float4 rgb)
{
  const size_t i = (size_t)y * (size_t)a->width + (size_t)x;
  float c[4] = {rgb.x, rgb.y, rgb.z, a->has_alpha ? a->alpha[i] : 0.0f};
  const float inv_scale = a->auto_scale ? LULL_LDG(&a->stats->inv_scale) : a->inv_scale;
LULL_UNROLL
  for (int k = 0; k < 3; ++k)
    c[k] = lull_encode_output(c[k], a->srgb, inv_scale, a->clamp_output);
  lull_cuda_image_store_n(&a->output, x, y, c, a->out_channels);
}
