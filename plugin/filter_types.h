/* The filter types a device can create ("RT", "RTLightmap", "ATrous",
 * "Gaussian", ...): for each, the images it accepts, its parameters with
 * types, defaults and ranges, and the functions that check a configuration
 * at commit time and run it.  Adding a filter means adding one entry here
 * (filter_types.c) and nothing in the handle layer. */
#pragma once

#include <stddef.h>

#include "../core/backend.h"
#include "../core/status.h"

enum { LULL_MAX_FILTER_IMAGES = 40, LULL_MAX_FILTER_PARAMS = 32 };

typedef enum lull_param_type
{
  LULL_PARAM_BOOL, /* shares storage with int, as in OIDN */
  LULL_PARAM_INT,
  LULL_PARAM_FLOAT,
} lull_param_type;

typedef struct lull_param_def
{
  const char* name;
  lull_param_type type;
  double default_value;  /* NaN allowed for float ("automatic") */
  double min, max;       /* checked at commit; NaN passes when the default is NaN */
  int read_only;         /* set is ignored with a warning */
  int reconfigures;      /* 1: a change is what OIDN calls a parameter change, after
                          * which a commit first raises errors parked by
                          * asynchronous runs; 0: a value a run reads as it is
                          * (inputScale, like new image pointers) */
  const char* doc;
  /* NULL, or what the setter does with a value, as OIDN's own setter of
   * this parameter: NULL to store *value (which it may rewrite), else the
   * message of the INVALID_ARGUMENT error raised at once, the filter left
   * as it was (quality: DEFAULT is stored as HIGH) */
  const char* (*accept)(double* value);
} lull_param_def;

/* What commit checks and execute runs: plain data, resolved views. */
typedef struct lull_filter_config
{
  lull_image images[LULL_MAX_FILTER_IMAGES]; /* indexed like the type's image names */
  const double* values;                      /* indexed like the type's params */
  /* The filter's state between executions: NULL until a type's execute
   * keeps one there (the history of temporal mode), which the filter's
   * release frees with the state's own release function. */
  struct lull_filter_state** state;
} lull_filter_config;

/* What a filter keeps between executions begins with this header. */
typedef struct lull_filter_state
{
  void (*release)(lull_backend* backend, struct lull_filter_state* state);
} lull_filter_state;

typedef struct lull_filter_type
{
  const char* name;
  const char* const* image_names;  /* NULL-terminated */
  const lull_param_def* params;
  int num_params;
  /* Commit-time checks of images and parameters. */
  lull_status (*check)(const lull_filter_config* config, lull_error* err);
  /* Runs the filter on a backend. */
  lull_status (*execute)(lull_backend* backend, const lull_filter_config* config,
                         const lull_progress* progress, int async, lull_error* err);
  /* tileAlignment / tileOverlap reported after commit. */
  int (*tile_overlap)(const lull_filter_config* config);
  /* 1 for OIDN's network filters (RT, RTLightmap), which take the data
   * parameter "weights" (a trained network); lull has no network, so a
   * commit with user weights set fails, as OIDN's does for weights it
   * cannot read.  0: "weights" is an unknown name (a warning). */
  int takes_weights;
} lull_filter_type;

/* Types defined in their own files (filter_types_gradient.c). */
extern const lull_filter_type lull_filter_type_poisson;
extern const lull_filter_type lull_filter_type_gradient_domain;
extern const lull_filter_type lull_filter_type_regression;
extern const lull_filter_type lull_filter_type_rdfc;
extern const lull_filter_type lull_filter_type_ddid;
extern const lull_filter_type lull_filter_type_rhf;

/* The views of a filter whose images begin with Regression's 18, in its
 * order (color, colorA, colorB, albedo, albedoA, albedoB, normal ...,
 * depth ..., position ..., variance, output, outputVariance): Regression
 * RDFC and DDID. */
lull_regression_images lull_filter_regression_images(const lull_image* images);

/* -- filter_temporal.c: temporal mode of the à-trous types ------------------- */

/* What a frame of temporal mode asks for (the filter's parameters). */
typedef struct lull_filter_temporal
{
  int reset;                   /* resetHistory: a cut */
  long long frame;             /* frame, -1: not numbered */
  lull_temporal_params params; /* alpha .. reject_sigma; the rest from the images */
} lull_filter_temporal;

/* The parameters that switch a type's temporal mode on and number its
 * frames (the blend's own, below, are ATrous's and Regression's; RT takes
 * the defaults). */
#define LULL_TEMPORAL_PARAM_DEFS                                                               \
  {"temporal", LULL_PARAM_BOOL, 0, 0, 1, 0, 1,                                                 \
   "accumulate each frame with the history of the executions before it (docs/temporal.md)",   \
   NULL},                                                                                      \
  {"resetHistory", LULL_PARAM_BOOL, 0, 0, 1, 0, 0,                                             \
   "temporal: this frame starts a new history (a cut)", NULL},                                 \
  {"frame", LULL_PARAM_INT, -1, -1, INT_MAX, 0, 0,                                             \
   "temporal: the frame's number, which must follow the last one's (-1: not numbered)", NULL}

/* The defaults of the blend with the à-trous filter: SVGF's alpha for
 * colour and moments (Schied et al. 2017, §4.1) and Falcor's cap of the
 * history; gamma 0.5 (tighter than TAA's 1: the ball's moving shadow had
 * left a trail), k 1 and the albedo's 0.5: chosen on the test animation
 * (docs/temporal.md). */
#define LULL_TEMPORAL_ALPHA 0.2
#define LULL_TEMPORAL_MOMENTS_ALPHA 0.2
#define LULL_TEMPORAL_ALBEDO_ALPHA 0.5
#define LULL_TEMPORAL_MAX_HISTORY 32
#define LULL_TEMPORAL_CLIP_SIGMA 0.5
#define LULL_TEMPORAL_REJECT_SIGMA 1.0

/* Regression's defaults of the blend where they differ from the à-trous
 * filter's: a larger weight of the current frame and a stricter test (the
 * regression keeps detail the history's lag would blur; docs/temporal.md).
 * RT's quality HIGH uses them too. */
#define LULL_REG_TEMPORAL_ALPHA 0.4
#define LULL_REG_TEMPORAL_REJECT 0.5

/* The blend's parameters (ATrous and Regression; RT takes
 * lull_filter_temporal_defaults), in the order
 * lull_filter_temporal_from_values reads them; the defaults of the weights
 * of the current frame and of the test differ by the spatial filter
 * (docs/temporal.md). */
#define LULL_TEMPORAL_BLEND_PARAM_DEFS(alpha, moments_alpha, reject_sigma)                     \
  {"temporalAlpha", LULL_PARAM_FLOAT, alpha, 0, 1, 0, 1,                                       \
   "temporal: least weight of the current frame's colour in the blend", NULL},                 \
  {"momentsAlpha", LULL_PARAM_FLOAT, moments_alpha, 0, 1, 0, 1,                                \
   "temporal: least weight of its luminance moments (the noise estimate)", NULL},              \
  {"albedoAlpha", LULL_PARAM_FLOAT, LULL_TEMPORAL_ALBEDO_ALPHA, 0, 1, 0, 1,                    \
   "temporal: least weight of its albedo (1: the albedo is not accumulated)", NULL},           \
  {"maxHistory", LULL_PARAM_INT, LULL_TEMPORAL_MAX_HISTORY, 1, 1 << 20, 0, 1,                  \
   "temporal: cap of the history length in frames", NULL},                                     \
  {"clipSigma", LULL_PARAM_FLOAT, LULL_TEMPORAL_CLIP_SIGMA, 0, FLT_MAX, 0, 1,                  \
   "temporal: clip the history to mean +- clipSigma sd of the 3x3 neighbourhood (0: off)",     \
   NULL},                                                                                      \
  {"rejectSigma", LULL_PARAM_FLOAT, reject_sigma, 0, FLT_MAX, 0, 1,                            \
   "temporal: trust the current frame more where the history is more than rejectSigma "       \
   "noise sd away (0: off)",                                                                   \
   NULL}

/* A motion image outside temporal mode is a mistake the user should hear
 * of: INVALID_OPERATION when `motion` is set. */
lull_status lull_filter_motion_needs_temporal(const lull_image* motion, lull_error* err);

/* The defaults of the blend (ATrous's parameters; RT uses them as they are). */
lull_temporal_params lull_filter_temporal_defaults(void);

/* A frame's settings from a type's values: v[temporal] is its "temporal",
 * followed by resetHistory and frame (LULL_TEMPORAL_PARAM_DEFS); v[blend]
 * its temporalAlpha, followed by the rest of LULL_TEMPORAL_BLEND_PARAM_DEFS
 * (blend -1: the defaults). */
lull_filter_temporal lull_filter_temporal_from_values(const double* v, int temporal, int blend);

/* Commit-time checks of temporal mode (temporal.h's lull_temporal_validate). */
lull_status lull_filter_temporal_check(const lull_atrous_images* images, const lull_image* motion,
                                       lull_error* err);

/* One frame: accumulation into the history kept in *state, then the
 * à-trous filter on its result; the history advances only when both
 * succeed. */
lull_status lull_filter_temporal_atrous(lull_backend* backend, lull_filter_state** state,
                                        const lull_filter_temporal* temporal,
                                        const lull_atrous_params* params,
                                        const lull_atrous_images* images, const lull_image* motion,
                                        int schedule, const lull_progress* progress, int async,
                                        lull_error* err);

/* Commit-time checks of Regression's temporal mode, after
 * lull_regression_validate's: one buffer (color, no halves), no variance (the history measures it), depth rather than
 * position (the history is tested by depth), then the accumulation's. */
lull_status lull_filter_temporal_regression_check(const lull_regression_images* images,
                                                  const lull_image* motion, lull_error* err);

/* The same with the Regression filter (one buffer) as the spatial filter:
 * the accumulated colour with the history's variance (where it has none,
 * the filter's own estimate) and the accumulated albedo.  The caller has
 * checked that the backend has the Regression filter. */
lull_status lull_filter_temporal_regression(lull_backend* backend, lull_filter_state** state,
                                            const lull_filter_temporal* temporal,
                                            const lull_regression_params* params,
                                            const lull_regression_images* images,
                                            const lull_image* motion, const lull_progress* progress,
                                            int async, lull_error* err);

/* The type named name, or NULL. */
const lull_filter_type* lull_filter_type_find(const char* name);
/* Index of an image or parameter name in a type, or -1. */
int lull_filter_type_image(const lull_filter_type* type, const char* name);
int lull_filter_type_param(const lull_filter_type* type, const char* name);
/* All registered types, NULL-terminated (for documentation and tools). */
const lull_filter_type* const* lull_filter_types(void);
