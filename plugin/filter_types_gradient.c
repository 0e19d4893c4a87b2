/* The gradient-domain filter types.
 *
 * "Poisson"  screened-Poisson reconstruction of a gradient-domain render
 *            (core/poisson.h): L2 exactly by DCT (or by CG), L1 by IRLS.
 *
 * Images and parameters are listed here with their defaults and ranges; the
 * handle layer enforces the ranges at commit. */
#include <math.h>
#include <string.h>

#include "filter_types.h"

#include "../core/poisson.h"

#define INT_PARAM(name, def, lo, hi, doc) {name, LULL_PARAM_INT, def, lo, hi, 0, 1, doc}
#define FLOAT_PARAM(name, def, lo, hi, doc) {name, LULL_PARAM_FLOAT, def, lo, hi, 0, 1, doc}

static lull_status unsupported(const char* type, lull_error* err)
{
  return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE, "filter '%s' is not supported on this device",
                   type);
}

/* -- Poisson ------------------------------------------------------------------ */

enum
{
  PI_COLOR, PI_GRADIENT_X, PI_GRADIENT_Y, PI_OUTPUT, PI_COLOR_A, PI_COLOR_B, PI_GRADIENT_X_A,
  PI_GRADIENT_X_B, PI_GRADIENT_Y_A, PI_GRADIENT_Y_B, PI_OUTPUT_VARIANCE, PI_IMAGES
};
static const char* const poisson_images[] = {
    "color",      "gradientX",  "gradientY",  "output",     "colorA",         "colorB",
    "gradientXA", "gradientXB", "gradientYA", "gradientYB", "outputVariance", NULL};

enum
{
  PP_ALPHA, PP_NORM, PP_SOLVER, PP_IRLS_ITERATIONS, PP_IRLS_REG, PP_IRLS_REG_FACTOR,
  PP_CG_ITERATIONS, PP_CG_TOLERANCE, PP_PRECONDITIONER, PP_COUNT
};

static const lull_param_def poisson_params[PP_COUNT] = {
    FLOAT_PARAM("alpha", 0.2, 0, 1e6,
                "weight of the primal against the gradients (higher: closer to the noisy primal)"),
    INT_PARAM("norm", LULL_POISSON_NORM_L1, 1, 2,
              "1: L1 by IRLS (robust to gradient outliers, slightly biased); 2: L2 (unbiased)"),
    INT_PARAM("solver", LULL_POISSON_SOLVER_DCT, 0, 1,
              "L2 and the first IRLS step: 0 exact by DCT, 1 conjugate gradients from the primal"),
    INT_PARAM("irlsIterations", 7, 1, 1000, "L1: least-squares solves (the first unweighted)"),
    FLOAT_PARAM("irlsRegularization", 0.05, 1e-12, 1e30,
                "L1: regulariser of the first reweighting (radiance units)"),
    FLOAT_PARAM("irlsRegularizationFactor", 0.5, 1e-6, 1, "L1: factor of the regulariser per step"),
    INT_PARAM("cgIterations", 50, 0, 1000000, "most conjugate-gradient iterations per solve"),
    FLOAT_PARAM("cgTolerance", 0, 0, 1,
                "stop CG when the residual is this fraction of the right-hand side (0: never)"),
    INT_PARAM("preconditioner", LULL_POISSON_PRECOND_JACOBI, 0, 2,
              "weighted CG solves: 0 none, 1 Jacobi, 2 DCT of the mean-weight operator"),
};

static lull_poisson_images poisson_views(const lull_filter_config* config)
{
  lull_poisson_images images;
  images.color = config->images[PI_COLOR];
  images.gradient_x = config->images[PI_GRADIENT_X];
  images.gradient_y = config->images[PI_GRADIENT_Y];
  images.output = config->images[PI_OUTPUT];
  images.color_a = config->images[PI_COLOR_A];
  images.color_b = config->images[PI_COLOR_B];
  images.gradient_x_a = config->images[PI_GRADIENT_X_A];
  images.gradient_x_b = config->images[PI_GRADIENT_X_B];
  images.gradient_y_a = config->images[PI_GRADIENT_Y_A];
  images.gradient_y_b = config->images[PI_GRADIENT_Y_B];
  images.output_variance = config->images[PI_OUTPUT_VARIANCE];
  return images;
}

static lull_poisson_params poisson_from_values(const double* v)
{
  lull_poisson_params p = lull_poisson_default_params();
  p.alpha = (float)v[PP_ALPHA];
  p.norm = (int)v[PP_NORM];
  p.solver = (int)v[PP_SOLVER];
  p.irls_iterations = (int)v[PP_IRLS_ITERATIONS];
  p.irls_reg_init = (float)v[PP_IRLS_REG];
  p.irls_reg_factor = (float)v[PP_IRLS_REG_FACTOR];
  p.cg_iterations = (int)v[PP_CG_ITERATIONS];
  p.cg_tolerance = (float)v[PP_CG_TOLERANCE];
  p.preconditioner = (int)v[PP_PRECONDITIONER];
  return p;
}

static lull_status poisson_check(const lull_filter_config* config, lull_error* err)
{
  const lull_poisson_images images = poisson_views(config);
  const lull_poisson_params params = poisson_from_values(config->values);
  return lull_poisson_validate(&params, &images, err);
}

static lull_status poisson_execute(lull_backend* backend, const lull_filter_config* config,
                                   const lull_progress* progress, int async, lull_error* err)
{
  if (!backend->ops->poisson)
    return unsupported("Poisson", err);
  const lull_poisson_images images = poisson_views(config);
  const lull_poisson_params params = poisson_from_values(config->values);
  return backend->ops->poisson(backend, &params, &images, progress, async, err);
}

const lull_filter_type lull_filter_type_poisson = {
    "Poisson", poisson_images, poisson_params, PP_COUNT, poisson_check, poisson_execute, NULL};
