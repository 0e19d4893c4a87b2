/* The à-trous filter in overlapping tiles under a memory cap (see
 * atrous_tiled.h).  Scheduling only: each tile is an ordinary
 * lull_atrous_cpu run on views into the caller's images. */
#include "atrous_tiled.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
  #include <malloc.h>
#endif

#include "atrous_math.h"
#include "planes.h"

/* Radii of the stencils of one run (atrous_cpu.c), each in pixels. */
enum
{
  TAP_REACH = 2,        /* the 5x5 B3 kernel: level i's taps reach 2 * 2^i (Dammertz 2010 §2.2) */
  GUIDE_RADIUS = 1,     /* the 3x3 binomial prefilter of each level's colour test (SVGF §4.4) */
  VARIANCE_RADIUS = 2,  /* the 5x5 luminance moments of the variance estimate (SVGF §4.2) */
  FOOTPRINT_RADIUS = 1, /* lull_footprint_neighbours: the geometry footprint's 4 neighbours */
  MIN_TILE = 16,        /* tile interiors: at least this, and the overlap */
};

int lull_atrous_reach(const lull_atrous_params* params, const lull_atrous_images* images)
{
  const int variance = params->color_mode == LULL_ATROUS_COLOR_VARIANCE;
  int n = params->iterations;
  n = n < 1 ? 1 : (n > LULL_ATROUS_MAX_ITERATIONS ? LULL_ATROUS_MAX_ITERATIONS : n);
  /* the levels: an output pixel reads level i's input 2 * 2^i away, and
   * in the variance mode the colour test at each end of a tap reads a
   * 3x3 neighbourhood: 2 (2^N - 1) + N in all */
  int levels = 0;
  for (int i = 0; i < n; ++i)
    levels += TAP_REACH * (1 << i) + (variance ? GUIDE_RADIUS : 0);
  /* the level-0 input of a pixel: its colour reads the colours that inpaint
   * a non-finite one; its estimated variance the luminance (so inpainted
   * colour) around it; its geometry footprint the geometry beside it */
  int prepare = LULL_INPAINT_RADIUS;
  if (variance && !images->variance.data)
    prepare = LULL_MAX(prepare, VARIANCE_RADIUS + LULL_INPAINT_RADIUS);
  if ((images->depth.data || images->position.data) && params->sigma_depth > 0.0f)
    prepare = LULL_MAX(prepare, FOOTPRINT_RADIUS);
  return levels + prepare;
}

/* -- in place ------------------------------------------------------------- */

enum
{
  ALIAS_NONE = 0, /* the output shares no byte with an input */
  ALIAS_ROWS = 1, /* output row y shares bytes with input row y only */
  ALIAS_ANY = 2,  /* anything else: the whole output is held back */
};

static size_t row_span(const lull_image* image)
{
  return (size_t)(image->width - 1) * image->pixel_stride + lull_format_size(image->format);
}

static int images_overlap(const lull_image* a, const lull_image* b)
{
  const unsigned char *a0, *a1, *b0, *b1;
  lull_image_extent(a, &a0, &a1);
  lull_image_extent(b, &b0, &b1);
  return a0 < b1 && b0 < a1;
}

static int alias_mode(const lull_atrous_images* images)
{
  const lull_image* out = &images->output;
  const lull_image* inputs[] = {&images->color, &images->albedo,   &images->normal,
                                &images->depth, &images->position, &images->variance};
  int mode = ALIAS_NONE;
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; ++i) {
    const lull_image* in = inputs[i];
    if (!in->data || !images_overlap(in, out))
      continue;
    const int rows = in->data == out->data && in->row_stride == out->row_stride &&
                     row_span(in) <= in->row_stride && row_span(out) <= out->row_stride;
    mode = LULL_MAX(mode, rows ? ALIAS_ROWS : ALIAS_ANY);
  }
  return mode;
}

/* Rows of output held back at once: a band of tiles plus the overlap the
 * next band still reads (ALIAS_ROWS), or all of them (ALIAS_ANY). */
static int held_rows(int mode, int tile_height, int overlap, int height)
{
  if (mode == ALIAS_NONE)
    return 0;
  if (mode == ALIAS_ANY)
    return height;
  return (int)LULL_MIN((long long)tile_height + overlap, (long long)height);
}

/* -- choosing the grid ------------------------------------------------------ */

static size_t add_saturating(size_t a, size_t b)
{
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t mul_saturating(size_t a, size_t b)
{
  return a != 0 && b > SIZE_MAX / a ? SIZE_MAX : a * b;
}

/* The views of all images over the window [x0, x0 + w) x [y0, y0 + h). */
static lull_atrous_images window_of(const lull_atrous_images* images, int x0, int y0, int w, int h)
{
  lull_atrous_images window;
  window.color = lull_image_region(&images->color, x0, y0, w, h);
  window.albedo = lull_image_region(&images->albedo, x0, y0, w, h);
  window.normal = lull_image_region(&images->normal, x0, y0, w, h);
  window.depth = lull_image_region(&images->depth, x0, y0, w, h);
  window.position = lull_image_region(&images->position, x0, y0, w, h);
  window.variance = lull_image_region(&images->variance, x0, y0, w, h);
  window.output = lull_image_region(&images->output, x0, y0, w, h);
  return window;
}

/* The filter's scratch for a tile of interior tw x th with its overlap. */
static size_t tile_planes(const lull_atrous_params* params, const lull_atrous_images* images,
                          const lull_atrous_tiler* tiler, int tw, int th, int overlap)
{
  const int w = images->color.width, h = images->color.height;
  const lull_atrous_images tile =
      window_of(images, 0, 0, (int)LULL_MIN((long long)tw + 2LL * overlap, (long long)w),
                (int)LULL_MIN((long long)th + 2LL * overlap, (long long)h));
  return tiler->scratch_bytes(tiler->ctx, params, &tile);
}

/* Scratch of one tile of interior tw x th: the filter's planes for the
 * tile with its overlap, the tile's output, and the held-back rows. */
static size_t tile_bytes(const lull_atrous_params* params, const lull_atrous_images* images,
                         const lull_atrous_tiler* tiler, int mode, int tw, int th, int overlap)
{
  const int w = images->color.width, h = images->color.height;
  const size_t ew = (size_t)LULL_MIN((long long)tw + 2LL * overlap, (long long)w);
  const size_t eh = (size_t)LULL_MIN((long long)th + 2LL * overlap, (long long)h);
  const size_t pixel = lull_format_size(images->output.format);
  const size_t planes = tile_planes(params, images, tiler, tw, th, overlap);
  const size_t output = mul_saturating(mul_saturating(ew, eh), pixel);
  const size_t held =
      mul_saturating(mul_saturating((size_t)held_rows(mode, th, overlap, h), (size_t)w), pixel);
  return add_saturating(add_saturating(planes, output), held);
}

static int ceil_div(int a, int b)
{
  return (int)(((long long)a + b - 1) / b);
}

lull_atrous_tiling lull_atrous_choose_tiling_for(const lull_atrous_params* params,
                                                 const lull_atrous_images* images,
                                                 const lull_atrous_tiler* tiler)
{
  const int w = images->color.width, h = images->color.height;
  const int overlap = lull_atrous_reach(params, images);
  const size_t whole = tiler->scratch_bytes(tiler->ctx, params, images);
  lull_atrous_tiling best = {w, h, overlap, 1, 1, whole, whole};
  const size_t cap = params->memory_cap;
  if (cap == 0 || best.bytes <= cap || w < 1 || h < 1)
    return best;
  const int mode = alias_mode(images);
  /* Interiors narrower than the overlap filter over 9 pixels for each they
   * output (a 1-pixel tile with overlap 71 filters 20449): no more tiles
   * along an axis than tiles as wide as the overlap need.  A cap only more
   * would meet is exceeded instead (maxMemoryMB is approximate, as OIDN
   * documents it). */
  const int side = LULL_MAX((int)MIN_TILE, overlap);
  const int max_columns = ceil_div(w, LULL_MIN(side, w));
  const int max_rows = ceil_div(h, LULL_MIN(side, h));
  const int min_th = ceil_div(h, max_rows); /* max_rows rows, evened out */
  double best_cost = -1.0;
  /* each column count, with the tallest tiles that fit (bytes grow with
   * the height): the grid that filters the fewest pixels in all */
  for (int columns = 1; columns <= max_columns; ++columns) {
    const int tw = ceil_div(w, columns);
    if (columns > 1 && tw == ceil_div(w, columns - 1))
      continue; /* same tile width as the previous count */
    if (tile_bytes(params, images, tiler, mode, tw, min_th, overlap) > cap)
      continue;
    int lo = min_th, hi = h; /* the tallest th with tile_bytes <= cap */
    while (lo < hi) {
      const int mid = lo + (hi - lo + 1) / 2;
      if (tile_bytes(params, images, tiler, mode, tw, mid, overlap) <= cap)
        lo = mid;
      else
        hi = mid - 1;
    }
    const int rows = ceil_div(h, lo);
    const int th = ceil_div(h, rows); /* the same rows, evened out */
    const int used = ceil_div(w, tw); /* columns, or fewer when tw rounded up */
    const double cost = (double)used * rows * (double)LULL_MIN(tw + 2LL * overlap, w) *
                        (double)LULL_MIN(th + 2LL * overlap, h);
    if (best_cost < 0.0 || cost < best_cost) {
      best_cost = cost;
      best.tile_width = tw;
      best.tile_height = th;
      best.columns = used;
      best.rows = rows;
      best.bytes = tile_bytes(params, images, tiler, mode, tw, th, overlap);
    }
  }
  if (best_cost < 0.0) {
    /* nothing fits: the most tiles allowed, evened out, over the cap; along
     * an axis whose windows span the image anyway, one tile */
    best.columns = LULL_MIN(side, w) + 2LL * overlap >= w ? 1 : max_columns;
    best.rows = LULL_MIN(side, h) + 2LL * overlap >= h ? 1 : max_rows;
    best.tile_width = ceil_div(w, best.columns);
    best.tile_height = ceil_div(h, best.rows);
    best.columns = ceil_div(w, best.tile_width); /* fewer when rounded up */
    best.rows = ceil_div(h, best.tile_height);
    best.bytes =
        tile_bytes(params, images, tiler, mode, best.tile_width, best.tile_height, overlap);
    if (best.bytes >= whole) /* the windows hold nearly all the image: untiled takes less */
      best = (lull_atrous_tiling){w, h, overlap, 1, 1, whole, whole};
  }
  best.planes = tile_planes(params, images, tiler, best.tile_width, best.tile_height, overlap);
  return best;
}

/* -- running the tiles -------------------------------------------------------- */

/* Progress of tile `index` of `count`, mapped into the whole run. */
typedef struct tile_progress
{
  const lull_progress* outer;
  double index, count;
  int cancelled; /* the caller asked to stop */
} tile_progress;

static int report_tile(void* user, double done)
{
  tile_progress* t = user;
  if (t->cancelled)
    return 0;
  /* the last tile's end is not the run's: its copy to the output may still
   * be queued; the run reports 1 once it has queued every copy */
  if (t->index + done >= t->count)
    return 1;
  if (!t->outer->report(t->outer->user, (t->index + done) / t->count))
    t->cancelled = 1;
  return !t->cancelled;
}


/* Start of a window of `size` pixels in [0, extent) that holds
 * [begin - overlap, begin + tile + overlap) as far as it lies inside. */
static int window_start(int begin, int overlap, int size, int extent)
{
  const long long start = (long long)begin - overlap;
  return (int)LULL_MAX(0LL, LULL_MIN(start, (long long)extent - size));
}

/* Copies rows [y0, y1) of columns [x0, x1) of `src` (rows numbered from
 * src_y) to the held-back ring, where row y lives at y % ring: at most two
 * copies, as the rows wrap around once at most. */
static lull_status hold_rows(const lull_atrous_tiler* tiler, const lull_image* held, int ring,
                             const lull_image* src, int src_y, int x0, int x1, int y0, int y1,
                             lull_error* err)
{
  lull_status status = LULL_OK;
  for (int y = y0; y < y1 && status == LULL_OK;) {
    const int n = LULL_MIN(y1 - y, ring - y % ring);
    const lull_image to = lull_image_region(held, x0, y % ring, x1 - x0, n);
    const lull_image from = lull_image_region(src, 0, y - src_y, x1 - x0, n);
    status = tiler->copy(tiler->ctx, &to, &from, err);
    y += n;
  }
  return status;
}

/* Writes the held rows [y0, y1) to the output (the same wrap). */
static lull_status flush_rows(const lull_atrous_tiler* tiler, const lull_image* output,
                              const lull_image* held, int ring, int y0, int y1, lull_error* err)
{
  lull_status status = LULL_OK;
  for (int y = y0; y < y1 && status == LULL_OK;) {
    const int n = LULL_MIN(y1 - y, ring - y % ring);
    const lull_image to = lull_image_region(output, 0, y, output->width, n);
    const lull_image from = lull_image_region(held, 0, y % ring, output->width, n);
    status = tiler->copy(tiler->ctx, &to, &from, err);
    y += n;
  }
  return status;
}

/* A packed image of w x h pixels of `format` at memory (none when NULL). */
static lull_image packed_image(void* memory, lull_format format, int w, int h)
{
  lull_image image;
  memset(&image, 0, sizeof image);
  image.data = memory;
  image.format = format;
  image.width = w;
  image.height = h;
  image.pixel_stride = lull_format_size(format);
  image.row_stride = (size_t)w * image.pixel_stride;
  return image;
}

/* The tiler's memory, or the host's (sizes are never 0: a tile and a row
 * have pixels). */
static void* host_or_tiler_alloc(const lull_atrous_tiler* tiler, size_t bytes)
{
  return tiler->alloc ? tiler->alloc(tiler->ctx, bytes) : malloc(bytes);
}

static void host_or_tiler_release(const lull_atrous_tiler* tiler, void* memory)
{
  if (!memory)
    return;
  if (tiler->release)
    tiler->release(tiler->ctx, memory);
  else
    free(memory);
}

lull_status lull_atrous_run_tiles(const lull_atrous_params* params,
                                  const lull_atrous_images* images,
                                  const lull_atrous_tiling* tiling, const lull_atrous_tiler* tiler,
                                  const lull_progress* progress, lull_error* err)
{
  const int w = images->color.width, h = images->color.height;
  const size_t pixel = lull_format_size(images->output.format);
  const int tw = tiling->tile_width, th = tiling->tile_height, overlap = tiling->overlap;
  if (w < 1 || h < 1 || pixel == 0 || tw < 1 || th < 1 || overlap < 0)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid tile grid");
  const int mode = alias_mode(images);
  const int ring = held_rows(mode, th, overlap, h);
  const int ew = (int)LULL_MIN(tw + 2LL * overlap, w);
  const int eh = (int)LULL_MIN(th + 2LL * overlap, h);

  lull_atrous_params inner = *params;
  inner.memory_cap = 0; /* each tile fits by construction */
  /* one scale for the whole image, as an untiled run has */
  lull_status status = tiler->input_scale(tiler->ctx, params, &images->color, &inner.input_scale,
                                          err);
  if (status != LULL_OK)
    return status;
  void* tile_memory = host_or_tiler_alloc(tiler, (size_t)ew * (size_t)eh * pixel);
  void* held_memory = ring ? host_or_tiler_alloc(tiler, (size_t)ring * (size_t)w * pixel) : NULL;
  if (!tile_memory || (ring && !held_memory)) {
    host_or_tiler_release(tiler, tile_memory);
    host_or_tiler_release(tiler, held_memory);
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  const lull_image tile_out = packed_image(tile_memory, images->output.format, ew, eh);
  const lull_image held = packed_image(held_memory, images->output.format, w, ring);

  tile_progress tp = {progress, 0.0, (double)tiling->columns * tiling->rows, 0};
  const lull_progress tile_report = {report_tile, &tp};
  const lull_progress* per_tile = progress && progress->report ? &tile_report : NULL;
  int flushed = 0; /* held rows below this one are written out */

  for (int row = 0; row < tiling->rows && status == LULL_OK; ++row) {
    const int y0 = row * th, y1 = LULL_MIN(y0 + th, h);
    for (int column = 0; column < tiling->columns && status == LULL_OK; ++column) {
      const int x0 = column * tw, x1 = LULL_MIN(x0 + tw, w);
      if (x0 >= w || y0 >= h)
        continue;
      /* every tile is filtered in a window of the same size (shifted inwards
       * at the borders, where it holds more than the overlap): each run
       * then needs the same scratch, which the CPU's allocator reuses
       * instead of growing its heap with blocks of many sizes (glibc grew
       * by 4x the cap on a 2048^2 image) */
      const int ex0 = window_start(x0, overlap, ew, w);
      const int ey0 = window_start(y0, overlap, eh, h);
      lull_atrous_images tile = window_of(images, ex0, ey0, ew, eh);
      tile.output = tile_out;

      if (tp.cancelled)
        status = lull_fail(err, LULL_ERROR_CANCELLED, "execution was cancelled");
      else
        status = tiler->filter(tiler->ctx, &inner, &tile, per_tile, err);
      tp.index += 1.0;
      if (status != LULL_OK)
        break;
      /* the interior, to the output or held back */
      const lull_image interior = lull_image_region(&tile_out, x0 - ex0, y0 - ey0, x1 - x0, y1 - y0);
      if (ring) {
        status = hold_rows(tiler, &held, ring, &interior, y0, x0, x1, y0, y1, err);
      } else {
        const lull_image to = lull_image_region(&images->output, x0, y0, x1 - x0, y1 - y0);
        status = tiler->copy(tiler->ctx, &to, &interior, err);
      }
    }
    /* held rows no later tile reads: those above the next band's overlap */
    if (ring && status == LULL_OK) {
      const int last = row + 1 == tiling->rows;
      const int limit = last ? h : (mode == ALIAS_ROWS ? LULL_MAX(y1 - overlap, 0) : 0);
      if (limit > flushed)
        status = flush_rows(tiler, &images->output, &held, ring, flushed, limit, err);
      flushed = LULL_MAX(flushed, limit);
    }
  }
  host_or_tiler_release(tiler, tile_memory);
  host_or_tiler_release(tiler, held_memory);
  if (status == LULL_OK) {
    /* the output is complete: a request to cancel now changes nothing */
    lull_error ignored;
    (void)lull_progress_report(progress, 1.0, &ignored);
  }
  return status;
}

/* -- the CPU's tiles ---------------------------------------------------------- */

typedef struct cpu_tiles
{
  int num_threads;
} cpu_tiles;

static size_t cpu_scratch_bytes(void* ctx, const lull_atrous_params* params,
                                const lull_atrous_images* images)
{
  (void)ctx;
  (void)params;
  return lull_atrous_cpu_scratch_bytes(images);
}

static lull_status cpu_input_scale(void* ctx, const lull_atrous_params* params,
                                   const lull_image* color, float* scale, lull_error* err)
{
  return lull_atrous_input_scale(params, color, ((cpu_tiles*)ctx)->num_threads, scale, err);
}

/* Gives the memory the last tile freed back to the system.  glibc keeps
 * freed blocks of this size in its heap (its mmap threshold rises to the
 * largest block freed), so without this the heap grew to 7x the cap over the
 * first row of tiles of a 2048^2 image (measured: bench_tiling_memory). */
static void release_free_memory(void)
{
#if defined(__GLIBC__)
  (void)malloc_trim(0);
#endif
}

static lull_status cpu_filter(void* ctx, const lull_atrous_params* params,
                              const lull_atrous_images* tile, const lull_progress* progress,
                              lull_error* err)
{
  const lull_status status = lull_atrous_cpu(params, tile, ((cpu_tiles*)ctx)->num_threads,
                                             progress, err);
  release_free_memory();
  return status;
}

static lull_status cpu_copy(void* ctx, const lull_image* dst, const lull_image* src,
                            lull_error* err)
{
  (void)ctx;
  (void)err;
  const size_t pixel = lull_format_size(src->format);
  for (int y = 0; y < src->height; ++y) {
    unsigned char* to = dst->data + (size_t)y * dst->row_stride;
    const unsigned char* from = src->data + (size_t)y * src->row_stride;
    if (dst->pixel_stride == pixel && src->pixel_stride == pixel) {
      memcpy(to, from, (size_t)src->width * pixel);
      continue;
    }
    for (int x = 0; x < src->width; ++x)
      memcpy(to + (size_t)x * dst->pixel_stride, from + (size_t)x * src->pixel_stride, pixel);
  }
  return LULL_OK;
}

static lull_atrous_tiler cpu_tiler(cpu_tiles* ctx)
{
  /* host memory: the driver's own malloc and free */
  const lull_atrous_tiler tiler = {ctx,  cpu_scratch_bytes, cpu_input_scale, NULL,
                                   NULL, cpu_filter,        cpu_copy};
  return tiler;
}

lull_atrous_tiling lull_atrous_choose_tiling(const lull_atrous_params* params,
                                             const lull_atrous_images* images)
{
  cpu_tiles ctx = {1};
  const lull_atrous_tiler tiler = cpu_tiler(&ctx);
  return lull_atrous_choose_tiling_for(params, images, &tiler);
}

lull_status lull_atrous_cpu_tiling(const lull_atrous_params* params,
                                   const lull_atrous_images* images,
                                   const lull_atrous_tiling* tiling, int num_threads,
                                   lull_planes_cache* cache, const lull_progress* progress,
                                   lull_error* err)
{
  lull_status status = lull_atrous_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const int w = images->color.width, h = images->color.height;
  if (tiling->columns * (long long)tiling->rows <= 1 || w < 1 || h < 1 ||
      lull_format_size(images->output.format) == 0 || tiling->tile_width < 1 ||
      tiling->tile_height < 1 || tiling->overlap < 0)
    return lull_atrous_cpu_cached(params, images, num_threads, cache, progress, err);
  /* under a memory cap: no block held from an earlier, larger run */
  if (cache)
    lull_planes_cache_clear(cache);
  cpu_tiles ctx = {num_threads};
  const lull_atrous_tiler tiler = cpu_tiler(&ctx);
  return lull_atrous_run_tiles(params, images, tiling, &tiler, progress, err);
}

lull_status lull_atrous_cpu_tiled(const lull_atrous_params* params,
                                  const lull_atrous_images* images, int num_threads,
                                  lull_planes_cache* cache, const lull_progress* progress,
                                  lull_error* err)
{
  lull_status status = lull_atrous_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const lull_atrous_tiling tiling = lull_atrous_choose_tiling(params, images);
  return lull_atrous_cpu_tiling(params, images, &tiling, num_threads, cache, progress, err);
}
