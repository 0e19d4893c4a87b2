/* GradientDomain's post-filter on the CPU: a weighted local linear
 * regression of the chosen result (gradient_domain_math.h says why and
 * gives the formulas; gradient_domain_planes.h the settings).  Planar float
 * images, row stride = width. */
#pragma once

#include "gradient_domain_math.h"

/* One pass: regresses the nc planes x over the (2 radius + 1)^2 window with
 * the weights of guide, features and cand (lull_gd_pair_weight_at, NL-means
 * radius nlm_radius), into out.  out_var, when not NULL, gets the
 * variance of the result from var, the variance of x: var sum w^2 /
 * (sum w)^2.  out may not alias x.  sums: width x height lull_gd_llr;
 * weight: one plane; scratch: 4. */
void lull_gd_post_pass(int width, int height, int nc, const lull_gd_guide* guide,
                       const lull_gd_features* features, const lull_gd_candidate* cand,
                       int radius, int nlm_radius, float ridge, const float* const x[3],
                       const float* const var[3], float* const out[3], float* const out_var[3],
                       lull_gd_llr* sums, float* weight, float* scratch, int threads);
