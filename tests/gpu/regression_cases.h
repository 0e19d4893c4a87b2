/* The cases on which the CUDA Regression filter is compared with the
 * CPU's: synthetic renders (a shaded, textured scene with two materials,
 * noisy halves with fireflies, features given once or as halves) and a
 * table of sizes, inputs and parameters.  Shared by the CPU emulation of
 * the kernels (regression_emulation_test.cu) and the GPU test
 * (cuda_regression_test.c), so both check the same things. */
#pragma once

#include <stddef.h>

#include "regression.h"

enum
{
  REG_ALBEDO = 1,
  REG_NORMAL = 2,
  REG_DEPTH = 4,
  REG_POSITION = 8,
  REG_FEATURE_HALVES = 16, /* the features as A/B halves */
  REG_ALBEDO_ONCE = 32,    /* with REG_FEATURE_HALVES: the albedo given once for both */
  REG_FLAT_LEFT = 64,      /* the colour constant in the left half of the image */
};

typedef struct reg_case
{
  const char* name;
  int width, height;
  int halves;      /* colorA, colorB; else color */
  int features;    /* REG_* */
  int channels;    /* of the colour: 1..4 */
  int poison;      /* NaN and Inf in the colour and the features */
  int variance;    /* one buffer: a variance image */
  int out_variance; /* halves: outputVariance (3 channels) */
  int ldr;         /* hdr off: colour in [0, 1] */
  int radius, second_radius; /* 0: the defaults */
  int max_memory_mb; /* < 0: no cap */
} reg_case;

/* The table: every step of both runs (fireflies, prefilter, the passes,
 * selection, the second pass, the pilot, the variance image), 1 to 4
 * channels, non-finite values, tiny images and a tiled run. */
extern const reg_case reg_cases[];
extern const int reg_case_count;

typedef struct reg_data
{
  int width, height, channels;
  /* packed floats: colour `channels` per pixel, features 3 (depth 1),
   * variance 3; NULL where the case has none */
  float *color, *color_a, *color_b;
  float *albedo, *albedo_a, *albedo_b;
  float *normal, *normal_a, *normal_b;
  float *depth, *depth_a, *depth_b;
  float *position, *position_a, *position_b;
  float* variance;
} reg_data;

void reg_data_make(reg_data* d, const reg_case* c, unsigned seed);
void reg_data_free(reg_data* d);

/* The core's parameters of a case. */
lull_regression_params reg_case_params(const reg_case* c);

/* Views of a case's data for the core (output and output_variance point
 * to the given arrays: channels and 3 floats per pixel). */
lull_regression_images reg_case_images(const reg_data* d, const reg_case* c, float* output,
                                       float* output_variance);

/* How closely two results agree (the filter has discrete decisions, the
 * bandwidth choice and the fits' range, that a last-bit difference can
 * flip at a few pixels, so the largest difference is a poor measure): of
 * `test` against `ref`. */
typedef struct reg_agreement
{
  double max_rel;  /* max |test - ref| / max |ref| */
  double mean_rel; /* mean |test - ref| / mean |ref| */
  double outliers; /* share of values with |test - ref| > 1e-3 max |ref| (NaN counts) */
} reg_agreement;

reg_agreement reg_agreement_of(const float* test, const float* ref, size_t n);
