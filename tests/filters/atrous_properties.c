/* Properties of the à-trous and Gaussian filters through the OIDN API:
 *
 *  - with every edge-stopping weight disabled, ATrous equals N repeated
 *    B3-spline convolutions with taps 2^i apart, computed here by a plain
 *    separable reference in double precision (Dammertz 2010 §2.2);
 *  - a constant image stays constant, with every guide and weight active,
 *    and finite at the ends of the float range;
 *  - a sharp normal edge does not leak colour across;
 *  - NaN and Inf input gives finite output and does not spread;
 *  - the result does not depend on the number of threads, nor on the
 *    colour's scale;
 *  - Gaussian equals a plain reference Gaussian (and passes alpha through),
 *    also next to +-FLT_MAX;
 *  - exp_neg, the one exponential of the filter, matches exp(). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>
#include <lull.h>

#include "atrous_math.h"
#include "test_util.h"

enum { W = 67, H = 45 }; /* odd sizes: borders on every side, no alignment */

static OIDNDevice device;

static float* image_new(int channels)
{
  return calloc((size_t)W * H * (size_t)channels, sizeof(float));
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

/* One level of the reference: separable B3 with taps `step` apart; taps
 * outside the image are skipped and the weights renormalised per axis,
 * which equals the 2-D renormalisation because the valid taps form a
 * product set. */
static void reference_level(const double* in, double* out, int step, int channels)
{
  double* tmp = malloc(sizeof(double) * W * H * (size_t)channels);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      for (int c = 0; c < channels; ++c) {
        double s = 0, ws = 0;
        for (int k = -2; k <= 2; ++k) {
          const int xx = x + k * step;
          if (xx < 0 || xx >= W)
            continue;
          const double h = lull_b3_tap(k);
          s += h * in[((size_t)y * W + (size_t)xx) * (size_t)channels + (size_t)c];
          ws += h;
        }
        tmp[((size_t)y * W + (size_t)x) * (size_t)channels + (size_t)c] = s / ws;
      }
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      for (int c = 0; c < channels; ++c) {
        double s = 0, ws = 0;
        for (int k = -2; k <= 2; ++k) {
          const int yy = y + k * step;
          if (yy < 0 || yy >= H)
            continue;
          const double h = lull_b3_tap(k);
          s += h * tmp[((size_t)yy * W + (size_t)x) * (size_t)channels + (size_t)c];
          ws += h;
        }
        out[((size_t)y * W + (size_t)x) * (size_t)channels + (size_t)c] = s / ws;
      }
  free(tmp);
}

static OIDNFilter atrous_unweighted(int iterations)
{
  OIDNFilter f = oidnNewFilter(device, "ATrous");
  oidnSetFilterInt(f, "iterations", iterations);
  oidnSetFilterInt(f, "colorMode", LULL_COLOR_MODE_FIXED);
  oidnSetFilterFloat(f, "sigmaColor", 1e30f); /* colour weight exp(-0) = 1 */
  oidnSetFilterFloat(f, "sigmaNormal", 0.0f);
  oidnSetFilterFloat(f, "sigmaDepth", 0.0f);
  oidnSetFilterFloat(f, "sigmaAlbedo", 0.0f);
  oidnSetFilterBool(f, "demodulate", false);
  return f;
}

static void test_equals_reference_b3(void)
{
  unsigned seed = 7;
  float* color = image_new(3);
  float* output = image_new(3);
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    color[i] = lull_test_random(&seed) * 4.0f;
  double* a = malloc(sizeof(double) * W * H * 3);
  double* b = malloc(sizeof(double) * W * H * 3);
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    a[i] = color[i];

  for (int iterations = 1; iterations <= 5; ++iterations) {
    OIDNFilter f = atrous_unweighted(iterations);
    oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    check_no_error("unweighted ATrous");
    reference_level(a, b, 1 << (iterations - 1), 3);
    memcpy(a, b, sizeof(double) * W * H * 3);
    double max_err = 0;
    for (size_t i = 0; i < (size_t)W * H * 3; ++i)
      max_err = fmax(max_err, fabs(output[i] - a[i]));
    /* float accumulation of 25 taps per level against double */
    CHECK(max_err < 2e-5);
    if (max_err >= 2e-5)
      fprintf(stderr, "  iterations %d: max error %g\n", iterations, max_err);
    oidnReleaseFilter(f);
  }
  free(a);
  free(b);
  free(color);
  free(output);
}

/* Guides with structure: two normals, random albedo, a depth ramp with a
 * step, so every weight is active somewhere. */
static void make_guides(float* albedo, float* normal, float* depth, unsigned* seed)
{
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const size_t i = (size_t)y * W + (size_t)x;
      for (int c = 0; c < 3; ++c)
        albedo[3 * i + (size_t)c] = 0.05f + 0.9f * lull_test_random(seed);
      normal[3 * i + 0] = x < W / 2 ? 0.0f : 0.8f;
      normal[3 * i + 1] = 0.0f;
      normal[3 * i + 2] = x < W / 2 ? 1.0f : 0.6f;
      depth[i] = 2.0f + 0.01f * (float)x + (y > H / 2 ? 5.0f : 0.0f);
    }
}

static void test_constant_stays_constant(void)
{
  unsigned seed = 11;
  float* color = image_new(3);
  float* albedo = image_new(3);
  float* normal = image_new(3);
  float* depth = image_new(1);
  float* output = image_new(3);
  make_guides(albedo, normal, depth, &seed);
  const float value[3] = {0.25f, 1.5f, 7.0f};
  for (size_t i = 0; i < (size_t)W * H; ++i)
    for (int c = 0; c < 3; ++c)
      color[3 * i + (size_t)c] = value[c];

  for (int mode = 0; mode <= 1; ++mode) {
    OIDNFilter f = oidnNewFilter(device, "ATrous");
    oidnSetFilterInt(f, "colorMode", mode);
    /* demodulation is exact only for constant albedo; this test is about
     * the weights, so the constant is the filtered quantity */
    oidnSetFilterBool(f, "demodulate", false);
    oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "albedo", albedo, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "normal", normal, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "depth", depth, OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    check_no_error("constant ATrous");
    double max_rel = 0;
    for (size_t i = 0; i < (size_t)W * H; ++i)
      for (int c = 0; c < 3; ++c)
        max_rel = fmax(max_rel, fabs(output[3 * i + (size_t)c] / value[c] - 1.0));
    CHECK(max_rel < 1e-6);
    oidnReleaseFilter(f);
  }

  /* with demodulation, a colour that is a constant times the albedo (a
   * uniformly lit textured surface) is reproduced exactly */
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    color[i] = 3.0f * albedo[i];
  OIDNFilter f = oidnNewFilter(device, "ATrous");
  oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "albedo", albedo, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  check_no_error("demodulated ATrous");
  CHECK(lull_test_max_abs_diff(output, color, (size_t)W * H * 3) < 1e-5);
  oidnReleaseFilter(f);

  free(color);
  free(albedo);
  free(normal);
  free(depth);
  free(output);
}

/* A constant image at +-FLT_MAX through every filter that takes a colour
 * alone: the weighted means round one ulp beyond the float range, which
 * came out as +-inf in most pixels before lull_hold_in_range (RT with hdr,
 * RTLightmap, ATrous: 2448 of 6030 values; Gaussian 2670).  RT's default
 * quality HIGH runs Regression, so this covers it too. */
static void test_constant_at_float_max(void)
{
  float* color = image_new(3);
  float* output = image_new(3);
  static const char* const types[] = {"RT", "RTLightmap", "ATrous", "Gaussian"};
  for (int sign = -1; sign <= 1; sign += 2) {
    const float value = (float)sign * FLT_MAX;
    for (size_t i = 0; i < (size_t)W * H * 3; ++i)
      color[i] = value;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
      OIDNFilter f = oidnNewFilter(device, types[t]);
      if (t == 0)
        oidnSetFilterBool(f, "hdr", true);
      oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
      oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
      oidnCommitFilter(f);
      oidnExecuteFilter(f);
      check_no_error(types[t]);
      /* RT and RTLightmap read negative colour as 0, as OIDN sanitizes
       * its input: -FLT_MAX comes out as 0 there */
      const int clamps = sign < 0 && strncmp(types[t], "RT", 2) == 0;
      double worst = 0.0;
      for (size_t i = 0; i < (size_t)W * H * 3; ++i)
        worst = fmax(worst, !isfinite(output[i]) ? INFINITY
                            : clamps            ? fabs((double)output[i])
                                                : fabs((double)output[i] / value - 1.0));
      if (!(worst < 1e-6))
        fprintf(stderr, "%s at %g: largest relative change %g\n", types[t], (double)value, worst);
      CHECK(worst < 1e-6);
      oidnReleaseFilter(f);
    }
  }
  free(color);
  free(output);
}

/* The Gaussian near the ends of the float range, at sigma 1.5, where its
 * row pass had overflowed (a review helper's cases): an image half
 * +FLT_MAX, half -FLT_MAX must blur without NaN, and a band at FLT_MAX
 * over zeros must blur to 4 times the blur of the band at FLT_MAX / 4
 * (the blur is linear; clipped infinities had made the dark side up to
 * 1000 times too bright). */
static void test_gaussian_float_range(void)
{
  float* color = image_new(3);
  float* output = image_new(3);
  float* quarter = image_new(3);
  for (int pass = 0; pass < 3; ++pass) {
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        for (int c = 0; c < 3; ++c) {
          float v;
          if (pass == 0)
            v = y < H / 2 ? FLT_MAX : -FLT_MAX;
          else
            v = y >= 10 && y < 18 ? (pass == 1 ? FLT_MAX : FLT_MAX / 4) : 0.0f;
          color[((size_t)y * W + (size_t)x) * 3 + (size_t)c] = v;
        }
    OIDNFilter f = oidnNewFilter(device, "Gaussian");
    oidnSetFilterFloat(f, "sigma", 1.5f);
    oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "output", pass == 2 ? quarter : output, OIDN_FORMAT_FLOAT3, W, H,
                             0, 0, 0);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    check_no_error("Gaussian at the float range");
    oidnReleaseFilter(f);
    if (pass == 0)
      CHECK(lull_test_all_finite(output, (size_t)W * H * 3));
  }
  double worst = 0.0;
  for (size_t i = 0; i < (size_t)W * H * 3; ++i) {
    const double expect = 4.0 * quarter[i];
    worst = fmax(worst, fabs(output[i] - expect) / (fabs(expect) + 1e-30 * FLT_MAX));
  }
  CHECK(worst < 1e-5);
  free(color);
  free(output);
  free(quarter);
}

/* The mean red of column x of an RGB output. */
static double column_mean(const float* output, int x)
{
  double sum = 0;
  for (int y = 0; y < H; ++y)
    sum += output[3 * ((size_t)y * W + (size_t)x)];
  return sum / H;
}

/* Runs f (committed now) and checks the dark column next to the edge keeps
 * the dark side's mean, 0.1. */
static void check_dark_column(OIDNFilter f, const float* output, const char* what)
{
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  check_no_error(what);
  const double dark = column_mean(output, W / 2 - 1);
  if (!(fabs(dark - 0.1) < 0.01))
    fprintf(stderr, "%s: the dark column is %g\n", what, dark);
  CHECK(fabs(dark - 0.1) < 0.01);
}

static void test_normal_edge_does_not_leak(void)
{
  unsigned seed = 5;
  float* color = image_new(3);
  float* normal = image_new(3);
  float* output = image_new(3);
  /* left half dark, right half bright, both noisy; normals differ */
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const size_t i = (size_t)y * W + (size_t)x;
      const float base = x < W / 2 ? 0.1f : 1.0f;
      for (int c = 0; c < 3; ++c)
        color[3 * i + (size_t)c] = base * (0.5f + lull_test_random(&seed));
      normal[3 * i + 0] = x < W / 2 ? 1.0f : 0.0f;
      normal[3 * i + 1] = 0.0f;
      normal[3 * i + 2] = x < W / 2 ? 0.0f : 1.0f;
    }
  OIDNFilter f = oidnNewFilter(device, "ATrous");
  oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "normal", normal, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  check_no_error("normal edge");
  /* the column next to the edge keeps the mean of its own side: a leak of
   * the bright side (10x brighter) would raise it far above 0.1 */
  CHECK(fabs(column_mean(output, W / 2 - 1) - 0.1) < 0.01);
  CHECK(fabs(column_mean(output, W / 2) - 1.0) < 0.1);

  /* a tiny sigmaNormal keeps the edge too, with unit normals whose dot
   * rounds off 1 (that noise alone had rejected every tap, so all weights
   * fell to the floor and the filter blurred across; below 1e-19 k = inf
   * made them NaN and swapped the sides); so does a tiny sigmaAlbedo */
  const float slant[2][3] = {{1.0f, 0.3f, 0.2f}, {0.2f, 0.3f, 1.0f}};
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const float* n = slant[x < W / 2 ? 0 : 1];
      const float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (int c = 0; c < 3; ++c)
        normal[3 * ((size_t)y * W + (size_t)x) + (size_t)c] = n[c] / len;
    }
  static const float tiny[] = {1e-6f, 1e-20f};
  for (int k = 0; k < 4; ++k) {
    oidnSetFilterFloat(f, "sigmaNormal", k < 2 ? tiny[k] : 0.5f);
    oidnSetFilterFloat(f, "sigmaAlbedo", k < 2 ? 0.3f : tiny[k - 2]);
    if (k >= 2)
      oidnSetSharedFilterImage(f, "albedo", normal, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    char what[64];
    snprintf(what, sizeof what, "sigma %s %g", k < 2 ? "normal" : "albedo", (double)tiny[k % 2]);
    check_dark_column(f, output, what);
  }
  oidnUnsetFilterImage(f, "albedo");
  oidnSetFilterFloat(f, "sigmaNormal", 0.5f);

  /* normals of length 1e20, finite: their squares had overflowed, the
   * normal became (0, 0, 0) yet present, every weight fell to the floor
   * and the filter blurred across the edge (0.1 became ~0.5) */
  float* long_normal = image_new(3);
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    long_normal[i] = normal[i] * 1e20f;
  oidnSetFilterFloat(f, "sigmaNormal", 0.1f);
  oidnSetSharedFilterImage(f, "normal", long_normal, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  check_dark_column(f, output, "normals of length 1e20");
  oidnSetSharedFilterImage(f, "normal", normal, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetFilterFloat(f, "sigmaNormal", 0.5f);
  free(long_normal);

  /* and the same without normals does leak, so the check can fail */
  oidnUnsetFilterImage(f, "normal");
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  CHECK(column_mean(output, W / 2 - 1) > 0.11);
  oidnReleaseFilter(f);
  free(color);
  free(normal);
  free(output);
}

static void run_atrous(const float* color, float* output, int threads_device)
{
  OIDNDevice d = device;
  if (threads_device > 0) {
    d = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
    oidnSetDeviceInt(d, "numThreads", threads_device);
    oidnCommitDevice(d);
  }
  OIDNFilter f = oidnNewFilter(d, "ATrous");
  oidnSetSharedFilterImage(f, "color", (void*)color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  const char* message = NULL;
  CHECK(oidnGetDeviceError(d, &message) == OIDN_ERROR_NONE);
  oidnReleaseFilter(f);
  if (d != device)
    oidnReleaseDevice(d);
}

static void test_non_finite_input(void)
{
  unsigned seed = 3;
  float* color = image_new(3);
  float* clean = image_new(3);
  float* output = image_new(3);
  float* reference = image_new(3);
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    color[i] = clean[i] = 0.2f + lull_test_random(&seed);
  run_atrous(clean, reference, 0);
  /* a NaN, a +Inf, a -Inf pixel and a NaN in one channel */
  const size_t bad[4] = {(size_t)10 * W + 10, (size_t)20 * W + 40, (size_t)30 * W + 60, 5};
  color[3 * bad[0]] = color[3 * bad[0] + 1] = color[3 * bad[0] + 2] = NAN;
  color[3 * bad[1]] = color[3 * bad[1] + 1] = color[3 * bad[1] + 2] = INFINITY;
  color[3 * bad[2]] = color[3 * bad[2] + 2] = -INFINITY;
  color[3 * bad[3] + 1] = NAN;
  run_atrous(color, output, 0);
  CHECK(lull_test_all_finite(output, (size_t)W * H * 3));
  /* far from the bad pixels the image is nearly what it is without them:
   * the bad pixels were replaced by local means, not spread */
  double far_max = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      int near = 0;
      for (int k = 0; k < 4; ++k) {
        const int bx = (int)(bad[k] % W), by = (int)(bad[k] / W);
        near |= abs(x - bx) < 12 && abs(y - by) < 12;
      }
      if (near)
        continue;
      for (int c = 0; c < 3; ++c) {
        const size_t i = 3 * ((size_t)y * W + (size_t)x) + (size_t)c;
        far_max = fmax(far_max, fabs(output[i] - reference[i]));
      }
    }
  CHECK(far_max < 0.05);
  free(color);
  free(clean);
  free(output);
  free(reference);
}

static void test_thread_count_invariance(void)
{
  unsigned seed = 9;
  float* color = image_new(3);
  float* one = image_new(3);
  float* two = image_new(3);
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    color[i] = lull_test_random(&seed);
  run_atrous(color, one, 1);
  run_atrous(color, two, 3);
  CHECK(memcmp(one, two, sizeof(float) * W * H * 3) == 0);
  free(color);
  free(one);
  free(two);
}

static void test_gaussian_reference(void)
{
  unsigned seed = 13;
  float* color = image_new(3);
  float* output = image_new(3);
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    color[i] = lull_test_random(&seed);
  const float sigma = 2.5f;
  OIDNFilter f = oidnNewFilter(device, "Gaussian");
  oidnSetFilterFloat(f, "sigma", sigma);
  oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  check_no_error("Gaussian");
  const int r = (int)ceilf(3 * sigma);
  double max_err = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      for (int c = 0; c < 3; ++c) {
        double s = 0, ws = 0;
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx) {
            const int xx = x + dx, yy = y + dy;
            if (xx < 0 || yy < 0 || xx >= W || yy >= H)
              continue;
            const double wgt = exp(-0.5 * (dx * dx + dy * dy) / (sigma * sigma));
            s += wgt * color[3 * ((size_t)yy * W + (size_t)xx) + (size_t)c];
            ws += wgt;
          }
        max_err = fmax(max_err, fabs(s / ws - output[3 * ((size_t)y * W + (size_t)x) + (size_t)c]));
      }
  CHECK(max_err < 1e-5);

  /* RGBA: the colour is blurred as before, alpha passes through unchanged */
  float* rgba = image_new(4);
  float* rgba_out = image_new(4);
  for (size_t i = 0; i < (size_t)W * H; ++i) {
    for (int c = 0; c < 3; ++c)
      rgba[4 * i + (size_t)c] = color[3 * i + (size_t)c];
    rgba[4 * i + 3] = lull_test_random(&seed);
  }
  oidnSetSharedFilterImage(f, "color", rgba, OIDN_FORMAT_FLOAT4, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", rgba_out, OIDN_FORMAT_FLOAT4, W, H, 0, 0, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  check_no_error("Gaussian RGBA");
  int alpha_same = 1;
  double rgb_diff = 0;
  for (size_t i = 0; i < (size_t)W * H; ++i) {
    alpha_same &= rgba_out[4 * i + 3] == rgba[4 * i + 3];
    for (int c = 0; c < 3; ++c)
      rgb_diff = fmax(rgb_diff, fabs(rgba_out[4 * i + (size_t)c] - output[3 * i + (size_t)c]));
  }
  CHECK(alpha_same);
  CHECK(rgb_diff == 0.0);
  free(rgba);
  free(rgba_out);

  /* a constant near FLT_MAX stays that constant (the unnormalised
   * kernel's sums overflowed: every pixel inf) */
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    color[i] = 3e38f;
  oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  check_no_error("Gaussian near FLT_MAX");
  double worst = 0.0;
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    worst = fmax(worst, isfinite(output[i]) ? fabs(output[i] / 3e38 - 1.0) : INFINITY);
  CHECK(worst < 1e-5);
  oidnReleaseFilter(f);
  free(color);
  free(output);
}

/* One ATrous run with every guide and a variance image (NULL: none); the
 * colour's scale is `input_scale` (NaN: automatic). */
static void run_scaled(const float* color, const float* variance, const float* guides[3],
                       float input_scale, float* output)
{
  OIDNFilter f = oidnNewFilter(device, "ATrous");
  oidnSetSharedFilterImage(f, "color", (void*)color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "albedo", (void*)guides[0], OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "normal", (void*)guides[1], OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "depth", (void*)guides[2], OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
  if (variance)
    oidnSetSharedFilterImage(f, "variance", (void*)variance, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetFilterFloat(f, "inputScale", input_scale);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  check_no_error("scaled ATrous");
  oidnReleaseFilter(f);
}

/* The variance-guided filter does not depend on the colour's scale
 * (core/atrous_math.h, "the automatic input scale"):
 *   - automatic scale: the result for 2^j c is 2^j times the result for c,
 *     bit for bit, from 2^-120 to 2^100 (before, dark renders were
 *     filtered harder and colours beyond 1e15 clipped); a given variance
 *     image scales with 2^2j;
 *   - other factors (1e-30 .. 1e35) agree to float rounding;
 *   - an explicit inputScale 1 / k on colour k c gives k times the result
 *     for c: the clamp at 1e15 comes after the scale, and a given variance
 *     is scaled by inputScale^2 (it was not scaled at all). */
static void test_scale_invariance(void)
{
  unsigned seed = 21;
  const size_t n = (size_t)W * H * 3;
  float* albedo = image_new(3);
  float* normal = image_new(3);
  float* depth = image_new(1);
  make_guides(albedo, normal, depth, &seed);
  const float* guides[3] = {albedo, normal, depth};
  float* color = image_new(3);
  float* variance = image_new(3);
  float* scaled = image_new(3);
  float* scaled_variance = image_new(3);
  float* reference = image_new(3);
  float* reference_variance = image_new(3);
  float* output = image_new(3);
  for (size_t i = 0; i < n; ++i) {
    color[i] = albedo[i] * (0.5f + lull_test_random(&seed)) * (i % 7 == 0 ? 20.0f : 1.0f);
    variance[i] = 0.01f + 0.1f * lull_test_random(&seed);
  }
  run_scaled(color, NULL, guides, NAN, reference);
  run_scaled(color, variance, guides, NAN, reference_variance);
  CHECK(lull_test_all_finite(reference, n) && lull_test_all_finite(reference_variance, n));

  static const int exponents[] = {-120, -64, -23, -1, 7, 40, 100};
  for (size_t e = 0; e < sizeof exponents / sizeof exponents[0]; ++e) {
    const int j = exponents[e];
    const float k = ldexpf(1.0f, j);
    for (size_t i = 0; i < n; ++i)
      scaled[i] = color[i] * k;
    run_scaled(scaled, NULL, guides, NAN, output);
    int same = 1;
    for (size_t i = 0; i < n; ++i)
      same &= output[i] == reference[i] * k;
    CHECK(same);
    if (abs(j) <= 40) { /* the variance, 2^2j times, is a float */
      for (size_t i = 0; i < n; ++i)
        scaled_variance[i] = variance[i] * k * k;
      run_scaled(scaled, scaled_variance, guides, NAN, output);
      same = 1;
      for (size_t i = 0; i < n; ++i)
        same &= output[i] == reference_variance[i] * k;
      CHECK(same);
    }
    /* explicit: inputScale 2^-j sees the colour at the reference's scale */
    run_scaled(scaled, NULL, guides, 1.0f / k, output);
    double rel = 0.0;
    for (size_t i = 0; i < n; ++i)
      rel = fmax(rel, fabs(output[i] / k - reference[i]) / (fabs(reference[i]) + 1e-3));
    CHECK(rel < 1e-5);
  }

  static const float factors[] = {1e-30f, 1e-12f, 1e12f, 1e20f, 1e35f};
  for (size_t e = 0; e < sizeof factors / sizeof factors[0]; ++e) {
    const float k = factors[e];
    for (size_t i = 0; i < n; ++i)
      scaled[i] = color[i] * k;
    for (int explicit_scale = 0; explicit_scale <= 1; ++explicit_scale) {
      run_scaled(scaled, NULL, guides, explicit_scale ? 1.0f / k : NAN, output);
      double rel = 0.0;
      for (size_t i = 0; i < n; ++i)
        rel = fmax(rel, fabs((double)output[i] / k - reference[i]) / (fabs(reference[i]) + 1e-3));
      CHECK(rel < 1e-5);
    }
  }
  /* explicit scale with a variance image: colour 4 c, variance 16 v */
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = color[i] * 4.0f;
    scaled_variance[i] = variance[i] * 16.0f;
  }
  run_scaled(scaled, scaled_variance, guides, 0.25f, output);
  double rel = 0.0;
  for (size_t i = 0; i < n; ++i)
    rel = fmax(rel, fabs(output[i] / 4.0f - reference_variance[i]) /
                        (fabs(reference_variance[i]) + 1e-3));
  CHECK(rel < 1e-5);

  float* all[] = {albedo, normal, depth, color, variance, scaled, scaled_variance,
                  reference, reference_variance, output};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    free(all[i]);
}

/* A wide range under the automatic scale: most of the image at 1e-20 and
 * a band at 1.  The geometric mean's scale alone took the band past the
 * 1e15 clamp, and it came out 0.0004; the scale is now lowered until the
 * largest value fits, and the band stays near 1 (0.98 with inputScale 1). */
static void test_wide_range_not_clipped(void)
{
  const size_t n = (size_t)W * H * 3;
  float* color = malloc(n * sizeof(float));
  float* output = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i)
    color[i] = i / 3 / W >= H - 4 ? 1.0f : 1e-20f;
  static const float scales[] = {NAN, 1.0f};
  float band[2];
  for (int k = 0; k < 2; ++k) {
    OIDNFilter f = oidnNewFilter(device, "ATrous");
    oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetFilterFloat(f, "inputScale", scales[k]);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    check_no_error("wide range");
    oidnReleaseFilter(f);
    band[k] = output[((size_t)(H - 1) * W + W / 2) * 3];
  }
  if (!(band[0] > 0.9f))
    fprintf(stderr, "wide range: the band came out %g (inputScale 1: %g)\n", (double)band[0],
            (double)band[1]);
  CHECK(band[0] > 0.9f && band[0] < 1.1f);
  CHECK(fabsf(band[0] - band[1]) < 0.02f);
  free(color);
  free(output);
}

/* More variance never means less filtering: a block whose given variance,
 * times the automatic scale squared, passes FLT_MAX had its variance taken
 * as 0 and was left unfiltered (std 0.287 where 1e10 gave 0.033). */
static void test_huge_variance(void)
{
  unsigned seed = 44;
  const size_t n = (size_t)W * H * 3;
  float* color = malloc(n * sizeof(float));
  float* variance = malloc(n * sizeof(float));
  float* output = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i)
    color[i] = 1e-12f * (0.5f + lull_test_random(&seed)); /* scale ~2^40 */
  double spread[2];
  static const float given[2] = {1e10f, 1e16f};
  for (int k = 0; k < 2; ++k) {
    for (size_t i = 0; i < n; ++i)
      variance[i] = 1e-26f;
    for (int y = 10; y < 26; ++y)
      for (int x = 10; x < 26; ++x)
        for (int c = 0; c < 3; ++c)
          variance[((size_t)y * W + (size_t)x) * 3 + (size_t)c] = given[k];
    OIDNFilter f = oidnNewFilter(device, "ATrous");
    oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "variance", variance, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    check_no_error("huge variance");
    oidnReleaseFilter(f);
    double sum = 0, sum2 = 0;
    for (int y = 14; y < 22; ++y)
      for (int x = 14; x < 22; ++x) {
        const double v = output[((size_t)y * W + (size_t)x) * 3] * 1e12;
        sum += v;
        sum2 += v * v;
      }
    spread[k] = sqrt(fmax(sum2 / 64 - (sum / 64) * (sum / 64), 0.0));
  }
  if (!(spread[1] <= spread[0] * 1.05))
    fprintf(stderr, "variance 1e16 (scaled): std %g, 1e10: %g\n", spread[1], spread[0]);
  CHECK(spread[1] <= spread[0] * 1.05);
  free(color);
  free(variance);
  free(output);
}

static void test_exp_neg(void)
{
  double max_rel = 0;
  for (int i = 0; i <= 200000; ++i) {
    const float e = (float)i * 4e-4f;
    const double rel = fabs(lull_exp_neg(e) / exp(-(double)e) - 1.0);
    max_rel = fmax(max_rel, rel);
  }
  CHECK(max_rel < 4e-6);
  CHECK(lull_exp_neg(0.0f) == 1.0f);
  CHECK(lull_exp_neg(INFINITY) < 1e-30f && lull_exp_neg(INFINITY) >= 0.0f);
  CHECK(lull_exp_neg(NAN) < 1e-30f && lull_exp_neg(NAN) >= 0.0f);
}

int main(void)
{
  device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  test_exp_neg();
  test_equals_reference_b3();
  test_constant_stays_constant();
  test_constant_at_float_max();
  test_gaussian_float_range();
  test_normal_edge_does_not_leak();
  test_non_finite_input();
  test_thread_count_invariance();
  test_scale_invariance();
  test_wide_range_not_clipped();
  test_huge_variance();
  test_gaussian_reference();
  oidnReleaseDevice(device);
  return lull_test_result("atrous_properties");
}
