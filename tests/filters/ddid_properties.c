/* Properties of the DDID filter (core/ddid_math.h, core/ddid_cpu.c),
 * through its formulas and through the OIDN API:
 *
 *  - the whole run equals a plain implementation of the thesis' definition
 *    (below, in double precision: the 2D DFT of eq. 4.4 summed directly
 *    over the window for every frequency, the kernels of eq. 4.9-4.10, the
 *    schedule of §4.3), with one buffer and its variance, with and without
 *    a feature, and with halves and a given variance;
 *  - the schedule: r_n = max(4, round(2 sqrt(S_n / 2))), the last step's
 *    a_n = 1; the colour DCT is orthonormal;
 *  - a constant image stays constant; noise of a known variance on a
 *    smooth image is removed (error below a fifth of the noise's);
 *  - the result does not depend on the thread count; NaN and Inf input
 *    give a finite result; tiny images run;
 *  - OIDN's errors for bad input (no variance with one buffer,
 *    outputVariance, iterations out of range) and cancellation. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

#include "ddid_math.h"
#include "test_util.h"

enum { W = 14, H = 11 };

static const double REF_PI = 3.14159265358979323846;

static OIDNDevice device;

/* -- a plain implementation ----------------------------------------------------- */

typedef struct ref_params
{
  int iterations;
  double sigma_s, range, frequency, log_alpha, k_feature;
} ref_params;

static double ref_cos_kernel(double x, double scale, int n)
{
  double t = sqrt(x / (scale * n + 1e-20));
  t = t < REF_PI / 2 ? t : REF_PI / 2;
  return pow(fmax(cos(t), 0.0), n);
}

static int clampi(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

/* y: noisy RGB (3 per pixel), v: its variance, f: one 3-channel feature or
 * NULL; out: RGB. */
static void ref_ddid(const ref_params* rp, const float* y_rgb, const float* v_rgb, const float* f,
                     int w, int h, float* out)
{
  const size_t n = (size_t)w * h;
  double* y = malloc(3 * n * sizeof(double));
  double* v = malloc(3 * n * sizeof(double));
  double* g = malloc(3 * n * sizeof(double));
  double* gn = malloc(3 * n * sizeof(double));
  /* the DCT along the colour axis, eq. 4.11-4.12 */
  double M[3][3];
  for (int k = 0; k < 3; ++k)
    for (int c = 0; c < 3; ++c)
      M[k][c] = (k == 0 ? sqrt(1.0 / 3.0) : sqrt(2.0 / 3.0)) * cos(REF_PI / 6.0 * (2 * c + 1) * k);
  for (size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      double s = 0.0, sv = 0.0;
      for (int c = 0; c < 3; ++c) {
        s += M[k][c] * y_rgb[3 * i + c];
        sv += M[k][c] * M[k][c] * v_rgb[3 * i + c];
      }
      y[3 * i + k] = g[3 * i + k] = s;
      v[3 * i + k] = sv;
    }
  const int N = rp->iterations;
  for (int it = N; it >= 1; --it) {
    const double S = 2.0 * rp->sigma_s * rp->sigma_s * exp(rp->log_alpha * (1.0 - it) / (2.0 * N));
    const double T = rp->range / N * exp(rp->log_alpha * (it - 1.0) / N);
    const double V = rp->frequency / N;
    const int r = (int)fmax(4.0, floor(2.0 * sqrt(S / 2.0) + 0.5));
    const double a = cos((it - 1.0) / N * REF_PI / 2.0);
    const int Wn = 2 * r + 1;
    for (int py = 0; py < h; ++py)
      for (int px = 0; px < w; ++px) {
        const size_t p = (size_t)py * w + px;
        const double var_p = (v[3 * p] + v[3 * p + 1] + v[3 * p + 2]) / 3.0;
        double sk = 0.0, sk2 = 0.0, sg[3] = {0, 0, 0}, sy[3] = {0, 0, 0};
        double* k = malloc((size_t)Wn * Wn * sizeof(double));
        for (int jy = -r; jy <= r; ++jy)
          for (int jx = -r; jx <= r; ++jx) {
            const size_t q = (size_t)clampi(py + jy, 0, h - 1) * w + clampi(px + jx, 0, w - 1);
            double d2 = 0.0, f2 = 0.0;
            for (int c = 0; c < 3; ++c) {
              d2 += (g[3 * q + c] - g[3 * p + c]) * (g[3 * q + c] - g[3 * p + c]);
              if (f)
                f2 += ((double)f[3 * q + c] - f[3 * p + c]) * ((double)f[3 * q + c] - f[3 * p + c]);
            }
            double kq = ref_cos_kernel(d2, T * var_p, it) * exp(-(jx * jx + jy * jy) / S);
            if (f)
              kq *= exp(-f2 / (2.0 * rp->k_feature * rp->k_feature));
            k[(jy + r) * Wn + jx + r] = kq;
            sk += kq;
            sk2 += kq * kq;
            for (int c = 0; c < 3; ++c) {
              sg[c] += kq * g[3 * q + c];
              sy[c] += kq * y[3 * q + c];
            }
          }
        for (int c = 0; c < 3; ++c) {
          const double ng = a * (g[3 * p + c] - sg[c] / sk), ny = a * (y[3 * p + c] - sy[c] / sk);
          double total = 0.0;
          for (int fy = -r; fy <= r; ++fy)
            for (int fx = -r; fx <= r; ++fx) {
              /* D_f and D_-f of eq. 4.4, directly */
              double dre = 0.0, dim = 0.0, mre = 0.0, mim = 0.0;
              for (int jy = -r; jy <= r; ++jy)
                for (int jx = -r; jx <= r; ++jx) {
                  const size_t q = (size_t)clampi(py + jy, 0, h - 1) * w + clampi(px + jx, 0, w - 1);
                  const double kq = k[(jy + r) * Wn + jx + r];
                  const double zr = (g[3 * q + c] - g[3 * p + c] + ng) * kq;
                  const double zi = (y[3 * q + c] - y[3 * p + c] + ny) * kq;
                  const double ang = 2.0 * REF_PI * (fx * jx + fy * jy) / Wn;
                  /* (zr + i zi) e^(-i ang), and at -f e^(+i ang) */
                  dre += zr * cos(ang) + zi * sin(ang);
                  dim += zi * cos(ang) - zr * sin(ang);
                  mre += zr * cos(ang) - zi * sin(ang);
                  mim += zi * cos(ang) + zr * sin(ang);
                }
              const double gr = 0.5 * (dre + mre), gi = 0.5 * (dim - mim); /* eq. 4.8 */
              total += ref_cos_kernel((gr * gr + gi * gi) / sk2, V * v[3 * p + c], it) * dim;
            }
          gn[3 * p + c] = y[3 * p + c] - a * total / (Wn * Wn);
        }
        free(k);
      }
    memcpy(g, gn, 3 * n * sizeof(double));
  }
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) {
      double s = 0.0;
      for (int k = 0; k < 3; ++k)
        s += M[k][c] * g[3 * i + k];
      out[3 * i + c] = (float)s;
    }
  free(y);
  free(v);
  free(g);
  free(gn);
}

/* -- through the API -------------------------------------------------------------- */

typedef struct inputs
{
  float *color, *a, *b, *variance, *albedo;
} inputs;

/* A shaded image with an edge, noisy halves of a known variance. */
static void inputs_make(inputs* in, int w, int h, unsigned seed, float noise)
{
  const size_t n = (size_t)w * h * 3;
  in->color = calloc(n, sizeof(float));
  in->a = calloc(n, sizeof(float));
  in->b = calloc(n, sizeof(float));
  in->variance = calloc(n, sizeof(float));
  in->albedo = calloc(n, sizeof(float));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * w + x;
      const int right = x > w / 2;
      for (int c = 0; c < 3; ++c) {
        const float base = (right ? 0.7f : 0.2f) + 0.03f * (float)c + 0.01f * (float)y;
        /* uniform noise of variance noise^2 / 12 per half */
        in->a[3 * i + c] = base + noise * (lull_test_random(&seed) - 0.5f);
        in->b[3 * i + c] = base + noise * (lull_test_random(&seed) - 0.5f);
        in->color[3 * i + c] = 0.5f * (in->a[3 * i + c] + in->b[3 * i + c]);
        in->variance[3 * i + c] = noise * noise / 24.0f;
        in->albedo[3 * i + c] = right ? 0.8f : 0.3f;
      }
    }
}

static void inputs_free(inputs* in)
{
  free(in->color);
  free(in->a);
  free(in->b);
  free(in->variance);
  free(in->albedo);
}

static void set(OIDNFilter f, const char* name, const float* data, int w, int h)
{
  oidnSetSharedFilterImage(f, name, (void*)data, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 0, 0, 0);
}

enum { ONE_BUFFER, HALVES, HALVES_WITH_VARIANCE };

static OIDNError run(OIDNDevice dev, const inputs* in, int mode, int albedo, const ref_params* rp,
                     float* output, int w, int h)
{
  OIDNFilter f = oidnNewFilter(dev, "DDID");
  if (mode == ONE_BUFFER) {
    set(f, "color", in->color, w, h);
    set(f, "variance", in->variance, w, h);
  } else {
    set(f, "colorA", in->a, w, h);
    set(f, "colorB", in->b, w, h);
    if (mode == HALVES_WITH_VARIANCE)
      set(f, "variance", in->variance, w, h);
  }
  if (albedo)
    set(f, "albedo", in->albedo, w, h);
  set(f, "output", output, w, h);
  oidnSetFilterInt(f, "iterations", rp->iterations);
  oidnSetFilterFloat(f, "spatialSigma", (float)rp->sigma_s);
  oidnSetFilterFloat(f, "rangeScale", (float)rp->range);
  oidnSetFilterFloat(f, "frequencyScale", (float)rp->frequency);
  oidnSetFilterFloat(f, "logAlpha", (float)rp->log_alpha);
  oidnSetFilterFloat(f, "featureSensitivity", (float)rp->k_feature);
  oidnSetFilterFloat(f, "inputScale", 1.0f);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  oidnReleaseFilter(f);
  const char* message = NULL;
  const OIDNError e = oidnGetDeviceError(dev, &message);
  if (e != OIDN_ERROR_NONE)
    printf("DDID: error %d: %s\n", (int)e, message ? message : "");
  return e;
}

static void test_schedule(void)
{
  /* §4.3 with the thesis' constants: windows of radius 4, 4, 4, 4, 6, 10,
   * 16 and 26 in the last step (53 x 53), where the confidence is 1 */
  const int expected[8] = {4, 4, 4, 4, 6, 10, 16, 26};
  for (int n = 8; n >= 1; --n)
    CHECK_EQ_INT(lull_ddid_step_of(n, 8, 13.0f, 5.3f, 13.0f, 15.0f).radius, expected[8 - n]);
  const lull_ddid_step last = lull_ddid_step_of(1, 8, 13.0f, 5.3f, 13.0f, 15.0f);
  CHECK(fabsf(last.a - 1.0f) < 1e-6f && fabsf(last.s - 338.0f) < 1e-3f);
  /* the colour DCT is orthonormal */
  for (int k = 0; k < 3; ++k)
    for (int l = 0; l < 3; ++l) {
      float s = 0.0f;
      for (int c = 0; c < 3; ++c)
        s += lull_ddid_dct(k, c) * lull_ddid_dct(l, c);
      CHECK(fabsf(s - (k == l ? 1.0f : 0.0f)) < 1e-6f);
    }
}

static void test_equals_plain_implementation(void)
{
  inputs in;
  inputs_make(&in, W, H, 7u, 0.3f);
  const ref_params rp = {2, 2.5, 5.3, 13.0, 15.0, 0.2}; /* the thesis' gamma_f */
  float* out = calloc((size_t)W * H * 3, sizeof(float));
  float* ref = calloc((size_t)W * H * 3, sizeof(float));
  for (int mode = ONE_BUFFER; mode <= HALVES_WITH_VARIANCE; mode += 2)
    for (int albedo = 0; albedo <= 1; ++albedo) {
      CHECK_EQ_INT(run(device, &in, mode, albedo, &rp, out, W, H), OIDN_ERROR_NONE);
      /* with halves and a variance: the halves' mean, that variance */
      ref_ddid(&rp, in.color, in.variance, albedo ? in.albedo : NULL, W, H, ref);
      double worst = 0.0, moved = 0.0;
      for (size_t i = 0; i < (size_t)W * H * 3; ++i) {
        worst = fmax(worst, fabs((double)out[i] - ref[i]));
        moved = fmax(moved, fabs((double)ref[i] - in.color[i]));
      }
      printf("%s, albedo %d: |lull - plain| %.2e (the filter moved values by up to %.3f)\n",
             mode == ONE_BUFFER ? "one buffer" : "halves and variance", albedo, worst, moved);
      CHECK(worst < 2e-5);
      CHECK(moved > 0.05);
    }
  free(out);
  free(ref);
  inputs_free(&in);
}

static void test_constant_and_noise(void)
{
  enum { CW = 40, CH = 32 };
  inputs in;
  inputs_make(&in, CW, CH, 3u, 0.0f);
  const size_t n = (size_t)CW * CH * 3;
  for (size_t i = 0; i < n; ++i) {
    in.color[i] = in.a[i] = in.b[i] = 0.6f;
    in.variance[i] = 0.01f;
  }
  const ref_params rp = {8, 13.0, 5.3, 200.0, 15.0, 0.2}; /* the defaults */
  float* out = calloc(n, sizeof(float));
  CHECK_EQ_INT(run(device, &in, ONE_BUFFER, 1, &rp, out, CW, CH), OIDN_ERROR_NONE);
  float worst = 0.0f;
  for (size_t i = 0; i < n; ++i)
    worst = fmaxf(worst, fabsf(out[i] - 0.6f));
  printf("constant image: largest change %.2e\n", worst);
  CHECK(worst < 1e-5f);
  inputs_free(&in);

  /* noise of a known variance on a smooth image with an edge */
  inputs_make(&in, CW, CH, 11u, 0.4f);
  inputs clean;
  inputs_make(&clean, CW, CH, 11u, 0.0f);
  CHECK_EQ_INT(run(device, &in, HALVES, 0, &rp, out, CW, CH), OIDN_ERROR_NONE);
  double before = 0.0, after = 0.0;
  for (size_t i = 0; i < n; ++i) {
    before += ((double)in.color[i] - clean.color[i]) * ((double)in.color[i] - clean.color[i]);
    after += ((double)out[i] - clean.color[i]) * ((double)out[i] - clean.color[i]);
  }
  printf("noise: MSE %.2e -> %.2e (%.3fx)\n", before / n, after / n, after / before);
  CHECK(after < 0.2 * before);
  free(out);
  inputs_free(&in);
  inputs_free(&clean);
}

static void test_threads_and_bad_pixels(void)
{
  inputs in;
  inputs_make(&in, W, H, 5u, 0.3f);
  const ref_params rp = {3, 4.0, 5.3, 200.0, 15.0, 0.2};
  const size_t n = (size_t)W * H * 3;
  float* a = calloc(n, sizeof(float));
  float* b = calloc(n, sizeof(float));
  OIDNDevice one = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnSetDeviceInt(one, "numThreads", 1);
  oidnCommitDevice(one);
  CHECK_EQ_INT(run(one, &in, HALVES, 1, &rp, a, W, H), OIDN_ERROR_NONE);
  oidnReleaseDevice(one);
  CHECK_EQ_INT(run(device, &in, HALVES, 1, &rp, b, W, H), OIDN_ERROR_NONE);
  CHECK(memcmp(a, b, n * sizeof(float)) == 0);
  /* NaN and Inf in colour, variance and albedo */
  in.a[0] = NAN;
  in.b[5] = INFINITY;
  in.color[7] = -INFINITY;
  in.variance[9] = NAN;
  in.albedo[11] = INFINITY;
  CHECK_EQ_INT(run(device, &in, HALVES, 1, &rp, a, W, H), OIDN_ERROR_NONE);
  CHECK(lull_test_all_finite(a, n));
  CHECK_EQ_INT(run(device, &in, ONE_BUFFER, 1, &rp, a, W, H), OIDN_ERROR_NONE);
  CHECK(lull_test_all_finite(a, n));
  /* tiny images */
  const int sizes[3][2] = {{1, 1}, {2, 1}, {3, 5}};
  for (int k = 0; k < 3; ++k) {
    inputs t;
    inputs_make(&t, sizes[k][0], sizes[k][1], 2u, 0.2f);
    CHECK_EQ_INT(run(device, &t, HALVES, 1, &rp, a, sizes[k][0], sizes[k][1]), OIDN_ERROR_NONE);
    CHECK(lull_test_all_finite(a, (size_t)sizes[k][0] * sizes[k][1] * 3));
    inputs_free(&t);
  }
  free(a);
  free(b);
  inputs_free(&in);
}

static bool cancel_at_once(void* user, double done)
{
  (void)user;
  (void)done;
  return false;
}

static OIDNError commit_error(OIDNFilter f)
{
  oidnCommitFilter(f);
  const char* message = NULL;
  const OIDNError e = oidnGetDeviceError(device, &message);
  oidnReleaseFilter(f);
  return e;
}

static void test_errors(void)
{
  inputs in;
  inputs_make(&in, W, H, 1u, 0.2f);
  float* out = calloc((size_t)W * H * 3, sizeof(float));
  /* one buffer without its variance */
  OIDNFilter f = oidnNewFilter(device, "DDID");
  set(f, "color", in.color, W, H);
  set(f, "output", out, W, H);
  CHECK_EQ_INT(commit_error(f), OIDN_ERROR_INVALID_OPERATION);
  /* outputVariance */
  f = oidnNewFilter(device, "DDID");
  set(f, "colorA", in.a, W, H);
  set(f, "colorB", in.b, W, H);
  set(f, "output", out, W, H);
  set(f, "outputVariance", in.variance, W, H);
  CHECK_EQ_INT(commit_error(f), OIDN_ERROR_INVALID_OPERATION);
  /* iterations out of range */
  f = oidnNewFilter(device, "DDID");
  set(f, "colorA", in.a, W, H);
  set(f, "colorB", in.b, W, H);
  set(f, "output", out, W, H);
  oidnSetFilterInt(f, "iterations", 0);
  CHECK_EQ_INT(commit_error(f), OIDN_ERROR_INVALID_ARGUMENT);
  /* cancelled: OIDN's CANCELLED, the output untouched */
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    out[i] = -1.0f;
  f = oidnNewFilter(device, "DDID");
  set(f, "colorA", in.a, W, H);
  set(f, "colorB", in.b, W, H);
  set(f, "output", out, W, H);
  oidnSetFilterProgressMonitorFunction(f, cancel_at_once, NULL);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  const char* message = NULL;
  CHECK_EQ_INT(oidnGetDeviceError(device, &message), OIDN_ERROR_CANCELLED);
  oidnReleaseFilter(f);
  CHECK(out[0] == -1.0f && out[3 * W * H - 1] == -1.0f);
  free(out);
  inputs_free(&in);
}

int main(void)
{
  device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  test_schedule();
  test_equals_plain_implementation();
  test_constant_and_noise();
  test_threads_and_bad_pixels();
  test_errors();
  oidnReleaseDevice(device);
  return lull_test_result("ddid_properties");
}
