/* The weighted screened-Poisson solver of the CPU backend, shared by the
 * Poisson filter (poisson_cpu.c) and the GradientDomain filter
 * (gradient_domain_cpu.c).  Plain data in planar float arrays (one array
 * per channel, row-major, row stride = width); formulas in poisson_math.h.
 *
 *   poisson_dct.c  the exact solve of the constant-weight system by DCT
 *   poisson_cg.c   the operator, (preconditioned) conjugate gradients and
 *                  the IRLS loop for L1 */
#pragma once

#include <stddef.h>

#include "dct.h"
#include "poisson.h"
#include "status.h"

/* A progress sub-range: fraction f of this task is reported as
 * begin + f (end - begin) of the whole run. */
typedef struct lull_progress_span
{
  const lull_progress* progress;
  double begin, end;
} lull_progress_span;

lull_status lull_progress_span_report(const lull_progress_span* span, double done,
                                      lull_error* err);
/* The part [begin, end] (fractions of span) of span. */
lull_progress_span lull_progress_subspan(const lull_progress_span* span, double begin,
                                         double end);

/* The patch-constraint term of GradientDomain as a symmetric 9x9 stencil
 * (poisson_math.h: lull_stencil_offset): LULL_STENCIL_TAPS planes. */
typedef struct lull_stencil
{
  float* coef;   /* tap t at coef + t * stride */
  size_t stride; /* floats per plane */
} lull_stencil;

/* The system A^T W^2 A x = A^T W^2 b of poisson_math.h, plus an optional
 * patch term added to A^T W^2 A (its rows have zero right-hand side). */
typedef struct lull_poisson_system
{
  int width, height;
  int channels;                  /* solved channels, 1 to 3 */
  int threads;
  float alpha2;                  /* alpha^2 */
  float* wa;                     /* squared row weights (planes), owned by the caller */
  float* wx;                     /* 0 in the last column */
  float* wy;                     /* 0 in the last row */
  const float* primal[3];
  const float* gx[3];
  const float* gy[3];
  const lull_stencil* patch;     /* NULL: plain screened Poisson */
  const float* zero;             /* width zeros: the weights of the row above row 0 */
} lull_poisson_system;

/* Sets the weights of an unweighted (L2) solve: 1 for every row, 0 for
 * the absent edges. */
void lull_poisson_weights_reset(const lull_poisson_system* sys);

/* The DCT solver of the constant-weight operator a I + c L. */
typedef struct lull_poisson_dct
{
  lull_dct_plan px, py;
  float* lx; /* axis eigenvalues (poisson_math.h) */
  float* ly;
  float* scratch; /* lull_dct_2d's, for every solve */
  int threads;
} lull_poisson_dct;

lull_status lull_poisson_dct_init(lull_poisson_dct* dct, int width, int height, int threads,
                                  lull_error* err);
void lull_poisson_dct_free(lull_poisson_dct* dct);

/* Solves (a I + c L) x = rhs for one channel in place (x holds rhs).  With
 * pin_mean the constant component is set so the mean of x is `mean`, else
 * it is rhs's over a (0 when a = 0).  For the unweighted system with rhs =
 * a b + div g the mean of x is b's for every a > 0 (the divergence sums to
 * 0), and for a = 0 it is undetermined (Bhat et al. 2008 take the
 * primal's): pinning it is exact, where dividing a rhs whose constant is
 * float rounding by a small a was not (alpha 1e-5 gave a mean off by 0.5). */
void lull_poisson_dct_solve(const lull_poisson_dct* dct, float* x, float a, float c, int pin_mean,
                            float mean);

/* Statistics of the last solve (for tests and the benchmark). */
typedef struct lull_poisson_stats
{
  int cg_iterations;        /* CG iterations of all solves together */
  double residual[3];       /* |A^T W^2 (b - A x)| per channel after the last solve */
  double rhs[3];            /* |A^T W^2 b| per channel of the last solve */
} lull_poisson_stats;

/* Solves the system by params (norm, solver, IRLS, CG).  x holds the
 * initial guess on entry (CG starts there; the DCT path ignores it) and
 * the solution on return.  For L1 the weights are rewritten.  dct may be
 * NULL when params->solver is CG and the preconditioner is not DCT; the
 * DCT path needs sys->patch == NULL.  stats may be NULL. */
lull_status lull_poisson_solve(const lull_poisson_params* params, lull_poisson_system* sys,
                               float* const x[3], const lull_poisson_dct* dct,
                               const lull_progress_span* progress, lull_poisson_stats* stats,
                               lull_error* err);

/* One CG solve (params: cg_iterations, cg_tolerance, preconditioner) with
 * the weights as they are; x holds the start.  GradientDomain uses it to
 * solve for a second right-hand side with the final IRLS weights. */
lull_status lull_poisson_cg(const lull_poisson_params* params, const lull_poisson_system* sys,
                            float* const x[3], const lull_poisson_dct* dct,
                            const lull_progress_span* progress, lull_poisson_stats* stats,
                            lull_error* err);

/* IRLS weights of the Poisson rows from the residuals of x, unnormalised
 * (lull_irls_weight); *sum receives their sum and the number of rows is
 * returned, so a caller with more rows can normalise them all together. */
double lull_poisson_reweight(const lull_poisson_system* sys, const float* const x[3], float eps,
                             int power, double* sum);
/* Multiplies the Poisson rows' weights by scale. */
void lull_poisson_scale_weights(const lull_poisson_system* sys, float scale);

/* The least-squares objective of the unweighted rows at x:
 *   power 2: sum of squared residuals;  power 1: sum of their RGB lengths
 * (the L1 objective that IRLS minimises, §5.2). */
double lull_poisson_objective(const lull_poisson_system* sys, const float* const x[3], int power);
