/* Image quality metrics of denoised renders against a reference, as the
 * denoising literature reports them:
 *
 *   relMSE  mean over pixels and RGB channels of (x - y)^2 / (y^2 + 0.01)
 *           (Rousselle et al. 2011, on linear HDR values);
 *   PSNR    10 log10(1 / MSE) of the tone-mapped images: clamp to [0, 1]
 *           and encode sRGB (the convention of OIDN's compare_image.py);
 *   SSIM    mean structural similarity (Wang et al. 2004: 11x11 Gaussian
 *           window, sigma 1.5, K1 = 0.01, K2 = 0.03) of the same tone-mapped
 *           images, averaged over R, G and B.
 *
 * Images are interleaved floats with `channels` per pixel (>= 3; only RGB
 * is compared), linear.  A non-finite value of the image counts as the
 * worst possible pixel: a relMSE term of 1e30, and for PSNR and SSIM the
 * display value farthest from the reference's (NaN had read as 0 and +inf
 * as 1, so a NaN over black scored a perfect PSNR). */
#pragma once

#include <stddef.h>

typedef struct lull_metrics
{
  double rel_mse;
  double psnr;
  double ssim;
} lull_metrics;

double lull_metric_rel_mse(const float* image, const float* reference, size_t width,
                           size_t height, int channels);
double lull_metric_psnr(const float* image, const float* reference, size_t width, size_t height,
                        int channels);
/* Returns NaN when out of memory (SSIM itself lies in [-1, 1]). */
double lull_metric_ssim(const float* image, const float* reference, size_t width, size_t height,
                        int channels);
lull_metrics lull_metrics_compute(const float* image, const float* reference, size_t width,
                                  size_t height, int channels);

/* The tone mapping PSNR and SSIM use: clamp to [0, 1], sRGB-encode. */
float lull_metric_tonemap(float linear);
