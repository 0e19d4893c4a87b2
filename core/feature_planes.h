/* The colour and feature planes of a run that takes Regression's images
 * (regression.h: colour once or in halves, albedo, normal, depth or
 * position): what the Regression and RDFC filters read on the CPU, each
 * image into float planes of width x height (row stride = width), scaled
 * and repaired the same way for both filters. */
#pragma once

#include "image.h"
#include "regression.h"

/* Reads up to 3 channels of an image into planes (rgb: albedo and normal
 * of 1 or 2 channels read as OIDN reads them). */
void lull_fp_load_planes(const lull_image* image, float* const planes[3], int channels, int rgb,
                         int threads);

/* Non-finite values to NaN, then each NaN the mean of the finite values
 * around it (lull_plane_repair). */
void lull_fp_repair(float* plane, int w, int h);

/* The scales of the depth and position features, from one set's images
 * (the same for both halves, and for every tile, so their features
 * compare). */
typedef struct lull_feature_scales
{
  float inv_depth;               /* 1 / the mean of the finite positive depths */
  float centre[3], inv_position; /* position: centroid, 1 / mean distance */
} lull_feature_scales;

/* tmp: 3 planes of w x h. */
void lull_fp_feature_scales(const lull_regression_features* s, float* tmp, int w, int h,
                            int threads, lull_feature_scales* out);

/* Loads a set's features into f (lull_regression_feature_channels planes):
 * albedo, normal, the depth feature or the position over its scale, each
 * repaired where not finite. */
void lull_fp_load_features(const lull_regression_features* s, const lull_feature_scales* sc,
                           float* const* f, int w, int h, int threads);

/* Colour of an image into 3 planes (and its 4th channel into alpha, when
 * not NULL), scaled, linearised, repaired (lull_reg_color_in). */
void lull_fp_load_color(const lull_image* image, float scale, int srgb, int nonnegative,
                        float* const planes[3], float* alpha, int threads);

/* The scale colour is brought to (lull_atrous_input_scale of the colour,
 * colorA with halves): input_scale, or automatic when it is NaN. */
lull_status lull_fp_color_scale(const lull_regression_images* images, float input_scale, int srgb,
                                int threads, float* scale, lull_error* err);

/* A given variance image (1 or 3 channels) into 3 planes, as RDFC and
 * DDID read it (lull_rdfc_variance_in: times scale^2, negative as 0),
 * non-finite values repaired. */
void lull_fp_load_variance(const lull_image* variance, float scale, float* const planes[3],
                           int threads);
