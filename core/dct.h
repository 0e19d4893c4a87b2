/* Discrete cosine transforms of any length, batched, for the exact L2
 * screened-Poisson solve (poisson_dct.c).
 *
 * Why a DCT: the free-boundary operator alpha^2 I + L of the screened
 * Poisson problem (Vicini 2015 §5.2, eq. 5.3; forward differences whose
 * last edge is absent) is diagonalised by the DCT-II in each image axis,
 * with eigenvalues alpha^2 + (2 - 2 cos(pi k / W)) + (2 - 2 cos(pi l / H)).
 *
 * How: a DCT-II of length n is one complex FFT of length n after Makhoul's
 * even/odd reordering, plus a twiddle (Makhoul 1980); the inverse (DCT-III)
 * undoes both.  The FFT is a Stockham autosort FFT with radices 4, 2, 3, 5
 * and any other prime up to LULL_FFT_MAX_RADIX (an O(R^2) butterfly);
 * lengths with a larger prime factor go through Bluestein's chirp-z
 * convolution of a 2/3/5-smooth length.  Twiddles are computed in double and
 * stored in float.
 *
 * Batching: every transform runs on LULL_DCT_BATCH independent signals at
 * once, stored element-major (signal element k of batch item b at
 * k * LULL_DCT_BATCH + b), so each butterfly is a loop over the batch that
 * the compiler vectorises; lull_dct_2d gathers batches of columns and of
 * rows of a planar image, so both axes use the same code. */
#pragma once

#include <stddef.h>

#include "status.h"

enum
{
  LULL_DCT_BATCH = 16,      /* signals transformed together (one AVX-512 vector) */
  LULL_FFT_MAX_RADIX = 31,  /* larger prime factors use Bluestein's algorithm */
  LULL_FFT_MAX_PASSES = 48, /* radix passes of one FFT (2^48 > any length we accept) */
};

typedef struct lull_fft_plan lull_fft_plan;

struct lull_fft_plan
{
  int n;
  int passes;
  int radix[LULL_FFT_MAX_PASSES];
  size_t twiddle_offset[LULL_FFT_MAX_PASSES]; /* into tw_re / tw_im */
  float* tw_re;                               /* per pass: Ns x (R - 1) twiddles */
  float* tw_im;
  float* unit_re;                             /* generic radices: cos, -sin of 2 pi j / R */
  float* unit_im;
  size_t unit_offset[LULL_FFT_MAX_PASSES];
  /* Bluestein (n has a prime factor > LULL_FFT_MAX_RADIX): a smooth FFT of
   * length m >= 2n - 1, the chirp exp(-i pi j^2 / n) and the transformed,
   * 1/m-scaled convolution kernel. */
  lull_fft_plan* inner;
  float* chirp_re;
  float* chirp_im;
  float* kernel_re;
  float* kernel_im;
};

typedef struct lull_dct_plan
{
  int n;
  lull_fft_plan fft;
  float* cos_q; /* cos(pi k / (2n)) */
  float* sin_q; /* sin(pi k / (2n)) */
} lull_dct_plan;

/* Prepares transforms of length n >= 1.  Returns OUT_OF_MEMORY or
 * INVALID_ARGUMENT (n < 1 or n > 2^26) and leaves the plan freeable. */
lull_status lull_dct_plan_init(lull_dct_plan* plan, int n, lull_error* err);
void lull_dct_plan_free(lull_dct_plan* plan);

/* Floats of scratch memory one call of lull_dct_batch needs. */
size_t lull_dct_scratch_floats(const lull_dct_plan* plan);

/* Transforms LULL_DCT_BATCH signals of length plan->n in place; data holds
 * n * LULL_DCT_BATCH floats, element-major (see above).
 *   forward: X[k] = sum_j x[j] cos(pi k (2j + 1) / (2n))      (DCT-II)
 *   inverse: x[j] = X[0] / n + (2/n) sum_{k>0} X[k] cos(...)  (DCT-III),
 * so inverse(forward(x)) = x. */
void lull_dct_batch(const lull_dct_plan* plan, float* data, int inverse, float* scratch);

/* Complex FFT of LULL_DCT_BATCH signals (split real/imaginary arrays of
 * n * LULL_DCT_BATCH floats, element-major), in place, unscaled:
 * X[k] = sum_j x[j] exp(-2 pi i jk / n).  scratch: lull_fft_scratch_floats. */
size_t lull_fft_scratch_floats(const lull_fft_plan* plan);
void lull_fft_batch(const lull_fft_plan* plan, float* re, float* im, float* scratch);

/* Floats of scratch memory lull_dct_2d needs for these plans and threads
 * (the caller allocates it once: a CG solve with the DCT preconditioner
 * transforms twice an iteration). */
size_t lull_dct_2d_scratch_floats(const lull_dct_plan* plan_x, const lull_dct_plan* plan_y,
                                  int num_threads);

/* Two-dimensional transform of a planar width x height image (row-major,
 * row stride = width) along both axes with OpenMP; plan_x has length width,
 * plan_y length height; scratch holds lull_dct_2d_scratch_floats floats,
 * 64-byte aligned. */
void lull_dct_2d(const lull_dct_plan* plan_x, const lull_dct_plan* plan_y, float* image,
                 int inverse, int num_threads, float* scratch);
