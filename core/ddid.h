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

#include "ddid_math.h"
#include "image.h"
#include "poisson_solver.h"
#include "rdfc_math.h"
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

/* A run's working planes (width x height each), the same on every
 * backend. */
enum
{
  LULL_DDID_P_A = 0,      /* colour A, or the one buffer; then the halves' mean */
  LULL_DDID_P_B = 3,      /* colour B */
  LULL_DDID_P_Y = 6,      /* the noisy colour, DCT space */
  LULL_DDID_P_V = 9,      /* its variance (RGB, then per DCT channel) */
  LULL_DDID_P_G = 12,     /* the guide */
  LULL_DDID_P_GN = 15,    /* the next guide */
  LULL_DDID_P_TMP = 18,   /* 9 planes of scratch */
  LULL_DDID_P_ALPHA = 27, /* the 4th colour channel */
  LULL_DDID_P_F = 28,     /* features (A, or given once), up to 9 */
  LULL_DDID_P_FB = 37,    /* features of B */
  LULL_DDID_P_COUNT = 46,
};

/* The planes the iterations work on (width x height each): y and its
 * variance v in the DCT colour space, the guide g (the noisy image at the
 * start) and the next guide gn, the features f (nf of them, 0: none); the
 * result is left in the planes `result` names (g's or gn's). */
typedef struct lull_ddid_state
{
  int width, height;
  const float* y[3];
  const float* v[3];
  float* g[3];
  float* gn[3];
  int nf;
  const float* f[LULL_DDID_MAX_FEATURES];
  const float* result[3];
} lull_ddid_state;

/* What a backend gives the iterations: one step of the dual-domain filter
 * over the image (its twiddles, then lull_ddid_pixel at every pixel, or
 * the same in the backend's own scheduling), reporting its progress
 * through span. */
typedef struct lull_ddid_ops
{
  void* ctx;
  lull_status (*step)(void* ctx, const lull_ddid_planes* planes, const lull_ddid_step* st,
                      const lull_progress_span* span, lull_error* err);
  /* a per-pixel step of rdfc_math.h over the image (the halves' variance) */
  lull_status (*pixels)(void* ctx, const lull_rdfc_pixels* step, lull_error* err);
} lull_ddid_ops;

/* The state of a run on the planes P (LULL_DDID_P_COUNT of them, loaded
 * and in the DCT colour space): y, v, the guides and the features. */
void lull_ddid_state_init(lull_ddid_state* state, const lull_ddid_images* images, int width,
                          int height, float* const* P);

/* The halves' variance without a given one: 1/4 (A - B)^2 blurred by
 * TWOBUFFERVAR's Gaussian and averaged over RDFC's box (docs/rdfc.md),
 * from P_A and P_B into P_V. */
lull_status lull_ddid_halves_variance(const lull_ddid_ops* ops, float* const* P, int width,
                                      int height, lull_error* err);

/* The parameters of iteration n (N down to 1) of a run with params. */
lull_ddid_step lull_ddid_params_step(const lull_ddid_params* params, int n);

/* The iterations n = N down to 1 of §4.3 (ddid_schedule.c): each step's
 * parameters and planes, progress in proportion to the windows' cubes. */
lull_status lull_ddid_iterate(const lull_ddid_ops* ops, const lull_ddid_params* params,
                              lull_ddid_state* state, const lull_progress* progress,
                              lull_error* err);
