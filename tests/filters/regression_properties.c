/* Properties of the Regression filter (core/regression_math.h,
 * core/regression_cpu.c), through its formulas and through the OIDN API:
 *
 *  - one pixel's regression (lull_reg_accumulate, lull_reg_solve) equals a
 *    plain weighted least-squares solve in double precision, and a colour
 *    that is exactly linear in the features is reproduced by the fit;
 *  - the pair term is the per-channel mean of the NL-means distance;
 *  - a constant image stays constant (one buffer and halves, with every
 *    feature active); identical noise-free halves give the input back;
 *  - the result does not depend on the thread count, equals an untiled run
 *    when maxMemoryMB tiles it, and scales with the colour (2^k c gives 2^k
 *    times the result for c, bit for bit);
 *  - NaN and Inf input give a finite result and change nothing far away;
 *    tiny images (1x1, 2x3, 1x17) run;
 *  - OIDN's errors for bad images (a missing half, halves with colour,
 *    size mismatch, outputVariance without halves, a feature half without
 *    colour halves, an unsupported format) and cancellation. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>
#include <lull.h>

#include "regression_math.h"
#include "test_util.h"

enum { W = 41, H = 29 }; /* odd sizes, smaller than the filter's reach */

static OIDNDevice device;

static float* image_new(int channels)
{
  return calloc((size_t)W * H * (size_t)channels, sizeof(float));
}

static OIDNError device_error(void)
{
  const char* message = NULL;
  return oidnGetDeviceError(device, &message);
}

static void check_no_error(const char* what)
{
  const char* message = NULL;
  const OIDNError e = oidnGetDeviceError(device, &message);
  if (e != OIDN_ERROR_NONE) {
    fprintf(stderr, "%s: OIDN error %d: %s\n", what, (int)e, message ? message : "");
    ++lull_test_failures;
  }
}

/* -- the formulas ------------------------------------------------------------- */

/* Solves the k x k system a x = b by Gaussian elimination with partial
 * pivoting, in place (double). */
static void solve_dense(double* a, double* b, int k)
{
  for (int c = 0; c < k; ++c) {
    int p = c;
    for (int r = c + 1; r < k; ++r)
      if (fabs(a[r * k + c]) > fabs(a[p * k + c]))
        p = r;
    for (int j = 0; j < k; ++j) {
      const double t = a[c * k + j];
      a[c * k + j] = a[p * k + j];
      a[p * k + j] = t;
    }
    const double t = b[c];
    b[c] = b[p];
    b[p] = t;
    for (int r = c + 1; r < k; ++r) {
      const double f = a[r * k + c] / a[c * k + c];
      for (int j = c; j < k; ++j)
        a[r * k + j] -= f * a[c * k + j];
      b[r] -= f * b[c];
    }
  }
  for (int r = k - 1; r >= 0; --r) {
    double s = b[r];
    for (int j = r + 1; j < k; ++j)
      s -= a[r * k + j] * b[j];
    b[r] = s / a[r * k + r];
  }
}

/* A window of taps with random weights, offsets, features and values: the
 * float normal equations against the double reference of the same
 * weighted least squares (with the same ridge). */
static void test_fit_equals_least_squares(void)
{
  unsigned seed = 5;
  enum { TAPS = 49, NF = 7 };
  const int n = 3 + NF;
  for (int linear = 0; linear <= 1; ++linear) {
    /* the noisy window with a strong ridge, the linear one with the
     * filter's default */
    const float ridge = linear ? 1e-5f : 1e-3f;
    float gram[LULL_REG_MAX_GRAM] = {0}, rhs[3 * LULL_REG_MAX_COLUMNS] = {0};
    double a[LULL_REG_MAX_COLUMNS * LULL_REG_MAX_COLUMNS] = {0}, b[3][LULL_REG_MAX_COLUMNS] = {{0}};
    float fp[NF];
    for (int j = 0; j < NF; ++j)
      fp[j] = lull_test_random(&seed);
    const double coef[3][LULL_REG_MAX_COLUMNS] = {
        {0.5, 0.1, -0.2, 0.3, 0.0, 0.7, -0.4, 0.2, 0.1, 0.05},
        {1.5, -0.3, 0.2, 0.0, 0.6, -0.1, 0.2, 0.3, -0.2, 0.4},
        {0.2, 0.0, 0.1, 0.9, -0.5, 0.0, 0.1, -0.3, 0.25, -0.1}};
    float xs[TAPS][LULL_REG_MAX_COLUMNS], ys[TAPS][3];
    for (int t = 0; t < TAPS; ++t) {
      float fq[NF];
      for (int j = 0; j < NF; ++j)
        fq[j] = lull_test_random(&seed);
      const int dx = t % 7 - 3, dy = t / 7 - 3;
      lull_reg_row(dx, dy, 1.0f / 3.0f, fp, fq, NF, xs[t]);
      const float w = t == 24 ? 1.0f : lull_test_random(&seed);
      for (int c = 0; c < 3; ++c) {
        double v = 0.0;
        for (int i = 0; i < n; ++i)
          v += coef[c][i] * xs[t][i];
        ys[t][c] = linear ? (float)v : (float)v + 0.2f * (lull_test_random(&seed) - 0.5f);
      }
      lull_reg_accumulate(gram, rhs, xs[t], n, w, ys[t], 3);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j)
          a[i * n + j] += (double)w * xs[t][i] * xs[t][j];
        for (int c = 0; c < 3; ++c)
          b[c][i] += (double)w * xs[t][i] * ys[t][c];
      }
    }
    const double s0 = a[0];
    for (int i = 1; i < n; ++i)
      a[i * n + i] += ridge * s0;
    float beta[3 * LULL_REG_MAX_COLUMNS];
    const float h = lull_reg_solve(gram, rhs, n, 3, ridge, beta);
    for (int c = 0; c < 3; ++c) {
      double aa[LULL_REG_MAX_COLUMNS * LULL_REG_MAX_COLUMNS];
      memcpy(aa, a, sizeof aa);
      double bb[LULL_REG_MAX_COLUMNS];
      memcpy(bb, b[c], sizeof bb);
      solve_dense(aa, bb, n);
      /* the predictions agree (the coefficients are as well conditioned
       * as the window's features) */
      double worst = 0.0;
      for (int t = 0; t < TAPS; ++t) {
        double ref = 0.0;
        for (int i = 0; i < n; ++i)
          ref += bb[i] * xs[t][i];
        worst = fmax(worst, fabs(lull_reg_predict(beta + c * n, xs[t], n) - ref));
      }
      CHECK(worst < 2e-4);
      if (worst >= 2e-4)
        fprintf(stderr, "  channel %d (linear %d): prediction differs by %g\n", c, linear, worst);
    }
    /* the hat value: (A^-1)_00 */
    {
      double aa[LULL_REG_MAX_COLUMNS * LULL_REG_MAX_COLUMNS], e0[LULL_REG_MAX_COLUMNS] = {1.0};
      memcpy(aa, a, sizeof aa);
      solve_dense(aa, e0, n);
      CHECK_NEAR(h, e0[0], 1e-4 * fabs(e0[0]) + 1e-7);
    }
    /* the ridge shrinks the slopes a little: a colour linear in the
     * features comes back within 1e-3 at every tap */
    if (linear)
      for (int t = 0; t < TAPS; ++t)
        for (int c = 0; c < 3; ++c)
          CHECK_NEAR(lull_reg_predict(beta + c * n, xs[t], n), ys[t][c], 1e-3);
  }
  /* a window of one pixel falls back to its value */
  {
    float gram[LULL_REG_MAX_GRAM] = {0}, rhs[3 * LULL_REG_MAX_COLUMNS] = {0}, beta[30];
    float x[LULL_REG_MAX_COLUMNS];
    const float f[1] = {0.3f}, y[3] = {0.1f, 0.2f, 0.3f};
    lull_reg_row(0, 0, 1.0f, f, f, 1, x);
    lull_reg_accumulate(gram, rhs, x, 4, 1.0f, y, 3);
    lull_reg_solve(gram, rhs, 4, 3, 0.0f, beta);
    for (int c = 0; c < 3; ++c)
      CHECK_NEAR(lull_reg_predict(beta + c * 4, x, 4), y[c], 1e-6);
  }
}

static void test_pair_term(void)
{
  const float gp[3] = {0.1f, 0.5f, 2.0f}, gq[3] = {0.2f, 0.4f, 1.0f};
  const float vp[3] = {0.01f, 0.02f, 0.5f}, vq[3] = {0.03f, 0.01f, 0.1f};
  double expect = 0.0;
  for (int c = 0; c < 3; ++c) {
    const double d = (double)gp[c] - gq[c], v = (double)vp[c] + vq[c];
    expect += (d * d - v) / (1e-10 + v);
  }
  CHECK_NEAR(lull_reg_pair_term(gp, gq, vp, vq, 3), expect / 3.0, 1e-5);
  /* equal values weigh 1; the bandwidth scales the distance */
  CHECK_NEAR(lull_reg_weight(-1.0f, 0.5f), 1.0f, 0.0);
  CHECK_NEAR(lull_reg_weight(0.25f, 0.5f), exp(-1.0), 1e-5);
  CHECK_NEAR(lull_reg_hold(5.0f, 0.0f, 1.0f), 1.0f, 0.0);
  CHECK_NEAR(lull_reg_hold(5.0f, INFINITY, -INFINITY), 5.0f, 0.0); /* no range seen */
}

/* -- through the API ------------------------------------------------------------- */

typedef struct inputs
{
  float *color, *a, *b, *albedo, *normal, *depth, *albedo_b, *normal_b, *depth_b;
} inputs;

static void inputs_make(inputs* in, unsigned seed, float noise)
{
  in->color = image_new(3);
  in->a = image_new(3);
  in->b = image_new(3);
  in->albedo = image_new(3);
  in->normal = image_new(3);
  in->depth = image_new(1);
  in->albedo_b = image_new(3);
  in->normal_b = image_new(3);
  in->depth_b = image_new(1);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const size_t i = (size_t)y * W + (size_t)x;
      const int right = x > W / 2;
      for (int c = 0; c < 3; ++c) {
        const float base = (right ? 0.6f : 0.2f) + 0.1f * (float)c + 0.005f * (float)y;
        in->color[3 * i + c] = base + noise * (lull_test_random(&seed) - 0.5f);
        in->a[3 * i + c] = base + noise * (lull_test_random(&seed) - 0.5f);
        in->b[3 * i + c] = base + noise * (lull_test_random(&seed) - 0.5f);
        in->albedo[3 * i + c] = 0.2f + 0.6f * lull_test_random(&seed);
        in->albedo_b[3 * i + c] = in->albedo[3 * i + c] + 0.01f * lull_test_random(&seed);
      }
      in->normal[3 * i + 0] = right ? 0.6f : 0.0f;
      in->normal[3 * i + 1] = 0.0f;
      in->normal[3 * i + 2] = right ? 0.8f : 1.0f;
      for (int c = 0; c < 3; ++c)
        in->normal_b[3 * i + c] = in->normal[3 * i + c];
      in->depth[i] = 3.0f + 0.02f * (float)x + (y > H / 2 ? 2.0f : 0.0f);
      in->depth_b[i] = in->depth[i];
    }
}

static void inputs_free(inputs* in)
{
  free(in->color);
  free(in->a);
  free(in->b);
  free(in->albedo);
  free(in->normal);
  free(in->depth);
  free(in->albedo_b);
  free(in->normal_b);
  free(in->depth_b);
}

/* Runs Regression with halves (or one buffer), features (once or in
 * halves), into output; returns the device error. */
static OIDNError run(const inputs* in, int halves, int feature_halves, float* output,
                     float* variance, int max_memory_mb, int w, int h)
{
  OIDNFilter f = oidnNewFilter(device, "Regression");
  if (halves) {
    oidnSetSharedFilterImage(f, "colorA", in->a, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "colorB", in->b, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  } else {
    oidnSetSharedFilterImage(f, "color", in->color, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  }
  if (feature_halves) {
    oidnSetSharedFilterImage(f, "albedoA", in->albedo, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "albedoB", in->albedo_b, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "normalA", in->normal, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "normalB", in->normal_b, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "depthA", in->depth, OIDN_FORMAT_FLOAT, w, h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "depthB", in->depth_b, OIDN_FORMAT_FLOAT, w, h, 0, 0, 0);
  } else {
    oidnSetSharedFilterImage(f, "albedo", in->albedo, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "normal", in->normal, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "depth", in->depth, OIDN_FORMAT_FLOAT, w, h, 0, 0, 0);
  }
  oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  if (variance)
    oidnSetSharedFilterImage(f, "outputVariance", variance, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  oidnSetFilterInt(f, "maxMemoryMB", max_memory_mb);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  oidnReleaseFilter(f);
  return device_error();
}

static void test_constant_stays_constant(void)
{
  inputs in;
  inputs_make(&in, 3, 0.0f);
  const float value[3] = {0.25f, 1.5f, 7.0f};
  for (size_t i = 0; i < (size_t)W * H; ++i)
    for (int c = 0; c < 3; ++c)
      in.color[3 * i + c] = in.a[3 * i + c] = in.b[3 * i + c] = value[c];
  float* output = image_new(3);
  for (int halves = 0; halves <= 1; ++halves)
    for (int fh = 0; fh <= halves; ++fh) {
      CHECK_EQ_INT(run(&in, halves, fh, output, NULL, -1, W, H), OIDN_ERROR_NONE);
      double worst = 0.0;
      for (size_t i = 0; i < (size_t)W * H; ++i)
        for (int c = 0; c < 3; ++c)
          worst = fmax(worst, fabs(output[3 * i + c] - value[c]) / value[c]);
      CHECK(worst < 1e-5);
      if (worst >= 1e-5)
        fprintf(stderr, "  halves %d, feature halves %d: relative error %g\n", halves, fh, worst);
    }
  free(output);
  inputs_free(&in);
}

/* One buffer: a bright 10x10 block (a lamp) painted into a noisy image,
 * its guides those of the background, keeps its value at its centre.
 * The residual against the smooth pilot had made the noise estimate huge
 * in a ring around it, whose pixels then matched the block's and pulled
 * its centre to half (LULL_REG_ONE_GUIDE_VARIANCE_MAX). */
static void test_bright_block(void)
{
  inputs in;
  inputs_make(&in, 9, 0.4f);
  const float bright = 5e4f;
  for (int y = 9; y < 19; ++y)
    for (int x = 14; x < 24; ++x)
      for (int c = 0; c < 3; ++c)
        in.color[3 * ((size_t)y * W + (size_t)x) + (size_t)c] = bright;
  float* output = image_new(3);
  CHECK_EQ_INT(run(&in, 0, 0, output, NULL, -1, W, H), OIDN_ERROR_NONE);
  const float centre = output[3 * ((size_t)14 * W + 19)];
  if (!(centre > 0.95f * bright))
    fprintf(stderr, "  bright block: centre %g of %g\n", (double)centre, (double)bright);
  CHECK(centre > 0.95f * bright && centre <= bright * 1.0001f);
  free(output);
  inputs_free(&in);
}

/* A given variance: where it is negative the filter takes its own
 * estimate (temporal mode hands it -1 where the history has no moments
 * yet): all -1 is the run without a variance, bit for bit, and a
 * variance 100 times the noise's changes the result. */
static void test_variance_estimate_where_negative(void)
{
  inputs in;
  inputs_make(&in, 13, 0.2f);
  float* plain = image_new(3);
  float* estimated = image_new(3);
  float* given = image_new(3);
  float* variance = image_new(1);
  CHECK_EQ_INT(run(&in, 0, 0, plain, NULL, -1, W, H), OIDN_ERROR_NONE);
  const float values[2] = {-1.0f, 100.0f * 0.2f * 0.2f / 12.0f};
  float* outs[2] = {estimated, given};
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < W * H; ++i)
      variance[i] = values[k];
    OIDNFilter f = oidnNewFilter(device, "Regression");
    oidnSetSharedFilterImage(f, "color", in.color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "albedo", in.albedo, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "normal", in.normal, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "depth", in.depth, OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "variance", variance, OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "output", outs[k], OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    oidnReleaseFilter(f);
    check_no_error("Regression with a variance");
  }
  CHECK(lull_test_max_abs_diff(estimated, plain, (size_t)W * H * 3) == 0.0);
  CHECK(lull_test_max_abs_diff(given, plain, (size_t)W * H * 3) > 1e-4);
  free(plain);
  free(estimated);
  free(given);
  free(variance);
  inputs_free(&in);
}

static void test_identical_halves(void)
{
  inputs in;
  inputs_make(&in, 4, 0.3f);
  memcpy(in.b, in.a, sizeof(float) * 3 * W * H);
  float* output = image_new(3);
  float* variance = image_new(3);
  CHECK_EQ_INT(run(&in, 1, 0, output, variance, -1, W, H), OIDN_ERROR_NONE);
  CHECK(lull_test_all_finite(output, (size_t)W * H * 3));
  /* no noise by the halves' estimate: nothing to remove */
  CHECK(lull_test_max_abs_diff(output, in.a, (size_t)W * H * 3) < 1e-5);
  float* zero = image_new(3);
  CHECK(lull_test_max_abs_diff(variance, zero, (size_t)W * H * 3) == 0.0);
  free(zero);
  free(variance);
  free(output);
  inputs_free(&in);
}

static void test_invariances(void)
{
  inputs in;
  inputs_make(&in, 6, 0.4f);
  float* a = image_new(3);
  float* b = image_new(3);
  for (int halves = 0; halves <= 1; ++halves) {
    /* threads */
    OIDNDevice saved = device;
    device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
    oidnSetDeviceInt(device, "numThreads", 1);
    oidnCommitDevice(device);
    CHECK_EQ_INT(run(&in, halves, halves, a, NULL, -1, W, H), OIDN_ERROR_NONE);
    oidnReleaseDevice(device);
    device = saved;
    CHECK_EQ_INT(run(&in, halves, halves, b, NULL, -1, W, H), OIDN_ERROR_NONE);
    CHECK(lull_test_max_abs_diff(a, b, (size_t)W * H * 3) == 0.0);
    /* scale: 2^-7 times the colour gives 2^-7 times the result */
    for (size_t i = 0; i < (size_t)W * H * 3; ++i) {
      in.color[i] *= 0.0078125f;
      in.a[i] *= 0.0078125f;
      in.b[i] *= 0.0078125f;
    }
    CHECK_EQ_INT(run(&in, halves, halves, b, NULL, -1, W, H), OIDN_ERROR_NONE);
    for (size_t i = 0; i < (size_t)W * H * 3; ++i) {
      in.color[i] *= 128.0f;
      in.a[i] *= 128.0f;
      in.b[i] *= 128.0f;
      b[i] *= 128.0f;
    }
    CHECK(lull_test_max_abs_diff(a, b, (size_t)W * H * 3) == 0.0);
  }
  free(a);
  free(b);
  inputs_free(&in);
}

/* maxMemoryMB 0 cuts an image into the smallest tiles, four times the
 * filter's reach (with these windows the reach is 47 pixels with halves,
 * about 75 with one buffer, whose pilot reaches far): 3 and 2 tiles across;
 * the result equals the untiled one. */
static void test_tiles(void)
{
  enum { TW = 420, TH = 110 };
  unsigned seed = 12;
  float* color[3];
  for (int k = 0; k < 3; ++k) {
    color[k] = malloc(sizeof(float) * 3 * TW * TH);
    for (size_t i = 0; i < (size_t)TW * TH * 3; ++i)
      color[k][i] = 0.3f + 0.2f * (float)((i / 3) % TW) / TW + 0.4f * lull_test_random(&seed);
  }
  float* albedo = malloc(sizeof(float) * 3 * TW * TH);
  for (size_t i = 0; i < (size_t)TW * TH * 3; ++i)
    albedo[i] = (i / 3) % TW < TW / 3 ? 0.8f : 0.3f;
  float* untiled = calloc((size_t)TW * TH * 3, sizeof(float));
  float* tiled = calloc((size_t)TW * TH * 3, sizeof(float));
  for (int halves = 0; halves <= 1; ++halves) {
    for (int cap = -1; cap <= 0; ++cap) {
      OIDNFilter f = oidnNewFilter(device, "Regression");
      if (halves) {
        oidnSetSharedFilterImage(f, "colorA", color[1], OIDN_FORMAT_FLOAT3, TW, TH, 0, 0, 0);
        oidnSetSharedFilterImage(f, "colorB", color[2], OIDN_FORMAT_FLOAT3, TW, TH, 0, 0, 0);
      } else {
        oidnSetSharedFilterImage(f, "color", color[0], OIDN_FORMAT_FLOAT3, TW, TH, 0, 0, 0);
      }
      oidnSetSharedFilterImage(f, "albedo", albedo, OIDN_FORMAT_FLOAT3, TW, TH, 0, 0, 0);
      oidnSetSharedFilterImage(f, "output", cap < 0 ? untiled : tiled, OIDN_FORMAT_FLOAT3, TW, TH,
                               0, 0, 0);
      oidnSetFilterInt(f, "maxMemoryMB", cap);
      /* small windows: a small reach, so tiles of it fit the image often */
      oidnSetFilterInt(f, "radius", 3);
      oidnSetFilterInt(f, "patchRadius", 1);
      oidnSetFilterInt(f, "secondPassRadius", 3);
      oidnCommitFilter(f);
      oidnExecuteFilter(f);
      check_no_error("tiles");
      oidnReleaseFilter(f);
    }
    const double d = lull_test_max_abs_diff(untiled, tiled, (size_t)TW * TH * 3);
    CHECK(d < 1e-5);
    if (d >= 1e-5)
      fprintf(stderr, "  halves %d: the tiled result differs by %g\n", halves, d);
  }
  for (int k = 0; k < 3; ++k)
    free(color[k]);
  free(albedo);
  free(untiled);
  free(tiled);
}

static void test_non_finite_and_tiny(void)
{
  inputs in;
  inputs_make(&in, 8, 0.3f);
  float* clean = image_new(3);
  float* out = image_new(3);
  for (int halves = 0; halves <= 1; ++halves) {
    CHECK_EQ_INT(run(&in, halves, 0, clean, NULL, -1, W, H), OIDN_ERROR_NONE);
    float* color = halves ? in.a : in.color;
    const size_t bad = 3 * ((size_t)(H / 2) * W + 3);
    const float saved[3] = {color[bad], color[bad + 1], color[bad + 2]};
    color[bad] = NAN;
    color[bad + 1] = INFINITY;
    color[bad + 2] = -INFINITY;
    in.albedo[bad] = NAN;
    in.depth[bad / 3] = INFINITY;
    CHECK_EQ_INT(run(&in, halves, 0, out, NULL, -1, W, H), OIDN_ERROR_NONE);
    CHECK(lull_test_all_finite(out, (size_t)W * H * 3));
    memcpy(color + bad, saved, sizeof saved);
    in.albedo[bad] = 0.5f;
    in.depth[bad / 3] = 3.0f;
  }
  /* tiny images */
  const int sizes[][2] = {{1, 1}, {2, 3}, {1, 17}, {17, 1}};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k)
    for (int halves = 0; halves <= 1; ++halves) {
      const int w = sizes[k][0], h = sizes[k][1];
      memset(out, 0, sizeof(float) * 3 * (size_t)(w * h));
      CHECK_EQ_INT(run(&in, halves, halves, out, NULL, -1, w, h), OIDN_ERROR_NONE);
      CHECK(lull_test_all_finite(out, (size_t)w * h * 3));
    }
  free(clean);
  free(out);
  inputs_free(&in);
}

static bool stop_at_once(void* user, double n)
{
  (void)user;
  (void)n;
  return false;
}

static void test_errors(void)
{
  inputs in;
  inputs_make(&in, 9, 0.1f);
  float* out = image_new(3);
  float* one = image_new(1);
  struct
  {
    const char* what;
    const char* images[4];
    OIDNFormat formats[4];
    int width[4];
  } cases[] = {
      {"one half", {"colorA", "output", NULL, NULL}, {OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3}, {W, W}},
      {"halves and color",
       {"colorA", "colorB", "color", "output"},
       {OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3},
       {W, W, W, W}},
      {"halves of different sizes",
       {"colorA", "colorB", "output", NULL},
       {OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3},
       {W, W - 1, W}},
      {"outputVariance with one buffer",
       {"color", "output", "outputVariance", NULL},
       {OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3},
       {W, W, W}},
      {"a feature half without colour halves",
       {"color", "albedoA", "albedoB", "output"},
       {OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT3},
       {W, W, W, W}},
      {"one-channel position",
       {"color", "position", "output", NULL},
       {OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT, OIDN_FORMAT_FLOAT3},
       {W, W, W}},
      {"no output", {"color", NULL, NULL, NULL}, {OIDN_FORMAT_FLOAT3}, {W}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k) {
    OIDNFilter f = oidnNewFilter(device, "Regression");
    for (int i = 0; i < 4 && cases[k].images[i]; ++i) {
      void* data = cases[k].formats[i] == OIDN_FORMAT_FLOAT ? (void*)one : (void*)in.a;
      if (strcmp(cases[k].images[i], "output") == 0 || strcmp(cases[k].images[i], "outputVariance") == 0)
        data = out;
      oidnSetSharedFilterImage(f, cases[k].images[i], data, cases[k].formats[i], cases[k].width[i],
                               H, 0, 0, 0);
    }
    oidnCommitFilter(f);
    const OIDNError e = device_error();
    if (e != OIDN_ERROR_INVALID_OPERATION)
      fprintf(stderr, "  %s: error %d\n", cases[k].what, (int)e);
    CHECK_EQ_INT(e, OIDN_ERROR_INVALID_OPERATION);
    oidnReleaseFilter(f);
  }
  /* hdr and srgb together */
  {
    OIDNFilter f = oidnNewFilter(device, "Regression");
    oidnSetSharedFilterImage(f, "color", in.color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetFilterBool(f, "srgb", true);
    oidnCommitFilter(f);
    CHECK_EQ_INT(device_error(), OIDN_ERROR_INVALID_OPERATION);
    /* LDR, sRGB: the output stays in [0, 1] */
    oidnSetFilterBool(f, "hdr", false);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    check_no_error("LDR sRGB run");
    double lo = 1.0, hi = 0.0;
    for (size_t i = 0; i < (size_t)W * H * 3; ++i) {
      lo = fmin(lo, out[i]);
      hi = fmax(hi, out[i]);
    }
    CHECK(lo >= 0.0 && hi <= 1.0);
    /* cancellation */
    oidnSetFilterProgressMonitorFunction(f, stop_at_once, NULL);
    oidnExecuteFilter(f);
    CHECK_EQ_INT(device_error(), OIDN_ERROR_CANCELLED);
    oidnReleaseFilter(f);
  }
  free(one);
  free(out);
  inputs_free(&in);
}

int main(void)
{
  device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  test_fit_equals_least_squares();
  test_pair_term();
  test_constant_stays_constant();
  test_identical_halves();
  test_bright_block();
  test_variance_estimate_where_negative();
  test_invariances();
  test_tiles();
  test_non_finite_and_tiny();
  test_errors();
  oidnReleaseDevice(device);
  return lull_test_result("regression_properties");
}
