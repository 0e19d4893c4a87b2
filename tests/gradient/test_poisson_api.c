/* The "Poisson" filter through the OIDN API:
 *
 *  - it returns what the core solver returns on the same data (L2 by DCT,
 *    L1), for packed float, strided half and in-place images;
 *  - half-buffers alone give the solve of their mean, and outputVariance is
 *    (x_A - x_B)^2 / 4 of separate solves of the halves;
 *  - a 4th colour channel is copied through;
 *  - NaN/Inf colour and gradients give finite output;
 *  - bad configurations fail at commit with the exact OIDN error codes;
 *  - progress can cancel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

#include "half.h"
#include "oidn_check.h"
#include "poisson.h"
#include "poisson_solver.h"
#include "synthetic.h"
#include "test_util.h"

enum { W = 45, H = 37 };

static OIDNDevice device;

/* Interleaves planes into a packed image of `channels` (extra channels 0.7). */
static float* interleave(float* const planes[3], int channels)
{
  float* out = malloc((size_t)W * H * (size_t)channels * sizeof(float));
  for (int i = 0; i < W * H; ++i)
    for (int c = 0; c < channels; ++c)
      out[(size_t)i * channels + c] = c < 3 ? planes[c][i] : 0.7f;
  return out;
}

/* The core solve of s with params p (from the primal), interleaved RGB. */
static float* core_solve(synthetic* s, const lull_poisson_params* p)
{
  lull_error err = {LULL_OK, ""};
  lull_poisson_system sys = synthetic_system(s, p->alpha);
  synthetic_start(s);
  CHECK_EQ_INT(lull_poisson_solve(p, &sys, s->x, &s->dct, NULL, NULL, &err), LULL_OK);
  return interleave(s->x, 3);
}

static OIDNFilter new_poisson(float* color, float* gx, float* gy, float* output)
{
  OIDNFilter f = oidnNewFilter(device, "Poisson");
  if (color)
    oidn_share(f, "color", color, 3, W, H);
  if (gx)
    oidn_share(f, "gradientX", gx, 3, W, H);
  if (gy)
    oidn_share(f, "gradientY", gy, 3, W, H);
  if (output)
    oidn_share(f, "output", output, 3, W, H);
  return f;
}

static void test_matches_core(void)
{
  synthetic s;
  synthetic_init(&s, W, H, 0.2f, 0.03f, 11u);
  float* color = interleave(s.b, 3);
  float* gx = interleave(s.gx, 3);
  float* gy = interleave(s.gy, 3);
  float* output = calloc((size_t)W * H * 3, sizeof(float));
  for (int norm = 1; norm <= 2; ++norm) {
    lull_poisson_params p = lull_poisson_default_params();
    p.norm = norm;
    float* expected = core_solve(&s, &p);
    OIDNFilter f = new_poisson(color, gx, gy, output);
    oidnSetFilterInt(f, "norm", norm);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    EXPECT_OIDN(device, OIDN_ERROR_NONE, "execute");
    const double d = lull_test_max_abs_diff(output, expected, (size_t)W * H * 3);
    if (!(d < 1e-5))
      fprintf(stderr, "norm %d: API vs core %g\n", norm, d);
    CHECK(d < 1e-5);

    /* in place: the output is the colour buffer */
    float* inplace = interleave(s.b, 3);
    oidn_share(f, "output", inplace, 3, W, H);
    oidn_share(f, "color", inplace, 3, W, H);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    EXPECT_OIDN(device, OIDN_ERROR_NONE, "in place");
    CHECK(lull_test_max_abs_diff(inplace, expected, (size_t)W * H * 3) < 1e-5);
    free(inplace);
    oidnReleaseFilter(f);
    free(expected);
  }

  /* half colour with a padded pixel stride, FLOAT4 output: alpha copied */
  lull_poisson_params p = lull_poisson_default_params();
  unsigned short* half = malloc((size_t)W * H * 4 * sizeof(unsigned short));
  for (int i = 0; i < W * H; ++i)
    for (int c = 0; c < 4; ++c) {
      /* the colour rounded to half, and what the core sees */
      const float v = c < 3 ? s.b[c][i] : 0.25f;
      half[(size_t)i * 4 + c] = lull_float_to_half(v);
      if (c < 3)
        s.b[c][i] = lull_half_to_float(half[(size_t)i * 4 + c]);
    }
  float* expected = core_solve(&s, &p);
  float* out4 = calloc((size_t)W * H * 4, sizeof(float));
  OIDNFilter f = new_poisson(NULL, gx, gy, NULL);
  oidnSetSharedFilterImage(f, "color", half, OIDN_FORMAT_HALF4, W, H, 0, 8, 0);
  oidn_share(f, "output", out4, 4, W, H);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "half colour");
  double worst = 0.0;
  int alpha_ok = 1;
  for (int i = 0; i < W * H; ++i) {
    for (int c = 0; c < 3; ++c)
      worst = fmax(worst, fabs(out4[(size_t)i * 4 + c] - expected[(size_t)i * 3 + c]));
    alpha_ok &= out4[(size_t)i * 4 + 3] == 0.25f;
  }
  CHECK(worst < 1e-5);
  CHECK(alpha_ok);
  oidnReleaseFilter(f);
  free(out4);
  free(half);
  free(expected);
  free(color);
  free(gx);
  free(gy);
  free(output);
  synthetic_free(&s);
}

/* Half-buffers: the output solves their mean; the variance output is the
 * two-buffer variance of separate solves of A and B. */
static void test_halves(void)
{
  synthetic a, b;
  synthetic_init(&a, W, H, 0.3f, 0.05f, 21u);
  synthetic_init(&b, W, H, 0.3f, 0.05f, 22u);
  float* ca = interleave(a.b, 3);
  float* cb = interleave(b.b, 3);
  float* xa = interleave(a.gx, 3);
  float* xb = interleave(b.gx, 3);
  float* ya = interleave(a.gy, 3);
  float* yb = interleave(b.gy, 3);
  float* output = calloc((size_t)W * H * 3, sizeof(float));
  float* variance = calloc((size_t)W * H * 3, sizeof(float));
  float* variance1 = calloc((size_t)W * H, sizeof(float));

  lull_poisson_params p = lull_poisson_default_params();
  float* sa = core_solve(&a, &p);
  float* sb = core_solve(&b, &p);

  OIDNFilter f = oidnNewFilter(device, "Poisson");
  oidn_share(f, "colorA", ca, 3, W, H);
  oidn_share(f, "colorB", cb, 3, W, H);
  oidn_share(f, "gradientXA", xa, 3, W, H);
  oidn_share(f, "gradientXB", xb, 3, W, H);
  oidn_share(f, "gradientYA", ya, 3, W, H);
  oidn_share(f, "gradientYB", yb, 3, W, H);
  oidn_share(f, "output", output, 3, W, H);
  oidn_share(f, "outputVariance", variance, 3, W, H);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "halves");
  double worst = 0.0;
  for (int i = 0; i < W * H * 3; ++i) {
    const double d = sa[i] - sb[i];
    worst = fmax(worst, fabs(variance[i] - 0.25 * d * d));
  }
  CHECK(worst < 1e-5);

  /* the mean of the halves, solved */
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < W * H; ++i) {
      a.b[c][i] = 0.5f * (a.b[c][i] + b.b[c][i]);
      a.gx[c][i] = 0.5f * (a.gx[c][i] + b.gx[c][i]);
      a.gy[c][i] = 0.5f * (a.gy[c][i] + b.gy[c][i]);
    }
  float* mean = core_solve(&a, &p);
  CHECK(lull_test_max_abs_diff(output, mean, (size_t)W * H * 3) < 1e-5);

  /* a one-channel variance is the mean over the channels */
  oidn_share(f, "outputVariance", variance1, 1, W, H);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "1-channel variance");
  worst = 0.0;
  for (int i = 0; i < W * H; ++i) {
    const double m = (variance[3 * i] + variance[3 * i + 1] + variance[3 * i + 2]) / 3.0;
    worst = fmax(worst, fabs(variance1[i] - m));
  }
  CHECK(worst < 1e-6);

  /* halves far apart (one firefly of 1e25): the variance stays finite, in
   * both layouts (the difference's square overflowed, and the firefly's
   * spread made every pixel's variance inf) */
  ca[3 * (5 * W + 5)] = 1e25f;
  for (int k = 0; k < 2; ++k) {
    oidn_share(f, "outputVariance", k ? variance1 : variance, k ? 1 : 3, W, H);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    EXPECT_OIDN(device, OIDN_ERROR_NONE, "a firefly");
    const int finite = lull_test_all_finite(k ? variance1 : variance, (size_t)W * H * (k ? 1 : 3));
    if (!finite)
      fprintf(stderr, "a firefly of 1e25: %d-channel outputVariance not finite\n", k ? 1 : 3);
    CHECK(finite);
    CHECK(lull_test_all_finite(output, (size_t)W * H * 3));
  }

  /* halves near FLT_MAX are finite: their mean too (it overflowed to inf,
   * which counted as missing, and the output came out 0) */
  for (int i = 0; i < W * H * 3; ++i) {
    ca[i] = cb[i] = 3e38f;
    xa[i] = xb[i] = ya[i] = yb[i] = 0.0f;
  }
  oidnUnsetFilterImage(f, "outputVariance");
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "halves near FLT_MAX");
  worst = 0.0;
  for (int i = 0; i < W * H * 3; ++i)
    worst = fmax(worst, isfinite(output[i]) ? fabs(output[i] / 3e38 - 1.0) : INFINITY);
  CHECK(worst < 1e-5);
  oidnReleaseFilter(f);
  free(ca);
  free(cb);
  free(xa);
  free(xb);
  free(ya);
  free(yb);
  free(output);
  free(variance);
  free(variance1);
  free(sa);
  free(sb);
  free(mean);
  synthetic_free(&a);
  synthetic_free(&b);
}

static void test_non_finite(void)
{
  synthetic s;
  synthetic_init(&s, W, H, 0.1f, 0.02f, 31u);
  float* color = interleave(s.b, 3);
  float* gx = interleave(s.gx, 3);
  float* gy = interleave(s.gy, 3);
  float* output = calloc((size_t)W * H * 3, sizeof(float));
  const int bad = 10 * W + 10;
  color[3 * bad] = NAN;
  color[3 * bad + 4] = INFINITY;
  gx[3 * (bad + 40)] = NAN;
  gx[3 * (bad + 41) + 1] = -INFINITY;
  gy[3 * (bad + 80) + 2] = NAN;
  for (int norm = 1; norm <= 2; ++norm) {
    OIDNFilter f = new_poisson(color, gx, gy, output);
    oidnSetFilterInt(f, "norm", norm);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    EXPECT_OIDN(device, OIDN_ERROR_NONE, "non-finite input");
    CHECK(lull_test_all_finite(output, (size_t)W * H * 3));
    /* the repaired pixel is like its neighbours */
    CHECK(fabs(output[3 * bad] - s.truth[0][bad]) < 0.2);
    oidnReleaseFilter(f);
  }
  free(color);
  free(gx);
  free(gy);
  free(output);
  synthetic_free(&s);
}

static bool cancel(void* user, double done)
{
  (void)user;
  return done < 0.2;
}

static void test_errors(void)
{
  float* img = calloc((size_t)(W + 1) * H * 4, sizeof(float));
  float* out = calloc((size_t)W * H * 3, sizeof(float));
  float* small = calloc((size_t)W * H * 3, sizeof(float));

  /* missing gradients */
  OIDNFilter f = new_poisson(img, NULL, NULL, out);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "no gradients");
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "execute uncommitted");
  oidn_share(f, "gradientX", img, 3, W, H);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "gradientY missing");
  oidn_share(f, "gradientY", img, 3, W, H);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "complete");
  /* mismatched sizes */
  oidn_share(f, "gradientY", img, 3, W + 1, H);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "size mismatch");
  oidn_share(f, "gradientY", img, 3, W, H);
  /* a one-channel gradient for RGB colour */
  oidn_share(f, "gradientX", img, 1, W, H);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "gradient channels");
  oidn_share(f, "gradientX", img, 3, W, H);
  /* output channel count */
  oidn_share(f, "output", out, 1, W, H);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "output channels");
  oidn_share(f, "output", out, 3, W, H);
  /* some half-buffers only */
  oidn_share(f, "colorA", small, 3, W, H);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "partial halves");
  oidnUnsetFilterImage(f, "colorA");
  /* variance without halves */
  oidn_share(f, "outputVariance", small, 1, W, H);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "variance without halves");
  oidnUnsetFilterImage(f, "outputVariance");
  /* parameters out of range */
  oidnSetFilterFloat(f, "alpha", -1.0f);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_ARGUMENT, "alpha < 0");
  oidnSetFilterFloat(f, "alpha", NAN);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_ARGUMENT, "alpha NaN");
  oidnSetFilterFloat(f, "alpha", 0.2f);
  oidnSetFilterInt(f, "norm", 3);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_ARGUMENT, "norm 3");
  oidnSetFilterInt(f, "norm", 1);
  oidnSetFilterInt(f, "preconditioner", 7);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_ARGUMENT, "preconditioner 7");
  oidnSetFilterInt(f, "preconditioner", 1);
  /* unknown names only warn, as in OIDN */
  oidnSetFilterFloat(f, "no such parameter", 1.0f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "unknown parameter");
  CHECK(oidnGetFilterFloat(f, "alpha") == 0.2f);
  CHECK_EQ_INT(oidnGetFilterInt(f, "irlsIterations"), 7);
  CHECK_EQ_INT(oidnGetFilterInt(f, "cgIterations"), 20);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_NONE, "valid again");
  /* cancellation through the progress monitor */
  oidnSetFilterProgressMonitorFunction(f, cancel, NULL);
  oidnExecuteFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_CANCELLED, "cancelled");
  oidnReleaseFilter(f);

  /* no colour at all */
  f = new_poisson(NULL, img, img, out);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "no colour");
  oidnReleaseFilter(f);
  /* no output */
  f = new_poisson(img, img, img, NULL);
  oidnCommitFilter(f);
  EXPECT_OIDN(device, OIDN_ERROR_INVALID_OPERATION, "no output");
  oidnReleaseFilter(f);
  free(img);
  free(out);
  free(small);
}

int main(void)
{
  device = oidn_cpu_device();
  test_matches_core();
  test_halves();
  test_non_finite();
  test_errors();
  oidnReleaseDevice(device);
  return lull_test_result("poisson_api");
}
