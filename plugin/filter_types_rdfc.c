/* The "RDFC" filter type: Robust Denoising using Feature and Color
 * information (core/rdfc.h; Rousselle, Manzi and Zwicker 2013, as Vicini
 * 2015 ch. 3 gives it), from two half buffers (colorA, colorB) or one
 * (color) with its variance.  Images are Regression's; parameters are
 * listed here with their defaults and ranges, which the handle layer
 * enforces at commit. */
#include <float.h>
#include <math.h>

#include "filter_types.h"

#include "../core/rdfc.h"

static const char* const rdfc_images[] = {
    "color",    "colorA",    "colorB",    "albedo",   "albedoA", "albedoB",
    "normal",   "normalA",   "normalB",   "depth",    "depthA",  "depthB",
    "position", "positionA", "positionB", "variance", "output",  "outputVariance",
    NULL};

enum
{
  DP_RADIUS, DP_K_COLOR, DP_K_FEATURE, DP_TAU, DP_SECOND_PASS, DP_HDR, DP_SRGB, DP_INPUT_SCALE,
  DP_TILE_ALIGNMENT, DP_TILE_OVERLAP, DP_COUNT
};

static const lull_param_def rdfc_params[DP_COUNT] = {
    {"radius", LULL_PARAM_INT, 10, 1, 32, 0, 1,
     "window radius R of the candidate filters: (2R + 1)^2 pixels (thesis: 10)", NULL},
    {"colorSensitivity", LULL_PARAM_FLOAT, 0.45, 1e-3, 1e3, 0, 1,
     "k_c: the NL-means colour weights' sensitivity (eq. 3.7)", NULL},
    {"featureSensitivity", LULL_PARAM_FLOAT, 0.6, 1e-3, 1e3, 0, 1,
     "k_f: the feature weights' sensitivity (eq. 3.10)", NULL},
    {"tau", LULL_PARAM_FLOAT, 1e-3, 0, 1e3, 0, 1,
     "feature variance floor of candidates r, g (b: a tenth)", NULL},
    {"secondPass", LULL_PARAM_BOOL, 1, 0, 1, 0, 1, "filter the blend once more (step 5)", NULL},
    {"hdr", LULL_PARAM_BOOL, 1, 0, 1, 0, 1, "false: colour is LDR in [0, 1] and the output is clamped", NULL},
    {"srgb", LULL_PARAM_BOOL, 0, 0, 1, 0, 1, "LDR colour is sRGB-encoded", NULL},
    {"inputScale", LULL_PARAM_FLOAT, NAN, FLT_MIN, FLT_MAX, 0, 0, "colour scale (NaN: automatic)", NULL},
    {"tileAlignment", LULL_PARAM_INT, 0, 0, 0, 1, 0, "tile alignment for manual tiling", NULL},
    {"tileOverlap", LULL_PARAM_INT, 0, 0, 0, 1, 0, "tile overlap for manual tiling", NULL},
};

/* The images are Regression's, in the same order. */
static lull_rdfc_images rdfc_views(const lull_filter_config* config)
{
  return lull_filter_regression_images(config->images);
}

static lull_rdfc_params rdfc_from_values(const double* v)
{
  lull_rdfc_params p = lull_rdfc_default_params();
  p.radius = (int)v[DP_RADIUS];
  p.k_color = (float)v[DP_K_COLOR];
  p.k_feature = (float)v[DP_K_FEATURE];
  p.tau = (float)v[DP_TAU];
  p.second_pass = v[DP_SECOND_PASS] != 0;
  p.hdr = v[DP_HDR] != 0;
  p.srgb = v[DP_SRGB] != 0;
  p.input_scale = (float)v[DP_INPUT_SCALE];
  return p;
}

static lull_status rdfc_check(const lull_filter_config* config, lull_error* err)
{
  const lull_rdfc_images images = rdfc_views(config);
  const lull_rdfc_params params = rdfc_from_values(config->values);
  return lull_rdfc_validate(&params, &images, err);
}

static lull_status rdfc_execute(lull_backend* backend, const lull_filter_config* config,
                                const lull_progress* progress, int async, lull_error* err)
{
  if (!backend->ops->rdfc)
    return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                     "filter 'RDFC' is not supported on this device");
  const lull_rdfc_images images = rdfc_views(config);
  const lull_rdfc_params params = rdfc_from_values(config->values);
  return backend->ops->rdfc(backend, &params, &images, progress, async, err);
}

/* Pixels of overlap manual tiling needs (the filter's reach, rounded up to
 * OIDN's 16-pixel alignment). */
static int rdfc_tile_overlap(const lull_filter_config* config)
{
  const lull_rdfc_params params = rdfc_from_values(config->values);
  return (lull_rdfc_reach(&params) + 15) / 16 * 16;
}

const lull_filter_type lull_filter_type_rdfc = {
    "RDFC", rdfc_images, rdfc_params, DP_COUNT, rdfc_check, rdfc_execute, rdfc_tile_overlap, 0};
