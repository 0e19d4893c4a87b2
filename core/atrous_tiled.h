/* The à-trous filter under a memory cap: overlapping tiles.
 *
 * A filter run needs scratch memory in proportion to the image
 * (lull_atrous_cpu_scratch_bytes on the CPU, the plan's scratch on CUDA).
 * With params->memory_cap set, the image is cut into a grid of tiles
 * whose scratch fits the cap; each tile is filtered with a margin of
 * `reach` pixels of input on every side (clipped at the image border) and
 * only its interior is copied to the output.
 * The reach is the filter's whole footprint (lull_atrous_reach), so every
 * interior pixel sees exactly the input it would see untiled: the results
 * agree with an untiled run up to floating-point path differences
 * (tests/hardening measures them on the test renders), with two
 * exceptions on CUDA (tests/gpu/cuda_atrous_tiles_test.c): packedGuides
 * packs each tile with its own fp16 scale, and the permuted schedule's
 * mirrored taps at the image's border depend on how the window splits
 * into sub-images (Dolp et al. 2024 §4.1).  A run with the automatic
 * input scale reads the whole colour's scale first, so a tiled CUDA run
 * waits for the work queued before it.
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
  size_t bytes;  /* scratch of one tile, held-back output included */
  size_t planes; /* of which the filter's own, for one tile */
} lull_atrous_tiling;

/* What a backend gives the tile driver: the driver chooses the grid and
 * moves the pixels, the backend filters a tile and copies between images
 * in the memory its filter uses (host memory for the CPU, device memory
 * for CUDA).  Each callback returns a status and fills err, as filters do. */
typedef struct lull_atrous_tiler
{
  void* ctx;
  /* scratch an untiled run of `images` takes (SIZE_MAX: cannot run) */
  size_t (*scratch_bytes)(void* ctx, const lull_atrous_params* params,
                          const lull_atrous_images* images);
  /* the inputScale every tile gets: the automatic scale of the whole
   * colour (lull_atrous_input_scale), so tiles match an untiled run */
  lull_status (*input_scale)(void* ctx, const lull_atrous_params* params, const lull_image* color,
                             float* scale, lull_error* err);
  /* memory for the tile's output and the held-back rows (NULL: out of
   * memory), and its release; both NULL: host memory (malloc, free) */
  void* (*alloc)(void* ctx, size_t bytes);
  void (*release)(void* ctx, void* memory);
  /* one tile: an untiled run on views into the caller's images */
  lull_status (*filter)(void* ctx, const lull_atrous_params* params,
                        const lull_atrous_images* tile, const lull_progress* progress,
                        lull_error* err);
  /* dst = src, two views of the same size and format */
  lull_status (*copy)(void* ctx, const lull_image* dst, const lull_image* src, lull_error* err);
} lull_atrous_tiler;

/* The grid lull_atrous_run_tiles uses: the fewest pixels filtered in all
 * among the grids whose tiles fit params->memory_cap (one tile when the
 * whole image fits, or when there is no cap), with the tiler's scratch
 * per tile.  When no grid fits, square interiors as wide as the overlap
 * (at least 16): the cap is exceeded. */
lull_atrous_tiling lull_atrous_choose_tiling_for(const lull_atrous_params* params,
                                                 const lull_atrous_images* images,
                                                 const lull_atrous_tiler* tiler);

/* Runs the filter on a grid of more than one tile through the tiler.  A
 * cancelled run may leave the output partly filtered. */
lull_status lull_atrous_run_tiles(const lull_atrous_params* params,
                                  const lull_atrous_images* images,
                                  const lull_atrous_tiling* tiling, const lull_atrous_tiler* tiler,
                                  const lull_progress* progress, lull_error* err);

/* The grid lull_atrous_cpu_tiled uses (the CPU filter's scratch). */
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
