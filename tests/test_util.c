#include "test_util.h"

#include <string.h>

int lull_test_failures = 0;

int lull_test_result(const char* name)
{
  if (lull_test_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", name, lull_test_failures);
    return 1;
  }
  printf("%s: all checks passed\n", name);
  return 0;
}

double lull_test_max_abs_diff(const float* a, const float* b, size_t n)
{
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= m))
      m = isnan(d) ? INFINITY : d;
  }
  return m;
}

int lull_test_all_finite(const float* a, size_t n)
{
  for (size_t i = 0; i < n; ++i)
    if (!isfinite(a[i]))
      return 0;
  return 1;
}

float lull_test_random(unsigned* state)
{
  unsigned x = *state ? *state : 0x9e3779b9u;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return (float)(x >> 8) * (1.0f / 16777216.0f);
}

lull_image lull_test_float_view(const float* data, int channels, int w, int h)
{
  lull_image im;
  memset(&im, 0, sizeof im);
  if (!data)
    return im;
  im.data = (unsigned char*)data;
  im.format = (lull_format)(LULL_FORMAT_FLOAT + channels - 1);
  im.width = w;
  im.height = h;
  im.pixel_stride = (size_t)channels * sizeof(float);
  im.row_stride = im.pixel_stride * (size_t)w;
  return im;
}
