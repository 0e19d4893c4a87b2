/* The path-traced gradient-domain test scenes (tests/data/gradient, made
 * by examples/gdpt): loading, and running lull's filters on them through
 * the OIDN API.  Shared by the scene test and the Poisson benchmark. */
#pragma once

#include <stddef.h>

#include <OpenImageDenoise/oidn.h>

typedef struct scene_data
{
  int width, height;
  /* packed RGB floats (depth: one channel) */
  float* primal_a;
  float* primal_b;
  float* dx_a;
  float* dx_b;
  float* dy_a;
  float* dy_b;
  float* direct;      /* camera-visible emitters at the reference's sample count */
  float* primal;      /* means of the halves */
  float* dx;
  float* dy;
  float* albedo;
  float* normal;
  float* depth;
  float* variance;    /* feature variance: albedo, normal, depth (channel means) */
  float* reference;   /* primal + direct at high spp */
} scene_data;

/* Loads scene `name` from dir; returns 0 and prints why when it cannot
 * (missing files, no EXR support). */
int scene_data_load(scene_data* s, const char* dir, const char* name);
void scene_data_free(scene_data* s);

/* Filters reconstruct the primal (indirect light); each returns a new
 * packed RGB image (malloc'd) with the direct light added, or NULL after
 * printing the OIDN error.  The direct light is the reference's, so the
 * comparison measures the reconstruction alone: the 32-spp direct light's
 * anti-aliased light edges would otherwise add an error no reconstruction
 * touches (half of L1's relMSE on cornell). */
typedef struct scene_filter
{
  const char* type;       /* "Poisson", "GradientDomain", "ATrous" */
  int norm;               /* Poisson: 1 or 2 */
  int candidate;          /* GradientDomain: -1..2 */
  int cg_iterations;      /* 0: the filter's default */
} scene_filter;

float* scene_data_run(OIDNDevice device, const scene_data* s, const scene_filter* filter);
/* The noisy image: primal + direct. */
float* scene_data_noisy(const scene_data* s);
double scene_data_rel_mse(const scene_data* s, const float* image);
