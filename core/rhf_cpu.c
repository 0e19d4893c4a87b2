/* The RHF filter on the CPU (rhf.h says what a run does, rhf_schedule.c
 * orders its steps, rhf_math.h gives the formulas): the images' load and
 * store, and each step's pixels, threads taking rows.  The result does
 * not depend on their number. */
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

size_t lull_rhf_cpu_memory(const lull_rhf_params* params, int width, int height, int bins)
{
  return lull_rhf_layout_at(params, width, height, bins, NULL, NULL);
}

/* A step of the run over its grid, threads taking rows. */
static lull_status cpu_pixels(void* ctx, const lull_rhf_step* step, lull_error* err)
{
  (void)err;
#pragma omp parallel for schedule(static) num_threads(*(const int*)ctx)
  for (int y = 0; y < step->height; ++y)
    for (int x = 0; x < step->width; ++x)
      lull_rhf_step_at(step, x, y);
  return LULL_OK;
}

/* The inputs into scale 0: colour repaired where not finite, histogram
 * counts that are negative or not finite as 0. */
static void load(const lull_rhf_images* im, const lull_rhf_scale* s, int threads)
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
  int threads = lull_thread_count(num_threads);
  const int w = images->output.width, h = images->output.height;
  void* block = malloc(lull_rhf_cpu_memory(params, w, h, images->bins));
  if (!block)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  lull_rhf_layout layout;
  lull_rhf_layout_at(params, w, h, images->bins, block, &layout);
  load(images, &layout.scales[0], threads);
  const lull_rhf_ops ops = {&threads, cpu_pixels, NULL};
  status = lull_rhf_run(&ops, params, images->bins, &layout, progress, err);
  if (status == LULL_OK) {
    const lull_rhf_scale* s = &layout.scales[0];
    const int nc = lull_format_channels(images->output.format);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const size_t i = (size_t)y * (size_t)w + (size_t)x;
        float v[4] = {s->r[0][i], s->r[1][i], s->r[2][i], 0.0f};
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
