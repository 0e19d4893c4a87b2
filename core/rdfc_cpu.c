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
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static void ff_tile(const lull_rdfc_pass* p, int t, float* scratch)
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
            float t[3];
            lull_rdfc_color_terms(p, (size_t)yy * W + xx, (size_t)y1 * W + x1, (size_t)y2 * W + x2,
                                  0.0f, -1, t);
            e[0][k] = t[0];
            e[1][k] = t[1];
            e[2][k] = t[2];
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
            lull_rdfc_feature_weights(p, i, i1, i2, in1 && in2, &f1, &f2);
          const float w1 = in1 ? lull_rdfc_min(c1, f1) : 0.0f;
          const float w2 = in2 ? lull_rdfc_min(c2, f2) : 0.0f;
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
            const float dd[3] = {d[0][kd], d[1][kd], d[2][kd]};
            const float wcc[2] = {wc[0][kd], wc[1][kd]}, wbb[2] = {wb[0][k], wb[1][k]};
            for (int c = 0; c < 3; ++c) {
              float v1, v2;
              lull_rdfc_moved_weights(p, i, i1, i2, c, dd, wcc, wbb, f1, f2, in1, in2, &v1, &v2);
              n1[c * nt + k] += v1 * p->g[c][i1] + v2 * p->g[c][i2];
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
static lull_status ff_run(const lull_rdfc_pass* p, int threads, float* scratch,
                          const lull_progress_span* span, lull_error* err)
{
  const int tiles_x = (p->width + TILE_W - 1) / TILE_W;
  const int tiles_y = (p->height + TILE_H - 1) / TILE_H;
  const size_t per_thread = ff_scratch_floats();
  /* rows of tiles between progress reports: a few per thread */
  const int step = LULL_MAX(1, 2 * threads / LULL_MAX(1, tiles_x));
  for (int r0 = 0; r0 < tiles_y; r0 += step) {
    const int r1 = LULL_MIN(tiles_y, r0 + step);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int t = r0 * tiles_x; t < r1 * tiles_x; ++t)
      ff_tile(p, t, scratch + (size_t)lull_thread_index() * per_thread);
    const lull_status status = lull_progress_span_report(span, (double)r1 / tiles_y, err);
    if (status != LULL_OK)
      return status;
  }
  return LULL_OK;
}

/* -- the run ------------------------------------------------------------------ */

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
  return lull_regression_validate_color(params->hdr, params->srgb, params->input_scale, err);
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

size_t lull_rdfc_cpu_memory(int width, int height, int num_threads)
{
  const size_t n = (size_t)width * (size_t)height;
  return (LULL_RDFC_P_COUNT * n + ff_scratch_floats() * (size_t)lull_thread_count(num_threads)) *
         sizeof(float);
}

/* The CPU's steps: passes in tiles, per-pixel steps in rows. */
typedef struct cpu_ctx
{
  int threads;
  float* scratch;
} cpu_ctx;

static lull_status cpu_pass(void* ctx, const lull_rdfc_pass* pass, const lull_progress_span* span,
                            lull_error* err)
{
  const cpu_ctx* c = (const cpu_ctx*)ctx;
  return ff_run(pass, c->threads, c->scratch, span, err);
}

static lull_status cpu_pixels(void* ctx, const lull_rdfc_pixels* step, lull_error* err)
{
  (void)err;
  const cpu_ctx* c = (const cpu_ctx*)ctx;
#pragma omp parallel for schedule(static) num_threads(c->threads)
  for (int y = 0; y < step->height; ++y)
    for (int x = 0; x < step->width; ++x)
      lull_rdfc_pixel_body(step, x, y);
  return LULL_OK;
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
  status = lull_fp_color_scale(images, params->input_scale, params->srgb, threads, &scale, err);
  if (status != LULL_OK)
    return status;
  const size_t n = (size_t)W * (size_t)H;
  float* block = malloc(lull_rdfc_cpu_memory(W, H, threads));
  if (!block)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  float* P[LULL_RDFC_P_COUNT];
  for (int k = 0; k < LULL_RDFC_P_COUNT; ++k)
    P[k] = block + (size_t)k * n;
  cpu_ctx ctx = {threads, block + (size_t)LULL_RDFC_P_COUNT * n};

  /* the inputs (rdfc.h's planes "in") */
  const int color_channels = lull_format_channels(color->format);
  float* alpha = color_channels == 4 ? P[LULL_RDFC_P_ALPHA] : NULL;
  lull_fp_load_color(color, scale, params->srgb, params->nonnegative, &P[LULL_RDFC_P_CA], alpha,
                     threads);
  if (halves) {
    lull_fp_load_color(&images->color_b, scale, params->srgb, params->nonnegative,
                       &P[LULL_RDFC_P_CB], alpha ? P[LULL_RDFC_P_TMP] : NULL, threads);
    if (alpha)
      for (size_t i = 0; i < n; ++i)
        alpha[i] = 0.5f * (alpha[i] + P[LULL_RDFC_P_TMP][i]);
  }
  if (has(&images->variance))
    lull_fp_load_variance(&images->variance, scale, &P[LULL_RDFC_P_GIVEN], threads);
  const lull_regression_features fa = lull_regression_half_features(images, 0);
  const lull_regression_features fb = lull_regression_half_features(images, 1);
  if (lull_regression_feature_channels(&fa)) {
    lull_feature_scales scales;
    lull_fp_feature_scales(&fa, P[LULL_RDFC_P_TMP], W, H, threads, &scales);
    lull_fp_load_features(&fa, &scales, &P[LULL_RDFC_P_FA], W, H, threads);
    if (lull_regression_feature_halves(images))
      lull_fp_load_features(&fb, &scales, &P[LULL_RDFC_P_FB], W, H, threads);
  }

  const lull_rdfc_ops ops = {&ctx, cpu_pass, cpu_pixels};
  const lull_progress_span whole = {progress, 0.0, 1.0};
  status = lull_rdfc_run(&ops, params, images, W, H, P, &whole, err);
  if (status == LULL_OK) {
    const float inv = 1.0f / scale;
    const int nc = lull_format_channels(images->output.format);
    const int has_var = has(&images->output_variance);
    const int vc = has_var ? lull_format_channels(images->output_variance.format) : 0;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        const size_t i = (size_t)y * (size_t)W + (size_t)x;
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int c = 0; c < 3; ++c)
          v[c] = lull_reg_color_out(P[LULL_RDFC_P_RESULT + c][i], inv, params->hdr, params->srgb);
        if (nc == 4)
          v[3] = P[LULL_RDFC_P_ALPHA][i];
        lull_image_store_n(&images->output, x, y, v, LULL_MIN(nc, color_channels == 4 ? 4 : 3));
        if (has_var) {
          float sv[4] = {0.0f, 0.0f, 0.0f, 0.0f};
          float mean = 0.0f;
          for (int c = 0; c < 3; ++c) {
            sv[c] = lull_hold_in_range(P[LULL_RDFC_P_RESULT + 3 + c][i] * inv * inv);
            mean += sv[c] * (1.0f / 3.0f);
          }
          if (vc == 1)
            sv[0] = mean;
          lull_image_store_n(&images->output_variance, x, y, sv, LULL_MIN(vc, 3));
        }
      }
  }
  free(block);
  if (status != LULL_OK)
    return status;
  return lull_progress_report(progress, 1.0, err);
}
