/* The filter types and how each maps onto the core filters.
 *
 * "ATrous"     the edge-avoiding à-trous filter with every knob exposed.
 * "Gaussian"   a plain Gaussian blur (reference and tests).
 * "RT"         OIDN's name: lull's best classical filter for the inputs
 *              given (see rt_atrous_params for the exact mapping).
 * "RTLightmap" OIDN's name for lightmaps: à-trous without guides.
 *
 * Every parameter is listed with its type, default and valid range; the
 * handle layer enforces the ranges at commit, and README.md documents the
 * same tables. */
#include "filter_types.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

#include "../core/atrous.h"
#include "../core/atrous_tiled.h"
#include "../core/gaussian.h"
#include "../core/regression.h"

#define BOOL_PARAM(name, def, doc) {name, LULL_PARAM_BOOL, def, 0, 1, 0, 1, doc, NULL}
#define INT_PARAM(name, def, lo, hi, doc) {name, LULL_PARAM_INT, def, lo, hi, 0, 1, doc, NULL}
#define FLOAT_PARAM(name, def, lo, hi, doc) {name, LULL_PARAM_FLOAT, def, lo, hi, 0, 1, doc, NULL}
#define READ_ONLY_INT(name, doc) {name, LULL_PARAM_INT, 0, 0, 0, 1, 0, doc, NULL}

/* OIDN's quality setter: DEFAULT is stored as HIGH, and a mode other than
 * FAST, BALANCED or HIGH is an error at once that leaves the filter as it
 * was (committed, if it was). */
static const char* accept_quality(double* value)
{
  if (*value == OIDN_QUALITY_DEFAULT)
    *value = OIDN_QUALITY_HIGH;
  if (*value != OIDN_QUALITY_FAST && *value != OIDN_QUALITY_BALANCED && *value != OIDN_QUALITY_HIGH)
    return "invalid filter quality mode";
  return NULL;
}
#define QUALITY_PARAM                                                                         \
  {"quality", LULL_PARAM_INT, OIDN_QUALITY_HIGH, OIDN_QUALITY_DEFAULT, OIDN_QUALITY_HIGH, 0, 1, \
   "4 fast, 5 balanced, 6 high (0, default, is stored as high)", accept_quality}

static const double AUTO = NAN;

/* -- helpers ------------------------------------------------------------------ */

static lull_status check_sizes(const lull_filter_config* config, int count, lull_error* err)
{
  const lull_image* first = NULL;
  for (int i = 0; i < count; ++i) {
    const lull_image* image = &config->images[i];
    if (!image->data)
      continue;
    if (!first)
      first = image;
    else if (image->width != first->width || image->height != first->height)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "image size mismatch");
  }
  return LULL_OK;
}

/* Pixels on each side of a tile that an à-trous run with these parameters
 * and images reads (lull_atrous_reach, which the CPU backend's own tiling
 * uses too), rounded up to OIDN's 16-pixel alignment. */
static int atrous_overlap(const lull_atrous_params* params, const lull_atrous_images* images)
{
  return (lull_atrous_reach(params, images) + 15) / 16 * 16;
}

/* OIDN's maxMemoryMB as a scratch cap in bytes: -1 (any negative) is no
 * cap; 0 still caps (the smallest tiles). */
static size_t memory_cap(double max_memory_mb)
{
  if (max_memory_mb < 0)
    return 0;
  const double bytes = max_memory_mb * 1048576.0;
  return bytes < 1.0 ? 1 : (size_t)bytes;
}

/* -- temporal mode (ATrous and RT here, Regression too; filter_temporal.c) ------- */

/* Commit-time checks shared by ATrous and RT: motion only with temporal. */
static lull_status temporal_check(const lull_atrous_images* images, const lull_image* motion,
                                  int temporal, lull_error* err)
{
  if (!temporal)
    return lull_filter_motion_needs_temporal(motion, err);
  return lull_filter_temporal_check(images, motion, err);
}

/* -- ATrous ------------------------------------------------------------------- */

enum
{
  A_COLOR, A_OUTPUT, A_ALBEDO, A_NORMAL, A_DEPTH, A_POSITION, A_VARIANCE, A_MOTION, A_IMAGES
};
static const char* const atrous_images[] = {"color", "output", "albedo", "normal", "depth",
                                            "position", "variance", "motion", NULL};

enum
{
  AP_ITERATIONS, AP_COLOR_MODE, AP_SIGMA_COLOR, AP_SIGMA_LUMINANCE, AP_SIGMA_NORMAL,
  AP_SIGMA_DEPTH, AP_SIGMA_ALBEDO, AP_DEMODULATE, AP_HDR, AP_SRGB, AP_INPUT_SCALE,
  AP_MAX_MEMORY, AP_SCHEDULE, AP_PACKED_GUIDES, AP_TEMPORAL, AP_RESET_HISTORY, AP_FRAME,
  AP_TEMPORAL_ALPHA, AP_MOMENTS_ALPHA, AP_ALBEDO_ALPHA, AP_MAX_HISTORY, AP_CLIP_SIGMA,
  AP_REJECT_SIGMA, AP_TILE_ALIGNMENT, AP_TILE_OVERLAP, AP_COUNT
};

static const lull_param_def atrous_params[AP_COUNT] = {
    INT_PARAM("iterations", 5, 1, LULL_ATROUS_MAX_ITERATIONS,
              "levels; level i's taps are 2^i pixels apart (filter width 4 (2^N - 1) + 1)"),
    INT_PARAM("colorMode", LULL_ATROUS_COLOR_VARIANCE, 0, 1,
              "0: fixed sigmaColor halved per level (Dammertz 2010); 1: luminance distance "
              "over its standard deviation (SVGF)"),
    FLOAT_PARAM("sigmaColor", 1.0, 1e-6, FLT_MAX, "colorMode 0: colour sigma of level 0"),
    FLOAT_PARAM("sigmaLuminance", 1.5, 1e-6, FLT_MAX,
                "colorMode 1: allowed luminance difference in standard deviations"),
    FLOAT_PARAM("sigmaNormal", 0.5, 0, FLT_MAX, "normal sigma (|n_p - n_q|), 0.01 at least in effect; 0 disables"),
    FLOAT_PARAM("sigmaDepth", 4.0, 0, FLT_MAX,
                "depth/position sigma in pixel footprints per pixel of distance; 0 disables"),
    FLOAT_PARAM("sigmaAlbedo", 0.3, 0, FLT_MAX, "albedo sigma, 1e-6 at least in effect; 0 disables"),
    BOOL_PARAM("demodulate", 1, "filter colour / albedo and multiply the albedo back"),
    BOOL_PARAM("hdr", 1, "false: colour is LDR in [0, 1] and the output is clamped"),
    BOOL_PARAM("srgb", 0, "LDR colour is sRGB-encoded"),
    FLOAT_PARAM("inputScale", AUTO, FLT_MIN, FLT_MAX,
                "colour scale (NaN: automatic with colorMode 1 on linear colour, else 1)"),
    INT_PARAM("maxMemoryMB", -1, INT_MIN, INT_MAX, "memory cap in MB (negative: no cap)"),
    INT_PARAM("schedule", -1, -1, 1,
              "CUDA: 0 baseline (dilated taps), 1 permuted (Dolp et al. 2024), -1 the faster"),
    BOOL_PARAM("packedGuides", 0, "CUDA: fp16 colour and oct-encoded normals"),
    LULL_TEMPORAL_PARAM_DEFS,
    LULL_TEMPORAL_BLEND_PARAM_DEFS(LULL_TEMPORAL_ALPHA, LULL_TEMPORAL_MOMENTS_ALPHA,
                                   LULL_TEMPORAL_REJECT_SIGMA),
    READ_ONLY_INT("tileAlignment", "tile alignment for manual tiling"),
    READ_ONLY_INT("tileOverlap", "tile overlap for manual tiling"),
};

static lull_atrous_images atrous_views(const lull_filter_config* config)
{
  lull_atrous_images images;
  images.color = config->images[A_COLOR];
  images.output = config->images[A_OUTPUT];
  images.albedo = config->images[A_ALBEDO];
  images.normal = config->images[A_NORMAL];
  images.depth = config->images[A_DEPTH];
  images.position = config->images[A_POSITION];
  images.variance = config->images[A_VARIANCE];
  return images;
}

static lull_atrous_params atrous_from_values(const double* v)
{
  lull_atrous_params p = lull_atrous_default_params();
  p.iterations = (int)v[AP_ITERATIONS];
  p.color_mode = (int)v[AP_COLOR_MODE];
  p.sigma_color = (float)v[AP_SIGMA_COLOR];
  p.sigma_luminance = (float)v[AP_SIGMA_LUMINANCE];
  p.sigma_normal = (float)v[AP_SIGMA_NORMAL];
  p.sigma_depth = (float)v[AP_SIGMA_DEPTH];
  p.sigma_albedo = (float)v[AP_SIGMA_ALBEDO];
  p.demodulate = v[AP_DEMODULATE] != 0;
  p.clamp_output = v[AP_HDR] == 0;
  p.srgb = v[AP_SRGB] != 0;
  p.input_scale = (float)v[AP_INPUT_SCALE]; /* NaN: automatic (atrous.h) */
  p.packed_guides = v[AP_PACKED_GUIDES] != 0;
  p.memory_cap = memory_cap(v[AP_MAX_MEMORY]);
  return p;
}

static lull_status atrous_check(const lull_filter_config* config, lull_error* err)
{
  const lull_atrous_images images = atrous_views(config);
  const lull_atrous_params params = atrous_from_values(config->values);
  if (config->values[AP_HDR] != 0 && config->values[AP_SRGB] != 0)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "hdr and srgb modes cannot be enabled at the same time");
  const lull_status status = lull_atrous_validate(&params, &images, err);
  if (status != LULL_OK)
    return status;
  return temporal_check(&images, &config->images[A_MOTION], config->values[AP_TEMPORAL] != 0,
                        err);
}

static lull_status atrous_execute(lull_backend* backend, const lull_filter_config* config,
                                  const lull_progress* progress, int async, lull_error* err)
{
  const lull_atrous_images images = atrous_views(config);
  const lull_atrous_params params = atrous_from_values(config->values);
  const double* v = config->values;
  if (v[AP_TEMPORAL] != 0) {
    const lull_filter_temporal t = lull_filter_temporal_from_values(v, AP_TEMPORAL, AP_TEMPORAL_ALPHA);
    return lull_filter_temporal_atrous(backend, config->state, &t, &params, &images,
                                       &config->images[A_MOTION], (int)v[AP_SCHEDULE],
                                       progress, async, err);
  }
  return backend->ops->atrous(backend, &params, &images, (int)config->values[AP_SCHEDULE],
                              progress, async, err);
}

static int atrous_tile_overlap(const lull_filter_config* config)
{
  const lull_atrous_images images = atrous_views(config);
  const lull_atrous_params params = atrous_from_values(config->values);
  return atrous_overlap(&params, &images);
}

/* -- Gaussian ------------------------------------------------------------------ */

enum { G_COLOR, G_OUTPUT, G_IMAGES };
static const char* const gaussian_images[] = {"color", "output", NULL};
enum { GP_SIGMA, GP_TILE_ALIGNMENT, GP_TILE_OVERLAP, GP_COUNT };
static const lull_param_def gaussian_params[GP_COUNT] = {
    FLOAT_PARAM("sigma", 2.0, 1e-3, 341, "standard deviation in pixels"),
    READ_ONLY_INT("tileAlignment", "tile alignment for manual tiling"),
    READ_ONLY_INT("tileOverlap", "tile overlap for manual tiling"),
};

static lull_gaussian_images gaussian_views(const lull_filter_config* config)
{
  lull_gaussian_images images;
  images.color = config->images[G_COLOR];
  images.output = config->images[G_OUTPUT];
  return images;
}

static lull_status gaussian_check(const lull_filter_config* config, lull_error* err)
{
  const lull_gaussian_images images = gaussian_views(config);
  const lull_gaussian_params params = {(float)config->values[GP_SIGMA]};
  return lull_gaussian_validate(&params, &images, err);
}

static lull_status gaussian_execute(lull_backend* backend, const lull_filter_config* config,
                                    const lull_progress* progress, int async, lull_error* err)
{
  const lull_gaussian_images images = gaussian_views(config);
  const lull_gaussian_params params = {(float)config->values[GP_SIGMA]};
  return backend->ops->gaussian(backend, &params, &images, progress, async, err);
}

static int gaussian_tile_overlap(const lull_filter_config* config)
{
  return (lull_gaussian_radius((float)config->values[GP_SIGMA]) + 15) / 16 * 16;
}

/* -- RT and RTLightmap -------------------------------------------------------------- */

/* RT accepts OIDN's images plus lull's optional guides. */
enum
{
  R_COLOR, R_OUTPUT, R_ALBEDO, R_NORMAL, R_DEPTH, R_POSITION, R_VARIANCE, R_MOTION, R_COLOR_A,
  R_COLOR_B, R_IMAGES
};
static const char* const rt_images[] = {"color",    "output", "albedo", "normal", "depth",
                                        "position", "variance", "motion", "colorA", "colorB",
                                        NULL};
enum
{
  RP_HDR, RP_SRGB, RP_INPUT_SCALE, RP_CLEAN_AUX, RP_QUALITY, RP_MAX_MEMORY, RP_TEMPORAL,
  RP_RESET_HISTORY, RP_FRAME, RP_TILE_ALIGNMENT, RP_TILE_OVERLAP, RP_COUNT
};
static const lull_param_def rt_params[RP_COUNT] = {
    BOOL_PARAM("hdr", 0, "colour is HDR (else LDR in [0, 1], output clamped)"),
    BOOL_PARAM("srgb", 0, "LDR colour is sRGB-encoded"),
    {"inputScale", LULL_PARAM_FLOAT, NAN, FLT_MIN, FLT_MAX, 0, 0, "colour scale (NaN: automatic)", NULL},
    BOOL_PARAM("cleanAux", 0, "albedo and normal are noise-free: trust them more"),
    QUALITY_PARAM,
    INT_PARAM("maxMemoryMB", -1, INT_MIN, INT_MAX, "memory cap in MB (negative: no cap)"),
    LULL_TEMPORAL_PARAM_DEFS,
    READ_ONLY_INT("tileAlignment", "tile alignment for manual tiling"),
    READ_ONLY_INT("tileOverlap", "tile overlap for manual tiling"),
};

/* RTLightmap: OIDN's images and parameters for lightmaps (HDR always). */
enum { L_COLOR, L_OUTPUT, L_IMAGES };
static const char* const rtlightmap_images[] = {"color", "output", NULL};
enum
{
  LP_DIRECTIONAL, LP_INPUT_SCALE, LP_QUALITY, LP_MAX_MEMORY, LP_TILE_ALIGNMENT,
  LP_TILE_OVERLAP, LP_COUNT
};
static const lull_param_def rtlightmap_params[LP_COUNT] = {
    BOOL_PARAM("directional", 0, "directional (spherical-harmonics) lightmap, values in [-1, 1]"),
    {"inputScale", LULL_PARAM_FLOAT, NAN, FLT_MIN, FLT_MAX, 0, 0, "colour scale (NaN: automatic)", NULL},
    QUALITY_PARAM,
    INT_PARAM("maxMemoryMB", -1, INT_MIN, INT_MAX, "memory cap in MB (negative: no cap)"),
    READ_ONLY_INT("tileAlignment", "tile alignment for manual tiling"),
    READ_ONLY_INT("tileOverlap", "tile overlap for manual tiling"),
};


/* OIDN's quality modes trade time for quality; for the à-trous filter that
 * is the number of levels (FAST: 4, a 61-pixel footprint; BALANCED and
 * HIGH: 5, 125 pixels, where relMSE on the test renders stops improving). */
static int rt_iterations(int quality)
{
  return quality == 4 ? 4 : 5;
}

/* The à-trous configuration RT and RTLightmap run: the ATrous defaults
 * (variance-guided colour test, albedo demodulation, every guide given);
 * noise-free ("clean") guides get sharper normal and albedo tests.  Their
 * colour is radiance: as OIDN sanitizes it, negative values read as 0 (so
 * the output is never negative), NaN and Inf as missing. */
static lull_atrous_params rt_like_params(int quality, int clean_aux, int clamp_output, int srgb,
                                         double input_scale)
{
  lull_atrous_params p = lull_atrous_default_params();
  p.iterations = rt_iterations(quality);
  if (clean_aux) {
    p.sigma_normal = 0.3f;
    p.sigma_albedo = 0.15f;
  }
  p.clamp_output = clamp_output;
  p.nonnegative = 1;
  p.srgb = srgb;
  p.input_scale = (float)input_scale; /* NaN: automatic (atrous.h) */
  return p;
}

static lull_atrous_params rt_atrous_params(const lull_filter_config* config)
{
  const double* v = config->values;
  lull_atrous_params p = rt_like_params((int)v[RP_QUALITY], v[RP_CLEAN_AUX] != 0, v[RP_HDR] == 0,
                                        v[RP_SRGB] != 0, v[RP_INPUT_SCALE]);
  p.memory_cap = memory_cap(v[RP_MAX_MEMORY]);
  return p;
}

static lull_atrous_params rtlightmap_atrous_params(const lull_filter_config* config)
{
  const double* v = config->values;
  lull_atrous_params p = rt_like_params((int)v[LP_QUALITY], 0, 0, 0, v[LP_INPUT_SCALE]);
  p.nonnegative = v[LP_DIRECTIONAL] == 0; /* directional lightmaps hold [-1, 1] */
  p.memory_cap = memory_cap(v[LP_MAX_MEMORY]);
  return p;
}

static lull_atrous_images rt_views(const lull_filter_config* config)
{
  lull_atrous_images images;
  memset(&images, 0, sizeof images);
  images.output = config->images[R_OUTPUT];
  if (config->images[R_COLOR].data) {
    images.color = config->images[R_COLOR];
    images.albedo = config->images[R_ALBEDO];
    images.normal = config->images[R_NORMAL];
    images.depth = config->images[R_DEPTH];
    images.position = config->images[R_POSITION];
    images.variance = config->images[R_VARIANCE];
  } else {
    /* prefiltering an auxiliary image: it is the colour */
    images.color = config->images[R_ALBEDO].data ? config->images[R_ALBEDO]
                                                 : config->images[R_NORMAL];
  }
  return images;
}

static lull_atrous_images rtlightmap_views(const lull_filter_config* config)
{
  lull_atrous_images images;
  memset(&images, 0, sizeof images);
  images.color = config->images[L_COLOR];
  images.output = config->images[L_OUTPUT];
  return images;
}

/* Whether RT runs the Regression filter: quality HIGH (OIDN's default) with
 * colour, in temporal mode its one-buffer temporal mode; BALANCED and FAST
 * and the prefiltering of an auxiliary image run the a-trous filter (in
 * temporal mode after the same accumulation). */
static int rt_regression(const lull_filter_config* config)
{
  const int color = config->images[R_COLOR].data || config->images[R_COLOR_A].data ||
                    config->images[R_COLOR_B].data;
  return color && (int)config->values[RP_QUALITY] == OIDN_QUALITY_HIGH;
}

/* The Regression filter's view of RT's images and parameters: its
 * defaults, RT's colour, halves, guides, hdr, srgb, inputScale and
 * maxMemoryMB, negative colour read as 0 as RT sanitises it. */
static lull_regression_images rt_regression_views(const lull_filter_config* config)
{
  const lull_image* im = config->images;
  lull_regression_images r;
  memset(&r, 0, sizeof r);
  r.color = im[R_COLOR];
  r.color_a = im[R_COLOR_A];
  r.color_b = im[R_COLOR_B];
  r.albedo = im[R_ALBEDO];
  r.normal = im[R_NORMAL];
  r.depth = im[R_DEPTH];
  r.position = im[R_POSITION];
  r.variance = im[R_VARIANCE];
  r.output = im[R_OUTPUT];
  return r;
}

static lull_regression_params rt_regression_params(const lull_filter_config* config)
{
  const double* v = config->values;
  lull_regression_params p = lull_regression_default_params();
  p.hdr = v[RP_HDR] != 0;
  p.srgb = v[RP_SRGB] != 0;
  p.input_scale = (float)v[RP_INPUT_SCALE];
  p.nonnegative = 1;
  p.memory_cap = memory_cap(v[RP_MAX_MEMORY]);
  return p;
}

static lull_status rt_check(const lull_filter_config* config, lull_error* err)
{
  const int color = config->images[R_COLOR].data != NULL || config->images[R_COLOR_A].data ||
                    config->images[R_COLOR_B].data;
  const int albedo = config->images[R_ALBEDO].data != NULL;
  const int normal = config->images[R_NORMAL].data != NULL;
  const double* v = config->values;
  lull_status status = LULL_OK;
  /* the input first, then the output, as OIDN checks them */
  if (!color && !albedo && !normal)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "input image not specified");
  if (!config->images[R_OUTPUT].data)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "output image not specified");
  if ((color && normal && !albedo) || (!color && albedo && normal))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "unsupported combination of input features");
  if (v[RP_HDR] != 0 && v[RP_SRGB] != 0)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "hdr and srgb modes cannot be enabled at the same time");
  if (!color && v[RP_HDR] != 0)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "hdr mode is not supported when prefiltering auxiliary images");
  if (!color && normal && v[RP_SRGB] != 0)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "srgb mode is not supported when prefiltering normals");
  if (!color && v[RP_TEMPORAL] != 0)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "temporal mode is not supported when prefiltering auxiliary images");
  status = check_sizes(config, R_IMAGES, err);
  if (status != LULL_OK)
    return status;
  if (rt_regression(config)) {
    const lull_regression_images images = rt_regression_views(config);
    const lull_regression_params params = rt_regression_params(config);
    status = lull_regression_validate(&params, &images, err);
    if (status != LULL_OK)
      return status;
    if (v[RP_TEMPORAL] == 0)
      return lull_filter_motion_needs_temporal(&config->images[R_MOTION], err);
    return lull_filter_temporal_regression_check(&images, &config->images[R_MOTION], err);
  }
  if (!config->images[R_COLOR].data && color)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "the halves colorA, colorB need quality HIGH (outside temporal mode)");
  const lull_atrous_images images = rt_views(config);
  const lull_atrous_params params = rt_atrous_params(config);
  status = lull_atrous_validate(&params, &images, err);
  if (status != LULL_OK)
    return status;
  return temporal_check(&images, &config->images[R_MOTION], v[RP_TEMPORAL] != 0, err);
}

static lull_status rtlightmap_check(const lull_filter_config* config, lull_error* err)
{
  lull_status status = LULL_OK;
  if (!config->images[L_COLOR].data)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "input image not specified");
  if (!config->images[L_OUTPUT].data)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "output image not specified");
  status = check_sizes(config, L_IMAGES, err);
  if (status != LULL_OK)
    return status;
  const lull_atrous_images images = rtlightmap_views(config);
  const lull_atrous_params params = rtlightmap_atrous_params(config);
  return lull_atrous_validate(&params, &images, err);
}

static lull_status rt_execute(lull_backend* backend, const lull_filter_config* config,
                              const lull_progress* progress, int async, lull_error* err)
{
  if (rt_regression(config)) {
    if (!backend->ops->regression)
      return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                       "RT's quality HIGH (the Regression filter) is not supported on this device");
    const lull_regression_images images = rt_regression_views(config);
    const lull_regression_params params = rt_regression_params(config);
    if (config->values[RP_TEMPORAL] != 0) {
      lull_filter_temporal t = lull_filter_temporal_from_values(config->values, RP_TEMPORAL, -1);
      t.params.alpha = (float)LULL_REG_TEMPORAL_ALPHA;
      t.params.reject_sigma = (float)LULL_REG_TEMPORAL_REJECT;
      return lull_filter_temporal_regression(backend, config->state, &t, &params, &images,
                                             &config->images[R_MOTION], progress, async, err);
    }
    return backend->ops->regression(backend, &params, &images, progress, async, err);
  }
  const lull_atrous_images images = rt_views(config);
  lull_atrous_params params = rt_atrous_params(config);
  if (!config->images[R_COLOR].data) {
    /* prefiltering an auxiliary image: no demodulation; albedo stays in
     * [0, 1], normals are not clamped (and keep their sign) */
    params.demodulate = 0;
    params.srgb = 0;
    params.clamp_output = config->images[R_ALBEDO].data != NULL;
    params.nonnegative = params.clamp_output;
  }
  if (config->values[RP_TEMPORAL] != 0 && config->images[R_COLOR].data) {
    const lull_filter_temporal t = lull_filter_temporal_from_values(config->values, RP_TEMPORAL, -1);
    return lull_filter_temporal_atrous(backend, config->state, &t, &params, &images,
                                       &config->images[R_MOTION], LULL_ATROUS_SCHEDULE_AUTO,
                                       progress, async, err);
  }
  return backend->ops->atrous(backend, &params, &images, LULL_ATROUS_SCHEDULE_AUTO, progress,
                              async, err);
}

static lull_status rtlightmap_execute(lull_backend* backend, const lull_filter_config* config,
                                      const lull_progress* progress, int async, lull_error* err)
{
  const lull_atrous_images images = rtlightmap_views(config);
  const lull_atrous_params params = rtlightmap_atrous_params(config);
  return backend->ops->atrous(backend, &params, &images, LULL_ATROUS_SCHEDULE_AUTO, progress,
                              async, err);
}

static int rt_tile_overlap(const lull_filter_config* config)
{
  if (rt_regression(config)) {
    const lull_regression_images images = rt_regression_views(config);
    const lull_regression_params params = rt_regression_params(config);
    return (lull_regression_reach(&params, &images) + 15) / 16 * 16;
  }
  const lull_atrous_images images = rt_views(config);
  const lull_atrous_params params = rt_atrous_params(config);
  return atrous_overlap(&params, &images);
}

static int rtlightmap_tile_overlap(const lull_filter_config* config)
{
  const lull_atrous_images images = rtlightmap_views(config);
  const lull_atrous_params params = rtlightmap_atrous_params(config);
  return atrous_overlap(&params, &images);
}

/* -- registry -------------------------------------------------------------------- */

static const lull_filter_type type_atrous = {
    "ATrous", atrous_images, atrous_params, AP_COUNT, atrous_check, atrous_execute,
    atrous_tile_overlap, 0};
static const lull_filter_type type_gaussian = {
    "Gaussian", gaussian_images, gaussian_params, GP_COUNT, gaussian_check, gaussian_execute,
    gaussian_tile_overlap, 0};
static const lull_filter_type type_rt = {
    "RT", rt_images, rt_params, RP_COUNT, rt_check, rt_execute, rt_tile_overlap, 1};
static const lull_filter_type type_rtlightmap = {
    "RTLightmap", rtlightmap_images, rtlightmap_params, LP_COUNT, rtlightmap_check,
    rtlightmap_execute, rtlightmap_tile_overlap, 1};

static const lull_filter_type* const all_types[] = {&type_rt, &type_rtlightmap, &type_atrous,
                                                    &type_gaussian, &lull_filter_type_poisson,
                                                    &lull_filter_type_gradient_domain, &lull_filter_type_regression,
                                                    &lull_filter_type_rdfc, &lull_filter_type_ddid,
                                                    &lull_filter_type_rhf, NULL};

const lull_filter_type* const* lull_filter_types(void)
{
  return all_types;
}

const lull_filter_type* lull_filter_type_find(const char* name)
{
  for (int i = 0; all_types[i]; ++i)
    if (strcmp(all_types[i]->name, name) == 0)
      return all_types[i];
  return NULL;
}

int lull_filter_type_image(const lull_filter_type* type, const char* name)
{
  for (int i = 0; type->image_names[i]; ++i)
    if (strcmp(type->image_names[i], name) == 0)
      return i;
  return -1;
}

int lull_filter_type_param(const lull_filter_type* type, const char* name)
{
  for (int i = 0; i < type->num_params; ++i)
    if (strcmp(type->params[i].name, name) == 0)
      return i;
  return -1;
}
