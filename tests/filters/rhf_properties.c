/* Properties of the RHF filter (core/rhf_math.h, core/rhf_cpu.c), through
 * the OIDN API, the histograms passed as the documented views of one
 * (height, width, bins, 3) array:
 *
 *  - the whole run equals a plain implementation of the definition (below,
 *    in double precision: every patch pair's chi^2 distance summed
 *    directly, the aggregation as a scatter of whole patches, the scales'
 *    pyramid and fusion), over search and patch radii, thresholds and 1 to
 *    3 scales;
 *  - a histogram of one bin makes every patch similar (its chi^2 terms
 *    are 0): the result equals the one with an unbounded threshold;
 *  - a constant image with equal histograms stays constant;
 *  - noise is removed (MSE to the true image a fraction of the input's)
 *    and an edge whose sides' histograms differ is kept (the error at the
 *    edge below the one with every patch averaged);
 *  - the result does not depend on the thread count; NaN, Inf and
 *    negative inputs give a finite result; tiny images run;
 *  - OIDN's errors for bad input (no histograms, a gap in their numbers,
 *    a wrong size or channel count, parameters out of range) and
 *    cancellation. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

#include "rhf_math.h"
#include "test_util.h"

enum { W = 23, H = 17, SAMPLES = 16 };

static const float GAMMA = 2.2f, MAXV = 2.5f;

static OIDNDevice device;

/* -- inputs: a render of SAMPLES samples a pixel, its histograms -------------------- */

typedef struct inputs
{
  int w, h, bins;
  float* color; /* the samples' means, RGB */
  float* hist;  /* (h, w, bins, 3) */
  float* truth; /* the expected value */
} inputs;

/* A step edge (dark left, bright right), a gradient; samples are the
 * expected value times an exponential-like random factor (mean 1). */
static void inputs_make(inputs* in, int w, int h, int bins, unsigned seed)
{
  const size_t n = (size_t)w * h;
  in->w = w;
  in->h = h;
  in->bins = bins;
  in->color = calloc(3 * n, sizeof(float));
  in->hist = calloc(n * (size_t)bins * 3, sizeof(float));
  in->truth = calloc(3 * n, sizeof(float));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * w + x;
      for (int c = 0; c < 3; ++c) {
        const float e = (x < w / 2 ? 0.08f : 0.9f) * (1.0f + 0.3f * c) + 0.01f * y;
        in->truth[3 * i + c] = e;
        double sum = 0.0;
        for (int s = 0; s < SAMPLES; ++s) {
          const float r = lull_test_random(&seed);
          const float v = e * -logf(1.0f - 0.999f * r);
          sum += v;
          int k0;
          float w0;
          lull_rhf_bin(v, bins, GAMMA, MAXV, &k0, &w0);
          in->hist[(i * (size_t)bins + (size_t)k0) * 3 + c] += w0;
          if (k0 + 1 < bins)
            in->hist[(i * (size_t)bins + (size_t)k0 + 1) * 3 + c] += 1.0f - w0;
        }
        in->color[3 * i + c] = (float)(sum / SAMPLES);
      }
    }
}

static void inputs_free(inputs* in)
{
  free(in->color);
  free(in->hist);
  free(in->truth);
}

typedef struct rparams
{
  int radius, patch, scales;
  float threshold;
} rparams;

/* Runs RHF on the inputs (bins of them; skip: a histogram not given). */
static OIDNError run_on(OIDNDevice dev, const inputs* in, const rparams* p, float* out,
                        int skip, bool (*monitor)(void*, double))
{
  OIDNFilter f = oidnNewFilter(dev, "RHF");
  oidnSetSharedFilterImage(f, "color", in->color, OIDN_FORMAT_FLOAT3, (size_t)in->w,
                           (size_t)in->h, 0, 0, 0);
  for (int k = 0; k < in->bins; ++k) {
    if (k == skip)
      continue;
    char name[32];
    snprintf(name, sizeof name, "histogram%d", k);
    oidnSetSharedFilterImage(f, name, in->hist, OIDN_FORMAT_FLOAT3, (size_t)in->w,
                             (size_t)in->h, 12 * (size_t)k, 12 * (size_t)in->bins, 0);
  }
  oidnSetSharedFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, (size_t)in->w, (size_t)in->h, 0,
                           0, 0);
  oidnSetFilterInt(f, "searchRadius", p->radius);
  oidnSetFilterInt(f, "patchRadius", p->patch);
  oidnSetFilterInt(f, "scales", p->scales);
  oidnSetFilterFloat(f, "threshold", p->threshold);
  if (monitor)
    oidnSetFilterProgressMonitorFunction(f, monitor, NULL);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  oidnReleaseFilter(f);
  const char* message = NULL;
  const OIDNError e = oidnGetDeviceError(dev, &message);
  if (e != OIDN_ERROR_NONE && !monitor)
    printf("RHF: error %d: %s\n", (int)e, message ? message : "");
  return e;
}

static OIDNError run(const inputs* in, const rparams* p, float* out)
{
  return run_on(device, in, p, out, -1, NULL);
}

/* -- a plain implementation ----------------------------------------------------- */

typedef struct level
{
  int w, h, bins;
  double* u;    /* 3 per pixel */
  double* hist; /* (h, w, bins, 3) */
  double* f;    /* filtered, 3 per pixel */
  double* r;    /* fused */
} level;

static int clampi(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

static double chi2(double hp, double hq, double np, double nq, int* used)
{
  if (!(hp + hq > 0.0)) {
    *used = 0;
    return 0.0;
  }
  *used = 1;
  double a = 1.0, b = 1.0;
  if (np > 0.0 && nq > 0.0) {
    a = sqrt(nq / np);
    b = 1.0 / a;
  }
  const double d = a * hp - b * hq;
  return d * d / (hp + hq);
}

static void ref_filter(const rparams* p, level* L)
{
  const int w = L->w, h = L->h, B = L->bins, b = p->radius, f = p->patch;
  const size_t n = (size_t)w * h;
  double* cnt = calloc(3 * n, sizeof(double));
  double* acc = calloc(3 * n, sizeof(double));
  double* nsum = calloc(3 * n, sizeof(double));
  for (size_t i = 0; i < n; ++i)
    for (int k = 0; k < B; ++k)
      for (int c = 0; c < 3; ++c)
        nsum[3 * i + c] += L->hist[(i * B + k) * 3 + c];
  for (int py = 0; py < h; ++py)
    for (int px = 0; px < w; ++px)
      for (int qy = py - b; qy <= py + b; ++qy)
        for (int qx = px - b; qx <= px + b; ++qx) {
          if (qx < 0 || qy < 0 || qx >= w || qy >= h)
            continue;
          double sum = 0.0;
          int used = 0;
          for (int oy = -f; oy <= f; ++oy)
            for (int ox = -f; ox <= f; ++ox) {
              const size_t a = (size_t)clampi(py + oy, 0, h - 1) * w + clampi(px + ox, 0, w - 1);
              const size_t c2 = (size_t)clampi(qy + oy, 0, h - 1) * w + clampi(qx + ox, 0, w - 1);
              for (int k = 0; k < B; ++k)
                for (int c = 0; c < 3; ++c) {
                  int u = 0;
                  sum += chi2(L->hist[(a * B + k) * 3 + c], L->hist[(c2 * B + k) * 3 + c],
                              nsum[3 * a + c], nsum[3 * c2 + c], &u);
                  used += u;
                }
            }
          if (!(sum <= p->threshold * used))
            continue;
          /* q's whole patch onto p's */
          for (int oy = -f; oy <= f; ++oy)
            for (int ox = -f; ox <= f; ++ox) {
              const int x = px + ox, y = py + oy;
              if (x < 0 || y < 0 || x >= w || y >= h)
                continue;
              const size_t to = (size_t)y * w + x;
              const size_t from =
                  (size_t)clampi(qy + oy, 0, h - 1) * w + clampi(qx + ox, 0, w - 1);
              for (int c = 0; c < 3; ++c) {
                acc[3 * to + c] += L->u[3 * from + c];
                cnt[3 * to + c] += 1.0;
              }
            }
        }
  for (size_t i = 0; i < 3 * n; ++i)
    L->f[i] = acc[i] / cnt[i];
  free(cnt);
  free(acc);
  free(nsum);
}

/* 2 x 2 blocks of the finer level, clamped at the edge. */
static double down(const double* fine, int w, int h, int stride, int c, int x, int y, int mean)
{
  double s = 0.0;
  int m = 0;
  for (int yy = 2 * y; yy <= 2 * y + 1; ++yy)
    for (int xx = 2 * x; xx <= 2 * x + 1; ++xx) {
      if (xx >= w || yy >= h)
        continue;
      s += fine[((size_t)yy * w + xx) * stride + c];
      ++m;
    }
  return mean ? s / m : s;
}

static double up(const double* coarse, int cw, int ch, int c, int x, int y)
{
  double fx = fmin(fmax((x + 0.5) * 0.5 - 0.5, 0.0), cw - 1.0);
  double fy = fmin(fmax((y + 0.5) * 0.5 - 0.5, 0.0), ch - 1.0);
  const int x0 = (int)fx, y0 = (int)fy;
  const int x1 = x0 + 1 < cw ? x0 + 1 : x0, y1 = y0 + 1 < ch ? y0 + 1 : y0;
  const double ax = fx - x0, ay = fy - y0;
#define AT(X, Y) coarse[((size_t)(Y)*cw + (X)) * 3 + c]
  return (1 - ay) * ((1 - ax) * AT(x0, y0) + ax * AT(x1, y0)) +
         ay * ((1 - ax) * AT(x0, y1) + ax * AT(x1, y1));
#undef AT
}

static void ref_rhf(const rparams* p, const inputs* in, float* out)
{
  level L[4];
  for (int s = 0; s < p->scales; ++s) {
    const int w = s == 0 ? in->w : (L[s - 1].w + 1) / 2;
    const int h = s == 0 ? in->h : (L[s - 1].h + 1) / 2;
    const size_t n = (size_t)w * h;
    L[s].w = w;
    L[s].h = h;
    L[s].bins = in->bins;
    L[s].u = calloc(3 * n, sizeof(double));
    L[s].f = calloc(3 * n, sizeof(double));
    L[s].r = calloc(3 * n, sizeof(double));
    L[s].hist = calloc(3 * n * in->bins, sizeof(double));
    for (size_t i = 0; i < n; ++i) {
      for (int c = 0; c < 3; ++c)
        L[s].u[3 * i + c] =
            s == 0 ? in->color[3 * i + c]
                   : down(L[s - 1].u, L[s - 1].w, L[s - 1].h, 3, c, (int)(i % w), (int)(i / w), 1);
      for (int k = 0; k < 3 * in->bins; ++k)
        L[s].hist[i * 3 * in->bins + k] =
            s == 0 ? in->hist[i * 3 * in->bins + k]
                   : down(L[s - 1].hist, L[s - 1].w, L[s - 1].h, 3 * in->bins, k, (int)(i % w),
                          (int)(i / w), 0);
    }
    ref_filter(p, &L[s]);
  }
  memcpy(L[p->scales - 1].r, L[p->scales - 1].f,
         3 * (size_t)L[p->scales - 1].w * L[p->scales - 1].h * sizeof(double));
  for (int s = p->scales - 2; s >= 0; --s) {
    const level* C = &L[s + 1];
    double* d = calloc(3 * (size_t)C->w * C->h, sizeof(double));
    for (int y = 0; y < C->h; ++y)
      for (int x = 0; x < C->w; ++x)
        for (int c = 0; c < 3; ++c)
          d[((size_t)y * C->w + x) * 3 + c] = down(L[s].f, L[s].w, L[s].h, 3, c, x, y, 1);
    for (int y = 0; y < L[s].h; ++y)
      for (int x = 0; x < L[s].w; ++x)
        for (int c = 0; c < 3; ++c) {
          const size_t i = ((size_t)y * L[s].w + x) * 3 + c;
          L[s].r[i] = L[s].f[i] - up(d, C->w, C->h, c, x, y) + up(C->r, C->w, C->h, c, x, y);
        }
    free(d);
  }
  for (size_t i = 0; i < 3 * (size_t)in->w * in->h; ++i)
    out[i] = (float)L[0].r[i];
  for (int s = 0; s < p->scales; ++s) {
    free(L[s].u);
    free(L[s].f);
    free(L[s].r);
    free(L[s].hist);
  }
}

/* -- the properties ---------------------------------------------------------------- */

static double mse(const float* a, const float* b, size_t n)
{
  double s = 0.0;
  for (size_t i = 0; i < n; ++i)
    s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
  return s / (double)n;
}

static void test_equals_plain_implementation(void)
{
  const rparams cases[] = {{6, 1, 1, 1.0f}, {3, 1, 2, 1.0f}, {2, 0, 1, 0.7f},
                           {4, 2, 3, 1.5f}, {6, 1, 2, 1.0f}};
  inputs in;
  inputs_make(&in, W, H, 8, 7u);
  const size_t n = 3 * (size_t)W * H;
  float* out = calloc(n, sizeof(float));
  float* ref = calloc(n, sizeof(float));
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k) {
    CHECK_EQ_INT(run(&in, &cases[k], out), OIDN_ERROR_NONE);
    ref_rhf(&cases[k], &in, ref);
    const double worst = lull_test_max_abs_diff(out, ref, n);
    const double moved = lull_test_max_abs_diff(out, in.color, n);
    printf("RHF b %d f %d scales %d k %.1f vs plain implementation: max |diff| %.2e "
           "(input moved by up to %.2f)\n",
           cases[k].radius, cases[k].patch, cases[k].scales, cases[k].threshold, worst, moved);
    CHECK(worst < 1e-5);
    CHECK(moved > 0.05);
  }
  free(out);
  free(ref);
  inputs_free(&in);
}

static void test_one_bin_and_constant(void)
{
  const size_t n = 3 * (size_t)W * H;
  inputs one, eight;
  inputs_make(&one, W, H, 1, 9u);
  inputs_make(&eight, W, H, 8, 9u); /* the same samples: the same colour */
  float* a = calloc(n, sizeof(float));
  float* b = calloc(n, sizeof(float));
  const rparams p = {3, 1, 2, 1.0f}, all = {3, 1, 2, 1e6f};
  CHECK_EQ_INT(run(&one, &p, a), OIDN_ERROR_NONE);
  CHECK_EQ_INT(run(&eight, &all, b), OIDN_ERROR_NONE);
  const double d = lull_test_max_abs_diff(a, b, n);
  printf("RHF one bin vs every patch similar: max |diff| %.2e\n", d);
  CHECK(d < 1e-6);
  /* a constant image with equal histograms */
  for (size_t i = 0; i < n; ++i)
    one.color[i] = 0.625f;
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    one.hist[i] = (float)SAMPLES;
  const rparams three = {4, 1, 3, 1.0f};
  CHECK_EQ_INT(run(&one, &three, a), OIDN_ERROR_NONE);
  float worst = 0.0f;
  for (size_t i = 0; i < n; ++i)
    worst = fmaxf(worst, fabsf(a[i] - 0.625f));
  printf("RHF constant image, 3 scales: largest change %.2e\n", worst);
  CHECK(worst < 1e-6f);
  free(a);
  free(b);
  inputs_free(&one);
  inputs_free(&eight);
}

static void test_denoises_and_keeps_edges(void)
{
  enum { BW = 48, BH = 40 };
  inputs in;
  inputs_make(&in, BW, BH, 8, 11u);
  const size_t n = 3 * (size_t)BW * BH;
  float* out = calloc(n, sizeof(float));
  float* blur = calloc(n, sizeof(float));
  const rparams p = {6, 1, 2, 1.0f}, all = {6, 1, 2, 1e6f};
  CHECK_EQ_INT(run(&in, &p, out), OIDN_ERROR_NONE);
  CHECK_EQ_INT(run(&in, &all, blur), OIDN_ERROR_NONE);
  const double before = mse(in.color, in.truth, n), after = mse(out, in.truth, n);
  /* the edge: the columns next to it */
  double e_out = 0.0, e_blur = 0.0;
  for (int y = 0; y < BH; ++y)
    for (int x = BW / 2 - 2; x < BW / 2 + 2; ++x)
      for (int c = 0; c < 3; ++c) {
        const size_t i = ((size_t)y * BW + x) * 3 + c;
        e_out += (out[i] - in.truth[i]) * (out[i] - in.truth[i]);
        e_blur += (blur[i] - in.truth[i]) * (blur[i] - in.truth[i]);
      }
  printf("RHF: MSE %.5f -> %.5f; at the edge %.4f (every patch averaged: %.4f)\n", before, after,
         e_out, e_blur);
  CHECK(after < 0.35 * before);
  CHECK(e_out < 0.25 * e_blur);
  free(out);
  free(blur);
  inputs_free(&in);
}

static void test_threads_and_bad_pixels(void)
{
  inputs in;
  inputs_make(&in, W, H, 8, 13u);
  const size_t n = 3 * (size_t)W * H;
  float* a = calloc(n, sizeof(float));
  float* b = calloc(n, sizeof(float));
  const rparams p = {4, 1, 2, 1.0f};
  OIDNDevice one = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnSetDeviceInt(one, "numThreads", 1);
  oidnCommitDevice(one);
  CHECK_EQ_INT(run_on(one, &in, &p, a, -1, NULL), OIDN_ERROR_NONE);
  oidnReleaseDevice(one);
  CHECK_EQ_INT(run(&in, &p, b), OIDN_ERROR_NONE);
  CHECK(memcmp(a, b, n * sizeof(float)) == 0);
  in.color[0] = NAN;
  in.color[7] = INFINITY;
  in.color[40] = -INFINITY;
  in.hist[3] = NAN;
  in.hist[50] = INFINITY;
  in.hist[99] = -2.0f;
  CHECK_EQ_INT(run(&in, &p, a), OIDN_ERROR_NONE);
  CHECK(lull_test_all_finite(a, n));
  inputs_free(&in);
  const int sizes[][2] = {{1, 1}, {2, 3}, {5, 1}};
  for (int k = 0; k < 3; ++k) {
    inputs t;
    inputs_make(&t, sizes[k][0], sizes[k][1], 4, 3u);
    const rparams big = {6, 2, 3, 1.0f};
    CHECK_EQ_INT(run(&t, &big, a), OIDN_ERROR_NONE);
    CHECK(lull_test_all_finite(a, (size_t)sizes[k][0] * sizes[k][1] * 3));
    inputs_free(&t);
  }
  free(a);
  free(b);
}

static bool cancel_at_once(void* user, double done)
{
  (void)user;
  (void)done;
  return false;
}

static void test_errors(void)
{
  inputs in;
  inputs_make(&in, W, H, 4, 1u);
  const size_t n = 3 * (size_t)W * H;
  float* out = calloc(n, sizeof(float));
  const rparams p = {6, 1, 2, 1.0f};
  /* no histograms */
  inputs none = in;
  none.bins = 0;
  CHECK_EQ_INT(run(&none, &p, out), OIDN_ERROR_INVALID_OPERATION);
  /* a gap: histogram1 missing */
  CHECK_EQ_INT(run_on(device, &in, &p, out, 1, NULL), OIDN_ERROR_INVALID_OPERATION);
  /* parameters out of range */
  const rparams bad[] = {{0, 1, 2, 1.0f}, {6, 9, 2, 1.0f}, {6, 1, 0, 1.0f}, {6, 1, 2, -1.0f}};
  for (int k = 0; k < 4; ++k)
    CHECK_EQ_INT(run(&in, &bad[k], out), OIDN_ERROR_INVALID_ARGUMENT);
  /* a histogram of another size, of one channel */
  for (int k = 0; k < 2; ++k) {
    OIDNFilter f = oidnNewFilter(device, "RHF");
    oidnSetSharedFilterImage(f, "color", in.color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "histogram0", in.hist, k ? OIDN_FORMAT_FLOAT : OIDN_FORMAT_FLOAT3,
                             k ? W : W - 1, H, 0, 0, 0);
    oidnSetSharedFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnCommitFilter(f);
    const char* message = NULL;
    CHECK_EQ_INT(oidnGetDeviceError(device, &message), OIDN_ERROR_INVALID_OPERATION);
    printf("RHF bad histogram: %s\n", message ? message : "");
    oidnReleaseFilter(f);
  }
  /* cancelled: OIDN's CANCELLED, the output untouched */
  for (size_t i = 0; i < n; ++i)
    out[i] = -1.0f;
  CHECK_EQ_INT(run_on(device, &in, &p, out, -1, cancel_at_once), OIDN_ERROR_CANCELLED);
  CHECK(out[0] == -1.0f && out[n - 1] == -1.0f);
  free(out);
  inputs_free(&in);
}

int main(void)
{
  device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  test_equals_plain_implementation();
  test_one_bin_and_constant();
  test_denoises_and_keeps_edges();
  test_threads_and_bad_pixels();
  test_errors();
  oidnReleaseDevice(device);
  return lull_test_result("rhf_properties");
}
