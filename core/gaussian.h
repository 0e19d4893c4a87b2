/* A plain Gaussian blur: the reference smoother of the tests and a baseline
 * for comparisons (the edge-free limit of the à-trous filter).  Taps outside
 * the image and non-finite pixels are skipped and the weights renormalised,
 * so the blur of a constant image is that constant and NaN never spreads. */
#pragma once

#include "image.h"
#include "status.h"

typedef struct lull_gaussian_params
{
  float sigma; /* standard deviation in pixels; the kernel radius is ceil(3 sigma) */
} lull_gaussian_params;

typedef struct lull_gaussian_images
{
  lull_image color;  /* 1 to 4 channels */
  lull_image output; /* same size and channels */
} lull_gaussian_images;

lull_status lull_gaussian_validate(const lull_gaussian_params* params,
                                   const lull_gaussian_images* images, lull_error* err);

/* Radius in pixels of the kernel for sigma. */
int lull_gaussian_radius(float sigma);

/* The 2 radius + 1 taps of the 1-D kernel for sigma, summing to 1 (the
 * normalised convolution divides the scale out anyway; unnormalised, the
 * sums grew to ~2.5 sigma times the colour and overflowed near FLT_MAX). */
void lull_gaussian_kernel(float sigma, float* kernel);

lull_status lull_gaussian_cpu(const lull_gaussian_params* params,
                              const lull_gaussian_images* images, int num_threads,
                              const lull_progress* progress, lull_error* err);
