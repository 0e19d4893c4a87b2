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

/* Box mean of plane src over the (2r + 1)^2 window's part inside the image,
 * in lull_gd_box_mean's order. */
LULL_BODY float lull_gdk_box_mean_at(const lull_pk_args* a, const float* src, int x, int y, int r)
{
  const int w = a->width, h = a->height;
  const int xa = LULL_MAX(0, x - r), xb = LULL_MIN(w - 1, x + r);
  const int ya = LULL_MAX(0, y - r), yb = LULL_MIN(h - 1, y + r);
  float mean = 0.0f;
  for (int k = ya; k <= yb; ++k) {
    const float* row = src + (size_t)k * (size_t)w;
    float s = 0.0f;
    for (int kx = xa; kx <= xb; ++kx)
      s += row[kx];
    mean += s / (float)(xb - xa + 1);
  }
  return mean * (1.0f / (float)(yb - ya + 1));
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

/* One pass of the post-filter at one pixel (gradient_domain_post.c sums
 * the same terms in the same order, one offset at a time): src the
 * regressed planes, src2 their variance, dst the result, dst2 (when set)
 * its variance; count the window's radius. */
LULL_BODY void lull_gdk_post_at(const lull_pk_args* a, const lull_pk_pixel* px)
{
  const lull_gdk_args* g = &a->gd;
  const int radius = g->count, w = a->width;
  const size_t i = px->i;
  float v[3] = {0.0f, 0.0f, 0.0f};
  for (int c = 0; c < a->channels; ++c)
    v[c] = g->src[c][i];
  lull_gd_llr s;
  lull_gd_llr_centre(&s, a->channels, v);
  /* offsets o of the half-window (dy > 0 or dy = 0 < dx), each then -o:
   * gradient_domain_post.c's order */
  for (int dy = 0; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx) {
      if (dy == 0 && dx <= 0)
        continue;
      const float sx = lull_gd_post_offset(dx, radius), sy = lull_gd_post_offset(dy, radius);
      for (int sign = 1; sign >= -1; sign -= 2) {
        const float wt = lull_gd_pair_weight_at(w, a->height, &g->guide, &g->features,
                                                &g->candidate, LULL_GD_WEIGHT_THRESHOLD,
                                                LULL_GD_POST_NLM, px->x, px->y, sign * dx,
                                                sign * dy);
        if (wt == 0.0f)
          continue; /* adds nothing (the CPU adds exact zeros) */
        const size_t q = (size_t)((ptrdiff_t)i + sign * ((ptrdiff_t)dy * w + dx));
        for (int c = 0; c < a->channels; ++c)
          v[c] = g->src[c][q];
        lull_gd_llr_add(&s, a->channels, wt, (float)sign * sx, (float)sign * sy, v);
      }
    }
  for (int c = 0; c < a->channels; ++c) {
    g->dst[c][i] = lull_gd_llr_estimate(s.m, s.b[c][0], s.b[c][1], s.b[c][2], LULL_GD_POST_RIDGE);
    if (g->dst2[c])
      g->dst2[c][i] = lull_gd_llr_variance(&s, g->src2[c][i]);
  }
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
        g->dst[c][i] = lull_gd_half_variance(g->src[c][i]);
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
              lull_gd_half_variance(g->score_sets[0][c][i] - g->score_sets[1][c][i]);
        }
      }
      break;
    }
    case LULL_PK_GD_POST_SCALE: g->dst[0][i] = lull_gd_post_scale(g->src[0][i]); break;
    case LULL_PK_GD_POST: lull_gdk_post_at(a, px); break;
    default: break;
  }
}
