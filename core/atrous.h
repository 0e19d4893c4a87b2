/* The edge-avoiding à-trous filter: parameters, images, and the CPU entry.
 *
 * The formulas are in atrous_math.h; this header says what one run of the
 * filter takes.  Both backends implement exactly this contract:
 *
 *   1. prepare: read the input views (any format, any stride), replace
 *      non-finite colour by the mean of the finite colours around it (so a
 *      NaN never spreads and never leaves a hole), scale by input_scale,
 *      linearise sRGB, demodulate by the albedo, normalise the normals,
 *      compute the geometry footprints and the luminance variance (given,
 *      or estimated from a 5x5 neighbourhood of the luminance moments that
 *      shares the geometry edge-stopping weights);
 *   2. iterations levels of the filter, step 2^i;
 *   3. finish: multiply the albedo back, undo the scale and sRGB, and store.
 *      A fourth colour channel (FLOAT4/HALF4) is copied through unchanged. */
#pragma once

#include "image.h"
#include "status.h"

enum { LULL_ATROUS_MAX_ITERATIONS = 10 };

typedef enum lull_atrous_color_mode
{
  LULL_ATROUS_COLOR_FIXED = 0,    /* Dammertz: exp(-|dI|^2 / sigma_i^2), sigma halved per level */
  LULL_ATROUS_COLOR_VARIANCE = 1, /* SVGF: luminance distance over its standard deviation */
} lull_atrous_color_mode;

/* GPU schedules of the levels (lull.h: LULL_SCHEDULE_*); the CPU has one. */
enum
{
  LULL_ATROUS_SCHEDULE_AUTO = -1,    /* the faster one, as measured */
  LULL_ATROUS_SCHEDULE_BASELINE = 0, /* one kernel per level, dilated taps (Dammertz 2010) */
  LULL_ATROUS_SCHEDULE_PERMUTED = 1, /* undilated taps on permuted subimages (Dolp 2024) */
};

typedef struct lull_atrous_params
{
  int iterations;          /* number of levels; taps are 2^i pixels apart */
  int color_mode;          /* lull_atrous_color_mode */
  float sigma_color;       /* FIXED: sigma of level 0 (same units as colour) */
  float sigma_luminance;   /* VARIANCE: multiples of the standard deviation */
  float sigma_normal;      /* <= 0 disables the normal term */
  float sigma_depth;       /* geometry term for depth or position, <= 0 disables */
  float sigma_albedo;      /* <= 0 disables the albedo term */
  int demodulate;          /* divide by albedo before filtering, multiply after */
  float input_scale;       /* colour is multiplied by this before, divided after;
                            * NaN: automatic (lull_atrous_scale_is_auto) */
  int srgb;                /* colour is sRGB-encoded: linearise before, encode after */
  int clamp_output;        /* LDR: clamp the output to [0, 1] */
  int nonnegative;         /* colour is radiance: negative values read as 0
                            * (OIDN's RT and RTLightmap; lull_prepare_color_channel) */
  /* Hints for GPU backends (the CPU backend ignores them): store colour as
   * fp16 and normals oct-encoded in the level buffers (the result then
   * differs from the fp32 path within fp16 precision). */
  int packed_guides;
  /* Bytes of scratch memory a run may use (0: no cap); above it the image
   * is filtered in overlapping tiles (atrous_tiled.h), on the CPU and on
   * CUDA (which also tiles when the GPU's free memory is short).  OIDN's
   * maxMemoryMB. */
  size_t memory_cap;
  /* A variance image whose first channel is negative at a pixel asks for
   * the spatial estimate there (as if no variance image were given); off,
   * such a value means 0.  Temporal mode (temporal.h) gives the variance
   * of the pixels whose history is long enough and asks for the estimate
   * elsewhere.  Not a filter parameter. */
  int variance_fallback;
} lull_atrous_params;

/* Defaults of the "ATrous" filter (documented in lull.h and README.md). */
lull_atrous_params lull_atrous_default_params(void);

typedef struct lull_atrous_images
{
  lull_image color;    /* required: 3 or 4 channels (or 1/2, filtered as given) */
  lull_image output;   /* required: same size and channel count as color */
  lull_image albedo;   /* optional (data == NULL when absent), 3 channels
                        * (1 and 2 read by lull_expand_rgb, as OIDN does) */
  lull_image normal;   /* optional, 3 channels (or 1, 2 as the albedo), any
                        * length, [-1,1] */
  lull_image depth;    /* optional, 1 channel */
  lull_image position; /* optional, 3 channels; used when depth is absent */
  lull_image variance; /* optional, 1 channel (luminance) or 3 (mean is used) */
} lull_atrous_images;

/* Checks sizes and formats; the API layer reports the message. */
lull_status lull_atrous_validate(const lull_atrous_params* params,
                                 const lull_atrous_images* images, lull_error* err);

/* Whether a run picks its input scale from the colour (atrous_math.h, "the
 * automatic input scale"): input_scale NaN with the variance-guided colour
 * test on linear colour.  NaN otherwise means 1: the fixed colour sigma is
 * in the colour's units, and sRGB colour is LDR. */
int lull_atrous_scale_is_auto(const lull_atrous_params* params);

/* The input scale of a run: params->input_scale, or for NaN the automatic
 * scale of the colour image (counted on the CPU) or 1. */
lull_status lull_atrous_input_scale(const lull_atrous_params* params, const lull_image* color,
                                   int num_threads, float* scale, lull_error* err);

/* Bytes of scratch memory the CPU backend needs for an image of this size. */
size_t lull_atrous_cpu_scratch_bytes(const lull_atrous_images* images);

/* Runs the filter on the CPU with OpenMP.  Input and output may alias (the
 * output is written only after all input has been read).  num_threads <= 0
 * uses OpenMP's default. */
lull_status lull_atrous_cpu(const lull_atrous_params* params, const lull_atrous_images* images,
                            int num_threads, const lull_progress* progress, lull_error* err);

/* lull_atrous_cpu taking its working planes from `cache` and giving them
 * back (planes.h; NULL: allocated and freed). */
struct lull_planes_cache;
lull_status lull_atrous_cpu_cached(const lull_atrous_params* params,
                                   const lull_atrous_images* images, int num_threads,
                                   struct lull_planes_cache* cache, const lull_progress* progress,
                                   lull_error* err);
