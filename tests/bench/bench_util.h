/* Helpers of the API benchmarks (bench_temporal.c, bench_regression.c,
 * bench_rhf.c): a monotonic clock, medians, a filter's median time, option
 * lists, a small random generator. */
#ifndef LULL_BENCH_UTIL_H
#define LULL_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <OpenImageDenoise/oidn.h>

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

/* Median ms of `runs` executions of a committed filter, after `warm`
 * untimed ones; -1 on a device error (printed) or without runs. */
static inline double bench_filter_median_ms(OIDNDevice device, OIDNFilter f, int warm, int runs)
{
  double* t = malloc(sizeof(double) * (size_t)(runs > 0 ? runs : 1));
  double median = -1.0;
  if (!t)
    return median;
  for (int r = 0; r < warm; ++r)
    oidnExecuteFilter(f);
  for (int r = 0; r < runs; ++r) {
    const double t0 = bench_now_ms();
    oidnExecuteFilter(f);
    t[r] = bench_now_ms() - t0;
  }
  const char* message = NULL;
  if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE) {
    fprintf(stderr, "error: %s\n", message ? message : "");
  } else if (runs > 0) {
    qsort(t, (size_t)runs, sizeof(double), bench_compare_double);
    median = t[runs / 2];
  }
  free(t);
  return median;
}

/* Is `word` one of the comma-separated words of `list` ("cpu,cuda")? */
static inline int bench_has_word(const char* list, const char* word)
{
  const size_t n = strlen(word);
  for (const char* p = list; (p = strstr(p, word)) != NULL; p += n)
    if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
      return 1;
  return 0;
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
