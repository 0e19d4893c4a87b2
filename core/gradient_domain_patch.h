/* The patch constraints of GradientDomain on the CPU: their weights
 * (eq. 5.9-5.15) and the 9x9 stencil of their normal-equation term
 * (§5.3.4).  Planar float images, row stride = width; formulas in
 * gradient_domain_math.h. */
#pragma once

#include "gradient_domain_math.h"
#include "planes.h"
#include "poisson_solver.h"

/* Weights w~(p, p + o) of one offset o = (dx, dy) != (0, 0) into out (0
 * where p + o is outside the image): lull_gd_pair_weight_at for every
 * pixel, one pass per distance term.  scratch: 4 planes. */
void lull_gd_offset_weights(int width, int height, const lull_gd_guide* guide,
                            const lull_gd_features* features, const lull_gd_candidate* candidate,
                            float delta, int nlm_radius, int dx, int dy, float* out,
                            float* scratch, int threads);

/* Weights w~(p, p + o) of the 25 patch offsets o (lull_gd_patch_index)
 * into weights[0..24]; NL-means patches of radius nlm_radius (eq. 5.10),
 * threshold delta (eq. 5.15).  scratch: 4 planes. */
void lull_gd_patch_weights(int width, int height, const lull_gd_guide* guide,
                           const lull_gd_features* features, const lull_gd_candidate* candidate,
                           float delta, int nlm_radius, float* const weights[LULL_GD_PATCH],
                           float* scratch, int threads);

/* Adds the patch term sum_p || D_p (B_p B_p^T - I) x_p ||^2 to the stencil
 * (which must be zero or hold other terms). */
void lull_gd_patch_stencil(int width, int height, const lull_gd_features* features,
                           const float* const weights[LULL_GD_PATCH], lull_stencil* stencil,
                           int threads);

