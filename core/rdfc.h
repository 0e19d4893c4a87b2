/* The "RDFC" filter: Robust Denoising using Feature and Color information
 * (Rousselle, Manzi and Zwicker 2013), the algorithm of Vicini 2015 §3.5.
 * Parameters, images and the CPU entry; the per-pixel formulas are in
 * rdfc_math.h, measurements in docs/rdfc.md.
 *
 * Every step is one filter, FEATUREFILTER (§3.5): each pixel the weighted
 * mean of its (2r + 1)^2 window, weights the smaller of an NL-means colour
 * weight (patches of radius f, non-uniform variance eq. 3.7, symmetric
 * pairs §3.2.4, patch-wise averaging §3.2.3; sensitivity k_c) and a
 * cross-bilateral feature weight (the most constraining feature's,
 * eq. 3.10-3.13; sensitivity k_f, threshold tau).  A run, in the order of
 * the pseudocode of §3.5:
 *
 *   1. the colour's variance: with halves A, B and a given `variance`
 *      (a sample variance), that scaled to their two-buffer variance
 *      1/4 (A - B)^2 (SCALESAMPLEVAR: by the ratio of the two's means in
 *      21 x 21 boxes); with halves alone, the two-buffer variance blurred
 *      (TWOBUFFERVAR's Gaussian of sigma 0.5) and averaged over 5 x 5
 *      (lull's stand-in for the sample variance); with one buffer the
 *      given `variance`;
 *   2. features given in halves are prefiltered by NL-means (k_c 1, f 3,
 *      r 5), their variance the two-buffer variance of the filtered
 *      halves; features given once are taken as noise-free;
 *   3. three candidates over the window of radius R: r (k_c 0.45, k_f 0.6,
 *      f 1, tau 1e-3), g (the same with f 3), b (features only, tau
 *      1e-4), each with its SURE error estimate (eq. 3.15, the derivative
 *      by eq. 3.16's finite difference);
 *   4. the three errors smoothed by NL-means (k_c 1, f 3, r 1), the
 *      binary selection of the smallest (lines 23-25) smoothed by NL-means
 *      (k_c 1, f 3, r 5), the candidates blended by it;
 *   5. a second pass over that blend, guided by itself (k_c 0.45, f 3,
 *      r = R / 2), its variance the blend's two-buffer variance (with one
 *      buffer: the variance the weights carry through).
 *
 * Colour is brought to a scale of order 1 first (inputScale, automatic as
 * for ATrous), non-finite values are replaced by the mean of the finite
 * ones around them, sRGB colour is linearised; the result is scaled back,
 * clamped to [0, 1] for LDR colour.  A fourth colour channel is copied
 * through. */
#pragma once

#include <stddef.h>

#include "image.h"
#include "poisson_solver.h"
#include "rdfc_math.h"
#include "regression.h"
#include "status.h"

typedef struct lull_rdfc_params
{
  int radius;        /* R: the candidates' window radius (thesis Table 3.1: 10) */
  float k_color;     /* k_c of candidates r, g and the second pass (0.45) */
  float k_feature;   /* k_f of the candidates (0.6) */
  float tau;         /* tau of candidates r and g; b uses a tenth (1e-3) */
  int second_pass;   /* the second pass of step 5 (on) */
  int hdr;           /* 0: LDR colour in [0, 1], output clamped */
  int srgb;          /* LDR colour is sRGB-encoded */
  int nonnegative;   /* negative colour is read as 0 */
  float input_scale; /* NaN: automatic */
} lull_rdfc_params;

/* The fixed parameters of the steps (§3.5's pseudocode). */
#define LULL_RDFC_PREFILTER_K 1.0f
enum
{
  LULL_RDFC_PREFILTER_PATCH = 3,
  LULL_RDFC_PREFILTER_RADIUS = 5,
  LULL_RDFC_SURE_PATCH = 3,
  LULL_RDFC_SURE_RADIUS = 1,
  LULL_RDFC_SELECT_PATCH = 3,
  LULL_RDFC_SELECT_RADIUS = 5,
  LULL_RDFC_PATCH_R = 1, /* candidate r */
  LULL_RDFC_PATCH_G = 3, /* candidate g */
  LULL_RDFC_PATCH_B = 1, /* candidate b (no colour weights: unused) */
  LULL_RDFC_SECOND_PATCH = 3,
  LULL_RDFC_SCALE_RADIUS = 10, /* SCALESAMPLEVAR's 21 x 21 boxes */
  /* halves without a sample variance: the two-buffer variance's box
   * radius (lull's stand-in for the sample variance of §3.2.5; measured
   * in docs/rdfc.md) */
  LULL_RDFC_VARIANCE_BOX = 2,
};

/* RDFC takes Regression's images: colour once (with `variance`) or as
 * halves colorA, colorB (with an optional `variance` of their mean), the
 * features once or as halves, output, outputVariance (halves only). */
typedef lull_regression_images lull_rdfc_images;

lull_rdfc_params lull_rdfc_default_params(void);

lull_status lull_rdfc_validate(const lull_rdfc_params* params, const lull_rdfc_images* images,
                               lull_error* err);

/* Pixels on each side of an output pixel that the filter reads (the sum of
 * its steps' reaches): tiles need this margin to match an untiled run. */
int lull_rdfc_reach(const lull_rdfc_params* params);

/* Bytes of working memory the CPU run needs for width x height pixels. */
size_t lull_rdfc_cpu_memory(int width, int height, int num_threads);

/* Runs the filter on the CPU with OpenMP.  Input and output may alias. */
lull_status lull_rdfc_cpu(const lull_rdfc_params* params, const lull_rdfc_images* images,
                          int num_threads, const lull_progress* progress, lull_error* err);

/* -- the run both backends share (rdfc_schedule.c) ----------------------------- */

/* Working planes of a run: what the backend loads, what the schedule
 * computes, where the result is. */
enum
{
  LULL_RDFC_P_CA = 0,       /* in: colour A, or the one buffer (scaled, repaired) */
  LULL_RDFC_P_CB = 3,       /* in: colour B */
  LULL_RDFC_P_GIVEN = 6,    /* in: the given variance, scaled, repaired, not negative */
  LULL_RDFC_P_FA = 9,       /* in: features of A (or given once), up to 9 */
  LULL_RDFC_P_FB = 18,      /* in: features of B (feature halves) */
  LULL_RDFC_P_ALPHA = 27,   /* in: the 4th colour channel */
  LULL_RDFC_P_C = 28,       /* the colour guide: the mean of the halves */
  LULL_RDFC_P_CV = 31,      /* its variance */
  LULL_RDFC_P_TMP = 34,     /* 6 planes of scratch */
  LULL_RDFC_P_F = 40,       /* the feature guides */
  LULL_RDFC_P_FV = 49,      /* their variance */
  LULL_RDFC_P_FG = 58,      /* their squared gradient */
  LULL_RDFC_P_CAND = 67,    /* candidates r, g, b: 6 planes each (buffer A 3, B 3) */
  LULL_RDFC_P_SURE = 85,    /* the candidates' SURE, 3 */
  LULL_RDFC_P_D = 88,       /* their derivative terms, 3 */
  LULL_RDFC_P_OV = 91,      /* one buffer: their variances, 3 each */
  LULL_RDFC_P_E = 100,      /* the smoothed errors, 3 */
  LULL_RDFC_P_SEL = 103,    /* the selection maps, 3; smoothed: 3 */
  LULL_RDFC_P_PASS1 = 109,  /* the blend, 6; its mean 3, its variance 3 */
  LULL_RDFC_P_OUT = 121,    /* the second pass, 6; one buffer: its variance 3 */
  LULL_RDFC_P_RESULT = 130, /* out: the result, 3; its variance, 3 */
  LULL_RDFC_P_COUNT = 136,
};

/* How a backend runs the steps: one FEATUREFILTER over the image (its
 * progress reported in span), and one per-pixel step over the image. */
typedef struct lull_rdfc_ops
{
  void* ctx;
  lull_status (*pass)(void* ctx, const lull_rdfc_pass* pass, const lull_progress_span* span,
                      lull_error* err);
  lull_status (*pixels)(void* ctx, const lull_rdfc_pixels* step, lull_error* err);
} lull_rdfc_ops;

/* The run of steps 1-5 on loaded planes P (LULL_RDFC_P_COUNT of them, of
 * width x height): the result into LULL_RDFC_P_RESULT, and with halves
 * (or one buffer) its variance after it. */
lull_status lull_rdfc_run(const lull_rdfc_ops* ops, const lull_rdfc_params* params,
                          const lull_rdfc_images* images, int width, int height, float* const* P,
                          const lull_progress_span* span, lull_error* err);

/* The features of a run: how many, and where each one's channels end
 * (albedo 3, normal 3, depth 1 or position 3, those present). */
int lull_rdfc_feature_layout(const lull_rdfc_images* images,
                             int feature_end[LULL_RDFC_MAX_FEATURES]);
