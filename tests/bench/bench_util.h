/* Helpers of the API benchmarks (bench_temporal.c, bench_regression.c):
 * a monotonic clock, medians, a small random generator. */
#ifndef LULL_BENCH_UTIL_H
#define LULL_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static inline int bench_compare_double(const void* a, const void* b)
{
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* xorshift32 */
static inline unsigned bench_next(unsigned* s)
{
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

/* uniform in [0, 1) */
static inline float bench_random01(unsigned* s)
{
  return (float)(bench_next(s) >> 8) * (1.0f / 16777216.0f);
}

#endif
