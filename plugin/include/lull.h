/* lull's additions to the Open Image Denoise API.
 *
 * Everything lull does is reachable through OIDN's functions (oidn.h):
 * lull's filters are more filter types and parameters.  This header names
 * them, and adds functions to list filter types and their parameters (for
 * tools, bindings and documentation). */
#pragma once

#include <OpenImageDenoise/oidn.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* -- filter types (oidnNewFilter) -------------------------------------------
 *
 * "RT", "RTLightmap"  OIDN's names, mapped onto lull's classical filters.
 * "ATrous"            edge-avoiding à-trous wavelet filter (Dammertz 2010),
 *                     images color, output, albedo, normal, depth, position,
 *                     variance, motion; parameters below.  With "temporal"
 *                     (ATrous, RT, Regression) the filter keeps a history
 *                     between executions: frames accumulate, reprojected by the
 *                     motion image (Blender's Vector pass), before the
 *                     spatial filter; "resetHistory" at a cut, "frame" to
 *                     have the order checked (docs/temporal.md).
 * "Gaussian"          plain Gaussian blur, images color, output, float sigma.
 * "Poisson"           gradient-domain reconstruction (screened Poisson, L2 or
 *                     L1 by IRLS): images color (the primal), gradientX,
 *                     gradientY, output, optional half-buffers colorA/colorB,
 *                     gradientXA/XB, gradientYA/YB and outputVariance.
 * "GradientDomain"    Vicini 2015 ch. 5 feature-patch reconstruction: the
 *                     Poisson images (half-buffers required) plus albedo,
 *                     normal, depth or position, featureVariance.
 * "Regression"        NL-means-weighted first-order regression on the
 *                     features (NFOR, Bitterli 2016): images colorA +
 *                     colorB (two halves of a render) or color, albedo,
 *                     normal, depth or position (once or as A/B halves),
 *                     variance, output, outputVariance, motion (temporal
 *                     mode, one buffer).  RT's quality HIGH runs it.
 * "RDFC"              Rousselle, Manzi and Zwicker 2013 (Vicini 2015 ch. 3):
 *                     Regression's images, a variance required with one
 *                     buffer (docs/rdfc.md).
 * "DDID"              dual-domain image denoising (Vicini 2015 ch. 4), the
 *                     same images without outputVariance (docs/ddid.md).
 * "RHF"               ray histogram fusion: images color, histogram0 ..
 *                     histogramB-1 (bin k's sample counts of R, G, B; one
 *                     (H, W, B, 3) array is B views at byteOffset 12 k,
 *                     pixelByteStride 12 B), output (docs/rhf.md).
 * `lull filters NAME` or lullGetFilterParamInfo list every parameter. */
#define LULL_FILTER_RT "RT"
#define LULL_FILTER_RTLIGHTMAP "RTLightmap"
#define LULL_FILTER_ATROUS "ATrous"
#define LULL_FILTER_GAUSSIAN "Gaussian"
#define LULL_FILTER_POISSON "Poisson"
#define LULL_FILTER_GRADIENT_DOMAIN "GradientDomain"
#define LULL_FILTER_REGRESSION "Regression"
#define LULL_FILTER_RDFC "RDFC"
#define LULL_FILTER_DDID "DDID"
#define LULL_FILTER_RHF "RHF"

/* Values of the Poisson int parameter "norm". */
#define LULL_NORM_L1 1 /* IRLS, robust to gradient outliers (default) */
#define LULL_NORM_L2 2 /* least squares, unbiased */

/* Values of the Poisson int parameter "solver" (L2 and IRLS's first step). */
#define LULL_SOLVER_DCT 0 /* exact, by the discrete cosine transform (default) */
#define LULL_SOLVER_CG 1  /* conjugate gradients from the primal */

/* Values of the Poisson int parameter "preconditioner" (weighted solves). */
#define LULL_PRECONDITIONER_NONE 0
#define LULL_PRECONDITIONER_JACOBI 1 /* default */
#define LULL_PRECONDITIONER_DCT 2    /* DCT solve of the mean-weight operator */

/* Values of the GradientDomain int parameter "candidate": LULL_CANDIDATE_AUTO
 * chooses among the three candidates per pixel, by the error estimated from
 * the half-buffers, then post-filters the result (README, "Gradient-domain
 * reconstruction"); 0, 1 or 2 gives that candidate alone, unfiltered. */
#define LULL_CANDIDATE_AUTO -1

/* Values of the ATrous int parameter "colorMode". */
#define LULL_COLOR_MODE_FIXED 0    /* Dammertz: sigmaColor, halved per level */
#define LULL_COLOR_MODE_VARIANCE 1 /* SVGF: sigmaLuminance standard deviations */

/* Values of the ATrous int parameter "schedule" (CUDA device). */
#define LULL_SCHEDULE_AUTO -1     /* the faster, as measured */
#define LULL_SCHEDULE_BASELINE 0  /* one kernel per level, dilated taps */
#define LULL_SCHEDULE_PERMUTED 1  /* Dolp et al. 2024: undilated taps on permuted subimages */

/* -- introspection ---------------------------------------------------------- */

/* lull's own version, e.g. "0.1.0" (the OIDN API level is OIDN_VERSION). */
OIDN_API const char* lullGetVersionString(void);

/* Filter types: count, and the name of type i (NULL when out of range). */
OIDN_API int lullGetFilterTypeCount(void);
OIDN_API const char* lullGetFilterTypeName(int index);

typedef enum
{
  LULL_PARAM_TYPE_BOOL = 0,
  LULL_PARAM_TYPE_INT = 1,
  LULL_PARAM_TYPE_FLOAT = 2,
} LullParamType;

typedef struct LullParamInfo
{
  const char* name;
  LullParamType type;
  double defaultValue; /* NaN means "automatic" */
  double minValue, maxValue;
  bool readOnly;
  const char* description;
} LullParamInfo;

/* Parameters of a filter type (-1 for an unknown type) and their details;
 * returns false for an unknown type or index. */
OIDN_API int lullGetFilterParamCount(const char* filterType);
OIDN_API bool lullGetFilterParamInfo(const char* filterType, int index, LullParamInfo* info);

/* Image names a filter type accepts: count (-1 for an unknown type), name. */
OIDN_API int lullGetFilterImageCount(const char* filterType);
OIDN_API const char* lullGetFilterImageName(const char* filterType, int index);

#if defined(__cplusplus)
}
#endif
