/* The Regression filter's kernels as host-and-device bodies (regression_cuda.h
 * says what the filter's CUDA run is made of).  The formulas are
 * core/regression_math.h's; each body mirrors a loop of
 * core/regression_cpu.c, in the same order of arithmetic where that order
 * decides the rounding (the patch sums, the window's offsets, the plane
 * repair's mean), so the CPU emulation (tests/gpu/regression_emulation_test.cu)
 * can compare the two.
 *
 * The tile kernels (FIT, GATHER, SMOOTH) are written once as a run over
 * the window's offsets with an "executor" that either is one GPU thread
 * (each() runs the step for it, sync() is __syncthreads) or is the CPU
 * looping over a block's threads (each() runs the step for every thread
 * in turn, sync() does nothing): the steps pass data between threads only
 * through shared memory, and each thread's sums live in its state (GPU
 * registers; the CPU keeps one state per thread). */
#pragma once

#include "../core/repair_math.h"
#include "image_access.cuh"
#include "regression_cuda.h"

LULL_BODY int lull_rk_finite(float v)
{
  return (v - v) == 0.0f; /* NaN for NaN and +-inf */
}

/* -- reductions ----------------------------------------------------------------- */

LULL_BODY void lull_rk_partial_clear(lull_rk_partial* p)
{
  p->s[0] = p->s[1] = p->s[2] = 0.0;
  p->u[0] = p->u[1] = 0u;
  p->m = 0.0f;
  p->pad = 0.0f;
}

LULL_BODY void lull_rk_partial_add(lull_rk_partial* p, const lull_rk_partial* q)
{
  for (int k = 0; k < 3; ++k)
    p->s[k] += q->s[k];
  p->u[0] += q->u[0];
  p->u[1] += q->u[1];
  p->m = p->m > q->m ? p->m : q->m;
}

/* Pixel i's part of a reduction (regression_cpu.c: input_scale_of's
 * lull_atrous_input_scale, feature_scales_of). */
LULL_BODY void lull_rk_reduce_pixel(const lull_rk_reduce_args* a, int x, int y, lull_rk_partial* p)
{
  float v[4];
  lull_cuda_image_load(&a->image, x, y, v);
  switch (a->kind) {
    case LULL_RK_REDUCE_SCALE: {
      const int channels = LULL_MIN(lull_format_channels(a->image.format), 3);
      for (int c = 0; c < channels; ++c) {
        lull_auto_scale_add(v[c], &p->u[0], &p->u[1]);
        if (lull_rk_finite(v[c]))
          p->m = LULL_MAX(p->m, fabsf(v[c]));
      }
      break;
    }
    case LULL_RK_REDUCE_DEPTH:
      if (v[0] > 0.0f && v[0] < 1e9f) {
        p->s[0] += v[0];
        p->u[0] += 1u;
      }
      break;
    case LULL_RK_REDUCE_CENTROID:
      if (lull_rk_finite(v[0]) && lull_rk_finite(v[1]) && lull_rk_finite(v[2])) {
        for (int k = 0; k < 3; ++k)
          p->s[k] += v[k];
        p->u[0] += 1u;
      }
      break;
    case LULL_RK_REDUCE_DISTANCE:
      if (lull_rk_finite(v[0]) && lull_rk_finite(v[1]) && lull_rk_finite(v[2])) {
        double r2 = 0.0;
        for (int k = 0; k < 3; ++k)
          r2 += ((double)v[k] - a->consts->centre[k]) * ((double)v[k] - a->consts->centre[k]);
        p->s[0] += sqrt(r2);
        p->u[0] += 1u;
      }
      break;
    default: break;
  }
}

/* One thread's part: pixels tid + block * threads, striding by the grid. */
LULL_BODY void lull_rk_reduce_thread(const lull_rk_reduce_args* a, int block, int tid,
                                     lull_rk_partial* out)
{
  lull_rk_partial_clear(out);
  const long long w = a->image.width, n = w * (long long)a->image.height;
  const long long step = (long long)LULL_RK_REDUCE_BLOCKS * LULL_RK_THREADS;
  for (long long i = (long long)block * LULL_RK_THREADS + tid; i < n; i += step)
    lull_rk_reduce_pixel(a, (int)(i % w), (int)(i / w), out);
}

/* A block's threads' partials, in order. */
LULL_BODY void lull_rk_reduce_block(const lull_rk_partial* threads, lull_rk_partial* out)
{
  lull_rk_partial t;
  lull_rk_partial_clear(&t);
  for (int k = 0; k < LULL_RK_THREADS; ++k)
    lull_rk_partial_add(&t, &threads[k]);
  *out = t;
}

/* The blocks' partials in order into the constants (one thread). */
LULL_BODY void lull_rk_reduce_finalize(const lull_rk_reduce_args* a)
{
  lull_rk_partial t;
  lull_rk_partial_clear(&t);
  for (int b = 0; b < LULL_RK_REDUCE_BLOCKS; ++b)
    lull_rk_partial_add(&t, &a->partials[b]);
  lull_rk_consts* c = a->consts;
  switch (a->kind) {
    case LULL_RK_REDUCE_SCALE:
      /* the first reduction of a run: the others' defaults too */
      c->scale = a->auto_scale ? lull_auto_scale(t.u[0], t.u[1], t.m) : a->fixed_scale;
      c->inv_scale = 1.0f / c->scale;
      c->inv_depth = 1.0f;
      c->centre[0] = c->centre[1] = c->centre[2] = 0.0f;
      c->inv_position = 1.0f;
      break;
    case LULL_RK_REDUCE_DEPTH:
      if (t.u[0] && t.s[0] > 0.0)
        c->inv_depth = (float)((double)t.u[0] / t.s[0]);
      break;
    case LULL_RK_REDUCE_CENTROID:
      if (t.u[0])
        for (int k = 0; k < 3; ++k)
          c->centre[k] = (float)(t.s[k] / (double)t.u[0]);
      break;
    case LULL_RK_REDUCE_DISTANCE:
      if (t.s[0] > 0.0 && t.s[0] - t.s[0] == 0.0)
        c->inv_position = (float)((double)t.u[0] / t.s[0]);
      break;
    default: break;
  }
}

/* -- one thread per pixel --------------------------------------------------------- */

/* Mean of plane p over the (2r + 1)^2 window's part inside the image, in
 * lull_box_mean's order: each row's sum over its count, then the rows'
 * sum times 1 / their count. */
LULL_BODY float lull_rk_box_mean_at(const float* p, int w, int h, int x, int y, int r)
{
  const int xa = LULL_MAX(0, x - r), xb = LULL_MIN(w - 1, x + r);
  const int ya = LULL_MAX(0, y - r), yb = LULL_MIN(h - 1, y + r);
  float o = 0.0f;
  for (int k = ya; k <= yb; ++k) {
    const float* row = p + (size_t)k * (size_t)w;
    float s = 0.0f;
    for (int j = xa; j <= xb; ++j)
      s += row[j];
    o += s / (float)(xb - xa + 1);
  }
  return o * (1.0f / (float)(yb - ya + 1));
}

/* lull_plane_repair at one pixel (the loads turned non-finite values into
 * NaN, as the CPU does before its repair). */
LULL_BODY float lull_rk_repair_at(const float* p, int w, int h, int x, int y)
{
  const float v = p[(size_t)y * (size_t)w + (size_t)x];
  return v == v ? v : lull_repair_value_at(p, w, h, x, y);
}

/* The feature channels of a set at a pixel (regression_cpu.c,
 * load_features): albedo, normal, the depth feature or the position's;
 * non-finite values as NaN for the repair. */
LULL_BODY int lull_rk_load_features_at(const lull_rk_pixel_args* a, int x, int y, float* f)
{
  int k = 0;
  float v[4];
  if (a->albedo.data) {
    lull_cuda_image_load(&a->albedo, x, y, v);
    lull_expand_rgb(v, lull_format_channels(a->albedo.format));
    for (int c = 0; c < 3; ++c)
      f[k++] = v[c];
  }
  if (a->normal.data) {
    lull_cuda_image_load(&a->normal, x, y, v);
    lull_expand_rgb(v, lull_format_channels(a->normal.format));
    for (int c = 0; c < 3; ++c)
      f[k++] = v[c];
  }
  if (a->depth.data) {
    lull_cuda_image_load(&a->depth, x, y, v);
    f[k++] = lull_reg_depth_feature(v[0], a->consts->inv_depth);
  } else if (a->position.data) {
    lull_cuda_image_load(&a->position, x, y, v);
    for (int c = 0; c < 3; ++c)
      f[k++] = lull_reg_position_feature(v[c], a->consts->centre[c], a->consts->inv_position);
  }
  for (int c = 0; c < k; ++c)
    f[c] = lull_rk_finite(f[c]) ? f[c] : NAN;
  return k;
}

LULL_BODY void lull_rk_pixel_body(const lull_rk_pixel_args* a, int x, int y)
{
  const int w = a->width, h = a->height;
  if (x >= w || y >= h)
    return;
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  switch (a->kind) {
    case LULL_RK_LOAD_COLOR: {
      /* image -> dst[0..2] (scaled, linear, non-finite as NaN), the 4th
       * channel to dst[3] when set (count 1: the mean of it and what dst[3]
       * holds, the other half's); flag: sRGB, flag2: negative as 0 */
      float v[4];
      lull_cuda_image_load(&a->image, x, y, v);
      for (int c = 0; c < 3; ++c) {
        const float s = lull_reg_color_in(v[c], a->consts->scale, a->flag, a->flag2);
        a->dst[c][i] = lull_rk_finite(s) ? s : NAN;
      }
      if (a->dst[3])
        a->dst[3][i] = a->count ? 0.5f * (a->dst[3][i] + v[3]) : v[3];
      break;
    }
    case LULL_RK_LOAD_FEATURES: {
      float f[LULL_REG_MAX_FEATURES];
      const int k = lull_rk_load_features_at(a, x, y, f);
      for (int c = 0; c < k; ++c)
        a->dst[c][i] = f[c];
      break;
    }
    case LULL_RK_LOAD_VARIANCE: {
      /* the variance image (1 or 3 channels) -> dst[0..2], scaled; a
       * negative value keeps the estimate dst holds */
      float v[4];
      lull_cuda_image_load(&a->image, x, y, v);
      const int vc = lull_format_channels(a->image.format);
      const float s2 = a->consts->scale * a->consts->scale;
      for (int c = 0; c < 3; ++c)
        a->dst[c][i] = lull_reg_variance_in(v[vc == 3 ? c : 0], s2, a->dst[c][i]);
      break;
    }
    case LULL_RK_REPAIR:
      for (int c = 0; c < a->channels; ++c)
        a->dst[c][i] = lull_rk_repair_at(a->src[c], w, h, x, y);
      break;
    case LULL_RK_COPY:
      for (int c = 0; c < a->channels; ++c)
        a->dst[c][i] = a->src[c][i];
      break;
    case LULL_RK_LUMINANCE:
      /* the firefly test's luminances: of src into dst[0], of src2 (when
       * set) into dst[1] */
      a->dst[0][i] = lull_reg_firefly_luminance(a->src[0][i], a->src[1][i], a->src[2][i]);
      if (a->src2[0])
        a->dst[1][i] = lull_reg_firefly_luminance(a->src2[0][i], a->src2[1][i], a->src2[2][i]);
      break;
    case LULL_RK_FIREFLY_SCALE: {
      /* src[0] luminance, src[1] level, src[2] candidates; dst[0..2] the
       * colour, scaled where a candidate is isolated (count: at most that
       * many candidates within radius; 0: no limit) */
      if (a->src[2][i] == 0.0f)
        break;
      const int r = a->radius, isolated = a->count;
      int n = 0;
      for (int dy = -r; dy <= r && isolated > 0; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
          const int qx = x + dx, qy = y + dy;
          if (qx >= 0 && qy >= 0 && qx < w && qy < h)
            n += a->src[2][(size_t)qy * (size_t)w + (size_t)qx] != 0.0f;
        }
      if (isolated > 0 && n > isolated)
        break;
      const float f = a->src[1][i] / a->src[0][i];
      for (int c = 0; c < 3; ++c)
        a->dst[c][i] *= f;
      break;
    }
    case LULL_RK_GUIDES:
      /* halves: src A, src2 B -> dst[0..2] log guide of A, dst2[0..2] of
       * B, dst[3..5] the half variance of the guides */
      for (int c = 0; c < 3; ++c) {
        const float ga = lull_reg_log_guide(a->src[c][i]);
        const float gb = lull_reg_log_guide(a->src2[c][i]);
        a->dst[c][i] = ga;
        a->dst2[c][i] = gb;
        a->dst[3 + c][i] = lull_reg_half_variance(ga, gb);
      }
      break;
    case LULL_RK_HALF_VARIANCE:
      for (int c = 0; c < a->channels; ++c)
        a->dst[c][i] = lull_reg_half_variance(a->src[c][i], a->src2[c][i]);
      break;
    case LULL_RK_BOX_MEAN:
      for (int c = 0; c < a->channels; ++c)
        a->dst[c][i] = lull_rk_box_mean_at(a->src[c], w, h, x, y, a->radius);
      break;
    case LULL_RK_SELECT_ERRORS:
      /* src: the 12 candidates (A at k0, k1, B at k0, k1); src2: A, B, the
       * guides' variance -> dst[0..5] the errors at k0, k1; dst2[0..2] the
       * log guide of the halves' mean, dst2[3..5] its variance */
      for (int b = 0; b < 2; ++b)
        for (int c = 0; c < 3; ++c)
          a->dst[3 * b + c][i] =
              lull_two_buffer_error(a->src[3 * b + c][i], a->src[6 + 3 * b + c][i],
                                    a->src2[c][i], a->src2[3 + c][i]);
      for (int c = 0; c < 3; ++c) {
        a->dst2[c][i] = lull_reg_log_guide(0.5f * (a->src2[c][i] + a->src2[3 + c][i]));
        a->dst2[3 + c][i] = 0.5f * a->src2[6 + c][i]; /* the mean's: half a half's */
      }
      break;
    case LULL_RK_CHOICE:
      for (int c = 0; c < 3; ++c)
        a->dst[c][i] = lull_reg_choice(a->src[c][i], a->src[3 + c][i]);
      break;
    case LULL_RK_BLEND:
      /* src[0..2] the smoothed choice, src2 the 12 candidates -> dst[0..2]
       * the mean of the halves' results, dst2[0..2] its variance */
      for (int c = 0; c < 3; ++c) {
        const float t = a->src[c][i];
        const float xa = lull_reg_blend(t, a->src2[c][i], a->src2[3 + c][i]);
        const float xb = lull_reg_blend(t, a->src2[6 + c][i], a->src2[9 + c][i]);
        a->dst[c][i] = 0.5f * (xa + xb);
        a->dst2[c][i] = lull_two_buffer_variance(xa - xb);
      }
      break;
    case LULL_RK_MEAN:
      for (int c = 0; c < a->channels; ++c)
        a->dst[c][i] = 0.5f * (a->src[c][i] + a->src2[c][i]);
      break;
    case LULL_RK_ONE_PREPARE:
      /* the pilot (interleaved) and the colour src -> dst[0..2] the squared
       * residual, dst2[0..2] the pilot's log guide */
      for (int c = 0; c < 3; ++c) {
        const float pv = a->interleaved[3 * i + (size_t)c];
        const float d = a->src[c][i] - pv;
        a->dst[c][i] = d * d;
        a->dst2[c][i] = lull_reg_log_guide(pv);
      }
      break;
    case LULL_RK_ONE_GUIDE_VARIANCE:
      for (int c = 0; c < 3; ++c)
        a->dst[c][i] = lull_reg_one_guide_variance(a->src[c][i], a->interleaved[3 * i + (size_t)c]);
      break;
    case LULL_RK_INTERLEAVE:
      for (int c = 0; c < 3; ++c)
        a->interleaved[3 * i + (size_t)c] = a->src[c][i];
      break;
    case LULL_RK_STORE: {
      /* src[0..2] the result, src[3] the 4th channel (or NULL), src2[0..2]
       * its variance -> image at (ox, oy) for the rows and columns
       * [x0, x1) x [y0, y1), image2 (when set) the variance; flag hdr,
       * flag2 sRGB */
      if (x < a->x0 || x >= a->x1 || y < a->y0 || y >= a->y1)
        break;
      const float inv = a->consts->inv_scale;
      const int nc = lull_format_channels(a->image.format);
      const int ox = a->ox + x - a->x0, oy = a->oy + y - a->y0;
      float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int c = 0; c < 3; ++c)
        v[c] = lull_reg_color_out(a->src[c][i], inv, a->flag, a->flag2);
      if (nc == 4 && a->src[3])
        v[3] = a->src[3][i];
      lull_cuda_image_store_n(&a->image, ox, oy, v, nc);
      if (a->image2.data) {
        const int vc = lull_format_channels(a->image2.format);
        float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        float mean = 0.0f;
        for (int c = 0; c < 3; ++c) {
          s[c] = lull_hold_in_range(a->src2[c][i] * inv * inv);
          mean += s[c] * (1.0f / 3.0f);
        }
        if (vc == 1)
          s[0] = mean;
        lull_cuda_image_store_n(&a->image2, ox, oy, s, LULL_MIN(vc, 3));
      }
      break;
    }
    case LULL_RK_COPY_OUT: {
      /* a tiled run's staged result (image, image2 views of the staging)
       * into the output (albedo's view) and its variance (normal's) */
      float v[4];
      lull_cuda_image_load(&a->image, x, y, v);
      lull_cuda_image_store_n(&a->albedo, x, y, v, lull_format_channels(a->albedo.format));
      if (a->normal.data) {
        lull_cuda_image_load(&a->image2, x, y, v);
        lull_cuda_image_store_n(&a->normal, x, y, v, lull_format_channels(a->normal.format));
      }
      break;
    }
    default: break;
  }
}

/* The firefly level at a pixel (regression_cpu.c, clamp_fireflies): the
 * luminances src[0] (and the reference's src[1] unless SAME) of the
 * (2 WR + 1)^2 window, their rank-(3 nv / 4) value, the median of the
 * window's half variances; dst[0] the level, dst[1] 1 where the pixel is a
 * candidate.  The window's values are held in registers (absent pixels as
 * +inf, which rank after every real value) and the ranks counted: the
 * value of rank k is the one with at most k values below it and more than
 * k at or below it, as sorting finds it. */
template <int WR, int SAME>
LULL_BODY void lull_rk_firefly_level_at(const lull_rk_pixel_args* a, int x, int y)
{
  const int w = a->width, h = a->height;
  if (x >= w || y >= h)
    return;
  enum { SPAN = 2 * WR + 1, CELLS = SPAN * SPAN, VALUES = SAME ? CELLS : 2 * CELLS };
  float vals[VALUES], vars[CELLS];
  int nv = 0, nd = 0;
  LULL_UNROLL
  for (int dy = -WR; dy <= WR; ++dy)
    LULL_UNROLL
    for (int dx = -WR; dx <= WR; ++dx) {
      const int k = (dy + WR) * SPAN + (dx + WR);
      const int qx = x + dx, qy = y + dy;
      const int inside = qx >= 0 && qy >= 0 && qx < w && qy < h;
      float lx = INFINITY, lr = INFINITY, var = INFINITY;
      if (inside) {
        const size_t j = (size_t)qy * (size_t)w + (size_t)qx;
        lx = a->src[0][j];
        lr = SAME ? lx : a->src[1][j];
        var = lull_reg_half_variance(lx, lr);
        ++nd;
        nv += SAME ? 1 : 2;
      }
      if (SAME) {
        vals[k] = lx;
      } else {
        vals[2 * k] = lx;
        vals[2 * k + 1] = lr;
      }
      vars[k] = var;
    }
  const int kv = (3 * nv) / 4, kd = nd / 2;
  float p75 = 0.0f, median = 0.0f;
  LULL_UNROLL
  for (int m = 0; m < VALUES; ++m) {
    int lt = 0, le = 0;
    LULL_UNROLL
    for (int j = 0; j < VALUES; ++j) {
      lt += vals[j] < vals[m];
      le += vals[j] <= vals[m];
    }
    if (lt <= kv && kv < le)
      p75 = vals[m];
  }
  if (!SAME) {
    LULL_UNROLL
    for (int m = 0; m < CELLS; ++m) {
      int lt = 0, le = 0;
      LULL_UNROLL
      for (int j = 0; j < CELLS; ++j) {
        lt += vars[j] < vars[m];
        le += vars[j] <= vars[m];
      }
      if (lt <= kd && kd < le)
        median = vars[m];
    }
  }
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  const float level = lull_reg_firefly_level(p75, median, a->f, a->f2);
  const float l = a->src[0][i];
  a->dst[0][i] = level;
  a->dst[1][i] = l > level && l > 0.0f ? 1.0f : 0.0f;
}

/* -- the tile kernels ----------------------------------------------------------------
 *
 * A block takes a tile of LULL_RK_TILE_W x th pixels (th = 16 / nb; a
 * thread per pixel and bandwidth) and goes through the window's offsets
 * d in the CPU's order (rows dy, then columns dx).  Per offset:
 *   terms:   the pair terms (lull_reg_pair_term) of pixels s and s + d for
 *            the tile and its patch margin, 0 where either is outside;
 *   colsums: their vertical sums over the patch's rows;
 *   add:     each thread's patch sum (the colsums over the patch's
 *            columns), over the count of pairs inside, gives the weight
 *            (lull_reg_weight) of its pixel p and p + d, which its
 *            accumulator adds.
 * Shared memory per offset: terms (tw + 2F) x (th + 2F), colsums
 * (tw + 2F) x th; a kernel takes G offsets per round (G of them). */

typedef struct lull_rk_tile
{
  int x0, y0, th, rw, rh, set;
} lull_rk_tile;

/* One thread's pixel. */
typedef struct lull_rk_pix
{
  int x, y, tx, ty, b, valid;
  size_t i;
} lull_rk_pix;

/* Shared memory of a tile kernel taking `group` offsets at a time. */
LULL_BODY size_t lull_rk_tile_smem_floats(int nb, int patch, int group)
{
  const int th = LULL_RK_TILE_W / nb;
  const size_t rw = (size_t)(LULL_RK_TILE_W + 2 * patch), rh = (size_t)(th + 2 * patch);
  return (rw * rh + rw * (size_t)th) * (size_t)group;
}

/* The guide of a launch: a SMOOTH set's, or the pass's. */
LULL_BODY void lull_rk_guide_of(const lull_rk_tile_args* a, int set, const float* const** g,
                                const float* const** gv)
{
  if (a->kind == LULL_RK_SMOOTH) {
    *g = a->set[set].g;
    *gv = a->set[set].gv;
  } else {
    *g = a->g;
    *gv = a->gv;
  }
}

LULL_BODY void lull_rk_terms(const lull_rk_tile_args* a, const lull_rk_tile* t, float* smem,
                             int dx, int dy, int tid)
{
  const int F = a->patch, W = a->width, H = a->height;
  const float* const* g;
  const float* const* gv;
  lull_rk_guide_of(a, t->set, &g, &gv);
  for (int e = tid; e < t->rw * t->rh; e += LULL_RK_THREADS) {
    const int sx = t->x0 - F + e % t->rw, sy = t->y0 - F + e / t->rw;
    float term = 0.0f;
    if (sx >= 0 && sy >= 0 && sx < W && sy < H && sx + dx >= 0 && sx + dx < W && sy + dy >= 0 &&
        sy + dy < H) {
      const size_t i = (size_t)sy * (size_t)W + (size_t)sx;
      const size_t j = (size_t)(sy + dy) * (size_t)W + (size_t)(sx + dx);
      float gp[3] = {0.0f, 0.0f, 0.0f}, gq[3] = {0.0f, 0.0f, 0.0f};
      float vp[3] = {0.0f, 0.0f, 0.0f}, vq[3] = {0.0f, 0.0f, 0.0f};
      LULL_UNROLL
      for (int c = 0; c < 3; ++c)
        if (c < a->gc) {
          gp[c] = LULL_LDG(&g[c][i]);
          gq[c] = LULL_LDG(&g[c][j]);
          vp[c] = LULL_LDG(&gv[c][i]);
          vq[c] = LULL_LDG(&gv[c][j]);
        }
      /* a constant channel count: the loop unrolls, the values stay in
       * registers */
      term = a->gc == 3 ? lull_reg_pair_term(gp, gq, vp, vq, 3)
                        : lull_reg_pair_term(gp, gq, vp, vq, 1);
    }
    smem[e] = term;
  }
}

LULL_BODY void lull_rk_colsums(const lull_rk_tile_args* a, const lull_rk_tile* t, float* smem,
                               int tid)
{
  const int span = 2 * a->patch + 1;
  float* col = smem + t->rw * t->rh;
  for (int e = tid; e < t->rw * t->th; e += LULL_RK_THREADS) {
    const int rx = e % t->rw, ty = e / t->rw;
    float s = 0.0f;
    for (int k = 0; k < span; ++k)
      s += smem[(ty + k) * t->rw + rx];
    col[e] = s;
  }
}

/* Pixels s in [-F, F] with x + s and x + d + s both in [0, n). */
LULL_BODY int lull_rk_pairs_inside(int x, int d, int n, int F)
{
  const int lo = LULL_MAX(-F, LULL_MAX(-x, -x - d));
  const int hi = LULL_MIN(F, LULL_MIN(n - 1 - x, n - 1 - x - d));
  return hi >= lo ? hi - lo + 1 : 0;
}

/* The weight of pixel px and px + (dx, dy) at bandwidth k, from the
 * colsums (the caller checked that px + d is inside the image).  The
 * patch mean counts the pairs inside the image (a product of the columns'
 * and rows' counts, the CPU's count of ones). */
LULL_BODY float lull_rk_weight_at(const lull_rk_tile_args* a, const lull_rk_tile* t,
                                  const float* smem, const lull_rk_pix* px, int dx, int dy,
                                  float k)
{
  const int F = a->patch, span = 2 * F + 1;
  const float* col = smem + t->rw * t->rh + px->ty * t->rw + px->tx;
  float s = 0.0f;
  for (int j = 0; j < span; ++j)
    s += col[j];
  const float c = (float)(lull_rk_pairs_inside(px->x, dx, a->width, F) *
                          lull_rk_pairs_inside(px->y, dy, a->height, F));
  if (!(c > 0.0f))
    return 0.0f;
  return lull_reg_weight(s / c, k);
}

/* The run of one tile over the window's offsets.  Acc: begin, add, end of
 * a thread's sums; Exec: each(f) runs f(tid, state) for the threads it
 * stands for, sync() is a barrier. */
template <class Acc, int G, class Exec>
LULL_BODY void lull_rk_tile_run(const lull_rk_tile_args* a, int bx, int by, int set, float* smem,
                                Exec& ex)
{
  lull_rk_tile t;
  t.th = LULL_RK_TILE_W / a->nb;
  t.x0 = bx * LULL_RK_TILE_W;
  t.y0 = by * t.th;
  t.rw = LULL_RK_TILE_W + 2 * a->patch;
  t.rh = t.th + 2 * a->patch;
  t.set = set;
  const int R = a->radius, W = a->width, H = a->height;
  const int span = 2 * R + 1, offsets = span * span;
  const size_t per = (size_t)t.rw * (size_t)(t.rh + t.th); /* an offset's shared memory */
  const int per_b = LULL_RK_TILE_W * t.th;
  auto pixel = [&](int tid) {
    lull_rk_pix px;
    px.b = tid / per_b;
    const int k = tid % per_b;
    px.tx = k % LULL_RK_TILE_W;
    px.ty = k / LULL_RK_TILE_W;
    px.x = t.x0 + px.tx;
    px.y = t.y0 + px.ty;
    px.valid = px.x < W && px.y < H && px.b < a->nb;
    px.i = (size_t)px.y * (size_t)W + (size_t)px.x;
    return px;
  };
  ex.each([&](int tid, typename Acc::State& s) {
    const lull_rk_pix px = pixel(tid);
    if (px.valid)
      Acc::begin(a, &px, set, s);
  });
  /* the offsets in rows dy, then columns dx, G at a time (fewer barriers;
   * each thread still adds them in that order) */
  for (int o0 = 0; o0 < offsets; o0 += G) {
    const int g = LULL_MIN(G, offsets - o0);
    ex.each([&](int tid, typename Acc::State&) {
      for (int j = 0; j < g; ++j)
        lull_rk_terms(a, &t, smem + (size_t)j * per, (o0 + j) % span - R, (o0 + j) / span - R,
                      tid);
    });
    ex.sync();
    ex.each([&](int tid, typename Acc::State&) {
      for (int j = 0; j < g; ++j)
        lull_rk_colsums(a, &t, smem + (size_t)j * per, tid);
    });
    ex.sync();
    ex.each([&](int tid, typename Acc::State& s) {
      const lull_rk_pix px = pixel(tid);
      if (!px.valid)
        return;
      for (int j = 0; j < g; ++j) {
        const int dx = (o0 + j) % span - R, dy = (o0 + j) / span - R;
        const int qx = px.x + dx, qy = px.y + dy;
        if (qx < 0 || qy < 0 || qx >= W || qy >= H)
          continue;
        const float w = lull_rk_weight_at(a, &t, smem + (size_t)j * per, &px, dx, dy, a->k[px.b]);
        if (!(w > 0.0f))
          continue; /* the CPU skips these too */
        const size_t q = (size_t)qy * (size_t)W + (size_t)qx;
        Acc::add(a, &px, set, w, dx, dy, q, s);
      }
    });
  }
  ex.each([&](int tid, typename Acc::State& s) {
    const lull_rk_pix px = pixel(tid);
    if (px.valid)
      Acc::end(a, &px, set, s);
  });
}

/* Floats of a fit's record: 3 n coefficients, 3 lows, 3 highs. */
LULL_BODY int lull_rk_record(int n)
{
  return 3 * n + 6;
}

LULL_BODY float* lull_rk_fit_plane(const lull_rk_tile_args* a, int b, int k)
{
  return a->fits + (size_t)(b * lull_rk_record(a->n) + k) * a->plane_stride;
}

/* FIT: the normal equations of pixel p's window (regression_cpu.c,
 * fit_rows), solved into its record. */
template <int N>
struct lull_rk_fit
{
  enum { NF = N - 3, G = N * (N + 1) / 2 };
  struct State
  {
    float gram[G], rhs[3 * N], lo[3], hi[3];
    float fp[NF > 0 ? NF : 1];
  };
  static LULL_BODY void begin(const lull_rk_tile_args* a, const lull_rk_pix* px, int, State& s)
  {
    LULL_UNROLL
    for (int e = 0; e < G; ++e)
      s.gram[e] = 0.0f;
    LULL_UNROLL
    for (int e = 0; e < 3 * N; ++e)
      s.rhs[e] = 0.0f;
    LULL_UNROLL
    for (int c = 0; c < 3; ++c) {
      s.lo[c] = INFINITY;
      s.hi[c] = -INFINITY;
    }
    LULL_UNROLL
    for (int j = 0; j < NF; ++j)
      s.fp[j] = a->f[j][px->i];
  }
  static LULL_BODY void add(const lull_rk_tile_args* a, const lull_rk_pix*, int, float w, int dx,
                            int dy, size_t j, State& s)
  {
    float fq[NF > 0 ? NF : 1], x[N], y[3];
    LULL_UNROLL
    for (int f = 0; f < NF; ++f)
      fq[f] = LULL_LDG(&a->f[f][j]);
    LULL_UNROLL
    for (int c = 0; c < 3; ++c)
      y[c] = LULL_LDG(&a->y[c][j]);
    lull_reg_row(dx, dy, a->inv_r, s.fp, fq, NF, x);
    lull_reg_accumulate(s.gram, s.rhs, x, N, w, y, 3);
    if (w > LULL_REG_RANGE_WEIGHT) {
      LULL_UNROLL
      for (int c = 0; c < 3; ++c) {
        s.lo[c] = LULL_MIN(s.lo[c], y[c]);
        s.hi[c] = LULL_MAX(s.hi[c], y[c]);
      }
    }
  }
  static LULL_BODY void end(const lull_rk_tile_args* a, const lull_rk_pix* px, int, State& s)
  {
    /* the solve on copies: its loops (with their early exit) need not
     * unroll for the sums to stay in registers during the offsets */
    float gram[G], rhs[3 * N], beta[3 * N];
    LULL_UNROLL
    for (int e = 0; e < G; ++e)
      gram[e] = s.gram[e];
    LULL_UNROLL
    for (int e = 0; e < 3 * N; ++e)
      rhs[e] = s.rhs[e];
    lull_reg_solve(gram, rhs, N, 3, a->ridge, beta);
    LULL_UNROLL
    for (int k = 0; k < 3 * N; ++k)
      lull_rk_fit_plane(a, px->b, k)[px->i] = beta[k];
    LULL_UNROLL
    for (int c = 0; c < 3; ++c) {
      lull_rk_fit_plane(a, px->b, 3 * N + c)[px->i] = s.lo[c];
      lull_rk_fit_plane(a, px->b, 3 * N + 3 + c)[px->i] = s.hi[c];
    }
  }
};

/* GATHER: pixel q's collaborative result, the weighted mean of the
 * predictions of the fits of the centres p = q + d around it, each held
 * in its fit's range (regression_cpu.c, gather_rows).  The weight of the
 * pair is the one computed at q for the offset d (the pair terms are
 * symmetric bit for bit). */
template <int N>
struct lull_rk_gather
{
  enum { NF = N - 3 };
  struct State
  {
    float sum_w, sum[3];
    float fq[NF > 0 ? NF : 1];
  };
  static LULL_BODY void begin(const lull_rk_tile_args* a, const lull_rk_pix* px, int, State& s)
  {
    s.sum_w = 0.0f;
    s.sum[0] = s.sum[1] = s.sum[2] = 0.0f;
    LULL_UNROLL
    for (int j = 0; j < NF; ++j)
      s.fq[j] = a->f[j][px->i];
  }
  static LULL_BODY void add(const lull_rk_tile_args* a, const lull_rk_pix* px, int, float w,
                            int dx, int dy, size_t p, State& s)
  {
    float fp[NF > 0 ? NF : 1], x[N];
    LULL_UNROLL
    for (int f = 0; f < NF; ++f)
      fp[f] = LULL_LDG(&a->f[f][p]);
    lull_reg_row(-dx, -dy, a->inv_r, fp, s.fq, NF, x);
    s.sum_w += w;
    const float* fit = a->fits + (size_t)(px->b * lull_rk_record(N)) * a->plane_stride + p;
    LULL_UNROLL
    for (int c = 0; c < 3; ++c) {
      float beta[N];
      LULL_UNROLL
      for (int k = 0; k < N; ++k)
        beta[k] = LULL_LDG(fit + (size_t)(c * N + k) * a->plane_stride);
      const float lo = LULL_LDG(fit + (size_t)(3 * N + c) * a->plane_stride);
      const float hi = LULL_LDG(fit + (size_t)(3 * N + 3 + c) * a->plane_stride);
      s.sum[c] += w * lull_reg_hold(lull_reg_predict(beta, x, N), lo, hi);
    }
  }
  static LULL_BODY void end(const lull_rk_tile_args* a, const lull_rk_pix* px, int, State& s)
  {
    LULL_UNROLL
    for (int c = 0; c < 3; ++c)
      a->out[px->b][c][px->i] = s.sum[c] / s.sum_w; /* sum_w >= 1: the pixel's own fit */
  }
};

/* SMOOTH: NL-means of set's nc planes (regression_cpu.c, nlm_smooth). */
struct lull_rk_smooth
{
  struct State
  {
    float sum_w, sum[6];
  };
  static LULL_BODY void begin(const lull_rk_tile_args*, const lull_rk_pix*, int, State& s)
  {
    s.sum_w = 0.0f;
    LULL_UNROLL
    for (int c = 0; c < 6; ++c)
      s.sum[c] = 0.0f;
  }
  static LULL_BODY void add(const lull_rk_tile_args* a, const lull_rk_pix*, int set, float w, int,
                            int, size_t j, State& s)
  {
    s.sum_w += w;
    LULL_UNROLL
    for (int c = 0; c < 6; ++c)
      if (c < a->nc)
        s.sum[c] += w * LULL_LDG(&a->set[set].in[c][j]);
  }
  static LULL_BODY void end(const lull_rk_tile_args* a, const lull_rk_pix* px, int set, State& s)
  {
    LULL_UNROLL
    for (int c = 0; c < 6; ++c)
      if (c < a->nc)
        a->set[set].out[c][px->i] = s.sum[c] / s.sum_w;
  }
};

/* -- the GPU side of the tile kernels ------------------------------------------------ */

#if defined(__CUDACC__)
/* One GPU thread as the tile run's executor: its state lives in
 * registers. */
template <class State>
struct lull_rk_gpu_exec
{
  State s;
  int tid;
  template <class F>
  __host__ __device__ __forceinline__ void each(F&& f)
  {
    f(tid, s);
  }
  __host__ __device__ __forceinline__ void sync()
  {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
  }
};

/* A tile kernel's body (the __global__ wrapper's, which picks the launch
 * bounds); dynamic shared memory: lull_rk_tile_smem_floats. */
template <class Acc, int G>
__device__ __forceinline__ void lull_rk_tile_kernel_body(const lull_rk_tile_args* a)
{
  extern __shared__ float lull_rk_smem[];
  lull_rk_gpu_exec<typename Acc::State> ex;
  ex.tid = (int)threadIdx.x;
  lull_rk_tile_run<Acc, G>(a, (int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z, lull_rk_smem, ex);
}
#endif
