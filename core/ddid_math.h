/* Per-pixel formulas of the DDID filter: dual-domain image denoising
 * (Knaus and Zwicker 2013, 2015) as Vicini 2015 ch. 4 describes it, with
 * lull's adaptation to Monte Carlo renders (ddid.h, docs/ddid.md).  Shared
 * by the CPU backend (ddid_cpu.c) and, written for it, a CUDA port.
 *
 * Notation of the thesis: y the noisy image, x (here g) the guide, n the
 * iteration counting down from N to 1, k_n the spatial-domain (bilateral)
 * kernel, K_n the frequency-domain kernel, a_n = A_n the confidences. */
#pragma once

#include <math.h>
#include <stddef.h>

#include "platform.h"

enum
{
  LULL_DDID_MAX_RADIUS = 40, /* r_n for spatialSigma up to 20: (2r + 1)^2 windows */
  LULL_DDID_MAX_FEATURES = 9,
};

#define LULL_DDID_PI 3.14159265358979f
/* keeps 0 / 0 of a noise-free pixel (variance 0) at 0 */
#define LULL_DDID_EPSILON 1e-20f

/* The orthonormal DCT along the colour axis (eq. 4.11-4.12 with N = 3):
 * rows k = 0, 1, 2; its inverse is its transpose. */
LULL_HD float lull_ddid_dct(int k, int c)
{
  const float w0 = 0.57735027f; /* 1 / sqrt(3) */
  const float w1 = 0.81649658f; /* sqrt(2 / 3) */
  /* cos(pi / 6 (2c + 1) k): k 1: cos(pi/6), 0, -cos(pi/6); k 2: 1/2, -1, 1/2 */
  const float m1[3] = {0.86602540f, 0.0f, -0.86602540f};
  const float m2[3] = {0.5f, -1.0f, 0.5f};
  return k == 0 ? w0 : (k == 1 ? w1 * m1[c] : w1 * m2[c]);
}

/* The parameters of iteration n of N (§4.3 and the pseudocode's lines
 * 13-18): S_n, T_n / sigma^2, r_n, a_n = A_n. */
typedef struct lull_ddid_step
{
  int n;          /* the iteration variable, N down to 1 */
  float s;        /* S_n = 2 sigma_s^2 alpha^((1 - n) / 2N) */
  float t_scale;  /* T_n / sigma^2 = gamma_r alpha^((n - 1) / N), gamma_r = range / N */
  float v_scale;  /* V / sigma^2 = gamma_f = frequency / N */
  int radius;     /* r_n = max(4, round(2 sqrt(S_n / 2))) */
  float a;        /* a_n = A_n = cos((n - 1) / N pi / 2) */
} lull_ddid_step;

LULL_HD lull_ddid_step lull_ddid_step_of(int n, int iterations, float sigma_s, float range,
                                         float frequency, float log_alpha)
{
  lull_ddid_step st;
  const float N = (float)iterations;
  st.n = n;
  st.s = 2.0f * sigma_s * sigma_s * expf(log_alpha * (1.0f - (float)n) / (2.0f * N));
  st.t_scale = range / N * expf(log_alpha * ((float)n - 1.0f) / N);
  st.v_scale = frequency / N;
  const int r = (int)floorf(2.0f * sqrtf(st.s * 0.5f) + 0.5f);
  st.radius = r > 4 ? r : 4;
  st.a = cosf(((float)n - 1.0f) / N * (0.5f * LULL_DDID_PI));
  return st;
}

/* cos(min(pi/2, sqrt(x / (scale n))))^n: the clamped cosine of eq. 4.9
 * and 4.10 (x >= 0; the cosine held at 0 or above where rounding takes
 * cos(pi/2) below). */
LULL_HD float lull_ddid_cosine(float x, float scale, int n)
{
  float t = sqrtf(x / (scale * (float)n + LULL_DDID_EPSILON));
  t = t < 0.5f * LULL_DDID_PI ? t : 0.5f * LULL_DDID_PI;
  float c = cosf(t);
  c = c > 0.0f ? c : 0.0f;
  float p = 1.0f;
  for (int k = 0; k < n; ++k)
    p *= c;
  return p;
}

/* k_n of eq. 4.9: the guide's squared colour distance d2 (summed over the
 * channels) over T_n, the squared pixel distance r2 over S_n. */
LULL_HD float lull_ddid_spatial_kernel(float d2, float r2, float t, float s, int n)
{
  return lull_ddid_cosine(d2, t, n) * expf(-r2 / s);
}

/* A neighbour's feature weight (lull's guidance by the renderer's
 * features, docs/ddid.md): exp(-|f_p - f_q|^2 / (2 k_f^2)) summed over the
 * feature channels; 1 without features. */
LULL_HD float lull_ddid_feature_weight(float d2, float inv_2kf2)
{
  return expf(-d2 * inv_2kf2);
}

/* One twiddle of a window of W = 2r + 1: E[f][j] = e^(-i 2 pi (f - r)(j - r) / W)
 * (eq. 4.4; symmetric in f and j, and E[W - 1 - f][j] = conj E[f][j]). */
LULL_HD void lull_ddid_twiddle(int r, int f, int j, float* er, float* ei)
{
  const int W = 2 * r + 1;
  int m = ((f - r) * (j - r)) % W;
  m += m < 0 ? W : 0;
  const float angle = 2.0f * LULL_DDID_PI * (float)m / (float)W;
  *er = cosf(angle);
  *ei = -sinf(angle);
}

/* The twiddles of a window of W = 2r + 1, real parts in er, imaginary in
 * ei (W x W, row f). */
LULL_HD void lull_ddid_twiddles(int r, float* er, float* ei)
{
  const int W = 2 * r + 1;
  for (int f = 0; f < W; ++f)
    for (int j = 0; j < W; ++j)
      lull_ddid_twiddle(r, f, j, er + f * W + j, ei + f * W + j);
}

/* K_n of eq. 4.10 at the frequency f from D_f and D_-f: the guide's
 * coefficient G_f = (D_f + conj D_-f) / 2 (eq. 4.8), |G_f|^2 over sum k^2
 * (norm its inverse), V the frequency scale.  The same for f and -f
 * (G_-f = conj G_f). */
LULL_HD float lull_ddid_shrink(float dfr, float dfi, float dgr, float dgi, float norm, float v,
                               int n)
{
  const float gr = 0.5f * (dfr + dgr), gi = 0.5f * (dfi - dgi);
  return lull_ddid_cosine((gr * gr + gi * gi) * norm, v, n);
}

/* The DFT's stages take a frequency f and its negative -f together: the
 * twiddles of -f are the conjugates of f's (lull_ddid_twiddle), so the
 * four real products of a complex value (a + i b) and a twiddle (c + i s)
 * give both, (a + i b)(c + i s) and (a + i b)(c - i s):
 *   p[0] = sum a c, p[1] = sum b s, p[2] = sum a s, p[3] = sum b c;
 * f: (p0 - p1) + i (p2 + p3), -f: (p0 + p1) + i (p3 - p2). */
LULL_HD void lull_ddid_pair(const float p[4], float* fr, float* fi, float* mr, float* mi)
{
  *fr = p[0] - p[1];
  *fi = p[2] + p[3];
  *mr = p[0] + p[1];
  *mi = p[3] - p[2];
}

/* The shrunk coefficients' share of the inverse at the centre (eq. 4.6,
 * 4.8, 4.10) of the frequencies at (fy, fx), (-fy, fx), (fy, -fx) and
 * (-fy, -fx) (0 <= fy, fx <= r; indices: -f at W - 1 - f): D at them is
 * d[0], d[1], d[2], d[3] (real, imaginary).  Each pair f, -f shares its
 * weight K_f; (fy, fx) = (r, r) is the zero frequency, alone; on the row
 * fy = r or the column fx = r the four are two. */
LULL_HD float lull_ddid_quad(const float d[4][2], int fy, int fx, int r, float norm, float v,
                             int n)
{
  float sum;
  if (fy == r && fx == r)
    sum = lull_ddid_shrink(d[0][0], d[0][1], d[0][0], d[0][1], norm, v, n) * d[0][1];
  else
    sum = lull_ddid_shrink(d[0][0], d[0][1], d[3][0], d[3][1], norm, v, n) * (d[0][1] + d[3][1]);
  if (fy < r && fx < r)
    sum += lull_ddid_shrink(d[1][0], d[1][1], d[2][0], d[2][1], norm, v, n) * (d[1][1] + d[2][1]);
  return sum;
}

/* The frequency-domain estimate (eq. 4.6): A times the imaginary part of
 * the shrunk coefficients' sum, over W^2 (the inverse DFT at offset 0). */
LULL_HD float lull_ddid_estimate(float conf, float sum, int WW)
{
  return conf * sum / (float)WW;
}

/* Floats of lull_ddid_noise's scratch for a window of radius r. */
LULL_HD size_t lull_ddid_noise_scratch(int r)
{
  const size_t W = (size_t)(2 * r + 1), H1 = (size_t)(r + 1);
  return 4 * W * H1;
}

/* The noise estimate of one channel at a pixel (eq. 4.2-4.8 in the guided
 * form, z = g + i y): dr, di the window's differences g_q - g_p + nbar_g
 * and y_q - y_p + nbar_y, each times k_q (W x W, row jy = q_y - p_y + r);
 * their 2D DFT D (eq. 4.4) separably, through the rows (R) and then the
 * columns, each stage for f and -f together (lull_ddid_pair: half the
 * products of a plain DFT); each pair's weight K_n (eq. 4.10) from the
 * guide's coefficients (D_f + conj D_-f) / 2 (eq. 4.8) over sum k^2
 * (k2sum), V the frequency scale; the result A Im(sum_f D_f K_f) / W^2
 * (eq. 4.6).  er, ei: lull_ddid_twiddles; scratch:
 * lull_ddid_noise_scratch(r) floats.  The loops run along the
 * frequencies innermost (E is symmetric), which compilers vectorise. */
LULL_HD float lull_ddid_noise(const float* dr, const float* di, int r, float k2sum, float v,
                              int n, float conf, const float* er, const float* ei, float* scratch)
{
  const int W = 2 * r + 1, H1 = r + 1;
  /* R at (jy, fx) and (jy, -fx), 0 <= fx <= r: rows of H1 */
  float* pr = scratch;
  float* pi = pr + W * H1;
  float* mr = pi + W * H1;
  float* mi = mr + W * H1;
  /* the sums, local: nothing else can alias them (the loops vectorise) */
  float acc[8][LULL_DDID_MAX_RADIUS + 1];
  for (int jy = 0; jy < W; ++jy) {
    for (int k = 0; k < 4; ++k)
      for (int fx = 0; fx < H1; ++fx)
        acc[k][fx] = 0.0f;
    for (int jx = 0; jx < W; ++jx) {
      const float a = dr[jy * W + jx], b = di[jy * W + jx];
      const float* c = er + jx * W;
      const float* s = ei + jx * W;
      for (int fx = 0; fx < H1; ++fx) {
        acc[0][fx] += a * c[fx];
        acc[1][fx] += b * s[fx];
        acc[2][fx] += a * s[fx];
        acc[3][fx] += b * c[fx];
      }
    }
    for (int fx = 0; fx < H1; ++fx) {
      const float p[4] = {acc[0][fx], acc[1][fx], acc[2][fx], acc[3][fx]};
      const int k = jy * H1 + fx;
      lull_ddid_pair(p, &pr[k], &pi[k], &mr[k], &mi[k]);
    }
  }
  /* columns: D at (fy, fx) and (-fy, fx) from R at fx, at (fy, -fx) and
   * (-fy, -fx) from R at -fx; then the shrinkage of the four */
  const float norm = 1.0f / (k2sum + LULL_DDID_EPSILON);
  float sum = 0.0f;
  for (int fy = 0; fy < H1; ++fy) {
    for (int k = 0; k < 8; ++k)
      for (int fx = 0; fx < H1; ++fx)
        acc[k][fx] = 0.0f;
    for (int jy = 0; jy < W; ++jy) {
      const float c = er[fy * W + jy], s = ei[fy * W + jy];
      const float* xr = pr + jy * H1;
      const float* xi = pi + jy * H1;
      const float* yr = mr + jy * H1;
      const float* yi = mi + jy * H1;
      for (int fx = 0; fx < H1; ++fx) {
        acc[0][fx] += xr[fx] * c;
        acc[1][fx] += xi[fx] * s;
        acc[2][fx] += xi[fx] * c;
        acc[3][fx] += xr[fx] * s;
        acc[4][fx] += yr[fx] * c;
        acc[5][fx] += yi[fx] * s;
        acc[6][fx] += yi[fx] * c;
        acc[7][fx] += yr[fx] * s;
      }
    }
    for (int fx = 0; fx < H1; ++fx) {
      /* the products of R and E: (p0, p1, p2, p3) = (x c, y s, x s, y c) of
       * R = x + i y, so (f, -f) of lull_ddid_pair are E R and conj(E) R */
      const float p[4] = {acc[0][fx], acc[1][fx], acc[3][fx], acc[2][fx]};
      const float q[4] = {acc[4][fx], acc[5][fx], acc[7][fx], acc[6][fx]};
      float d[4][2];
      lull_ddid_pair(p, &d[0][0], &d[0][1], &d[1][0], &d[1][1]);
      lull_ddid_pair(q, &d[2][0], &d[2][1], &d[3][0], &d[3][1]);
      sum += lull_ddid_quad(d, fy, fx, r, norm, v, n);
    }
  }
  return lull_ddid_estimate(conf, sum, W * W);
}

/* One iteration's planes (width x height, row stride = width). */
typedef struct lull_ddid_planes
{
  int width, height;
  const float* g[3];   /* the guide (DCT colour space) */
  const float* y[3];   /* the noisy image (DCT colour space) */
  const float* v[3];   /* its variance per DCT channel */
  int nf;              /* feature channels (0: none) */
  const float* f[LULL_DDID_MAX_FEATURES];
  float inv_2kf2;      /* 1 / (2 k_f^2) */
  float* out[3];       /* the new guide: y less the noise estimate */
} lull_ddid_planes;

/* Floats of scratch lull_ddid_pixel takes for a window of radius r: the
 * kernel's weights and the differences (W x W each), lull_ddid_noise's. */
LULL_HD size_t lull_ddid_pixel_scratch(int r)
{
  const size_t W = (size_t)(2 * r + 1);
  return 3 * W * W + lull_ddid_noise_scratch(r);
}

LULL_HD int lull_ddid_clamp(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

/* The pixel q of the window of (x, y) at row jy, column jx (radius r):
 * the image's edge repeated outside it. */
LULL_HD size_t lull_ddid_window_pixel(const lull_ddid_planes* P, int x, int y, int jx, int jy,
                                      int r)
{
  return (size_t)lull_ddid_clamp(y + jy - r, 0, P->height - 1) * (size_t)P->width +
         (size_t)lull_ddid_clamp(x + jx - r, 0, P->width - 1);
}

/* T_n at pixel p: T_n / sigma^2 times the mean of its channels' variance
 * (lull's per-pixel sigma^2, docs/ddid.md). */
LULL_HD float lull_ddid_range_t(const lull_ddid_planes* P, const lull_ddid_step* st, size_t p)
{
  return st->t_scale * (P->v[0][p] + P->v[1][p] + P->v[2][p]) * (1.0f / 3.0f);
}

/* k_q of the window of p (eq. 4.7 with eq. 4.9): the guide's colour
 * distance to the centre's gp over t, the pixel offset (ox, oy) over S_n,
 * times the feature weight when there are features. */
LULL_HD float lull_ddid_weight(const lull_ddid_planes* P, const lull_ddid_step* st, float t,
                               const float gp[3], size_t p, size_t q, int ox, int oy)
{
  float d2 = 0.0f;
  for (int c = 0; c < 3; ++c) {
    const float d = P->g[c][q] - gp[c];
    d2 += d * d;
  }
  float k = lull_ddid_spatial_kernel(d2, (float)(ox * ox + oy * oy), t, st->s, st->n);
  if (P->nf) {
    float f2 = 0.0f;
    for (int c = 0; c < P->nf; ++c) {
      const float d = P->f[c][q] - P->f[c][p];
      f2 += d * d;
    }
    k *= lull_ddid_feature_weight(f2, P->inv_2kf2);
  }
  return k;
}

/* The spatial-domain noise estimate nbar = a (u_p - sum k u / sum k) of
 * eq. 4.2 (sk >= 1: the centre's own weight is 1). */
LULL_HD float lull_ddid_spatial_noise(float a, float up, float sum_ku, float sk)
{
  return a * (up - sum_ku / sk);
}

/* One difference of eq. 4.3 weighted by k_q: (u_q - u_p + nbar) k. */
LULL_HD float lull_ddid_difference(float uq, float up, float nbar, float k)
{
  return (uq - up + nbar) * k;
}

/* The dual-domain filter at pixel (x, y) (§4.2): the bilateral weights
 * k_q of the guide over the window (lull_ddid_weight), the spatial noise
 * estimates of guide and noisy image (eq. 4.2), the differences of eq.
 * 4.3 and, per channel, the frequency-domain estimate (lull_ddid_noise);
 * out = y_p less it.  er, ei: the step's twiddles; scratch:
 * lull_ddid_pixel_scratch(st->radius) floats. */
LULL_HD void lull_ddid_pixel(const lull_ddid_planes* P, const lull_ddid_step* st, const float* er,
                             const float* ei, int x, int y, float* scratch)
{
  const int r = st->radius, W = 2 * r + 1, WW = W * W;
  const size_t p = (size_t)y * (size_t)P->width + (size_t)x;
  float* kw = scratch;
  float* dr = scratch + WW;
  float* di = scratch + 2 * WW;
  float gp[3], yp[3];
  for (int c = 0; c < 3; ++c) {
    gp[c] = P->g[c][p];
    yp[c] = P->y[c][p];
  }
  const float t = lull_ddid_range_t(P, st, p);
  float sk = 0.0f, sk2 = 0.0f, sg[3] = {0.0f, 0.0f, 0.0f}, sy[3] = {0.0f, 0.0f, 0.0f};
  for (int jy = 0; jy < W; ++jy)
    for (int jx = 0; jx < W; ++jx) {
      const size_t q = lull_ddid_window_pixel(P, x, y, jx, jy, r);
      const float k = lull_ddid_weight(P, st, t, gp, p, q, jx - r, jy - r);
      kw[jy * W + jx] = k;
      sk += k;
      sk2 += k * k;
      for (int c = 0; c < 3; ++c) {
        sg[c] += k * P->g[c][q];
        sy[c] += k * P->y[c][q];
      }
    }
  for (int c = 0; c < 3; ++c) {
    const float ng = lull_ddid_spatial_noise(st->a, gp[c], sg[c], sk);
    const float ny = lull_ddid_spatial_noise(st->a, yp[c], sy[c], sk);
    for (int jy = 0; jy < W; ++jy)
      for (int jx = 0; jx < W; ++jx) {
        const size_t q = lull_ddid_window_pixel(P, x, y, jx, jy, r);
        const float k = kw[jy * W + jx];
        dr[jy * W + jx] = lull_ddid_difference(P->g[c][q], gp[c], ng, k);
        di[jy * W + jx] = lull_ddid_difference(P->y[c][q], yp[c], ny, k);
      }
    const float v = st->v_scale * P->v[c][p];
    const float noise = lull_ddid_noise(dr, di, r, sk2, v, st->n, st->a, er, ei, scratch + 3 * WW);
    P->out[c][p] = yp[c] - noise;
  }
}

/* A pixel's colour u and its variance v to the DCT colour space (eq.
 * 4.11-4.12): y, and each DCT channel's variance vy (the channels' noise
 * taken as independent). */
LULL_HD void lull_ddid_to_dct(const float u[3], const float v[3], float y[3], float vy[3])
{
  for (int k = 0; k < 3; ++k) {
    float s = 0.0f, sv = 0.0f;
    for (int c = 0; c < 3; ++c) {
      const float m = lull_ddid_dct(k, c);
      s += m * u[c];
      sv += m * m * v[c];
    }
    y[k] = s;
    vy[k] = sv;
  }
}

/* Back to RGB: the inverse DCT is its transpose. */
LULL_HD void lull_ddid_from_dct(const float g[3], float u[3])
{
  for (int c = 0; c < 3; ++c) {
    float s = 0.0f;
    for (int k = 0; k < 3; ++k)
      s += lull_ddid_dct(k, c) * g[k];
    u[c] = s;
  }
}
