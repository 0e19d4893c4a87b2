#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
  #define _DEFAULT_SOURCE /* madvise */
#endif
#include "planes.h"

#include "platform.h"
#include "repair_math.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
  #include <sys/mman.h>
#endif

/* Plane k starts k * 192 bytes (modulo 4 KB) past a 4 KB boundary.  Why: a
 * level reads the same pixel of ~13 planes per tap, and the usual image
 * sizes (1280x720, 1920x1080, 3840x2160: pixels a multiple of 1024) made
 * every plane start on a 4 KB boundary, so those 13 lines fell into one
 * set of the 8-way, 4 KB-per-way L1 data cache (1080p: 255 -> 182 ms). */
enum { PLANE_SET_FLOATS = 1024, PLANE_SKEW_FLOATS = 48 };

/* 64-byte aligned planes: one cache line, one AVX-512 vector */
enum { PLANE_ALIGN_FLOATS = 16 };

/* Large blocks go on 2 MB pages where the system offers them (Linux's
 * transparent huge pages).  A filter level reads ~13 planes at 5 rows per
 * tap: with 4 KB pages that is more pages than the TLB holds (a 1080p
 * à-trous run touches 53,000 of them), and on 2 MB pages it is ~100.
 * Small blocks (a tile under a tight maxMemoryMB) keep 4 KB pages, so
 * their resident memory is not rounded up to 2 MB. */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_PAGE_MIN_BYTES ((size_t)64 << 20)

typedef struct block_shape
{
  size_t alignment, bytes;
} block_shape;

/* Not inlined: the one aligned_alloc call below must stay one call (the
 * allocation-failure test reaches every allocation call of the library,
 * and a branch here would let the compiler copy the call into both arms). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static block_shape planes_shape(size_t bytes)
{
  block_shape shape = {PLANE_ALIGN_FLOATS * sizeof(float), bytes};
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= HUGE_PAGE_MIN_BYTES && bytes <= SIZE_MAX - HUGE_PAGE) {
    shape.alignment = HUGE_PAGE;
    shape.bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  }
#endif
  return shape;
}

static float* planes_alloc(size_t bytes)
{
  const block_shape shape = planes_shape(bytes);
  float* block = aligned_alloc(shape.alignment, shape.bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (block && shape.alignment == HUGE_PAGE)
    (void)madvise(block, shape.bytes, MADV_HUGEPAGE); /* a hint: ignored where unsupported */
#endif
  return block;
}

static size_t plane_stride(size_t width, size_t height)
{
  if (width != 0 && height > SIZE_MAX / width)
    return SIZE_MAX;
  const size_t n = width * height;
  if (n > SIZE_MAX - PLANE_SET_FLOATS - PLANE_SKEW_FLOATS)
    return SIZE_MAX;
  return (n + PLANE_SET_FLOATS - 1) / PLANE_SET_FLOATS * PLANE_SET_FLOATS + PLANE_SKEW_FLOATS;
}

size_t lull_planes_bytes(size_t width, size_t height, size_t count)
{
  const size_t stride = plane_stride(width, height);
  if (stride == SIZE_MAX || (count != 0 && stride > SIZE_MAX / sizeof(float) / count))
    return SIZE_MAX;
  return stride * count * sizeof(float);
}

/* A block in the cache. */
typedef struct cached_block
{
  float* block;
  size_t bytes;
} cached_block;

static void cached_block_free(cached_block* c)
{
  if (c) {
    free(c->block);
    free(c);
  }
}

int lull_planes_init_cached(lull_planes* planes, size_t width, size_t height, size_t count,
                            lull_planes_cache* cache)
{
  planes->block = NULL;
  planes->bytes = 0;
  planes->count = 0;
  if (count > LULL_MAX_PLANES)
    return 0;
  const size_t bytes = lull_planes_bytes(width, height, count);
  if (bytes == SIZE_MAX || bytes == 0)
    return 0;
  cached_block* kept = cache ? atomic_exchange(&cache->slot, NULL) : NULL;
  if (kept && kept->bytes >= bytes) {
    planes->block = kept->block;
    planes->bytes = kept->bytes;
    free(kept);
  } else {
    cached_block_free(kept); /* too small: its memory goes back first */
    planes->block = planes_alloc(bytes);
    planes->bytes = bytes;
  }
  if (!planes->block)
    return 0;
  planes->stride = plane_stride(width, height);
  planes->count = count;
  for (size_t i = 0; i < count; ++i)
    planes->plane[i] = planes->block + i * planes->stride;
  return 1;
}

int lull_planes_init(lull_planes* planes, size_t width, size_t height, size_t count)
{
  return lull_planes_init_cached(planes, width, height, count, NULL);
}

void lull_planes_release(lull_planes* planes, lull_planes_cache* cache)
{
  cached_block* c = cache && planes->block ? malloc(sizeof *c) : NULL;
  if (c) {
    c->block = planes->block;
    c->bytes = planes->bytes;
    cached_block_free(atomic_exchange(&cache->slot, c));
  } else {
    free(planes->block);
  }
  planes->block = NULL;
  planes->count = 0;
}

void lull_planes_free(lull_planes* planes)
{
  lull_planes_release(planes, NULL);
}

void lull_planes_cache_clear(lull_planes_cache* cache)
{
  cached_block_free(atomic_exchange(&cache->slot, NULL));
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

/* Replaces each NaN of a plane by the mean of the finite values in its 5x5
 * neighbourhood (0 without any); replacements read only original values. */
void lull_plane_repair(float* plane, int w, int h)
{
  size_t bad = 0;
  const size_t n = (size_t)w * (size_t)h;
  for (size_t i = 0; i < n; ++i)
    bad += isnan(plane[i]) != 0;
  if (bad == 0)
    return;
  size_t* where = malloc(bad * sizeof *where);
  float* value = malloc(bad * sizeof *value);
  if (!where || !value) {
    /* out of memory for the neighbourhood means: fall back to 0 */
    for (size_t i = 0; i < n; ++i)
      if (isnan(plane[i]))
        plane[i] = 0.0f;
    free(where);
    free(value);
    return;
  }
  size_t k = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      if (!isnan(plane[i]))
        continue;
      where[k] = i;
      value[k] = lull_repair_value_at(plane, w, h, x, y);
      ++k;
    }
  for (size_t j = 0; j < k; ++j)
    plane[where[j]] = value[j];
  free(where);
  free(value);
}

void lull_box_mean(int width, int height, const float* in, float* out, float* tmp, int radius,
                      int x0, int x1, int y0, int y1, int threads)
{
  const size_t w = (size_t)width;
  memset(out, 0, w * (size_t)height * sizeof(float));
  if (x0 >= x1 || y0 >= y1)
    return;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = y0; y < y1; ++y) {
    const float* row = in + (size_t)y * w;
    float* t = tmp + (size_t)y * w;
    for (int x = x0; x < x1; ++x) {
      const int a = LULL_MAX(x0, x - radius), b = LULL_MIN(x1 - 1, x + radius);
      float s = 0.0f;
      for (int k = a; k <= b; ++k)
        s += row[k];
      t[x] = s / (float)(b - a + 1);
    }
  }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = y0; y < y1; ++y) {
    const int a = LULL_MAX(y0, y - radius), b = LULL_MIN(y1 - 1, y + radius);
    const float inv = 1.0f / (float)(b - a + 1);
    float* o = out + (size_t)y * w;
    for (int k = a; k <= b; ++k) {
      const float* t = tmp + (size_t)k * w;
      for (int x = x0; x < x1; ++x)
        o[x] += t[x];
    }
    for (int x = x0; x < x1; ++x)
      o[x] *= inv;
  }
}
