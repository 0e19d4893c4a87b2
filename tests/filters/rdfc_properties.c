/* Properties of the RDFC filter (core/rdfc_math.h, core/rdfc_cpu.c),
 * through its formulas and through the OIDN API:
 *
 *  - the whole run equals a plain implementation of the same definition
 *    (below: every step over whole planes, patch means by direct sums, no
 *    tiles, no scratch reuse), with halves (features once, and features in
 *    halves, prefiltered) and with one buffer and its variance;
 *  - the formulas: eq. 3.7's distance, the symmetric blend's limits, the
 *    selection picks exactly one candidate;
 *  - a constant image stays constant; identical halves (no noise) give the
 *    input back;
 *  - the result does not depend on the thread count;
 *  - NaN and Inf input give a finite result; tiny images run;
 *  - OIDN's errors for bad input (one buffer without variance, a missing
 *    half, size mismatch, radius out of range) and cancellation. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>
#include <lull.h>

#include "rdfc.h"
#include "rdfc_math.h"
#include "test_util.h"

enum { W = 23, H = 19 };

static OIDNDevice device;

/* -- a plain implementation -------------------------------------------------- */

static int clampi(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

static size_t at(int x, int y, int w, int h)
{
  return (size_t)clampi(y, 0, h - 1) * (size_t)w + (size_t)clampi(x, 0, w - 1);
}

typedef struct ref_ff
{
  int w, h, nb, nu, use_color, gc, patch, radius, nf, nfeat;
  int feature_end[3];
  float kc2, kf2, tau;
  const float *u[2][3], *uv[3], *g[3], *gv[3], *f[9], *fv[9], *fg[9];
  float *out[2][3], *sure, *deriv, *out_var[3];
} ref_ff;

/* mean of plane v over the (2f+1)^2 window at (x, y), the edge repeated */
static float patch_mean(const float* v, int x, int y, int f, int w, int h)
{
  double s = 0.0;
  for (int j = -f; j <= f; ++j)
    for (int i = -f; i <= f; ++i)
      s += v[at(x + i, y + j, w, h)];
  return (float)(s / ((2 * f + 1) * (2 * f + 1)));
}

static void ref_terms(const ref_ff* p, size_t i, size_t i1, size_t i2, float up_shift, int shift_c,
                      float t[3])
{
  double s[3] = {0, 0, 0};
  for (int c = 0; c < p->gc; ++c) {
    const float* g = p->g[c];
    const float* v = p->gv[c];
    const float up = g[i] + (c == shift_c ? up_shift : 0.0f);
    s[0] += lull_rdfc_term(up, g[i1], v[i], v[i1], v[i], v[i1], p->kc2);
    s[1] += lull_rdfc_term(up, g[i2], v[i], v[i2], v[i], v[i2], p->kc2);
    s[2] += lull_rdfc_symmetric_term(up, g[i1], g[i2], v[i], v[i1], v[i2], v[i], v[i1], v[i2], p->kc2);
  }
  for (int k = 0; k < 3; ++k)
    t[k] = (float)(s[k] / p->gc);
}

static void ref_run_ff(const ref_ff* p)
{
  const int w = p->w, h = p->h, f = p->use_color ? p->patch : 0;
  const size_t n = (size_t)w * h;
  float* e[3];
  float* d[3];
  float* wc[2];
  for (int k = 0; k < 3; ++k) {
    e[k] = malloc(n * sizeof(float));
    d[k] = malloc(n * sizeof(float));
  }
  wc[0] = malloc(n * sizeof(float));
  wc[1] = malloc(n * sizeof(float));
  double* num = calloc(n * 6, sizeof(double));
  double* den = calloc(n, sizeof(double));
  double* n1 = calloc(n * 3, sizeof(double));
  double* w1s = calloc(n * 3, sizeof(double));
  double* var = calloc(n * 3, sizeof(double));
  for (size_t i = 0; i < n; ++i) {
    for (int b = 0; b < p->nb; ++b)
      for (int c = 0; c < p->nu; ++c)
        num[i * 6 + b * 3 + c] = p->u[b][c][i];
    den[i] = 1.0;
    if (p->out_var[0])
      for (int c = 0; c < 3; ++c)
        var[i * 3 + c] = p->uv[c][i];
  }
  const float inv_patch = 1.0f / (float)((2 * f + 1) * (2 * f + 1));
  for (int dy = 0; dy <= p->radius; ++dy)
    for (int dx = -p->radius; dx <= p->radius; ++dx) {
      if (dy == 0 && dx <= 0)
        continue;
      if (p->use_color) {
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            float t[3];
            ref_terms(p, at(x, y, w, h), at(x + dx, y + dy, w, h), at(x - dx, y - dy, w, h), 0.0f,
                      -1, t);
            for (int k = 0; k < 3; ++k)
              e[k][at(x, y, w, h)] = t[k];
          }
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x)
            for (int k = 0; k < 3; ++k)
              d[k][at(x, y, w, h)] = patch_mean(e[k], x, y, f, w, h);
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            const size_t i = at(x, y, w, h);
            const int both = x + dx >= 0 && x + dx < w && y + dy < h && x - dx >= 0 && x - dx < w && y - dy >= 0;
            lull_rdfc_symmetric_weights(d[0][i], d[1][i], d[2][i], both, &wc[0][i], &wc[1][i]);
          }
      }
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const int in1 = y + dy < h && x + dx >= 0 && x + dx < w;
          const int in2 = y - dy >= 0 && x - dx >= 0 && x - dx < w;
          if (!in1 && !in2)
            continue;
          const size_t i = at(x, y, w, h), i1 = at(x + dx, y + dy, w, h), i2 = at(x - dx, y - dy, w, h);
          float c1 = 1.0f, c2 = 1.0f, f1 = 1.0f, f2 = 1.0f;
          if (p->use_color) {
            c1 = patch_mean(wc[0], x, y, f, w, h);
            c2 = patch_mean(wc[1], x, y, f, w, h);
          }
          for (int j = 0, ch = 0; j < p->nfeat; ++j) {
            double s[3] = {0, 0, 0};
            const int c0 = ch;
            for (; ch < p->feature_end[j]; ++ch) {
              const float* fe = p->f[ch];
              const float* v = p->fv[ch];
              const float vp = lull_rdfc_feature_floor(p->tau, v[i], p->fg[ch][i]);
              const float v1 = lull_rdfc_feature_floor(p->tau, v[i1], p->fg[ch][i1]);
              const float v2 = lull_rdfc_feature_floor(p->tau, v[i2], p->fg[ch][i2]);
              s[0] += lull_rdfc_term(fe[i], fe[i1], v[i], v[i1], vp, v1, p->kf2);
              s[1] += lull_rdfc_term(fe[i], fe[i2], v[i], v[i2], vp, v2, p->kf2);
              s[2] += lull_rdfc_symmetric_term(fe[i], fe[i1], fe[i2], v[i], v[i1], v[i2], vp, v1, v2, p->kf2);
            }
            float a1, a2;
            const int k = ch - c0;
            lull_rdfc_symmetric_weights((float)(s[0] / k), (float)(s[1] / k), (float)(s[2] / k),
                                        in1 && in2, &a1, &a2);
            f1 = fminf(f1, a1);
            f2 = fminf(f2, a2);
          }
          const float w1 = in1 ? fminf(c1, f1) : 0.0f, w2 = in2 ? fminf(c2, f2) : 0.0f;
          for (int b = 0; b < p->nb; ++b)
            for (int c = 0; c < p->nu; ++c)
              num[i * 6 + b * 3 + c] += w1 * p->u[b][c][i1] + w2 * p->u[b][c][i2];
          den[i] += w1 + w2;
          if (p->out_var[0])
            for (int c = 0; c < 3; ++c)
              var[i * 3 + c] += w1 * w1 * p->uv[c][i1] + w2 * w2 * p->uv[c][i2];
          if (p->sure && p->use_color)
            for (int c = 0; c < 3; ++c) {
              /* eq. 3.16 as rdfc_cpu.c approximates it: the centre's own
               * terms of its patch distances, its own pair weight */
              const float dl = lull_rdfc_delta(p->g[c][i]);
              float t0[3], t1[3];
              ref_terms(p, i, i1, i2, 0.0f, -1, t0);
              ref_terms(p, i, i1, i2, dl, c, t1);
              const float share = inv_patch; /* t0, t1 are channel means already */
              float a1, a2;
              lull_rdfc_symmetric_weights(d[0][i] + (t1[0] - t0[0]) * share,
                                          d[1][i] + (t1[1] - t0[1]) * share,
                                          d[2][i] + (t1[2] - t0[2]) * share, in1 && in2, &a1, &a2);
              const float b1 = c1 + (a1 - wc[0][i]) * inv_patch, b2 = c2 + (a2 - wc[1][i]) * inv_patch;
              const float v1 = in1 ? fminf(b1, f1) : 0.0f, v2 = in2 ? fminf(b2, f2) : 0.0f;
              n1[i * 3 + c] += v1 * p->g[c][i1] + v2 * p->g[c][i2];
              w1s[i * 3 + c] += v1 + v2;
            }
        }
    }
  for (size_t i = 0; i < n; ++i) {
    for (int b = 0; b < p->nb; ++b)
      for (int c = 0; c < p->nu; ++c)
        p->out[b][c][i] = (float)(num[i * 6 + b * 3 + c] / den[i]);
    if (p->out_var[0])
      for (int c = 0; c < 3; ++c)
        p->out_var[c][i] = (float)(var[i * 3 + c] / (den[i] * den[i]));
    if (p->sure) {
      float sure = 0.0f, dsum = 0.0f;
      for (int c = 0; c < 3; ++c) {
        double fc = 0.0;
        for (int b = 0; b < p->nb; ++b)
          fc += num[i * 6 + b * 3 + c];
        fc /= den[i] * p->nb;
        const float up = p->g[c][i];
        const float dc = p->use_color ? lull_rdfc_derivative((float)fc, (float)n1[i * 3 + c],
                                                             (float)w1s[i * 3 + c], up,
                                                             lull_rdfc_delta(up))
                                      : (float)(1.0 / den[i]);
        sure += lull_rdfc_sure((float)fc, up, p->gv[c][i], dc);
        dsum += dc;
      }
      p->sure[i] = sure;
      p->deriv[i] = dsum;
    }
  }
  for (int k = 0; k < 3; ++k) {
    free(e[k]);
    free(d[k]);
  }
  free(wc[0]);
  free(wc[1]);
  free(num);
  free(den);
  free(n1);
  free(w1s);
  free(var);
}

/* 1/4 (a - b)^2 blurred by the 3-tap Gaussian, the edge repeated */
static void ref_two_buffer(const float* a, const float* b, float* out, int w, int h)
{
  const float s = LULL_RDFC_BLUR_SIDE, c0 = 1.0f - 2.0f * s;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double v = 0.0;
      for (int j = -1; j <= 1; ++j)
        for (int i = -1; i <= 1; ++i) {
          const size_t k = at(x + i, y + j, w, h);
          const double d = a[k] - b[k];
          v += (i ? s : c0) * (j ? s : c0) * 0.25 * d * d;
        }
      out[(size_t)y * w + x] = (float)v;
    }
}

/* mean over the window's part inside the image (lull_box_mean) */
static void ref_box_inside(const float* in, float* out, int r, int w, int h)
{
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double s = 0.0;
      int count = 0;
      for (int j = -r; j <= r; ++j)
        for (int i = -r; i <= r; ++i)
          if (x + i >= 0 && x + i < w && y + j >= 0 && y + j < h) {
            s += in[(size_t)(y + j) * w + x + i];
            ++count;
          }
      out[(size_t)y * w + x] = (float)(s / count);
    }
}

typedef struct inputs
{
  float *color, *a, *b, *variance, *albedo, *albedo_a, *albedo_b, *normal;
} inputs;

/* Planar copies of interleaved RGB. */
static void planar(const float* rgb, float* planes[3], int w, int h)
{
  for (size_t i = 0; i < (size_t)w * h; ++i)
    for (int c = 0; c < 3; ++c)
      planes[c][i] = rgb[3 * i + c];
}

/* The whole run of rdfc.h, plainly: inputScale 1, hdr, albedo and normal
 * (albedo in halves when feature_halves), halves or one buffer with its
 * variance; result interleaved RGB. */
static void ref_rdfc(const inputs* in, int halves, int feature_halves, int radius, float* result)
{
  const int w = W, h = H;
  const size_t n = (size_t)w * h;
  const lull_rdfc_params prm = lull_rdfc_default_params();
  enum { NP = 120 };
  float* P[NP];
  for (int k = 0; k < NP; ++k)
    P[k] = calloc(n, sizeof(float));
  float* const* ca = &P[0];
  float* const* cb = &P[3];
  float* const* c = &P[6];
  float* const* cv = &P[9];
  float* const* fa = &P[12];  /* albedo 3, normal 3 */
  float* const* fb = &P[18];
  float* const* fg = &P[24];  /* guides */
  float* const* fv = &P[30];
  float* const* fgr = &P[36];
  float* const* cand = &P[42]; /* 3 x 6 */
  float* const* ov = &P[60];   /* 3 x 3 */
  float* const* sure = &P[69];
  float* const* der = &P[72];
  float* const* err = &P[75];
  float* const* sel = &P[78];
  float* const* self = &P[81];
  float* const* p1 = &P[84];   /* 6, mean 3, var 3 */
  float* const* out = &P[96];  /* 6, var 3 */
  float* const* tmp = &P[105]; /* 6 */
  if (halves) {
    planar(in->a, (float**)ca, w, h);
    planar(in->b, (float**)cb, w, h);
    for (int k = 0; k < 3; ++k)
      for (size_t i = 0; i < n; ++i)
        c[k][i] = 0.5f * (ca[k][i] + cb[k][i]);
    for (int k = 0; k < 3; ++k) {
      ref_two_buffer(ca[k], cb[k], tmp[0], w, h);
      ref_box_inside(tmp[0], cv[k], LULL_RDFC_VARIANCE_BOX, w, h);
    }
  } else {
    planar(in->color, (float**)ca, w, h);
    planar(in->color, (float**)c, w, h);
    planar(in->variance, (float**)cv, w, h);
  }
  planar(feature_halves ? in->albedo_a : in->albedo, (float**)fa, w, h);
  planar(in->normal, (float**)fa + 3, w, h);
  if (feature_halves) {
    planar(in->albedo_b, (float**)fb, w, h);
    for (int k = 0; k < 3; ++k)
      for (size_t i = 0; i < n; ++i)
        fg[k][i] = 0.5f * (fa[k][i] + fb[k][i]);
    for (int k = 0; k < 3; ++k)
      ref_two_buffer(fa[k], fb[k], fv[k], w, h);
    ref_ff pf;
    memset(&pf, 0, sizeof pf);
    pf.w = w;
    pf.h = h;
    pf.nb = 2;
    pf.nu = 3;
    pf.use_color = 1;
    pf.gc = 3;
    pf.patch = LULL_RDFC_PREFILTER_PATCH;
    pf.radius = LULL_RDFC_PREFILTER_RADIUS;
    pf.kc2 = 1.0f;
    for (int k = 0; k < 3; ++k) {
      pf.u[0][k] = fa[k];
      pf.u[1][k] = fb[k];
      pf.g[k] = fg[k];
      pf.gv[k] = fv[k];
      pf.out[0][k] = tmp[k];
      pf.out[1][k] = tmp[3 + k];
    }
    ref_run_ff(&pf);
    for (int k = 0; k < 3; ++k) {
      for (size_t i = 0; i < n; ++i)
        fg[k][i] = 0.5f * (tmp[k][i] + tmp[3 + k][i]);
      ref_two_buffer(tmp[k], tmp[3 + k], fv[k], w, h);
    }
  } else {
    for (int k = 0; k < 3; ++k)
      memcpy(fg[k], fa[k], n * sizeof(float));
  }
  for (int k = 3; k < 6; ++k)
    memcpy(fg[k], fa[k], n * sizeof(float));
  for (int k = 0; k < 6; ++k)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        fgr[k][(size_t)y * w + x] =
            lull_rdfc_gradient2(fg[k][at(x - 1, y, w, h)], fg[k][at(x + 1, y, w, h)],
                                fg[k][at(x, y - 1, w, h)], fg[k][at(x, y + 1, w, h)]);
  const int nb = halves ? 2 : 1;
  static const int patch[3] = {LULL_RDFC_PATCH_R, LULL_RDFC_PATCH_G, LULL_RDFC_PATCH_B};
  for (int k = 0; k < 3; ++k) {
    ref_ff p;
    memset(&p, 0, sizeof p);
    p.w = w;
    p.h = h;
    p.nb = nb;
    p.nu = 3;
    p.use_color = k < 2;
    p.gc = 3;
    p.patch = patch[k];
    p.radius = radius;
    p.kc2 = prm.k_color * prm.k_color;
    p.kf2 = prm.k_feature * prm.k_feature;
    p.tau = k < 2 ? prm.tau : 0.1f * prm.tau;
    p.nf = 6;
    p.nfeat = 2;
    p.feature_end[0] = 3;
    p.feature_end[1] = 6;
    for (int j = 0; j < 6; ++j) {
      p.f[j] = fg[j];
      p.fv[j] = fv[j];
      p.fg[j] = fgr[j];
    }
    for (int j = 0; j < 3; ++j) {
      p.u[0][j] = ca[j];
      p.u[1][j] = cb[j];
      p.uv[j] = cv[j];
      p.g[j] = c[j];
      p.gv[j] = cv[j];
      p.out[0][j] = cand[6 * k + j];
      p.out[1][j] = cand[6 * k + 3 + j];
      if (!halves)
        p.out_var[j] = ov[3 * k + j];
    }
    p.sure = sure[k];
    p.deriv = der[k];
    ref_run_ff(&p);
  }
  for (int pass = 0; pass < 2; ++pass) {
    ref_ff p;
    memset(&p, 0, sizeof p);
    p.w = w;
    p.h = h;
    p.nb = 1;
    p.nu = 3;
    p.use_color = 1;
    p.gc = 3;
    p.kc2 = 1.0f;
    p.patch = pass ? LULL_RDFC_SELECT_PATCH : LULL_RDFC_SURE_PATCH;
    p.radius = pass ? LULL_RDFC_SELECT_RADIUS : LULL_RDFC_SURE_RADIUS;
    for (int j = 0; j < 3; ++j) {
      p.u[0][j] = pass ? sel[j] : sure[j];
      p.g[j] = c[j];
      p.gv[j] = cv[j];
      p.out[0][j] = pass ? self[j] : err[j];
    }
    ref_run_ff(&p);
    if (pass == 0)
      for (size_t i = 0; i < n; ++i) {
        const float e[3] = {err[0][i], err[1][i], err[2][i]};
        float s[3];
        lull_rdfc_select(e, der[0][i], der[1][i], s);
        for (int j = 0; j < 3; ++j)
          sel[j][i] = s[j];
      }
  }
  for (size_t i = 0; i < n; ++i) {
    float s[3], total = 0.0f;
    for (int k = 0; k < 3; ++k)
      total += s[k] = self[k][i];
    for (int k = 0; k < 3; ++k)
      s[k] /= total;
    for (int ch = 0; ch < 3; ++ch) {
      float v[2] = {0, 0}, sd = 0.0f;
      for (int k = 0; k < 3; ++k) {
        for (int b = 0; b < nb; ++b)
          v[b] += s[k] * cand[6 * k + 3 * b + ch][i];
        if (!halves)
          sd += s[k] * sqrtf(ov[3 * k + ch][i]);
      }
      p1[ch][i] = v[0];
      p1[3 + ch][i] = v[1];
      p1[6 + ch][i] = halves ? 0.5f * (v[0] + v[1]) : v[0];
      if (!halves)
        p1[9 + ch][i] = sd * sd;
    }
  }
  if (halves)
    for (int ch = 0; ch < 3; ++ch)
      ref_two_buffer(p1[ch], p1[3 + ch], p1[9 + ch], w, h);
  ref_ff p;
  memset(&p, 0, sizeof p);
  p.w = w;
  p.h = h;
  p.nb = nb;
  p.nu = 3;
  p.use_color = 1;
  p.gc = 3;
  p.patch = LULL_RDFC_SECOND_PATCH;
  p.radius = radius / 2 > 1 ? radius / 2 : 1;
  p.kc2 = prm.k_color * prm.k_color;
  for (int j = 0; j < 3; ++j) {
    p.u[0][j] = p1[j];
    p.u[1][j] = p1[3 + j];
    p.uv[j] = p1[9 + j];
    p.g[j] = p1[6 + j];
    p.gv[j] = p1[9 + j];
    p.out[0][j] = out[j];
    p.out[1][j] = out[3 + j];
    if (!halves)
      p.out_var[j] = out[6 + j];
  }
  ref_run_ff(&p);
  for (size_t i = 0; i < n; ++i)
    for (int ch = 0; ch < 3; ++ch)
      result[3 * i + ch] = halves ? 0.5f * (out[ch][i] + out[3 + ch][i]) : out[ch][i];
  for (int k = 0; k < NP; ++k)
    free(P[k]);
}

/* -- through the API ---------------------------------------------------------- */

static void inputs_make(inputs* in, unsigned seed, float noise)
{
  const size_t n = (size_t)W * H * 3;
  float** all[] = {&in->color, &in->a, &in->b, &in->variance, &in->albedo, &in->albedo_a, &in->albedo_b, &in->normal};
  for (size_t k = 0; k < sizeof all / sizeof *all; ++k)
    *all[k] = calloc(n, sizeof(float));
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const size_t i = (size_t)y * W + x;
      const int right = x > W / 2;
      for (int c = 0; c < 3; ++c) {
        const float base = (right ? 0.7f : 0.2f) + 0.02f * (float)c + 0.01f * (float)y;
        in->a[3 * i + c] = base + noise * (lull_test_random(&seed) - 0.5f);
        in->b[3 * i + c] = base + noise * (lull_test_random(&seed) - 0.5f);
        in->color[3 * i + c] = 0.5f * (in->a[3 * i + c] + in->b[3 * i + c]);
        in->variance[3 * i + c] = noise * noise / 24.0f;
        in->albedo[3 * i + c] = (right ? 0.8f : 0.3f) + 0.05f * lull_test_random(&seed);
        in->albedo_a[3 * i + c] = in->albedo[3 * i + c] + 0.05f * (lull_test_random(&seed) - 0.5f);
        in->albedo_b[3 * i + c] = in->albedo[3 * i + c] + 0.05f * (lull_test_random(&seed) - 0.5f);
        in->normal[3 * i + c] = c == 2 ? 1.0f : (y > H / 2 ? 0.3f : 0.0f);
      }
    }
}

static void inputs_free(inputs* in)
{
  free(in->color);
  free(in->a);
  free(in->b);
  free(in->variance);
  free(in->albedo);
  free(in->albedo_a);
  free(in->albedo_b);
  free(in->normal);
}

static void set(OIDNFilter f, const char* name, const float* data, int w, int h)
{
  oidnSetSharedFilterImage(f, name, (void*)data, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 0, 0, 0);
}

static OIDNError run(const inputs* in, int halves, int feature_halves, int radius, float* output,
                     int w, int h)
{
  OIDNFilter f = oidnNewFilter(device, "RDFC");
  if (halves) {
    set(f, "colorA", in->a, w, h);
    set(f, "colorB", in->b, w, h);
  } else {
    set(f, "color", in->color, w, h);
    set(f, "variance", in->variance, w, h);
  }
  if (feature_halves) {
    set(f, "albedoA", in->albedo_a, w, h);
    set(f, "albedoB", in->albedo_b, w, h);
  } else {
    set(f, "albedo", in->albedo, w, h);
  }
  set(f, "normal", in->normal, w, h);
  set(f, "output", output, w, h);
  oidnSetFilterInt(f, "radius", radius);
  oidnSetFilterFloat(f, "inputScale", 1.0f);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  oidnReleaseFilter(f);
  const char* message = NULL;
  const OIDNError e = oidnGetDeviceError(device, &message);
  if (e != OIDN_ERROR_NONE)
    fprintf(stderr, "RDFC: error %d: %s\n", (int)e, message ? message : "");
  return e;
}

static void test_equals_plain_implementation(void)
{
  inputs in;
  inputs_make(&in, 7u, 0.3f);
  float* lib = calloc((size_t)W * H * 3, sizeof(float));
  float* ref = calloc((size_t)W * H * 3, sizeof(float));
  const int cases[][2] = {{1, 0}, {1, 1}, {0, 0}};
  for (int k = 0; k < 3; ++k) {
    const int halves = cases[k][0], fh = cases[k][1], radius = 4;
    CHECK_EQ_INT(run(&in, halves, fh, radius, lib, W, H), OIDN_ERROR_NONE);
    ref_rdfc(&in, halves, fh, radius, ref);
    const double d = lull_test_max_abs_diff(lib, ref, (size_t)W * H * 3);
    const double moved = lull_test_max_abs_diff(lib, halves ? in.a : in.color, (size_t)W * H * 3);
    int differ = 0;
    for (size_t i = 0; i < (size_t)W * H * 3; ++i)
      differ += fabsf(lib[i] - ref[i]) > 1e-5f;
    printf("halves %d, feature halves %d: |lull - plain| %.3g at %d values (the filter moved values by up to %.3g)\n",
           halves, fh, d, differ, moved);
    /* float sums in another order (here in double): a near tie of the
     * SURE estimates could select another candidate at a pixel, which
     * these inputs do not have */
    CHECK(d < 1e-5);
    CHECK(differ == 0);
    CHECK(moved > 0.02); /* it filtered */
  }
  free(lib);
  free(ref);
  inputs_free(&in);
}

static void test_formulas(void)
{
  /* eq. 3.7: (d^2 - (V_p + min(V_p, V_q))) / (eps + k^2 (V_p + V_q)) */
  CHECK_NEAR(lull_rdfc_term(1.0f, 0.5f, 0.1f, 0.02f, 0.1f, 0.02f, 0.25f),
             (0.25 - 0.12) / (1e-10 + 0.25 * 0.12), 1e-5);
  /* equal values: the weight is 1 */
  CHECK_NEAR(lull_rdfc_weight(lull_rdfc_term(0.3f, 0.3f, 0.1f, 0.1f, 0.1f, 0.1f, 0.2f)), 1.0, 0.0);
  float w1, w2;
  /* far one-sided distances: no symmetric blend, whatever the symmetric one */
  lull_rdfc_symmetric_weights(30.0f, 1.0f, -1.0f, 1, &w1, &w2);
  CHECK_NEAR(w1, exp(-30.0), 1e-6);
  CHECK_NEAR(w2, exp(-1.0), 1e-6);
  /* a gradient: both sides differ, their mean matches: the blend is full */
  lull_rdfc_symmetric_weights(3.0f, 3.0f, 0.0f, 1, &w1, &w2);
  CHECK_NEAR(w1, 1.0, 1e-6);
  CHECK_NEAR(w2, 1.0, 1e-6);
  lull_rdfc_symmetric_weights(3.0f, 3.0f, 0.0f, 0, &w1, &w2);
  CHECK_NEAR(w1, exp(-3.0), 1e-6);
  /* the selection picks exactly one candidate */
  unsigned seed = 3u;
  for (int t = 0; t < 1000; ++t) {
    float e[3], s[3];
    for (int k = 0; k < 3; ++k)
      e[k] = (float)(int)(4.0f * lull_test_random(&seed)); /* ties too */
    lull_rdfc_select(e, lull_test_random(&seed), lull_test_random(&seed), s);
    CHECK_NEAR(s[0] + s[1] + s[2], 1.0, 0.0);
  }
  /* SURE of the identity (F = u, dF/du = 1) is the variance */
  CHECK_NEAR(lull_rdfc_sure(0.4f, 0.4f, 0.01f, 1.0f), 0.01, 1e-9);
}

static void test_constant_and_identical_halves(void)
{
  inputs in;
  inputs_make(&in, 11u, 0.0f); /* halves identical: no noise */
  float* out = calloc((size_t)W * H * 3, sizeof(float));
  CHECK_EQ_INT(run(&in, 1, 0, 5, out, W, H), OIDN_ERROR_NONE);
  CHECK(lull_test_max_abs_diff(out, in.a, (size_t)W * H * 3) < 1e-5);
  for (size_t i = 0; i < (size_t)W * H * 3; ++i) {
    in.a[i] = in.b[i] = 0.37f;
    in.color[i] = 0.37f;
  }
  for (int halves = 0; halves < 2; ++halves) {
    CHECK_EQ_INT(run(&in, halves, halves, 5, out, W, H), OIDN_ERROR_NONE);
    double worst = 0.0;
    for (size_t i = 0; i < (size_t)W * H * 3; ++i)
      worst = fmax(worst, fabs(out[i] - 0.37f));
    CHECK(worst < 1e-6);
  }
  free(out);
  inputs_free(&in);
}

static void test_threads_and_bad_pixels(void)
{
  inputs in;
  inputs_make(&in, 5u, 0.4f);
  float* a = calloc((size_t)W * H * 3, sizeof(float));
  float* b = calloc((size_t)W * H * 3, sizeof(float));
  CHECK_EQ_INT(run(&in, 1, 1, 6, a, W, H), OIDN_ERROR_NONE);
  OIDNDevice saved = device;
  device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnSetDeviceInt(device, "numThreads", 1);
  oidnCommitDevice(device);
  CHECK_EQ_INT(run(&in, 1, 1, 6, b, W, H), OIDN_ERROR_NONE);
  oidnReleaseDevice(device);
  device = saved;
  CHECK(lull_test_max_abs_diff(a, b, (size_t)W * H * 3) == 0.0);
  in.a[3 * 40] = NAN;
  in.b[3 * 41 + 1] = INFINITY;
  in.albedo_a[3 * 100] = -INFINITY;
  in.color[3 * 50 + 2] = NAN;
  in.variance[3 * 60] = INFINITY;
  for (int halves = 0; halves < 2; ++halves) {
    CHECK_EQ_INT(run(&in, halves, halves, 6, a, W, H), OIDN_ERROR_NONE);
    CHECK(lull_test_all_finite(a, (size_t)W * H * 3));
  }
  const int sizes[][2] = {{1, 1}, {2, 3}, {1, 17}};
  for (int k = 0; k < 3; ++k)
    for (int halves = 0; halves < 2; ++halves) {
      inputs_free(&in);
      inputs_make(&in, 9u, 0.2f);
      CHECK_EQ_INT(run(&in, halves, halves, 10, a, sizes[k][0], sizes[k][1]), OIDN_ERROR_NONE);
      CHECK(lull_test_all_finite(a, (size_t)sizes[k][0] * sizes[k][1] * 3));
    }
  free(a);
  free(b);
  inputs_free(&in);
}

static bool cancel_at_once(void* user, double done)
{
  (void)user;
  (void)done;
  return false;
}

static OIDNError commit_error(OIDNFilter f)
{
  oidnCommitFilter(f);
  const char* message = NULL;
  const OIDNError e = oidnGetDeviceError(device, &message);
  oidnReleaseFilter(f);
  return e;
}

static void test_errors(void)
{
  inputs in;
  inputs_make(&in, 1u, 0.2f);
  float* out = calloc((size_t)W * H * 3, sizeof(float));
  /* one buffer without its variance */
  OIDNFilter f = oidnNewFilter(device, "RDFC");
  set(f, "color", in.color, W, H);
  set(f, "output", out, W, H);
  CHECK_EQ_INT(commit_error(f), OIDN_ERROR_INVALID_OPERATION);
  /* one half */
  f = oidnNewFilter(device, "RDFC");
  set(f, "colorA", in.a, W, H);
  set(f, "output", out, W, H);
  CHECK_EQ_INT(commit_error(f), OIDN_ERROR_INVALID_OPERATION);
  /* a half of another size */
  f = oidnNewFilter(device, "RDFC");
  set(f, "colorA", in.a, W, H);
  set(f, "colorB", in.b, W - 1, H);
  set(f, "output", out, W, H);
  CHECK_EQ_INT(commit_error(f), OIDN_ERROR_INVALID_OPERATION);
  /* radius out of range */
  f = oidnNewFilter(device, "RDFC");
  set(f, "colorA", in.a, W, H);
  set(f, "colorB", in.b, W, H);
  set(f, "output", out, W, H);
  oidnSetFilterInt(f, "radius", 0);
  CHECK_EQ_INT(commit_error(f), OIDN_ERROR_INVALID_ARGUMENT);
  /* cancelled: OIDN's CANCELLED, the output untouched */
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    out[i] = -1.0f;
  f = oidnNewFilter(device, "RDFC");
  set(f, "colorA", in.a, W, H);
  set(f, "colorB", in.b, W, H);
  set(f, "output", out, W, H);
  oidnSetFilterProgressMonitorFunction(f, cancel_at_once, NULL);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  const char* message = NULL;
  CHECK_EQ_INT(oidnGetDeviceError(device, &message), OIDN_ERROR_CANCELLED);
  oidnReleaseFilter(f);
  CHECK(out[0] == -1.0f && out[3 * W * H - 1] == -1.0f);
  free(out);
  inputs_free(&in);
}

int main(void)
{
  device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  test_formulas();
  test_equals_plain_implementation();
  test_constant_and_identical_halves();
  test_threads_and_bad_pixels();
  test_errors();
  oidnReleaseDevice(device);
  return lull_test_result("rdfc_properties");
}
