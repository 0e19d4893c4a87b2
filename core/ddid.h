/* The "DDID" filter: dual-domain image denoising (Knaus and Zwicker 2013,
 * 2015) as Vicini 2015 ch. 4 gives it, adapted to Monte Carlo renders.
 * Parameters, images and the CPU entry; the per-pixel formulas are in
 * ddid_math.h, the method and measurements in docs/ddid.md.
 *
 * A run, in the order of the pseudocode of §4.3:
 *   1. the colour (the halves' mean, or the one buffer) and its per-pixel
 *      variance: the given `variance`, or from halves their two-buffer
 *      variance 1/4 (A - B)^2, blurred (sigma 0.5) and averaged over 5 x 5
 *      as RDFC does (docs/rdfc.md);
 *   2. colour and variance taken to the DCT colour space (eq. 4.11-4.12);
 *      the guide starts as the noisy image;
 *   3. for n = N down to 1 (N `iterations`), each pixel's noise estimate
 *      by the guided dual-domain filter (eq. 4.2-4.8) over its window of
 *      radius r_n, with the kernels of eq. 4.9-4.10 and the schedule of
 *      S_n, T_n, r_n, a_n; the new guide is the noisy image less it;
 *   4. the guide back to RGB.
 *
 * lull's adaptation to Monte Carlo renders (the thesis takes one noise
 * variance sigma^2 for the image): T_n and V use the centre pixel's own
 * variance (T_n the mean over the channels, V each DCT channel's), and
 * the spatial kernel k_n is also weighted by the renderer's features
 * (albedo, normal, depth or position, optional):
 * exp(-|f_p - f_q|^2 / (2 k_f^2)). */
#pragma once

#include <stddef.h>

#include "image.h"
#include "regression.h"
#include "status.h"

typedef struct lull_ddid_params
{
  int iterations;       /* N (8) */
  float sigma_spatial;  /* sigma_s (13): r_n reaches 2 sigma_s in the last iteration */
  float range;          /* gamma_r N (5.3) */
  float frequency;      /* gamma_f N (200; the thesis' 13 is for white noise) */
  float log_alpha;      /* ln alpha (15) */
  float k_feature;      /* k_f of the feature weights (0.2); 0: features ignored */
  int hdr, srgb, nonnegative;
  float input_scale;    /* NaN: automatic */
} lull_ddid_params;

/* DDID takes Regression's images but outputVariance: colour once (with
 * `variance`) or as halves colorA, colorB (with an optional `variance` of
 * their mean), the features once or as halves (their mean is used). */
typedef lull_regression_images lull_ddid_images;

lull_ddid_params lull_ddid_default_params(void);

lull_status lull_ddid_validate(const lull_ddid_params* params, const lull_ddid_images* images,
                               lull_error* err);

/* Pixels on each side of an output pixel that the filter reads. */
int lull_ddid_reach(const lull_ddid_params* params);

/* Bytes of working memory the CPU run needs for width x height pixels. */
size_t lull_ddid_cpu_memory(const lull_ddid_params* params, int width, int height,
                            int num_threads);

/* Runs the filter on the CPU with OpenMP.  Input and output may alias. */
lull_status lull_ddid_cpu(const lull_ddid_params* params, const lull_ddid_images* images,
                          int num_threads, const lull_progress* progress, lull_error* err);
