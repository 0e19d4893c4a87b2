/* The GradientDomain filter's own kernels as host-and-device bodies, one
 * pixel each (included by poisson_kernels.cuh, whose reduction and launch
 * machinery they share).  The formulas are core/gradient_domain_math.h's;
 * the plane operations mirror core/gradient_domain_cpu.c and
 * gradient_domain_patch.c step for step, so the CPU emulation
 * (tests/gpu/gradient_domain_emulation_test.cu) can compare the two.
 *
 * Where the CPU works one patch offset at a time over whole planes (the
 * weights: a distance plane, then a separable box filter), a kernel works
 * one pixel at a time over all offsets, summing in the box filter's order
 * (each row's mean, then the mean of the rows). */
#pragma once

#include "image_access.cuh"

/* Mean of the cols x rows window at d (rows row_stride floats apart) in
 * lull_box_mean's order: each row's mean, then the mean of the rows. */
LULL_BODY float lull_gdk_window_mean(const float* d, size_t row_stride, int cols, int rows)
{
  float mean = 0.0f;
  for (int k = 0; k < rows; ++k) {
    const float* row = d + (size_t)k * row_stride;
    float s = 0.0f;
    for (int kx = 0; kx < cols; ++kx)
      s += row[kx];
    mean += s / (float)cols;
  }
  return mean * (1.0f / (float)rows);
}

/* Box mean of plane src over the (2r + 1)^2 window's part inside the image,
 * in lull_box_mean's order. */
LULL_BODY float lull_gdk_box_mean_at(const lull_pk_args* a, const float* src, int x, int y, int r)
{
  const int w = a->width, h = a->height;
  const int xa = LULL_MAX(0, x - r), xb = LULL_MIN(w - 1, x + r);
  const int ya = LULL_MAX(0, y - r), yb = LULL_MIN(h - 1, y + r);
  return lull_gdk_window_mean(src + (size_t)ya * (size_t)w + (size_t)xa, (size_t)w, xb - xa + 1,
                              yb - ya + 1);
}

/* One feature channel into dst[0] (value) and dst2[0] (variance), as
 * gradient_domain_cpu.c's load_features. */
LULL_BODY void lull_gdk_feature_load_at(const lull_pk_args* a, const lull_pk_pixel* px)
{
  const lull_gdk_args* g = &a->gd;
  float v[4], fv[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  lull_cuda_image_load(&g->feature_image, px->x, px->y, v);
  lull_expand_rgb(v, lull_format_channels(g->feature_image.format));
  if (g->feature_variance.data)
    lull_cuda_image_load(&g->feature_variance, px->x, px->y, fv);
  const float value = v[g->feature_channel];
  const float var = fv[g->variance_channel];
  g->dst[0][px->i] = lull_pk_finite(value) ? value : 0.0f;
  g->dst2[0][px->i] = lull_pk_finite(var) && var > 0.0f ? var : 0.0f;
}

/* V_j of eq. 5.12 from the normalised feature src[0] (central differences)
 * and its variance src2[0], into dst[0]. */
LULL_BODY void lull_gdk_feature_scale_at(const lull_pk_args* a, const lull_pk_pixel* px)
{
  const lull_gdk_args* g = &a->gd;
  const float* value = g->src[0];
  const int w = a->width, h = a->height, x = px->x, y = px->y;
  const int xl = x > 0 ? x - 1 : x, xr = x + 1 < w ? x + 1 : x;
  const int yu = y > 0 ? y - 1 : y, yd = y + 1 < h ? y + 1 : y;
  const size_t row = (size_t)y * (size_t)w;
  const size_t up = (size_t)yu * (size_t)w, down = (size_t)yd * (size_t)w;
  const float gx =
      (value[row + (size_t)xr] - value[row + (size_t)xl]) / (float)LULL_MAX(1, xr - xl);
  const float gy = (value[down + (size_t)x] - value[up + (size_t)x]) / (float)LULL_MAX(1, yd - yu);
  g->dst[0][px->i] = lull_gd_feature_scale(g->src2[0][px->i], gx * gx + gy * gy);
}

/* The patch constraint of the phase's i-th pixel (pixels of one class
 * (x mod 5, y mod 5) write disjoint stencil entries: a patch touches rows
 * and columns y - 2 .. y + 2, x - 2 .. x + 2 only). */
LULL_BODY void lull_gdk_stencil_at(const lull_pk_args* a, size_t i)
{
  const lull_gdk_args* g = &a->gd;
  const int span = 2 * LULL_GD_RADIUS + 1;
  const int cx = g->phase % span, cy = g->phase / span;
  const int cols = (a->width - cx + span - 1) / span, rows = (a->height - cy + span - 1) / span;
  if (cols <= 0 || rows <= 0 || i >= (size_t)cols * (size_t)rows)
    return;
  const int x = cx + span * (int)(i % (size_t)cols), y = cy + span * (int)(i / (size_t)cols);
  lull_gd_patch_constraint(a->width, x, y, g->weights, &g->features, g->stencil, g->plane_stride);
}

/* -- the post-filter, a tile per block --------------------------------------
 *
 * One pass regresses each pixel's (2 LULL_GD_POST_RADIUS + 1)^2 window with
 * the NL-means weights of lull_gd_pair_weight_at, whose 3 x 3 windows
 * average per-pixel distances (lull_gd_pixel_distance).  Evaluated pixel by
 * pixel, every distance was computed by nine threads, one for each window
 * holding it (the two passes took 46 ms each at 1280 x 720 on the H100).
 * Here a block takes a tile of LULL_GDK_POST_TW x LULL_GDK_POST_TH pixels
 * and goes through the offsets in pairs o, -o: one phase computes the
 * distances of the tile and its border of LULL_GD_POST_NLM pixels for both
 * offsets into shared memory, the next lets each thread average its
 * windows from there and add the two taps.  The sums, their order and the
 * order of the taps are those of the pixel-by-pixel evaluation and of
 * gradient_domain_post.c (offsets of the half-window, dy > 0 or dy = 0 <
 * dx, each followed by its negation), so the results are the same.  A
 * thread's regression sums (lull_gd_llr) live in shared memory between
 * phases, as the CPU emulation runs each phase as a call of its own.
 *
 * Shared memory: the sums, LULL_GDK_LLR_FLOATS per thread, then the
 * distances [sign][1 + features][halo]. */
enum
{
  LULL_GDK_POST_TW = 32,
  LULL_GDK_POST_TH = LULL_PK_THREADS / LULL_GDK_POST_TW,
  LULL_GDK_POST_HW = LULL_GDK_POST_TW + 2 * LULL_GD_POST_NLM,   /* halo row */
  LULL_GDK_POST_HALO = LULL_GDK_POST_HW * (LULL_GDK_POST_TH + 2 * LULL_GD_POST_NLM),
  LULL_GDK_LLR_FLOATS = 16, /* lull_gd_llr: m[6], w2, b[3][3] */
};

/* Offset pairs of a window of this radius: its half without the centre. */
LULL_BODY int lull_gdk_post_pairs(int radius)
{
  const int span = 2 * radius + 1;
  return (span * span - 1) / 2;
}

/* Pair j's offset in the half-window's order: dy = 0 < dx first, then
 * rows dy = 1 ... radius with dx = -radius ... radius. */
LULL_BODY void lull_gdk_post_pair(int j, int radius, int* dx, int* dy)
{
  if (j < radius) {
    *dx = j + 1;
    *dy = 0;
    return;
  }
  const int span = 2 * radius + 1;
  *dx = (j - radius) % span - radius;
  *dy = 1 + (j - radius) / span;
}

LULL_BODY int lull_gdk_post_tiles(int width, int height)
{
  return ((width + LULL_GDK_POST_TW - 1) / LULL_GDK_POST_TW) *
         ((height + LULL_GDK_POST_TH - 1) / LULL_GDK_POST_TH);
}

LULL_BODY size_t lull_gdk_post_smem(const lull_pk_args* a)
{
  return ((size_t)LULL_GDK_LLR_FLOATS * LULL_PK_THREADS +
          2 * (size_t)(1 + a->gd.features.count) * LULL_GDK_POST_HALO) *
         sizeof(float);
}

/* the centre pass, the pairs' two phases each, the estimate */
LULL_BODY int lull_gdk_post_phases(const lull_pk_args* a)
{
  return 2 + 2 * lull_gdk_post_pairs(a->gd.count);
}

LULL_BODY void lull_gdk_llr_store(float* acc, int tid, const lull_gd_llr* s)
{
  for (int k = 0; k < 6; ++k)
    acc[k * LULL_PK_THREADS + tid] = s->m[k];
  acc[6 * LULL_PK_THREADS + tid] = s->w2;
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k)
      acc[(7 + 3 * c + k) * LULL_PK_THREADS + tid] = s->b[c][k];
}

LULL_BODY void lull_gdk_llr_load(const float* acc, int tid, lull_gd_llr* s)
{
  for (int k = 0; k < 6; ++k)
    s->m[k] = acc[k * LULL_PK_THREADS + tid];
  s->w2 = acc[6 * LULL_PK_THREADS + tid];
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k)
      s->b[c][k] = acc[(7 + 3 * c + k) * LULL_PK_THREADS + tid];
}

/* The distances of sign 0 (offset o) or 1 (-o) in the block's shared memory. */
LULL_BODY float* lull_gdk_post_sign_block(const lull_pk_args* a, float* dist, int sign)
{
  return dist + (size_t)sign * (size_t)(1 + a->gd.features.count) * LULL_GDK_POST_HALO;
}

/* Phase 1 + 2j: the distances of pair j's offsets o (sign 0) and -o
 * (sign 1) at the tile's pixels and border, where both ends are inside
 * the image (nothing reads the others: the windows keep to such pixels). */
LULL_BODY void lull_gdk_post_distances(const lull_pk_args* a, float* dist, int x0, int y0, int dx,
                                       int dy, int tid)
{
  const lull_gdk_args* g = &a->gd;
  const int w = a->width, h = a->height;
  const float inv_channels = 1.0f / (float)g->guide.channels;
  for (int e = tid; e < 2 * LULL_GDK_POST_HALO; e += LULL_PK_THREADS) {
    const int sign = e >= LULL_GDK_POST_HALO, hi = e - sign * LULL_GDK_POST_HALO;
    const int kx = x0 - LULL_GD_POST_NLM + hi % LULL_GDK_POST_HW;
    const int ky = y0 - LULL_GD_POST_NLM + hi / LULL_GDK_POST_HW;
    const int ox = sign ? -dx : dx, oy = sign ? -dy : dy;
    if (!lull_gd_pair_inside(w, h, kx, ky, ox, oy))
      continue;
    const size_t k = (size_t)ky * (size_t)w + (size_t)kx;
    const ptrdiff_t o = (ptrdiff_t)oy * w + ox;
    float* d = lull_gdk_post_sign_block(a, dist, sign) + hi;
    for (int src = -1; src < g->features.count; ++src)
      d[(size_t)(src + 1) * LULL_GDK_POST_HALO] =
          lull_gd_pixel_distance(&g->guide, &g->features, &g->candidate, inv_channels, src, k, o);
  }
}

/* lull_gd_pair_weight_at of pixel (x, y) and offset (ox, oy) from the
 * distances of the tile at (x0, y0). */
LULL_BODY float lull_gdk_post_weight(const lull_pk_args* a, const float* dist, int x0, int y0,
                                     int x, int y, int ox, int oy)
{
  const lull_gdk_args* g = &a->gd;
  const int r = LULL_GD_POST_NLM;
  int xa, xb, ya, yb;
  if (!lull_gd_pair_window(a->width, a->height, r, x, y, ox, oy, &xa, &xb, &ya, &yb))
    return 0.0f;
  const float* d = dist + (size_t)(ya - y0 + r) * LULL_GDK_POST_HW + (size_t)(xa - x0 + r);
  const int cols = xb - xa + 1, rows = yb - ya + 1;
  const float color = lull_gdk_window_mean(d, LULL_GDK_POST_HW, cols, rows);
  float feature = -INFINITY; /* the largest: eq. 5.13 takes the smallest weight */
  for (int j = 0; j < g->features.count; ++j)
    feature = LULL_MAX(feature, lull_gdk_window_mean(d + (size_t)(j + 1) * LULL_GDK_POST_HALO,
                                                     LULL_GDK_POST_HW, cols, rows));
  return lull_gd_weight(color, feature, g->candidate.beta, LULL_GD_WEIGHT_THRESHOLD);
}

/* One phase of one tile (group) of a post-filter pass: src the regressed
 * planes, src2 their variance, dst the result, dst2 (when set) its
 * variance, count the window's radius. */
LULL_BODY void lull_gdk_post_body(const lull_pk_args* a, unsigned char* smem, int group, int phase,
                                  int tid)
{
  const lull_gdk_args* g = &a->gd;
  const int w = a->width, h = a->height, radius = g->count;
  const int tiles_x = (w + LULL_GDK_POST_TW - 1) / LULL_GDK_POST_TW;
  const int x0 = (group % tiles_x) * LULL_GDK_POST_TW, y0 = (group / tiles_x) * LULL_GDK_POST_TH;
  const int x = x0 + tid % LULL_GDK_POST_TW, y = y0 + tid / LULL_GDK_POST_TW;
  float* acc = (float*)smem;
  float* dist = acc + (size_t)LULL_GDK_LLR_FLOATS * LULL_PK_THREADS;
  const int pairs = lull_gdk_post_pairs(radius);
  const int step = phase - 1, in_pair = phase > 0 && step < 2 * pairs;
  int dx = 0, dy = 0;
  if (in_pair)
    lull_gdk_post_pair(step / 2, radius, &dx, &dy);
  if (in_pair && step % 2 == 0) {
    lull_gdk_post_distances(a, dist, x0, y0, dx, dy, tid);
    return;
  }
  if (x >= w || y >= h)
    return;
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  lull_gd_llr s;
  float v[3] = {0.0f, 0.0f, 0.0f};
  if (phase == 0) {
    for (int c = 0; c < a->channels; ++c)
      v[c] = g->src[c][i];
    lull_gd_llr_centre(&s, a->channels, v);
    lull_gdk_llr_store(acc, tid, &s);
    return;
  }
  lull_gdk_llr_load(acc, tid, &s);
  if (step == 2 * pairs) {
    for (int c = 0; c < a->channels; ++c) {
      g->dst[c][i] = lull_gd_llr_estimate(s.m, s.b[c][0], s.b[c][1], s.b[c][2], LULL_GD_POST_RIDGE);
      if (g->dst2[c])
        g->dst2[c][i] = lull_gd_llr_variance(&s, g->src2[c][i]);
    }
    return;
  }
  const float sx = lull_gd_post_offset(dx, radius), sy = lull_gd_post_offset(dy, radius);
  for (int sign = 0; sign < 2; ++sign) {
    const int ox = sign ? -dx : dx, oy = sign ? -dy : dy;
    const float wt =
        lull_gdk_post_weight(a, lull_gdk_post_sign_block(a, dist, sign), x0, y0, x, y, ox, oy);
    if (wt == 0.0f)
      continue; /* adds nothing (the CPU adds exact zeros) */
    const size_t q = (size_t)((ptrdiff_t)i + (ptrdiff_t)oy * w + ox);
    for (int c = 0; c < a->channels; ++c)
      v[c] = g->src[c][q];
    lull_gd_llr_add(&s, a->channels, wt, sign ? -sx : sx, sign ? -sy : sy, v);
  }
  lull_gdk_llr_store(acc, tid, &s);
}

LULL_BODY void lull_gdk_pixel_body(const lull_pk_args* a, int kind, const lull_pk_pixel* px,
                                   double* sum)
{
  const lull_gdk_args* g = &a->gd;
  const size_t i = px->i;
  switch (kind) {
    case LULL_PK_GD_AXPY:
      for (int c = 0; c < a->channels; ++c)
        g->dst[c][i] = g->src2[c] ? g->src[c][i] + LULL_MUL_RN(g->f, g->src2[c][i]) : g->src[c][i];
      break;
    case LULL_PK_GD_ZERO:
      for (int k = 0; k < g->count; ++k)
        g->dst[0][(size_t)k * g->plane_stride + i] = 0.0f;
      break;
    case LULL_PK_GD_GRADIENTS:
      /* the second pass's gradients (gradient_domain_cpu.c, second_pass) */
      for (int c = 0; c < a->channels; ++c) {
        const float* x = g->src[c];
        g->dst[c][i] = px->x + 1 < a->width ? x[i + 1] - x[i] : 0.0f;
        g->dst2[c][i] = px->y + 1 < a->height ? x[i + (size_t)a->width] - x[i] : 0.0f;
      }
      break;
    case LULL_PK_GD_HALF_VARIANCE:
      for (int c = 0; c < a->channels; ++c) {
        g->dst[c][i] = lull_two_buffer_variance(g->src[c][i]);
      }
      break;
    case LULL_PK_GD_BOX_MEAN:
      for (int c = 0; c < a->channels; ++c)
        g->dst[c][i] = lull_gdk_box_mean_at(a, g->src[c], px->x, px->y, g->count);
      break;
    case LULL_PK_GD_MAX:
      for (int c = 0; c < a->channels; ++c)
        g->dst[c][i] = LULL_MAX(g->dst[c][i], g->src[c][i]);
      break;
    case LULL_PK_GD_FEATURE_LOAD: lull_gdk_feature_load_at(a, px); break;
    case LULL_PK_GD_FEATURE_RANGE: {
      const double v = g->src[0][i];
      sum[0] = sum[0] > -v ? sum[0] : -v;
      sum[1] = sum[1] > v ? sum[1] : v;
      break;
    }
    case LULL_PK_GD_FEATURE_NORMALIZE: {
      const lull_pk_state* st = a->buf.state;
      const float inv = st->range_inv;
      g->dst[0][i] = (g->dst[0][i] - st->range_lo) * inv;
      g->dst2[0][i] *= inv * inv;
      break;
    }
    case LULL_PK_GD_FEATURE_SCALE: lull_gdk_feature_scale_at(a, px); break;
    case LULL_PK_GD_WEIGHTS:
      for (int k = 0; k < LULL_GD_PATCH; ++k)
        g->weights[k][i] = lull_gd_patch_weight_at(a->width, a->height, &g->guide, &g->features,
                                                   &g->candidate, LULL_GD_WEIGHT_THRESHOLD,
                                                   LULL_GD_NLM_RADIUS, px->x, px->y, k);
      break;
    case LULL_PK_GD_STENCIL: lull_gdk_stencil_at(a, i); break;
    case LULL_PK_GD_SCORE: {
      /* gradient_domain_cpu.c, candidate_score */
      const float s = lull_gd_pixel_error(g->score_sets, g->guide_value, a->channels, i);
      /* first: the estimate into dst[0]; else its difference D to the
       * first candidate's (src[0]) into dst[0], D^2 into dst2[0] */
      if (g->first) {
        g->dst[0][i] = s;
      } else {
        const float d = s - g->src[0][i];
        g->dst[0][i] = d;
        g->dst2[0][i] = d * d;
      }
      break;
    }
    case LULL_PK_GD_KEEP_BEST: {
      /* src[0], src[1] the window means of D and D^2, dst[0] the best
       * score so far (the first candidate's is 0); src2 the candidate,
       * dst2 the best result */
      const float score = lull_gd_choice_at(g->first, g->src[0][i], g->src[1][i], px->x, px->y,
                                            a->width, a->height);
      if (g->first || score < g->dst[0][i]) {
        g->dst[0][i] = score;
        for (int c = 0; c < a->channels; ++c) {
          g->dst2[c][i] = g->src2[c][i];
          g->best_var[c][i] =
              lull_two_buffer_variance(g->score_sets[0][c][i] - g->score_sets[1][c][i]);
        }
      }
      break;
    }
    case LULL_PK_GD_POST_SCALE: g->dst[0][i] = lull_gd_post_scale(g->src[0][i]); break;
    default: break;
  }
}
