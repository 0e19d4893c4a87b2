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
 * instruction-bound: 0.037-0.054 ms per 1080p level).  Here a block works
 * through one or two tiles (guide_tiles_for) of 64 x 8 pixels of the
 * original image, one
 * below the other: it loads each pixel of a tile and its 1-pixel ring once
 * (a thread issues the loads of its 3 pixels before it unpacks the first)
 * and keeps their luminance and variance in shared memory, then sums the 9
 * taps from there without branches (with constant weights in tiles away
 * from the border).  The loads of the next tile are issued before the sum
 * of the current one, into a second buffer, so they wait while it sums.
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
  GUIDE_BW = 64,                   /* original columns per tile = threads per row */
  GUIDE_TY = 4,                    /* thread rows */
  GUIDE_ROWS = 2,                  /* pixels per thread and tile, GUIDE_TY apart */
  GUIDE_BH = GUIDE_TY * GUIDE_ROWS, /* original rows per tile */
  /* one or two tiles a block (guide_tiles_for), one below the other: two
   * where one-tile blocks would fill 2048 slots or more (two waves on the
   * H100 at 8 blocks per multiprocessor); smaller images keep more,
   * shorter blocks (at 512 x 512 two tiles were 3% slower, at 1920 x 1080
   * 0.4% faster) */
  GUIDE_TWO_TILE_BLOCKS = 2048,
  GUIDE_THREADS = GUIDE_BW * GUIDE_TY,
  GUIDE_TW = GUIDE_BW + 2,
  GUIDE_TH = GUIDE_BH + 2,
  GUIDE_TN = GUIDE_TW * GUIDE_TH,
  GUIDE_LOADS = (GUIDE_TN + GUIDE_THREADS - 1) / GUIDE_THREADS, /* tile pixels per thread */
};

/* Two tile buffers: phase k + 1 sums tile k from one while it stores tile
 * k + 1, whose loads it issued first, into the other. */
typedef struct guide_tile
{
  float2 lv[2][GUIDE_TH][GUIDE_TW]; /* luminance, variance; (0, 0) outside the image */
  int col[GUIDE_TW];                /* layout column of each tile column */
  int row[2][GUIDE_TH];             /* layout row of each tile row */
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

/* Tiles per block at this size, a compile-time constant of the kernel
 * (as a run-time value the loop bounds cost registers and spills: every
 * guide kernel 8-15% slower). */
LULL_BODY int guide_tiles_for(int width, int height)
{
  const long long blocks =
      (long long)((width + GUIDE_BW - 1) / GUIDE_BW) * ((height + GUIDE_BH - 1) / GUIDE_BH);
  return blocks >= GUIDE_TWO_TILE_BLOCKS ? 2 : 1;
}

/* Blocks of the guide kernel down the image. */
LULL_BODY int guide_grid_y(int height, int tiles)
{
  const int rows = GUIDE_BH * tiles;
  return (height + rows - 1) / rows;
}

/* First original row of the block's tile k, less 1 (the ring). */
LULL_BODY int guide_tile_y0(lull_thread t, int tiles, int k)
{
  return (t.by * tiles + k) * GUIDE_BH - 1;
}

/* The words of a thread's tile pixels, as loaded. */
typedef struct guide_raw
{
  float4 c[GUIDE_LOADS];
  uint2 cp[GUIDE_LOADS];
} guide_raw;

/* Issues the loads of the thread's pixels of tile k (and its ring). */
LULL_BODY guide_raw guide_fetch(const lull_atrous_level_args* a, lull_thread t, int tiles,
                                int k, const int packed)
{
  const int w = a->width;
  const int x0 = t.bx * GUIDE_BW - 1, y0 = guide_tile_y0(t, tiles, k);
  const int tid = t.ty * GUIDE_BW + t.tx;
  guide_raw r;
  LULL_UNROLL for (int i = 0; i < GUIDE_LOADS; ++i) {
    const int e = tid + i * GUIDE_THREADS;
    const int ty = e / GUIDE_TW, tx = e - ty * GUIDE_TW;
    /* looked up here rather than read from the tile's tables, which would
     * need a barrier before the loads (measured: the same time) */
    const int row = guide_position(a, 1, y0 + ty), col = guide_position(a, 0, x0 + tx);
    r.c[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    r.cp[i] = make_uint2(0u, 0u);
    if (e < GUIDE_TN && row >= 0 && col >= 0) {
      const size_t j = (size_t)row * (size_t)w + (size_t)col;
      if (packed)
        r.cp[i] = LULL_LDG(a->in.cp + j);
      else
        r.c[i] = LULL_LDG(a->in.c + j);
    }
  }
  return r;
}

/* Luminance and variance of fetched tile k into buffer b, and the layout
 * position of each of its rows (-1 outside the image) for the sum. */
LULL_BODY void guide_store(const lull_atrous_level_args* a, guide_tile* s, lull_thread t,
                           int tiles, int k, int b, const guide_raw* r, const int packed)
{
  const int tid = t.ty * GUIDE_BW + t.tx;
  if (tid < GUIDE_TH)
    s->row[b][tid] = guide_position(a, 1, guide_tile_y0(t, tiles, k) + tid);
  float lw[3];
  lull_luminance_weights(a->channels, lw);
  LULL_UNROLL for (int i = 0; i < GUIDE_LOADS; ++i) {
    const int e = tid + i * GUIDE_THREADS;
    if (e >= GUIDE_TN)
      break;
    const int ty = e / GUIDE_TW, tx = e - ty * GUIDE_TW;
    /* outside the image the zeros set by guide_fetch: (0, 0) */
    const float4 v = packed ? lull_unpack_color(r->cp[i]) : r->c[i];
    s->lv[b][ty][tx] = make_float2(lw[0] * v.x + lw[1] * v.y + lw[2] * v.z, v.w);
  }
}

/* (gl, il) of one pixel from its 3x3 neighbourhood in buffer b at tile row
 * ly, column lx (both less 1), with the binomial weights kx (columns) and
 * ky (rows): the interior passes the weights as constants, the border 0
 * for out-of-image taps (their entries are (0, 0), so they add exactly +0,
 * as skipping them does). */
LULL_BODY float2 guide_pixel(const lull_atrous_level_args* a, const guide_tile* s, int b, int ly,
                             int lx, const float kx[3], const float ky[3])
{
  float sum_v = 0.0f, sum_l = 0.0f, sum_w = 0.0f;
  LULL_UNROLL for (int dy = 0; dy < 3; ++dy) {
    LULL_UNROLL for (int dx = 0; dx < 3; ++dx) {
      const float kw = kx[dx] * ky[dy];
      const float2 lv = s->lv[b][ly + dy][lx + dx];
      sum_v += kw * lv.y;
      sum_l += kw * lv.x;
      sum_w += kw;
    }
  }
  /* the divisions and the root by the multifunction unit: sum_w is one of
   * a few normal numbers (1 in the interior), the variance finite, >= 0 */
  const float inv_w = LULL_RCP(sum_w);
  return make_float2(sum_l * inv_w, lull_luminance_inv_scale(a->sigma_luminance, sum_v * inv_w));
}

/* (gl, il) of the thread's pixels of tile k, from buffer b. */
LULL_BODY void guide_sum(const lull_atrous_level_args* a, const guide_tile* s, lull_thread t,
                         int tiles, int k, int b)
{
  const int w = a->width, h = a->height;
  const int x = t.bx * GUIDE_BW + t.tx;
  if (x >= w)
    return;
  /* a tile that lies inside the image (most of them) takes the weights as
   * compile-time constants */
  const int interior = s->col[0] >= 0 && s->col[GUIDE_TW - 1] >= 0 && s->row[b][0] >= 0 &&
                       s->row[b][GUIDE_TH - 1] >= 0;
  float kx[3], ky[3];
  LULL_UNROLL for (int d = 0; d < 3; ++d) {
    kx[d] = s->col[t.tx + d] >= 0 ? lull_binomial3_tap(d - 1) : 0.0f;
  }
  LULL_UNROLL for (int i = 0; i < GUIDE_ROWS; ++i) {
    const int ly = t.ty + i * GUIDE_TY; /* tile row of the pixel, less 1 */
    if (guide_tile_y0(t, tiles, k) + 1 + ly >= h)
      break;
    float2 g;
    if (interior) {
      const float c[3] = {lull_binomial3_tap(-1), lull_binomial3_tap(0), lull_binomial3_tap(1)};
      g = guide_pixel(a, s, b, ly, t.tx, c, c);
    } else {
      LULL_UNROLL for (int d = 0; d < 3; ++d) {
        ky[d] = s->row[b][ly + d] >= 0 ? lull_binomial3_tap(d - 1) : 0.0f;
      }
      g = guide_pixel(a, s, b, ly, t.tx, kx, ky);
    }
    a->lg[(size_t)s->row[b][ly + 1] * (size_t)w + (size_t)s->col[t.tx + 1]] = g;
  }
}

/* Phase 0 stages tile 0 (and the column table, the same for every tile of
 * the block); phase k + 1 issues the loads of tile k + 1, sums tile k, then
 * stores tile k + 1 into the other buffer, so that the loads of one tile
 * are in flight while the previous one is summed. */
LULL_BODY void level_guides_body(const lull_atrous_level_args* a, guide_tile* s, int phase,
                                 lull_thread t, const int packed, const int tiles)
{
  const int h = a->height;
  if (phase == 0) {
    const int tid = t.ty * GUIDE_BW + t.tx;
    if (tid < GUIDE_TW)
      s->col[tid] = guide_position(a, 0, t.bx * GUIDE_BW - 1 + tid);
    const guide_raw r = guide_fetch(a, t, tiles, 0, packed);
    guide_store(a, s, t, tiles, 0, 0, &r, packed);
    return;
  }
  const int k = phase - 1;
  /* the block's tiles end after `tiles`, or at the image's bottom */
  if (k >= tiles || guide_tile_y0(t, tiles, k) + 1 >= h)
    return;
  const int next = k + 1 < tiles && guide_tile_y0(t, tiles, k + 1) + 1 < h;
  guide_raw r = {};
  if (next)
    r = guide_fetch(a, t, tiles, k + 1, packed);
  guide_sum(a, s, t, tiles, k, k & 1);
  if (next)
    guide_store(a, s, t, tiles, k + 1, (k + 1) & 1, &r, packed);
}
