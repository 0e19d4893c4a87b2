/* The RHF filter on the CPU (rhf.h says what a run does, rhf_math.h gives
 * the formulas).  Per scale, the patch distances are computed offset by
 * offset of the search window, as box sums over the whole image (each
 * pixel pair's chi^2 terms once, not once per patch holding them), and
 * kept as one bit per pixel and offset; the aggregation then gathers, for
 * every output pixel, the colours its patches' similar patches give it.
 * Threads take rows; the result does not depend on their number. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feature_planes.h"
#include "poisson_solver.h"
#include "rhf.h"
#include "threads.h"

lull_rhf_params lull_rhf_default_params(void)
{
  lull_rhf_params p;
  p.radius = 6;
  p.patch = 1;
  p.threshold = 0.6f;
  p.scales = 2;
  return p;
}

static int has(const lull_image* image)
{
  return image->data != NULL;
}

lull_status lull_rhf_validate(const lull_rhf_params* params, const lull_rhf_images* images,
                              lull_error* err)
{
  if (!has(&images->color))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "input image not specified");
  if (!has(&images->output))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "output image not specified");
  if (images->bins < 1)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "RHF needs the samples' histograms: images histogram0 .. histogramB-1, "
                     "each bin's counts of R, G, B (docs/rhf.md)");
  if (images->bins > LULL_RHF_MAX_BINS)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "at most %d histogram bins",
                     LULL_RHF_MAX_BINS);
  const int cc = lull_format_channels(images->color.format);
  if (cc < 3 || cc > 4)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "unsupported image format (color)");
  if (lull_format_channels(images->output.format) != cc)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "output must have the colour's number of channels");
  const int w = images->output.width, h = images->output.height;
  if (images->color.width != w || images->color.height != h)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "image size mismatch (color)");
  for (int k = 0; k < images->bins; ++k) {
    const lull_image* hk = &images->histogram[k];
    if (!has(hk))
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                       "histogram%d is missing: the histogram images are numbered from 0 "
                       "without gaps",
                       k);
    if (lull_format_channels(hk->format) != 3)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                       "unsupported image format (histogram%d: R, G, B counts)", k);
    if (hk->width != w || hk->height != h)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "image size mismatch (histogram%d)",
                       k);
  }
  if (!(params->radius >= 1 && params->radius <= LULL_RHF_MAX_RADIUS))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid searchRadius (1 to %d)",
                     LULL_RHF_MAX_RADIUS);
  if (!(params->patch >= 0 && params->patch <= LULL_RHF_MAX_PATCH))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid patchRadius (0 to %d)",
                     LULL_RHF_MAX_PATCH);
  if (!(params->threshold >= 0.0f && isfinite(params->threshold)))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid threshold (0 or more)");
  if (!(params->scales >= 1 && params->scales <= LULL_RHF_MAX_SCALES))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid scales (1 to %d)",
                     LULL_RHF_MAX_SCALES);
  return LULL_OK;
}

int lull_rhf_reach(const lull_rhf_params* params)
{
  /* a scale s pixel is 2^s finest pixels; its window and patch reach
   * (b + 2f) of them, the up- and downsampling one more */
  return ((params->radius + 2 * params->patch + 1) << (params->scales - 1)) + 1;
}

/* The sizes of scale s. */
static int scale_size(int n, int s)
{
  for (int k = 0; k < s; ++k)
    n = (n + 1) / 2;
  return n;
}

/* Per scale: colour (3), histograms (3 bins), counts (3), the filtered
 * colour (3), the fused result (3) and a down-up scratch (3). */
static size_t scale_planes(int bins)
{
  return 3 * (size_t)bins + 15;
}

static size_t words_of(int radius)
{
  const size_t window = (size_t)(2 * radius + 1) * (size_t)(2 * radius + 1);
  return (window + 31) / 32;
}

size_t lull_rhf_cpu_memory(const lull_rhf_params* params, int width, int height, int bins)
{
  size_t floats = 0;
  for (int s = 0; s < params->scales; ++s)
    floats += scale_planes(bins) * (size_t)scale_size(width, s) * (size_t)scale_size(height, s);
  /* the distances' terms and row sums over the image and a margin of f */
  const size_t ew = (size_t)width + 2 * (size_t)params->patch;
  const size_t eh = (size_t)height + 2 * (size_t)params->patch;
  floats += 4 * ew * eh;
  const size_t mask = (size_t)width * (size_t)height * words_of(params->radius);
  return floats * sizeof(float) + mask * sizeof(uint32_t);
}

/* One scale's planes (w x h each). */
typedef struct rhf_scale
{
  int w, h;
  float* u[3];   /* the colour */
  float* hist;   /* bins x 3 planes: bin k, channel c at (3 k + c) */
  float* n[3];   /* the samples per channel: the sum over the bins */
  float* f[3];   /* the filtered colour */
  float* r[3];   /* the fused result */
  float* du[3];  /* scratch: the filtered colour down, then up */
} rhf_scale;

static float* plane(const rhf_scale* s, const float* base, int k)
{
  return (float*)base + (size_t)k * (size_t)s->w * (size_t)s->h;
}

static size_t clampi(int v, int lo, int hi)
{
  return (size_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* Bits of similar offsets for every pixel of a scale (rhf.h steps 1-2):
 * per offset the chi^2 terms over the image and a margin of f (the
 * nearest pixel inside for both patches), their box sums, the test. */
static lull_status similar_offsets(const lull_rhf_params* params, const rhf_scale* s, int bins,
                                   float* terms, uint32_t* mask, int threads,
                                   const lull_progress_span* span, lull_error* err)
{
  const int w = s->w, h = s->h, b = params->radius, f = params->patch, P = 2 * f + 1;
  const int ew = w + 2 * f, eh = h + 2 * f;
  const size_t words = words_of(b), en = (size_t)ew * (size_t)eh;
  float* t = terms;          /* the terms' sums at each pixel pair */
  float* z = terms + en;     /* their non-empty bins */
  float* rt = terms + 2 * en; /* row sums over 2f + 1 (w x eh) */
  float* rz = terms + 3 * en;
  const size_t plane_n = (size_t)w * (size_t)h;
  memset(mask, 0, plane_n * words * sizeof(uint32_t));
  const int count = (2 * b + 1) * (2 * b + 1);
  int done = 0;
  for (int oy = -b; oy <= b; ++oy) {
    for (int ox = -b; ox <= b; ++ox) {
      const int bit = lull_rhf_offset_bit(ox, oy, b);
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int ey = 0; ey < eh; ++ey)
        for (int ex = 0; ex < ew; ++ex) {
          const size_t p = clampi(ey - f, 0, h - 1) * (size_t)w + clampi(ex - f, 0, w - 1);
          const size_t q =
              clampi(ey - f + oy, 0, h - 1) * (size_t)w + clampi(ex - f + ox, 0, w - 1);
          float sum = 0.0f;
          int used = 0;
          for (int k = 0; k < bins; ++k)
            for (int c = 0; c < 3; ++c) {
              const float* hk = s->hist + (size_t)(3 * k + c) * plane_n;
              int u = 0;
              sum += lull_rhf_chi2(hk[p], hk[q], s->n[c][p], s->n[c][q], &u);
              used += u;
            }
          t[(size_t)ey * ew + ex] = sum;
          z[(size_t)ey * ew + ex] = (float)used;
        }
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int ey = 0; ey < eh; ++ey)
        for (int x = 0; x < w; ++x) {
          float st = 0.0f, sz = 0.0f;
          for (int j = 0; j < P; ++j) {
            st += t[(size_t)ey * ew + x + j];
            sz += z[(size_t)ey * ew + x + j];
          }
          rt[(size_t)ey * w + x] = st;
          rz[(size_t)ey * w + x] = sz;
        }
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          if (x + ox < 0 || x + ox >= w || y + oy < 0 || y + oy >= h)
            continue;
          float st = 0.0f, sz = 0.0f;
          for (int j = 0; j < P; ++j) {
            st += rt[(size_t)(y + j) * w + x];
            sz += rz[(size_t)(y + j) * w + x];
          }
          if (lull_rhf_similar(st, sz, params->threshold))
            mask[((size_t)y * w + x) * words + (size_t)(bit >> 5)] |= 1u << (bit & 31);
        }
      const lull_status status = lull_progress_span_report(span, (double)++done / count, err);
      if (status != LULL_OK)
        return status;
    }
  }
  return LULL_OK;
}

/* The patch-wise aggregation (rhf.h step 3): x gets, from every patch p
 * holding it (x = p + o') and every q = p + o similar to p, the colour at
 * x + o; their mean into f. */
static void aggregate(const lull_rhf_params* params, const rhf_scale* s, const uint32_t* mask,
                      int threads)
{
  const int w = s->w, h = s->h, b = params->radius, f = params->patch;
  const size_t words = words_of(b);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float acc[3] = {0.0f, 0.0f, 0.0f};
      int count = 0;
      for (int py = y - f; py <= y + f; ++py)
        for (int px = x - f; px <= x + f; ++px) {
          if (px < 0 || px >= w || py < 0 || py >= h)
            continue;
          const uint32_t* m = mask + ((size_t)py * w + (size_t)px) * words;
          for (int oy = -b; oy <= b; ++oy)
            for (int ox = -b; ox <= b; ++ox) {
              const int bit = lull_rhf_offset_bit(ox, oy, b);
              if (!(m[bit >> 5] & (1u << (bit & 31))))
                continue;
              const size_t q = clampi(y + oy, 0, h - 1) * (size_t)w + clampi(x + ox, 0, w - 1);
              for (int c = 0; c < 3; ++c)
                acc[c] += s->u[c][q];
              ++count;
            }
        }
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      for (int c = 0; c < 3; ++c)
        s->f[c][i] = acc[c] / (float)count; /* count >= 1: p = x, q = p is similar */
    }
}

/* The sample counts per channel: each pixel's sum over its bins. */
static void counts(const rhf_scale* s, int bins, int threads)
{
  const size_t n = (size_t)s->w * (size_t)s->h;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long long i = 0; i < (long long)n; ++i)
    for (int c = 0; c < 3; ++c) {
      float sum = 0.0f;
      for (int k = 0; k < bins; ++k)
        sum += s->hist[(size_t)(3 * k + c) * n + (size_t)i];
      s->n[c][i] = sum;
    }
}

/* Scale s + 1 from scale s: colours averaged, histograms summed over 2 x 2
 * blocks. */
static void downsample(const rhf_scale* fine, const rhf_scale* coarse, int bins, int threads)
{
  const size_t fn = (size_t)fine->w * (size_t)fine->h, cn = (size_t)coarse->w * (size_t)coarse->h;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < coarse->h; ++y)
    for (int x = 0; x < coarse->w; ++x) {
      const size_t i = (size_t)y * (size_t)coarse->w + (size_t)x;
      for (int c = 0; c < 3; ++c)
        coarse->u[c][i] = lull_rhf_down(fine->u[c], fine->w, fine->h, x, y, 1);
      for (int k = 0; k < 3 * bins; ++k)
        coarse->hist[(size_t)k * cn + i] =
            lull_rhf_down(fine->hist + (size_t)k * fn, fine->w, fine->h, x, y, 0);
    }
}

/* The fusion of scale s (fine) with the fused coarser one: r = f -
 * up(down(f)) + up(coarser r). */
static void fuse(const rhf_scale* fine, const rhf_scale* coarse, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < coarse->h; ++y)
    for (int x = 0; x < coarse->w; ++x)
      for (int c = 0; c < 3; ++c)
        coarse->du[c][(size_t)y * coarse->w + x] =
            lull_rhf_down(fine->f[c], fine->w, fine->h, x, y, 1);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < fine->h; ++y)
    for (int x = 0; x < fine->w; ++x)
      for (int c = 0; c < 3; ++c) {
        const size_t i = (size_t)y * fine->w + x;
        fine->r[c][i] = fine->f[c][i] -
                        lull_rhf_up(coarse->du[c], coarse->w, coarse->h, x, y) +
                        lull_rhf_up(coarse->r[c], coarse->w, coarse->h, x, y);
      }
}

/* The inputs into scale 0: colour repaired where not finite, histogram
 * counts that are negative or not finite as 0. */
static void load(const lull_rhf_images* im, const rhf_scale* s, int threads)
{
  const size_t n = (size_t)s->w * (size_t)s->h;
  lull_fp_load_planes(&im->color, s->u, 3, 0, threads);
  for (int c = 0; c < 3; ++c)
    lull_fp_repair(s->u[c], s->w, s->h);
  for (int k = 0; k < im->bins; ++k) {
    float* pl[3];
    for (int c = 0; c < 3; ++c)
      pl[c] = s->hist + (size_t)(3 * k + c) * n;
    lull_fp_load_planes(&im->histogram[k], pl, 3, 0, threads);
    for (int c = 0; c < 3; ++c)
      for (size_t i = 0; i < n; ++i)
        pl[c][i] = pl[c][i] > 0.0f && pl[c][i] < INFINITY ? pl[c][i] : 0.0f;
  }
}

lull_status lull_rhf_cpu(const lull_rhf_params* params, const lull_rhf_images* images,
                         int num_threads, const lull_progress* progress, lull_error* err)
{
  lull_status status = lull_rhf_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const int threads = lull_thread_count(num_threads);
  const int w = images->output.width, h = images->output.height, bins = images->bins;
  /* validated: 1 .. LULL_RHF_MAX_SCALES */
  const int scales = LULL_MIN(LULL_MAX(params->scales, 1), LULL_RHF_MAX_SCALES);
  unsigned char* block = malloc(lull_rhf_cpu_memory(params, w, h, bins));
  if (!block)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  rhf_scale sc[LULL_RHF_MAX_SCALES];
  memset(sc, 0, sizeof sc);
  float* at = (float*)block;
  double total = 0.0;
  for (int s = 0; s < scales; ++s) {
    rhf_scale* c = &sc[s];
    c->w = scale_size(w, s);
    c->h = scale_size(h, s);
    float* base = at;
    for (int k = 0; k < 3; ++k) {
      c->u[k] = plane(c, base, k);
      c->n[k] = plane(c, base, 3 + k);
      c->f[k] = plane(c, base, 6 + k);
      c->r[k] = plane(c, base, 9 + k);
      c->du[k] = plane(c, base, 12 + k);
    }
    c->hist = plane(c, base, 15);
    at += scale_planes(bins) * (size_t)c->w * (size_t)c->h;
    total += (double)c->w * c->h;
  }
  float* terms = at;
  const size_t ew = (size_t)w + 2 * (size_t)params->patch;
  const size_t eh = (size_t)h + 2 * (size_t)params->patch;
  uint32_t* mask = (uint32_t*)(terms + 4 * ew * eh);

  load(images, &sc[0], threads);
  for (int s = 0; s + 1 < scales; ++s)
    downsample(&sc[s], &sc[s + 1], bins, threads);
  double done = 0.0;
  for (int s = 0; s < scales && status == LULL_OK; ++s) {
    const double part = (double)sc[s].w * sc[s].h;
    const lull_progress_span span = {progress, done / total, (done + part) / total};
    counts(&sc[s], bins, threads);
    status = similar_offsets(params, &sc[s], bins, terms, mask, threads, &span, err);
    if (status == LULL_OK)
      aggregate(params, &sc[s], mask, threads);
    done += part;
  }
  if (status == LULL_OK) {
    const rhf_scale* last = &sc[scales - 1];
    for (int c = 0; c < 3; ++c)
      memcpy(last->r[c], last->f[c], (size_t)last->w * (size_t)last->h * sizeof(float));
    for (int s = scales - 2; s >= 0; --s)
      fuse(&sc[s], &sc[s + 1], threads);
    const int nc = lull_format_channels(images->output.format);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const size_t i = (size_t)y * (size_t)w + (size_t)x;
        float v[4] = {sc[0].r[0][i], sc[0].r[1][i], sc[0].r[2][i], 0.0f};
        if (nc == 4) {
          float in[4];
          lull_image_load(&images->color, x, y, in);
          v[3] = in[3];
        }
        lull_image_store_n(&images->output, x, y, v, nc);
      }
  }
  free(block);
  if (status != LULL_OK)
    return status;
  return lull_progress_report(progress, 1.0, err);
}
