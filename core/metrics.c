#include "metrics.h"

#include <math.h>
#include <stdlib.h>

#include "atrous_math.h"

float lull_metric_tonemap(float linear)
{
  if (!(linear > 0.0f))
    return 0.0f; /* negative and NaN */
  if (linear >= 1.0f)
    return 1.0f;
  return lull_linear_to_srgb(linear);
}

double lull_metric_rel_mse(const float* image, const float* reference, size_t width,
                           size_t height, int channels)
{
  const size_t n = width * height;
  double sum = 0;
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) {
      const double x = image[i * (size_t)channels + (size_t)c];
      const double y = reference[i * (size_t)channels + (size_t)c];
      const double e = (x - y) * (x - y) / (y * y + 0.01);
      sum += isfinite(e) ? e : 1e30;
    }
  return n ? sum / (double)(3 * n) : 0.0;
}

/* The display value PSNR and SSIM compare for image value v against the
 * reference's display value y: its tone-mapped value, or for a non-finite
 * v the value farthest from y (the worst possible pixel). */
static double tonemap_image(float v, double y)
{
  if (!isfinite(v))
    return y < 0.5 ? 1.0 : 0.0;
  return lull_metric_tonemap(v);
}

double lull_metric_psnr(const float* image, const float* reference, size_t width, size_t height,
                        int channels)
{
  const size_t n = width * height;
  double sum = 0;
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) {
      const double y = lull_metric_tonemap(reference[i * (size_t)channels + (size_t)c]);
      const double x = tonemap_image(image[i * (size_t)channels + (size_t)c], y);
      sum += (x - y) * (x - y);
    }
  const double mse = n ? sum / (double)(3 * n) : 0.0;
  return mse > 0 ? 10.0 * log10(1.0 / mse) : INFINITY;
}

/* Separable 11-tap Gaussian blur (sigma 1.5) of a plane, renormalised at
 * the borders. */
static void blur11(const double* src, double* tmp, double* dst, size_t w, size_t h)
{
  double k[11];
  for (int i = 0; i < 11; ++i)
    k[i] = exp(-0.5 * (i - 5) * (i - 5) / (1.5 * 1.5));
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x) {
      double s = 0, ws = 0;
      for (int i = -5; i <= 5; ++i) {
        const long xx = (long)x + i;
        if (xx < 0 || xx >= (long)w)
          continue;
        s += k[i + 5] * src[y * w + (size_t)xx];
        ws += k[i + 5];
      }
      tmp[y * w + x] = s / ws;
    }
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x) {
      double s = 0, ws = 0;
      for (int i = -5; i <= 5; ++i) {
        const long yy = (long)y + i;
        if (yy < 0 || yy >= (long)h)
          continue;
        s += k[i + 5] * tmp[(size_t)yy * w + x];
        ws += k[i + 5];
      }
      dst[y * w + x] = s / ws;
    }
}

double lull_metric_ssim(const float* image, const float* reference, size_t width, size_t height,
                        int channels)
{
  const size_t n = width * height;
  if (n == 0)
    return 1.0;
  /* zeroed although every plane is written before it is read: clang-tidy's
   * analyser cannot see that through the blur's loops */
  double* buf = calloc(8 * n, sizeof(double));
  if (!buf)
    return NAN;
  double *x = buf, *y = buf + n, *tmp = buf + 2 * n, *mx = buf + 3 * n, *my = buf + 4 * n,
         *sxx = buf + 5 * n, *syy = buf + 6 * n, *sxy = buf + 7 * n;
  const double c1 = 0.01 * 0.01, c2 = 0.03 * 0.03;
  double total = 0;
  for (int c = 0; c < 3; ++c) {
    for (size_t i = 0; i < n; ++i) {
      y[i] = lull_metric_tonemap(reference[i * (size_t)channels + (size_t)c]);
      x[i] = tonemap_image(image[i * (size_t)channels + (size_t)c], y[i]);
    }
    blur11(x, tmp, mx, width, height);
    blur11(y, tmp, my, width, height);
    /* second moments: reuse x, y as products */
    for (size_t i = 0; i < n; ++i) {
      const double a = x[i], b = y[i];
      x[i] = a * a;
      y[i] = b * b;
      sxy[i] = a * b;
    }
    blur11(x, tmp, sxx, width, height);
    blur11(y, tmp, syy, width, height);
    blur11(sxy, tmp, x, width, height); /* x now holds E[ab] */
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      const double vx = sxx[i] - mx[i] * mx[i];
      const double vy = syy[i] - my[i] * my[i];
      const double cov = x[i] - mx[i] * my[i];
      sum += ((2 * mx[i] * my[i] + c1) * (2 * cov + c2)) /
             ((mx[i] * mx[i] + my[i] * my[i] + c1) * (vx + vy + c2));
    }
    total += sum / (double)n;
  }
  free(buf);
  return total / 3.0;
}

lull_metrics lull_metrics_compute(const float* image, const float* reference, size_t width,
                                  size_t height, int channels)
{
  lull_metrics m;
  m.rel_mse = lull_metric_rel_mse(image, reference, width, height, channels);
  m.psnr = lull_metric_psnr(image, reference, width, height, channels);
  m.ssim = lull_metric_ssim(image, reference, width, height, channels);
  return m;
}
