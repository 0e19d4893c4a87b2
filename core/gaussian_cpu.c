/* Gaussian blur on the CPU: normalised convolution, blur(c m) / blur(m),
 * with m = 1 for finite pixels inside the image and 0 elsewhere; each blur
 * is separable (a row pass, then a column pass).  A fourth channel (alpha)
 * passes through unchanged, as in the other filters. */
#include "gaussian.h"

#include <math.h>
#include <stdlib.h>

#include "atrous_math.h"
#include "gaussian_math.h"
#include "planes.h"
#include "threads.h"

int lull_gaussian_radius(float sigma)
{
  const float r = ceilf(3.0f * sigma);
  return r < 1.0f ? 1 : (r > 1024.0f ? 1024 : (int)r);
}

void lull_gaussian_kernel(float sigma, float* kernel)
{
  const int radius = lull_gaussian_radius(sigma);
  double sum = 0.0;
  for (int k = -radius; k <= radius; ++k) {
    kernel[k + radius] = expf(-0.5f * (float)(k * k) / (sigma * sigma));
    sum += kernel[k + radius];
  }
  for (int k = -radius; k <= radius; ++k)
    kernel[k + radius] = (float)(kernel[k + radius] / sum);
}

lull_status lull_gaussian_validate(const lull_gaussian_params* params,
                                   const lull_gaussian_images* images, lull_error* err)
{
  if (!images->color.data)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "input image not specified");
  if (!images->output.data)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "output image not specified");
  if (images->color.width != images->output.width || images->color.height != images->output.height)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "image size mismatch");
  if (lull_format_channels(images->color.format) != lull_format_channels(images->output.format))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "input/output image channel count mismatch");
  if (!(params->sigma > 0.0f) || !(params->sigma <= 341.0f))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "sigma must be in (0, 341]");
  return LULL_OK;
}

/* planes: the blurred ones first (colour, mask), then alpha */
enum { G_C0, G_C1, G_C2, G_M, G_BLURRED, G_ALPHA = G_BLURRED, G_COUNT };

/* One separable pass over planes [0, G_BLURRED): along x or along y. */
static void blur_pass(const lull_planes* src, lull_planes* dst, int w, int h, int along_x,
                      const float* kernel, int radius, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float sum[G_BLURRED] = {0};
      for (int k = -radius; k <= radius; ++k) {
        const int xx = along_x ? x + k : x, yy = along_x ? y : y + k;
        if (xx < 0 || yy < 0 || xx >= w || yy >= h)
          continue;
        const size_t j = (size_t)yy * (size_t)w + (size_t)xx;
        for (int p = 0; p < G_BLURRED; ++p)
          sum[p] += kernel[k + radius] * lull_plane_c(src, p)[j];
      }
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      for (int p = 0; p < G_BLURRED; ++p)
        lull_plane(dst, p)[i] = sum[p];
    }
}

lull_status lull_gaussian_cpu(const lull_gaussian_params* params,
                              const lull_gaussian_images* images, int num_threads,
                              const lull_progress* progress, lull_error* err)
{
  lull_status status = lull_gaussian_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const int w = images->color.width, h = images->color.height;
  const int channels = lull_format_channels(images->color.format);
  const int threads = lull_thread_count(num_threads);
  const int radius = lull_gaussian_radius(params->sigma);
  float* kernel = malloc((size_t)(2 * radius + 1) * sizeof(float));
  lull_planes a, b;
  if (!kernel || !lull_planes_init(&a, (size_t)w, (size_t)h, G_COUNT)) {
    free(kernel);
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  if (!lull_planes_init(&b, (size_t)w, (size_t)h, G_COUNT)) {
    free(kernel);
    lull_planes_free(&a);
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  lull_gaussian_kernel(params->sigma, kernel);

#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float c[4];
      lull_image_load(&images->color, x, y, c);
      int finite = 1;
      for (int k = 0; k < LULL_MIN(channels, 3); ++k)
        finite &= (c[k] - c[k]) == 0.0f;
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      for (int k = 0; k < 3; ++k)
        lull_plane(&a, G_C0 + k)[i] = finite ? lull_gaussian_in(c[k]) : 0.0f;
      lull_plane(&a, G_M)[i] = finite ? 1.0f : 0.0f;
      lull_plane(&a, G_ALPHA)[i] = c[3];
    }
  status = lull_progress_report(progress, 0.0, err);
  if (status == LULL_OK) {
    blur_pass(&a, &b, w, h, 1, kernel, radius, threads);
    status = lull_progress_report(progress, 0.5, err);
  }
  if (status == LULL_OK) {
    blur_pass(&b, &a, w, h, 0, kernel, radius, threads);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const size_t i = (size_t)y * (size_t)w + (size_t)x;
        const float m = lull_plane_c(&a, G_M)[i];
        const float inv = m > 0.0f ? 1.0f / m : 0.0f;
        float c[4];
        for (int k = 0; k < 3; ++k)
          c[k] = lull_gaussian_out(lull_plane_c(&a, G_C0 + k)[i], inv);
        c[3] = lull_plane_c(&a, G_ALPHA)[i]; /* pass 2 wrote only blurred planes */
        lull_image_store(&images->output, x, y, c);
      }
  }
  free(kernel);
  lull_planes_free(&a);
  lull_planes_free(&b);
  return status;
}
