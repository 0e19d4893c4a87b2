/* The permuted schedule's level kernel in paired fp16 arithmetic (half2),
 * for packedGuides' buffers with the variance-guided colour test and depth:
 * the same filter as atrous_permuted.cuh (Dammertz 2010 eq. 2-5, SVGF eq.
 * 3-4, Dolp et al. 2024 §3), with the tap arithmetic on two pixels per
 * instruction (half2_arith.cuh).
 *
 * Why.  The fp32 level kernel is bound by instruction issue and shared
 * memory together (cuda/NOTES.md: 25.8 instructions and 52 bytes of tile
 * per tap).  Here the two halves of every operand belong to two vertically
 * adjacent pixels of a thread's strip, so each instruction evaluates a tap
 * for both, and a tile record holds both pixels' data in 16-bit halves.
 *
 * Tile.  A block of 32 x 4 threads filters 32 x 16 pixels; each thread a
 * vertical strip of 4 (two pairs, rows 0-1 and 2-3).  Record P[r][x] holds
 * tile rows r and r + 1 (lo, hi) of every value a tap reads, so a pair of
 * centres at rows r + 2 and r + 3 finds its taps at offset dy in P[r + 2 +
 * dy]: 7 record rows of 5 for 4 pixels, 8.75 record loads a pixel.  The
 * luminance guide stays fp32 (one float a pixel, rows apart): fp16 would
 * quantise it by 2^-11 of its value, coarser than the noise of late levels
 * in bright smooth regions, and the test divides that difference by the
 * noise.
 *
 * Ranges (fp16 holds up to 65504, 11 significant bits):
 *   - colour and sqrt(Var) arrive packed, their bound in [2^14, 2^15)
 *     (atrous_packing.cuh); the tile holds them times 2^-8 (exact), so the
 *     weighted sums stay below 2^7 (colour: the weights h w sum to at most
 *     1) and 2^14 (variance, sum of (h w sqrt(Var))^2), and the luminance
 *     guide's differences below 2^8;
 *   - normals and albedo are scaled by sqrt(k log2(e)) and compared as
 *     squared differences, k |n_p - n_q|^2 = 2 k (1 - n_p.n_q) for unit
 *     4-vectors (normal, missing flag): the fp32 kernel's dot form would
 *     cancel in fp16; values beyond fp16's range are held at +-65504;
 *   - depth is stored relative to the tile's middle pixel, so that fp16
 *     rounds the differences of neighbours, not their absolute depths;
 *   - the exponent n = -log2(e) E is summed in fp16 with log2 h as its
 *     start and given to the fp16 exp2 unit; it never becomes NaN (every
 *     product that can overflow is finite times non-zero), and -inf gives
 *     a weight of 0;
 *   - the sums are fp16 and become fp32 for the normalisation.
 * The result differs from the fp32 kernel by fp16 rounding of the weights
 * and sums (tests: HALF_TOLERANCE). */
#pragma once

#include "atrous_permuted.cuh"
#include "half2_arith.cuh"

#ifndef HALF_PAIRS
  #define HALF_PAIRS 2
#endif
#ifndef HALF_CENTRE_SMEM
  #define HALF_CENTRE_SMEM 0
#endif
enum
{
  HALF_BW = 32,                     /* threads per strip row: one warp */
  HALF_BH = 8 / HALF_PAIRS,         /* strip rows per block */
  HALF_THREADS = HALF_BW * HALF_BH,
  HALF_STRIP = 2 * HALF_PAIRS,      /* pixels per thread, vertically, in pairs */
  HALF_OUT_H = HALF_BH * HALF_STRIP,
  HALF_TW = HALF_BW + 4,
  HALF_TH = HALF_OUT_H + 4,
  HALF_PR = HALF_TH - 1,            /* record rows */
  /* staging: a thread decodes tile rows 2m, 2m + 1, 2m + 2 of a column and
   * writes records 2m and 2m + 1 */
  HALF_ITEMS = (HALF_PR + 1) / 2 * HALF_TW,
  HALF_ITEM_LOADS = (HALF_ITEMS + HALF_THREADS - 1) / HALF_THREADS,
  HALF_PHASES = 2,
};

typedef struct half_tile
{
  uint4 c[HALF_PR][HALF_TW]; /* r, g, b, sqrt v, times 2^-8 */
  uint4 n[HALF_PR][HALF_TW]; /* nx, ny, nz, missing flag, times sqrt(k_n log2(e)) */
  uint4 a[HALF_PR][HALF_TW]; /* ar, ag, ab times sqrt(k_a log2(e)), depth - tile's */
  float gl[HALF_TH][HALF_TW]; /* luminance guide times 2^-8 */
#if HALF_CENTRE_SMEM
  float il[HALF_OUT_H][HALF_BW]; /* centre only (atrous_permuted.cuh) */
  float ig[HALF_OUT_H][HALF_BW];
#endif
} half_tile;

#define HALF_COLOR_SCALE 0.00390625f /* 2^-8 */
#define HALF_MAX 65504.0f

/* (lo, hi) held in fp16's finite range, then rounded */
LULL_BODY lull_h2 half_make_sat(float lo, float hi)
{
  return lull_h2_make(fminf(fmaxf(lo, -HALF_MAX), HALF_MAX), fminf(fmaxf(hi, -HALF_MAX), HALF_MAX));
}

/* both halves the constant v (rounded at compile time after inlining) */
LULL_BODY lull_h2 half_splat(float v)
{
  return (lull_h2)lull_float_to_half(v) * 0x10001u;
}

/* One pixel's values as the tile stores them, before pairing. */
typedef struct half_pixel
{
  unsigned rg, bs;    /* half2 (r, g), (b, sqrt v), times 2^-8 */
  float nx, ny, nz, nm; /* scaled */
  float ar, ag, ab, gx; /* scaled; depth relative to the tile's */
  float gl;
} half_pixel;

LULL_BODY half_pixel half_pixel_decode(const lull_atrous_level_args* a, uint2 cp, uint4 gp,
                                       float gl, float sn, float gx_ref)
{
  half_pixel q;
  const lull_h2 k = half_splat(HALF_COLOR_SCALE);
  q.rg = lull_h2_mul(cp.x, k);
  q.bs = lull_h2_mul(cp.y, k);
  float4 g0, g1;
  lull_unpack_guides(gp, &g0, &g1);
  q.nx = g0.x * sn;
  q.ny = g0.y * sn;
  q.nz = g0.z * sn;
  q.nm = g0.w * sn;
  q.ar = g1.x * a->sqrt_k_albedo;
  q.ag = g1.y * a->sqrt_k_albedo;
  q.ab = g1.z * a->sqrt_k_albedo;
  q.gx = g1.w - gx_ref;
  q.gl = gl * HALF_COLOR_SCALE;
  return q;
}

/* the record of tile rows (p, q) */
LULL_BODY void half_record_store(half_tile* s, int r, int x, const half_pixel* p,
                                 const half_pixel* q)
{
  s->c[r][x] = make_uint4((p->rg & 0xffffu) | (q->rg << 16), (p->rg >> 16) | (q->rg & 0xffff0000u),
                          (p->bs & 0xffffu) | (q->bs << 16), (p->bs >> 16) | (q->bs & 0xffff0000u));
  s->n[r][x] = make_uint4(half_make_sat(p->nx, q->nx), half_make_sat(p->ny, q->ny),
                          half_make_sat(p->nz, q->nz), half_make_sat(p->nm, q->nm));
  s->a[r][x] = make_uint4(half_make_sat(p->ar, q->ar), half_make_sat(p->ag, q->ag),
                          half_make_sat(p->ab, q->ab), half_make_sat(p->gx, q->gx));
}

/* il and ig of the strip of HALF_STRIP pixels from (px, py0) down */
LULL_BODY void half_centre_inputs(const lull_atrous_level_args* a, int px, int py0, float* il,
                                  float* ig)
{
  const int w = a->width, h = a->height;
LULL_UNROLL
  for (int j = 0; j < HALF_STRIP; ++j) {
    const int ok = px < w && py0 + j < h;
    const size_t i = ok ? (size_t)(py0 + j) * (size_t)w + (size_t)px : 0;
    il[j] = LULL_LDG(&a->lg[i].y);
    ig[j] = LULL_LDG(a->in.ig + i);
  }
}

/* Phase 0: the tile. */
LULL_BODY void half_stage(const lull_atrous_level_args* a, half_tile* s, lull_thread t)
{
  const int w = a->width, h = a->height;
  const int px0 = t.bx * HALF_BW, py0 = t.by * HALF_OUT_H;
  const int tid = t.ty * HALF_BW + t.tx;
  const float sn = sqrtf(a->normal_scale * 0.5f); /* sqrt(k_n log2(e)) */
  /* the depth the tile's are stored relative to: its middle pixel's */
  const int mx = px0 + HALF_BW / 2 < w ? px0 + HALF_BW / 2 : w - 1;
  const int my = py0 + HALF_OUT_H / 2 < h ? py0 + HALF_OUT_H / 2 : h - 1;
  const float gx_ref = lull_bits_float(LULL_LDG(&a->in.gp[(size_t)my * (size_t)w + (size_t)mx].w));
#if HALF_CENTRE_SMEM
  float il[HALF_STRIP], ig[HALF_STRIP];
  half_centre_inputs(a, px0 + t.tx, py0 + t.ty * HALF_STRIP, il, ig);
#endif
LULL_UNROLL
  for (int k = 0; k < HALF_ITEM_LOADS; ++k) {
    const int e = tid + k * HALF_THREADS;
    if (e >= HALF_ITEMS)
      break;
    const int m = e / HALF_TW, tx = e - m * HALF_TW;
    const int rows = 2 * m + 2 < HALF_TH ? 3 : 2;
    const int sx = lull_layout_reflect(px0 + tx - 2, w);
    uint2 cp[3];
    uint4 gp[3];
    float gl[3];
LULL_UNROLL
    for (int j = 0; j < 3; ++j) {
      if (j < rows) {
        const int sy = lull_layout_reflect(py0 + 2 * m + j - 2, h);
        const size_t i = (size_t)sy * (size_t)w + (size_t)sx;
        cp[j] = LULL_LDG(a->in.cp + i);
        gp[j] = LULL_LDG(a->in.gp + i);
        gl[j] = LULL_LDG(&a->lg[i].x);
      }
    }
    half_pixel q[3];
LULL_UNROLL
    for (int j = 0; j < 3; ++j)
      if (j < rows) {
        q[j] = half_pixel_decode(a, cp[j], gp[j], gl[j], sn, gx_ref);
        s->gl[2 * m + j][tx] = q[j].gl;
      }
    half_record_store(s, 2 * m, tx, &q[0], &q[1]);
    if (rows == 3)
      half_record_store(s, 2 * m + 1, tx, &q[1], &q[2]);
  }
#if HALF_CENTRE_SMEM
LULL_UNROLL
  for (int j = 0; j < HALF_STRIP; ++j) {
    s->il[t.ty * HALF_STRIP + j][t.tx] = il[j];
    s->ig[t.ty * HALF_STRIP + j][t.tx] = ig[j];
  }
#endif
}

/* A pair of centres (rows lo, hi of a strip) and its sums. */
typedef struct half_center
{
  float gl_lo, gl_hi;
  lull_h2 il;                 /* -log2(e) il times 2^8 (gl is times 2^-8) */
  lull_h2 nx, ny, nz, nm;
  lull_h2 ar, ag, ab, gx;
  lull_h2 ig[9];              /* -log2(e) ig / (d2 step^2), per tap class d2 */
  lull_h2 sw, sr, sg, sb, sv; /* sums */
} half_center;

LULL_BODY void half_center_make(half_center* c, const half_tile* s, int r, int x, float il_lo,
                                float il_hi, float ig_lo, float ig_hi,
                                const lull_atrous_level_args* a)
{
  const uint4 n = s->n[r][x], g = s->a[r][x];
  c->gl_lo = s->gl[r][x];
  c->gl_hi = s->gl[r + 1][x];
  const float kl = -LULL_LOG2E / HALF_COLOR_SCALE;
  c->il = half_make_sat(il_lo * kl, il_hi * kl);
  c->nx = n.x;
  c->ny = n.y;
  c->nz = n.z;
  c->nm = n.w;
  c->ar = g.x;
  c->ag = g.y;
  c->ab = g.z;
  c->gx = g.w;
LULL_UNROLL
  for (int d2 = 0; d2 < 9; ++d2) {
    const float k = -LULL_LOG2E * a->inv_d2[d2];
    c->ig[d2] = half_make_sat(ig_lo * k, ig_hi * k);
  }
  c->sw = c->sr = c->sg = c->sb = c->sv = 0u;
}

/* log2 of the 1-D B3-spline tap (Dammertz 2010 §2.2): 3/8, 1/4, 1/16 */
LULL_BODY float half_log2_b3(int offset)
{
  const int d = offset < 0 ? -offset : offset;
  return d == 0 ? -1.4150374993f : (d == 1 ? -2.0f : -4.0f);
}

/* One tap (dx, dy) of a pair of centres: the terms of atrous_accumulate in
 * the forms the header describes. */
LULL_BODY void half_accumulate(half_center* c, uint4 qc, uint4 qn, uint4 qa, float gl_lo,
                               float gl_hi, const int dx, const int dy)
{
  const int d2 = dx * dx + dy * dy;
  lull_h2 n = lull_h2_fma_abs(lull_h2_make(c->gl_lo - gl_lo, c->gl_hi - gl_hi), c->il,
                              half_splat(half_log2_b3(dx) + half_log2_b3(dy)));
  lull_h2 t = lull_h2_sub(c->nx, qn.x);
  n = lull_h2_fnma(t, t, n);
  t = lull_h2_sub(c->ny, qn.y);
  n = lull_h2_fnma(t, t, n);
  t = lull_h2_sub(c->nz, qn.z);
  n = lull_h2_fnma(t, t, n);
  t = lull_h2_sub(c->nm, qn.w);
  n = lull_h2_fnma(t, t, n);
  t = lull_h2_sub(c->ar, qa.x);
  n = lull_h2_fnma(t, t, n);
  t = lull_h2_sub(c->ag, qa.y);
  n = lull_h2_fnma(t, t, n);
  t = lull_h2_sub(c->ab, qa.z);
  n = lull_h2_fnma(t, t, n);
  if (d2 != 0) { /* the centre's own depth term is 0 */
    t = lull_h2_sub(c->gx, qa.w);
    n = lull_h2_fma(lull_h2_mul(t, c->ig[d2]), t, n);
  }
  const lull_h2 wt = lull_h2_exp2(n);
  c->sw = lull_h2_add(c->sw, wt);
  c->sr = lull_h2_fma(wt, qc.x, c->sr);
  c->sg = lull_h2_fma(wt, qc.y, c->sg);
  c->sb = lull_h2_fma(wt, qc.z, c->sb);
  t = lull_h2_mul(wt, qc.w);
  c->sv = lull_h2_fma(t, t, c->sv);
}

/* The normalised (r, g, b, v) of one centre of a pair, in packed units. */
LULL_BODY float4 half_result(const half_center* c, int hi)
{
  const float sw = hi ? lull_h2_hi(c->sw) : lull_h2_lo(c->sw);
  const float sr = hi ? lull_h2_hi(c->sr) : lull_h2_lo(c->sr);
  const float sg = hi ? lull_h2_hi(c->sg) : lull_h2_lo(c->sg);
  const float sb = hi ? lull_h2_hi(c->sb) : lull_h2_lo(c->sb);
  const float sv = hi ? lull_h2_hi(c->sv) : lull_h2_lo(c->sv);
  const lull_rgbv o = lull_normalise_sums(sw, sr, sg, sb, sv);
  const float u = 1.0f / HALF_COLOR_SCALE;
  return make_float4(o.r * u, o.g * u, o.b * u, o.v * (u * u));
}

/* Phase 1: the stencil and the scatter to the next layout. */
LULL_BODY void half_filter(const lull_atrous_level_args* a, const half_tile* s, lull_thread t)
{
  const int w = a->width, h = a->height;
  const int lx = t.tx, ly0 = t.ty * HALF_STRIP;
  const int px = t.bx * HALF_BW + lx;
  const int py0 = t.by * HALF_OUT_H + ly0;
  float il[HALF_STRIP], ig[HALF_STRIP];
#if HALF_CENTRE_SMEM
LULL_UNROLL
  for (int j = 0; j < HALF_STRIP; ++j) {
    il[j] = s->il[ly0 + j][lx];
    ig[j] = s->ig[ly0 + j][lx];
  }
#else
  half_centre_inputs(a, px, py0, il, ig);
#endif
  half_center c[HALF_PAIRS];
LULL_UNROLL
  for (int p = 0; p < HALF_PAIRS; ++p)
    half_center_make(&c[p], s, ly0 + 2 * p + 2, lx + 2, il[2 * p], il[2 * p + 1], ig[2 * p],
                     ig[2 * p + 1], a);

  /* record rows ly0 .. ly0 + 2 HALF_PAIRS + 2: pair p takes rows 2p to
   * 2p + 4 (dy = r - 2p - 2) */
LULL_UNROLL
  for (int r = 0; r < 2 * HALF_PAIRS + 3; ++r) {
LULL_UNROLL
    for (int k = 0; k < 5; ++k) {
      const uint4 qc = s->c[ly0 + r][lx + k];
      const uint4 qn = s->n[ly0 + r][lx + k];
      const uint4 qa = s->a[ly0 + r][lx + k];
      const float gl_lo = s->gl[ly0 + r][lx + k], gl_hi = s->gl[ly0 + r + 1][lx + k];
LULL_UNROLL
      for (int p = 0; p < HALF_PAIRS; ++p)
        if (r >= 2 * p && r <= 2 * p + 4)
          half_accumulate(&c[p], qc, qn, qa, gl_lo, gl_hi, k - 2, r - 2 * p - 2);
    }
  }

  permuted_moving moving[HALF_STRIP];
LULL_UNROLL
  for (int j = 0; j < HALF_STRIP; ++j)
    if (px < w && py0 + j < h)
      moving[j] = permuted_moving_fetch(a, (size_t)(py0 + j) * (size_t)w + (size_t)px,
                                        LULL_ATROUS_GEOMETRY_DEPTH, 1);
LULL_UNROLL
  for (int j = 0; j < HALF_STRIP; ++j)
    if (px < w && py0 + j < h)
      permuted_store(a, px, py0 + j, half_result(&c[j / 2], j & 1), &moving[j],
                     LULL_ATROUS_GEOMETRY_DEPTH, 1);
}

LULL_BODY void half_body(const lull_atrous_level_args* a, half_tile* s, int phase, lull_thread t)
{
  if (phase == 0)
    half_stage(a, s, t);
  else
    half_filter(a, s, t);
}
