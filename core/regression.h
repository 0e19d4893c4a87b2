/* The "Regression" filter: NL-means-weighted first-order regression of the
 * colour on the features (NFOR, Bitterli et al. 2016), from two independent
 * half buffers or from one buffer.  Parameters, images, and the CPU entry;
 * the per-pixel formulas are in regression_math.h, the measurements behind
 * each choice in docs/regression.md.
 *
 * With two halves A and B (two renders of the same samples count with
 * different seeds):
 *
 *   1. fireflies: a pixel of one half far above the other half's 5x5
 *      neighbourhood (lull_reg_firefly_level) is scaled down to that level;
 *   2. features: each half's feature channels are cross-filtered by
 *      NL-means with weights from the other half's (§5.1), when the
 *      features come in halves; features given once are used as they are;
 *   3. each half is regressed with NL-means weights from the other half's
 *      colour (independent of its own noise, so the weights do not follow
 *      it: §5.2) and the other half's features, at two bandwidths k;
 *   4. per pixel and channel, the bandwidth with the smaller two-buffer
 *      error estimate (§5.3), the errors and the choice smoothed by
 *      NL-means;
 *   5. the mean of the two results is regressed once more, self-guided,
 *      over a wider window, its noise from the difference of the two
 *      (§5.4, "second pass").
 *
 * With one buffer, the weights come from a pilot estimate, the a-trous
 * filter's result (guided by the same features), and the noise variance
 * from the colour's residual against it; the one regression runs at the
 * first bandwidth.  Isolated fireflies are scaled down first as above,
 * against the buffer's own 7x7 neighbourhood.
 *
 * The colour is brought to a scale of order 1 first (inputScale, automatic
 * as for ATrous), non-finite values are replaced by the mean of the finite
 * ones around them, sRGB colour is linearised, and the result is scaled
 * back, clamped to [0, 1] for LDR colour.  A fourth colour channel is
 * copied through. */
#pragma once

#include <stddef.h>

#include "image.h"
#include "status.h"

typedef struct lull_regression_params
{
  int radius;            /* window radius R: (2R + 1)^2 pixels (NFOR: 9) */
  int patch_radius;      /* NL-means patch radius F (LULL_REG_PATCH_AUTO: by the input) */
  float bandwidth[2];    /* NL-means k of the two candidates (NFOR: 0.5, 1) */
  int second_radius;     /* window radius of the second pass (0: none) */
  float second_bandwidth;
  float ridge;           /* slopes' ridge, relative to the window's weight */
  int fireflies;         /* scale isolated fireflies down first */
  int hdr;               /* 0: LDR colour in [0, 1], output clamped */
  int srgb;              /* LDR colour is sRGB-encoded */
  int nonnegative;       /* negative colour is read as 0 (RT's sanitisation, as OIDN's) */
  float input_scale;     /* NaN: automatic */
  size_t memory_cap;     /* bytes of working memory (0: no cap) */
} lull_regression_params;

lull_regression_params lull_regression_default_params(void);

/* patch_radius chosen by the input: NFOR's 3 with halves (§5.1: the
 * weights compare noisy halves, whose patches average the noise), 0 with
 * one buffer, whose weights compare the à-trous pilot, already smooth:
 * there a patch only blurs the distance across texture and shading edges
 * (relMSE on the test renders and animation frames: docs/regression.md). */
#define LULL_REG_PATCH_AUTO (-1)


/* Colour and features: each either once or as two halves, or absent. */
typedef struct lull_regression_images
{
  lull_image color, color_a, color_b; /* color, or both halves */
  lull_image albedo, albedo_a, albedo_b;
  lull_image normal, normal_a, normal_b;
  lull_image depth, depth_a, depth_b;
  lull_image position, position_a, position_b; /* used where depth is absent */
  lull_image variance;                         /* optional, one buffer: 1 or 3 channels */
  lull_image output;
  lull_image output_variance; /* optional, halves only: the result's two-buffer variance */
} lull_regression_images;

/* Whether a run has two halves of colour. */
int lull_regression_has_halves(const lull_regression_images* images);

/* The parameters a run uses: automatic values resolved for the images. */
lull_regression_params lull_regression_resolve(const lull_regression_params* params,
                                               const lull_regression_images* images);

lull_status lull_regression_validate(const lull_regression_params* params,
                                     const lull_regression_images* images, lull_error* err);

/* The images' part of the check, shared with RDFC: colour once or in both
 * halves, features once or in both halves (halves only with colour
 * halves), formats and sizes, the output.  variance_with_halves: whether
 * `variance` may come with the halves (RDFC scales it by theirs). */
lull_status lull_regression_validate_images(const lull_regression_images* images,
                                            int variance_with_halves, lull_error* err);

/* The colour mode's part, shared with RDFC: hdr and srgb not both, an
 * inputScale NaN (automatic) or a normal positive finite float. */
lull_status lull_regression_validate_color(int hdr, int srgb, float input_scale, lull_error* err);

/* Pixels on each side of an output pixel that the filter reads (the sum of
 * its steps' reaches): tiles need this margin to match an untiled run. */
int lull_regression_reach(const lull_regression_params* params,
                          const lull_regression_images* images);

/* Bytes of working memory the CPU run needs for a width x height region. */
size_t lull_regression_cpu_memory(const lull_regression_params* params,
                                  const lull_regression_images* images, int width, int height,
                                  int num_threads);

/* The features of one half (b = 0: A, 1: B), as both backends read them:
 * each feature's own half where it comes in halves, else the image given
 * once, which then guides both halves.  Without halves: the images given
 * once.  Position is used where depth is absent. */
typedef struct lull_regression_features
{
  const lull_image *albedo, *normal, *depth, *position;
} lull_regression_features;

lull_regression_features lull_regression_half_features(const lull_regression_images* images,
                                                       int b);

/* Feature channels of a set: albedo 3, normal 3, then depth 1 or position 3. */
int lull_regression_feature_channels(const lull_regression_features* set);

/* Whether the run has halves of colour and at least one feature in halves
 * (then the features are cross-prefiltered, NFOR §5.1). */
int lull_regression_feature_halves(const lull_regression_images* images);

/* Whether feature channel k (in lull_regression_feature_channels' order)
 * is one image given once for both halves: nothing to cross-prefilter. */
int lull_regression_feature_shared(const lull_regression_images* images, int k);

/* Views of the region [x0, x0 + w) x [y0, y0 + h) of every image (absent
 * ones stay absent): a tile of a tiled run. */
lull_regression_images lull_regression_crop(const lull_regression_images* images, int x0, int y0,
                                            int w, int h);

/* Runs the filter on the CPU with OpenMP, in tiles when params->memory_cap
 * asks for it.  Input and output may alias. */
lull_status lull_regression_cpu(const lull_regression_params* params,
                                const lull_regression_images* images, int num_threads,
                                const lull_progress* progress, lull_error* err);
