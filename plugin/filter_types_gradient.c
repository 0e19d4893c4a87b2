/* The gradient-domain filter types.
 *
 * "Poisson"         screened-Poisson reconstruction of a gradient-domain
 *                   render (core/poisson.h): L2 exactly by DCT (or by CG),
 *                   L1 by IRLS.
 * "GradientDomain"  the same regularised by feature patches (core/
 *                   gradient_domain.h; Vicini 2015 §5.3).
 *
 * Images and parameters are listed here with their defaults and ranges; the
 * handle layer enforces the ranges at commit. */
#include <math.h>
#include <string.h>

#include "filter_types.h"

#include "../core/gradient_domain.h"
#include "../core/poisson.h"

#define INT_PARAM(name, def, lo, hi, doc) {name, LULL_PARAM_INT, def, lo, hi, 0, 1, doc, NULL}
#define FLOAT_PARAM(name, def, lo, hi, doc) {name, LULL_PARAM_FLOAT, def, lo, hi, 0, 1, doc, NULL}

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
    INT_PARAM("cgIterations", 20, 0, 1000000, "most conjugate-gradient iterations per solve"),
    FLOAT_PARAM("cgTolerance", 0, 0, 1,
                "stop CG when the residual is this fraction of the right-hand side (at least "
                "1e-7, float precision, is used)"),
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
    "Poisson", poisson_images, poisson_params, PP_COUNT, poisson_check, poisson_execute, NULL, 0};

/* -- GradientDomain ------------------------------------------------------------ */

enum
{
  GI_COLOR, GI_GRADIENT_X, GI_GRADIENT_Y, GI_OUTPUT, GI_COLOR_A, GI_COLOR_B, GI_GRADIENT_X_A,
  GI_GRADIENT_X_B, GI_GRADIENT_Y_A, GI_GRADIENT_Y_B, GI_ALBEDO, GI_NORMAL, GI_DEPTH, GI_POSITION,
  GI_FEATURE_VARIANCE, GI_IMAGES
};
static const char* const gradient_domain_images[] = {
    "color",      "gradientX",  "gradientY",  "output", "colorA", "colorB",   "gradientXA",
    "gradientXB", "gradientYA", "gradientYB", "albedo", "normal", "depth",    "position",
    "featureVariance", NULL};

enum
{
  GP_ALPHA, GP_IRLS_ITERATIONS, GP_IRLS_REG, GP_IRLS_REG_FACTOR, GP_CG_ITERATIONS,
  GP_CG_TOLERANCE, GP_CANDIDATE, GP_COUNT
};

static const lull_param_def gradient_domain_params[GP_COUNT] = {
    FLOAT_PARAM("alpha", 0.2, 1e-6, 1e6, "weight of the primal in the extended problem"),
    INT_PARAM("irlsIterations", 7, 1, 1000, "least-squares solves of the L1 problem"),
    FLOAT_PARAM("irlsRegularization", 0.05, 1e-12, 1e30,
                "regulariser of the first reweighting (radiance units)"),
    FLOAT_PARAM("irlsRegularizationFactor", 0.5, 1e-6, 1, "factor of the regulariser per step"),
    INT_PARAM("cgIterations", 20, 1, 1000000, "most preconditioned CG iterations per solve"),
    FLOAT_PARAM("cgTolerance", 1e-3, 0, 1,
                "stop CG when the residual is this fraction of the right-hand side"),
    INT_PARAM("candidate", -1, -1, LULL_GD_CANDIDATES - 1,
              "-1: per-pixel choice among the three candidate filters by the error estimated "
              "from the half-buffers; 0, 1, 2: (k_c, k_f, beta) = (1, 4, 1), (4, 8, 1), "
              "(8, 8, 2) only"),
};

static lull_gradient_domain_images gradient_domain_views(const lull_filter_config* config)
{
  lull_gradient_domain_images images;
  images.color = config->images[GI_COLOR];
  images.gradient_x = config->images[GI_GRADIENT_X];
  images.gradient_y = config->images[GI_GRADIENT_Y];
  images.output = config->images[GI_OUTPUT];
  images.color_a = config->images[GI_COLOR_A];
  images.color_b = config->images[GI_COLOR_B];
  images.gradient_x_a = config->images[GI_GRADIENT_X_A];
  images.gradient_x_b = config->images[GI_GRADIENT_X_B];
  images.gradient_y_a = config->images[GI_GRADIENT_Y_A];
  images.gradient_y_b = config->images[GI_GRADIENT_Y_B];
  images.albedo = config->images[GI_ALBEDO];
  images.normal = config->images[GI_NORMAL];
  images.depth = config->images[GI_DEPTH];
  images.position = config->images[GI_POSITION];
  images.feature_variance = config->images[GI_FEATURE_VARIANCE];
  return images;
}

static lull_gradient_domain_params gradient_domain_from_values(const double* v)
{
  lull_gradient_domain_params p = lull_gradient_domain_default_params();
  p.alpha = (float)v[GP_ALPHA];
  p.irls_iterations = (int)v[GP_IRLS_ITERATIONS];
  p.irls_reg_init = (float)v[GP_IRLS_REG];
  p.irls_reg_factor = (float)v[GP_IRLS_REG_FACTOR];
  p.cg_iterations = (int)v[GP_CG_ITERATIONS];
  p.cg_tolerance = (float)v[GP_CG_TOLERANCE];
  p.candidate = (int)v[GP_CANDIDATE];
  return p;
}

static lull_status gradient_domain_check(const lull_filter_config* config, lull_error* err)
{
  const lull_gradient_domain_images images = gradient_domain_views(config);
  const lull_gradient_domain_params params = gradient_domain_from_values(config->values);
  return lull_gradient_domain_validate(&params, &images, err);
}

static lull_status gradient_domain_execute(lull_backend* backend, const lull_filter_config* config,
                                           const lull_progress* progress, int async,
                                           lull_error* err)
{
  if (!backend->ops->gradient_domain)
    return unsupported("GradientDomain", err);
  const lull_gradient_domain_images images = gradient_domain_views(config);
  const lull_gradient_domain_params params = gradient_domain_from_values(config->values);
  return backend->ops->gradient_domain(backend, &params, &images, progress, async, err);
}

const lull_filter_type lull_filter_type_gradient_domain = {
    "GradientDomain",    gradient_domain_images,  gradient_domain_params, GP_COUNT,
    gradient_domain_check, gradient_domain_execute, NULL, 0};
