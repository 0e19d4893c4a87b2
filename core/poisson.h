/* Screened-Poisson reconstruction of gradient-domain renders (the "Poisson"
 * filter): parameters, images, and the CPU entry.
 *
 * Given the primal (base) image b and sampled forward-difference gradients
 * dx(x, y) ~ I(x+1, y) - I(x, y), dy(x, y) ~ I(x, y+1) - I(x, y), it returns
 *
 *   L2:  argmin_I ||alpha (I - b)||^2 + ||H_x I - dx||^2 + ||H_y I - dy||^2
 *        (Vicini 2015 §5.2, eq. 5.1), solved exactly by the DCT, or by
 *        conjugate gradients (the reference path);
 *   L1:  the same with every residual's RGB length in place of its square
 *        (§5.2, SOLVEL1), by iteratively reweighted least squares: the first
 *        solve is the L2 one, then irls_iterations - 1 weighted solves by
 *        preconditioned CG, regulariser irls_reg_init * irls_reg_factor^i.
 *
 * The last column of dx and the last row of dy are outside the image and
 * never read.  Non-finite inputs are repaired before solving: a non-finite
 * colour by the mean of the finite colours in its 5x5 neighbourhood (0 if
 * there is none), a non-finite gradient by 0; the output is always finite.
 *
 * Half-buffers: a renderer that splits its samples into two independent
 * halves (A, B) may pass both; the full image is then their mean where
 * color/gradients are absent, and output_variance receives the two-buffer
 * variance (x_A - x_B)^2 / 4 of the reconstruction (§3.2.5), the variance
 * of the reconstruction of the mean. */
#pragma once

#include "image.h"
#include "status.h"

/* Values of the "norm" parameter. */
typedef enum lull_poisson_norm
{
  LULL_POISSON_NORM_L1 = 1,
  LULL_POISSON_NORM_L2 = 2,
} lull_poisson_norm;

/* Values of the "solver" parameter: how the L2 problem (and the first,
 * unweighted step of L1) is solved. */
typedef enum lull_poisson_solver
{
  LULL_POISSON_SOLVER_DCT = 0, /* exact, O(n log n) */
  LULL_POISSON_SOLVER_CG = 1,  /* conjugate gradients from the primal (reference path) */
} lull_poisson_solver;

/* Values of the "preconditioner" parameter of the weighted CG solves. */
typedef enum lull_poisson_preconditioner
{
  LULL_POISSON_PRECOND_NONE = 0,
  LULL_POISSON_PRECOND_JACOBI = 1, /* the diagonal of the weighted operator */
  LULL_POISSON_PRECOND_DCT = 2,    /* the constant-weight operator, solved by DCT (Kuk & Cho 2013) */
} lull_poisson_preconditioner;

typedef struct lull_poisson_params
{
  float alpha;             /* weight of the primal, >= 0 (eq. 5.1) */
  int norm;                /* lull_poisson_norm */
  int solver;              /* lull_poisson_solver */
  int irls_iterations;     /* L1: number of least-squares solves (§5.2: 7) */
  float irls_reg_init;     /* L1: regulariser of the first reweighting (§5.2: 0.05) */
  float irls_reg_factor;   /* L1: its factor per reweighting (§5.2: 0.5) */
  int irls_weight_power;   /* 1: factor 1/(|e| + eps) on each squared residual (an L1
                              objective); 2: 1/(|e| + eps)^2 as the thesis' pseudocode */
  int cg_iterations;       /* most CG iterations per solve */
  float cg_tolerance;      /* stop a channel when |r| <= tolerance |b| (never below
                            * LULL_CG_TOLERANCE_FLOOR, poisson_math.h) */
  int preconditioner;      /* lull_poisson_preconditioner */
} lull_poisson_params;

/* Defaults of the "Poisson" filter (documented in filter_types_gradient.c). */
lull_poisson_params lull_poisson_default_params(void);

typedef struct lull_poisson_images
{
  lull_image color;      /* primal, 1 to 4 channels (the 4th is copied through) */
  lull_image gradient_x; /* at least the solved channels (min(channels, 3)) */
  lull_image gradient_y;
  lull_image output;     /* same size and channels as color */
  lull_image color_a, color_b;           /* optional half-buffers, all six or none */
  lull_image gradient_x_a, gradient_x_b;
  lull_image gradient_y_a, gradient_y_b;
  lull_image output_variance;            /* optional (needs the halves): 1 channel (mean)
                                            or the solved channels */
} lull_poisson_images;

lull_status lull_poisson_validate(const lull_poisson_params* params,
                                  const lull_poisson_images* images, lull_error* err);

/* Runs the filter on the CPU with OpenMP.  The output may alias inputs (it
 * is written after every input has been read). */
lull_status lull_poisson_cpu(const lull_poisson_params* params, const lull_poisson_images* images,
                             int num_threads, const lull_progress* progress, lull_error* err);
