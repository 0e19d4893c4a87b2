/* The "Regression" filter type: NL-means-weighted first-order regression
 * on the features (core/regression.h; Bitterli et al. 2016), from two
 * half buffers (colorA, colorB) or one (color).  With one buffer it has a
 * temporal mode (filter_temporal.c): the frame's colour accumulated with
 * its reprojected history, regressed with the variance the history
 * measured.
 *
 * Images and parameters are listed here with their defaults and ranges; the
 * handle layer enforces the ranges at commit. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "filter_types.h"

#include "../core/regression.h"

#define BOOL_PARAM(name, def, doc) {name, LULL_PARAM_BOOL, def, 0, 1, 0, 1, doc, NULL}
#define INT_PARAM(name, def, lo, hi, doc) {name, LULL_PARAM_INT, def, lo, hi, 0, 1, doc, NULL}
#define FLOAT_PARAM(name, def, lo, hi, doc) {name, LULL_PARAM_FLOAT, def, lo, hi, 0, 1, doc, NULL}
#define READ_ONLY_INT(name, doc) {name, LULL_PARAM_INT, 0, 0, 0, 1, 0, doc, NULL}

enum
{
  RI_COLOR, RI_COLOR_A, RI_COLOR_B, RI_ALBEDO, RI_ALBEDO_A, RI_ALBEDO_B, RI_NORMAL, RI_NORMAL_A,
  RI_NORMAL_B, RI_DEPTH, RI_DEPTH_A, RI_DEPTH_B, RI_POSITION, RI_POSITION_A, RI_POSITION_B,
  RI_VARIANCE, RI_OUTPUT, RI_OUTPUT_VARIANCE, RI_MOTION, RI_IMAGES
};
static const char* const regression_images[] = {
    "color",    "colorA",    "colorB",    "albedo",   "albedoA", "albedoB",
    "normal",   "normalA",   "normalB",   "depth",    "depthA",  "depthB",
    "position", "positionA", "positionB", "variance", "output",  "outputVariance",
    "motion",   NULL};

enum
{
  RP_RADIUS, RP_PATCH, RP_BANDWIDTH_LOW, RP_BANDWIDTH_HIGH, RP_SECOND_RADIUS,
  RP_SECOND_BANDWIDTH, RP_RIDGE, RP_FIREFLIES, RP_HDR, RP_SRGB, RP_INPUT_SCALE, RP_MAX_MEMORY,
  RP_TEMPORAL, RP_RESET_HISTORY, RP_FRAME, RP_TEMPORAL_ALPHA, RP_MOMENTS_ALPHA, RP_ALBEDO_ALPHA,
  RP_MAX_HISTORY, RP_CLIP_SIGMA, RP_REJECT_SIGMA, RP_TILE_ALIGNMENT, RP_TILE_OVERLAP, RP_COUNT
};

static const lull_param_def regression_params[RP_COUNT] = {
    INT_PARAM("radius", 9, 1, 32, "window radius: each fit covers (2 radius + 1)^2 pixels"),
    INT_PARAM("patchRadius", LULL_REG_PATCH_AUTO, LULL_REG_PATCH_AUTO, 8,
              "NL-means patch radius of the weights (-1: 3 with halves, 0 with one buffer)"),
    FLOAT_PARAM("bandwidthLow", 0.5, 1e-3, 1e3,
                "NL-means bandwidth k of the sharper candidate (one buffer: the only one)"),
    FLOAT_PARAM("bandwidthHigh", 1.0, 1e-3, 1e3, "halves: NL-means bandwidth k of the smoother candidate"),
    INT_PARAM("secondPassRadius", 16, 0, 32,
              "halves: window radius of the second, self-guided pass (0: none)"),
    FLOAT_PARAM("secondPassBandwidth", 2.5, 1e-3, 1e3, "halves: NL-means bandwidth k of the second pass"),
    FLOAT_PARAM("ridge", 1e-5, 0, 1e6, "ridge on the slopes, relative to the window's weight"),
    BOOL_PARAM("fireflies", 1, "scale isolated fireflies down before filtering"),
    BOOL_PARAM("hdr", 1, "false: colour is LDR in [0, 1] and the output is clamped"),
    BOOL_PARAM("srgb", 0, "LDR colour is sRGB-encoded"),
    {"inputScale", LULL_PARAM_FLOAT, NAN, FLT_MIN, FLT_MAX, 0, 0, "colour scale (NaN: automatic)", NULL},
    INT_PARAM("maxMemoryMB", -1, INT_MIN, INT_MAX, "memory cap in MB (negative: no cap)"),
    LULL_TEMPORAL_PARAM_DEFS,
    LULL_TEMPORAL_BLEND_PARAM_DEFS(LULL_REG_TEMPORAL_ALPHA, LULL_TEMPORAL_MOMENTS_ALPHA,
                                   LULL_REG_TEMPORAL_REJECT),
    READ_ONLY_INT("tileAlignment", "tile alignment for manual tiling"),
    READ_ONLY_INT("tileOverlap", "tile overlap for manual tiling"),
};

/* (filter_types.h) */
lull_regression_images lull_filter_regression_images(const lull_image* im)
{
  lull_regression_images images;
  images.color = im[RI_COLOR];
  images.color_a = im[RI_COLOR_A];
  images.color_b = im[RI_COLOR_B];
  images.albedo = im[RI_ALBEDO];
  images.albedo_a = im[RI_ALBEDO_A];
  images.albedo_b = im[RI_ALBEDO_B];
  images.normal = im[RI_NORMAL];
  images.normal_a = im[RI_NORMAL_A];
  images.normal_b = im[RI_NORMAL_B];
  images.depth = im[RI_DEPTH];
  images.depth_a = im[RI_DEPTH_A];
  images.depth_b = im[RI_DEPTH_B];
  images.position = im[RI_POSITION];
  images.position_a = im[RI_POSITION_A];
  images.position_b = im[RI_POSITION_B];
  images.variance = im[RI_VARIANCE];
  images.output = im[RI_OUTPUT];
  images.output_variance = im[RI_OUTPUT_VARIANCE];
  return images;
}

static lull_regression_images regression_views(const lull_filter_config* config)
{
  return lull_filter_regression_images(config->images);
}

static lull_regression_params regression_from_values(const double* v)
{
  lull_regression_params p = lull_regression_default_params();
  p.radius = (int)v[RP_RADIUS];
  p.patch_radius = (int)v[RP_PATCH];
  p.bandwidth[0] = (float)v[RP_BANDWIDTH_LOW];
  p.bandwidth[1] = (float)v[RP_BANDWIDTH_HIGH];
  p.second_radius = (int)v[RP_SECOND_RADIUS];
  p.second_bandwidth = (float)v[RP_SECOND_BANDWIDTH];
  p.ridge = (float)v[RP_RIDGE];
  p.fireflies = v[RP_FIREFLIES] != 0;
  p.hdr = v[RP_HDR] != 0;
  p.srgb = v[RP_SRGB] != 0;
  p.input_scale = (float)v[RP_INPUT_SCALE];
  /* OIDN's maxMemoryMB: -1 (any negative) is no cap; 0 still caps */
  p.memory_cap = v[RP_MAX_MEMORY] < 0 ? 0 : LULL_MAX((size_t)1, (size_t)(v[RP_MAX_MEMORY] * 1048576.0));
  return p;
}

static lull_status regression_check(const lull_filter_config* config, lull_error* err)
{
  const lull_regression_images images = regression_views(config);
  const lull_regression_params params = regression_from_values(config->values);
  lull_status status = lull_regression_validate(&params, &images, err);
  if (status != LULL_OK)
    return status;
  if (config->values[RP_TEMPORAL] == 0)
    return lull_filter_motion_needs_temporal(&config->images[RI_MOTION], err);
  return lull_filter_temporal_regression_check(&images, &config->images[RI_MOTION], err);
}

static lull_status regression_execute(lull_backend* backend, const lull_filter_config* config,
                                      const lull_progress* progress, int async, lull_error* err)
{
  if (!backend->ops->regression)
    return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                     "filter 'Regression' is not supported on this device");
  const lull_regression_images images = regression_views(config);
  const lull_regression_params params = regression_from_values(config->values);
  const double* v = config->values;
  if (v[RP_TEMPORAL] != 0) {
    const lull_filter_temporal t = lull_filter_temporal_from_values(v, RP_TEMPORAL, RP_TEMPORAL_ALPHA);
    return lull_filter_temporal_regression(backend, config->state, &t, &params, &images,
                                           &config->images[RI_MOTION], progress, async, err);
  }
  return backend->ops->regression(backend, &params, &images, progress, async, err);
}

/* Pixels of overlap manual tiling needs (the filter's reach, rounded up to
 * OIDN's 16-pixel alignment). */
static int regression_tile_overlap(const lull_filter_config* config)
{
  const lull_regression_images images = regression_views(config);
  const lull_regression_params params = regression_from_values(config->values);
  return (lull_regression_reach(&params, &images) + 15) / 16 * 16;
}

const lull_filter_type lull_filter_type_regression = {
    "Regression", regression_images, regression_params, RP_COUNT, regression_check,
    regression_execute, regression_tile_overlap, 0};
