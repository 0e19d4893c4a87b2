/* The Poisson filter's kernels as host-and-device bodies (kernel_body.cuh):
 * the CG sweeps, IRLS weights, input and output, and the reductions that
 * drive the solver's state (poisson_cuda.h).  Per-pixel formulas come from
 * core/poisson_math.h; the DCT kernels are in dct_cuda.cuh.
 *
 * A CG iteration is two sweeps (the CPU's three, poisson_cg.c, with the
 * direction update folded into the next operator): APPLY forms the new
 * direction p' = z - mu + beta p at the pixel and its four neighbours (z =
 * r / diag recomputed where it is needed; mu the deflation's constant),
 * writes p' and A p', and sums p'.Ap'; UPDATE moves x and r and sums r.z,
 * r.r and wa z.  With the DCT preconditioner z is a plane that the DCT
 * kernels write between UPDATE and PRECOND_SUMS.  A solve starts with INIT
 * (r = b - A x; deflated, the sums of the constant's solve, and START moves
 * x and r by it; poisson_cg.c, cg_solve).
 *
 * A reduction kernel runs 20 phases: the pixels (grid-stride) into one
 * double per thread and value; a tree over the block; the block's sums to
 * `partials`; the last block to arrive sums the partials in block order
 * and updates the state (the CPU solver's scalar logic, cg_solve). */
#pragma once

#include "dct_cuda.cuh"
#include "image_access.cuh"

enum
{
  LULL_PK_TREE_PHASES = 8, /* log2(LULL_PK_THREADS) */
  LULL_PK_REDUCE_PHASES = 2 * LULL_PK_TREE_PHASES + 4,
};

/* a * b + c, rounded once on both sides (the host emulation equals the GPU). */
LULL_BODY float lull_pk_fma(float a, float b, float c)
{
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return fmaf(a, b, c);
#endif
}

LULL_BODY int lull_pk_finite(float v)
{
  return (v - v) == 0.0f;
}

/* The kernels that end in a reduction, and how many values they sum. */
LULL_BODY int lull_pk_sums(const lull_pk_args* a, int kind)
{
  switch (kind) {
    case LULL_PK_CG_INIT: return a->deflate ? 7 : a->precond == LULL_POISSON_PRECOND_DCT ? 3 : 9;
    case LULL_PK_CG_START: return a->precond == LULL_POISSON_PRECOND_DCT ? 0 : 12;
    case LULL_PK_CG_APPLY: return 3;
    case LULL_PK_CG_UPDATE: return a->reduce ? 6 : 0;
    case LULL_PK_CG_UPDATE_DEFLATED: return a->reduce ? 12 : 0;
    case LULL_PK_PRECOND_SUMS: return a->deflate ? 12 : 6;
    case LULL_PK_REWEIGHT: return 1;
    case LULL_PK_MEAN_WEIGHTS: return 2;
    case LULL_PK_PRIMAL_MEAN: return 3;
    case LULL_PK_MEAN_OFFSET: return 3;
    case LULL_PK_GD_FEATURE_RANGE: return 2;
    default: return 0;
  }
}

/* How a reduction combines two values: sums, except the feature range's
 * maxima (of -v and v), which start at -infinity. */
LULL_BODY double lull_pk_combine(int kind, double x, double y)
{
  return kind == LULL_PK_GD_FEATURE_RANGE ? (x > y ? x : y) : x + y;
}

LULL_BODY double lull_pk_identity(int kind)
{
  return kind == LULL_PK_GD_FEATURE_RANGE ? -(double)INFINITY : 0.0;
}

/* Neighbour indices of pixel i; an absent neighbour is the pixel itself
 * (with weight 0, as the CPU's rows). */
typedef struct lull_pk_pixel
{
  int x, y;
  size_t i, left, right, up, down;
} lull_pk_pixel;

LULL_BODY lull_pk_pixel lull_pk_pixel_at(const lull_pk_args* a, size_t i)
{
  lull_pk_pixel px;
  const size_t w = (size_t)a->width;
  px.i = i;
  /* 32-bit division where it suffices (a 64-bit one is a long sequence) */
  px.y = i <= 0xffffffffu ? (int)((unsigned)i / (unsigned)a->width) : (int)(i / w);
  px.x = (int)(i - (size_t)px.y * w);
  px.left = px.x > 0 ? i - 1 : i;
  px.right = px.x + 1 < a->width ? i + 1 : i;
  px.up = px.y > 0 ? i - w : i;
  px.down = px.y + 1 < a->height ? i + w : i;
  return px;
}

/* The weights of pixel i's rows: data, left, right, up, down edges. */
typedef struct lull_pk_weights
{
  float wa, wx_left, wx, wy_up, wy;
} lull_pk_weights;

LULL_BODY lull_pk_weights lull_pk_weights_at(const lull_pk_args* a, const lull_pk_pixel* px)
{
  lull_pk_weights k;
  k.wa = a->buf.wa[px->i];
  k.wx = a->buf.wx[px->i];
  k.wy = a->buf.wy[px->i];
  k.wx_left = px->x > 0 ? a->buf.wx[px->left] : 0.0f;
  k.wy_up = px->y > 0 ? a->buf.wy[px->up] : 0.0f;
  return k;
}

LULL_BODY float lull_pk_apply(const lull_pk_args* a, const lull_pk_weights* k, const float* v,
                              const lull_pk_pixel* px)
{
  return lull_poisson_apply(a->alpha2, k->wa, v[px->i], k->wx_left, v[px->left], k->wx,
                            v[px->right], k->wy_up, v[px->up], k->wy, v[px->down]);
}

/* z = M^-1 r at pixel j. */
LULL_BODY float lull_pk_precondition(const lull_pk_args* a, int c, size_t j)
{
  const float r = a->buf.r[c][j];
  if (a->precond == LULL_POISSON_PRECOND_JACOBI)
    return r * a->buf.inv_diag[j];
  if (a->precond == LULL_POISSON_PRECOND_DCT)
    return a->buf.z[c][j];
  return r;
}

/* Direction plane p[which][c] (constant indices into the argument block). */
LULL_BODY float* lull_pk_p(const lull_pk_args* a, int which, int c)
{
  return which ? a->buf.p[1][c] : a->buf.p[0][c];
}

/* The new direction at pixel j: z - mu, or z - mu + beta p (cg_solve's p
 * update, lull_cg_direction rounded once). */
LULL_BODY float lull_pk_direction(const lull_pk_args* a, const lull_pk_state* st, int c, size_t j)
{
  const float z = lull_pk_precondition(a, c, j) - st->mu[c];
  return st->fresh ? z : lull_pk_fma(st->beta[c], lull_pk_p(a, a->cur, c)[j], z);
}

/* Adds the patch stencil's (K v)_i (poisson_math.h, lull_stencil_offset)
 * to out[c] for the channels in `use`, in the CPU's order (poisson_cg.c,
 * stencil_row): the centre, then each tap forward and mirrored.  Each
 * coefficient is loaded once for all channels. */
LULL_BODY void lull_pk_stencil_add(const lull_pk_args* a, const lull_pk_pixel* px,
                                   const float* const v[3], const int use[3], float out[3])
{
  const float* k = a->stencil;
  const size_t s = a->stencil_stride, i = px->i, w = (size_t)a->width;
  const float c0 = k[i];
  LULL_UNROLL for (int c = 0; c < 3; ++c)
    if (use[c])
      out[c] += c0 * v[c][i];
  for (int t = 1; t < LULL_STENCIL_TAPS; ++t) {
    int dx, dy;
    lull_stencil_offset(t, &dx, &dy);
    const ptrdiff_t o = (ptrdiff_t)dy * (ptrdiff_t)w + dx;
    const float* plane = k + (size_t)t * s;
    if (px->y + dy < a->height && px->x + dx >= 0 && px->x + dx < a->width) {
      const float cf = plane[i];
      LULL_UNROLL for (int c = 0; c < 3; ++c)
        if (use[c])
          out[c] += cf * v[c][i + o];
    }
    if (px->y - dy >= 0 && px->x - dx >= 0 && px->x - dx < a->width) {
      const float cb = plane[i - o];
      LULL_UNROLL for (int c = 0; c < 3; ++c)
        if (use[c])
          out[c] += cb * v[c][i - o];
    }
  }
}

/* -- phase 0 of each kernel: one pixel ---------------------------------------- */

LULL_BODY void lull_pk_cg_init_at(const lull_pk_args* a, const lull_pk_pixel* px, double* sum)
{
  const lull_pk_weights k = lull_pk_weights_at(a, px);
  const size_t i = px->i;
  if (a->precond == LULL_POISSON_PRECOND_JACOBI) {
    float d = lull_poisson_diagonal(a->alpha2, k.wa, k.wx_left, k.wx, k.wy_up, k.wy);
    if (a->stencil)
      d += a->stencil[i];
    a->buf.inv_diag[i] = d > 0.0f ? 1.0f / d : 0.0f;
  }
  float ax[3] = {0.0f, 0.0f, 0.0f};
  int use[3] = {0, 0, 0};
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= a->channels)
      break;
    use[c] = 1;
    ax[c] = lull_pk_apply(a, &k, a->x[c], px);
  }
  if (a->stencil) {
    const float* const x[3] = {a->x[0], a->x[1], a->x[2]};
    lull_pk_stencil_add(a, px, x, use, ax);
  }
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= a->channels)
      break;
    const float* gx = a->gx[c];
    const float* gy = a->gy[c];
    const float rhs = lull_poisson_rhs(a->alpha2, k.wa, a->primal[c][i], k.wx_left,
                                       px->x > 0 ? gx[px->left] : 0.0f, k.wx, gx[i], k.wy_up,
                                       gy[px->up], k.wy, gy[i]);
    const float r = rhs - ax[c];
    a->buf.r[c][i] = r;
    sum[c] += (double)rhs * rhs;
    if (a->deflate) {
      sum[3 + c] += (double)k.wa * ((double)a->primal[c][i] - (double)a->x[c][i]);
    } else if (a->precond != LULL_POISSON_PRECOND_DCT) {
      const float z = lull_pk_precondition(a, c, i);
      sum[3 + c] += (double)r * z;
      sum[6 + c] += (double)r * r;
    }
  }
  if (a->deflate)
    sum[6] += k.wa;
}

/* START: x += the constant's solve c, r -= c A 1 = c alpha^2 wa; without
 * the DCT preconditioner also the first r.z, r.r and wa z. */
LULL_BODY void lull_pk_cg_start_at(const lull_pk_args* a, const lull_pk_state* st, size_t i,
                                   double* sum)
{
  const float wa = a->buf.wa[i];
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= a->channels)
      break;
    const float shift = st->shift[c];
    a->x[c][i] += shift;
    const float r = lull_pk_fma(-(shift * a->alpha2), wa, a->buf.r[c][i]);
    a->buf.r[c][i] = r;
    if (a->precond != LULL_POISSON_PRECOND_DCT) {
      const float z = lull_pk_precondition(a, c, i);
      sum[c] += (double)r * z;
      sum[3 + c] += (double)r * r;
      sum[6 + c] += (double)wa * z;
      sum[9 + c] += r;
    }
  }
}

LULL_BODY void lull_pk_cg_apply_at(const lull_pk_args* a, const lull_pk_state* st,
                                   const lull_pk_pixel* px, double* sum)
{
  const lull_pk_weights k = lull_pk_weights_at(a, px);
  if (a->stencil) {
    /* a 9x9 operator: the new directions were written by CG_DIRECTION
     * (recomputing them at 81 neighbours would cost more than the pass) */
    float ap[3] = {0.0f, 0.0f, 0.0f};
    int use[3] = {0, 0, 0};
    const float* p[3] = {lull_pk_p(a, a->cur ^ 1, 0), lull_pk_p(a, a->cur ^ 1, 1),
                         lull_pk_p(a, a->cur ^ 1, 2)};
    LULL_UNROLL for (int c = 0; c < 3; ++c) {
      if (c >= a->channels || !st->active[c])
        continue;
      use[c] = 1;
      ap[c] = lull_pk_apply(a, &k, p[c], px);
    }
    lull_pk_stencil_add(a, px, p, use, ap);
    LULL_UNROLL for (int c = 0; c < 3; ++c) {
      if (!use[c])
        continue;
      a->buf.ap[c][px->i] = ap[c];
      sum[c] += (double)p[c][px->i] * (double)ap[c];
    }
    return;
  }
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= a->channels)
      break;
    if (!st->active[c])
      continue;
    const float pc = lull_pk_direction(a, st, c, px->i);
    const float ap = lull_poisson_apply(
        a->alpha2, k.wa, pc, k.wx_left, lull_pk_direction(a, st, c, px->left), k.wx,
        lull_pk_direction(a, st, c, px->right), k.wy_up, lull_pk_direction(a, st, c, px->up),
        k.wy, lull_pk_direction(a, st, c, px->down));
    lull_pk_p(a, a->cur ^ 1, c)[px->i] = pc;
    a->buf.ap[c][px->i] = ap;
    sum[c] += (double)pc * (double)ap;
  }
}

/* UPDATE for `count` pixels (1 or 2; at[0] first): x += step p', r -= step
 * Ap', and the sums r.z and r.r, and wa z when deflated (a constant:
 * a kernel of its own, UPDATE_DEFLATED, whose registers spill).  Every load of all the pixels is issued
 * before the first store: a store to x or r could alias the next pixel's
 * loads for all the compiler knows, so pixel by pixel a thread keeps one
 * pixel's loads in flight.  Each sum takes the pixels in order. */
LULL_BODY void lull_pk_cg_update_pixels(const lull_pk_args* a, const lull_pk_state* st,
                                        const size_t* at, int count, int deflated, double* sum)
{
  /* zeroed only to keep the compiler's may-be-uninitialised analysis quiet:
   * an entry is read only where it was loaded */
  float x[3][2] = {{0.0f}}, p[3][2] = {{0.0f}}, ap[3][2] = {{0.0f}}, r[3][2] = {{0.0f}};
  float inv_diag[2] = {0.0f, 0.0f}, wa[2] = {0.0f, 0.0f};
  const int jacobi = a->reduce && a->precond == LULL_POISSON_PRECOND_JACOBI;
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= a->channels || !st->active[c])
      continue;
    const float* pc = lull_pk_p(a, a->cur ^ 1, c);
    LULL_UNROLL for (int k = 0; k < 2; ++k) {
      if (k >= count)
        break;
      x[c][k] = a->x[c][at[k]];
      p[c][k] = pc[at[k]];
      ap[c][k] = a->buf.ap[c][at[k]];
      r[c][k] = a->buf.r[c][at[k]];
    }
  }
  LULL_UNROLL for (int k = 0; k < 2; ++k)
    if (k < count && a->reduce) {
      if (deflated)
        wa[k] = a->buf.wa[at[k]];
      if (jacobi)
        inv_diag[k] = a->buf.inv_diag[at[k]];
    }
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= a->channels || !st->active[c])
      continue;
    const float step = st->step[c];
    LULL_UNROLL for (int k = 0; k < 2; ++k) {
      if (k >= count)
        break;
      a->x[c][at[k]] = lull_pk_fma(step, p[c][k], x[c][k]);
      const float rn = lull_pk_fma(-step, ap[c][k], r[c][k]);
      a->buf.r[c][at[k]] = rn;
      if (a->reduce) {
        /* z = M^-1 r of lull_pk_precondition, from the stored r */
        const float z = jacobi ? rn * inv_diag[k] : lull_pk_precondition(a, c, at[k]);
        sum[c] += (double)rn * z;
        sum[3 + c] += (double)rn * rn;
        if (deflated)
        if (deflated) {
          sum[6 + c] += (double)wa[k] * z;
          sum[9 + c] += rn;
        }
      }
    }
  }
}

LULL_BODY void lull_pk_precond_sums_at(const lull_pk_args* a, const lull_pk_state* st, size_t i,
                                       double* sum)
{
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= a->channels)
      break;
    if (!a->initial && !st->active[c])
      continue;
    const float r = a->buf.r[c][i], z = a->buf.z[c][i];
    sum[c] += (double)r * z;
    sum[3 + c] += (double)r * r;
    if (a->deflate) {
      sum[6 + c] += (double)a->buf.wa[i] * z;
      sum[9 + c] += r;
    }
  }
}

/* RGB lengths of the data, x-edge and y-edge residuals of pixel px at x
 * (poisson_cg.c, residuals_at) and the IRLS weights from them. */
LULL_BODY void lull_pk_reweight_at(const lull_pk_args* a, const lull_pk_pixel* px, double* sum)
{
  const size_t i = px->i;
  const int has_ex = px->x + 1 < a->width, has_ey = px->y + 1 < a->height;
  const float alpha = sqrtf(a->alpha2);
  float d2 = 0.0f, x2 = 0.0f, y2 = 0.0f;
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= a->channels)
      break;
    const float* x = a->x[c];
    const float d = alpha * (x[i] - a->primal[c][i]);
    d2 = lull_pk_fma(d, d, d2);
    if (has_ex) {
      const float e = x[px->right] - x[i] - a->gx[c][i];
      x2 = lull_pk_fma(e, e, x2);
    }
    if (has_ey) {
      const float e = x[px->down] - x[i] - a->gy[c][i];
      y2 = lull_pk_fma(e, e, y2);
    }
  }
  const int use_data = a->alpha2 > 0.0f;
  const float wa = use_data ? lull_irls_weight(sqrtf(d2), a->eps, a->power) : 1.0f;
  const float wx = has_ex ? lull_irls_weight(sqrtf(x2), a->eps, a->power) : 0.0f;
  const float wy = has_ey ? lull_irls_weight(sqrtf(y2), a->eps, a->power) : 0.0f;
  a->buf.wa[i] = wa;
  a->buf.wx[i] = wx;
  a->buf.wy[i] = wy;
  sum[0] += (use_data ? (double)wa : 0.0) + wx + wy;
}

/* The primal of the set: the set's image, or the mean of the halves
 * (poisson_input.c, load_pixel). */
LULL_BODY void lull_pk_load_pixel(const lull_image* full, const lull_image* a,
                                  const lull_image* b, int x, int y, float out[4])
{
  if (full->data) {
    lull_cuda_image_load(full, x, y, out);
    return;
  }
  float va[4], vb[4];
  lull_cuda_image_load(a, x, y, va);
  lull_cuda_image_load(b, x, y, vb);
  for (int c = 0; c < 4; ++c)
    out[c] = lull_poisson_half_mean(va[c], vb[c]);
}

LULL_BODY void lull_pk_load_at(const lull_pk_args* a, const lull_pk_pixel* px)
{
  float v[4], vx[4], vy[4];
  lull_pk_load_pixel(&a->color, &a->half_color[0], &a->half_color[1], px->x, px->y, v);
  lull_pk_load_pixel(&a->gradient_x, &a->half_gx[0], &a->half_gx[1], px->x, px->y, vx);
  lull_pk_load_pixel(&a->gradient_y, &a->half_gy[0], &a->half_gy[1], px->x, px->y, vy);
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= a->channels)
      break;
    /* Inf counts as missing too: NaN marks the pixel for the repair */
    a->buf.r[c][px->i] = lull_pk_finite(v[c]) ? v[c] : NAN;
    a->buf.gx[c][px->i] = lull_pk_finite(vx[c]) ? vx[c] : 0.0f;
    a->buf.gy[c][px->i] = lull_pk_finite(vy[c]) ? vy[c] : 0.0f;
  }
  if (a->load_alpha)
    a->buf.alpha[px->i] = v[3];
}

/* A NaN primal value becomes the mean of the finite values in its 5x5
 * neighbourhood, 0 without any (poisson_input.c, repair_plane). */
LULL_BODY void lull_pk_repair_at(const lull_pk_args* a, const lull_pk_pixel* px)
{
  const int w = a->width, h = a->height;
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= a->channels)
      break;
    const float* raw = a->buf.r[c];
    float v = raw[px->i];
    if (v != v) {
      double sum = 0.0;
      int count = 0;
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx) {
          const int xx = px->x + dx, yy = px->y + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h)
            continue;
          const float u = raw[(size_t)yy * (size_t)w + (size_t)xx];
          if (u == u) {
            sum += u;
            ++count;
          }
        }
      v = count ? (float)(sum / count) : 0.0f;
    }
    a->repaired[c][px->i] = v;
    a->x[c][px->i] = v;
  }
}

LULL_BODY void lull_pk_store_at(const lull_pk_args* a, const lull_pk_pixel* px)
{
  const size_t i = px->i;
  const int nc = a->channels;
  float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  LULL_UNROLL for (int c = 0; c < 3; ++c)
    if (c < nc)
      v[c] = a->buf.x[c][i];
  const int out_channels = lull_format_channels(a->output.format);
  if (out_channels == 4 && a->alpha)
    v[3] = a->alpha[i];
  lull_cuda_image_store_n(&a->output, px->x, px->y, v, out_channels);
  if (!a->output_variance.data)
    return;
  /* the two-buffer variance of the mean (§3.2.5; poisson_input.c) */
  float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  float total = 0.0f;
  LULL_UNROLL for (int c = 0; c < 3; ++c) {
    if (c >= nc)
      break;
    s[c] = lull_poisson_two_buffer_variance(a->buf.xa[c][i], a->buf.xb[c][i]);
    total += s[c] / (float)nc; /* divided first: three FLT_MAX stay finite */
  }
  const int vc = lull_format_channels(a->output_variance.format);
  if (vc == 1)
    s[0] = total;
  lull_cuda_image_store_n(&a->output_variance, px->x, px->y, s, vc);
}

#include "gradient_domain_kernels.cuh"

/* One pixel of a kernel without a reduction, or the per-pixel part of one
 * with (sum: LULL_PK_MAX_SUMS values). */
LULL_BODY void lull_pk_pixel_body(const lull_pk_args* a, int kind, size_t i, double* sum)
{
  const lull_pk_state* st = a->buf.state;
  const lull_pk_pixel px = lull_pk_pixel_at(a, i);
  switch (kind) {
    case LULL_PK_LOAD: lull_pk_load_at(a, &px); break;
    case LULL_PK_REPAIR: lull_pk_repair_at(a, &px); break;
    case LULL_PK_WEIGHTS_RESET:
      a->buf.wa[i] = 1.0f;
      a->buf.wx[i] = px.x + 1 < a->width ? 1.0f : 0.0f;
      a->buf.wy[i] = px.y + 1 < a->height ? 1.0f : 0.0f;
      break;
    case LULL_PK_CG_INIT: lull_pk_cg_init_at(a, &px, sum); break;
    case LULL_PK_CG_START: lull_pk_cg_start_at(a, st, i, sum); break;
    case LULL_PK_CG_APPLY: lull_pk_cg_apply_at(a, st, &px, sum); break;
    case LULL_PK_CG_UPDATE: lull_pk_cg_update_pixels(a, st, &i, 1, 0, sum); break;
    case LULL_PK_CG_UPDATE_DEFLATED: lull_pk_cg_update_pixels(a, st, &i, 1, 1, sum); break;
    case LULL_PK_PRECOND_SUMS: lull_pk_precond_sums_at(a, st, i, sum); break;
    case LULL_PK_REWEIGHT: lull_pk_reweight_at(a, &px, sum); break;
    case LULL_PK_SCALE_WEIGHTS:
      if (st->scale_valid) {
        if (a->alpha2 > 0.0f)
          a->buf.wa[i] *= st->scale;
        a->buf.wx[i] *= st->scale;
        a->buf.wy[i] *= st->scale;
      }
      break;
    case LULL_PK_MEAN_WEIGHTS:
      sum[0] += a->buf.wa[i];
      sum[1] += (double)a->buf.wx[i] + a->buf.wy[i];
      break;
    case LULL_PK_PRIMAL_MEAN:
      LULL_UNROLL for (int c = 0; c < 3; ++c)
        if (c < a->channels)
          sum[c] += a->primal[c][i];
      break;
    case LULL_PK_FINITE_OR:
      LULL_UNROLL for (int c = 0; c < 3; ++c)
        if (c < a->channels && !lull_pk_finite(a->x[c][i]))
          a->x[c][i] = a->primal[c][i];
      break;
    case LULL_PK_MEAN_OFFSET:
      LULL_UNROLL for (int c = 0; c < 3; ++c)
        if (c < a->channels)
          sum[c] += (double)a->primal[c][i] - (double)a->x[c][i];
      break;
    case LULL_PK_SHIFT:
      LULL_UNROLL for (int c = 0; c < 3; ++c)
        if (c < a->channels)
          a->x[c][i] += st->offset[c];
      break;
    case LULL_PK_STORE: lull_pk_store_at(a, &px); break;
    case LULL_PK_CG_DIRECTION:
      LULL_UNROLL for (int c = 0; c < 3; ++c)
        if (c < a->channels && st->active[c])
          lull_pk_p(a, a->cur ^ 1, c)[i] = lull_pk_direction(a, st, c, i);
      break;
    default: lull_gdk_pixel_body(a, kind, &px, sum); break;
  }
}

/* Whether a kernel has pixel work at all (a converged solve skips it). */
LULL_BODY int lull_pk_idle(const lull_pk_args* a, int kind)
{
  const lull_pk_state* st = a->buf.state;
  const int any = st->active[0] || st->active[1] || st->active[2];
  return (kind == LULL_PK_CG_APPLY || kind == LULL_PK_CG_UPDATE ||
          kind == LULL_PK_CG_UPDATE_DEFLATED || kind == LULL_PK_CG_DIRECTION ||
          (kind == LULL_PK_PRECOND_SUMS && !a->initial)) && !any;
}

/* -- the state updates of the last block (cg_solve's scalar logic) ----------- */

/* The deflation's constants mu from the sums of wa z (total 6..8), and r.z
 * (total 0..2) made r.(z - mu) with the sums of r (9..11), before the
 * state takes it (poisson_cg.c, cg_solve). */
LULL_BODY void lull_pk_deflation(const lull_pk_args* a, lull_pk_state* st, double* total)
{
  for (int c = 0; c < a->channels; ++c) {
    st->mu[c] = lull_cg_deflation(total[6 + c], st->wsum);
    total[c] = lull_cg_deflated_rz(total[c], st->mu[c], total[9 + c]);
  }
}

/* After the first preconditioning of a solve: which channels start. */
LULL_BODY void lull_pk_start(const lull_pk_args* a, lull_pk_state* st, const double* rz,
                             const double* rr)
{
  for (int c = 0; c < 3; ++c) {
    const int used = c < a->channels;
    st->rz[c] = used ? rz[c] : 0.0;
    st->rr[c] = used ? rr[c] : 0.0;
    st->active[c] = used && lull_cg_continues(st->rr[c], st->rz[c], st->rhs2[c], a->tolerance);
  }
  st->fresh = 1;
}

/* After a preconditioning inside the loop: stop or take beta. */
LULL_BODY void lull_pk_continue(const lull_pk_args* a, lull_pk_state* st, const double* rz,
                                const double* rr)
{
  for (int c = 0; c < a->channels; ++c) {
    if (!st->active[c])
      continue;
    st->rr[c] = rr[c];
    if (!lull_cg_continues(rr[c], rz[c], st->rhs2[c], a->tolerance)) {
      st->active[c] = 0;
      continue;
    }
    st->beta[c] = (float)(rz[c] / st->rz[c]);
    st->rz[c] = rz[c];
  }
  st->fresh = 0;
}

LULL_BODY void lull_pk_finalize(const lull_pk_args* a, int kind, double* total)
{
  lull_pk_state* st = a->buf.state;
  const double n = (double)a->width * (double)a->height;
  switch (kind) {
    case LULL_PK_CG_INIT:
      st->wsum = a->deflate ? total[6] : 0.0; /* 0: nothing deflated */
      for (int c = 0; c < 3; ++c) {
        st->rhs2[c] = c < a->channels ? total[c] : 0.0;
        st->shift[c] = c < a->channels && a->deflate
                           ? lull_cg_constant(total[3 + c], st->wsum, a->alpha2)
                           : 0.0f;
        st->mu[c] = 0.0f;
      }
      if (!a->deflate && a->precond != LULL_POISSON_PRECOND_DCT)
        lull_pk_start(a, st, total + 3, total + 6);
      break;
    case LULL_PK_CG_START:
      lull_pk_deflation(a, st, total);
      lull_pk_start(a, st, total, total + 3);
      break;
    case LULL_PK_CG_APPLY:
      if (st->active[0] || st->active[1] || st->active[2])
        ++st->iterations;
      for (int c = 0; c < a->channels; ++c) {
        if (st->active[c] && total[c] > 0.0 && (total[c] - total[c]) == 0.0)
          st->step[c] = (float)(st->rz[c] / total[c]);
        else
          st->active[c] = 0;
      }
      break;
    case LULL_PK_CG_UPDATE: lull_pk_continue(a, st, total, total + 3); break;
    case LULL_PK_CG_UPDATE_DEFLATED:
      lull_pk_deflation(a, st, total);
      lull_pk_continue(a, st, total, total + 3);
      break;
    case LULL_PK_PRECOND_SUMS:
      if (a->deflate)
        lull_pk_deflation(a, st, total);
      if (a->initial)
        lull_pk_start(a, st, total, total + 3);
      else
        lull_pk_continue(a, st, total, total + 3);
      break;
    case LULL_PK_REWEIGHT:
      st->scale_valid = total[0] > 0.0 && a->rows > 0.0;
      st->scale = st->scale_valid ? (float)(a->rows / total[0]) : 1.0f;
      break;
    case LULL_PK_MEAN_WEIGHTS: {
      const double edges = (double)(a->width - 1) * a->height + (double)a->width * (a->height - 1);
      st->dct_a = (float)(a->alpha2 * total[0] / n);
      st->dct_c = edges > 0.0 ? (float)(total[1] / edges) : 0.0f;
      break;
    }
    case LULL_PK_PRIMAL_MEAN:
      for (int c = 0; c < a->channels; ++c)
        st->mean[c] = (float)(total[c] / n);
      break;
    case LULL_PK_MEAN_OFFSET:
      for (int c = 0; c < a->channels; ++c)
        st->offset[c] = (float)(total[c] / n);
      break;
    case LULL_PK_GD_FEATURE_RANGE: {
      /* gradient_domain_cpu.c, load_features: the range, 1 when flat */
      const float lo = (float)-total[0], hi = (float)total[1];
      const float range = hi > lo ? hi - lo : 1.0f;
      st->range_lo = lo;
      st->range_inv = 1.0f / range;
      break;
    }
    default: break;
  }
}

/* The block's arrival: 1 for the last block of the grid. */
LULL_BODY int lull_pk_arrive(unsigned int* counter, unsigned int blocks)
{
#if defined(__CUDA_ARCH__)
  __threadfence(); /* the block's partials are visible before it counts */
  return atomicAdd(counter, 1u) == blocks - 1;
#else
  return (*counter)++ == blocks - 1;
#endif
}

LULL_BODY double lull_pk_read_partial(const double* p)
{
#if defined(__CUDA_ARCH__)
  return __ldcg(p); /* other blocks wrote it: bypass L1 */
#else
  return *p;
#endif
}

/* One phase of a kernel with a reduction.  smem: lull_pk_sums x
 * LULL_PK_THREADS doubles and the last-block flag (lull_pk_launch_kind). */
LULL_BODY void lull_pk_reduce_body(const lull_pk_args* a, int kind, unsigned char* smem, int block,
                                   int grid, int phase, int tid)
{
  const int nq = lull_pk_sums(a, kind);
  double* s = (double*)smem;
  int* last = (int*)(s + nq * LULL_PK_THREADS); /* the launch sized smem for nq */
  const int tree_end = 1 + LULL_PK_TREE_PHASES;
  if (phase == 0) {
    double sum[LULL_PK_MAX_SUMS];
    LULL_UNROLL for (int q = 0; q < LULL_PK_MAX_SUMS; ++q)
      sum[q] = lull_pk_identity(kind);
    if (!lull_pk_idle(a, kind)) {
      const size_t n = (size_t)a->width * (size_t)a->height;
      const size_t stride = (size_t)grid * LULL_PK_THREADS;
      size_t i = (size_t)block * LULL_PK_THREADS + (size_t)tid;
      /* UPDATE is a pure stream (76 B per pixel): two pixels per step
       * double the loads a thread has in flight (same pixel order) */
      if (kind == LULL_PK_CG_UPDATE || kind == LULL_PK_CG_UPDATE_DEFLATED)
        for (; i + stride < n; i += 2 * stride) {
          const size_t pair[2] = {i, i + stride};
          lull_pk_cg_update_pixels(a, a->buf.state, pair, 2, kind == LULL_PK_CG_UPDATE_DEFLATED,
                                   sum);
        }
      for (; i < n; i += stride)
        lull_pk_pixel_body(a, kind, i, sum);
    }
    LULL_UNROLL for (int q = 0; q < LULL_PK_MAX_SUMS; ++q)
      if (q < nq)
        s[q * LULL_PK_THREADS + tid] = sum[q];
    return;
  }
  if (nq == 0)
    return;
  if (phase < tree_end || (phase > tree_end + 1 && phase < tree_end + 2 + LULL_PK_TREE_PHASES)) {
    /* tree over the block: 128, 64, ..., 1 */
    const int level = phase < tree_end ? phase : phase - tree_end - 1;
    if (phase > tree_end && !*last)
      return;
    const int half = LULL_PK_THREADS >> level;
    if (tid < half)
      for (int q = 0; q < nq; ++q)
        s[q * LULL_PK_THREADS + tid] = lull_pk_combine(kind, s[q * LULL_PK_THREADS + tid],
                                                       s[q * LULL_PK_THREADS + tid + half]);
    return;
  }
  if (phase == tree_end) {
    if (tid == 0) {
      for (int q = 0; q < nq; ++q)
        a->buf.partials[q * LULL_PK_MAX_GRID + block] = s[q * LULL_PK_THREADS];
      *last = lull_pk_arrive(&a->buf.state->arrived, (unsigned int)grid);
    }
    return;
  }
  if (!*last)
    return;
  if (phase == tree_end + 1) {
    /* the last block: the partials in block order */
    for (int q = 0; q < nq; ++q) {
      double sum = lull_pk_identity(kind);
      for (int b = tid; b < grid; b += LULL_PK_THREADS)
        sum = lull_pk_combine(kind, sum,
                              lull_pk_read_partial(a->buf.partials + q * LULL_PK_MAX_GRID + b));
      s[q * LULL_PK_THREADS + tid] = sum;
    }
    return;
  }
  if (tid == 0) {
    double total[LULL_PK_MAX_SUMS];
    for (int q = 0; q < nq; ++q)
      total[q] = s[q * LULL_PK_THREADS];
    lull_pk_finalize(a, kind, total);
    a->buf.state->arrived = 0;
  }
}

LULL_BODY int lull_pk_is_dct(int kind)
{
  return kind == LULL_PK_DCT_X_FORWARD || kind == LULL_PK_DCT_Y_SOLVE ||
         kind == LULL_PK_DCT_X_INVERSE;
}

/* Phase `phase` of work item `group` (run by block `block`) of a launch. */
LULL_BODY void lull_pk_body(int kind, const lull_pk_launch* launch, unsigned char* smem, int group,
                            int block, int phase, int tid)
{
  const lull_pk_args* a = &launch->args;
  if (lull_pk_is_dct(kind)) {
    lull_dct_body(a, kind, smem, group, block, phase, tid);
    return;
  }
  if (kind == LULL_PK_CLEAR) {
    if (group == 0 && tid == 0) {
      lull_pk_state* st = a->buf.state;
      memset(st, 0, sizeof *st);
    }
    return;
  }
  if (kind == LULL_PK_DCT_TABLES) {
    const int total = a->ax.n + a->ay.n;
    for (int t = group * LULL_PK_THREADS + tid; t < total; t += launch->grid * LULL_PK_THREADS)
      lull_dct_tables_at(a, t);
    return;
  }
  if (kind == LULL_PK_GD_POST) {
    lull_gdk_post_body(a, smem, group, phase, tid);
    return;
  }
  lull_pk_reduce_body(a, kind, smem, group, launch->grid, phase, tid);
}

/* Phases and shared memory of a non-DCT kernel. */
LULL_BODY int lull_pk_phases(const lull_pk_args* a, int kind)
{
  if (lull_pk_is_dct(kind))
    return lull_dct_phases(kind == LULL_PK_DCT_Y_SOLVE ? a->ay.passes : a->ax.passes, kind);
  if (kind == LULL_PK_GD_POST)
    return lull_gdk_post_phases(a);
  return lull_pk_sums(a, kind) ? LULL_PK_REDUCE_PHASES : 1;
}
