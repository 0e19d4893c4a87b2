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
  float* plane[LULL_MAX_PLANES];
  size_t count;                 /* number of planes */
  size_t stride;                /* floats from one plane to the next */
} lull_planes;

/* Bytes needed for count planes of width x height, or SIZE_MAX on overflow. */
size_t lull_planes_bytes(size_t width, size_t height, size_t count);

/* Returns 0 when the memory cannot be allocated (or the size overflows). */
int lull_planes_init(lull_planes* planes, size_t width, size_t height, size_t count);
void lull_planes_free(lull_planes* planes);

static inline float* lull_plane(lull_planes* planes, int index) { return planes->plane[index]; }
static inline const float* lull_plane_c(const lull_planes* planes, int index)
{
  return planes->plane[index];
}

void lull_plane_fill(lull_planes* planes, int index, float value);
void lull_planes_swap(lull_planes* planes, int a, int b);
/* Makes plane `index` read the memory of plane `target`. */
void lull_planes_alias(lull_planes* planes, int index, int target);
