/* Temporal accumulation: the history's bookkeeping and the CPU backend's
 * run.  Scheduling only: the per-pixel formulas are in temporal_math.h,
 * which the CUDA kernels share. */
#include "temporal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image_rows.h"
#include "threads.h"

/* Planes are padded to 64 floats (256 bytes, the GPU's alignment). */
static size_t plane_floats(int width, int height)
{
  const size_t n = (size_t)width * (size_t)height;
  return (n + 63) / 64 * 64;
}

/* 2 history sets, this frame's colour and albedo (6), the accumulated
 * colour (channels), its variance (1) and albedo (3), in planes of
 * plane_floats. */
static size_t block_planes(int channels)
{
  return 2 * LULL_TH_PLANES + 6 + (size_t)channels + 1 + 3;
}

size_t lull_temporal_history_bytes(int width, int height, int channels)
{
  if (width <= 0 || height <= 0 || channels < 3 || channels > 4)
    return 0;
  const size_t floats = plane_floats(width, height);
  const size_t planes = block_planes(channels);
  if (floats > SIZE_MAX / sizeof(float) / planes)
    return 0;
  return floats * planes * sizeof(float);
}

int lull_temporal_history_fits(const lull_temporal_history* history, int width, int height,
                               int channels)
{
  return history->block && history->width == width && history->height == height &&
         history->channels == channels;
}

void lull_temporal_history_clear(lull_temporal_history* history)
{
  history->newest = 0;
  history->length = history->older_length = 0;
  history->frame = history->older_frame = -1;
}

lull_status lull_temporal_begin(const lull_temporal_history* history, int width, int height,
                                int channels, long long frame, int reset,
                                lull_temporal_step* step, lull_error* err)
{
  const int newest = history->newest;
  step->frame = frame;
  step->read = -1;
  step->write = 1 - newest;
  if (reset || history->length == 0)
    return LULL_OK;
  const int numbered = frame >= 0 && history->frame >= 0;
  const int same_size = history->width == width && history->height == height;
  if (numbered && frame != history->frame && frame != history->frame + 1)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "temporal frame %lld does not follow frame %lld: frames must come in "
                     "order (set resetHistory to start a new history)",
                     frame, history->frame);
  if (!same_size && numbered)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "temporal frame %lld is %dx%d but the history (frame %lld) is %dx%d "
                     "(set resetHistory to start a new history)",
                     frame, width, height, history->frame, history->width, history->height);
  if (!same_size || history->channels != channels)
    return LULL_OK; /* not numbered: a new history (docs/temporal.md) */
  if (numbered && frame == history->frame) {
    /* the same frame again: from the history before it, into its own set */
    step->read = history->older_length > 0 ? 1 - newest : -1;
    step->write = newest;
    return LULL_OK;
  }
  step->read = newest;
  return LULL_OK;
}

void lull_temporal_end(lull_temporal_history* history, const lull_temporal_step* step)
{
  const int read_length = step->read < 0 ? 0
                          : step->read == history->newest ? history->length
                                                          : history->older_length;
  if (step->write != history->newest) {
    /* the newest becomes the older one (none when this frame started
     * anew: there is then no history to run this frame from again) */
    history->older_length = step->read >= 0 ? history->length : 0;
    history->older_frame = step->read >= 0 ? history->frame : -1;
    history->newest = step->write;
  } else if (step->read < 0) {
    history->older_length = 0; /* the frame again, but from no history */
    history->older_frame = -1;
  }
  history->length = read_length + 1;
  history->frame = step->frame;
}

static lull_image plane_image(float* data, int width, int height, lull_format format)
{
  lull_image im;
  memset(&im, 0, sizeof im);
  im.data = (unsigned char*)data;
  im.format = format;
  im.width = width;
  im.height = height;
  im.pixel_stride = lull_format_size(format);
  im.row_stride = im.pixel_stride * (size_t)width;
  return im;
}

lull_temporal_planes lull_temporal_planes_of(const lull_temporal_history* history,
                                             const lull_temporal_step* step)
{
  lull_temporal_planes t;
  memset(&t, 0, sizeof t);
  const int w = history->width, h = history->height;
  const size_t n = plane_floats(w, h);
  float* base = (float*)history->block;
  t.width = w;
  t.height = h;
  for (int k = 0; k < LULL_TH_PLANES; ++k) {
    if (step->read >= 0)
      t.in[k] = base + ((size_t)step->read * LULL_TH_PLANES + (size_t)k) * n;
    t.out[k] = base + ((size_t)step->write * LULL_TH_PLANES + (size_t)k) * n;
  }
  float* rest = base + 2 * LULL_TH_PLANES * n;
  for (int k = 0; k < 6; ++k)
    t.cur[k] = rest + (size_t)k * n;
  const size_t channels = (size_t)history->channels;
  t.acc = plane_image(rest + 6 * n, w, h, channels == 4 ? LULL_FORMAT_FLOAT4 : LULL_FORMAT_FLOAT3);
  t.variance = plane_image(rest + (6 + channels) * n, w, h, LULL_FORMAT_FLOAT);
  t.albedo = plane_image(rest + (7 + channels) * n, w, h, LULL_FORMAT_FLOAT3);
  return t;
}

static int same_size(const lull_image* a, const lull_image* b)
{
  return a->width == b->width && a->height == b->height;
}

lull_status lull_temporal_validate(const lull_temporal_images* images, lull_error* err)
{
  const int channels = lull_format_channels(images->color.format);
  if (channels != 3 && channels != 4)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "temporal mode needs a colour image of 3 or 4 channels");
  const lull_image* guides[] = {&images->albedo, &images->normal, &images->depth,
                                &images->motion};
  for (size_t i = 0; i < sizeof guides / sizeof guides[0]; ++i)
    if (guides[i]->data && !same_size(guides[i], &images->color))
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "image size mismatch");
  if (images->motion.data && lull_format_channels(images->motion.format) < 2)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "motion image must have 2 or more channels (x, y in pixels)");
  return LULL_OK;
}

/* The rows of one image row, as planes; absent images read zeros. */
typedef struct row_buffers
{
  float* c[4];
  float* a[3];
  float* n[3];
  float* z;
  float* m[2];
} row_buffers;

lull_status lull_temporal_cpu(const lull_temporal_params* params,
                              const lull_temporal_images* images,
                              const lull_temporal_planes* planes, int num_threads,
                              lull_error* err)
{
  const int w = planes->width, h = planes->height;
  const int threads = lull_thread_count(num_threads);
  /* per thread: colour 4, albedo 3, normal 3, depth 1, motion 2 */
  const size_t stride = 13 * (size_t)w;
  float* scratch = calloc((size_t)threads * stride, sizeof(float));
  if (!scratch)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");

  /* pass 1: this frame's colour and guides into the planes (every pixel
   * before pass 2 reads neighbours) */
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < h; ++y) {
    float* s = scratch + (size_t)lull_thread_index() * stride;
    row_buffers r = {{s, s + w, s + 2 * (size_t)w, s + 3 * (size_t)w},
                     {s + 4 * (size_t)w, s + 5 * (size_t)w, s + 6 * (size_t)w},
                     {s + 7 * (size_t)w, s + 8 * (size_t)w, s + 9 * (size_t)w},
                     s + 10 * (size_t)w,
                     {s + 11 * (size_t)w, s + 12 * (size_t)w}};
    lull_image_read_row(&images->color, y, r.c, 4);
    if (images->albedo.data)
      lull_image_read_row_rgb(&images->albedo, y, r.a);
    if (images->normal.data)
      lull_image_read_row_rgb(&images->normal, y, r.n);
    if (images->depth.data) {
      float* const zp[4] = {r.z, NULL, NULL, NULL};
      lull_image_read_row(&images->depth, y, zp, 1);
    }
    for (int x = 0; x < w; ++x) {
      const float c[4] = {r.c[0][x], r.c[1][x], r.c[2][x], r.c[3][x]};
      const float a[3] = {r.a[0][x], r.a[1][x], r.a[2][x]};
      const float n[3] = {r.n[0][x], r.n[1][x], r.n[2][x]};
      lull_temporal_load(params, planes, x, y, c, a, n, r.z[x]);
    }
  }

  /* pass 2: reprojection, guards, blend; the colour, variance and albedo
   * for the spatial filter */
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < h; ++y) {
    float* s = scratch + (size_t)lull_thread_index() * stride;
    float* const mp[4] = {s + 11 * (size_t)w, s + 12 * (size_t)w, NULL, NULL};
    if (images->motion.data)
      lull_image_read_row(&images->motion, y, mp, 2);
    for (int x = 0; x < w; ++x) {
      const lull_temporal_stats st = lull_temporal_neighbourhood(params, planes, x, y);
      lull_temporal_accumulate(params, planes, x, y, mp[0][x], mp[1][x], &st);
    }
  }
  free(scratch);
  return LULL_OK;
}
