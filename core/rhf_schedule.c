/* The RHF filter's run (rhf.h), the same on every backend: the working
 * memory's layout, the pyramid of scales, per scale the patch distances
 * offset by offset of the search window (box sums of each pixel pair's
 * chi^2 terms over the whole image: each term once, not once per patch
 * holding it), the similar offsets as one bit per pixel and offset, the
 * aggregation, and the fusion from the coarsest scale.  The per-pixel
 * steps are rhf_math.h's; a backend runs each over its grid. */
#include <string.h>

#include "rhf.h"

/* The size of scale s along an axis of n pixels. */
static int scale_size(int n, int s)
{
  for (int k = 0; k < s; ++k)
    n = (n + 1) / 2;
  return n;
}

/* Floats a scale takes: u, n, f, r, du (3 each) and the histograms. */
static size_t scale_floats(int w, int h, int bins)
{
  return (15 + 3 * (size_t)bins) * (size_t)w * (size_t)h;
}

size_t lull_rhf_layout_at(const lull_rhf_params* params, int width, int height, int bins,
                          void* base, lull_rhf_layout* out)
{
  lull_rhf_layout l;
  memset(&l, 0, sizeof l);
  const int scales = LULL_MIN(LULL_MAX(params->scales, 1), LULL_RHF_MAX_SCALES);
  float* at = (float*)base;
  size_t floats = 0;
  for (int s = 0; s < scales; ++s) {
    lull_rhf_scale* c = &l.scales[s];
    c->w = scale_size(width, s);
    c->h = scale_size(height, s);
    const size_t n = (size_t)c->w * (size_t)c->h;
    if (at) {
      for (int k = 0; k < 3; ++k) {
        c->u[k] = at + (size_t)k * n;
        c->n[k] = at + (size_t)(3 + k) * n;
        c->f[k] = at + (size_t)(6 + k) * n;
        c->r[k] = at + (size_t)(9 + k) * n;
        c->du[k] = at + (size_t)(12 + k) * n;
      }
      c->hist = at + 15 * n;
      at += scale_floats(c->w, c->h, bins);
    }
    floats += scale_floats(c->w, c->h, bins);
  }
  l.count = scales;
  /* the distances' planes, of the finest scale and a margin of f */
  const size_t ew = (size_t)width + 2 * (size_t)params->patch;
  const size_t eh = (size_t)height + 2 * (size_t)params->patch;
  if (at) {
    l.t = at;
    l.z = at + ew * eh;
    l.rt = at + 2 * ew * eh;
    l.rz = at + 3 * ew * eh;
    at += 4 * ew * eh;
    l.mask = (uint32_t*)at;
  }
  floats += 4 * ew * eh;
  const int window = (2 * params->radius + 1) * (2 * params->radius + 1);
  l.words = (window + 31) / 32;
  if (out)
    *out = l;
  return floats * sizeof(float) +
         (size_t)width * (size_t)height * (size_t)l.words * sizeof(uint32_t);
}

static lull_status step(const lull_rhf_ops* ops, lull_rhf_step* a, int kind, int w, int h,
                        lull_error* err)
{
  a->kind = kind;
  a->width = w;
  a->height = h;
  return ops->pixels(ops->ctx, a, err);
}

/* Bits of the similar offsets of every pixel of scale s (rhf.h steps
 * 1-2), then its aggregation (step 3). */
static lull_status filter_scale(const lull_rhf_ops* ops, lull_rhf_step* a,
                                const lull_progress_span* span, lull_error* err)
{
  const int w = a->s.w, h = a->s.h, b = a->radius, f = a->patch;
  lull_status status = step(ops, a, LULL_RHF_COUNTS, w, h, err);
  if (status == LULL_OK)
    status = step(ops, a, LULL_RHF_CLEAR, w, h, err);
  const int count = (2 * b + 1) * (2 * b + 1);
  int done = 0;
  for (int oy = -b; oy <= b && status == LULL_OK; ++oy)
    for (int ox = -b; ox <= b && status == LULL_OK; ++ox) {
      a->ox = ox;
      a->oy = oy;
      status = step(ops, a, LULL_RHF_TERMS, w + 2 * f, h + 2 * f, err);
      if (status == LULL_OK)
        status = step(ops, a, LULL_RHF_ROWS, w, h + 2 * f, err);
      if (status == LULL_OK)
        status = step(ops, a, LULL_RHF_TEST, w, h, err);
      const int reporting = span && span->progress && span->progress->report;
      if (status == LULL_OK && reporting && ops->wait)
        status = ops->wait(ops->ctx, err);
      if (status == LULL_OK)
        status = lull_progress_span_report(span, (double)++done / count, err);
    }
  return status == LULL_OK ? step(ops, a, LULL_RHF_GATHER, w, h, err) : status;
}

lull_status lull_rhf_run(const lull_rhf_ops* ops, const lull_rhf_params* params, int bins,
                         const lull_rhf_layout* layout, const lull_progress* progress,
                         lull_error* err)
{
  lull_rhf_step a;
  memset(&a, 0, sizeof a);
  a.bins = bins;
  a.radius = params->radius;
  a.patch = params->patch;
  a.threshold = params->threshold;
  a.t = layout->t;
  a.z = layout->z;
  a.rt = layout->rt;
  a.rz = layout->rz;
  a.mask = layout->mask;
  a.words = layout->words;
  const int scales = layout->count;
  const lull_rhf_scale* sc = layout->scales;
  lull_status status = LULL_OK;
  for (int s = 0; s + 1 < scales && status == LULL_OK; ++s) {
    a.s = sc[s];
    a.coarse = sc[s + 1];
    status = step(ops, &a, LULL_RHF_DOWN, sc[s + 1].w, sc[s + 1].h, err);
  }
  double total = 0.0, done = 0.0;
  for (int s = 0; s < scales; ++s)
    total += (double)sc[s].w * sc[s].h;
  for (int s = 0; s < scales && status == LULL_OK; ++s) {
    const double part = (double)sc[s].w * sc[s].h;
    const lull_progress_span span = {progress, done / total, (done + part) / total};
    a.s = sc[s];
    status = filter_scale(ops, &a, &span, err);
    done += part;
  }
  if (status == LULL_OK) {
    a.s = sc[scales - 1];
    status = step(ops, &a, LULL_RHF_COPY, sc[scales - 1].w, sc[scales - 1].h, err);
  }
  for (int s = scales - 2; s >= 0 && status == LULL_OK; --s) {
    a.s = sc[s];
    a.coarse = sc[s + 1];
    status = step(ops, &a, LULL_RHF_FUSE_DOWN, sc[s + 1].w, sc[s + 1].h, err);
    if (status == LULL_OK)
      status = step(ops, &a, LULL_RHF_FUSE, sc[s].w, sc[s].h, err);
  }
  return status;
}
