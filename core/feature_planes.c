/* The colour and feature planes of a run with Regression's images
 * (feature_planes.h). */
#include "feature_planes.h"

#include <math.h>
#include <string.h>

#include "atrous.h"
#include "image_rows.h"
#include "planes.h"
#include "rdfc_math.h"
#include "regression_math.h"

static int has(const lull_image* image)
{
  return image->data != NULL;
}

/* Reads up to 3 channels of an image into planes (rgb: albedo and normal
 * of 1 or 2 channels read as OIDN reads them). */
void lull_fp_load_planes(const lull_image* image, float* const planes[3], int channels, int rgb,
                         int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < image->height; ++y) {
    const size_t o = (size_t)y * (size_t)image->width;
    float* rows[4] = {NULL, NULL, NULL, NULL};
    for (int c = 0; c < channels; ++c)
      rows[c] = planes[c] + o;
    if (rgb)
      lull_image_read_row_rgb(image, y, rows);
    else
      lull_image_read_row(image, y, rows, channels);
  }
}

/* Non-finite values to NaN, then each NaN the mean of the finite values
 * around it (lull_plane_repair). */
void lull_fp_repair(float* plane, int w, int h)
{
  const size_t n = (size_t)w * (size_t)h;
  for (size_t i = 0; i < n; ++i)
    if (!isfinite(plane[i]))
      plane[i] = NAN;
  lull_plane_repair(plane, w, h);
}


void lull_fp_feature_scales(const lull_regression_features* s, float* tmp, int w, int h,
                            int threads, lull_feature_scales* out)
{
  const size_t n = (size_t)w * (size_t)h;
  out->inv_depth = 1.0f;
  out->inv_position = 1.0f;
  out->centre[0] = out->centre[1] = out->centre[2] = 0.0f;
  if (has(s->depth)) {
    float* pl[3] = {tmp, NULL, NULL};
    lull_fp_load_planes(s->depth, pl, 1, 0, threads);
    double sum = 0.0;
    size_t count = 0;
    for (size_t i = 0; i < n; ++i)
      if (tmp[i] > 0.0f && tmp[i] < 1e9f) {
        sum += tmp[i];
        ++count;
      }
    if (count && sum > 0.0)
      out->inv_depth = (float)(count / sum);
  } else if (has(s->position)) {
    float* pl[3] = {tmp, tmp + n, tmp + 2 * n};
    lull_fp_load_planes(s->position, pl, 3, 0, threads);
    double c[3] = {0, 0, 0};
    size_t count = 0;
    for (size_t i = 0; i < n; ++i)
      if (isfinite(tmp[i]) && isfinite(tmp[n + i]) && isfinite(tmp[2 * n + i])) {
        for (int k = 0; k < 3; ++k)
          c[k] += tmp[k * n + i];
        ++count;
      }
    if (count) {
      double d = 0.0;
      for (int k = 0; k < 3; ++k)
        out->centre[k] = (float)(c[k] / (double)count);
      for (size_t i = 0; i < n; ++i)
        if (isfinite(tmp[i]) && isfinite(tmp[n + i]) && isfinite(tmp[2 * n + i])) {
          double r2 = 0.0;
          for (int k = 0; k < 3; ++k)
            r2 += ((double)tmp[k * n + i] - out->centre[k]) * ((double)tmp[k * n + i] - out->centre[k]);
          d += sqrt(r2);
        }
      if (d > 0.0 && isfinite(d))
        out->inv_position = (float)((double)count / d);
    }
  }
}

/* Loads a set's features into f (feature_channels planes): albedo,
 * normal, the depth feature or the position over its scale, each repaired
 * where not finite. */
void lull_fp_load_features(const lull_regression_features* s, const lull_feature_scales* sc,
                           float* const* f, int w, int h, int threads)
{
  const size_t n = (size_t)w * (size_t)h;
  int k = 0;
  if (has(s->albedo)) {
    lull_fp_load_planes(s->albedo, &f[k], 3, 1, threads);
    k += 3;
  }
  if (has(s->normal)) {
    lull_fp_load_planes(s->normal, &f[k], 3, 1, threads);
    k += 3;
  }
  if (has(s->depth)) {
    lull_fp_load_planes(s->depth, &f[k], 1, 0, threads);
    for (size_t i = 0; i < n; ++i)
      f[k][i] = lull_reg_depth_feature(f[k][i], sc->inv_depth);
    k += 1;
  } else if (has(s->position)) {
    lull_fp_load_planes(s->position, &f[k], 3, 0, threads);
    for (int c = 0; c < 3; ++c)
      for (size_t i = 0; i < n; ++i) {
        f[k + c][i] = lull_reg_position_feature(f[k + c][i], sc->centre[c], sc->inv_position);
      }
    k += 3;
  }
  for (int c = 0; c < k; ++c)
    lull_fp_repair(f[c], w, h);
}

/* Colour of an image into 3 planes (and its 4th channel into alpha, when
 * not NULL), scaled, linearised, repaired. */
void lull_fp_load_color(const lull_image* image, float scale, int srgb, int nonnegative,
                        float* const planes[3], float* alpha, int threads)
{
  const int w = image->width, h = image->height, nc = lull_format_channels(image->format);
  const size_t n = (size_t)w * (size_t)h;
  float* pl[4] = {planes[0], planes[1], planes[2], alpha};
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < h; ++y) {
    const size_t o = (size_t)y * (size_t)w;
    float* rows[4] = {pl[0] + o, pl[1] + o, pl[2] + o, alpha ? alpha + o : NULL};
    lull_image_read_row(image, y, rows, LULL_MIN(nc, alpha ? 4 : 3));
  }
  /* 1 or 2 channels: the others are 0 (and are not written back) */
  for (int c = nc; c < 3; ++c)
    memset(pl[c], 0, n * sizeof(float));
  for (int c = 0; c < 3; ++c)
    for (size_t i = 0; i < n; ++i)
      pl[c][i] = lull_reg_color_in(pl[c][i], scale, srgb, nonnegative);
  for (int c = 0; c < 3; ++c)
    lull_fp_repair(pl[c], w, h);
}

lull_status lull_fp_color_scale(const lull_regression_images* images, float input_scale, int srgb,
                                int threads, float* scale, lull_error* err)
{
  const lull_image* color =
      lull_regression_has_halves(images) ? &images->color_a : &images->color;
  lull_atrous_params ap = lull_atrous_default_params();
  ap.input_scale = input_scale;
  ap.srgb = srgb;
  *scale = 1.0f;
  return lull_atrous_input_scale(&ap, color, threads, scale, err);
}

void lull_fp_load_variance(const lull_image* variance, float scale, float* const planes[3],
                           int threads)
{
  const int w = variance->width, h = variance->height, vc = lull_format_channels(variance->format);
  const size_t n = (size_t)w * (size_t)h;
  lull_fp_load_planes(variance, planes, vc, 0, threads);
  const float s2 = scale * scale;
  /* channel 0 last: the others read it when the image has one channel */
  for (int c = 2; c >= 0; --c) {
    const float* v = planes[vc == 3 ? c : 0];
    float* out = planes[c];
    for (size_t i = 0; i < n; ++i)
      out[i] = lull_rdfc_variance_in(v[i], s2);
  }
  for (int c = 0; c < 3; ++c)
    lull_fp_repair(planes[c], w, h);
}
