#include "planes.h"

#include <stdint.h>
#include <stdlib.h>

/* 64-byte aligned planes: one cache line, one AVX-512 vector */
enum { PLANE_ALIGN_FLOATS = 16 };

static size_t plane_stride(size_t width, size_t height)
{
  if (width != 0 && height > SIZE_MAX / width)
    return SIZE_MAX;
  const size_t n = width * height;
  if (n > SIZE_MAX - PLANE_ALIGN_FLOATS)
    return SIZE_MAX;
  return (n + PLANE_ALIGN_FLOATS - 1) / PLANE_ALIGN_FLOATS * PLANE_ALIGN_FLOATS;
}

size_t lull_planes_bytes(size_t width, size_t height, size_t count)
{
  const size_t stride = plane_stride(width, height);
  if (stride == SIZE_MAX || (count != 0 && stride > SIZE_MAX / sizeof(float) / count))
    return SIZE_MAX;
  return stride * count * sizeof(float);
}

int lull_planes_init(lull_planes* planes, size_t width, size_t height, size_t count)
{
  planes->block = NULL;
  planes->count = 0;
  if (count > LULL_MAX_PLANES)
    return 0;
  const size_t bytes = lull_planes_bytes(width, height, count);
  if (bytes == SIZE_MAX || bytes == 0)
    return 0;
  planes->block = aligned_alloc(PLANE_ALIGN_FLOATS * sizeof(float), bytes);
  if (!planes->block)
    return 0;
  planes->stride = plane_stride(width, height);
  planes->count = count;
  for (size_t i = 0; i < count; ++i)
    planes->plane[i] = planes->block + i * planes->stride;
  return 1;
}

void lull_planes_free(lull_planes* planes)
{
  free(planes->block);
  planes->block = NULL;
  planes->count = 0;
}

void lull_plane_fill(lull_planes* planes, int index, float value)
{
  float* p = planes->plane[index];
  for (size_t i = 0; i < planes->stride; ++i)
    p[i] = value;
}

void lull_planes_swap(lull_planes* planes, int a, int b)
{
  float* t = planes->plane[a];
  planes->plane[a] = planes->plane[b];
  planes->plane[b] = t;
}

void lull_planes_alias(lull_planes* planes, int index, int target)
{
  planes->plane[index] = planes->plane[target];
}
