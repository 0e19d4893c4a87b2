/* The "GradientDomain" filter through the OIDN API, on synthetic data:
 *
 *  - exact data (primal, gradients and both halves equal to the truth) is
 *    returned unchanged: every constraint is then satisfied;
 *  - a constant image stays constant under every candidate;
 *  - noisy halves with features of the truth: every candidate removes most
 *    of the noise, and the automatic choice beats L1 Poisson;
 *  - all-zero features and NaN/Inf in gradients and features give finite
 *    output that still beats the noisy primal;
 *  - images smaller than a patch, down to one pixel, give finite output;
 *  - bad configurations fail at commit with the exact OIDN error codes;
 *  - progress can cancel;
 *  - 1- and 2-channel albedo and normal are read the OIDN way. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

#include "half.h"
#include "oidn_check.h"
#include "synthetic.h"
#include "test_util.h"

enum { W = 64, H = 48 };

static OIDNDevice device;

static float* interleave(float* const planes[3])
{
  float* out = malloc((size_t)W * H * 3 * sizeof(float));
  for (int i = 0; i < W * H; ++i)
    for (int c = 0; c < 3; ++c)
      out[(size_t)i * 3 + c] = planes[c][i];
  return out;
}

typedef struct data
{
  float *ca, *cb, *xa, *xb, *ya, *yb; /* halves */
  float *albedo, *normal, *depth, *truth;
} data;

/* Halves from two synthetic draws of the same truth; features from the
 * truth's structure (the albedo is the truth's colour, the depth a ramp,
 * the normal constant). */
static void data_init(data* d, float sigma_p, float sigma_g)
{
  synthetic a, b;
  synthetic_init(&a, W, H, sigma_p, sigma_g, 41u);
  synthetic_init(&b, W, H, sigma_p, sigma_g, 42u);
  d->ca = interleave(a.b);
  d->cb = interleave(b.b);
  d->xa = interleave(a.gx);
  d->xb = interleave(b.gx);
  d->ya = interleave(a.gy);
  d->yb = interleave(b.gy);
  d->truth = interleave(a.truth);
  d->albedo = malloc((size_t)W * H * 3 * sizeof(float));
  d->normal = malloc((size_t)W * H * 3 * sizeof(float));
  d->depth = malloc((size_t)W * H * sizeof(float));
  for (int i = 0; i < W * H; ++i) {
    for (int c = 0; c < 3; ++c) {
      d->albedo[3 * i + c] = d->truth[3 * i + c] / 4.0f;
      d->normal[3 * i + c] = c == 2 ? 1.0f : 0.0f;
    }
    d->depth[i] = 1.0f + 0.01f * (float)(i / W);
  }
  synthetic_free(&a);
  synthetic_free(&b);
}

static void data_free(data* d)
{
  float* all[] = {d->ca, d->cb, d->xa, d->xb, d->ya, d->yb, d->albedo, d->normal, d->depth, d->truth};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    free(all[i]);
}

static OIDNFilter new_filter(const char* type, const data* d, float* output)
{
  OIDNFilter f = oidnNewFilter(device, type);
  oidn_share(f, "colorA", d->ca, 3, W, H);
  oidn_share(f, "colorB", d->cb, 3, W, H);
  oidn_share(f, "gradientXA", d->xa, 3, W, H);
  oidn_share(f, "gradientXB", d->xb, 3, W, H);
  oidn_share(f, "gradientYA", d->ya, 3, W, H);
  oidn_share(f, "gradientYB", d->yb, 3, W, H);
  oidn_share(f, "output", output, 3, W, H);
  if (strcmp(type, "GradientDomain") == 0) {
    oidn_share(f, "albedo", d->albedo, 3, W, H);
    oidn_share(f, "normal", d->normal, 3, W, H);
    oidn_share(f, "depth", d->depth, 1, W, H);
  }
  return f;
}

static double rmse(const float* a, const float* b)
{
  double s = 0.0;
  for (int i = 0; i < W * H * 3; ++i)
    s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
  return sqrt(s / (W * H * 3));
}

static void test_exact(void)
{
  data d;
  data_init(&d, 0.0f, 0.0f);
  float* out = calloc((size_t)W * H * 3, sizeof(float));
  OIDNFilter f = new_filter("GradientDomain", &d, out);
  oidnSetFilterFloat(f, "cgTolerance", 1e-6f);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "exact data");
  const double d_max = lull_test_max_abs_diff(out, d.truth, (size_t)W * H * 3);
  if (!(d_max < 1e-3))
    fprintf(stderr, "exact data: max difference %g\n", d_max);
  CHECK(d_max < 1e-3);
  oidnReleaseFilter(f);
  free(out);
  data_free(&d);
}

/* A constant image (zero gradients, halves 0.5 +- e whose mean is exactly
 * 0.5) stays constant under every candidate, with random features: the
 * constant lies in every patch subspace (lull_gd_feature_basis).  The
 * truncated SVD used to drop a direction with a part along the constant:
 * +-0.5% without features, +-9% with a random albedo. */
static void test_constant(void)
{
  const size_t n = (size_t)W * H * 3;
  float* half[2] = {malloc(n * sizeof(float)), malloc(n * sizeof(float))};
  float* zero = calloc(n, sizeof(float));
  float* albedo = malloc(n * sizeof(float));
  float* out = malloc(n * sizeof(float));
  unsigned rng = 77u;
  for (size_t i = 0; i < n; ++i) {
    const float e = 0.05f * (lull_test_random(&rng) - 0.5f);
    half[0][i] = 0.5f + e;
    half[1][i] = 0.5f - e;
    albedo[i] = lull_test_random(&rng);
  }
  for (int candidate = -1; candidate <= 2; ++candidate) {
    OIDNFilter f = oidnNewFilter(device, "GradientDomain");
    oidn_share(f, "colorA", half[0], 3, W, H);
    oidn_share(f, "colorB", half[1], 3, W, H);
    static const char* const gradients[] = {"gradientXA", "gradientXB", "gradientYA",
                                            "gradientYB"};
    for (int g = 0; g < 4; ++g)
      oidn_share(f, gradients[g], zero, 3, W, H);
    oidn_share(f, "albedo", albedo, 3, W, H);
    oidn_share(f, "output", out, 3, W, H);
    oidnSetFilterInt(f, "candidate", candidate);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    EXPECT_OIDN(device, OIDN_ERROR_NONE, "constant image");
    double worst = 0.0;
    for (size_t i = 0; i < n; ++i)
      worst = fmax(worst, fabs((double)out[i] - 0.5));
    if (!(worst < 1e-5))
      fprintf(stderr, "constant image, candidate %d: off by up to %g\n", candidate, worst);
    CHECK(worst < 1e-5);
    oidnReleaseFilter(f);
  }
  free(half[0]);
  free(half[1]);
  free(zero);
  free(albedo);
  free(out);
}

static void test_denoises(void)
{
  data d;
  data_init(&d, 0.3f, 0.03f);
  float* noisy = malloc((size_t)W * H * 3 * sizeof(float));
  for (int i = 0; i < W * H * 3; ++i)
    noisy[i] = 0.5f * (d.ca[i] + d.cb[i]);
  float* out = calloc((size_t)W * H * 3, sizeof(float));
  OIDNFilter f = new_filter("Poisson", &d, out);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "L1 Poisson");
  const double e_noisy = rmse(noisy, d.truth), e_l1 = rmse(out, d.truth);
  oidnReleaseFilter(f);
  for (int candidate = -1; candidate < 3; ++candidate) {
    f = new_filter("GradientDomain", &d, out);
    oidnSetFilterInt(f, "candidate", candidate);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    EXPECT_OIDN(device, OIDN_ERROR_NONE, "GradientDomain");
    const double e = rmse(out, d.truth);
    fprintf(stderr, "RMSE noisy %.4f, L1 %.4f, GradientDomain (candidate %d) %.4f\n", e_noisy,
            e_l1, candidate, e);
    /* every candidate removes most of the noise; the automatic choice
     * beats L1 (measured: 0.88 of L1's RMSE; the strong candidates 0.87,
     * the weak one equals L1) */
    CHECK(e < 0.15 * e_noisy);
    CHECK(e < (candidate == 0 ? 1.1 : 0.93) * e_l1);
    oidnReleaseFilter(f);
  }

  /* all-zero features: only the colour weights act */
  memset(d.albedo, 0, (size_t)W * H * 3 * sizeof(float));
  memset(d.normal, 0, (size_t)W * H * 3 * sizeof(float));
  memset(d.depth, 0, (size_t)W * H * sizeof(float));
  f = new_filter("GradientDomain", &d, out);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "zero features");
  CHECK(lull_test_all_finite(out, (size_t)W * H * 3));
  CHECK(rmse(out, d.truth) < e_noisy);
  oidnReleaseFilter(f);

  /* NaN and Inf in gradients and features */
  d.xa[3 * 100] = NAN;
  d.yb[3 * 200 + 1] = INFINITY;
  d.albedo[3 * 300] = NAN;
  d.depth[400] = -INFINITY;
  d.cb[3 * 500 + 2] = NAN;
  f = new_filter("GradientDomain", &d, out);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "non-finite input");
  CHECK(lull_test_all_finite(out, (size_t)W * H * 3));
  CHECK(rmse(out, d.truth) < e_noisy);
  oidnReleaseFilter(f);
  free(noisy);
  free(out);
  data_free(&d);
}

static bool cancel(void* user, double done)
{
  (void)user;
  return done < 0.3;
}

/* cancels at the last report only */
static bool cancel_at_end(void* user, double done)
{
  (void)user;
  return done < 1.0;
}

static void test_errors(void)
{
  data d;
  data_init(&d, 0.1f, 0.01f);
  float* out = calloc((size_t)W * H * 3, sizeof(float));
  float* big = calloc((size_t)(W + 2) * H * 3, sizeof(float));
  OIDNFilter f = oidnNewFilter(device, "GradientDomain");
  /* full buffers only: the halves are required */
  oidn_share(f, "color", d.ca, 3, W, H);
  oidn_share(f, "gradientX", d.xa, 3, W, H);
  oidn_share(f, "gradientY", d.ya, 3, W, H);
  oidn_share(f, "output", out, 3, W, H);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "no halves");
  oidnReleaseFilter(f);

  f = new_filter("GradientDomain", &d, out);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "valid");
  oidn_share(f, "albedo", big, 3, W + 2, H);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "feature size");
  oidn_share(f, "albedo", d.albedo, 3, W, H);
  oidn_share(f, "position", d.albedo, 2, W, H); /* position has no narrow reading */
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "position channels");
  oidnUnsetFilterImage(f, "position");
  oidn_share(f, "featureVariance", d.depth, 1, W, H);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "featureVariance channels");
  oidnUnsetFilterImage(f, "featureVariance");
  oidnUnsetFilterImage(f, "gradientYB");
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "missing half");
  oidn_share(f, "gradientYB", d.yb, 3, W, H);
  oidnSetFilterInt(f, "candidate", 3);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_ARGUMENT, "candidate 3");
  oidnSetFilterInt(f, "candidate", -1);
  oidnSetFilterFloat(f, "alpha", 0.0f);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_ARGUMENT, "alpha 0");
  oidnSetFilterFloat(f, "alpha", 0.5f);
  oidnSetFilterInt(f, "cgIterations", 0);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_ARGUMENT, "cgIterations 0");
  oidnSetFilterInt(f, "cgIterations", 100);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "valid again");
  oidnSetFilterProgressMonitorFunction(f, cancel, NULL);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_CANCELLED, "cancelled");
  /* a cancel at the last report leaves the output as it was, as Poisson's
   * does (it had been written, and the call still said cancelled) */
  for (int i = 0; i < W * H * 3; ++i)
    out[i] = -5.0f;
  oidnSetFilterProgressMonitorFunction(f, cancel_at_end, NULL);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_CANCELLED, "cancelled at the end");
  CHECK(out[0] == -5.0f && out[W * H * 3 - 1] == -5.0f);
  oidnReleaseFilter(f);
  free(out);
  free(big);
  data_free(&d);
}

/* Runs GradientDomain on d's halves with the given albedo and normal. */
static float* run_guides(const data* d, const void* albedo, OIDNFormat albedo_format,
                         const void* normal, OIDNFormat normal_format)
{
  float* out = calloc((size_t)W * H * 3, sizeof(float));
  OIDNFilter f = new_filter("GradientDomain", d, out);
  oidnSetSharedFilterImage(f, "albedo", (void*)albedo, albedo_format, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "normal", (void*)normal, normal_format, W, H, 0, 0, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "GradientDomain guides");
  oidnReleaseFilter(f);
  return out;
}

/* Albedo and normal of 1 and 2 channels, float and half, read as OIDN
 * 2.1+ reads them (v as (v, v, v), (x, y) as (x, y, y)) and as RT and
 * ATrous read them: bit for bit the result of the expanded images, and
 * not that of the images padded with zeros. */
static void test_narrow_guides(void)
{
  data d;
  data_init(&d, 0.2f, 0.02f);
  const size_t n = (size_t)W * H;
  float* albedo1 = malloc(n * sizeof(float));
  float* normal2 = malloc(2 * n * sizeof(float));
  uint16_t* albedo1_half = malloc(n * sizeof(uint16_t));
  uint16_t* normal2_half = malloc(2 * n * sizeof(uint16_t));
  float* albedo3 = calloc(3 * n, sizeof(float));
  float* normal3 = calloc(3 * n, sizeof(float));
  float* albedo0 = calloc(3 * n, sizeof(float));
  float* normal0 = calloc(3 * n, sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    /* values a half holds exactly, so the half and float runs agree */
    albedo1[i] = lull_half_to_float(lull_float_to_half(d.albedo[3 * i + 1]));
    const float x = (int)(i % W) > W / 2 ? 0.6f : -0.6f;
    normal2[2 * i] = x;
    normal2[2 * i + 1] = 0.8f;
    albedo1_half[i] = lull_float_to_half(albedo1[i]);
    normal2_half[2 * i] = lull_float_to_half(x);
    normal2_half[2 * i + 1] = lull_float_to_half(0.8f);
    albedo3[3 * i] = albedo3[3 * i + 1] = albedo3[3 * i + 2] = albedo0[3 * i] = albedo1[i];
    normal3[3 * i] = normal0[3 * i] = x;
    normal3[3 * i + 1] = normal3[3 * i + 2] = normal0[3 * i + 1] = 0.8f;
  }
  float* expanded = run_guides(&d, albedo3, OIDN_FORMAT_FLOAT3, normal3, OIDN_FORMAT_FLOAT3);
  float* padded = run_guides(&d, albedo0, OIDN_FORMAT_FLOAT3, normal0, OIDN_FORMAT_FLOAT3);
  float* narrow = run_guides(&d, albedo1, OIDN_FORMAT_FLOAT, normal2, OIDN_FORMAT_FLOAT2);
  float* narrow_half =
      run_guides(&d, albedo1_half, OIDN_FORMAT_HALF, normal2_half, OIDN_FORMAT_HALF2);
  CHECK(lull_test_max_abs_diff(narrow, expanded, 3 * n) == 0.0);
  CHECK(lull_test_max_abs_diff(narrow_half, expanded, 3 * n) == 0.0);
  const double padded_diff = lull_test_max_abs_diff(padded, expanded, 3 * n);
  if (!(padded_diff > 1e-3))
    fprintf(stderr, "narrow guides: zero-padded guides only %g from the expanded\n", padded_diff);
  CHECK(padded_diff > 1e-3);
  float* all[] = {narrow_half, narrow, padded, expanded, normal0, albedo0, normal3, albedo3};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    free(all[i]);
  free(normal2_half);
  free(albedo1_half);
  free(normal2);
  free(albedo1);
  data_free(&d);
}

/* Images smaller than a patch, a single pixel included: finite output. */
static void test_tiny(void)
{
  const int sizes[][2] = {{1, 1}, {2, 1}, {1, 3}, {3, 2}, {6, 5}};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    const int w = sizes[k][0], h = sizes[k][1];
    const size_t n = (size_t)w * h * 3;
    float* img[8];
    unsigned rng = 77u;
    for (int i = 0; i < 8; ++i) {
      img[i] = malloc(n * sizeof(float));
      for (size_t j = 0; j < n; ++j)
        img[i][j] = i < 2 ? 0.5f + 0.1f * lull_test_random(&rng) : 0.01f * lull_test_random(&rng);
    }
    OIDNFilter f = oidnNewFilter(device, "GradientDomain");
    const char* names[] = {"colorA", "colorB", "gradientXA", "gradientXB", "gradientYA",
                           "gradientYB", "albedo", "output"};
    for (int i = 0; i < 8; ++i)
      oidn_share(f, names[i], img[i], 3, w, h);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    EXPECT_OIDN(device, OIDN_ERROR_NONE, "tiny image");
    CHECK(lull_test_all_finite(img[7], n));
    oidnReleaseFilter(f);
    for (int i = 0; i < 8; ++i)
      free(img[i]);
  }
}

int main(void)
{
  device = oidn_cpu_device();
  test_tiny();
  test_exact();
  test_constant();
  test_denoises();
  test_errors();
  test_narrow_guides();
  oidnReleaseDevice(device);
  return lull_test_result("gradient_domain_api");
}
