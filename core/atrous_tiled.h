/* The à-trous filter on the CPU under a memory cap: overlapping tiles.
 *
 * lull_atrous_cpu needs scratch memory in proportion to the image
 * (lull_atrous_cpu_scratch_bytes).  With params->memory_cap set, the image
 * is cut into a grid of tiles whose scratch fits the cap; each tile is
 * filtered with a margin of `reach` pixels of input on every side (clipped
 * at the image border) and only its interior is copied to the output.
 * The reach is the filter's whole footprint (lull_atrous_reach), so every
 * interior pixel sees exactly the input it would see untiled: the results
 * agree with an untiled run up to floating-point path differences
 * (tests/hardening measures them on the test renders).
 *
 * The output may alias an input (in place): a tile's interior is then
 * held back until no later tile reads those input pixels (a ring of rows
 * when output and input share rows, the whole output otherwise); that
 * memory is counted in the cap. */
#pragma once

#include "atrous.h"

/* Pixels on each side of an output pixel whose input its value depends on,
 * for these parameters and the guides given. */
int lull_atrous_reach(const lull_atrous_params* params, const lull_atrous_images* images);

/* A tile grid: interiors of tile_width x tile_height pixels (the last row
 * and column may be smaller), each filtered with `overlap` pixels around. */
typedef struct lull_atrous_tiling
{
  int tile_width, tile_height;
  int overlap;
  int columns, rows;
  size_t bytes; /* scratch of one tile, held-back output included */
} lull_atrous_tiling;

/* The grid lull_atrous_cpu_tiled uses: the fewest pixels filtered in all
 * among the grids whose tiles fit params->memory_cap (one tile when the
 * whole image fits, or when there is no cap).  When no grid fits, square
 * interiors as wide as the overlap (at least 16): the cap is exceeded. */
lull_atrous_tiling lull_atrous_choose_tiling(const lull_atrous_params* params,
                                             const lull_atrous_images* images);

/* Runs the filter on the grid chosen for params->memory_cap (untiled when
 * one tile covers the image).  Same contract as lull_atrous_cpu; a
 * cancelled tiled run may leave the output partly filtered.  An untiled
 * run takes its planes from `cache` (may be NULL) and gives them back; a
 * tiled one, under a memory cap, first empties the cache. */
lull_status lull_atrous_cpu_tiled(const lull_atrous_params* params,
                                  const lull_atrous_images* images, int num_threads,
                                  struct lull_planes_cache* cache, const lull_progress* progress,
                                  lull_error* err);

/* Runs the filter on a given grid (tests compare grids and overlaps). */
lull_status lull_atrous_cpu_tiling(const lull_atrous_params* params,
                                   const lull_atrous_images* images,
                                   const lull_atrous_tiling* tiling, int num_threads,
                                   struct lull_planes_cache* cache, const lull_progress* progress,
                                   lull_error* err);
