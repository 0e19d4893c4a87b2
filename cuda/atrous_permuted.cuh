/* The permuted schedule of Dolp, Hanika and Dachsbacher 2024 (§3) as
 * kernel bodies (kernel_body.cuh).
 *
 * Level l reads its input in layout l (atrous_layout.h), where the taps of
 * the level are direct neighbours, so every level runs the same undilated
 * 5x5 stencil:
 *   - phase 0 (staging): a block of 32 x 4 threads stages a tile of
 *     (32 + 4) x (8 + 4) pixels with their guides in shared memory, fp32
 *     (packed buffers are unpacked here), taps that leave the embedded image
 *     mirrored back (§3.4), plus the centre-only inputs il and ig of its
 *     pixels; the loads of a thread's pixels are issued before the first
 *     is decoded;
 *   - phase 1 (stencil): each thread filters a vertical strip of 2 pixels,
 *     streaming the 6 tap rows it needs once and applying each tap to every
 *     centre of the strip it reaches (register blocking: 15 instead of 25
 *     shared-memory tap loads per pixel), with the tap arithmetic of
 *     atrous_common.cuh; then the result goes to layout l + 1 (σ2↓, and
 *     σ_b at level 0, §3.1-3.4) together with the pixel's guides; the last
 *     level writes the original layout instead (§3.3), and a small kernel
 *     stores it in the user's format with coalesced writes.
 *
 * Why strips of 2 pixels: strips of 4 load fewer taps (10 per pixel) but
 * unroll 100 tap evaluations (~46 KB of code: a quarter of the stencil's
 * stall samples were instruction-fetch waits) and need 115 registers, so 4
 * blocks (16 warps) per multiprocessor; strips of 2 unroll 50 and fit
 * 6-8 blocks (24-32 warps; atrous_permuted.cu has the choice per kernel).
 * H100, packed, five levels at 7 blocks: 1080p 0.641 -> 0.578 ms,
 * 4K 2.375 -> 2.070 ms; strips of 1 (25 loads per pixel) were slower than
 * both (0.699 ms), and so was a block of 32 x 2 or 32 x 8 threads
 * (cuda/NOTES.md); strips of 3 (91 registers, 5 blocks) later measured
 * 0.681 against 0.659 ms for the whole filter.
 *
 * Thread mapping (§3.5): tiles hold 16-byte elements, which a warp reads in
 * wavefronts of 8 threads over 8 bank groups; the GCD test for the row
 * stride between the strips of one warp (2 x 36 elements) gives the bank
 * pattern tile d x n = 8 x 1 (lull_bank_pattern_tile), so each warp is laid
 * out as 32 consecutive columns of one strip row, which is conflict-free
 * for every tap shift; tests/gpu/atrous_layout_test.c checks the
 * arithmetic. */
#pragma once

#include "atrous_common.cuh"

enum
{
  PERM_BW = 32,                     /* threads per strip row: one warp */
  PERM_BH = 4,                      /* strip rows per block */
  PERM_THREADS = PERM_BW * PERM_BH,
  PERM_STRIP = 2,                   /* pixels per thread, vertically */
  PERM_OUT_H = PERM_BH * PERM_STRIP, /* output rows per block */
  PERM_TW = PERM_BW + 4,
  PERM_TH = PERM_OUT_H + 4,
  PERM_TN = PERM_TW * PERM_TH,
  PERM_LOADS = (PERM_TN + PERM_THREADS - 1) / PERM_THREADS,
  PERM_BATCH = (PERM_LOADS + 1) / 2,
  PERM_PHASES = 2,
};

/* The shared tile.  p must stay last: kernels without positions allocate
 * the tile up to p only (permuted_tile_bytes). */
typedef struct permuted_tile
{
  float4 c[PERM_TH][PERM_TW];  /* r, g, b, v */
  float4 n[PERM_TH][PERM_TW];  /* nx, ny, nz, missing flag */
  float4 a[PERM_TH][PERM_TW];  /* albedo times sqrt(k_a log2(e)), gx */
  float gl[PERM_TH][PERM_TW];  /* luminance guide */
  float il[PERM_OUT_H][PERM_BW]; /* centre only: 1 / (sigma_l sqrt(g3x3 Var) + eps) */
  float ig[PERM_OUT_H][PERM_BW]; /* centre only: 1 / (sigma_g s_p)^2 */
  float2 p[PERM_TH][PERM_TW];  /* gy, gz (position input) */
} permuted_tile;

#define permuted_tile_bytes(geometry_kind)                                      \
  ((geometry_kind) == LULL_ATROUS_GEOMETRY_POSITION ? sizeof(permuted_tile)     \
                                                    : offsetof(permuted_tile, p))

LULL_BODY atrous_tap permuted_tile_tap(const permuted_tile* s, int row, int col,
                                       const int geometry_kind)
{
  const float4 c = s->c[row][col];
  const float4 n = s->n[row][col];
  const float4 a = s->a[row][col];
  atrous_tap q;
  q.r = c.x;
  q.g = c.y;
  q.b = c.z;
  q.v = c.w;
  q.gl = s->gl[row][col];
  q.nx = n.x;
  q.ny = n.y;
  q.nz = n.z;
  q.nm = n.w;
  q.gx = a.w;
  q.gy = q.gz = 0.0f;
  if (geometry_kind == LULL_ATROUS_GEOMETRY_POSITION) {
    const float2 p = s->p[row][col];
    q.gy = p.x;
    q.gz = p.y;
  }
  q.ar = a.x;
  q.ag = a.y;
  q.ab = a.z;
  return q;
}

/* Phase 0: the tile and the centre-only inputs. */
LULL_BODY void permuted_stage(const lull_atrous_level_args* a, permuted_tile* s, lull_thread t,
                              const int variance_mode, const int geometry_kind,
                              const int packed)
{
  const int w = a->width, h = a->height;
  const int px0 = t.bx * PERM_BW, py0 = t.by * PERM_OUT_H;
  const int tid = t.ty * PERM_BW + t.tx;
  /* the centre-only inputs first, then the tile: all loads of a batch in
   * flight before the first pixel is decoded and stored */
  const int px = px0 + t.tx;
  float il[PERM_STRIP], ig[PERM_STRIP];
LULL_UNROLL
  for (int j = 0; j < PERM_STRIP; ++j) {
    const int py = py0 + t.ty * PERM_STRIP + j;
    const int ok = px < w && py < h;
    const size_t i = ok ? (size_t)py * (size_t)w + (size_t)px : 0;
    il[j] = variance_mode ? LULL_LDG(&a->lg[i].y) : 0.0f;
    ig[j] = LULL_LDG(a->in.ig + i);
  }
  /* packed words take 7 registers a pixel, so all PERM_LOADS pixels of a
   * thread are fetched at once; fp32 ones (13) in batches of PERM_BATCH */
  const int batch_n = packed ? PERM_LOADS : PERM_BATCH;
LULL_UNROLL
  for (int batch = 0; batch < PERM_LOADS; batch += batch_n) {
    atrous_raw raw[PERM_LOADS];
LULL_UNROLL
    for (int k = 0; k < batch_n; ++k) {
      const int e = tid + (batch + k) * PERM_THREADS;
      if (e < PERM_TN) {
        const int ty = e / PERM_TW, tx = e - ty * PERM_TW;
        const int sx = lull_layout_reflect(px0 + tx - 2, w);
        const int sy = lull_layout_reflect(py0 + ty - 2, h);
        raw[k] = atrous_tap_fetch(a, (size_t)sy * (size_t)w + (size_t)sx, variance_mode,
                                  geometry_kind, packed);
      }
    }
LULL_UNROLL
    for (int k = 0; k < batch_n; ++k) {
      const int e = tid + (batch + k) * PERM_THREADS;
      if (e < PERM_TN) {
        const int ty = e / PERM_TW, tx = e - ty * PERM_TW;
        const atrous_tap q = atrous_tap_decode(a, &raw[k], packed);
        s->c[ty][tx] = make_float4(q.r, q.g, q.b, q.v);
        s->n[ty][tx] = make_float4(q.nx, q.ny, q.nz, q.nm);
        s->a[ty][tx] = make_float4(q.ar, q.ag, q.ab, q.gx);
        s->gl[ty][tx] = q.gl;
        if (geometry_kind == LULL_ATROUS_GEOMETRY_POSITION)
          s->p[ty][tx] = make_float2(q.gy, q.gz);
      }
    }
  }
LULL_UNROLL
  for (int j = 0; j < PERM_STRIP; ++j) {
    s->il[t.ty * PERM_STRIP + j][t.tx] = il[j];
    s->ig[t.ty * PERM_STRIP + j][t.tx] = ig[j];
  }
}

/* The words of a pixel that its level passes on unchanged: the guides and
 * ig, which move to the next layout with the pixel, or in the last level
 * the albedo the output is multiplied with (§3.3). */
typedef struct permuted_moving
{
  uint4 gp;      /* packed guides */
  float4 g0, g1; /* fp32 guides */
  float2 g2;
  float ig;
} permuted_moving;

LULL_BODY permuted_moving permuted_moving_fetch(const lull_atrous_level_args* a, size_t i,
                                                const int geometry_kind, const int packed)
{
  permuted_moving m;
  m.gp = make_uint4(0u, 0u, 0u, 0u);
  m.g0 = m.g1 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  m.g2 = make_float2(0.0f, 0.0f);
  m.ig = 0.0f;
  if (packed)
    m.gp = LULL_LDG(a->in.gp + i);
  else
    m.g1 = LULL_LDG(a->in.g1 + i);
  if (!a->last) {
    if (!packed)
      m.g0 = LULL_LDG(a->in.g0 + i);
    m.ig = LULL_LDG(a->in.ig + i);
    if (geometry_kind == LULL_ATROUS_GEOMETRY_POSITION)
      m.g2 = LULL_LDG(a->in.g2 + i);
  }
  return m;
}

/* Phase 1: the stencil and the scatter to the next layout. */
LULL_BODY void permuted_filter(const lull_atrous_level_args* a, const permuted_tile* s,
                               lull_thread t, const int variance_mode, const int geometry_kind,
                               const int packed)
{
  const int w = a->width, h = a->height;
  const int lx = t.tx, ly0 = t.ty * PERM_STRIP;
  const int px = t.bx * PERM_BW + lx;
  const int py0 = t.by * PERM_OUT_H + ly0;

  const float color_scale = variance_mode ? 0.0f : atrous_color_scale(a, packed);
  atrous_center c[PERM_STRIP];
  atrous_sums sums[PERM_STRIP];
LULL_UNROLL
  for (int j = 0; j < PERM_STRIP; ++j) {
    const atrous_tap self = permuted_tile_tap(s, ly0 + j + 2, lx + 2, geometry_kind);
    c[j] = atrous_center_make(&self, s->ig[ly0 + j][lx], s->il[ly0 + j][lx], a);
    atrous_sums_zero(&sums[j]);
  }

  /* tap rows and, within a row, taps by increasing memory position */
LULL_UNROLL
  for (int r = 0; r < PERM_STRIP + 4; ++r) {
LULL_UNROLL
    for (int k = 0; k < 5; ++k) {
      const atrous_tap q = permuted_tile_tap(s, ly0 + r, lx + k, geometry_kind);
LULL_UNROLL
      for (int j = 0; j < PERM_STRIP; ++j) {
        const int dy = r - 2 - j;
        if (dy < -2 || dy > 2)
          continue;
        atrous_accumulate(&sums[j], &c[j], &q, (k - 2) * (k - 2) + dy * dy, a, color_scale,
                          variance_mode, geometry_kind);
      }
    }
  }

  /* what moves with each pixel to the next layout (the last level: its
   * albedo), loaded for the whole strip before the first store, so that
   * the loads overlap (each store waited for its own load) */
  permuted_moving moving[PERM_STRIP];
LULL_UNROLL
  for (int j = 0; j < PERM_STRIP; ++j)
    if (px < w && py0 + j < h)
      moving[j] = permuted_moving_fetch(a, (size_t)(py0 + j) * (size_t)w + (size_t)px,
                                        geometry_kind, packed);

LULL_UNROLL
  for (int j = 0; j < PERM_STRIP; ++j) {
    const int py = py0 + j;
    if (px >= w || py >= h)
      continue;
    const float4 out = atrous_normalise(&sums[j]);
    const permuted_moving* m = &moving[j];
    if (a->last) {
      /* §3.3: the original layout, with the (unscaled) albedo multiplied back */
      float4 g0, g1 = m->g1;
      if (packed)
        lull_unpack_guides(m->gp, &g0, &g1);
      const size_t o =
          (size_t)LULL_LDG(a->inv_y + py) * (size_t)w + (size_t)LULL_LDG(a->inv_x + px);
      const float4 rgb = atrous_remodulate(a, out, g1.x, g1.y, g1.z);
      if (packed)
        a->final_cp[o] = lull_pack_color(rgb); /* the fourth channel is 0 */
      else
        a->final_c[o] = rgb;
      continue;
    }
    const size_t o = (size_t)lull_layout_step(py, h, a->level) * (size_t)w +
                     (size_t)lull_layout_step(px, w, a->level);
    if (packed) {
      a->out.cp[o] = lull_pack_color(out);
      a->out.gp[o] = m->gp;
    } else {
      a->out.c[o] = out;
      a->out.g0[o] = m->g0;
      a->out.g1[o] = m->g1;
    }
    a->out.ig[o] = m->ig;
    if (geometry_kind == LULL_ATROUS_GEOMETRY_POSITION)
      a->out.g2[o] = m->g2;
  }
}

LULL_BODY void permuted_body(const lull_atrous_level_args* a, permuted_tile* s, int phase,
                             lull_thread t, const int variance_mode, const int geometry_kind,
                             const int packed)
{
  if (phase == 0)
    permuted_stage(a, s, t, variance_mode, geometry_kind, packed);
  else
    permuted_filter(a, s, t, variance_mode, geometry_kind, packed);
}

/* A __global__ level kernel of the permuted schedule: the two phases with a
 * barrier between them; the tile is allocated up to what the geometry
 * needs (permuted_tile_bytes).  min_blocks: blocks per multiprocessor the
 * register budget must allow (__launch_bounds__). */
#define LULL_PERMUTED_KERNEL(name, variance_mode, geometry_kind, packed, min_blocks)   \
  static __global__ void __launch_bounds__(PERM_THREADS, min_blocks)                   \
      name(const lull_atrous_level_args a)                                             \
  {                                                                                     \
    __shared__ __align__(16) unsigned char smem[permuted_tile_bytes(geometry_kind)];   \
    permuted_tile* s = (permuted_tile*)smem;                                            \
    const lull_thread t = LULL_THREAD_HERE();                                           \
    permuted_body(&a, s, 0, t, variance_mode, geometry_kind, packed);                   \
    __syncthreads();                                                                    \
    permuted_body(&a, s, 1, t, variance_mode, geometry_kind, packed);                   \
  }

/* The rest of the finish step after the last level: sRGB, scale, clamp,
 * alpha, and the user's format (blocks of 32 x 8). */
LULL_BODY void permuted_finish_body(const lull_atrous_level_args* a, lull_thread t)
{
  const int x = t.bx * 32 + t.tx;
  const int y = t.by * 8 + t.ty;
  if (x >= a->width || y >= a->height)
    return;
  const size_t i = (size_t)y * (size_t)a->width + (size_t)x;
  if (!a->packed) {
    atrous_encode_store(a, x, y, a->final_c[i]);
    return;
  }
  /* divided by the packing scale again (exactly: a power of two) */
  const float u = lull_pack_unscale(LULL_LDG(&a->stats->bound));
  const float4 c = lull_unpack_color(LULL_LDG(a->final_cp + i));
  atrous_encode_store(a, x, y, make_float4(c.x * u, c.y * u, c.z * u, 0.0f));
}

/* Layout tables: thread x of axis by (0: x, 1: y) walks its pixel through
 * the layouts (σ2↓ with σ_b first) and records both directions (blocks of
 * 256 threads). */
LULL_BODY void layout_tables_body(int* tables, int width, int height, int levels, lull_thread t)
{
  const int axis = t.by;
  const int n = axis == 0 ? width : height;
  const int x = t.bx * 256 + t.tx;
  if (x >= n)
    return;
  int* fwd = tables + (axis == 0 ? 0 : 2 * (size_t)levels * (size_t)width);
  int* inv = fwd + (size_t)levels * (size_t)n;
  int p = x;
  for (int l = 0; l < levels; ++l) {
    fwd[(size_t)l * (size_t)n + (size_t)x] = p;
    inv[(size_t)l * (size_t)n + (size_t)p] = x;
    p = lull_layout_step(p, n, l);
  }
}
