/* Feature-patch gradient-domain reconstruction (the "GradientDomain"
 * filter; Vicini 2015 §5.3, Manzi, Vicini and Zwicker 2016): parameters,
 * images, and the CPU entry.
 *
 * The screened Poisson problem of poisson.h gains one patch constraint per
 * pixel (eq. 5.5-5.8): each 5x5 patch of the result should lie near the
 * span of the feature patches around it (constant, albedo, normal, depth or
 * position; truncated SVD, §5.3.1), weighted by NL-means colour weights on
 * the L1 reconstruction and by feature weights (eq. 5.9-5.15, §5.3.2).
 * The run (gradient_domain_cpu.c):
 *
 *   1. guide: L1 Poisson reconstruction of the full data and of each half;
 *      its two-buffer variance (blurred, and at least the raw value)
 *      scales the colour distances;
 *   2. for each of three candidates (k_c, k_f, beta) = (1, 4, 1),
 *      (4, 8, 1), (8, 8, 2) (§5.4 has (0.5, 2, 0.5) first;
 *      gradient_domain_planes.h says why not): patch weights and the matrix-free
 *      patch term (a 9x9 symmetric stencil of A^T D^2 A, §5.3.4); the
 *      extended problem under L1 by IRLS on the Poisson rows with Jacobi
 *      PCG, from the guide; then the second, L2 pass (alpha 0.05) on the
 *      primal and the gradients of that result (§5.3.1), by DCT;
 *   3. per pixel, the candidate with the smallest estimated error.  The
 *      thesis estimates errors at sparse reference pixels that the renderer
 *      samples more (§5.3.3); a filter cannot ask for samples, so the
 *      estimate here comes from the two half-buffers: each candidate is
 *      also solved on the halves (the same weights, so one more linear
 *      solve for their difference) and compared with the unbiased L2
 *      reconstruction of the other half (gradient_domain_math.h,
 *      lull_two_buffer_error), smoothed over a 17x17 window.
 *
 * Inputs are as for Poisson, except that the half-buffers are required (the
 * colour weights need their variance).  Features are optional: without any
 * the patch subspace is the constant and only the colour weights act.
 * Non-finite inputs are repaired as in Poisson (features: replaced by 0). */
#pragma once

#include "image.h"
#include "poisson_input.h"
#include "status.h"

enum { LULL_GD_CANDIDATES = 3 };

typedef struct lull_gradient_domain_params
{
  float alpha;           /* weight of the primal in the extended problem (§5.4: 0.5; default 0.2) */
  int irls_iterations;   /* L1 solves of the extended problem (§5.2: 7) */
  float irls_reg_init;   /* as in Poisson */
  float irls_reg_factor;
  int cg_iterations;     /* most PCG iterations per solve */
  float cg_tolerance;    /* relative residual that ends a solve */
  int candidate;         /* -1: per-pixel selection; 0..2: that candidate only */
} lull_gradient_domain_params;

lull_gradient_domain_params lull_gradient_domain_default_params(void);

typedef struct lull_gradient_domain_images
{
  lull_image color, gradient_x, gradient_y, output; /* as Poisson; full optional */
  lull_image color_a, color_b;                       /* required half-buffers */
  lull_image gradient_x_a, gradient_x_b;
  lull_image gradient_y_a, gradient_y_b;
  lull_image albedo;           /* optional, 3 channels (1 and 2 read as OIDN 2.1+ does) */
  lull_image normal;           /* optional, 3 channels (1 and 2 read as OIDN 2.1+ does) */
  lull_image depth;            /* optional, 1 channel */
  lull_image position;         /* optional, 3 channels (used when depth is absent) */
  lull_image feature_variance; /* optional: variance of the albedo, normal and depth/position
                                  (each the mean over its channels), 3 channels */
} lull_gradient_domain_images;

/* A feature image of the patch constraints (§5.3.2): albedo, normal, then
 * depth or position; its channels, and the channel of featureVariance
 * that holds its variance. */
typedef struct lull_gd_feature_source
{
  const lull_image* image;
  int channels;
  int variance_channel;
} lull_gd_feature_source;

/* The feature images that are present, in that order; returns how many. */
int lull_gradient_domain_feature_sources(const lull_gradient_domain_images* images,
                                         lull_gd_feature_source out[3]);

/* The Poisson inputs among the images (full data and halves). */
lull_poisson_input lull_gradient_domain_input(const lull_gradient_domain_images* images);

/* The parameters of a candidate's extended solve (§5.3.1: L1 by IRLS,
 * Jacobi-preconditioned CG; the DCT cannot model the patch term). */
lull_poisson_params lull_gradient_domain_solve_params(const lull_gradient_domain_params* params);

/* The candidates a run tries, [*first, *last]: `candidate` alone, or all
 * of them for -1 (automatic). */
void lull_gd_candidate_range(int candidate, int* first, int* last);

/* The progress layout of a run, the same on both backends: the guide and
 * reference solves take 3% each (step 0..4), the candidates share the last
 * 85% equally (candidate k of [first, last]); within a candidate the
 * weights and patch constraints end at 10%, the extended solve at 80%
 * (95% without the halves), the halves' difference solve at 95%, and the
 * second passes take the rest. */
lull_progress_span lull_gd_guide_span(const lull_progress_span* whole, int step);
lull_progress_span lull_gd_candidate_span(const lull_progress_span* whole, int k, int first,
                                          int last);
#define LULL_GD_PROGRESS_CONSTRAINTS 0.1 /* of a candidate: weights and constraints done */
lull_progress_span lull_gd_solve_span(const lull_progress_span* candidate, int with_halves);
lull_progress_span lull_gd_halves_span(const lull_progress_span* candidate);

lull_status lull_gradient_domain_validate(const lull_gradient_domain_params* params,
                                          const lull_gradient_domain_images* images,
                                          lull_error* err);

/* Bytes of working memory the CPU run needs (174 floats per pixel: 730 MB
 * at 1 MP). */
size_t lull_gradient_domain_cpu_memory(int width, int height);

lull_status lull_gradient_domain_cpu(const lull_gradient_domain_params* params,
                                     const lull_gradient_domain_images* images, int num_threads,
                                     const lull_progress* progress, lull_error* err);
