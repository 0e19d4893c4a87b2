/* Temporal mode of the filter types ATrous, RT and Regression: a frame's
 * colour is accumulated with the reprojected history of the frames before
 * it (core/temporal.h), then filtered spatially (the à-trous filter or the
 * one-buffer Regression) with the variance the accumulation measured.  The
 * history is the filter's state: it lives between executions in backend
 * memory and goes with the filter. */
#include <stdlib.h>
#include <string.h>

#include "filter_types.h"

lull_temporal_params lull_filter_temporal_defaults(void)
{
  lull_temporal_params p;
  memset(&p, 0, sizeof p);
  p.alpha = (float)LULL_TEMPORAL_ALPHA;
  p.moments_alpha = (float)LULL_TEMPORAL_MOMENTS_ALPHA;
  p.max_history = (float)LULL_TEMPORAL_MAX_HISTORY;
  p.clip_sigma = (float)LULL_TEMPORAL_CLIP_SIGMA;
  p.reject_sigma = (float)LULL_TEMPORAL_REJECT_SIGMA;
  p.albedo_alpha = (float)LULL_TEMPORAL_ALBEDO_ALPHA;
  return p;
}

lull_filter_temporal lull_filter_temporal_from_values(const double* v, int temporal, int blend)
{
  lull_filter_temporal t;
  t.reset = v[temporal + 1] != 0;
  t.frame = (long long)v[temporal + 2];
  t.params = lull_filter_temporal_defaults();
  if (blend >= 0) {
    t.params.alpha = (float)v[blend];
    t.params.moments_alpha = (float)v[blend + 1];
    t.params.albedo_alpha = (float)v[blend + 2];
    t.params.max_history = (float)v[blend + 3];
    t.params.clip_sigma = (float)v[blend + 4];
    t.params.reject_sigma = (float)v[blend + 5];
  }
  return t;
}

lull_status lull_filter_motion_needs_temporal(const lull_image* motion, lull_error* err)
{
  return motion->data ? lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                                  "the motion image is used only in temporal mode (set temporal)")
                      : LULL_OK;
}

/* What the accumulation reads: the colour and the guides it tests by
 * (a world position changes with the object's motion: not a test). */
static lull_temporal_images views(const lull_image* color, const lull_image* albedo,
                                  const lull_image* normal, const lull_image* depth,
                                  const lull_image* motion)
{
  lull_temporal_images t;
  memset(&t, 0, sizeof t);
  t.color = *color;
  t.albedo = *albedo;
  t.normal = *normal;
  t.depth = *depth;
  t.motion = *motion;
  return t;
}

static lull_temporal_images temporal_views(const lull_atrous_images* images,
                                           const lull_image* motion)
{
  return views(&images->color, &images->albedo, &images->normal, &images->depth, motion);
}

lull_status lull_filter_temporal_check(const lull_atrous_images* images, const lull_image* motion,
                                       lull_error* err)
{
  const lull_temporal_images t = temporal_views(images, motion);
  return lull_temporal_validate(&t, err);
}

static void release_block(lull_backend* backend, lull_temporal_history* history)
{
  if (history->block)
    backend->ops->free(backend, history->block, history->storage);
  history->block = NULL;
  history->bytes = 0;
}

/* The filter's state: the history. */
typedef struct temporal_state
{
  lull_filter_state base;
  lull_temporal_history history;
} temporal_state;

static void release_state(lull_backend* backend, lull_filter_state* state)
{
  temporal_state* t = (temporal_state*)state;
  release_block(backend, &t->history);
  free(t);
}

/* A block for width x height x channels; the old one is freed after the
 * work queued before (which may still read it) is done. */
static lull_status reallocate(lull_backend* backend, lull_temporal_history* history, int width,
                              int height, int channels, lull_error* err)
{
  const size_t bytes = lull_temporal_history_bytes(width, height, channels);
  if (bytes == 0)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "image too large for temporal mode");
  if (history->block) {
    const lull_status status = backend->ops->sync(backend, err);
    if (status != LULL_OK)
      return status;
    release_block(backend, history);
  }
  void* block = NULL;
  int storage = 0;
  const lull_status status =
      backend->ops->alloc(backend, bytes, LULL_STORAGE_DEVICE, &block, &storage, err);
  if (status != LULL_OK)
    return status;
  history->block = block;
  history->bytes = bytes;
  history->storage = storage;
  history->width = width;
  history->height = height;
  history->channels = channels;
  return LULL_OK;
}

/* One frame's accumulation: plans the step, (re)allocates the history
 * and queues step 1 on the backend; `demodulate` and `srgb` as the spatial
 * filter reads the colour.  The spatial filter then reads *planes, and
 * lull_temporal_end(*history, step) follows its success. */
static lull_status accumulate(lull_backend* backend, lull_filter_state** state,
                              const lull_filter_temporal* temporal,
                              const lull_temporal_images* t, int demodulate, int srgb,
                              const lull_progress* progress, lull_temporal_history** history_out,
                              lull_temporal_step* step, lull_temporal_planes* planes,
                              lull_error* err)
{
  if (!backend->ops->temporal)
    return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                     "temporal mode is not supported by this device");
  lull_status status = lull_temporal_validate(t, err);
  if (status != LULL_OK)
    return status;
  if (!*state) {
    temporal_state* ts = calloc(1, sizeof *ts);
    if (!ts)
      return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
    ts->base.release = release_state;
    lull_temporal_history_clear(&ts->history);
    *state = &ts->base;
  }
  /* the state of a filter of a temporal type is this (the only kind) */
  lull_temporal_history* history = &((temporal_state*)*state)->history;
  *history_out = history;
  const int w = t->color.width, h = t->color.height;
  const int channels = lull_format_channels(t->color.format);
  status = lull_temporal_begin(history, w, h, channels, temporal->frame, temporal->reset, step,
                               err);
  if (status != LULL_OK)
    return status;
  if (!lull_temporal_history_fits(history, w, h, channels)) {
    status = reallocate(backend, history, w, h, channels, err);
    if (status != LULL_OK)
      return status;
    lull_temporal_history_clear(history);
    step->read = -1;
    step->write = 1 - history->newest;
  }
  *planes = lull_temporal_planes_of(history, step);

  lull_temporal_params tp = temporal->params;
  tp.has_albedo = t->albedo.data != NULL;
  tp.demodulate = demodulate && t->albedo.data != NULL;
  tp.srgb = srgb;
  tp.has_normal = t->normal.data != NULL;
  tp.has_depth = t->depth.data != NULL;
  tp.has_motion = t->motion.data != NULL;
  tp.channels = channels;
  status = lull_progress_report(progress, 0.0, err);
  if (status == LULL_OK)
    /* queued without a wait: the spatial filter's run that follows waits
     * when the execution is blocking (and reports an error of either) */
    status = backend->ops->temporal(backend, &tp, t, planes, 1, err);
  return status;
}

lull_status lull_filter_temporal_atrous(lull_backend* backend, lull_filter_state** state,
                                        const lull_filter_temporal* temporal,
                                        const lull_atrous_params* params,
                                        const lull_atrous_images* images, const lull_image* motion,
                                        int schedule, const lull_progress* progress, int async,
                                        lull_error* err)
{
  const lull_temporal_images t = temporal_views(images, motion);
  lull_temporal_history* history = NULL;
  lull_temporal_step step;
  lull_temporal_planes planes;
  lull_status status = accumulate(backend, state, temporal, &t, params->demodulate, params->srgb,
                                  progress, &history, &step, &planes, err);
  if (status != LULL_OK)
    return status;
  /* the spatial filter on the accumulated colour, with its variance where
   * the history measured it (else its own estimate) */
  lull_atrous_images spatial = *images;
  spatial.color = planes.acc;
  spatial.variance = planes.variance;
  if (t.albedo.data)
    spatial.albedo = planes.albedo;
  lull_atrous_params sp = *params;
  sp.variance_fallback = 1;
  status = backend->ops->atrous(backend, &sp, &spatial, schedule, progress, async, err);
  if (status == LULL_OK)
    lull_temporal_end(history, &step);
  return status;
}

/* What Regression's temporal mode accumulates: its one buffer and guides. */
static lull_temporal_images regression_views(const lull_regression_images* images,
                                             const lull_image* motion)
{
  return views(&images->color, &images->albedo, &images->normal, &images->depth, motion);
}

lull_status lull_filter_temporal_regression_check(const lull_regression_images* images,
                                                  const lull_image* motion, lull_error* err)
{
  /* after lull_regression_validate: colour is given once or as halves,
   * and feature halves and outputVariance come only with colour halves */
  if (lull_regression_has_halves(images))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "temporal mode takes one buffer: set color, not the halves colorA, colorB");
  if (images->variance.data)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "temporal mode measures the variance itself: unset variance");
  if (images->position.data)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "temporal mode tests the history by depth: set depth, not position");
  const lull_temporal_images t = regression_views(images, motion);
  return lull_temporal_validate(&t, err);
}

lull_status lull_filter_temporal_regression(lull_backend* backend, lull_filter_state** state,
                                            const lull_filter_temporal* temporal,
                                            const lull_regression_params* params,
                                            const lull_regression_images* images,
                                            const lull_image* motion, const lull_progress* progress,
                                            int async, lull_error* err)
{
  const lull_temporal_images t = regression_views(images, motion);
  lull_temporal_history* history = NULL;
  lull_temporal_step step;
  lull_temporal_planes planes;
  /* demodulated as the à-trous path accumulates it (the texture is
   * reprojected by the sharper albedo filter), remodulated for the
   * regression, which regresses the colour itself */
  lull_status status = accumulate(backend, state, temporal, &t, 1, params->srgb, progress,
                                  &history, &step, &planes, err);
  if (status != LULL_OK)
    return status;
  lull_regression_images spatial = *images;
  spatial.color = planes.acc;
  spatial.variance = planes.variance; /* LULL_TEMPORAL_ESTIMATE: the filter's own */
  if (t.albedo.data)
    spatial.albedo = planes.albedo;
  status = backend->ops->regression(backend, params, &spatial, progress, async, err);
  if (status == LULL_OK)
    lull_temporal_end(history, &step);
  return status;
}
