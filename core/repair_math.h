/* The repair of a missing value in a plane, shared by the CPU backend
 * (planes.c: lull_plane_repair) and the CUDA kernels. */
#pragma once

#include <stddef.h>

#include "platform.h"

/* The value that replaces a NaN at (x, y) of a w x h plane: the mean of
 * the values of its 5x5 neighbourhood that are not NaN (summed in double,
 * in rows then columns), 0 without any. */
LULL_HD float lull_repair_value_at(const float* plane, int w, int h, int x, int y)
{
  double sum = 0.0;
  int count = 0;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx) {
      const int xx = x + dx, yy = y + dy;
      if (xx < 0 || yy < 0 || xx >= w || yy >= h)
        continue;
      const float v = plane[(size_t)yy * (size_t)w + (size_t)xx];
      if (v == v) {
        sum += v;
        ++count;
      }
    }
  return count ? (float)(sum / count) : 0.0f;
}
