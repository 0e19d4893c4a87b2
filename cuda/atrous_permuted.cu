/* The permuted schedule of Dolp, Hanika and Dachsbacher 2024 (§3).
 *
 * Level l reads its input in layout l (atrous_layout.h), where the taps of
 * the level are direct neighbours, so every level runs the same undilated
 * 5x5 stencil:
 *   - preamble: a block stages a tile of (32 + 4) x (16 + 4) pixels with
 *     their guides in shared memory (taps that leave the embedded image
 *     are mirrored back, §3.4), and each thread finds the original
 *     coordinates of its pixels in the layout tables;
 *   - stencil: each thread filters a vertical strip of STRIP_ROWS pixels,
 *     streaming the tap rows once and applying each loaded tap to every
 *     centre of the strip it reaches (register blocking: the shared-memory
 *     traffic per pixel drops from 25 to 5 (STRIP_ROWS + 4) / STRIP_ROWS
 *     tap loads);
 *   - postamble: the result goes to layout l + 1 (σ2↓, and σ_b at level 0,
 *     §3.1-3.4) together with the pixel's guides; the last level writes
 *     the original layout instead (§3.3), and a small kernel stores it in
 *     the user's format with coalesced writes.
 *
 * Thread mapping (§3.5): tiles hold 16-byte elements, which a warp reads in
 * wavefronts of 8 threads over 8 bank groups.  The GCD test for the row
 * stride between the strips of one warp (STRIP_ROWS x TILE_W elements)
 * gives the bank pattern tile d x n = 8 x 1 (lull_bank_pattern_tile), so
 * each warp is laid out as 32 consecutive columns of one strip row, which
 * is conflict-free for every tap shift; tests/gpu/atrous_layout_test.c
 * checks the arithmetic. */
#include "atrous_common.cuh"
#include "atrous_layout.h"

#if !defined(LULL_PERMUTED_STRIP_ROWS)
  #define LULL_PERMUTED_STRIP_ROWS 2
#endif
/* blocks per multiprocessor the register budget must allow (3 caps the
 * kernel at 80 registers, with some spilling: a benchmark variant) */
#if !defined(LULL_PERMUTED_MIN_BLOCKS)
  #define LULL_PERMUTED_MIN_BLOCKS 2
#endif

enum
{
  BLOCK_W = 32,                         /* threads per strip row: one warp */
  BLOCK_H = 16 / LULL_PERMUTED_STRIP_ROWS, /* strip rows per block */
  STRIP_ROWS = LULL_PERMUTED_STRIP_ROWS, /* pixels per thread, vertically */
  OUT_H = BLOCK_H * STRIP_ROWS,         /* output rows per block */
  TILE_W = BLOCK_W + 4,
  TILE_H = OUT_H + 4,
};

typedef struct permuted_tile
{
  float4 c[TILE_H][TILE_W];  /* r, g, b, v */
  float4 n[TILE_H][TILE_W];  /* nx, ny, nz, missing flag */
  float4 a[TILE_H][TILE_W];  /* ar, ag, ab, gx */
  float gl[TILE_H][TILE_W];  /* luminance guide */
  float2 p[TILE_H][TILE_W];  /* gy, gz (position input) */
} permuted_tile;

static __device__ __forceinline__ atrous_tap tile_tap(const permuted_tile* t, int row, int col,
                                                      const int geometry_kind)
{
  const float4 c = t->c[row][col];
  const float4 n = t->n[row][col];
  const float4 a = t->a[row][col];
  atrous_tap q;
  q.r = c.x;
  q.g = c.y;
  q.b = c.z;
  q.v = c.w;
  q.gl = t->gl[row][col];
  q.nx = n.x;
  q.ny = n.y;
  q.nz = n.z;
  q.nm = n.w;
  q.gx = a.w;
  q.gy = q.gz = 0.0f;
  if (geometry_kind == LULL_ATROUS_GEOMETRY_POSITION) {
    const float2 p = t->p[row][col];
    q.gy = p.x;
    q.gz = p.y;
  }
  q.ar = a.x;
  q.ag = a.y;
  q.ab = a.z;
  return q;
}

enum { TILE_LOADS = (TILE_H * TILE_W + BLOCK_W * BLOCK_H - 1) / (BLOCK_W * BLOCK_H) };

static __device__ __forceinline__ void permuted_level(const lull_atrous_level_args* a,
                                                      const int variance_mode,
                                                      const int geometry_kind)
{
  __shared__ permuted_tile tile;
  const int w = a->width, h = a->height;
  const int px0 = (int)blockIdx.x * BLOCK_W;
  const int py0 = (int)blockIdx.y * OUT_H;
  const int tid = (int)(threadIdx.y * BLOCK_W + threadIdx.x);

  /* preamble 1: issue every global load of this thread's share of the tile
   * (mirrored at the edges of the embedding) before using any of them */
  atrous_tap staged[TILE_LOADS];
#pragma unroll
  for (int k = 0; k < TILE_LOADS; ++k) {
    const int e = tid + k * BLOCK_W * BLOCK_H;
    const int ty = e / TILE_W, tx = e - ty * TILE_W;
    if (e < TILE_H * TILE_W) {
      const int sx = lull_layout_reflect(px0 + tx - 2, w);
      const int sy = lull_layout_reflect(py0 + ty - 2, h);
      staged[k] = atrous_tap_load(a, (size_t)sy * (size_t)w + (size_t)sx, geometry_kind);
    }
  }

  /* preamble 2, while those loads are in flight: where this thread's
   * pixels are in the image, and their centre-only inputs */
  const int lx = (int)threadIdx.x;
  const int ly0 = (int)threadIdx.y * STRIP_ROWS;
  const int px = px0 + lx;
  const int x_ok = px < w;
  const int ox = x_ok ? __ldg(a->inv_x + px) : 0;
  /* the taps of a row are summed in the original image's x order */
  const int fx = lull_layout_direction(ox, a->level);
  int oy[STRIP_ROWS];
  float inv_l[STRIP_ROWS], inv_g[STRIP_ROWS];
#pragma unroll
  for (int j = 0; j < STRIP_ROWS; ++j) {
    const int py = py0 + ly0 + j;
    const int ok = x_ok && py < h;
    oy[j] = ok ? __ldg(a->inv_y + py) : 0;
    const size_t i = (size_t)(ok ? py : 0) * (size_t)w + (size_t)(ok ? px : 0);
    inv_l[j] = variance_mode ? __ldg(&a->lg[i].y) : 0.0f;
    inv_g[j] = __ldg(a->ig_in + i);
  }

#pragma unroll
  for (int k = 0; k < TILE_LOADS; ++k) {
    const int e = tid + k * BLOCK_W * BLOCK_H;
    const int ty = e / TILE_W, tx = e - ty * TILE_W;
    if (e < TILE_H * TILE_W) {
      const atrous_tap* q = &staged[k];
      tile.c[ty][tx] = make_float4(q->r, q->g, q->b, q->v);
      tile.n[ty][tx] = make_float4(q->nx, q->ny, q->nz, q->nm);
      tile.a[ty][tx] = make_float4(q->ar, q->ag, q->ab, q->gx);
      if (variance_mode)
        tile.gl[ty][tx] = q->gl;
      if (geometry_kind == LULL_ATROUS_GEOMETRY_POSITION)
        tile.p[ty][tx] = make_float2(q->gy, q->gz);
    }
  }
  __syncthreads();

  int col[5];
#pragma unroll
  for (int k = 0; k < 5; ++k)
    col[k] = lx + 2 + fx * (k - 2);
  atrous_center c[STRIP_ROWS];
  atrous_rows rows[STRIP_ROWS];
#pragma unroll
  for (int j = 0; j < STRIP_ROWS; ++j) {
    const atrous_tap self = tile_tap(&tile, ly0 + j + 2, lx + 2, geometry_kind);
    c[j] = atrous_center_from(&self, inv_g[j], inv_l[j]);
  }

  /* stencil: tap rows in memory order; each row's 5 taps in x order */
#pragma unroll
  for (int t = 0; t < STRIP_ROWS + 4; ++t) {
    atrous_sums row[STRIP_ROWS];
#pragma unroll
    for (int j = 0; j < STRIP_ROWS; ++j)
      atrous_sums_zero(&row[j]);
#pragma unroll
    for (int k = 0; k < 5; ++k) {
      const atrous_tap q = tile_tap(&tile, ly0 + t, col[k], geometry_kind);
#pragma unroll
      for (int j = 0; j < STRIP_ROWS; ++j) {
        const int dy = t - 2 - j;
        if (dy < -2 || dy > 2)
          continue;
        const int dx = k - 2;
        atrous_accumulate(&row[j], &c[j], &q, lull_b3_tap(dx) * lull_b3_tap(dy),
                          a->inv_d2[dx * dx + dy * dy], a, variance_mode, geometry_kind);
      }
    }
#pragma unroll
    for (int j = 0; j < STRIP_ROWS; ++j) {
      const int dy = t - 2 - j;
      if (dy >= -2 && dy <= 2)
        atrous_rows_add(&rows[j], &row[j], dy, dy <= 0);
    }
  }

  /* postamble: scatter to the next layout; the last level restores the
   * original layout (§3.3) with the albedo multiplied back, and
   * permuted_finish stores it in the user's format with coalesced writes */
#pragma unroll
  for (int j = 0; j < STRIP_ROWS; ++j) {
    const int py = py0 + ly0 + j;
    if (!x_ok || py >= h)
      continue;
    const atrous_sums total = atrous_rows_total(&rows[j]);
    const float4 out = atrous_normalise(&total);
    if (a->last) {
      a->c_out[(size_t)oy[j] * (size_t)w + (size_t)ox] =
          atrous_remodulate(a, out, c[j].ar, c[j].ag, c[j].ab);
      continue;
    }
    const size_t i = (size_t)py * (size_t)w + (size_t)px;
    const size_t o = (size_t)lull_layout_step(py, h, a->level) * (size_t)w +
                     (size_t)lull_layout_step(px, w, a->level);
    a->c_out[o] = out;
    a->g0_out[o] = __ldg(a->g0_in + i);
    a->g1_out[o] = __ldg(a->g1_in + i);
    a->ig_out[o] = __ldg(a->ig_in + i);
    if (geometry_kind == LULL_ATROUS_GEOMETRY_POSITION)
      a->g2_out[o] = __ldg(a->g2_in + i);
  }
}

/* The rest of the finish step after the last level: sRGB, scale, clamp,
 * alpha, and the user's format. */
static __global__ void permuted_finish(const lull_atrous_level_args a)
{
  const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (x < a.width && y < a.height)
    atrous_encode_store(&a, x, y, a.c_out[(size_t)y * (size_t)a.width + (size_t)x]);
}

static __global__ void __launch_bounds__(BLOCK_W* BLOCK_H, LULL_PERMUTED_MIN_BLOCKS)
    permuted_variance_depth(const lull_atrous_level_args a)
{
  permuted_level(&a, 1, LULL_ATROUS_GEOMETRY_DEPTH);
}

static __global__ void __launch_bounds__(BLOCK_W* BLOCK_H, LULL_PERMUTED_MIN_BLOCKS)
    permuted_variance_position(const lull_atrous_level_args a)
{
  permuted_level(&a, 1, LULL_ATROUS_GEOMETRY_POSITION);
}

static __global__ void __launch_bounds__(BLOCK_W* BLOCK_H, LULL_PERMUTED_MIN_BLOCKS)
    permuted_fixed_depth(const lull_atrous_level_args a)
{
  permuted_level(&a, 0, LULL_ATROUS_GEOMETRY_DEPTH);
}

static __global__ void __launch_bounds__(BLOCK_W* BLOCK_H, LULL_PERMUTED_MIN_BLOCKS)
    permuted_fixed_position(const lull_atrous_level_args a)
{
  permuted_level(&a, 0, LULL_ATROUS_GEOMETRY_POSITION);
}

cudaError_t lull_atrous_permuted_launch(const lull_atrous_level_args* args, int variance_mode,
                                        int geometry_kind, cudaStream_t stream)
{
  const dim3 block(BLOCK_W, BLOCK_H);
  const dim3 grid((unsigned)((args->width + BLOCK_W - 1) / BLOCK_W),
                  (unsigned)((args->height + OUT_H - 1) / OUT_H));
  const int pos = geometry_kind == LULL_ATROUS_GEOMETRY_POSITION;
  if (variance_mode)
    (pos ? permuted_variance_position : permuted_variance_depth)<<<grid, block, 0, stream>>>(*args);
  else
    (pos ? permuted_fixed_position : permuted_fixed_depth)<<<grid, block, 0, stream>>>(*args);
  if (args->last) {
    const dim3 fblock(32, 8);
    const dim3 fgrid((unsigned)((args->width + 31) / 32), (unsigned)((args->height + 7) / 8));
    permuted_finish<<<fgrid, fblock, 0, stream>>>(*args);
  }
  return cudaGetLastError();
}

/* -- layout tables: thread x of axis blockIdx.y walks its pixel through the
 * layouts (σ2↓ with σ_b first) and records both directions. */
static __global__ void layout_tables(int* tables, int width, int height, int levels)
{
  const int axis = (int)blockIdx.y;
  const int n = axis == 0 ? width : height;
  const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
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

cudaError_t lull_atrous_layout_tables_launch(int* tables, int width, int height, int levels,
                                             cudaStream_t stream)
{
  const int n = width > height ? width : height;
  const dim3 grid((unsigned)((n + 255) / 256), 2);
  layout_tables<<<grid, 256, 0, stream>>>(tables, width, height, levels);
  return cudaGetLastError();
}
