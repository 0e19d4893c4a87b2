/* The "DDID" filter type: dual-domain image denoising (core/ddid.h;
 * Knaus and Zwicker 2013, 2015, as Vicini 2015 ch. 4 gives it), adapted to
 * Monte Carlo renders: from two half buffers (colorA, colorB) or one
 * (color) with its variance, optionally guided by the renderer's features.
 * Images are Regression's (outputVariance is refused at commit);
 * parameters are listed here with their defaults and ranges, which the
 * handle layer enforces at commit. */
#include <float.h>
#include <math.h>

#include "filter_types.h"

#include "../core/ddid.h"

static const char* const ddid_images[] = {
    "color",    "colorA",    "colorB",    "albedo",   "albedoA", "albedoB",
    "normal",   "normalA",   "normalB",   "depth",    "depthA",  "depthB",
    "position", "positionA", "positionB", "variance", "output",  "outputVariance",
    NULL};

enum
{
  DD_ITERATIONS, DD_SIGMA_SPATIAL, DD_RANGE, DD_FREQUENCY, DD_LOG_ALPHA, DD_K_FEATURE, DD_HDR,
  DD_SRGB, DD_INPUT_SCALE, DD_TILE_ALIGNMENT, DD_TILE_OVERLAP, DD_COUNT
};

static const lull_param_def ddid_params[DD_COUNT] = {
    {"iterations", LULL_PARAM_INT, 8, 1, 16, 0, 1, "N: the dual-domain steps (§4.3: 8)", NULL},
    {"spatialSigma", LULL_PARAM_FLOAT, 13, 0.5, 20, 0, 1,
     "sigma_s: the spatial kernel's width; the last step's window radius is 2 sigma_s (13)", NULL},
    {"rangeScale", LULL_PARAM_FLOAT, 5.3, 1e-3, 1e3, 0, 1,
     "gamma_r N: the guide's colour distances over it times the variance (eq. 4.9: 5.3)", NULL},
    {"frequencyScale", LULL_PARAM_FLOAT, 200, 1e-3, 1e5, 0, 1,
     "gamma_f N: the Fourier coefficients' power over it times the variance (eq. 4.10; the "
     "thesis' 13 is for white noise, renders' noise needs more: docs/ddid.md)",
     NULL},
    {"logAlpha", LULL_PARAM_FLOAT, 15, 0, 100, 0, 1, "ln alpha of the schedule of S_n, T_n (15)",
     NULL},
    {"featureSensitivity", LULL_PARAM_FLOAT, 0.2, 0, 1e3, 0, 1,
     "k_f of the feature weights exp(-|f_p - f_q|^2 / 2 k_f^2); 0: features ignored", NULL},
    {"hdr", LULL_PARAM_BOOL, 1, 0, 1, 0, 1, "false: colour is LDR in [0, 1] and the output is clamped", NULL},
    {"srgb", LULL_PARAM_BOOL, 0, 0, 1, 0, 1, "LDR colour is sRGB-encoded", NULL},
    {"inputScale", LULL_PARAM_FLOAT, NAN, FLT_MIN, FLT_MAX, 0, 0, "colour scale (NaN: automatic)", NULL},
    {"tileAlignment", LULL_PARAM_INT, 0, 0, 0, 1, 0, "tile alignment for manual tiling", NULL},
    {"tileOverlap", LULL_PARAM_INT, 0, 0, 0, 1, 0, "tile overlap for manual tiling", NULL},
};

static lull_ddid_images ddid_views(const lull_filter_config* config)
{
  return lull_filter_regression_images(config->images);
}

static lull_ddid_params ddid_from_values(const double* v)
{
  lull_ddid_params p = lull_ddid_default_params();
  p.iterations = (int)v[DD_ITERATIONS];
  p.sigma_spatial = (float)v[DD_SIGMA_SPATIAL];
  p.range = (float)v[DD_RANGE];
  p.frequency = (float)v[DD_FREQUENCY];
  p.log_alpha = (float)v[DD_LOG_ALPHA];
  p.k_feature = (float)v[DD_K_FEATURE];
  p.hdr = v[DD_HDR] != 0;
  p.srgb = v[DD_SRGB] != 0;
  p.input_scale = (float)v[DD_INPUT_SCALE];
  return p;
}

static lull_status ddid_check(const lull_filter_config* config, lull_error* err)
{
  const lull_ddid_images images = ddid_views(config);
  const lull_ddid_params params = ddid_from_values(config->values);
  return lull_ddid_validate(&params, &images, err);
}

static lull_status ddid_execute(lull_backend* backend, const lull_filter_config* config,
                                const lull_progress* progress, int async, lull_error* err)
{
  if (!backend->ops->ddid)
    return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                     "filter 'DDID' is not supported on this device");
  const lull_ddid_images images = ddid_views(config);
  const lull_ddid_params params = ddid_from_values(config->values);
  return backend->ops->ddid(backend, &params, &images, progress, async, err);
}

/* Pixels of overlap manual tiling needs (the filter's reach, rounded up to
 * OIDN's 16-pixel alignment). */
static int ddid_tile_overlap(const lull_filter_config* config)
{
  const lull_ddid_params params = ddid_from_values(config->values);
  return (lull_ddid_reach(&params) + 15) / 16 * 16;
}

const lull_filter_type lull_filter_type_ddid = {
    "DDID", ddid_images, ddid_params, DD_COUNT, ddid_check, ddid_execute, ddid_tile_overlap, 0};
