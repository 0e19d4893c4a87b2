/* The RDFC filter on the CPU (rdfc.h says what a run does, rdfc_math.h
 * gives the formulas).
 *
 * Every step is one FEATUREFILTER (ff_run).  Schedule: threads take tiles
 * of TILE_W x TILE_H pixels; a tile loops over the window's offset pairs
 * (o, -o), and for each computes the colour distance terms of its pixels
 * and a margin of 2f (the pair terms, one-sided and symmetric), their
 * patch means (a box of radius f), the pair weights over a margin of f,
 * and their patch-wise mean (another box: §3.2.3), then adds both
 * neighbours to each pixel's sums.  Each distance term is computed once
 * per tile and offset instead of once per patch that holds it (the
 * reordering of §3.6), and the tile's scratch stays in the cache.
 *
 * Borders: a distance term of a pixel whose neighbour lies outside the
 * image reads the nearest pixel inside (the image's edge repeated), and
 * the boxes repeat the edge too; a neighbour outside the image gets
 * weight 0.  tests/filters/rdfc_properties.c holds a plain implementation
 * of the same definition, pixel by pixel. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atrous.h"
#include "feature_planes.h"
#include "planes.h"
#include "poisson_solver.h"
#include "rdfc.h"
#include "rdfc_math.h"
#include "regression_math.h"
#include "threads.h"

enum
{
  TILE_W = 64,
  TILE_H = 16,
  MAX_PATCH = 3, /* the largest f of the steps (rdfc.h) */
};

/* One FEATUREFILTER (§3.5): nb buffers of nu channels filtered with the
 * weights of the guide (colour weights, when use_color) and the features
 * (when nf > 0). */
typedef struct ff_problem
{
  int width, height, threads;
  int nb, nu;
  const float* u[2][3];   /* the data, per buffer */
  const float* uv[3];     /* the data's variance (one buffer, for out_var) */
  int use_color;
  int gc, patch;
  float kc2;
  const float* g[3];      /* the guide (the mean of the buffers) */
  const float* gv[3];     /* its variance */
  int nf;                 /* feature channels (0: no feature weights) */
  int nfeat;              /* features, and where each one's channels end */
  int feature_end[LULL_RDFC_MAX_FEATURES];
  float kf2, tau;
  const float* f[LULL_RDFC_MAX_FEATURE_CHANNELS];  /* prefiltered features */
  const float* fv[LULL_RDFC_MAX_FEATURE_CHANNELS]; /* their variance */
  const float* fg[LULL_RDFC_MAX_FEATURE_CHANNELS]; /* their squared gradient */
  int radius;
  float* out[2][3];
  float* sure;            /* optional (data = the guide's halves): SURE, eq. 3.15 */
  float* derivative;      /* optional, with sure: sum over channels of dF/du */
  float* out_var[3];      /* optional (one buffer): sum w^2 uv / (sum w)^2 */
} ff_problem;

static int clampi(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

/* Floats of one thread's scratch. */
static size_t ff_scratch_floats(void)
{
  const size_t ew = TILE_W + 4 * MAX_PATCH, eh = TILE_H + 4 * MAX_PATCH;
  const size_t dw = TILE_W + 2 * MAX_PATCH, dh = TILE_H + 2 * MAX_PATCH;
  const size_t t = (size_t)TILE_W * TILE_H;
  /* terms 3, the box's row sums 1, distances 3, weights 2, boxed 2; the
   * sums: 6 data, 1 weight, 6 derivative, 3 variance */
  return 4 * ew * eh + 5 * dw * dh + 2 * t + 16 * t;
}

/* out (ow x oh) = the mean over (2f + 1)^2 of in (ow + 2f x oh + 2f):
 * a box in the scratch's own coordinates.  tmp: ow x (oh + 2f). */
static void box(const float* in, int ow, int oh, int f, float* out, float* tmp)
{
  const int iw = ow + 2 * f, ih = oh + 2 * f;
  const float inv = 1.0f / (float)((2 * f + 1) * (2 * f + 1));
  for (int y = 0; y < ih; ++y) {
    const float* row = in + (size_t)y * (size_t)iw;
    float* t = tmp + (size_t)y * (size_t)ow;
    for (int x = 0; x < ow; ++x) {
      float s = 0.0f;
      for (int k = 0; k <= 2 * f; ++k)
        s += row[x + k];
      t[x] = s;
    }
  }
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x) {
      float s = 0.0f;
      for (int k = 0; k <= 2 * f; ++k)
        s += tmp[(size_t)(y + k) * (size_t)ow + (size_t)x];
      out[(size_t)y * (size_t)ow + (size_t)x] = s * inv;
    }
}

/* The colour terms of pixel i against i1 = i + o and i2 = i - o: the
 * channel means of the one-sided (eq. 3.7) and symmetric (eq. 3.9)
 * distances. */
static void color_terms(const ff_problem* p, size_t i, size_t i1, size_t i2, float* t1, float* t2,
                        float* ts)
{
  float s1 = 0.0f, s2 = 0.0f, ss = 0.0f;
  for (int c = 0; c < p->gc; ++c) {
    const float* g = p->g[c];
    const float* v = p->gv[c];
    s1 += lull_rdfc_term(g[i], g[i1], v[i], v[i1], v[i], v[i1], p->kc2);
    s2 += lull_rdfc_term(g[i], g[i2], v[i], v[i2], v[i], v[i2], p->kc2);
    ss += lull_rdfc_symmetric_term(g[i], g[i1], g[i2], v[i], v[i1], v[i2], v[i], v[i1], v[i2],
                                   p->kc2);
  }
  const float inv = 1.0f / (float)p->gc;
  *t1 = s1 * inv;
  *t2 = s2 * inv;
  *ts = ss * inv;
}

/* The feature weights of q1 = i1 and q2 = i2 for centre i: per feature
 * the symmetric blend of its pair weights (eq. 3.10-3.12, §3.2.4), the
 * smallest over the features (eq. 3.13). */
static void feature_weights(const ff_problem* p, size_t i, size_t i1, size_t i2, int both_inside,
                            float* w1, float* w2)
{
  float m1 = 1.0f, m2 = 1.0f;
  int c = 0;
  for (int j = 0; j < p->nfeat; ++j) {
    float s1 = 0.0f, s2 = 0.0f, ss = 0.0f;
    const int c0 = c;
    for (; c < p->feature_end[j]; ++c) {
      const float* f = p->f[c];
      const float* v = p->fv[c];
      const float* g = p->fg[c];
      const float vp = lull_rdfc_feature_floor(p->tau, v[i], g[i]);
      const float v1 = lull_rdfc_feature_floor(p->tau, v[i1], g[i1]);
      const float v2 = lull_rdfc_feature_floor(p->tau, v[i2], g[i2]);
      s1 += lull_rdfc_term(f[i], f[i1], v[i], v[i1], vp, v1, p->kf2);
      s2 += lull_rdfc_term(f[i], f[i2], v[i], v[i2], vp, v2, p->kf2);
      ss += lull_rdfc_symmetric_term(f[i], f[i1], f[i2], v[i], v[i1], v[i2], vp, v1, v2, p->kf2);
    }
    const float inv = 1.0f / (float)(c - c0);
    float a1, a2;
    lull_rdfc_symmetric_weights(s1 * inv, s2 * inv, ss * inv, both_inside, &a1, &a2);
    m1 = fminf(m1, a1);
    m2 = fminf(m2, a2);
  }
  *w1 = m1;
  *w2 = m2;
}

static void ff_tile(const ff_problem* p, int t, float* scratch)
{
  const int W = p->width, H = p->height, R = p->radius;
  const int f = p->use_color ? p->patch : 0;
  const int tiles_x = (W + TILE_W - 1) / TILE_W;
  const int x0 = (t % tiles_x) * TILE_W, y0 = (t / tiles_x) * TILE_H;
  const int tw = LULL_MIN(TILE_W, W - x0), th = LULL_MIN(TILE_H, H - y0);
  const int ew = tw + 4 * f, eh = th + 4 * f, dw = tw + 2 * f, dh = th + 2 * f;
  const size_t ne = (size_t)(TILE_W + 4 * MAX_PATCH) * (TILE_H + 4 * MAX_PATCH);
  const size_t nd = (size_t)(TILE_W + 2 * MAX_PATCH) * (TILE_H + 2 * MAX_PATCH);
  const size_t nt = (size_t)TILE_W * TILE_H;
  float* e[3] = {scratch, scratch + ne, scratch + 2 * ne};
  float* rows = scratch + 3 * ne;
  float* d[3] = {scratch + 4 * ne, scratch + 4 * ne + nd, scratch + 4 * ne + 2 * nd};
  float* wc[2] = {scratch + 4 * ne + 3 * nd, scratch + 4 * ne + 4 * nd};
  float* wb[2] = {scratch + 4 * ne + 5 * nd, scratch + 4 * ne + 5 * nd + nt};
  float* acc = scratch + 4 * ne + 5 * nd + 2 * nt;
  float* num = acc;            /* 6: buffer b, channel c at (b * 3 + c) */
  float* den = acc + 6 * nt;
  float* n1 = acc + 7 * nt;    /* 3: the derivative's sums */
  float* w1s = acc + 10 * nt;  /* 3 */
  float* var = acc + 13 * nt;  /* 3 */
  const int want_d = p->sure != NULL && p->use_color;
  const float inv_patch = 1.0f / (float)((2 * f + 1) * (2 * f + 1));
  const float inv_gc = p->use_color ? 1.0f / (float)p->gc : 0.0f;

  /* the centre: weight 1 (its distances are at most 0) */
  for (int ty = 0; ty < th; ++ty)
    for (int tx = 0; tx < tw; ++tx) {
      const size_t k = (size_t)ty * (size_t)tw + (size_t)tx;
      const size_t i = (size_t)(y0 + ty) * (size_t)W + (size_t)(x0 + tx);
      for (int b = 0; b < p->nb; ++b)
        for (int c = 0; c < p->nu; ++c)
          num[(size_t)(b * 3 + c) * nt + k] = p->u[b][c][i];
      den[k] = 1.0f;
      for (int c = 0; c < 3; ++c) {
        n1[c * nt + k] = 0.0f;
        w1s[c * nt + k] = 0.0f;
        var[c * nt + k] = p->out_var[0] ? p->uv[c][i] : 0.0f;
      }
    }

  for (int dy = 0; dy <= R; ++dy)
    for (int dx = -R; dx <= R; ++dx) {
      if (dy == 0 && dx <= 0)
        continue;
      if (p->use_color) {
        /* terms over the tile and a margin of 2f, at the nearest pixel inside */
        for (int y = 0; y < eh; ++y) {
          const int yy = clampi(y0 - 2 * f + y, 0, H - 1);
          const int y1 = clampi(yy + dy, 0, H - 1), y2 = clampi(yy - dy, 0, H - 1);
          for (int x = 0; x < ew; ++x) {
            const int xx = clampi(x0 - 2 * f + x, 0, W - 1);
            const int x1 = clampi(xx + dx, 0, W - 1), x2 = clampi(xx - dx, 0, W - 1);
            const size_t k = (size_t)y * (size_t)ew + (size_t)x;
            color_terms(p, (size_t)yy * W + xx, (size_t)y1 * W + x1, (size_t)y2 * W + x2,
                        &e[0][k], &e[1][k], &e[2][k]);
          }
        }
        for (int s = 0; s < 3; ++s)
          box(e[s], dw, dh, f, d[s], rows);
        /* pair weights over a margin of f: those of the nearest pixel inside */
        for (int y = 0; y < dh; ++y) {
          const int yy = clampi(y0 - f + y, 0, H - 1);
          for (int x = 0; x < dw; ++x) {
            const int xx = clampi(x0 - f + x, 0, W - 1);
            const size_t k = (size_t)(yy - (y0 - f)) * (size_t)dw + (size_t)(xx - (x0 - f));
            const int both = xx + dx >= 0 && xx + dx < W && yy + dy < H && xx - dx >= 0 &&
                             xx - dx < W && yy - dy >= 0;
            lull_rdfc_symmetric_weights(d[0][k], d[1][k], d[2][k], both,
                                        &wc[0][(size_t)y * dw + x], &wc[1][(size_t)y * dw + x]);
          }
        }
        box(wc[0], tw, th, f, wb[0], rows);
        box(wc[1], tw, th, f, wb[1], rows);
      }
      for (int ty = 0; ty < th; ++ty) {
        const int y = y0 + ty;
        const int in1y = y + dy < H, in2y = y - dy >= 0;
        for (int tx = 0; tx < tw; ++tx) {
          const int x = x0 + tx;
          const int in1 = in1y && x + dx >= 0 && x + dx < W;
          const int in2 = in2y && x - dx >= 0 && x - dx < W;
          if (!in1 && !in2)
            continue;
          const size_t k = (size_t)ty * (size_t)tw + (size_t)tx;
          const size_t i = (size_t)y * W + x;
          const size_t i1 = (size_t)clampi(y + dy, 0, H - 1) * W + (size_t)clampi(x + dx, 0, W - 1);
          const size_t i2 = (size_t)clampi(y - dy, 0, H - 1) * W + (size_t)clampi(x - dx, 0, W - 1);
          float c1 = 1.0f, c2 = 1.0f, f1 = 1.0f, f2 = 1.0f;
          if (p->use_color) {
            c1 = wb[0][k];
            c2 = wb[1][k];
          }
          if (p->nf)
            feature_weights(p, i, i1, i2, in1 && in2, &f1, &f2);
          const float w1 = in1 ? fminf(c1, f1) : 0.0f, w2 = in2 ? fminf(c2, f2) : 0.0f;
          for (int b = 0; b < p->nb; ++b)
            for (int c = 0; c < p->nu; ++c)
              num[(size_t)(b * 3 + c) * nt + k] += w1 * p->u[b][c][i1] + w2 * p->u[b][c][i2];
          den[k] += w1 + w2;
          if (p->out_var[0])
            for (int c = 0; c < 3; ++c)
              var[c * nt + k] += w1 * w1 * p->uv[c][i1] + w2 * w2 * p->uv[c][i2];
          if (want_d) {
            /* eq. 3.16: the centre's value of channel c moved by delta
             * changes its own term of each patch distance (a share
             * inv_patch inv_gc) and its own pair weight (a share inv_patch
             * of the patch-wise weight) */
            const size_t kd = (size_t)(ty + f) * (size_t)dw + (size_t)(tx + f);
            const int both = in1 && in2;
            for (int c = 0; c < 3; ++c) {
              const float* g = p->g[c];
              const float* v = p->gv[c];
              const float up = g[i], dl = lull_rdfc_delta(up);
              const float o1 = lull_rdfc_term(up, g[i1], v[i], v[i1], v[i], v[i1], p->kc2);
              const float o2 = lull_rdfc_term(up, g[i2], v[i], v[i2], v[i], v[i2], p->kc2);
              const float os = lull_rdfc_symmetric_term(up, g[i1], g[i2], v[i], v[i1], v[i2], v[i],
                                                        v[i1], v[i2], p->kc2);
              const float m1 = lull_rdfc_term(up + dl, g[i1], v[i], v[i1], v[i], v[i1], p->kc2);
              const float m2 = lull_rdfc_term(up + dl, g[i2], v[i], v[i2], v[i], v[i2], p->kc2);
              const float ms = lull_rdfc_symmetric_term(up + dl, g[i1], g[i2], v[i], v[i1], v[i2],
                                                        v[i], v[i1], v[i2], p->kc2);
              const float share = inv_patch * inv_gc;
              float a1, a2;
              lull_rdfc_symmetric_weights(d[0][kd] + (m1 - o1) * share, d[1][kd] + (m2 - o2) * share,
                                          d[2][kd] + (ms - os) * share, both, &a1, &a2);
              const float b1 = wb[0][k] + (a1 - wc[0][kd]) * inv_patch;
              const float b2 = wb[1][k] + (a2 - wc[1][kd]) * inv_patch;
              const float v1 = in1 ? fminf(b1, f1) : 0.0f, v2 = in2 ? fminf(b2, f2) : 0.0f;
              n1[c * nt + k] += v1 * g[i1] + v2 * g[i2];
              w1s[c * nt + k] += v1 + v2;
            }
          }
        }
      }
    }

  /* results */
  for (int ty = 0; ty < th; ++ty)
    for (int tx = 0; tx < tw; ++tx) {
      const size_t k = (size_t)ty * (size_t)tw + (size_t)tx;
      const size_t i = (size_t)(y0 + ty) * (size_t)W + (size_t)(x0 + tx);
      const float inv = 1.0f / den[k];
      for (int b = 0; b < p->nb; ++b)
        for (int c = 0; c < p->nu; ++c)
          p->out[b][c][i] = num[(size_t)(b * 3 + c) * nt + k] * inv;
      if (p->out_var[0])
        for (int c = 0; c < 3; ++c)
          p->out_var[c][i] = var[c * nt + k] * inv * inv;
      if (p->sure) {
        float sure = 0.0f, dsum = 0.0f;
        for (int c = 0; c < 3; ++c) {
          float fc = 0.0f;
          for (int b = 0; b < p->nb; ++b)
            fc += num[(size_t)(b * 3 + c) * nt + k];
          fc *= inv / (float)p->nb;
          const float up = p->g[c][i];
          const float dc = want_d ? lull_rdfc_derivative(fc, n1[c * nt + k], w1s[c * nt + k], up,
                                                         lull_rdfc_delta(up))
                                  : inv;
          sure += lull_rdfc_sure(fc, up, p->gv[c][i], dc);
          dsum += dc;
        }
        p->sure[i] = sure;
        p->derivative[i] = dsum;
      }
    }
}

/* Runs one FEATUREFILTER over the image, threads taking tiles. */
static lull_status ff_run(const ff_problem* p, float* scratch, const lull_progress_span* span,
                          lull_error* err)
{
  const int tiles_x = (p->width + TILE_W - 1) / TILE_W;
  const int tiles_y = (p->height + TILE_H - 1) / TILE_H;
  const size_t per_thread = ff_scratch_floats();
  /* rows of tiles between progress reports: a few per thread */
  const int step = LULL_MAX(1, 2 * p->threads / LULL_MAX(1, tiles_x));
  for (int r0 = 0; r0 < tiles_y; r0 += step) {
    const int r1 = LULL_MIN(tiles_y, r0 + step);
#pragma omp parallel for schedule(dynamic, 1) num_threads(p->threads)
    for (int t = r0 * tiles_x; t < r1 * tiles_x; ++t)
      ff_tile(p, t, scratch + (size_t)lull_thread_index() * per_thread);
    const lull_status status = lull_progress_span_report(span, (double)r1 / tiles_y, err);
    if (status != LULL_OK)
      return status;
  }
  return LULL_OK;
}

/* -- the run ------------------------------------------------------------------ */

/* Working planes. */
enum
{
  P_CA = 0,     /* colour A, or the one buffer */
  P_CB = 3,     /* colour B */
  P_C = 6,      /* the colour guide: the mean of the halves */
  P_CV = 9,     /* its variance */
  P_ALPHA = 12, /* the 4th colour channel */
  P_TMP = 13,   /* 6 planes of scratch */
  P_FA = 19,    /* features of A (or given once), up to 9 */
  P_FB = 28,    /* features of B */
  P_F = 37,     /* the prefiltered features */
  P_FV = 46,    /* their variance */
  P_FG = 55,    /* their squared gradient */
  P_CAND = 64,  /* candidates r, g, b: 6 planes each (buffer A 3, B 3) */
  P_SURE = 82,  /* the candidates' SURE, 3 */
  P_D = 85,     /* their derivative terms, 3 */
  P_OV = 88,    /* one buffer: their variances, 3 each */
  P_E = 97,     /* the smoothed errors, 3 */
  P_SEL = 100,  /* the selection maps, 3; smoothed: 3 */
  P_PASS1 = 106, /* the blend, 6; its mean 3, variance 3 */
  P_OUT = 118,  /* the second pass, 6; one buffer: its variance 3 */
  P_COUNT = 127,
};

lull_rdfc_params lull_rdfc_default_params(void)
{
  lull_rdfc_params p;
  p.radius = 10;
  p.k_color = 0.45f;
  p.k_feature = 0.6f;
  p.tau = 1e-3f;
  p.second_pass = 1;
  p.hdr = 1;
  p.srgb = 0;
  p.nonnegative = 0;
  p.input_scale = NAN;
  return p;
}

static int has(const lull_image* image)
{
  return image->data != NULL;
}

lull_status lull_rdfc_validate(const lull_rdfc_params* params, const lull_rdfc_images* images,
                               lull_error* err)
{
  const lull_status status = lull_regression_validate_images(images, 1, err);
  if (status != LULL_OK)
    return status;
  if (!lull_regression_has_halves(images) && !has(&images->variance))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "RDFC needs the colour's variance: give 'variance' with 'color', or the "
                     "halves 'colorA' and 'colorB'");
  if (!(params->radius >= 1 && params->radius <= 32))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid radius (1 to 32)");
  if (!(params->k_color > 0.0f && params->k_feature > 0.0f && params->tau >= 0.0f &&
        isfinite(params->k_color) && isfinite(params->k_feature) && isfinite(params->tau)))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT,
                     "colorSensitivity and featureSensitivity must be positive, tau not negative");
  if (params->srgb && params->hdr)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "hdr and srgb modes cannot be enabled at the same time");
  if (!isnan(params->input_scale) &&
      !(params->input_scale >= FLT_MIN && isfinite(params->input_scale)))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT,
                     "inputScale must be a normal positive finite float");
  return LULL_OK;
}

int lull_rdfc_reach(const lull_rdfc_params* params)
{
  /* a FEATUREFILTER of radius r and patch f reads r + 2f; each variance
   * blur and the gradient 1; the sample variance's scaling its box */
  const int prefilter = LULL_RDFC_PREFILTER_RADIUS + 2 * LULL_RDFC_PREFILTER_PATCH + 2;
  const int candidates = params->radius + 2 * LULL_RDFC_PATCH_G + 1;
  const int select = LULL_RDFC_SURE_RADIUS + 2 * LULL_RDFC_SURE_PATCH +
                     LULL_RDFC_SELECT_RADIUS + 2 * LULL_RDFC_SELECT_PATCH;
  const int second = LULL_MAX(1, params->radius / 2) + 2 * LULL_RDFC_SECOND_PATCH + 2;
  return LULL_RDFC_SCALE_RADIUS + prefilter + candidates + select + second;
}

size_t lull_rdfc_cpu_memory(const lull_rdfc_images* images, int width, int height,
                            int num_threads)
{
  (void)images;
  const size_t n = (size_t)width * (size_t)height;
  return (P_COUNT * n + ff_scratch_floats() * (size_t)lull_thread_count(num_threads)) *
         sizeof(float);
}

/* A run's planes and sizes. */
typedef struct rdfc_run
{
  const lull_rdfc_params* params;
  int width, height, threads;
  size_t n;
  float* P[P_COUNT];
  float* scratch;
} rdfc_run;

/* out = 1/4 (a - b)^2, blurred by the Gaussian of sigma 0.5 (TWOBUFFERVAR);
 * tmp: one plane. */
static void two_buffer_variance(const rdfc_run* r, const float* a, const float* b, float* out,
                                float* tmp)
{
  const int W = r->width, H = r->height;
  const float side = LULL_RDFC_BLUR_SIDE, centre = 1.0f - 2.0f * side;
#pragma omp parallel for schedule(static) num_threads(r->threads)
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const size_t i = (size_t)y * W + x;
      float s = 0.0f;
      for (int k = -1; k <= 1; ++k) {
        const size_t j = (size_t)y * W + (size_t)clampi(x + k, 0, W - 1);
        const float d = a[j] - b[j];
        s += (k ? side : centre) * 0.25f * d * d;
      }
      tmp[i] = s;
    }
#pragma omp parallel for schedule(static) num_threads(r->threads)
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      float s = 0.0f;
      for (int k = -1; k <= 1; ++k)
        s += (k ? side : centre) * tmp[(size_t)clampi(y + k, 0, H - 1) * W + x];
      out[(size_t)y * W + x] = s;
    }
}

static ff_problem ff_of(const rdfc_run* r)
{
  ff_problem p;
  memset(&p, 0, sizeof p);
  p.width = r->width;
  p.height = r->height;
  p.threads = r->threads;
  return p;
}

/* The colour's variance (step 1) into P_CV. */
static void color_variance(const rdfc_run* r, const lull_rdfc_images* im, int halves, float scale)
{
  float* const* P = r->P;
  const size_t n = r->n;
  const int W = r->width, H = r->height;
  float* given[3] = {P[P_TMP + 3], P[P_TMP + 4], P[P_TMP + 5]};
  if (has(&im->variance)) {
    const int vc = lull_format_channels(im->variance.format);
    lull_fp_load_planes(&im->variance, given, vc, 0, r->threads);
    for (int c = vc; c < 3; ++c)
      memcpy(given[c], given[0], n * sizeof(float));
    const float s2 = scale * scale;
    for (int c = 0; c < 3; ++c) {
      for (size_t i = 0; i < n; ++i)
        given[c][i] = isfinite(given[c][i]) ? fmaxf(given[c][i], 0.0f) * s2 : NAN;
      lull_fp_repair(given[c], W, H);
    }
  }
  if (!halves) {
    for (int c = 0; c < 3; ++c)
      memcpy(P[P_CV + c], given[c], n * sizeof(float));
    return;
  }
  for (int c = 0; c < 3; ++c) {
    if (!has(&im->variance)) {
      /* no sample variance to scale: the two-buffer variance itself,
       * averaged over a box (one estimate a pixel is too noisy for the
       * weights' denominators: relMSE 2x on the test renders) */
      two_buffer_variance(r, P[P_CA + c], P[P_CB + c], P[P_TMP + 1], P[P_TMP]);
      lull_box_mean(W, H, P[P_TMP + 1], P[P_CV + c], P[P_TMP], LULL_RDFC_VARIANCE_BOX, 0, W, 0,
                    H, r->threads);
      continue;
    }
    /* SCALESAMPLEVAR: the given variance, scaled by the ratio of the
     * two-buffer variance's and its own means over 21 x 21 boxes */
    float* tb = P[P_TMP];
    for (size_t i = 0; i < n; ++i) {
      const float d = P[P_CA + c][i] - P[P_CB + c][i];
      tb[i] = 0.25f * d * d;
    }
    float* tb_mean = P[P_TMP + 1];
    float* given_mean = P[P_TMP + 2];
    lull_box_mean(W, H, tb, tb_mean, P[P_CV + c], LULL_RDFC_SCALE_RADIUS, 0, W, 0, H, r->threads);
    lull_box_mean(W, H, given[c], given_mean, P[P_CV + c], LULL_RDFC_SCALE_RADIUS, 0, W, 0, H,
                  r->threads);
    for (size_t i = 0; i < n; ++i)
      P[P_CV + c][i] = given_mean[i] > 0.0f ? given[c][i] * (tb_mean[i] / given_mean[i])
                                            : tb_mean[i];
  }
}

/* The features of a run: how many, and where each one's channels end
 * (albedo 3, normal 3, depth 1 or position 3, those present). */
static int feature_layout(const lull_rdfc_images* im, int feature_end[LULL_RDFC_MAX_FEATURES])
{
  const lull_regression_features fa = lull_regression_half_features(im, 0);
  const int channels[LULL_RDFC_MAX_FEATURES] = {
      has(fa.albedo) ? 3 : 0, has(fa.normal) ? 3 : 0,
      has(fa.depth) ? 1 : (has(fa.position) ? 3 : 0)};
  int nfeat = 0, end = 0;
  for (int j = 0; j < LULL_RDFC_MAX_FEATURES; ++j)
    if (channels[j]) {
      end += channels[j];
      feature_end[nfeat++] = end;
    }
  return nfeat;
}

/* Step 2: the feature guides P_F, their variance P_FV and squared
 * gradient P_FG; feature halves prefiltered (§3.3.1). */
static lull_status feature_guides(const rdfc_run* r, const lull_rdfc_images* im, int nf,
                                  int feature_halves, const lull_progress_span* span,
                                  lull_error* err)
{
  float* const* P = r->P;
  const size_t n = r->n;
  const int W = r->width, H = r->height;
  int feature_end[LULL_RDFC_MAX_FEATURES];
  const int nfeat = feature_layout(im, feature_end);
  for (int j = 0, c0 = 0; j < nfeat; c0 = feature_end[j++]) {
    const int channels = feature_end[j] - c0;
    const int shared = !feature_halves || lull_regression_feature_shared(im, c0);
    if (shared) {
      for (int c = c0; c < c0 + channels; ++c) {
        memcpy(P[P_F + c], P[P_FA + c], n * sizeof(float));
        memset(P[P_FV + c], 0, n * sizeof(float));
      }
    } else {
      /* guide: the mean of the halves, its variance theirs */
      for (int c = c0; c < c0 + channels; ++c) {
        for (size_t i = 0; i < n; ++i)
          P[P_F + c][i] = 0.5f * (P[P_FA + c][i] + P[P_FB + c][i]);
        two_buffer_variance(r, P[P_FA + c], P[P_FB + c], P[P_FV + c], P[P_TMP]);
      }
      ff_problem p = ff_of(r);
      p.nb = 2;
      p.nu = channels;
      p.use_color = 1;
      p.gc = channels;
      p.patch = LULL_RDFC_PREFILTER_PATCH;
      p.kc2 = LULL_RDFC_PREFILTER_K * LULL_RDFC_PREFILTER_K;
      p.radius = LULL_RDFC_PREFILTER_RADIUS;
      for (int c = 0; c < channels; ++c) {
        p.u[0][c] = P[P_FA + c0 + c];
        p.u[1][c] = P[P_FB + c0 + c];
        p.g[c] = P[P_F + c0 + c];
        p.gv[c] = P[P_FV + c0 + c];
        p.out[0][c] = P[P_TMP + c];
        p.out[1][c] = P[P_TMP + 3 + c];
      }
      const lull_progress_span sub = lull_progress_subspan(span, (double)c0 / nf,
                                                           (double)(c0 + channels) / nf);
      const lull_status status = ff_run(&p, r->scratch, &sub, err);
      if (status != LULL_OK)
        return status;
      for (int c = 0; c < channels; ++c) {
        float* a = P[P_TMP + c];
        float* b = P[P_TMP + 3 + c];
        for (size_t i = 0; i < n; ++i)
          P[P_F + c0 + c][i] = 0.5f * (a[i] + b[i]);
        /* the halves' difference into b's plane, a's plane the blur's scratch */
        two_buffer_variance(r, a, b, P[P_FV + c0 + c], P[P_CAND]);
      }
    }
  }
#pragma omp parallel for schedule(static) num_threads(r->threads)
  for (int y = 0; y < H; ++y)
    for (int c = 0; c < nf; ++c) {
      const float* f = P[P_F + c];
      for (int x = 0; x < W; ++x) {
        const size_t row = (size_t)y * W;
        P[P_FG + c][row + x] = lull_rdfc_gradient2(
            f[row + clampi(x - 1, 0, W - 1)], f[row + clampi(x + 1, 0, W - 1)],
            f[(size_t)clampi(y - 1, 0, H - 1) * W + x], f[(size_t)clampi(y + 1, 0, H - 1) * W + x]);
      }
    }
  return LULL_OK;
}

/* A filter of a few planes (errors, selection maps) guided by the colour
 * (k_c 1, no features): NL-means. */
static lull_status smooth_planes(const rdfc_run* r, float* const in[3], float* const out[3],
                                 int patch, int radius, const lull_progress_span* span,
                                 lull_error* err)
{
  float* const* P = r->P;
  ff_problem p = ff_of(r);
  p.nb = 1;
  p.nu = 3;
  p.use_color = 1;
  p.gc = 3;
  p.patch = patch;
  p.kc2 = 1.0f;
  p.radius = radius;
  for (int c = 0; c < 3; ++c) {
    p.u[0][c] = in[c];
    p.g[c] = P[P_C + c];
    p.gv[c] = P[P_CV + c];
    p.out[0][c] = out[c];
  }
  return ff_run(&p, r->scratch, span, err);
}

static lull_status run(const rdfc_run* r, const lull_rdfc_images* im, int halves, int nf,
                       const lull_progress_span* span, lull_error* err)
{
  const lull_rdfc_params* params = r->params;
  float* const* P = r->P;
  const size_t n = r->n;
  const int nb = halves ? 2 : 1;
  int feature_end[LULL_RDFC_MAX_FEATURES];
  const int nfeat = feature_layout(im, feature_end);
  lull_progress_span s = lull_progress_subspan(span, 0.0, 0.15);
  lull_status status =
      feature_guides(r, im, nf, lull_regression_feature_halves(im), &s, err);
  if (status != LULL_OK)
    return status;

  /* step 3: the candidates */
  static const int patch[3] = {LULL_RDFC_PATCH_R, LULL_RDFC_PATCH_G, LULL_RDFC_PATCH_B};
  for (int k = 0; k < 3; ++k) {
    ff_problem p = ff_of(r);
    p.nb = nb;
    p.nu = 3;
    p.use_color = k < 2;
    p.gc = 3;
    p.patch = patch[k];
    p.kc2 = params->k_color * params->k_color;
    p.nf = nf;
    p.nfeat = nfeat;
    memcpy(p.feature_end, feature_end, sizeof feature_end);
    p.kf2 = params->k_feature * params->k_feature;
    p.tau = k < 2 ? params->tau : 0.1f * params->tau;
    for (int c = 0; c < nf; ++c) {
      p.f[c] = P[P_F + c];
      p.fv[c] = P[P_FV + c];
      p.fg[c] = P[P_FG + c];
    }
    p.radius = params->radius;
    for (int c = 0; c < 3; ++c) {
      p.u[0][c] = P[P_CA + c];
      p.u[1][c] = P[P_CB + c];
      p.uv[c] = P[P_CV + c];
      p.g[c] = P[P_C + c];
      p.gv[c] = P[P_CV + c];
      p.out[0][c] = P[P_CAND + 6 * k + c];
      p.out[1][c] = P[P_CAND + 6 * k + 3 + c];
      if (!halves)
        p.out_var[c] = P[P_OV + 3 * k + c];
    }
    p.sure = P[P_SURE + k];
    p.derivative = P[P_D + k];
    s = lull_progress_subspan(span, 0.15 + 0.2 * k, 0.35 + 0.2 * k);
    status = ff_run(&p, r->scratch, &s, err);
    if (status != LULL_OK)
      return status;
  }

  /* step 4: errors smoothed, the selection, smoothed, the blend */
  {
    float* const in[3] = {P[P_SURE], P[P_SURE + 1], P[P_SURE + 2]};
    float* const out[3] = {P[P_E], P[P_E + 1], P[P_E + 2]};
    s = lull_progress_subspan(span, 0.75, 0.77);
    status = smooth_planes(r, in, out, LULL_RDFC_SURE_PATCH, LULL_RDFC_SURE_RADIUS, &s, err);
    if (status != LULL_OK)
      return status;
  }
  for (size_t i = 0; i < n; ++i) {
    const float e[3] = {P[P_E][i], P[P_E + 1][i], P[P_E + 2][i]};
    float sel[3];
    lull_rdfc_select(e, P[P_D][i], P[P_D + 1][i], sel);
    for (int k = 0; k < 3; ++k)
      P[P_SEL + k][i] = sel[k];
  }
  {
    float* const in[3] = {P[P_SEL], P[P_SEL + 1], P[P_SEL + 2]};
    float* const out[3] = {P[P_SEL + 3], P[P_SEL + 4], P[P_SEL + 5]};
    s = lull_progress_subspan(span, 0.77, 0.85);
    status = smooth_planes(r, in, out, LULL_RDFC_SELECT_PATCH, LULL_RDFC_SELECT_RADIUS, &s, err);
    if (status != LULL_OK)
      return status;
  }
  for (size_t i = 0; i < n; ++i) {
    float sel[3], total = 0.0f;
    for (int k = 0; k < 3; ++k)
      total += sel[k] = P[P_SEL + 3 + k][i];
    for (int k = 0; k < 3; ++k)
      sel[k] /= total; /* at least one map is positive at every pixel's centre */
    for (int c = 0; c < 3; ++c) {
      float v[2] = {0.0f, 0.0f}, sd = 0.0f;
      for (int k = 0; k < 3; ++k) {
        for (int b = 0; b < nb; ++b)
          v[b] += sel[k] * P[P_CAND + 6 * k + 3 * b + c][i];
        if (!halves)
          sd += sel[k] * sqrtf(P[P_OV + 3 * k + c][i]);
      }
      P[P_PASS1 + c][i] = v[0];
      P[P_PASS1 + 3 + c][i] = v[1];
      P[P_PASS1 + 6 + c][i] = halves ? 0.5f * (v[0] + v[1]) : v[0];
      /* one buffer: the candidates' noise taken as fully correlated (they
       * filter the same pixels), an upper bound */
      if (!halves)
        P[P_PASS1 + 9 + c][i] = sd * sd;
    }
  }
  if (halves)
    for (int c = 0; c < 3; ++c)
      two_buffer_variance(r, P[P_PASS1 + c], P[P_PASS1 + 3 + c], P[P_PASS1 + 9 + c], P[P_TMP]);

  /* step 5: the second pass */
  if (!params->second_pass) {
    for (int c = 0; c < 3; ++c)
      for (int b = 0; b < nb; ++b)
        memcpy(P[P_OUT + 3 * b + c], P[P_PASS1 + 3 * b + c], n * sizeof(float));
    if (!halves)
      for (int c = 0; c < 3; ++c)
        memcpy(P[P_OUT + 6 + c], P[P_PASS1 + 9 + c], n * sizeof(float));
    return LULL_OK;
  }
  ff_problem p = ff_of(r);
  p.nb = nb;
  p.nu = 3;
  p.use_color = 1;
  p.gc = 3;
  p.patch = LULL_RDFC_SECOND_PATCH;
  p.kc2 = params->k_color * params->k_color;
  p.radius = LULL_MAX(1, params->radius / 2);
  for (int c = 0; c < 3; ++c) {
    p.u[0][c] = P[P_PASS1 + c];
    p.u[1][c] = P[P_PASS1 + 3 + c];
    p.uv[c] = P[P_PASS1 + 9 + c];
    p.g[c] = P[P_PASS1 + 6 + c];
    p.gv[c] = P[P_PASS1 + 9 + c];
    p.out[0][c] = P[P_OUT + c];
    p.out[1][c] = P[P_OUT + 3 + c];
    if (!halves)
      p.out_var[c] = P[P_OUT + 6 + c];
  }
  s = lull_progress_subspan(span, 0.85, 1.0);
  return ff_run(&p, r->scratch, &s, err);
}

lull_status lull_rdfc_cpu(const lull_rdfc_params* params, const lull_rdfc_images* images,
                          int num_threads, const lull_progress* progress, lull_error* err)
{
  lull_status status = lull_rdfc_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const int threads = lull_thread_count(num_threads);
  const int W = images->output.width, H = images->output.height;
  const int halves = lull_regression_has_halves(images);
  const lull_image* color = halves ? &images->color_a : &images->color;
  float scale = 1.0f;
  {
    lull_atrous_params ap = lull_atrous_default_params();
    ap.input_scale = params->input_scale;
    ap.srgb = params->srgb;
    status = lull_atrous_input_scale(&ap, color, threads, &scale, err);
    if (status != LULL_OK)
      return status;
  }
  const size_t n = (size_t)W * (size_t)H;
  float* block = malloc(lull_rdfc_cpu_memory(images, W, H, threads));
  if (!block)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  rdfc_run r;
  r.params = params;
  r.width = W;
  r.height = H;
  r.threads = threads;
  r.n = n;
  for (int k = 0; k < P_COUNT; ++k)
    r.P[k] = block + (size_t)k * n;
  r.scratch = block + (size_t)P_COUNT * n;
  float* const* P = r.P;

  const int color_channels = lull_format_channels(color->format);
  {
    float* a[3] = {P[P_CA], P[P_CA + 1], P[P_CA + 2]};
    lull_fp_load_color(color, scale, params->srgb, params->nonnegative, a,
                       color_channels == 4 ? P[P_ALPHA] : NULL, threads);
    if (halves) {
      float* b[3] = {P[P_CB], P[P_CB + 1], P[P_CB + 2]};
      lull_fp_load_color(&images->color_b, scale, params->srgb, params->nonnegative, b,
                         color_channels == 4 ? P[P_TMP] : NULL, threads);
      if (color_channels == 4)
        for (size_t i = 0; i < n; ++i)
          P[P_ALPHA][i] = 0.5f * (P[P_ALPHA][i] + P[P_TMP][i]);
      for (int c = 0; c < 3; ++c)
        for (size_t i = 0; i < n; ++i)
          P[P_C + c][i] = 0.5f * (P[P_CA + c][i] + P[P_CB + c][i]);
    } else {
      for (int c = 0; c < 3; ++c)
        memcpy(P[P_C + c], P[P_CA + c], n * sizeof(float));
    }
  }
  color_variance(&r, images, halves, scale);

  const lull_regression_features fa = lull_regression_half_features(images, 0);
  const lull_regression_features fb = lull_regression_half_features(images, 1);
  const int nf = lull_regression_feature_channels(&fa);
  if (nf) {
    lull_feature_scales scales;
    lull_fp_feature_scales(&fa, P[P_TMP], W, H, threads, &scales);
    lull_fp_load_features(&fa, &scales, &P[P_FA], W, H, threads);
    if (lull_regression_feature_halves(images))
      lull_fp_load_features(&fb, &scales, &P[P_FB], W, H, threads);
  }

  const lull_progress_span whole = {progress, 0.0, 1.0};
  status = run(&r, images, halves, nf, &whole, err);
  if (status == LULL_OK) {
    const float inv = 1.0f / scale;
    const int nc = lull_format_channels(images->output.format);
    const int has_var = has(&images->output_variance);
    const int vc = has_var ? lull_format_channels(images->output_variance.format) : 0;
    if (has_var)
      for (int c = 0; c < 3; ++c)
        two_buffer_variance(&r, P[P_OUT + c], P[P_OUT + 3 + c], P[P_OUT + 6 + c], P[P_TMP]);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        const size_t i = (size_t)y * (size_t)W + (size_t)x;
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int c = 0; c < 3; ++c) {
          const float mean = halves ? 0.5f * (P[P_OUT + c][i] + P[P_OUT + 3 + c][i]) : P[P_OUT + c][i];
          v[c] = lull_reg_color_out(mean, inv, params->hdr, params->srgb);
        }
        if (nc == 4)
          v[3] = P[P_ALPHA][i];
        lull_image_store_n(&images->output, x, y, v, LULL_MIN(nc, color_channels == 4 ? 4 : 3));
        if (has_var) {
          float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
          float mean = 0.0f;
          for (int c = 0; c < 3; ++c) {
            s[c] = lull_hold_in_range(P[P_OUT + 6 + c][i] * inv * inv);
            mean += s[c] * (1.0f / 3.0f);
          }
          if (vc == 1)
            s[0] = mean;
          lull_image_store_n(&images->output_variance, x, y, s, LULL_MIN(vc, 3));
        }
      }
  }
  free(block);
  if (status != LULL_OK)
    return status;
  return lull_progress_report(progress, 1.0, err);
}
