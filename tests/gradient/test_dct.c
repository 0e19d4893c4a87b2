/* The batched FFT and DCT against the textbook O(n^2) sums in double, for
 * lengths of every kind: powers of two, 2/3/5-smooth, small primes (the
 * generic radix), products with them, and large primes (Bluestein). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dct.h"
#include "test_util.h"

enum { B = LULL_DCT_BATCH };

static const double PI = 3.14159265358979323846;

/* Max error of the DCT-II and of its inverse, relative to the largest
 * coefficient, for batch data x (element-major). */
static void check_dct(int n, unsigned* rng)
{
  lull_dct_plan plan;
  lull_error err = {LULL_OK, ""};
  CHECK_EQ_INT(lull_dct_plan_init(&plan, n, &err), LULL_OK);
  float* data = malloc((size_t)n * B * sizeof(float));
  float* orig = malloc((size_t)n * B * sizeof(float));
  float* scratch = malloc(lull_dct_scratch_floats(&plan) * sizeof(float));
  for (size_t i = 0; i < (size_t)n * B; ++i)
    orig[i] = data[i] = lull_test_random(rng) - 0.5f;
  lull_dct_batch(&plan, data, 0, scratch);
  double max_err = 0.0, max_coef = 0.0;
  for (int b = 0; b < B; b += 5)
    for (int k = 0; k < n; ++k) {
      double sum = 0.0;
      for (int j = 0; j < n; ++j)
        sum += orig[(size_t)j * B + b] * cos(PI * k * (2.0 * j + 1.0) / (2.0 * n));
      max_err = fmax(max_err, fabs(sum - data[(size_t)k * B + b]));
      max_coef = fmax(max_coef, fabs(sum));
    }
  if (!(max_err <= 2e-6 * max_coef * (1.0 + log2(n))))
    fprintf(stderr, "DCT-II n=%d: max error %g (max coefficient %g)\n", n, max_err, max_coef);
  CHECK(max_err <= 2e-6 * max_coef * (1.0 + log2(n)));
  lull_dct_batch(&plan, data, 1, scratch);
  const double round_trip = lull_test_max_abs_diff(data, orig, (size_t)n * B);
  if (!(round_trip <= 2e-6 * (1.0 + log2(n))))
    fprintf(stderr, "DCT round trip n=%d: %g\n", n, round_trip);
  CHECK(round_trip <= 2e-6 * (1.0 + log2(n)));
  free(data);
  free(orig);
  free(scratch);
  lull_dct_plan_free(&plan);
}

static void check_fft(int n, unsigned* rng)
{
  lull_dct_plan plan; /* owns an FFT of length n */
  lull_error err = {LULL_OK, ""};
  CHECK_EQ_INT(lull_dct_plan_init(&plan, n, &err), LULL_OK);
  float* re = malloc((size_t)n * B * sizeof(float));
  float* im = malloc((size_t)n * B * sizeof(float));
  float* r0 = malloc((size_t)n * B * sizeof(float));
  float* i0 = malloc((size_t)n * B * sizeof(float));
  float* scratch = malloc(lull_fft_scratch_floats(&plan.fft) * sizeof(float));
  for (size_t i = 0; i < (size_t)n * B; ++i) {
    r0[i] = re[i] = lull_test_random(rng) - 0.5f;
    i0[i] = im[i] = lull_test_random(rng) - 0.5f;
  }
  lull_fft_batch(&plan.fft, re, im, scratch);
  double max_err = 0.0;
  for (int b = 0; b < B; b += 7)
    for (int k = 0; k < n; ++k) {
      double sr = 0.0, si = 0.0;
      for (int j = 0; j < n; ++j) {
        const double a = -2.0 * PI * (double)((long long)j * k % n) / n;
        const double xr = r0[(size_t)j * B + b], xi = i0[(size_t)j * B + b];
        sr += xr * cos(a) - xi * sin(a);
        si += xr * sin(a) + xi * cos(a);
      }
      max_err = fmax(max_err, fmax(fabs(sr - re[(size_t)k * B + b]), fabs(si - im[(size_t)k * B + b])));
    }
  /* coefficients grow like sqrt(n) for random input */
  const double tol = 1e-6 * sqrt((double)n) * (2.0 + log2(n));
  if (!(max_err <= tol))
    fprintf(stderr, "FFT n=%d: max error %g (tol %g)\n", n, max_err, tol);
  CHECK(max_err <= tol);
  free(re);
  free(im);
  free(r0);
  free(i0);
  free(scratch);
  lull_dct_plan_free(&plan);
}

/* The 2D transform is the 1D transform along both axes. */
static void check_2d(int w, int h, unsigned* rng)
{
  lull_dct_plan px, py;
  lull_error err = {LULL_OK, ""};
  CHECK_EQ_INT(lull_dct_plan_init(&px, w, &err), LULL_OK);
  CHECK_EQ_INT(lull_dct_plan_init(&py, h, &err), LULL_OK);
  float* img = calloc((size_t)w * h, sizeof(float));
  float* orig = calloc((size_t)w * h, sizeof(float));
  for (size_t i = 0; i < (size_t)w * h; ++i)
    orig[i] = img[i] = lull_test_random(rng);
  float* scratch = aligned_alloc(64, (lull_dct_2d_scratch_floats(&px, &py, 2) * sizeof(float) + 63) / 64 * 64);
  lull_dct_2d(&px, &py, img, 0, 2, scratch);
  double max_err = 0.0, max_coef = 0.0;
  for (int l = 0; l < h; l += 3)
    for (int k = 0; k < w; k += 2) {
      double sum = 0.0;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          sum += orig[(size_t)y * w + x] * cos(PI * k * (2.0 * x + 1.0) / (2.0 * w)) *
                 cos(PI * l * (2.0 * y + 1.0) / (2.0 * h));
      max_err = fmax(max_err, fabs(sum - img[(size_t)l * w + k]));
      max_coef = fmax(max_coef, fabs(sum));
    }
  CHECK(max_err <= 1e-5 * max_coef);
  lull_dct_2d(&px, &py, img, 1, 2, scratch);
  CHECK(lull_test_max_abs_diff(img, orig, (size_t)w * h) <= 1e-5);
  free(scratch);
  free(img);
  free(orig);
  lull_dct_plan_free(&px);
  lull_dct_plan_free(&py);
}

int main(void)
{
  unsigned rng = 12345u;
  /* 1..40 covers every small radix and prime; then typical image sides,
   * generic-radix products and Bluestein lengths (37, 97, 1021 prime) */
  for (int n = 1; n <= 40; ++n) {
    check_fft(n, &rng);
    check_dct(n, &rng);
  }
  const int lengths[] = {64, 97, 100, 128, 192, 256, 343, 720, 1021, 1280, 2 * 1009};
  for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; ++i) {
    check_fft(lengths[i], &rng);
    check_dct(lengths[i], &rng);
  }
  check_2d(37, 24, &rng);
  check_2d(20, 33, &rng);

  lull_dct_plan plan;
  lull_error err = {LULL_OK, ""};
  CHECK_EQ_INT(lull_dct_plan_init(&plan, 0, &err), LULL_ERROR_INVALID_ARGUMENT);
  lull_dct_plan_free(&plan);
  CHECK_EQ_INT(lull_dct_plan_init(&plan, -5, &err), LULL_ERROR_INVALID_ARGUMENT);
  lull_dct_plan_free(&plan);
  return lull_test_result("dct");
}
