/* The inputs of a gradient-domain reconstruction (the Poisson and the
 * GradientDomain filters): primal and gradients, full and/or as two
 * independent half-buffers; their checks, loading into planes with the
 * repair of non-finite values, and the stores of the results. */
#pragma once

#include "image.h"
#include "poisson_solver.h"
#include "status.h"

typedef struct lull_poisson_input
{
  const lull_image* color;
  const lull_image* gradient_x;
  const lull_image* gradient_y;
  const lull_image* color_a;
  const lull_image* color_b;
  const lull_image* gradient_x_a;
  const lull_image* gradient_x_b;
  const lull_image* gradient_y_a;
  const lull_image* gradient_y_b;
} lull_poisson_input;

/* The inputs of the Poisson filter's images. */
lull_poisson_input lull_poisson_input_of(const lull_poisson_images* images);

/* Which set lull_poisson_input_load reads. */
enum { LULL_POISSON_INPUT_FULL, LULL_POISSON_INPUT_A, LULL_POISSON_INPUT_B };

/* Checks presence (full or both halves; halves all six or none), sizes
 * (all equal to the output's) and channels; the messages name the image. */
lull_status lull_poisson_input_validate(const lull_poisson_input* in, const lull_image* output,
                                        lull_error* err);
/* Solved colour channels: min(channels of the primal, 3). */
int lull_poisson_input_channels(const lull_poisson_input* in);

/* Reads a set into planes (b[3] receives a 4th colour channel and may be
 * NULL).  FULL without full images is the mean of the halves.  Non-finite
 * primal values become the mean of the finite ones of the same channel in
 * the 5x5 neighbourhood (0 without any), non-finite gradients 0. */
void lull_poisson_input_load(const lull_poisson_input* in, int which, int channels,
                             float* const b[4], float* const gx[3], float* const gy[3],
                             int threads);

/* Replaces non-finite solution values (an overflow) by fallback's. */
void lull_poisson_finite_or(const lull_poisson_system* sys, float* const x[3],
                            const float* const fallback[3]);

/* Writes channels planes (and alpha as a 4th channel when the output has
 * four) into output. */
void lull_poisson_store(const lull_image* output, int channels, const float* const x[3],
                        const float* alpha, int threads);
/* Writes the two-buffer variance (a - b)^2 / 4 per channel, or its mean
 * over the channels into a 1-channel image. */
void lull_poisson_store_variance(const lull_image* output, int channels, const float* const a[3],
                                 const float* const b[3], int threads);
