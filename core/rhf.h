/* The "RHF" filter: ray histogram fusion (Delbracio, Musé, Buades,
 * Chauvier, Phelps and Morel 2014, "Boosting Monte Carlo Rendering by Ray
 * Histogram Fusion"), as Szeracki, Roth, Hinckenjann and Li describe it
 * (§3).  Parameters, images and the CPU entry; the per-pixel formulas are
 * in rhf_math.h, the histograms' layout and the measurements in
 * docs/rhf.md.
 *
 * Each pixel comes with a histogram of its samples' values: B bins per
 * colour channel, each sample's value tone-compressed and spread over the
 * two nearest bins (lull_rhf_bin).  A run, at each of `scales` scales
 * (the finest first: the input; each coarser one 2 x 2 blocks of the one
 * before, histograms summed, colours averaged):
 *   1. for every pixel p and every q in its search window (radius b),
 *      the chi^2 distance of the patches (radius f) of histograms around p
 *      and q (lull_rhf_chi2, the mean over the non-empty bins);
 *   2. q is similar to p when the distance is at most k;
 *   3. every similar pair contributes its whole patch: each pixel x of p's
 *      patch gets the colour at the same place of q's patch; the result at
 *      x is the mean of all it got (patch-wise aggregation);
 * then the scales are fused from the coarsest: a scale's result keeps its
 * own detail, result - up(down(result)), over the coarser fused result
 * brought up, up(coarser) (lull_rhf_up, lull_rhf_down).  The colour is
 * the pixels' means as the renderer wrote them; only the histograms
 * decide which pixels are averaged. */
#pragma once

#include <stddef.h>

#include "image.h"
#include "poisson_solver.h"
#include "rhf_math.h"
#include "status.h"

typedef struct lull_rhf_params
{
  int radius;      /* b: the search window is (2b + 1)^2 (6: 13 x 13, Szeracki §3.3) */
  int patch;       /* f: patches of (2f + 1)^2 (1: 3 x 3) */
  float threshold; /* k: the largest chi^2 distance of similar patches (0.6) */
  int scales;      /* 1 .. LULL_RHF_MAX_SCALES (2) */
} lull_rhf_params;

typedef struct lull_rhf_images
{
  lull_image color;                              /* the pixels' means (3 or 4 channels) */
  lull_image histogram[LULL_RHF_MAX_BINS];       /* bin k's counts of R, G, B */
  int bins;                                      /* how many are given: 0 .. */
  lull_image output;
} lull_rhf_images;

lull_rhf_params lull_rhf_default_params(void);

lull_status lull_rhf_validate(const lull_rhf_params* params, const lull_rhf_images* images,
                              lull_error* err);

/* Pixels on each side of an output pixel that the filter reads (at the
 * finest scale: the coarser ones reach further). */
int lull_rhf_reach(const lull_rhf_params* params);

/* A run's working memory: each scale's planes (lull_rhf_scale), then the
 * distances' planes of the finest scale (t, z, rt, rz) and the masks (one
 * bit per pixel and window offset).  lull_rhf_layout places them from
 * base (NULL: only counts) and returns the bytes. */
typedef struct lull_rhf_layout
{
  lull_rhf_scale scales[LULL_RHF_MAX_SCALES];
  int count;
  float *t, *z, *rt, *rz;
  uint32_t* mask;
  int words;
} lull_rhf_layout;

size_t lull_rhf_layout_at(const lull_rhf_params* params, int width, int height, int bins,
                          void* base, lull_rhf_layout* out);

/* What a backend gives the run: one per-pixel step over its grid
 * (lull_rhf_step_at at every (x, y) of step->width x step->height). */
typedef struct lull_rhf_ops
{
  void* ctx;
  lull_status (*pixels)(void* ctx, const lull_rhf_step* step, lull_error* err);
  /* waits for the steps queued (before a progress report; NULL: they run
   * at once) */
  lull_status (*wait)(void* ctx, lull_error* err);
} lull_rhf_ops;

/* The run of rhf.h on loaded planes (the finest scale's u and hist),
 * the same on every backend (rhf_schedule.c): the pyramid, each scale's
 * distances offset by offset, the aggregation, the fusion; the result in
 * layout->scales[0].r.  Progress by the pixels filtered. */
lull_status lull_rhf_run(const lull_rhf_ops* ops, const lull_rhf_params* params, int bins,
                         const lull_rhf_layout* layout, const lull_progress* progress,
                         lull_error* err);

/* Bytes of working memory the CPU run needs for width x height pixels and
 * `bins` bins. */
size_t lull_rhf_cpu_memory(const lull_rhf_params* params, int width, int height, int bins);

/* Runs the filter on the CPU with OpenMP. */
lull_status lull_rhf_cpu(const lull_rhf_params* params, const lull_rhf_images* images,
                         int num_threads, const lull_progress* progress, lull_error* err);
