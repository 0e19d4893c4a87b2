/* The cases on which the CUDA Poisson filter is compared with the CPU's:
 * synthetic gradient-domain data (a known image with edges, noisy halves,
 * gradient noise with outliers, optional non-finite values) and a table of
 * sizes, channel counts, inputs and parameters.  Shared by the CPU
 * emulation of the kernels (poisson_emulation_test.cu) and the GPU test
 * (cuda_poisson_test.c), so both check the same things.  The data come
 * from poisson_cases.c. */
#pragma once

#include <math.h>
#include <stddef.h>

#include "poisson.h"

typedef struct poisson_data
{
  int width, height, channels;
  /* packed, `channels` floats per pixel */
  float *color, *gx, *gy, *color_a, *color_b, *gx_a, *gx_b, *gy_a, *gy_b;
} poisson_data;

/* Halves with independent primal noise (0.1) and gradient noise (0.01,
 * 1% outliers of up to 1) around synthetic.h's image; the full buffers are
 * their means.  The 4th channel is an alpha ramp.  poison: NaN and Inf in
 * the primal and the gradients, and a 5x5 block without a finite primal
 * value. */
void poisson_data_make(poisson_data* d, int w, int h, int channels, int poison, unsigned seed);
void poisson_data_free(poisson_data* d);

/* How closely two GradientDomain results agree (the filter's discrete
 * choices, which a last-bit difference can flip at a few pixels, make the
 * largest difference a poor measure): of `test` against `ref`. */
typedef struct poisson_agreement
{
  double max_rel;  /* max |test - ref| / max |ref| */
  double mean_rel; /* mean |test - ref| / mean |ref| */
  double outliers; /* share of values with |test - ref| > 1e-3 max |ref| (NaN counts) */
} poisson_agreement;

poisson_agreement poisson_agreement_of(const float* test, const float* ref, size_t n);

/* A progress monitor that logs its calls and cancels at call cancel_at
 * (-1: never). */
typedef struct poisson_progress_log
{
  int calls, cancel_at;
  double last;
  int monotone;
} poisson_progress_log;

int poisson_on_progress(void* user, double done);

/* Features for GradientDomain: an albedo checker, normals of two slanted
 * planes, a depth ramp with a step (and the matching positions), and small
 * feature variances (3 channels: albedo, normal, depth).  Packed. */
typedef struct poisson_features
{
  float *albedo, *normal, *depth, *position, *variance; /* 3, 3, 1, 3, 3 channels */
} poisson_features;

void poisson_features_make(poisson_features* f, int w, int h);
void poisson_features_free(poisson_features* f);

/* The features of an exported gradient scene (albedo, normal, depth in 3
 * channels, feature variance); 0 (and f empty) when absent. */
int poisson_scene_features(poisson_features* f, const char* scene, int w, int h);

/* A gradient scene exported by export_gradient_testdata.py (256x192, RGB):
 * the halves, the full buffers as their means, and (when asked) the
 * reference and its direct light.  Returns 0 (and d empty) when the files
 * are absent. */
int poisson_scene_load(poisson_data* d, const char* scene, float** reference, float** direct);

enum
{
  INPUT_FULL = 0,   /* color, gradientX, gradientY */
  INPUT_BOTH = 1,   /* full and halves */
  INPUT_HALVES = 2, /* halves only (the full image is their mean) */
};

typedef struct poisson_case
{
  const char* name;
  int width, height, channels;
  int inputs;            /* INPUT_* */
  int variance_channels; /* outputVariance: 0 (none), 1 or the solved channels */
  int poison;
  int norm, solver, preconditioner, irls_iterations, cg_iterations;
  float alpha, cg_tolerance;
  /* the largest difference allowed, relative to the largest |value| of
   * the CPU's output (the variance: of its own) */
  double tolerance;
} poisson_case;

/* L2 by DCT is exact up to rounding: the FFTs' float sums in other orders
 * than the CPU's; measured in the emulation 3e-7 to 9e-7, 4.7e-6 for the
 * prime length 1279 (one radix-1279 pass sums 1279 terms in float).  CG
 * and IRLS sum in other orders too (reductions in double, vectors in
 * float), and each IRLS step builds on the last: measured up to 1.2e-7
 * (L2 by CG) and 3.4e-6 (L1) in the emulation, 5e-7 on the gradient
 * scenes. */
#define POISSON_TOL_DCT 2e-5
#define POISSON_TOL_CG 2e-5
#define POISSON_TOL_L1 1e-4

static const poisson_case POISSON_CASES[] = {
    /* name                 w    h   ch inputs var poison norm solver precond irls cg  alpha tol */
    {"L2 DCT rgb",          64,  48, 3, INPUT_FULL,   0, 0, 2, 0, 1, 7, 20, 0.2f, 0.0f, POISSON_TOL_DCT},
    {"L2 DCT primes",       37,  23, 3, INPUT_FULL,   0, 0, 2, 0, 1, 7, 20, 0.2f, 0.0f, POISSON_TOL_DCT},
    {"L2 DCT prime 1279",   1279, 3, 1, INPUT_FULL,   0, 0, 2, 0, 1, 7, 20, 0.5f, 0.0f, POISSON_TOL_DCT},
    {"L2 DCT alpha 0",      30,  20, 3, INPUT_FULL,   0, 0, 2, 0, 1, 7, 20, 0.0f, 0.0f, POISSON_TOL_DCT},
    /* a tiny alpha: the constant is the primal's mean on both backends (each
     * had divided its own rounding by alpha^2) */
    {"L2 DCT alpha 1e-5",   64,  48, 3, INPUT_FULL,   0, 0, 2, 0, 1, 7, 20, 1e-5f, 0.0f, POISSON_TOL_DCT},
    {"L2 DCT 1x1",          1,   1,  3, INPUT_FULL,   0, 0, 2, 0, 1, 7, 20, 0.2f, 0.0f, POISSON_TOL_DCT},
    {"L2 DCT 1x17",         1,   17, 2, INPUT_FULL,   0, 0, 2, 0, 1, 7, 20, 0.2f, 0.0f, POISSON_TOL_DCT},
    {"L2 DCT 19x1 a=0",     19,  1,  1, INPUT_FULL,   0, 0, 2, 0, 1, 7, 20, 0.0f, 0.0f, POISSON_TOL_DCT},
    {"L2 DCT rgba poison",  40,  30, 4, INPUT_BOTH,   3, 1, 2, 0, 1, 7, 20, 0.2f, 0.0f, POISSON_TOL_DCT},
    {"L2 CG jacobi",        48,  40, 3, INPUT_FULL,   0, 0, 2, 1, 1, 7, 30, 0.2f, 0.0f, POISSON_TOL_CG},
    {"L2 CG none tol",      48,  40, 3, INPUT_FULL,   0, 0, 2, 1, 0, 7, 60, 0.2f, 1e-3f, POISSON_TOL_CG},
    {"L2 CG dct-precond",   48,  40, 3, INPUT_FULL,   0, 0, 2, 1, 2, 7, 10, 0.2f, 0.0f, POISSON_TOL_CG},
    {"L1 default",          64,  48, 3, INPUT_FULL,   0, 0, 1, 0, 1, 7, 20, 0.2f, 0.0f, POISSON_TOL_L1},
    {"L1 halves variance",  50,  33, 3, INPUT_HALVES, 1, 1, 1, 0, 1, 4, 15, 0.2f, 0.0f, POISSON_TOL_L1},
    {"L1 dct-precond",      45,  36, 3, INPUT_FULL,   0, 0, 1, 0, 2, 5, 8,  0.2f, 0.0f, POISSON_TOL_L1},
    {"L1 CG none a=0",      33,  31, 2, INPUT_FULL,   0, 0, 1, 1, 0, 4, 25, 0.0f, 0.0f, POISSON_TOL_L1},
    /* CG far past convergence (cgTolerance 0 stops at lull_cg_continues'
     * floor), alpha 0 (the constant fixed to the primal's mean after CG) */
    {"L2 CG a=0 past conv", 7,   5,  3, INPUT_FULL,   0, 0, 2, 1, 1, 7, 1000, 0.0f, 0.0f, POISSON_TOL_CG},
    {"L2 CG 3x1 a=0",       3,   1,  3, INPUT_FULL,   0, 0, 2, 1, 1, 7, 20, 0.0f, 0.0f, POISSON_TOL_CG},
    {"L1 3x1 past conv",    3,   1,  3, INPUT_FULL,   0, 0, 1, 0, 1, 7, 1000, 0.2f, 0.0f, POISSON_TOL_L1},
    {"L1 tolerance",        40,  40, 1, INPUT_FULL,   0, 1, 1, 0, 1, 5, 50, 0.3f, 1e-2f, POISSON_TOL_L1},
    /* a tiny alpha: CG deflated by the constant (poisson_cg.c), where CG
     * had stopped short along it (Jacobi) or divided the rounding of the
     * residual's sum by alpha^2 (the DCT preconditioner) */
    {"L2 CG 1x5 a=1e-4",    1,   5,  3, INPUT_FULL,   0, 0, 2, 1, 1, 7, 1000, 1e-4f, 0.0f, POISSON_TOL_CG},
    {"L2 CG dct a=1e-6",    24,  16, 3, INPUT_FULL,   0, 0, 2, 1, 2, 7, 40, 1e-6f, 0.0f, POISSON_TOL_CG},
    {"L1 dct-precond a=1e-6", 45, 36, 3, INPUT_FULL,  0, 0, 1, 0, 2, 5, 8,  1e-6f, 0.0f, POISSON_TOL_L1},
    /* deflated CG past convergence: r.z had counted r's rounding along the
     * constant (lull_cg_deflated_rz), and the steps grew without bound */
    {"L2 CG 2x1 past conv", 2,   1,  3, INPUT_FULL,   0, 0, 2, 1, 1, 7, 1000, 0.2f, 0.0f, POISSON_TOL_CG},
    {"L1 1x3 a=1",          1,   3,  3, INPUT_FULL,   0, 0, 1, 0, 1, 7, 20, 1.0f, 0.0f, POISSON_TOL_L1},
    {"L2 CG dct 2x1 past conv", 2, 1, 3, INPUT_FULL,  0, 0, 2, 1, 2, 7, 1000, 0.2f, 0.0f, POISSON_TOL_CG},
    /* wide enough that alpha 0.2 is not deflated (lull_cg_deflates): the
     * DCT preconditioner keeps its constant */
    {"L2 CG dct 96x64",     96,  64, 3, INPUT_FULL,   0, 0, 2, 1, 2, 7, 10, 0.2f, 0.0f, POISSON_TOL_CG},
    {"L1 dct-precond 96x64", 96, 64, 3, INPUT_FULL,   0, 0, 1, 0, 2, 5, 8,  0.2f, 0.0f, POISSON_TOL_L1},
};

static inline lull_poisson_params poisson_case_params(const poisson_case* c)
{
  lull_poisson_params p = lull_poisson_default_params();
  p.alpha = c->alpha;
  p.norm = c->norm;
  p.solver = c->solver;
  p.preconditioner = c->preconditioner;
  p.irls_iterations = c->irls_iterations;
  p.cg_iterations = c->cg_iterations;
  p.cg_tolerance = c->cg_tolerance;
  return p;
}

/* Largest |a - b| over n values relative to the largest |b| (NaN: inf). */
static inline double poisson_rel_max_diff(const float* a, const float* b, size_t n)
{
  double scale = 0.0, diff = 0.0;
  for (size_t i = 0; i < n; ++i) {
    scale = fmax(scale, fabs((double)b[i]));
    const double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= diff))
      diff = isnan(d) ? INFINITY : d;
  }
  return scale > 0.0 ? diff / scale : diff;
}
