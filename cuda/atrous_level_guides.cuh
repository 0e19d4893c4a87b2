/* The colour test's per-level inputs (atrous_cpu.c, prepare_level_guides)
 * as a kernel body (kernel_body.cuh): before each level of the
 * variance-guided filter, every pixel gets the 3x3-binomial-smoothed
 * luminance gl (the guide the colour test compares) and
 * il = 1 / (sigma_l sqrt(g3x3 Var) + eps) (SVGF §4.4), from its original
 * 3x3 neighbourhood, stored at the pixel's place in the level's layout.
 *
 * Why a tile of the original image: in the permuted layouts (Dolp et al.
 * 2024 §3) the original neighbours of a pixel lie in other sub-images, so a
 * thread per layout pixel gathered its 9 neighbours with a table look-up,
 * bounds checks and an unpack each (about 45 instructions per neighbour,
 * instruction-bound: 0.037-0.054 ms per 1080p level).  Here a block covers
 * 64 x 8 pixels of the original image: phase 0 loads each pixel of the
 * tile and its 1-pixel ring once (a thread issues the loads of its 3
 * pixels before it unpacks the first) and keeps its luminance and variance
 * in shared memory, phase 1 sums the 9 taps from there without branches
 * (with constant weights in blocks away from the border).
 * 64 columns: at level 4 (16 sub-images per axis) a block still reads and
 * writes 4 neighbouring pixels of each sub-image, a whole 32-byte sector
 * of the packed colour.  The baseline (original layout, no tables) runs
 * the same body.
 *
 * The sums are the CPU's formula (rows, then columns, out-of-image taps
 * weighted 0 and the weights renormalised); the CPU filters separably, so
 * the two differ by float rounding. */
#pragma once

#include "atrous_common.cuh"

enum
{
  GUIDE_BW = 64,                   /* original columns per block = threads per row */
  GUIDE_TY = 4,                    /* thread rows */
  GUIDE_ROWS = 2,                  /* pixels per thread, GUIDE_TY apart */
  GUIDE_BH = GUIDE_TY * GUIDE_ROWS, /* original rows per block */
  GUIDE_THREADS = GUIDE_BW * GUIDE_TY,
  GUIDE_TW = GUIDE_BW + 2,
  GUIDE_TH = GUIDE_BH + 2,
  GUIDE_TN = GUIDE_TW * GUIDE_TH,
  GUIDE_LOADS = (GUIDE_TN + GUIDE_THREADS - 1) / GUIDE_THREADS, /* tile pixels per thread */
  GUIDE_PHASES = 2,
};

typedef struct guide_tile
{
  float2 lv[GUIDE_TH][GUIDE_TW]; /* luminance, variance; (0, 0) outside the image */
  int col[GUIDE_TW];             /* layout column of each tile column */
  int row[GUIDE_TH];             /* layout row of each tile row */
} guide_tile;

/* Layout position of original column (axis 0) or row (axis 1) v, -1
 * outside the image. */
LULL_BODY int guide_position(const lull_atrous_level_args* a, int axis, int v)
{
  const int n = axis == 0 ? a->width : a->height;
  const int* fwd = axis == 0 ? a->fwd_x : a->fwd_y;
  if (v < 0 || v >= n)
    return -1;
  return fwd ? LULL_LDG(fwd + v) : v;
}

/* Phase 0: luminance and variance of the tile and its ring, and the layout
 * position of each tile row and column (-1 outside the image) for phase 1.
 * A thread issues the loads of its GUIDE_LOADS tile pixels before it
 * unpacks the first (one wait for memory instead of one per pixel). */
LULL_BODY void guide_stage(const lull_atrous_level_args* a, guide_tile* s, lull_thread t)
{
  const int w = a->width;
  const int x0 = t.bx * GUIDE_BW - 1, y0 = t.by * GUIDE_BH - 1;
  const int tid = t.ty * GUIDE_BW + t.tx;
  if (tid < GUIDE_TW)
    s->col[tid] = guide_position(a, 0, x0 + tid);
  if (tid < GUIDE_TH)
    s->row[tid] = guide_position(a, 1, y0 + tid);
  float lw[3];
  lull_luminance_weights(a->channels, lw);
  float4 c[GUIDE_LOADS];
  uint2 cp[GUIDE_LOADS];
  LULL_UNROLL for (int k = 0; k < GUIDE_LOADS; ++k) {
    const int e = tid + k * GUIDE_THREADS;
    const int ty = e / GUIDE_TW, tx = e - ty * GUIDE_TW;
    /* looked up again rather than read from the tables above, which would
     * need a barrier before the loads (measured: the same time) */
    const int row = guide_position(a, 1, y0 + ty), col = guide_position(a, 0, x0 + tx);
    c[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    cp[k] = make_uint2(0u, 0u);
    if (e < GUIDE_TN && row >= 0 && col >= 0) {
      const size_t j = (size_t)row * (size_t)w + (size_t)col;
      if (a->packed)
        cp[k] = LULL_LDG(a->in.cp + j);
      else
        c[k] = LULL_LDG(a->in.c + j);
    }
  }
  LULL_UNROLL for (int k = 0; k < GUIDE_LOADS; ++k) {
    const int e = tid + k * GUIDE_THREADS;
    if (e >= GUIDE_TN)
      break;
    const int ty = e / GUIDE_TW, tx = e - ty * GUIDE_TW;
    /* outside the image the zeros set above: (0, 0) */
    const float4 v = a->packed ? lull_unpack_color(cp[k]) : c[k];
    s->lv[ty][tx] = make_float2(lw[0] * v.x + lw[1] * v.y + lw[2] * v.z, v.w);
  }
}

/* (gl, il) of one pixel from its 3x3 tile neighbourhood at tile row ly,
 * column lx (both less 1), with the binomial weights kx (columns) and ky
 * (rows): the interior passes the weights as constants, the border 0 for
 * out-of-image taps (their entries are (0, 0), so they add exactly +0, as
 * skipping them does). */
LULL_BODY float2 guide_pixel(const lull_atrous_level_args* a, const guide_tile* s, int ly,
                             int lx, const float kx[3], const float ky[3])
{
  float sum_v = 0.0f, sum_l = 0.0f, sum_w = 0.0f;
  LULL_UNROLL for (int dy = 0; dy < 3; ++dy) {
    LULL_UNROLL for (int dx = 0; dx < 3; ++dx) {
      const float kw = kx[dx] * ky[dy];
      const float2 lv = s->lv[ly + dy][lx + dx];
      sum_v += kw * lv.y;
      sum_l += kw * lv.x;
      sum_w += kw;
    }
  }
  /* the divisions and the root by the multifunction unit: sum_w is one of
   * a few normal numbers (1 in the interior), the variance finite, >= 0 */
  const float inv_w = LULL_RCP(sum_w);
  return make_float2(sum_l * inv_w,
                     LULL_RCP(a->sigma_luminance * LULL_SQRT(sum_v * inv_w) + 1e-10f));
}

/* Phase 1: (gl, il) of the thread's pixels. */
LULL_BODY void guide_sum(const lull_atrous_level_args* a, const guide_tile* s, lull_thread t)
{
  const int w = a->width, h = a->height;
  const int x = t.bx * GUIDE_BW + t.tx;
  if (x >= w)
    return;
  /* a block whose tile lies inside the image (most of them) takes the
   * weights as compile-time constants */
  const int interior = s->col[0] >= 0 && s->col[GUIDE_TW - 1] >= 0 && s->row[0] >= 0 &&
                       s->row[GUIDE_TH - 1] >= 0;
  float kx[3], ky[3];
  LULL_UNROLL for (int d = 0; d < 3; ++d) {
    kx[d] = s->col[t.tx + d] >= 0 ? lull_binomial3_tap(d - 1) : 0.0f;
  }
  LULL_UNROLL for (int k = 0; k < GUIDE_ROWS; ++k) {
    const int ly = t.ty + k * GUIDE_TY; /* tile row of the pixel, less 1 */
    if (t.by * GUIDE_BH + ly >= h)
      break;
    float2 g;
    if (interior) {
      const float b[3] = {lull_binomial3_tap(-1), lull_binomial3_tap(0), lull_binomial3_tap(1)};
      g = guide_pixel(a, s, ly, t.tx, b, b);
    } else {
      LULL_UNROLL for (int d = 0; d < 3; ++d) {
        ky[d] = s->row[ly + d] >= 0 ? lull_binomial3_tap(d - 1) : 0.0f;
      }
      g = guide_pixel(a, s, ly, t.tx, kx, ky);
    }
    a->lg[(size_t)s->row[ly + 1] * (size_t)w + (size_t)s->col[t.tx + 1]] = g;
  }
}

LULL_BODY void level_guides_body(const lull_atrous_level_args* a, guide_tile* s, int phase,
                                 lull_thread t)
{
  if (phase == 0)
    guide_stage(a, s, t);
  else
    guide_sum(a, s, t);
}
