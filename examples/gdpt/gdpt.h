/* gdpt: a small gradient-domain path tracer (Kettunen et al. 2015, G-PT)
 * that renders lull's gradient-domain test data.
 *
 * Scenes are diffuse (Lambertian) boxes, quads and spheres lit by one-sided
 * quad lights; the camera is a pinhole with a box pixel filter.  Each sample
 * traces a base path with next-event estimation and four offset paths
 * through the neighbouring pixels by the reconnection shift, MIS-weighted
 * between base and offset (recipe: ../../../shared/reference/
 * gradient-domain.md §4; scheme notes in render.c).  Geometry is double
 * precision. */
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct vec3
{
  double x, y, z;
} vec3;

static inline vec3 v3(double x, double y, double z)
{
  vec3 v = {x, y, z};
  return v;
}
static inline vec3 vadd(vec3 a, vec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline vec3 vsub(vec3 a, vec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline vec3 vmul(vec3 a, vec3 b) { return v3(a.x * b.x, a.y * b.y, a.z * b.z); }
static inline vec3 vscale(vec3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
static inline double vdot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline vec3 vcross(vec3 a, vec3 b)
{
  return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double vlen(vec3 a) { return sqrt(vdot(a, a)); }
static inline vec3 vnorm(vec3 a) { return vscale(a, 1.0 / vlen(a)); }
static inline double vmax(vec3 a) { return fmax(a.x, fmax(a.y, a.z)); }

/* -- scenes ------------------------------------------------------------------------ */

enum { GDPT_MAX_SHAPES = 96, GDPT_MAX_MATERIALS = 16, GDPT_MAX_LIGHTS = 4 };

typedef enum { SHAPE_QUAD, SHAPE_BOX, SHAPE_SPHERE } gdpt_shape_type;

typedef struct gdpt_material
{
  vec3 albedo;
  vec3 albedo2;    /* second colour of the texture */
  int texture;     /* 0 plain, 1 checker (xz), 2 stripes (x), 3 checker (xy) */
  double scale;    /* texture cells per unit */
  vec3 emission;   /* lights only (their albedo is 0) */
} gdpt_material;

typedef struct gdpt_shape
{
  gdpt_shape_type type;
  vec3 a, u, v;    /* quad: corner and edges; normal u x v */
  vec3 lo, hi;     /* box */
  vec3 center;     /* sphere */
  double radius;
  int material;
} gdpt_shape;

typedef struct gdpt_light
{
  int shape;       /* a quad; emits on the side of u x v */
  double area;
  double select;   /* probability of choosing this light for NEE */
} gdpt_light;

typedef struct gdpt_camera
{
  vec3 eye, forward, right, up; /* right and up scaled by the half-extents at distance 1 */
} gdpt_camera;

typedef struct gdpt_scene
{
  const char* name;
  int width, height;
  gdpt_shape shapes[GDPT_MAX_SHAPES];
  int num_shapes;
  gdpt_material materials[GDPT_MAX_MATERIALS];
  int num_materials;
  gdpt_light lights[GDPT_MAX_LIGHTS];
  int num_lights;
  gdpt_camera camera;
  int max_depth;   /* path vertices after the camera */
} gdpt_scene;

/* The scenes: "cornell", "window", "textured"; returns 0 for an unknown name. */
int gdpt_scene_build(gdpt_scene* scene, const char* name, int width, int height);
/* Names of the scenes, NULL-terminated. */
const char* const* gdpt_scene_names(void);

typedef struct gdpt_hit
{
  double t;
  vec3 p;
  vec3 n;          /* geometric unit normal (not flipped) */
  int shape;
  int material;
} gdpt_hit;

/* Closest hit with t in (tmin, tmax); returns 0 when there is none. */
int gdpt_intersect(const gdpt_scene* scene, vec3 origin, vec3 dir, double tmin, double tmax,
                   gdpt_hit* hit);
/* 1 when the segment between a and b is unoccluded (ends excluded). */
int gdpt_visible(const gdpt_scene* scene, vec3 a, vec3 b);
vec3 gdpt_albedo(const gdpt_scene* scene, const gdpt_hit* hit);

/* -- rendering --------------------------------------------------------------------- */

/* Planar-interleaved RGB float images of width * height pixels. */
typedef struct gdpt_buffers
{
  float* primal;   /* base-path radiance, camera-visible emitters excluded */
  float* dx;       /* forward differences I(x+1, y) - I(x, y) of the primal */
  float* dy;       /* I(x, y+1) - I(x, y) */
  float* direct;   /* camera-visible emission ("very direct", no gradients) */
  float* albedo;   /* first-hit features and the variance of their pixel means */
  float* normal;
  float* depth;    /* one channel */
  float* albedo_var;
  float* normal_var;
  float* depth_var;
  /* the samples' histograms for the RHF filter (NULL: none): bins x 3
   * counts a pixel, (height, width, bins, 3), each sample's primal +
   * direct value binned by lull_rhf_bin (docs/rhf.md) */
  float* histogram;
} gdpt_buffers;

typedef struct gdpt_settings
{
  int spp;
  uint64_t seed;   /* independent renders need different seeds */
  uint64_t first_sample; /* samples first_sample .. + spp - 1 of the seed's streams: a render
                          * that continues another one (more reference samples) */
  int gradients;   /* 0: plain path tracing (the reference; dx, dy untouched) */
  int direct_only; /* only camera rays: primal stays 0 (the reference's direct light) */
  int threads;
  int histogram_bins;     /* of out->histogram */
  float histogram_gamma;  /* the binning's tone compression (2.2) */
  float histogram_max;    /* and saturation (2.5) */
} gdpt_settings;

/* Renders into buffers (each NULL buffer is skipped; all are overwritten).
 * progress, when not NULL, receives the fraction of rows done. */
void gdpt_render(const gdpt_scene* scene, const gdpt_settings* settings, gdpt_buffers* out,
                 void (*progress)(double done, void* user), void* user);

/* -- self-check --------------------------------------------------------------------- */

/* Do the gradients estimate forward differences of the primal?  From two
 * independent half renders (RGB, width x height): d = dx - (P(x+1) - P(x))
 * of their means has expectation 0 exactly when they do; ratio = sum d^2 /
 * sum Var[d], with Var[d] the two-buffer estimate (d_A - d_B)^2 / 4, is
 * then about 1 (a wrong scale or sign makes it grow with the sample count).
 * noise = sum Var[dx] / sum Var[P(x+1) - P(x)]: how much less noisy the
 * sampled gradient is than the difference of primal pixels. */
typedef struct gdpt_check
{
  double ratio_x, ratio_y;
  double noise_x, noise_y;
} gdpt_check;

gdpt_check gdpt_gradient_check(int width, int height, const float* primal_a,
                               const float* primal_b, const float* dx_a, const float* dx_b,
                               const float* dy_a, const float* dy_b);
