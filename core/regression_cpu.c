/* The Regression filter on the CPU (regression.h says what a run does,
 * regression_math.h gives the formulas).
 *
 * Schedule: the image is cut into tiles of TILE_W x TILE_H pixels, which
 * threads take one at a time.  For each window offset a tile computes its
 * pixels' NL-means weights at once (the pair terms over the tile and its
 * patch margin, then box sums: a patch distance costs O(1) a pixel rather
 * than O(F^2)), and adds the offset's row to each pixel's normal
 * equations.  The collaborative prediction is a gather: a pixel q sums the
 * predictions of the fits of the centres p = q + d around it, whose
 * coefficients are kept for a band of rows (the pair weight is symmetric:
 * the weight of centre p for neighbour q is the one computed at q for the
 * offset p - q). */
#if defined(__GNUC__) /* GCC and Clang */
  /* the vector kernels pass vectors between inlined functions only; the
   * warning is about the ABI of calls that do not exist */
  #pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atrous.h"
#include "atrous_math.h"
#include "atrous_tiled.h"
#include "feature_planes.h"
#include "image_rows.h"
#include "planes.h"
#include "poisson_solver.h"
#include "regression.h"
#include "regression_math.h"
#include "threads.h"

#if defined(__GNUC__)
  #define LULL_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
  #define LULL_ALWAYS_INLINE inline
#endif

enum
{
  TILE_W = 32,
  TILE_H = 16,
  BAND_H = 64, /* rows of output per band of kept coefficients */
};

/* -- the regression engine ------------------------------------------------------- */

/* One pass: y (nc channels) regressed on nf features with NL-means weights
 * of the guide g and its variance gv (gc channels), at nk bandwidths.
 * nf = 0 with collaborative = 0 and no fit: NL-means smoothing (nlm_smooth). */
typedef struct reg_pass
{
  int width, height;
  int nc;
  const float* y[3];
  int gc;
  const float* g[3];
  const float* gv[3];
  int nf;
  const float* f[LULL_REG_MAX_FEATURES];
  int nk;
  float k[LULL_REG_MAX_BANDWIDTHS];
  int radius, patch;
  float ridge;
  int threads;
} reg_pass;

/* Scratch of one thread. */
typedef struct reg_scratch
{
  float* term;   /* pair terms, (TILE_W + 2F) x (TILE_H + 2F) */
  float* count;  /* 1 where the pair is inside the image, same */
  float* colsum; /* vertical sums of term, (TILE_W + 2F) x TILE_H */
  float* colcnt;
  float* weight; /* nk x TILE_W x TILE_H */
  float* x;      /* the design rows of a tile row: columns x TILE_W */
  float* y;      /* the values of a tile row: nc x TILE_W */
  float* fit;    /* one pixel's sums, for its solve */
  float* wx;     /* a row of w x_i */
  float* sums;   /* fits: nk x sums_per_pixel x TILE_W, a row's sums (structure of arrays);
                  * the gather and smoothing: their accumulators of a tile */
  float* all_weights; /* fits: the weights of every offset of the tile */
} reg_scratch;

static int columns(const reg_pass* p)
{
  return 3 + p->nf;
}

static int gram_size(const reg_pass* p)
{
  const int n = columns(p);
  return n * (n + 1) / 2;
}

/* Normal equations, right-hand sides, then the range [lo, hi] of y. */
static int sums_per_pixel(const reg_pass* p)
{
  return gram_size(p) + p->nc * columns(p) + 2 * p->nc;
}

/* A fit's record: coefficients, then the range of the values it saw. */
static int record_floats(const reg_pass* p)
{
  return columns(p) * p->nc + 2 * p->nc;
}

static size_t scratch_floats(const reg_pass* p)
{
  const size_t rw = TILE_W + 2 * (size_t)p->patch, rh = TILE_H + 2 * (size_t)p->patch;
  const size_t tile = (size_t)TILE_W * TILE_H;
  const size_t offsets = (size_t)(2 * p->radius + 1) * (size_t)(2 * p->radius + 1);
  return 2 * rw * rh + 2 * rw * TILE_H + (size_t)p->nk * tile +
         (size_t)(columns(p) + p->nc + 1) * TILE_W + (size_t)sums_per_pixel(p) +
         (size_t)p->nk * tile * (size_t)LULL_MAX(sums_per_pixel(p), 1 + p->nc) +
         offsets * (size_t)p->nk * tile;
}

static void scratch_carve(const reg_pass* p, float* block, reg_scratch* s)
{
  const size_t rw = TILE_W + 2 * (size_t)p->patch, rh = TILE_H + 2 * (size_t)p->patch;
  const size_t tile = (size_t)TILE_W * TILE_H;
  s->term = block;
  s->count = s->term + rw * rh;
  s->colsum = s->count + rw * rh;
  s->colcnt = s->colsum + rw * TILE_H;
  s->weight = s->colcnt + rw * TILE_H;
  s->x = s->weight + (size_t)p->nk * tile;
  s->y = s->x + (size_t)columns(p) * TILE_W;
  s->fit = s->y + (size_t)p->nc * TILE_W;
  s->wx = s->fit + (size_t)sums_per_pixel(p);
  s->sums = s->wx + TILE_W;
  s->all_weights = s->sums + (size_t)p->nk * tile * (size_t)LULL_MAX(sums_per_pixel(p), 1 + p->nc);
}

/* The columns [tx0, tx1) of the tile row whose pixels p are at row py,
 * columns x0 + tx, and whose neighbours are q = p + (dx, dy) (q inside the
 * image there): the design rows of q for the centres p into s->x
 * (column-major by tile column), and, when y_rows, q's values into s->y.
 * swap: the rows of p for the centres q (the gather's direction). */
static LULL_ALWAYS_INLINE void tile_row_design(const reg_pass* p, int x0, int py, int dx, int dy, int tx0, int tx1,
                            int swap, int y_rows, reg_scratch* s)
{
  const int W = p->width, n = columns(p);
  const float inv_r = 1.0f / (float)LULL_MAX(p->radius, 1);
  /* pixel x0 + tx0 of row py and its neighbour, both inside the image
   * (the caller's columns), and the row pointers from them: none before a
   * plane's start */
  const size_t ip = (size_t)py * (size_t)W + (size_t)(x0 + tx0);
  const size_t iq = (size_t)(py + dy) * (size_t)W + (size_t)(x0 + dx + tx0);
  const int m = tx1 - tx0;
  /* lull_reg_row's terms, spelt out per column so that they vectorise */
  const float sx = (float)(swap ? -dx : dx) * inv_r, sy = (float)(swap ? -dy : dy) * inv_r;
  for (int tx = tx0; tx < tx1; ++tx) {
    s->x[tx] = 1.0f;
    s->x[TILE_W + tx] = sx;
    s->x[2 * TILE_W + tx] = sy;
  }
  for (int j = 0; j < p->nf; ++j) {
    const float* LULL_RESTRICT fp = p->f[j] + (swap ? iq : ip);
    const float* LULL_RESTRICT fq = p->f[j] + (swap ? ip : iq);
    float* LULL_RESTRICT xr = s->x + (size_t)(3 + j) * TILE_W + tx0;
#pragma omp simd
    for (int k = 0; k < m; ++k)
      xr[k] = fq[k] - fp[k];
  }
  (void)n;
  if (y_rows)
    for (int c = 0; c < p->nc; ++c) {
      const float* LULL_RESTRICT yq = p->y[c] + iq;
      float* LULL_RESTRICT yr = s->y + (size_t)c * TILE_W + tx0;
#pragma omp simd
      for (int k = 0; k < m; ++k)
        yr[k] = yq[k];
    }
}

/* The NL-means weights of the tile [x0, x0 + tw) x [y0, y0 + th) for the
 * offset (dx, dy): nk planes of tw x th into s->weight, 0 where p + d is
 * outside the image.  The patch distance is the mean of the pair terms
 * (lull_reg_pair_term, spelt out here channel by channel so that a row
 * of them vectorises) over the patch pixels whose pair is inside the
 * image. */
static LULL_ALWAYS_INLINE void tile_weights(const reg_pass* p, int x0, int y0, int tw, int th, int dx, int dy,
                         reg_scratch* s)
{
  const int F = p->patch, W = p->width, H = p->height;
  const int rw = tw + 2 * F, rh = th + 2 * F, tile = tw * th;
  const float inv_nc = 1.0f / (float)p->gc;
  /* the region's columns whose pair is inside: sx and sx + dx in [0, W) */
  const int rxa = LULL_MAX(0, LULL_MAX(F - x0, F - x0 - dx));
  const int rxb = LULL_MIN(rw, LULL_MIN(W - x0 + F, W - x0 + F - dx));
  for (int ry = 0; ry < rh; ++ry) {
    const int sy = y0 - F + ry;
    float* LULL_RESTRICT term = s->term + (size_t)ry * (size_t)rw;
    float* LULL_RESTRICT count = s->count + (size_t)ry * (size_t)rw;
    for (int rx = 0; rx < rw; ++rx) {
      term[rx] = 0.0f;
      count[rx] = 0.0f;
    }
    if (sy < 0 || sy >= H || sy + dy < 0 || sy + dy >= H || rxa >= rxb)
      continue;
    /* pixel x0 - F + rxa of row sy and its pair: both inside (rxa), so
     * no pointer is formed before a plane's start */
    const size_t i = (size_t)sy * (size_t)W + (size_t)(x0 - F + rxa);
    const size_t j = (size_t)(sy + dy) * (size_t)W + (size_t)(x0 - F + rxa + dx);
    const int n = rxb - rxa;
    float* LULL_RESTRICT tr = term + rxa;
    for (int c = 0; c < p->gc; ++c) {
      const float* LULL_RESTRICT gp = p->g[c] + i;
      const float* LULL_RESTRICT gq = p->g[c] + j;
      const float* LULL_RESTRICT vp = p->gv[c] + i;
      const float* LULL_RESTRICT vq = p->gv[c] + j;
#pragma omp simd
      for (int k = 0; k < n; ++k)
        tr[k] += lull_nlm_distance(gp[k], gq[k], vp[k], vq[k], 1.0f);
    }
#pragma omp simd
    for (int rx = rxa; rx < rxb; ++rx) {
      term[rx] *= inv_nc;
      count[rx] = 1.0f;
    }
  }
  for (int ty = 0; ty < th; ++ty) {
    float* LULL_RESTRICT cs = s->colsum + (size_t)ty * (size_t)rw;
    float* LULL_RESTRICT cc = s->colcnt + (size_t)ty * (size_t)rw;
    for (int rx = 0; rx < rw; ++rx) {
      cs[rx] = 0.0f;
      cc[rx] = 0.0f;
    }
    for (int k = 0; k <= 2 * F; ++k) {
      const float* LULL_RESTRICT term = s->term + (size_t)(ty + k) * (size_t)rw;
      const float* LULL_RESTRICT count = s->count + (size_t)(ty + k) * (size_t)rw;
#pragma omp simd
      for (int rx = 0; rx < rw; ++rx) {
        cs[rx] += term[rx];
        cc[rx] += count[rx];
      }
    }
  }
  const int txa = LULL_MAX(0, -dx - x0), txb = LULL_MIN(tw, W - dx - x0);
  for (int ty = 0; ty < th; ++ty) {
    const int y = y0 + ty;
    const float* LULL_RESTRICT cs = s->colsum + (size_t)ty * (size_t)rw;
    const float* LULL_RESTRICT cc = s->colcnt + (size_t)ty * (size_t)rw;
    float* LULL_RESTRICT dist = s->x; /* a row of distances, before the design rows use it */
    float* LULL_RESTRICT cnt = s->y;
    for (int tx = 0; tx < tw; ++tx) {
      dist[tx] = 0.0f;
      cnt[tx] = 0.0f;
    }
    for (int k = 0; k <= 2 * F; ++k)
#pragma omp simd
      for (int tx = 0; tx < tw; ++tx) {
        dist[tx] += cs[tx + k];
        cnt[tx] += cc[tx + k];
      }
    const int row_inside = y + dy >= 0 && y + dy < H;
    for (int b = 0; b < p->nk; ++b) {
      float* LULL_RESTRICT w = s->weight + (size_t)b * (size_t)tile + (size_t)ty * (size_t)tw;
      const float k = p->k[b];
#pragma omp simd
      for (int tx = 0; tx < tw; ++tx) {
        const int inside = row_inside && tx >= txa && tx < txb && cnt[tx] > 0.0f;
        w[tx] = inside ? lull_reg_weight(dist[tx] / cnt[tx], k) : 0.0f;
      }
    }
  }
}

/* The fits of the pixels of rows [r0, r1): records into fits, structure of
 * arrays (entry k of bandwidth b of band pixel i at fits[(b * record + k)
 * * band_pixels + i]).  The sums of a tile are kept as structure of arrays
 * too, so that each entry's update runs over a row of pixels in vector
 * lanes; every sum gets the same operations in the same order as
 * lull_reg_accumulate, so the result is the per-pixel formula's. */
/* -- the vector kernels of the common case ------------------------------------ *
 *
 * 3 colour channels and any feature set (F features, F + 3 columns; each
 * F a specialisation: the kernels are inlined with F a constant), away
 * from the image's border: each pixel's sums over the window's offsets in
 * registers, 16 pixels of a row in one vector, the entries in groups of
 * two rows of the Gram matrix (a group's sums, its design rows and its
 * values fit the registers).  Every sum gets the operations of
 * lull_reg_accumulate and lull_reg_predict in their order, so the result
 * is bit for bit the general loops' (which run at the border). */
enum { FAST_MAX_F = LULL_REG_MAX_FEATURES, FAST_MAX_N = FAST_MAX_F + 3, FAST_V = 16 };
_Static_assert(LULL_REG_MAX_FEATURES == 9, "the fast kernels' dispatch lists the feature counts");
typedef float fast_vf __attribute__((vector_size(FAST_V * sizeof(float))));
typedef int fast_vi __attribute__((vector_size(FAST_V * sizeof(int))));

/* m ? a : b lane by lane (m: a comparison's all-ones or zero lanes) */
static LULL_ALWAYS_INLINE fast_vf fast_select(fast_vi m, fast_vf a, fast_vf b)
{
  return (fast_vf)(((fast_vi)a & m) | ((fast_vi)b & ~m));
}

static LULL_ALWAYS_INLINE fast_vf fast_load(const float* p)
{
  fast_vf v;
  memcpy(&v, p, sizeof v);
  return v;
}

static LULL_ALWAYS_INLINE void fast_store(float* p, fast_vf v)
{
  memcpy(p, &v, sizeof v);
}

static LULL_ALWAYS_INLINE fast_vf fast_splat(float x)
{
  return (fast_vf){0} + x;
}

/* Whether the fast kernels apply to the rows of a tile: the common case,
 * and every pixel the window reaches inside the image. */
static int fast_rows(const reg_pass* p, int x0, int tw)
{
  /* the feature counts a set can have (albedo 3, normal 3, depth 1 or
   * position 3): the cases of the kernels' dispatch */
  const int counted = p->nf == 0 || p->nf == 1 || p->nf == 3 || p->nf == 4 || p->nf == 6 ||
                      p->nf == 7 || p->nf == 9;
  return counted && p->nc == 3 && tw == TILE_W && TILE_W % FAST_V == 0 &&
         x0 - p->radius >= 0 && x0 + tw + p->radius <= p->width;
}

static int fast_row(const reg_pass* p, int y)
{
  return y - p->radius >= 0 && y + p->radius < p->height;
}

/* Rows i0, i0 + 1 (i0 alone when it is the last) of the Gram matrix and
 * their right-hand sides, for the 16 pixels at ip (row sums base: entry e
 * at base[e * TILE_W]); F features. */
static LULL_ALWAYS_INLINE void fast_fit_group(const reg_pass* p, const float* w0, size_t wstride,
                                              size_t ip, const fast_vf fp[FAST_MAX_F], int i0,
                                              float* base, const int F)
{
  const int W = p->width, R = p->radius, side = 2 * R + 1, N = F + 3;
  const int i1 = LULL_MIN(i0 + 2, N);
  const float inv_r = 1.0f / (float)LULL_MAX(R, 1);
  fast_vf acc[2 * FAST_MAX_N + 6];
  for (int k = 0; k < 2 * N + 6; ++k)
    acc[k] = fast_splat(0.0f);
  for (int o = 0; o < side * side; ++o) {
    const int dx = o % side - R, dy = o / side - R;
    const size_t iq = (size_t)((ptrdiff_t)ip + (ptrdiff_t)dy * W + dx);
    const fast_vf w = fast_load(w0 + (size_t)o * wstride);
    fast_vf x[FAST_MAX_N];
    x[0] = fast_splat(1.0f);
    x[1] = fast_splat((float)dx * inv_r);
    x[2] = fast_splat((float)dy * inv_r);
#pragma GCC unroll 9
    for (int j = 0; j < F; ++j)
      x[3 + j] = fast_load(p->f[j] + iq) - fp[j];
    fast_vf y[3];
    for (int c = 0; c < 3; ++c)
      y[c] = fast_load(p->y[c] + iq);
    int k = 0;
#pragma GCC unroll 2
    for (int i = i0; i < i1; ++i) {
      const fast_vf wx = w * x[i];
#pragma GCC unroll 12
      for (int j = i; j < N; ++j)
        acc[k++] += wx * x[j];
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c)
        acc[k++] += wx * y[c];
    }
  }
  const int gram = N * (N + 1) / 2;
  int k = 0;
  for (int i = i0; i < i1; ++i) {
    for (int j = i; j < N; ++j)
      fast_store(base + (size_t)lull_reg_packed(i, j, N) * TILE_W, acc[k++]);
    for (int c = 0; c < 3; ++c)
      fast_store(base + (size_t)(gram + c * N + i) * TILE_W, acc[k++]);
  }
}

/* The range [lo, hi] of the values with weight above
 * LULL_REG_RANGE_WEIGHT, for the 16 pixels at ip. */
static LULL_ALWAYS_INLINE void fast_fit_range(const reg_pass* p, const float* w0, size_t wstride,
                                              size_t ip, float* base, const int N)
{
  const int W = p->width, R = p->radius, side = 2 * R + 1;
  fast_vf lo[3], hi[3];
  for (int c = 0; c < 3; ++c) {
    lo[c] = fast_splat(INFINITY);
    hi[c] = fast_splat(-INFINITY);
  }
  for (int o = 0; o < side * side; ++o) {
    const int dx = o % side - R, dy = o / side - R;
    const size_t iq = (size_t)((ptrdiff_t)ip + (ptrdiff_t)dy * W + dx);
    const fast_vf w = fast_load(w0 + (size_t)o * wstride);
    const fast_vi seen = w > LULL_REG_RANGE_WEIGHT;
    for (int c = 0; c < 3; ++c) {
      const fast_vf y = fast_load(p->y[c] + iq);
      lo[c] = fast_select(seen & (y < lo[c]), y, lo[c]);
      hi[c] = fast_select(seen & (y > hi[c]), y, hi[c]);
    }
  }
  const int range0 = N * (N + 1) / 2 + 3 * N;
  for (int c = 0; c < 3; ++c) {
    fast_store(base + (size_t)(range0 + c) * TILE_W, lo[c]);
    fast_store(base + (size_t)(range0 + 3 + c) * TILE_W, hi[c]);
  }
}

/* One row's sums for bandwidth b (base: the row sums of b), at row py,
 * columns x0 + [0, TILE_W); F features. */
static LULL_ALWAYS_INLINE void fast_fit_row(const reg_pass* p, const float* all_weights,
                                            size_t tile, int ty, int x0, int py, int b,
                                            float* base, const int F)
{
  const size_t wstride = (size_t)p->nk * tile;
  for (int strip = 0; strip < TILE_W; strip += FAST_V) {
    const size_t ip = (size_t)py * (size_t)p->width + (size_t)(x0 + strip);
    fast_vf fp[FAST_MAX_F];
    for (int j = 0; j < F; ++j)
      fp[j] = fast_load(p->f[j] + ip);
    const float* w0 = all_weights + (size_t)b * tile + (size_t)ty * TILE_W + (size_t)strip;
    for (int i0 = 0; i0 < F + 3; i0 += 2)
      fast_fit_group(p, w0, wstride, ip, fp, i0, base + strip, F);
    fast_fit_range(p, w0, wstride, ip, base + strip, F + 3);
  }
}

/* One row's collaborative sums for bandwidth b: sum w into a0, sum w
 * prediction into ac[c] (tile planes at the row), pixels q at row qy,
 * columns x0 + [0, TILE_W), fits of band rows from r0. */
static LULL_ALWAYS_INLINE void fast_gather_row(const reg_pass* p, const float* all_weights,
                                               size_t tile, int ty, int x0, int qy, int b,
                                               const float* fits, size_t band, int r0,
                                               float* a0, float* const ac[3], const int F)
{
  const int N = F + 3;
  const int W = p->width, R = p->radius, side = 2 * R + 1, rec = record_floats(p);
  const float inv_r = 1.0f / (float)LULL_MAX(R, 1);
  const size_t wstride = (size_t)p->nk * tile;
  const float* fb = fits + (size_t)b * (size_t)rec * band;
  for (int strip = 0; strip < TILE_W; strip += FAST_V) {
    const size_t iq = (size_t)qy * (size_t)W + (size_t)(x0 + strip);
    fast_vf fq[FAST_MAX_F];
    for (int j = 0; j < F; ++j)
      fq[j] = fast_load(p->f[j] + iq);
    const float* w0 = all_weights + (size_t)b * tile + (size_t)ty * TILE_W + (size_t)strip;
    fast_vf sw = fast_splat(0.0f), sc[3] = {fast_splat(0.0f), fast_splat(0.0f), fast_splat(0.0f)};
    for (int o = 0; o < side * side; ++o) {
      const int dx = o % side - R, dy = o / side - R;
      const size_t ip = (size_t)((ptrdiff_t)iq + (ptrdiff_t)dy * W + dx);
      const size_t row = (size_t)(qy + dy - r0) * (size_t)W + (size_t)(x0 + strip + dx);
      const fast_vf w = fast_load(w0 + (size_t)o * wstride);
      fast_vf x[FAST_MAX_N];
      x[0] = fast_splat(1.0f);
      x[1] = fast_splat((float)-dx * inv_r);
      x[2] = fast_splat((float)-dy * inv_r);
#pragma GCC unroll 9
      for (int j = 0; j < F; ++j)
        x[3 + j] = fq[j] - fast_load(p->f[j] + ip);
      sw += w;
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c) {
        fast_vf pred = fast_splat(0.0f);
#pragma GCC unroll 12
        for (int i = 0; i < N; ++i)
          pred += fast_load(fb + (size_t)(c * N + i) * band + row) * x[i];
        const fast_vf lo = fast_load(fb + (size_t)(3 * N + c) * band + row);
        const fast_vf hi = fast_load(fb + (size_t)(3 * N + 3 + c) * band + row);
        /* lull_reg_hold */
        const fast_vi ordered = lo <= hi;
        const fast_vf held = fast_select(ordered, fast_select(pred > lo, pred, lo), pred);
        const fast_vf held2 = fast_select(ordered, fast_select(held < hi, held, hi), held);
        sc[c] += w * held2;
      }
    }
    fast_store(a0 + strip, fast_load(a0 + strip) + sw);
    for (int c = 0; c < 3; ++c)
      fast_store(ac[c] + strip, fast_load(ac[c] + strip) + sc[c]);
  }
}

LULL_TARGET_CLONES
/* Whether the values y are the same in every pixel of [xa, xb) x [ya, yb)
 * (clipped to the image), each channel's into value.  Where they are, a
 * fit's range is that value alone and every prediction it makes is held
 * to it (lull_reg_hold), whatever its coefficients or weights: a flat
 * region (a constant background) needs no regression. */
static int flat_values(const reg_pass* p, int xa, int ya, int xb, int yb, float value[3])
{
  xa = LULL_MAX(xa, 0);
  ya = LULL_MAX(ya, 0);
  xb = LULL_MIN(xb, p->width);
  yb = LULL_MIN(yb, p->height);
  for (int c = 0; c < p->nc; ++c) {
    const float v = p->y[c][(size_t)ya * (size_t)p->width + (size_t)xa];
    for (int y = ya; y < yb; ++y) {
      const float* row = p->y[c] + (size_t)y * (size_t)p->width;
      for (int x = xa; x < xb; ++x)
        if (row[x] != v)
          return 0;
    }
    value[c] = v;
  }
  return 1;
}

static void fit_tile(const reg_pass* p, int t, int r0, int r1, float* fits, float* scratch_block)
{
  const int W = p->width, H = p->height, R = p->radius, n = columns(p), per = sums_per_pixel(p);
  const int rec = record_floats(p), gram = gram_size(p), range0 = gram + p->nc * n;
  const int tiles_x = (W + TILE_W - 1) / TILE_W, side = 2 * R + 1;
  const size_t band = (size_t)(r1 - r0) * (size_t)W;
  reg_scratch s;
  scratch_carve(p, scratch_block, &s);
  const int x0 = (t % tiles_x) * TILE_W, y0 = r0 + (t / tiles_x) * TILE_H;
  const int tw = LULL_MIN(TILE_W, W - x0), th = LULL_MIN(TILE_H, r1 - y0);
  const size_t tile = (size_t)tw * (size_t)th;
  /* every window of the tile flat: the fits are that value (their
   * predictions would be held to it anyway) */
  float flat[3];
  if (flat_values(p, x0 - R, y0 - R, x0 + tw + R, y0 + th + R, flat)) {
    for (int ty = 0; ty < th; ++ty)
      for (int tx = 0; tx < tw; ++tx) {
        const size_t row = (size_t)(y0 + ty - r0) * (size_t)W + (size_t)(x0 + tx);
        for (int b = 0; b < p->nk; ++b) {
          float* record = fits + (size_t)b * (size_t)rec * band + row;
          for (int e = 0; e < rec; ++e)
            record[(size_t)e * band] = 0.0f;
          for (int c = 0; c < p->nc; ++c) {
            record[(size_t)(c * n) * band] = flat[c];
            record[(size_t)(n * p->nc + c) * band] = flat[c];
            record[(size_t)(n * p->nc + p->nc + c) * band] = flat[c];
          }
        }
      }
    return;
  }
  /* the weights of every offset first (a patch distance per pixel costs
   * O(1) only over the whole tile), then a row at a time, so that the
   * row's sums stay in the first-level cache over all offsets */
  for (int o = 0; o < side * side; ++o) {
    tile_weights(p, x0, y0, tw, th, o % side - R, o / side - R, &s);
    memcpy(s.all_weights + (size_t)o * (size_t)p->nk * tile, s.weight,
           sizeof(float) * (size_t)p->nk * tile);
  }
  const int fast = fast_rows(p, x0, tw);
  for (int ty = 0; ty < th; ++ty) {
    const int py = y0 + ty;
    if (fast && fast_row(p, py)) {
      for (int b = 0; b < p->nk; ++b) {
        float* base = s.sums + (size_t)b * (size_t)per * TILE_W;
        /* a constant F per case, for the inlined kernel */
#define FIT_ROW(F)                                                              \
  case F:                                                                       \
    fast_fit_row(p, s.all_weights, tile, ty, x0, py, b, base, F);               \
    break;
        switch (p->nf) {
          FIT_ROW(0) FIT_ROW(1) FIT_ROW(3) FIT_ROW(4) FIT_ROW(6) FIT_ROW(7) FIT_ROW(9)
          default: break;
        }
#undef FIT_ROW
      }
      goto solve;
    }
    for (int b = 0; b < p->nk; ++b) {
      float* base = s.sums + (size_t)b * (size_t)per * TILE_W;
      memset(base, 0, sizeof(float) * (size_t)range0 * TILE_W);
      for (int c = 0; c < p->nc; ++c)
        for (int tx = 0; tx < TILE_W; ++tx) {
          base[(size_t)(range0 + c) * TILE_W + (size_t)tx] = INFINITY;
          base[(size_t)(range0 + p->nc + c) * TILE_W + (size_t)tx] = -INFINITY;
        }
    }
    for (int o = 0; o < side * side; ++o) {
      const int dx = o % side - R, dy = o / side - R;
      const int tx0 = LULL_MAX(0, -dx - x0), tx1 = LULL_MIN(tw, W - dx - x0);
      if (tx0 >= tx1 || py + dy < 0 || py + dy >= H)
        continue;
      tile_row_design(p, x0, py, dx, dy, tx0, tx1, 0, 1, &s);
      for (int b = 0; b < p->nk; ++b) {
        const float* LULL_RESTRICT w =
            s.all_weights + ((size_t)o * (size_t)p->nk + (size_t)b) * tile + (size_t)ty * (size_t)tw;
        float* base = s.sums + (size_t)b * (size_t)per * TILE_W;
        int e = 0;
        for (int i = 0; i < n; ++i) {
          /* w x_i once for the row's entries (i, j) and right-hand sides:
           * each sum gets (w x_i) x_j, as in lull_reg_accumulate */
          float* LULL_RESTRICT wx = s.wx;
          const float* LULL_RESTRICT xi = s.x + (size_t)i * TILE_W;
#pragma omp simd
          for (int tx = tx0; tx < tx1; ++tx)
            wx[tx] = w[tx] * xi[tx];
          for (int j = i; j < n; ++j, ++e) {
            const float* LULL_RESTRICT xj = s.x + (size_t)j * TILE_W;
            float* LULL_RESTRICT sum = base + (size_t)e * TILE_W;
#pragma omp simd
            for (int tx = tx0; tx < tx1; ++tx)
              sum[tx] += wx[tx] * xj[tx];
          }
          for (int c = 0; c < p->nc; ++c) {
            const float* LULL_RESTRICT yc = s.y + (size_t)c * TILE_W;
            float* LULL_RESTRICT sum = base + (size_t)(gram + c * n + i) * TILE_W;
#pragma omp simd
            for (int tx = tx0; tx < tx1; ++tx)
              sum[tx] += wx[tx] * yc[tx];
          }
        }
        for (int c = 0; c < p->nc; ++c) {
          const float* LULL_RESTRICT yc = s.y + (size_t)c * TILE_W;
          float* LULL_RESTRICT lo = base + (size_t)(range0 + c) * TILE_W;
          float* LULL_RESTRICT hi = base + (size_t)(range0 + p->nc + c) * TILE_W;
#pragma omp simd
          for (int tx = tx0; tx < tx1; ++tx) {
            const int seen = w[tx] > LULL_REG_RANGE_WEIGHT;
            lo[tx] = seen && yc[tx] < lo[tx] ? yc[tx] : lo[tx];
            hi[tx] = seen && yc[tx] > hi[tx] ? yc[tx] : hi[tx];
          }
        }
      }
    }
  solve:
    for (int tx = 0; tx < tw; ++tx) {
      const size_t row = (size_t)(py - r0) * (size_t)W + (size_t)(x0 + tx);
      for (int b = 0; b < p->nk; ++b) {
        const float* base = s.sums + (size_t)b * (size_t)per * TILE_W;
        for (int e = 0; e < per; ++e)
          s.fit[e] = base[(size_t)e * TILE_W + (size_t)tx];
        float record[LULL_REG_MAX_COLUMNS * 3 + 6] = {0};
        lull_reg_solve(s.fit, s.fit + gram, n, p->nc, p->ridge, record);
        for (int c = 0; c < 2 * p->nc; ++c)
          record[n * p->nc + c] = s.fit[range0 + c];
        for (int e = 0; e < rec; ++e)
          fits[((size_t)b * (size_t)rec + (size_t)e) * band + row] = record[e];
      }
    }
  }
}

static void fit_rows(const reg_pass* p, int r0, int r1, float* fits, float* scratch_block)
{
  const int tiles_x = (p->width + TILE_W - 1) / TILE_W, tiles_y = (r1 - r0 + TILE_H - 1) / TILE_H;
  const size_t per_thread = scratch_floats(p);
#pragma omp parallel for schedule(dynamic, 1) num_threads(p->threads)
  for (int t = 0; t < tiles_x * tiles_y; ++t)
    fit_tile(p, t, r0, r1, fits, scratch_block + (size_t)lull_thread_index() * per_thread);
}

/* The collaborative results of the pixels of rows [y0, y1): each the
 * weighted mean of the predictions, held in their fits' ranges, of the fits
 * around it (records of band rows from r0, band_rows of them), in the
 * order of lull_reg_predict and lull_reg_hold. */
LULL_TARGET_CLONES
static void gather_tile(const reg_pass* p, int t, int y0, int y1, const float* fits, int r0,
                        int band_rows, float* const out[LULL_REG_MAX_BANDWIDTHS][3],
                        float* scratch_block)
{
  const int W = p->width, H = p->height, R = p->radius, n = columns(p), rec = record_floats(p);
  const int tiles_x = (W + TILE_W - 1) / TILE_W, side = 2 * R + 1;
  const size_t band = (size_t)band_rows * (size_t)W;
  reg_scratch s;
  scratch_carve(p, scratch_block, &s);
  const int x0 = (t % tiles_x) * TILE_W, ty0 = y0 + (t / tiles_x) * TILE_H;
  const int tw = LULL_MIN(TILE_W, W - x0), th = LULL_MIN(TILE_H, y1 - ty0);
  const size_t tile = (size_t)tw * (size_t)th;
  const int acc_per = 1 + p->nc;
  /* flat around the tile as far as its fits' windows reach: every
   * prediction is that value, and so is their weighted mean */
  float flat[3];
  if (flat_values(p, x0 - 2 * R, ty0 - 2 * R, x0 + tw + 2 * R, ty0 + th + 2 * R, flat)) {
    for (int ty = 0; ty < th; ++ty)
      for (int tx = 0; tx < tw; ++tx) {
        const size_t j = (size_t)(ty0 + ty) * (size_t)W + (size_t)(x0 + tx);
        for (int b = 0; b < p->nk; ++b)
          for (int c = 0; c < p->nc; ++c)
            out[b][c][j] = flat[c];
      }
    return;
  }
  /* the weight of centre p = q + d for q is the one computed at q for the
   * offset d (symmetric pair terms): every offset's weights of the tile */
  for (int o = 0; o < side * side; ++o) {
    tile_weights(p, x0, ty0, tw, th, o % side - R, o / side - R, &s);
    memcpy(s.all_weights + (size_t)o * (size_t)p->nk * tile, s.weight,
           sizeof(float) * (size_t)p->nk * tile);
  }
  float* acc = s.sums; /* per bandwidth: sum w, sum w prediction (nc), each a plane of the tile */
  memset(acc, 0, sizeof(float) * (size_t)p->nk * (size_t)acc_per * tile);
  const int fast = fast_rows(p, x0, tw);
  for (int ty = 0; ty < th; ++ty) {
    const int qy = ty0 + ty; /* the pixels' row */
    if (fast && fast_row(p, qy)) {
      for (int b = 0; b < p->nk; ++b) {
        float* base = acc + (size_t)b * (size_t)acc_per * tile + (size_t)ty * (size_t)tw;
        float* const ac[3] = {base + tile, base + 2 * tile, base + 3 * tile};
#define GATHER_ROW(F)                                                           \
  case F:                                                                       \
    fast_gather_row(p, s.all_weights, tile, ty, x0, qy, b, fits, band, r0, base, ac, F); \
    break;
        switch (p->nf) {
          GATHER_ROW(0) GATHER_ROW(1) GATHER_ROW(3) GATHER_ROW(4) GATHER_ROW(6) GATHER_ROW(7)
          GATHER_ROW(9)
          default: break;
        }
#undef GATHER_ROW
      }
      continue;
    }
    for (int o = 0; o < side * side; ++o) {
      const int dx = o % side - R, dy = o / side - R;
      const int py = qy + dy; /* the centres' row */
      const int tx0 = LULL_MAX(0, -dx - x0), tx1 = LULL_MIN(tw, W - dx - x0);
      if (tx0 >= tx1 || py < 0 || py >= H)
        continue;
      tile_row_design(p, x0, qy, dx, dy, tx0, tx1, 1, 0, &s);
      /* the fits of centre column x0 + dx + tx0 on: fb[k] is tile column
       * tx0 + k's (no pointer before the fits' start) */
      const size_t row = (size_t)(py - r0) * (size_t)W + (size_t)(x0 + dx + tx0);
      for (int b = 0; b < p->nk; ++b) {
        const float* LULL_RESTRICT w =
            s.all_weights + ((size_t)o * (size_t)p->nk + (size_t)b) * tile + (size_t)ty * (size_t)tw;
        float* base = acc + (size_t)b * (size_t)acc_per * tile + (size_t)ty * (size_t)tw;
        const float* fb = fits + (size_t)b * (size_t)rec * band + row;
        float* LULL_RESTRICT a0 = base;
#pragma omp simd
        for (int tx = tx0; tx < tx1; ++tx)
          a0[tx] += w[tx];
        for (int c = 0; c < p->nc; ++c) {
          float* LULL_RESTRICT ac = base + (size_t)(1 + c) * tile;
          const float* LULL_RESTRICT lo = fb + (size_t)(n * p->nc + c) * band;
          const float* LULL_RESTRICT hi = fb + (size_t)(n * p->nc + p->nc + c) * band;
          float* LULL_RESTRICT pred = s.y; /* a row of predictions */
          for (int tx = tx0; tx < tx1; ++tx)
            pred[tx] = 0.0f;
          for (int i = 0; i < n; ++i) {
            const float* LULL_RESTRICT beta = fb + (size_t)(c * n + i) * band;
            const float* LULL_RESTRICT xi = s.x + (size_t)i * TILE_W;
#pragma omp simd
            for (int tx = tx0; tx < tx1; ++tx)
              pred[tx] += beta[tx - tx0] * xi[tx];
          }
#pragma omp simd
          for (int tx = tx0; tx < tx1; ++tx)
            ac[tx] += w[tx] * lull_reg_hold(pred[tx], lo[tx - tx0], hi[tx - tx0]);
        }
      }
    }
  }
  for (int ty = 0; ty < th; ++ty)
    for (int tx = 0; tx < tw; ++tx) {
      const size_t k = (size_t)ty * (size_t)tw + (size_t)tx;
      const size_t j = (size_t)(ty0 + ty) * (size_t)W + (size_t)(x0 + tx);
      for (int b = 0; b < p->nk; ++b) {
        const float* base = acc + (size_t)b * (size_t)acc_per * tile;
        for (int c = 0; c < p->nc; ++c)
          out[b][c][j] = base[(size_t)(1 + c) * tile + k] / base[k]; /* >= 1: its own fit */
      }
    }
}

static void gather_rows(const reg_pass* p, int y0, int y1, const float* fits, int r0, int band_rows,
                        float* const out[LULL_REG_MAX_BANDWIDTHS][3], float* scratch_block)
{
  const int tiles_x = (p->width + TILE_W - 1) / TILE_W, tiles_y = (y1 - y0 + TILE_H - 1) / TILE_H;
  const size_t per_thread = scratch_floats(p);
#pragma omp parallel for schedule(dynamic, 1) num_threads(p->threads)
  for (int t = 0; t < tiles_x * tiles_y; ++t)
    gather_tile(p, t, y0, y1, fits, r0, band_rows, out,
                scratch_block + (size_t)lull_thread_index() * per_thread);
}

static size_t pass_band_floats(const reg_pass* p)
{
  const size_t rows = (size_t)LULL_MIN(p->height, BAND_H + 2 * p->radius);
  return rows * (size_t)p->width * (size_t)p->nk * (size_t)record_floats(p);
}

/* Runs a pass into out[b][c] (planes of the image) in bands of rows,
 * reporting progress per band.  work: pass_band_floats + the threads'
 * scratch. */
static lull_status run_pass(const reg_pass* p, float* const out[LULL_REG_MAX_BANDWIDTHS][3],
                            float* work, const lull_progress_span* span, lull_error* err)
{
  const int H = p->height, R = p->radius;
  float* fits = work;
  float* scratch = work + pass_band_floats(p);
  for (int y0 = 0; y0 < H; y0 += BAND_H) {
    const int y1 = LULL_MIN(H, y0 + BAND_H);
    const int r0 = LULL_MAX(0, y0 - R), r1 = LULL_MIN(H, y1 + R);
    fit_rows(p, r0, r1, fits, scratch);
    gather_rows(p, y0, y1, fits, r0, r1 - r0, out, scratch);
    const lull_status status = lull_progress_span_report(span, (double)y1 / H, err);
    if (status != LULL_OK)
      return status;
  }
  return LULL_OK;
}

LULL_TARGET_CLONES
static void smooth_tile(const reg_pass* pp, int t, const float* const* in, float* const* out,
                        float* scratch_block)
{
  const reg_pass p = *pp;
  const int W = p.width, H = p.height, R = p.radius, nc = p.nc;
  const int tiles_x = (W + TILE_W - 1) / TILE_W;
  {
    reg_scratch s;
    scratch_carve(&p, scratch_block, &s);
    const int x0 = (t % tiles_x) * TILE_W, y0 = (t / tiles_x) * TILE_H;
    const int tw = LULL_MIN(TILE_W, W - x0), th = LULL_MIN(TILE_H, H - y0);
    const int tile = tw * th;
    float* acc = s.sums;
    memset(acc, 0, sizeof(float) * (size_t)tile * (size_t)(1 + nc));
    for (int dy = -R; dy <= R; ++dy)
      for (int dx = -R; dx <= R; ++dx) {
        tile_weights(&p, x0, y0, tw, th, dx, dy, &s);
        for (int ty = 0; ty < th; ++ty)
          for (int tx = 0; tx < tw; ++tx) {
            const float w = s.weight[ty * tw + tx];
            if (!(w > 0.0f))
              continue;
            const size_t j = (size_t)(y0 + ty + dy) * (size_t)W + (size_t)(x0 + tx + dx);
            float* a = acc + (size_t)(ty * tw + tx) * (size_t)(1 + nc);
            a[0] += w;
            for (int c = 0; c < nc; ++c)
              a[1 + c] += w * in[c][j];
          }
      }
    for (int ty = 0; ty < th; ++ty)
      for (int tx = 0; tx < tw; ++tx) {
        const size_t i = (size_t)(y0 + ty) * (size_t)W + (size_t)(x0 + tx);
        const float* a = acc + (size_t)(ty * tw + tx) * (size_t)(1 + nc);
        for (int c = 0; c < nc; ++c)
          out[c][i] = a[1 + c] / a[0];
      }
  }
}

/* NL-means smoothing of nc planes (zero order): out = sum w in / sum w over
 * the (2R + 1)^2 window with the weights of guide (its nk, nf ignored). */
static void nlm_smooth(const reg_pass* guide, int nc, const float* const* in, float* const* out,
                       float* scratch)
{
  const int W = guide->width, H = guide->height;
  reg_pass p = *guide;
  p.nk = 1;
  p.nf = 0;
  p.nc = nc;
  const int tiles_x = (W + TILE_W - 1) / TILE_W, tiles_y = (H + TILE_H - 1) / TILE_H;
  const size_t per_thread = scratch_floats(&p);
#pragma omp parallel for schedule(dynamic, 1) num_threads(p.threads)
  for (int t = 0; t < tiles_x * tiles_y; ++t)
    smooth_tile(&p, t, in, out, scratch + (size_t)lull_thread_index() * per_thread);
}

/* -- fireflies ---------------------------------------------------------------------- */

/* The k-th smallest of a[0..n) (0-based; a is reordered): Hoare's
 * selection, the value a sort would put at k, in O(n). */
static float select_kth(float* a, int n, int k)
{
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const float pivot = a[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot)
        ++i;
      while (a[j] > pivot)
        --j;
      if (i <= j) {
        const float t = a[i];
        a[i] = a[j];
        a[j] = t;
        ++i;
        --j;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return a[k];
  }
  return a[k];
}

/* Scales down the fireflies of x (3 planes): pixels whose luminance is
 * above lull_reg_firefly_level of the (2 wr + 1)^2 neighbourhood of x and
 * the other estimate ref (for one buffer, ref is x itself), where at most
 * `isolated` pixels of that neighbourhood are above their own level too
 * (0: no such limit) within iso_radius.  Why the limit: a few such pixels
 * are a firefly (or a highlight seen through a few samples, a bokeh disc
 * of depth of field); many are the heavy tail of the noise itself
 * (indirect light at 4 spp), whose energy the result needs (relMSE 0.020
 * with the limit, 0.088 without). */
static void clamp_fireflies(float* const x[3], const float* const ref[3], int w, int h, int wr,
                            float tau, float z, int isolated, int iso_radius, float* scratch,
                            int threads)
{
  const size_t n = (size_t)w * (size_t)h;
  float* lx = scratch;
  float* lr = scratch + n;
  float* level = scratch + 2 * n;
  for (size_t i = 0; i < n; ++i) {
    lx[i] = lull_reg_firefly_luminance(x[0][i], x[1][i], x[2][i]);
    lr[i] = lull_reg_firefly_luminance(ref[0][i], ref[1][i], ref[2][i]);
  }
  const int same = x == (float* const*)ref || x[0] == ref[0];
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int py = 0; py < h; ++py) {
    float vals[2 * 81], vars[81];
    for (int px = 0; px < w; ++px) {
      int nv = 0, nd = 0;
      for (int dy = -wr; dy <= wr; ++dy)
        for (int dx = -wr; dx <= wr; ++dx) {
          const int qx = px + dx, qy = py + dy;
          if (qx < 0 || qy < 0 || qx >= w || qy >= h)
            continue;
          const size_t j = (size_t)qy * (size_t)w + (size_t)qx;
          vals[nv++] = lx[j];
          if (!same)
            vals[nv++] = lr[j];
          vars[nd++] = lull_reg_half_variance(lx[j], lr[j]);
        }
      const float p75 = select_kth(vals, nv, (3 * nv) / 4);
      const float median_var = same ? 0.0f : select_kth(vars, nd, nd / 2);
      level[(size_t)py * (size_t)w + (size_t)px] =
          lull_reg_firefly_level(p75, median_var, tau, z);
    }
  }
  /* candidates, then the isolated ones scaled (reading only candidates) */
  float* cand = lr;
  for (size_t i = 0; i < n; ++i)
    cand[i] = lx[i] > level[i] && lx[i] > 0.0f ? 1.0f : 0.0f;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int py = 0; py < h; ++py)
    for (int px = 0; px < w; ++px) {
      const size_t i = (size_t)py * (size_t)w + (size_t)px;
      if (cand[i] == 0.0f)
        continue;
      int count = 0;
      for (int dy = -iso_radius; dy <= iso_radius && isolated > 0; ++dy)
        for (int dx = -iso_radius; dx <= iso_radius; ++dx) {
          const int qx = px + dx, qy = py + dy;
          if (qx >= 0 && qy >= 0 && qx < w && qy < h)
            count += cand[(size_t)qy * (size_t)w + (size_t)qx] != 0.0f;
        }
      if (isolated > 0 && count > isolated)
        continue;
      const float f = level[i] / lx[i];
      for (int c = 0; c < 3; ++c)
        x[c][i] *= f;
    }
}

/* -- the filter ------------------------------------------------------------------ */

lull_regression_params lull_regression_default_params(void)
{
  lull_regression_params p;
  memset(&p, 0, sizeof p);
  p.radius = 9;
  p.patch_radius = LULL_REG_PATCH_AUTO;
  p.bandwidth[0] = 0.5f;
  p.bandwidth[1] = 1.0f;
  p.second_radius = 16;
  p.second_bandwidth = 2.5f;
  p.ridge = 1e-5f;
  p.fireflies = 1;
  p.hdr = 1;
  p.srgb = 0;
  p.input_scale = NAN;
  return p;
}

static int has(const lull_image* image)
{
  return image->data != NULL;
}

int lull_regression_has_halves(const lull_regression_images* images)
{
  return has(&images->color_a) && has(&images->color_b);
}

lull_regression_params lull_regression_resolve(const lull_regression_params* params,
                                               const lull_regression_images* images)
{
  lull_regression_params p = *params;
  if (p.patch_radius == LULL_REG_PATCH_AUTO)
    p.patch_radius = lull_regression_has_halves(images) ? 3 : 0;
  return p;
}

/* The run's constants (fireflies, prefilter, selection, the one-buffer
 * variance) are regression_math.h's LULL_REG_*, which the CUDA schedule
 * uses too; docs/regression.md says how each was measured. */

static int pilot_reach(const lull_regression_images* images)
{
  lull_atrous_params ap = lull_atrous_default_params();
  lull_atrous_images ai;
  memset(&ai, 0, sizeof ai);
  ai.color = images->color;
  ai.albedo = images->albedo;
  ai.normal = images->normal;
  ai.depth = images->depth;
  ai.position = images->position;
  ai.variance = images->variance;
  return lull_atrous_reach(&ap, &ai);
}

int lull_regression_reach(const lull_regression_params* given,
                          const lull_regression_images* images)
{
  const lull_regression_params resolved = lull_regression_resolve(given, images);
  const lull_regression_params* params = &resolved;
  const int pass = 2 * (params->radius + params->patch_radius);
  if (!lull_regression_has_halves(images))
    return LULL_REG_FIREFLY_RADIUS_ONE + pilot_reach(images) + LULL_REG_ONE_VARIANCE_RADIUS + pass;
  const int second =
      params->second_radius > 0 ? 2 * (params->second_radius + params->patch_radius) : 0;
  return LULL_REG_FIREFLY_RADIUS_HALVES + LULL_REG_PREFILTER_RADIUS + LULL_REG_PREFILTER_PATCH + 1 + pass +
         2 * (LULL_REG_SELECT_RADIUS + LULL_REG_SELECT_PATCH) + second;
}

lull_status lull_regression_validate_images(const lull_regression_images* images,
                                            int variance_with_halves, lull_error* err)
{
  const lull_image* all[] = {&images->color,    &images->color_a,    &images->color_b,
                             &images->albedo,   &images->albedo_a,   &images->albedo_b,
                             &images->normal,   &images->normal_a,   &images->normal_b,
                             &images->depth,    &images->depth_a,    &images->depth_b,
                             &images->position, &images->position_a, &images->position_b,
                             &images->variance, &images->output,     &images->output_variance};
  static const char* const names[] = {
      "color",    "colorA",    "colorB",    "albedo",   "albedoA",  "albedoB",
      "normal",   "normalA",   "normalB",   "depth",    "depthA",   "depthB",
      "position", "positionA", "positionB", "variance", "output",   "outputVariance"};
  static const int min_channels[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 1, 1, 1};
  static const int max_channels[] = {4, 4, 4, 3, 3, 3, 3, 3, 3, 1, 1, 1, 3, 3, 3, 3, 4, 4};
  const int halves = has(&images->color_a) || has(&images->color_b);
  if (!has(&images->color) && !halves)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "input image not specified");
  if (has(&images->color) && halves)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "color and the halves colorA, colorB exclude each other");
  if (halves && !(has(&images->color_a) && has(&images->color_b)))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "colorA and colorB must be given together");
  if (!has(&images->output))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "output image not specified");
  if (has(&images->output_variance) && !halves)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "outputVariance needs the halves colorA and colorB");
  if (has(&images->variance) && halves && !variance_with_halves)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "variance is for one buffer: the halves give their own");
  const lull_image* ref = &images->output;
  for (size_t k = 0; k < sizeof all / sizeof *all; ++k) {
    if (!has(all[k]))
      continue;
    const int ch = lull_format_channels(all[k]->format);
    if (ch < min_channels[k] || ch > max_channels[k])
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "unsupported image format (%s)",
                       names[k]);
    if (all[k]->width != ref->width || all[k]->height != ref->height)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "image size mismatch (%s)", names[k]);
  }
  if (halves && lull_format_channels(images->color_a.format) != lull_format_channels(images->color_b.format))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "colorA and colorB must have the same number of channels");
  const lull_image* color = halves ? &images->color_a : &images->color;
  if (lull_format_channels(images->output.format) != lull_format_channels(color->format))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "output must have the colour's number of channels");
  for (int f = 3; f < 15; f += 3) {
    if (has(all[f + 1]) != has(all[f + 2]))
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "%s and %s must be given together",
                       names[f + 1], names[f + 2]);
    if (has(all[f]) && has(all[f + 1]))
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                       "%s and its halves %s, %s exclude each other", names[f], names[f + 1],
                       names[f + 2]);
    if (has(all[f + 1]) && !halves)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "%s and %s need colorA and colorB",
                       names[f + 1], names[f + 2]);
  }
  return LULL_OK;
}

lull_status lull_regression_validate(const lull_regression_params* params,
                                     const lull_regression_images* images, lull_error* err)
{
  const lull_status status = lull_regression_validate_images(images, 0, err);
  if (status != LULL_OK)
    return status;
  if (!(params->radius >= 1 && params->second_radius >= 0 &&
        (params->patch_radius >= 0 || params->patch_radius == LULL_REG_PATCH_AUTO)))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid radius");
  return lull_regression_validate_color(params->hdr, params->srgb, params->input_scale, err);
}

lull_status lull_regression_validate_color(int hdr, int srgb, float input_scale, lull_error* err)
{
  if (srgb && hdr)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "hdr and srgb modes cannot be enabled at the same time");
  if (!isnan(input_scale) && !(input_scale >= FLT_MIN && isfinite(input_scale)))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT,
                     "inputScale must be a normal positive finite float");
  return LULL_OK;
}

/* -- a run on one region ------------------------------------------------------------ */

/* The feature images of a set (full, A or B). */
typedef lull_regression_features feature_set;

static int feature_channels(const feature_set* s)
{
  return lull_regression_feature_channels(s);
}

/* A run's region and working memory. */
typedef struct reg_run
{
  const lull_regression_params* params;
  int width, height, threads;
  float scale; /* input scale */
} reg_run;

static reg_pass pass_of(const reg_run* r)
{
  reg_pass p;
  memset(&p, 0, sizeof p);
  p.width = r->width;
  p.height = r->height;
  p.nc = 3;
  p.gc = 3;
  p.radius = r->params->radius;
  p.patch = r->params->patch_radius;
  p.ridge = r->params->ridge;
  p.threads = r->threads;
  return p;
}

/* Floats of one pass's work (fits of a band + the threads' scratch), the
 * largest of the passes a run makes. */
static size_t pass_work_floats(const reg_run* r, int nf)
{
  reg_pass p = pass_of(r);
  p.nf = nf;
  p.nk = 2;
  size_t most = pass_band_floats(&p) + scratch_floats(&p) * (size_t)r->threads;
  p.nk = 1;
  p.radius = LULL_MAX(r->params->second_radius, LULL_MAX((int)LULL_REG_PREFILTER_RADIUS, (int)LULL_REG_SELECT_RADIUS));
  const size_t second = pass_band_floats(&p) + scratch_floats(&p) * (size_t)r->threads;
  return LULL_MAX(most, second);
}

/* Planes of the two-buffer run; of one buffer, the first ONE_COUNT. */
enum
{
  P_A = 0,      /* colour A (or the buffer) */
  P_B = 3,      /* colour B; one buffer: the pilot */
  P_GA = 6,     /* log guide of A; one buffer: of the pilot */
  P_GB = 9,     /* log guide of B; one buffer: its variance */
  P_GV = 12,    /* variance of the log guides; one buffer: of the colour */
  P_OUT = 15,   /* the result */
  P_ALPHA = 18, /* the 4th colour channel */
  P_TMP = 19,   /* 3 planes of scratch */
  P_FA = 22,    /* features of A (or the only ones), up to 9 */
  ONE_COUNT = 31,
  P_FB = 31,    /* features of B */
  P_CAND = 40,  /* A at bandwidths 0, 1; B at 0, 1: 12 planes */
  P_MEAN = 52,  /* the mean of the halves' chosen results */
  P_MVAR = 55,  /* its two-buffer variance */
  P_SEL = 58,   /* error estimates 6, smoothed 6, choice 3 */
  TWO_COUNT = 73,
};

static size_t planes_of(const lull_regression_images* images)
{
  return lull_regression_has_halves(images) ? TWO_COUNT : ONE_COUNT;
}

size_t lull_regression_cpu_memory(const lull_regression_params* given,
                                  const lull_regression_images* images, int width, int height,
                                  int num_threads)
{
  const lull_regression_params resolved = lull_regression_resolve(given, images);
  const lull_regression_params* params = &resolved;
  reg_run r = {params, width, height, lull_thread_count(num_threads), 1.0f};
  const feature_set fa = lull_regression_half_features(images, 0);
  const int nf = feature_channels(&fa);
  const size_t n = (size_t)width * (size_t)height;
  size_t floats = planes_of(images) * n + pass_work_floats(&r, nf);
  if (!lull_regression_has_halves(images))
    floats += 3 * n * 2; /* the pilot's interleaved input and output */
  return floats * sizeof(float);
}

/* The two-buffer run (regression.h, steps 1-5) on planes P, features
 * loaded; result in P_OUT, its variance in P_MVAR. */
static lull_status run_halves(const reg_run* r, float* const* P, int nf, int feature_halves,
                              unsigned shared, float* work, const lull_progress_span* span,
                              lull_error* err)
{
  const lull_regression_params* params = r->params;
  const int W = r->width, H = r->height, threads = r->threads;
  const size_t n = (size_t)W * (size_t)H;
  lull_status status = LULL_OK;
  /* 1. fireflies, each half against the other as it was */
  if (params->fireflies) {
    float* a[3] = {P[P_A], P[P_A + 1], P[P_A + 2]};
    float* b[3] = {P[P_B], P[P_B + 1], P[P_B + 2]};
    float* a0[3] = {P[P_OUT], P[P_OUT + 1], P[P_OUT + 2]};
    for (int c = 0; c < 3; ++c)
      memcpy(a0[c], a[c], n * sizeof(float));
    clamp_fireflies(b, (const float* const*)a0, W, H, LULL_REG_FIREFLY_RADIUS_HALVES, LULL_REG_FIREFLY_TAU,
                    LULL_REG_FIREFLY_Z_HALVES, 0, 0, work, threads);
    clamp_fireflies(a, (const float* const*)b, W, H, LULL_REG_FIREFLY_RADIUS_HALVES, LULL_REG_FIREFLY_TAU,
                    LULL_REG_FIREFLY_Z_HALVES, 0, 0, work, threads);
  }
  /* the log guides and their variance, (lg A - lg B)^2 / 2 over 3x3 */
  for (int c = 0; c < 3; ++c) {
    for (size_t i = 0; i < n; ++i) {
      P[P_GA + c][i] = lull_reg_log_guide(P[P_A + c][i]);
      P[P_GB + c][i] = lull_reg_log_guide(P[P_B + c][i]);
      P[P_TMP][i] = lull_reg_half_variance(P[P_GA + c][i], P[P_GB + c][i]);
    }
    lull_box_mean(W, H, P[P_TMP], P[P_GV + c], P[P_TMP + 1], LULL_REG_GUIDE_VARIANCE_RADIUS, 0, W,
                  0, H, threads);
  }
  reg_pass pass = pass_of(r);
  /* 2. feature cross-prefiltering (§5.1), when the features come in halves */
  if (feature_halves) {
    reg_pass fp = pass;
    fp.radius = LULL_REG_PREFILTER_RADIUS;
    fp.patch = LULL_REG_PREFILTER_PATCH;
    fp.k[0] = LULL_REG_PREFILTER_K;
    fp.gc = 1;
    for (int k = 0; k < nf; ++k) {
      float* fa = P[P_FA + k];
      float* fb = P[P_FB + k];
      if (shared >> k & 1u)
        continue; /* a guide given once: nothing to cross-filter */
      for (size_t i = 0; i < n; ++i)
        P[P_TMP][i] = lull_reg_half_variance(fa[i], fb[i]);
      lull_box_mean(W, H, P[P_TMP], P[P_TMP + 1], P[P_TMP + 2], 1, 0, W, 0, H, threads);
      fp.gv[0] = P[P_TMP + 1];
      const float* in_a[1] = {fa};
      const float* in_b[1] = {fb};
      float* out_a[1] = {P[P_OUT]};
      float* out_b[1] = {P[P_OUT + 1]};
      fp.g[0] = fb;
      nlm_smooth(&fp, 1, in_a, out_a, work);
      fp.g[0] = fa;
      nlm_smooth(&fp, 1, in_b, out_b, work);
      memcpy(fa, P[P_OUT], n * sizeof(float));
      memcpy(fb, P[P_OUT + 1], n * sizeof(float));
    }
  }
  status = lull_progress_span_report(span, 0.05, err);
  /* 3. each half regressed with the other's guide and features */
  pass.nf = nf;
  pass.nk = 2;
  pass.k[0] = params->bandwidth[0];
  pass.k[1] = params->bandwidth[1];
  for (int half = 0; half < 2 && status == LULL_OK; ++half) {
    for (int c = 0; c < 3; ++c) {
      pass.y[c] = P[(half ? P_B : P_A) + c];
      pass.g[c] = P[(half ? P_GA : P_GB) + c];
      pass.gv[c] = P[P_GV + c];
    }
    for (int k = 0; k < nf; ++k)
      pass.f[k] = P[(half ? P_FA : P_FB) + k];
    float* out[LULL_REG_MAX_BANDWIDTHS][3];
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c)
        out[b][c] = P[P_CAND + 6 * half + 3 * b + c];
    const lull_progress_span sub = lull_progress_subspan(span, 0.05 + 0.3 * half, 0.35 + 0.3 * half);
    status = run_pass(&pass, out, work, &sub, err);
  }
  if (status != LULL_OK)
    return status;
  /* 4. the bandwidth of the smaller two-buffer error (§5.3), the errors and
   * the choice smoothed with the weights of the mean's log guide */
  float* e[6];
  float* es[6];
  float* choice[3];
  for (int k = 0; k < 6; ++k) {
    e[k] = P[P_SEL + k];
    es[k] = P[P_SEL + 6 + k];
  }
  for (int c = 0; c < 3; ++c)
    choice[c] = P[P_SEL + 12 + c];
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 3; ++c)
      for (size_t i = 0; i < n; ++i)
        e[3 * b + c][i] = lull_two_buffer_error(P[P_CAND + 3 * b + c][i],
                                                P[P_CAND + 6 + 3 * b + c][i], P[P_A + c][i],
                                                P[P_B + c][i]);
  for (int c = 0; c < 3; ++c)
    for (size_t i = 0; i < n; ++i) {
      P[P_MEAN + c][i] = lull_reg_log_guide(0.5f * (P[P_A + c][i] + P[P_B + c][i]));
      P[P_MVAR + c][i] = 0.5f * P[P_GV + c][i]; /* the mean's: half a half's */
    }
  reg_pass sp = pass;
  sp.radius = LULL_REG_SELECT_RADIUS;
  sp.patch = LULL_REG_SELECT_PATCH;
  sp.k[0] = LULL_REG_SELECT_K;
  for (int c = 0; c < 3; ++c) {
    sp.g[c] = P[P_MEAN + c];
    sp.gv[c] = P[P_MVAR + c];
  }
  nlm_smooth(&sp, 6, (const float* const*)e, es, work);
  for (int c = 0; c < 3; ++c)
    for (size_t i = 0; i < n; ++i)
      choice[c][i] = lull_reg_choice(es[c][i], es[3 + c][i]);
  nlm_smooth(&sp, 3, (const float* const*)choice, es, work);
  for (int c = 0; c < 3; ++c)
    for (size_t i = 0; i < n; ++i) {
      const float t = es[c][i];
      const float xa = lull_reg_blend(t, P[P_CAND + c][i], P[P_CAND + 3 + c][i]);
      const float xb = lull_reg_blend(t, P[P_CAND + 6 + c][i], P[P_CAND + 9 + c][i]);
      P[P_MEAN + c][i] = 0.5f * (xa + xb);
      P[P_MVAR + c][i] = lull_two_buffer_variance(xa - xb);
    }
  status = lull_progress_span_report(span, 0.7, err);
  if (status != LULL_OK)
    return status;
  /* 5. the second pass (§5.4): the mean, self-guided, over a wider window */
  if (params->second_radius <= 0) {
    for (int c = 0; c < 3; ++c)
      memcpy(P[P_OUT + c], P[P_MEAN + c], n * sizeof(float));
    return LULL_OK;
  }
  for (int k = 0; k < nf; ++k)
    if (feature_halves)
      for (size_t i = 0; i < n; ++i)
        P[P_FA + k][i] = 0.5f * (P[P_FA + k][i] + P[P_FB + k][i]);
  pass.nk = 1;
  pass.radius = params->second_radius;
  pass.k[0] = params->second_bandwidth;
  for (int c = 0; c < 3; ++c) {
    pass.y[c] = P[P_MEAN + c];
    pass.g[c] = P[P_MEAN + c];
    pass.gv[c] = P[P_MVAR + c];
  }
  for (int k = 0; k < nf; ++k)
    pass.f[k] = P[P_FA + k];
  float* out[LULL_REG_MAX_BANDWIDTHS][3] = {{P[P_OUT], P[P_OUT + 1], P[P_OUT + 2]}};
  const lull_progress_span sub = lull_progress_subspan(span, 0.7, 1.0);
  return run_pass(&pass, out, work, &sub, err);
}

/* The one-buffer run on planes P, features loaded; result in P_OUT. */
static lull_status run_one(const reg_run* r, const lull_regression_images* images, float* const* P,
                           int nf, float* work, float* interleaved, const lull_progress_span* span,
                           lull_error* err)
{
  const lull_regression_params* params = r->params;
  const int W = r->width, H = r->height, threads = r->threads;
  const size_t n = (size_t)W * (size_t)H;
  if (params->fireflies) {
    float* y[3] = {P[P_A], P[P_A + 1], P[P_A + 2]};
    clamp_fireflies(y, (const float* const*)y, W, H, LULL_REG_FIREFLY_RADIUS_ONE, LULL_REG_FIREFLY_TAU, 0.0f,
                    LULL_REG_FIREFLY_ISOLATED_ONE, LULL_REG_FIREFLY_ISOLATION_RADIUS, work, threads);
  }
  /* the pilot: the a-trous filter on the colour with the same guides */
  float* yin = interleaved;
  float* pilot = interleaved + 3 * n;
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c)
      yin[3 * i + c] = P[P_A + c][i];
  lull_atrous_params ap = lull_atrous_default_params();
  ap.input_scale = 1.0f; /* the colour is scaled already */
  lull_atrous_images ai;
  memset(&ai, 0, sizeof ai);
  ai.color.data = (unsigned char*)yin;
  ai.color.format = LULL_FORMAT_FLOAT3;
  ai.color.width = W;
  ai.color.height = H;
  ai.color.pixel_stride = 3 * sizeof(float);
  ai.color.row_stride = 3 * sizeof(float) * (size_t)W;
  ai.output = ai.color;
  ai.output.data = (unsigned char*)pilot;
  ai.albedo = images->albedo;
  ai.normal = images->normal;
  ai.depth = images->depth;
  ai.position = images->position;
  lull_status status = lull_atrous_cpu(&ap, &ai, threads, NULL, err);
  if (status != LULL_OK)
    return status;
  status = lull_progress_span_report(span, 0.05, err);
  if (status != LULL_OK)
    return status;
  /* the noise variance: the residual against the pilot over 5x5, or the
   * given variance; the guide: log of the pilot, a quarter of the noise */
  for (int c = 0; c < 3; ++c) {
    for (size_t i = 0; i < n; ++i) {
      const float pv = pilot[3 * i + c];
      const float d = P[P_A + c][i] - pv;
      P[P_TMP][i] = d * d;
      P[P_GA + c][i] = lull_reg_log_guide(pv);
    }
    lull_box_mean(W, H, P[P_TMP], P[P_GV + c], P[P_TMP + 1], LULL_REG_ONE_VARIANCE_RADIUS, 0, W, 0, H, threads);
  }
  if (has(&images->variance)) {
    const int vc = lull_format_channels(images->variance.format);
    float* pl[3] = {P[P_TMP], P[P_TMP + 1], P[P_TMP + 2]};
    lull_fp_load_planes(&images->variance, pl, vc, 0, threads);
    const float s2 = r->scale * r->scale;
    for (int c = 0; c < 3; ++c)
      for (size_t i = 0; i < n; ++i)
        P[P_GV + c][i] = lull_reg_variance_in(P[P_TMP + (vc == 3 ? c : 0)][i], s2, P[P_GV + c][i]);
  }
  for (int c = 0; c < 3; ++c)
    for (size_t i = 0; i < n; ++i)
      P[P_GB + c][i] = lull_reg_one_guide_variance(P[P_GV + c][i], pilot[3 * i + c]);
  reg_pass pass = pass_of(r);
  pass.nf = nf;
  pass.nk = 1;
  pass.k[0] = params->bandwidth[0];
  for (int c = 0; c < 3; ++c) {
    pass.y[c] = P[P_A + c];
    pass.g[c] = P[P_GA + c];
    pass.gv[c] = P[P_GB + c];
  }
  for (int k = 0; k < nf; ++k)
    pass.f[k] = P[P_FA + k];
  float* out[LULL_REG_MAX_BANDWIDTHS][3] = {{P[P_OUT], P[P_OUT + 1], P[P_OUT + 2]}};
  const lull_progress_span sub = lull_progress_subspan(span, 0.05, 1.0);
  return run_pass(&pass, out, work, &sub, err);
}

/* Stores the result planes (scaled back) into output: the region of the
 * run, rows [y0, y1) x [x0, x1) of it, at (ox, oy) of the output. */
static void store_result(const reg_run* r, float* const* P, const lull_image* output,
                         const lull_image* output_variance, int color_channels, int x0, int y0,
                         int x1, int y1, int ox, int oy)
{
  const lull_regression_params* params = r->params;
  const int W = r->width;
  const float inv = 1.0f / r->scale;
  const int nc = lull_format_channels(output->format);
#pragma omp parallel for schedule(static) num_threads(r->threads)
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const size_t i = (size_t)y * (size_t)W + (size_t)x;
      float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int c = 0; c < 3; ++c)
        v[c] = lull_reg_color_out(P[P_OUT + c][i], inv, params->hdr, params->srgb);
      if (nc == 4)
        v[3] = P[P_ALPHA][i];
      lull_image_store_n(output, ox + x - x0, oy + y - y0, v, LULL_MIN(nc, color_channels == 4 ? 4 : 3));
      if (output_variance && has(output_variance)) {
        const int vc = lull_format_channels(output_variance->format);
        float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        float mean = 0.0f;
        for (int c = 0; c < 3; ++c) {
          s[c] = lull_hold_in_range(P[P_MVAR + c][i] * inv * inv);
          mean += s[c] * (1.0f / 3.0f);
        }
        if (vc == 1)
          s[0] = mean;
        lull_image_store_n(output_variance, ox + x - x0, oy + y - y0, s, LULL_MIN(vc, 3));
      }
    }
}

/* One region (the whole image, or a tile and its margin): loads, runs and
 * stores the interior [ix0, ix1) x [iy0, iy1) (region coordinates) at
 * (ox, oy) of the full output.  block: the region's working memory
 * (lull_regression_cpu_memory). */
static lull_status run_region(const lull_regression_params* params,
                              const lull_regression_images* im, const lull_feature_scales* scales,
                              float scale, int threads, float* block, int ix0, int iy0, int ix1,
                              int iy1, int ox, int oy, const lull_regression_images* full,
                              const lull_progress_span* span, lull_error* err)
{
  const int W = im->output.width, H = im->output.height;
  const size_t n = (size_t)W * (size_t)H;
  const int halves = lull_regression_has_halves(im);
  reg_run r = {params, W, H, threads, scale};
  const size_t count = planes_of(im);
  float* P[TWO_COUNT];
  for (size_t k = 0; k < count; ++k)
    P[k] = block + k * n;
  float* work = block + count * n;
  const lull_image* color = halves ? &im->color_a : &im->color;
  const int color_channels = lull_format_channels(color->format);
  {
    float* a[3] = {P[P_A], P[P_A + 1], P[P_A + 2]};
    lull_fp_load_color(color, scale, params->srgb, params->nonnegative, a, color_channels == 4 ? P[P_ALPHA] : NULL, threads);
    if (halves) {
      float* b[3] = {P[P_B], P[P_B + 1], P[P_B + 2]};
      lull_fp_load_color(&im->color_b, scale, params->srgb, params->nonnegative, b,
                 color_channels == 4 ? P[P_TMP] : NULL, threads);
      /* the fourth channel: the mean of the halves' */
      if (color_channels == 4)
        for (size_t i = 0; i < n; ++i)
          P[P_ALPHA][i] = 0.5f * (P[P_ALPHA][i] + P[P_TMP][i]);
    }
  }
  /* features: each half's own where they come in halves, the guides given
   * once for both */
  const feature_set fa = lull_regression_half_features(im, 0), fb = lull_regression_half_features(im, 1);
  const int nf = feature_channels(&fa);
  lull_fp_load_features(&fa, scales, &P[P_FA], W, H, threads);
  const int feature_halves = lull_regression_feature_halves(im);
  unsigned shared = 0; /* feature channels given once: not cross-prefiltered */
  for (int k = 0; k < nf; ++k)
    shared |= (unsigned)lull_regression_feature_shared(im, k) << k;
  if (feature_halves)
    lull_fp_load_features(&fb, scales, &P[P_FB], W, H, threads);
  else if (halves)
    for (int k = 0; k < nf; ++k)
      P[P_FB + k] = P[P_FA + k];
  lull_status status =
      halves ? run_halves(&r, P, nf, feature_halves, shared, work, span, err)
             : run_one(&r, im, P, nf, work, work + pass_work_floats(&r, nf), span, err);
  if (status != LULL_OK)
    return status;
  store_result(&r, P, &full->output, halves ? &full->output_variance : NULL, color_channels, ix0,
               iy0, ix1, iy1, ox, oy);
  return LULL_OK;
}

/* The input scale of a run: the given one, or the automatic scale of the
 * (first half of the) colour, as ATrous picks it (linear colour only). */
static lull_status input_scale_of(const lull_regression_params* params,
                                  const lull_regression_images* images, int threads, float* scale,
                                  lull_error* err)
{
  lull_atrous_params ap = lull_atrous_default_params();
  ap.input_scale = params->input_scale;
  ap.srgb = params->srgb;
  return lull_atrous_input_scale(&ap, lull_regression_has_halves(images) ? &images->color_a
                                                                         : &images->color,
                                 threads, scale, err);
}

lull_status lull_regression_cpu(const lull_regression_params* given,
                                const lull_regression_images* images, int num_threads,
                                const lull_progress* progress, lull_error* err)
{
  const lull_regression_params resolved = lull_regression_resolve(given, images);
  const lull_regression_params* params = &resolved;
  lull_status status = lull_regression_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const int threads = lull_thread_count(num_threads);
  const int W = images->output.width, H = images->output.height;
  float scale = 1.0f;
  status = input_scale_of(params, images, threads, &scale, err);
  if (status != LULL_OK)
    return status;
  /* the feature scales of the whole image, so tiles agree */
  const feature_set fs = lull_regression_half_features(images, 0);
  lull_feature_scales scales;
  {
    float* tmp = malloc(sizeof(float) * 3 * (size_t)W * (size_t)H);
    if (!tmp)
      return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
    lull_fp_feature_scales(&fs, tmp, W, H, threads, &scales);
    free(tmp);
  }
  /* tiles: the largest square interior whose region fits the cap, at
   * least four margins (below that the cap is exceeded: a region of a
   * smaller tile is mostly margin, filtered again for each tile; at four
   * margins a tile's region is at most 2.25 times its interior) */
  const int margin = lull_regression_reach(params, images);
  const int smallest = 4 * margin;
  int tile = LULL_MAX(W, H);
  if (params->memory_cap)
    while (tile > smallest &&
           lull_regression_cpu_memory(params, images, LULL_MIN(W, tile + 2 * margin),
                                      LULL_MIN(H, tile + 2 * margin), threads) > params->memory_cap)
      tile = LULL_MAX(smallest, tile * 3 / 4);
  const int tiles_x = (W + tile - 1) / tile, tiles_y = (H + tile - 1) / tile;
  const int rw = LULL_MIN(W, tile + 2 * margin), rh = LULL_MIN(H, tile + 2 * margin);
  const size_t bytes = lull_regression_cpu_memory(params, images, rw, rh, threads);
  float* block = malloc(bytes);
  if (!block)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  /* the output may alias an input: with tiles, results wait in a copy */
  float* staged = NULL;
  lull_image out_full = images->output, var_full = images->output_variance;
  const int tiled = tiles_x * tiles_y > 1;
  if (tiled) {
    const int oc = lull_format_channels(images->output.format);
    const int vc = has(&images->output_variance) ? lull_format_channels(images->output_variance.format) : 0;
    staged = malloc(sizeof(float) * (size_t)W * (size_t)H * (size_t)LULL_MAX(oc + vc, 1));
    if (!staged) {
      free(block);
      return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    out_full.data = (unsigned char*)staged;
    out_full.format = (lull_format)oc;
    out_full.pixel_stride = sizeof(float) * (size_t)oc;
    out_full.row_stride = out_full.pixel_stride * (size_t)W;
    if (vc) {
      var_full.data = (unsigned char*)(staged + (size_t)W * (size_t)H * (size_t)oc);
      var_full.format = (lull_format)vc;
      var_full.pixel_stride = sizeof(float) * (size_t)vc;
      var_full.row_stride = var_full.pixel_stride * (size_t)W;
    }
  }
  lull_regression_images full = *images;
  full.output = out_full;
  full.output_variance = var_full;
  const lull_progress_span whole = {progress, 0.0, 1.0};
  for (int t = 0; t < tiles_x * tiles_y && status == LULL_OK; ++t) {
    const int tx0 = (t % tiles_x) * tile, ty0 = (t / tiles_x) * tile;
    const int tx1 = LULL_MIN(W, tx0 + tile), ty1 = LULL_MIN(H, ty0 + tile);
    const int x0 = LULL_MAX(0, tx0 - margin), y0 = LULL_MAX(0, ty0 - margin);
    const int x1 = LULL_MIN(W, tx1 + margin), y1 = LULL_MIN(H, ty1 + margin);
    const lull_regression_images region = lull_regression_crop(images, x0, y0, x1 - x0, y1 - y0);
    const lull_progress_span span =
        lull_progress_subspan(&whole, (double)t / (tiles_x * tiles_y), (double)(t + 1) / (tiles_x * tiles_y));
    status = run_region(params, &region, &scales, scale, threads, block, tx0 - x0, ty0 - y0,
                        tx1 - x0, ty1 - y0, tx0, ty0, &full, &span, err);
  }
  free(block);
  if (status == LULL_OK && tiled) {
    /* copy the staged result out */
    const int oc = lull_format_channels(images->output.format);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        float v[4];
        lull_image_load(&out_full, x, y, v);
        lull_image_store_n(&images->output, x, y, v, oc);
        if (has(&images->output_variance)) {
          lull_image_load(&var_full, x, y, v);
          lull_image_store_n(&images->output_variance, x, y, v,
                             lull_format_channels(images->output_variance.format));
        }
      }
  }
  free(staged);
  if (status != LULL_OK)
    return status;
  return lull_progress_report(progress, 1.0, err);
}
