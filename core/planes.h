/* A set of equally sized float planes (one array per channel) in one
 * allocation: the working image layout of the CPU backend.  Planes can be
 * swapped (double buffering) or aliased (an absent guide reads the zero
 * plane). */
#pragma once

#include <stddef.h>

enum { LULL_MAX_PLANES = 32 };

typedef struct lull_planes
{
  float* block;                 /* the one allocation */
  size_t bytes;                 /* its size */
  float* plane[LULL_MAX_PLANES];
  size_t count;                 /* number of planes */
  size_t stride;                /* floats from one plane to the next */
} lull_planes;

/* Bytes needed for count planes of width x height, or SIZE_MAX on overflow. */
size_t lull_planes_bytes(size_t width, size_t height, size_t count);

/* Returns 0 when the memory cannot be allocated (or the size overflows). */
int lull_planes_init(lull_planes* planes, size_t width, size_t height, size_t count);
void lull_planes_free(lull_planes* planes);

/* One block kept between runs.  The CPU backend keeps the last run's
 * planes so that the next run of the same or a smaller size reuses their
 * pages: fresh pages from the kernel are zeroed first, which was 8% of a
 * 1080p ATrous run (clear_page in the profile).  Runs on several threads
 * may take and give back at once: the slot is swapped atomically, and a
 * run that finds it empty (or too small) allocates.  Zero-initialise;
 * lull_planes_cache_clear frees what it holds. */
typedef struct lull_planes_cache
{
  void* _Atomic slot; /* a cached block's record, or NULL */
} lull_planes_cache;

/* lull_planes_init, reusing the cached block when it is large enough
 * (cache may be NULL). */
int lull_planes_init_cached(lull_planes* planes, size_t width, size_t height, size_t count,
                            lull_planes_cache* cache);
/* Gives the block to the cache (which frees what it held), or frees it
 * when cache is NULL. */
void lull_planes_release(lull_planes* planes, lull_planes_cache* cache);
void lull_planes_cache_clear(lull_planes_cache* cache);

static inline float* lull_plane(lull_planes* planes, int index) { return planes->plane[index]; }
static inline const float* lull_plane_c(const lull_planes* planes, int index)
{
  return planes->plane[index];
}

void lull_plane_fill(lull_planes* planes, int index, float value);
void lull_planes_swap(lull_planes* planes, int a, int b);
/* Makes plane `index` read the memory of plane `target`. */
void lull_planes_alias(lull_planes* planes, int index, int target);

/* Replaces each NaN of a w x h plane by the mean of the finite values in
 * its 5x5 neighbourhood (0 without any); replacements read only original
 * values, so a NaN never spreads. */
void lull_plane_repair(float* plane, int w, int h);

/* Box filter of radius r restricted to the rectangle [x0, x1) x [y0, y1)
 * (values outside it are ignored; the mean is over the window's part inside
 * it); out-of-rectangle outputs are 0.  in and out may not alias; tmp: one
 * plane. */
void lull_box_mean(int width, int height, const float* in, float* out, float* tmp, int radius,
                      int x0, int x1, int y0, int y1, int threads);
