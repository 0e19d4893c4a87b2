/* The "RHF" filter type: ray histogram fusion (core/rhf.h; Delbracio et
 * al. 2014, as Szeracki et al. §3 describe it).  Images: color (the
 * pixels' means), histogram0 .. histogramB-1 (bin k's sample counts of R,
 * G, B, FLOAT3 or HALF3: one image per bin, numbered from 0 without
 * gaps; a (height, width, bins, 3) array is B views of one buffer at
 * byteOffset 12 k and pixelByteStride 12 B), output.  docs/rhf.md gives
 * the binning a renderer uses. */
#include <string.h>

#include "filter_types.h"

#include "../core/rhf.h"

enum
{
  RH_COLOR = 0,
  RH_HISTOGRAM = 1,
  RH_OUTPUT = RH_HISTOGRAM + LULL_RHF_MAX_BINS,
};

static const char* const rhf_images[] = {
    "color",       "histogram0",  "histogram1",  "histogram2",  "histogram3",  "histogram4",
    "histogram5",  "histogram6",  "histogram7",  "histogram8",  "histogram9",  "histogram10",
    "histogram11", "histogram12", "histogram13", "histogram14", "histogram15", "histogram16",
    "histogram17", "histogram18", "histogram19", "histogram20", "histogram21", "histogram22",
    "histogram23", "histogram24", "histogram25", "histogram26", "histogram27", "histogram28",
    "histogram29", "histogram30", "histogram31", "output",      NULL};

enum
{
  RH_RADIUS, RH_PATCH, RH_THRESHOLD, RH_SCALES, RH_TILE_ALIGNMENT, RH_TILE_OVERLAP, RH_COUNT
};

static const lull_param_def rhf_params[RH_COUNT] = {
    {"searchRadius", LULL_PARAM_INT, 6, 1, LULL_RHF_MAX_RADIUS, 0, 1,
     "b: the search window is (2b + 1)^2 pixels (6: 13 x 13, Szeracki et al. §3.3)", NULL},
    {"patchRadius", LULL_PARAM_INT, 1, 0, LULL_RHF_MAX_PATCH, 0, 1,
     "f: patches of (2f + 1)^2 histograms (1: 3 x 3)", NULL},
    {"threshold", LULL_PARAM_FLOAT, 0.6, 0, 1e6, 0, 1,
     "k: the largest chi^2 distance (mean over the non-empty bins) of similar patches (0.6: "
     "docs/rhf.md)",
     NULL},
    {"scales", LULL_PARAM_INT, 2, 1, LULL_RHF_MAX_SCALES, 0, 1,
     "scales filtered and fused, each half the size of the one before (2)", NULL},
    {"tileAlignment", LULL_PARAM_INT, 0, 0, 0, 1, 0, "tile alignment for manual tiling", NULL},
    {"tileOverlap", LULL_PARAM_INT, 0, 0, 0, 1, 0, "tile overlap for manual tiling", NULL},
};

/* The views; bins is one past the highest histogram given (a gap is
 * reported by lull_rhf_validate). */
static lull_rhf_images rhf_views(const lull_filter_config* config)
{
  lull_rhf_images im;
  memset(&im, 0, sizeof im);
  im.color = config->images[RH_COLOR];
  im.output = config->images[RH_OUTPUT];
  for (int k = 0; k < LULL_RHF_MAX_BINS; ++k) {
    im.histogram[k] = config->images[RH_HISTOGRAM + k];
    if (im.histogram[k].data)
      im.bins = k + 1;
  }
  return im;
}

static lull_rhf_params rhf_from_values(const double* v)
{
  lull_rhf_params p = lull_rhf_default_params();
  p.radius = (int)v[RH_RADIUS];
  p.patch = (int)v[RH_PATCH];
  p.threshold = (float)v[RH_THRESHOLD];
  p.scales = (int)v[RH_SCALES];
  return p;
}

static lull_status rhf_check(const lull_filter_config* config, lull_error* err)
{
  const lull_rhf_images images = rhf_views(config);
  const lull_rhf_params params = rhf_from_values(config->values);
  return lull_rhf_validate(&params, &images, err);
}

static lull_status rhf_execute(lull_backend* backend, const lull_filter_config* config,
                               const lull_progress* progress, int async, lull_error* err)
{
  if (!backend->ops->rhf)
    return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                     "filter 'RHF' is not supported on this device");
  const lull_rhf_images images = rhf_views(config);
  const lull_rhf_params params = rhf_from_values(config->values);
  return backend->ops->rhf(backend, &params, &images, progress, async, err);
}

/* Pixels of overlap manual tiling needs (the filter's reach, rounded up to
 * OIDN's 16-pixel alignment). */
static int rhf_tile_overlap(const lull_filter_config* config)
{
  const lull_rhf_params params = rhf_from_values(config->values);
  return (lull_rhf_reach(&params) + 15) / 16 * 16;
}

const lull_filter_type lull_filter_type_rhf = {
    "RHF", rhf_images, rhf_params, RH_COUNT, rhf_check, rhf_execute, rhf_tile_overlap, 0};
