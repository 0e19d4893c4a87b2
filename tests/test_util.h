/* Small helpers for lull's C tests: checks that report file and line and
 * keep going, so one run lists every failure. */
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "image.h"

extern int lull_test_failures;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);        \
      ++lull_test_failures;                                                           \
    }                                                                                 \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                            \
  do {                                                                                \
    const long long va_ = (long long)(a), vb_ = (long long)(b);                       \
    if (va_ != vb_) {                                                                 \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld\n", __FILE__,     \
              __LINE__, #a, va_, #b, vb_);                                            \
      ++lull_test_failures;                                                           \
    }                                                                                 \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                         \
  do {                                                                                \
    const double va_ = (double)(a), vb_ = (double)(b);                                \
    if (!(fabs(va_ - vb_) <= (tol))) {                                                \
      fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g, %s = %.9g (tol %g)\n",    \
              __FILE__, __LINE__, #a, va_, #b, vb_, (double)(tol));                   \
      ++lull_test_failures;                                                           \
    }                                                                                 \
  } while (0)

/* Exit status for main: 0 when every check passed. */
int lull_test_result(const char* name);

/* Largest |a - b| over n floats (NaN counts as infinite). */
double lull_test_max_abs_diff(const float* a, const float* b, size_t n);
/* 1 when every value is finite. */
int lull_test_all_finite(const float* a, size_t n);
/* Deterministic pseudo-random numbers in [0, 1) (xorshift). */
float lull_test_random(unsigned* state);
/* A view of packed host floats, `channels` per pixel (data NULL: no image,
 * all zero). */
lull_image lull_test_float_view(const float* data, int channels, int w, int h);
