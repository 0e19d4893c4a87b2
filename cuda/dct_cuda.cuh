/* The exact solve of the constant-weight screened Poisson system
 * (a I + c L) x = rhs on the GPU by the DCT (core/poisson_dct.c: the DCT-II
 * diagonalises the free-boundary Laplacian, gradient-domain.md §3.1):
 * three kernels, each reading and writing the image once,
 *
 *   X_FORWARD  DCT-II of every row (of the right-hand side, computed as it
 *              is read, or of given planes), written transposed;
 *   Y_SOLVE    DCT-II of every column (a row of the transposed image), the
 *              division by a + c (l_x(k) + l_y(l)) (poisson_math.h), and the
 *              DCT-III back, in place;
 *   X_INVERSE  DCT-III of every row, read transposed, into the output.
 *
 * A DCT of length n is one complex FFT of length n after Makhoul's
 * reordering (Makhoul 1980; core/dct.h), and two real lines share one
 * complex FFT (the second as the imaginary part, separated by the FFT's
 * conjugate symmetry).  A block holds `pairs` such signals in shared memory
 * (or, for lengths whose buffers exceed it, in global memory) with the
 * twiddle table.  The FFT is a Stockham autosort FFT (core/dct.c) whose
 * passes are written per output: output o of a radix-R pass with Ns the
 * product of the earlier radices is
 *
 *   out[o] = sum_m in[j + m n / R] W_n^(m (k + r Ns) n / (Ns R)),
 *   k = o mod Ns, r = (o / Ns) mod R, j = (o / (Ns R)) Ns + k,
 *
 * (the butterfly with its twiddles folded into one root of unity), so any
 * radix, a large prime too, is one loop and every output is independent.
 * Radices 4, 2, 3, 5, ..., 31, then what is left as one pass (O(n p) for a
 * prime factor p).
 *
 * Inverse via the forward FFT: IDFT(Z) = conj(DFT(conj(Z))) / n.  Makhoul's
 * inverse: V[k] = e^(i pi k / 2n) (X[k] - i X[n-k]) (X[n] = 0), v = IDFT(V),
 * x[2m] = v[m], x[2m+1] = v[n-1-m]; with the CPU's scaling
 * (x = X[0]/n + (2/n) sum X[k] cos ...). */
#pragma once

#include "kernel_body.cuh"
#include "poisson_cuda.h"
#include "../core/poisson_math.h"

/* Plane c of a three-plane set, with constant indices only (a dynamic
 * index into the kernel's argument block would copy it to local memory). */
LULL_BODY const float* lull_pick(const float* const planes[3], int c)
{
  return c == 0 ? planes[0] : c == 1 ? planes[1] : planes[2];
}

LULL_BODY float* lull_pick_mut(float* const planes[3], int c)
{
  return c == 0 ? planes[0] : c == 1 ? planes[1] : planes[2];
}

/* The radix passes of an FFT of length n: radices 4, 2, then odd primes up
 * to 31 (core/dct.c, factorize), a larger remaining factor as one pass.
 * Returns the number of passes; for pass `want` (when it exists) *radix
 * and *ns, the product of the earlier radices.  The host plans with it and
 * every kernel phase replays it (a few integer operations). */
LULL_BODY int lull_fft_factor(int n, int want, int* radix, int* ns)
{
  int count = 0, done = 1;
  for (int p = 4; n > 1; p = (p == 4 ? 2 : p == 2 ? 3 : p + 2)) {
    if (p > 31)
      p = n;
    while (n % p == 0) {
      if (count == want) {
        *radix = p;
        *ns = done;
      }
      ++count;
      done *= p;
      n /= p;
    }
  }
  return count;
}

/* Position of signal element j in Makhoul's order: even elements first,
 * odd ones reversed at the end. */
LULL_BODY int lull_dct_position(int j, int n)
{
  return (j & 1) ? n - 1 - (j >> 1) : (j >> 1);
}

LULL_BODY void lull_dct_sincospi(double x, double* s, double* c)
{
#if defined(__CUDA_ARCH__)
  sincospi(x, s, c);
#else
  const double pi = 3.14159265358979323846;
  *s = sin(pi * x);
  *c = cos(pi * x);
#endif
}

/* LULL_PK_DCT_TABLES: element t of the x axis' tables (t < width), then
 * of the y axis'. */
LULL_BODY void lull_dct_tables_at(const lull_pk_args* a, int t)
{
  const lull_dct_axis* axis = t < a->ax.n ? &a->ax : &a->ay;
  const int k = t < a->ax.n ? t : t - a->ax.n;
  const int n = axis->n;
  double s, c;
  /* twiddles in double, stored in float (as core/dct.c) */
  lull_dct_sincospi(2.0 * (double)k / (double)n, &s, &c);
  axis->twiddle[k] = make_float2((float)c, (float)-s);
  lull_dct_sincospi((double)k / (2.0 * (double)n), &s, &c);
  axis->quarter[k] = make_float2((float)c, (float)s);
  axis->eigen[k] = lull_poisson_axis_eigenvalue(k, n);
}

/* One radix pass over `count` signals of length n (see the top). */
LULL_BODY void lull_fft_pass(const float2* in, float2* out, const float2* twiddle, int n, int radix,
                             int ns, int count, int tid)
{
  const int stride = n / radix;
  const int span = ns * radix;
  const int step_unit = n / span;
  for (int e = tid; e < count * n; e += LULL_PK_THREADS) {
    const int p = e / n;
    const int o = e - p * n;
    const int k = o % ns;
    const int j = (o / span) * ns + k;
    const int r = (o / ns) % radix;
    /* (k + r Ns) < Ns R, so q < n and t + q < 2n */
    const int q = (k + r * ns) * step_unit;
    const float2* src = in + (size_t)p * (size_t)n + j;
    float re = 0.0f, im = 0.0f;
    int t = 0;
    for (int m = 0; m < radix; ++m) {
      const float2 v = src[(size_t)m * (size_t)stride];
      const float2 w = twiddle[t];
      re = fmaf(v.x, w.x, fmaf(-v.y, w.y, re));
      im = fmaf(v.x, w.y, fmaf(v.y, w.x, im));
      t += q;
      if (t >= n)
        t -= n;
    }
    out[(size_t)p * (size_t)n + o] = make_float2(re, im);
  }
}

/* DCT-II coefficient k of the two real lines of a complex signal whose
 * FFT is Z: a from the real, b from the imaginary part.  zk = Z[k],
 * zn = Z[(n - k) mod n], q = (cos, sin)(pi k / 2n). */
LULL_BODY float2 lull_dct_coefficients(float2 zk, float2 zn, float2 q)
{
  const float a = 0.5f * ((zk.x + zn.x) * q.x + (zk.y - zn.y) * q.y);
  const float b = 0.5f * ((zk.y + zn.y) * q.x - (zk.x - zn.x) * q.y);
  return make_float2(a, b);
}

/* The conjugate of the complex spectrum whose inverse FFT gives the two
 * lines' DCT-III: xa = (X_a[k], X_a[n-k]), xb likewise, q of k. */
LULL_BODY float2 lull_dct_inverse_spectrum(float2 xa, float2 xb, float2 q)
{
  const float var = q.x * xa.x + q.y * xa.y, vai = q.y * xa.x - q.x * xa.y;
  const float vbr = q.x * xb.x + q.y * xb.y, vbi = q.y * xb.x - q.x * xb.y;
  return make_float2(var - vbi, -(vai + vbr));
}

/* What the DCT kernels share: sizes, buffers and the lines of a group.
 * (Fields are copied out of the argument block: a pointer into it would
 * copy it to local memory.) */
typedef struct lull_dct_frame
{
  int n, passes, pairs, lines;
  float2* buf[2];
  const float2* table;   /* twiddles (shared memory, or the axis' table) */
  const float2* twiddle; /* the axis' table */
  const float2* quarter;
  int first_line; /* of the group */
} lull_dct_frame;

LULL_BODY lull_dct_frame lull_dct_frame_make(const lull_pk_args* a, int kind, unsigned char* smem,
                                             int group, int block)
{
  lull_dct_frame f;
  const int y_solve = kind == LULL_PK_DCT_Y_SOLVE;
  f.n = y_solve ? a->ay.n : a->ax.n;
  f.passes = y_solve ? a->ay.passes : a->ax.passes;
  f.twiddle = y_solve ? a->ay.twiddle : a->ax.twiddle;
  f.quarter = y_solve ? a->ay.quarter : a->ax.quarter;
  f.pairs = a->shape.pairs;
  f.lines = a->channels * (y_solve ? a->width : a->height);
  const size_t signal = (size_t)f.pairs * (size_t)f.n;
  if (a->shape.global) {
    f.buf[0] = a->buf.dct_work + (size_t)block * 2 * signal;
    f.table = f.twiddle;
  } else {
    f.buf[0] = (float2*)smem;
    f.table = f.buf[0] + 2 * signal;
  }
  f.buf[1] = f.buf[0] + signal;
  f.first_line = group * 2 * f.pairs;
  return f;
}

/* Value j of x-line `line` (channel line / h, row line % h) that
 * X_FORWARD transforms: the right-hand side of the unweighted system
 * (weights 1, 0 for the absent edges at the far borders: the system the
 * DCT diagonalises) or a plane. */
LULL_BODY float lull_dct_source(const lull_pk_args* a, int line, int j)
{
  const int w = a->width, h = a->height;
  const int c = line / h, y = line - c * h;
  const size_t i = (size_t)y * (size_t)w + (size_t)j;
  if (!a->dct_rhs)
    return lull_pick(a->dct_src, c)[i];
  const float* gx = lull_pick(a->gx, c);
  const float* gy = lull_pick(a->gy, c);
  return lull_poisson_rhs(a->alpha2, 1.0f, lull_pick(a->primal, c)[i], j > 0 ? 1.0f : 0.0f,
                          j > 0 ? gx[i - 1] : 0.0f, j + 1 < w ? 1.0f : 0.0f, gx[i],
                          y > 0 ? 1.0f : 0.0f, y > 0 ? gy[i - (size_t)w] : gy[i],
                          y + 1 < h ? 1.0f : 0.0f, gy[i]);
}

/* Coefficient (k, l) divided by the operator's eigenvalue (poisson_dct.c,
 * lull_poisson_dct_solve); the unweighted solve's constant is the primal's
 * mean (exact for every alpha), the preconditioner's 0 when deflated (the
 * residual has none; poisson_cg.c, precondition) or a = 0, else its
 * rhs's over a. */
LULL_BODY float lull_dct_divide(const lull_pk_args* a, float v, int line, int l)
{
  const int w = a->width;
  const int c = line / w, k = line - c * w;
  const lull_pk_state* st = a->buf.state;
  const float ca = a->dct_preconditioner ? st->dct_a : a->dct_a;
  const float cc = a->dct_preconditioner ? st->dct_c : a->dct_c;
  if (k == 0 && l == 0 && (!a->dct_preconditioner || a->deflate || !(ca > 0.0f))) {
    const float mean = a->dct_preconditioner ? 0.0f : st->mean[c]; /* global memory */
    return mean * (float)w * (float)a->height;
  }
  const float base = ca + cc * a->ay.eigen[l];
  return v / (base + cc * a->ax.eigen[k]);
}

/* Index of (channel, row y, column k) of an x-line in the transposed image. */
LULL_BODY size_t lull_dct_transposed(const lull_pk_args* a, int line, int k)
{
  const int h = a->height;
  const int c = line / h, y = line - c * h;
  return ((size_t)c * (size_t)a->width + (size_t)k) * (size_t)h + (size_t)y;
}

LULL_BODY int lull_dct_gated(const lull_pk_args* a)
{
  const lull_pk_state* st = a->buf.state;
  return a->dct_gate && !(st->active[0] || st->active[1] || st->active[2]);
}

LULL_BODY int lull_dct_phases(int passes, int kind)
{
  return kind == LULL_PK_DCT_Y_SOLVE ? 2 * passes + 3 : passes + 2;
}

/* FFT pass s, from buf[(from + s) & 1] to the other buffer. */
LULL_BODY void lull_dct_fft_phase(const lull_dct_frame* f, int s, int from, int tid)
{
  int radix = 1, ns = 1;
  (void)lull_fft_factor(f->n, s, &radix, &ns);
  lull_fft_pass(f->buf[(from + s) & 1], f->buf[(from + s + 1) & 1], f->table, f->n, radix, ns,
                f->pairs, tid);
}

LULL_BODY void lull_dct_copy_table(const lull_dct_frame* f, const lull_pk_args* a, int tid)
{
  if (a->shape.global)
    return;
  for (int t = tid; t < f->n; t += LULL_PK_THREADS)
    ((float2*)f->table)[t] = f->twiddle[t];
}

LULL_BODY void lull_dct_x_forward(const lull_pk_args* a, const lull_dct_frame* f, int phase, int tid)
{
  const int n = f->n, passes = f->passes;
  if (phase == 0) {
    lull_dct_copy_table(f, a, tid);
    for (int e = tid; e < f->pairs * n; e += LULL_PK_THREADS) {
      const int p = e / n, j = e - p * n;
      const int line = f->first_line + 2 * p;
      const float va = line < f->lines ? lull_dct_source(a, line, j) : 0.0f;
      const float vb = line + 1 < f->lines ? lull_dct_source(a, line + 1, j) : 0.0f;
      f->buf[0][(size_t)p * (size_t)n + lull_dct_position(j, n)] = make_float2(va, vb);
    }
  } else if (phase <= passes) {
    lull_dct_fft_phase(f, phase - 1, 0, tid);
  } else {
    /* thread order (k, pair): the transposed writes of a k are contiguous */
    const float2* z = f->buf[passes & 1];
    for (int e = tid; e < f->pairs * n; e += LULL_PK_THREADS) {
      const int k = e / f->pairs, p = e - k * f->pairs;
      const int line = f->first_line + 2 * p;
      if (line >= f->lines)
        continue;
      const float2* zs = z + (size_t)p * (size_t)n;
      const float2 x = lull_dct_coefficients(zs[k], zs[k ? n - k : 0], f->quarter[k]);
      a->buf.ap[0][lull_dct_transposed(a, line, k)] = x.x;
      if (line + 1 < f->lines)
        a->buf.ap[0][lull_dct_transposed(a, line + 1, k)] = x.y;
    }
  }
}

LULL_BODY void lull_dct_y_solve(const lull_pk_args* a, const lull_dct_frame* f, int phase, int tid)
{
  const int n = f->n, passes = f->passes;
  float* t = a->buf.ap[0];
  if (phase == 0) {
    lull_dct_copy_table(f, a, tid);
    for (int e = tid; e < f->pairs * n; e += LULL_PK_THREADS) {
      const int p = e / n, l = e - p * n;
      const int line = f->first_line + 2 * p;
      const float va = line < f->lines ? t[(size_t)line * (size_t)n + (size_t)l] : 0.0f;
      const float vb = line + 1 < f->lines ? t[(size_t)(line + 1) * (size_t)n + (size_t)l] : 0.0f;
      f->buf[0][(size_t)p * (size_t)n + lull_dct_position(l, n)] = make_float2(va, vb);
    }
  } else if (phase <= passes) {
    lull_dct_fft_phase(f, phase - 1, 0, tid);
  } else if (phase == passes + 1) {
    /* coefficients, division, and the spectrum of the inverse */
    const float2* z = f->buf[passes & 1];
    float2* out = f->buf[(passes + 1) & 1];
    for (int e = tid; e < f->pairs * n; e += LULL_PK_THREADS) {
      const int p = e / n, k = e - p * n;
      const int line = f->first_line + 2 * p;
      const float2* zs = z + (size_t)p * (size_t)n;
      const int nk = k ? n - k : 0;
      float2 xk = lull_dct_coefficients(zs[k], zs[nk], f->quarter[k]);
      float2 xn = k ? lull_dct_coefficients(zs[nk], zs[k], f->quarter[nk])
                    : make_float2(0.0f, 0.0f);
      if (line < f->lines) {
        xk.x = lull_dct_divide(a, xk.x, line, k);
        if (k)
          xn.x = lull_dct_divide(a, xn.x, line, nk);
      }
      if (line + 1 < f->lines) {
        xk.y = lull_dct_divide(a, xk.y, line + 1, k);
        if (k)
          xn.y = lull_dct_divide(a, xn.y, line + 1, nk);
      }
      out[(size_t)p * (size_t)n + k] = lull_dct_inverse_spectrum(
          make_float2(xk.x, xn.x), make_float2(xk.y, xn.y), f->quarter[k]);
    }
  } else if (phase <= 2 * passes + 1) {
    lull_dct_fft_phase(f, phase - passes - 2, (passes + 1) & 1, tid);
  } else {
    const float2* v = f->buf[(2 * passes + 1) & 1];
    const float inv_n = 1.0f / (float)n;
    for (int e = tid; e < f->pairs * n; e += LULL_PK_THREADS) {
      const int p = e / n, l = e - p * n;
      const int line = f->first_line + 2 * p;
      const float2 s = v[(size_t)p * (size_t)n + lull_dct_position(l, n)];
      if (line < f->lines)
        t[(size_t)line * (size_t)n + (size_t)l] = s.x * inv_n;
      if (line + 1 < f->lines)
        t[(size_t)(line + 1) * (size_t)n + (size_t)l] = -s.y * inv_n;
    }
  }
}

LULL_BODY void lull_dct_x_inverse(const lull_pk_args* a, const lull_dct_frame* f, int phase, int tid)
{
  const int n = f->n, passes = f->passes;
  const float* t = a->buf.ap[0];
  if (phase == 0) {
    lull_dct_copy_table(f, a, tid);
    for (int e = tid; e < f->pairs * n; e += LULL_PK_THREADS) {
      const int k = e / f->pairs, p = e - k * f->pairs;
      const int line = f->first_line + 2 * p;
      float2 xa = make_float2(0.0f, 0.0f), xb = make_float2(0.0f, 0.0f);
      if (line < f->lines)
        xa = make_float2(t[lull_dct_transposed(a, line, k)],
                         k ? t[lull_dct_transposed(a, line, n - k)] : 0.0f);
      if (line + 1 < f->lines)
        xb = make_float2(t[lull_dct_transposed(a, line + 1, k)],
                         k ? t[lull_dct_transposed(a, line + 1, n - k)] : 0.0f);
      f->buf[0][(size_t)p * (size_t)n + k] = lull_dct_inverse_spectrum(xa, xb, f->quarter[k]);
    }
  } else if (phase <= passes) {
    lull_dct_fft_phase(f, phase - 1, 0, tid);
  } else {
    const float2* v = f->buf[passes & 1];
    const float inv_n = 1.0f / (float)n;
    const int h = a->height;
    for (int e = tid; e < f->pairs * n; e += LULL_PK_THREADS) {
      const int p = e / n, j = e - p * n;
      const int line = f->first_line + 2 * p;
      const float2 s = v[(size_t)p * (size_t)n + lull_dct_position(j, n)];
      if (line < f->lines) {
        const int c = line / h, y = line - c * h;
        lull_pick_mut(a->dct_dst, c)[(size_t)y * (size_t)n + (size_t)j] = s.x * inv_n;
      }
      if (line + 1 < f->lines) {
        const int c = (line + 1) / h, y = line + 1 - c * h;
        lull_pick_mut(a->dct_dst, c)[(size_t)y * (size_t)n + (size_t)j] = -s.y * inv_n;
      }
    }
  }
}

/* Phase `phase` of line group `group` on block `block` (global buffers). */
LULL_BODY void lull_dct_body(const lull_pk_args* a, int kind, unsigned char* smem, int group,
                             int block, int phase, int tid)
{
  if (lull_dct_gated(a))
    return;
  const lull_dct_frame f = lull_dct_frame_make(a, kind, smem, group, block);
  if (kind == LULL_PK_DCT_X_FORWARD)
    lull_dct_x_forward(a, &f, phase, tid);
  else if (kind == LULL_PK_DCT_Y_SOLVE)
    lull_dct_y_solve(a, &f, phase, tid);
  else
    lull_dct_x_inverse(a, &f, phase, tid);
}
