/* The à-trous filter on the GPU in overlapping tiles, under maxMemoryMB or
 * when the image's scratch does not fit the device's free memory.
 *
 * core/atrous_tiled.c chooses the grid and moves the pixels (the same
 * driver as the CPU's); this file is its CUDA side: scratch sizes from the
 * run's plan, the automatic input scale of the whole colour (the colour
 * pass of prepare, read back once), a tile as an ordinary run on views into
 * the caller's images, and a kernel that copies a tile's interior to the
 * output (or to the rows held back when the output aliases an input).
 * Everything is ordered on the backend's stream; one block of scratch
 * holds the planes of a tile, the tile's output and the held rows. */
#include "atrous_cuda.h"
#include "backend_cuda.h"

/* The scratch a tiled run carves its pieces from. */
typedef struct cuda_tiles
{
  lull_cuda_backend* cuda;
  int schedule;
  unsigned char* base; /* the planes of a tile at base, the pieces after */
  size_t used, bytes;
} cuda_tiles;

enum { PIECE_ALIGN = 256 };

static size_t round_piece(size_t bytes)
{
  return (bytes + PIECE_ALIGN - 1) / PIECE_ALIGN * PIECE_ALIGN;
}

static size_t tiles_scratch_bytes(void* ctx, const lull_atrous_params* params,
                                  const lull_atrous_images* images)
{
  lull_atrous_plan plan;
  lull_error ignored;
  if (lull_atrous_plan_make(params, images, ((cuda_tiles*)ctx)->schedule, &plan, &ignored) !=
      LULL_OK)
    return SIZE_MAX;
  return plan.scratch_bytes;
}

/* A piece of the scratch after what is in use (released all at once). */
static void* tiles_alloc(void* ctx, size_t bytes)
{
  cuda_tiles* t = (cuda_tiles*)ctx;
  const size_t n = round_piece(bytes ? bytes : 1);
  if (n > t->bytes - t->used)
    return NULL;
  void* p = t->base + t->used;
  t->used += n;
  return p;
}

static void tiles_release(void* ctx, void* memory)
{
  (void)ctx;
  (void)memory; /* the pieces go with the scratch */
}

static lull_status tiles_input_scale(void* ctx, const lull_atrous_params* params,
                                     const lull_image* color, float* scale, lull_error* err)
{
  if (!lull_atrous_scale_is_auto(params)) /* no pixel is read */
    return lull_atrous_input_scale(params, color, 1, scale, err);
  cuda_tiles* t = (cuda_tiles*)ctx;
  lull_atrous_prepare_args a;
  memset(&a, 0, sizeof a);
  a.color = *color;
  a.width = color->width;
  a.height = color->height;
  a.channels = LULL_MIN(lull_format_channels(color->format), 3);
  a.has_alpha = lull_format_channels(color->format) == 4;
  a.input_scale = 1.0f;
  a.auto_scale = 1;
  a.stats = (lull_atrous_color_stats*)tiles_alloc(ctx, sizeof(lull_atrous_color_stats));
  if (!a.stats)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  /* the one read back of a tiled run: every tile's prepare takes the scale
   * as an explicit parameter */
  cudaError_t code = lull_atrous_stats_launch(&a, t->cuda->stream);
  if (code == cudaSuccess)
    code = cudaMemcpyAsync(scale, &a.stats->scale, sizeof *scale, cudaMemcpyDeviceToHost,
                           t->cuda->stream);
  if (code == cudaSuccess)
    code = cudaStreamSynchronize(t->cuda->stream);
  if (code != cudaSuccess)
    return lull_cuda_fail(err, code, "cannot run the ATrous filter");
  return LULL_OK;
}

static lull_status tiles_filter(void* ctx, const lull_atrous_params* params,
                                const lull_atrous_images* tile, const lull_progress* progress,
                                lull_error* err)
{
  cuda_tiles* t = (cuda_tiles*)ctx;
  lull_atrous_plan plan;
  const lull_status status = lull_atrous_plan_make(params, tile, t->schedule, &plan, err);
  if (status != LULL_OK)
    return status;
  /* launched one by one: each tile's pointers differ, so a cached graph
   * (atrous_graph.cu) would be captured for every tile and used once */
  const lull_atrous_launchers launchers = lull_atrous_stream_launchers(&t->cuda->stream);
  return lull_atrous_enqueue(&plan, params, tile, t->base, &launchers, progress, err);
}

/* dst = src, pixel by pixel (views of the same size and format, in memory
 * the device reaches), in 4-, 2- or 1-byte words as the addresses allow. */
static __global__ void copy_pixels(lull_image dst, lull_image src)
{
  const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= src.width || y >= src.height)
    return;
  const size_t n = lull_format_size(src.format);
  const unsigned char* from = src.data + (size_t)y * src.row_stride + (size_t)x * src.pixel_stride;
  unsigned char* to = dst.data + (size_t)y * dst.row_stride + (size_t)x * dst.pixel_stride;
  const size_t align = (size_t)from | (size_t)to | n;
  if (align % 4 == 0) {
    for (size_t k = 0; k < n / 4; ++k)
      ((unsigned*)to)[k] = ((const unsigned*)from)[k];
  } else if (align % 2 == 0) {
    for (size_t k = 0; k < n / 2; ++k)
      ((unsigned short*)to)[k] = ((const unsigned short*)from)[k];
  } else {
    for (size_t k = 0; k < n; ++k)
      to[k] = from[k];
  }
}

static lull_status tiles_copy(void* ctx, const lull_image* dst, const lull_image* src,
                              lull_error* err)
{
  const cuda_tiles* t = (const cuda_tiles*)ctx;
  if (src->width < 1 || src->height < 1)
    return LULL_OK;
  const dim3 block(32, 8);
  const dim3 grid((unsigned)((src->width + 31) / 32), (unsigned)((src->height + 7) / 8));
  copy_pixels<<<grid, block, 0, t->cuda->stream>>>(*dst, *src);
  const cudaError_t code = cudaGetLastError();
  return code == cudaSuccess ? LULL_OK : lull_cuda_fail(err, code, "cannot run the ATrous filter");
}

static lull_atrous_tiler tiler_of(cuda_tiles* t)
{
  const lull_atrous_tiler tiler = {t,           tiles_scratch_bytes, tiles_input_scale, tiles_alloc,
                                   tiles_release, tiles_filter,      tiles_copy};
  return tiler;
}

size_t lull_cuda_atrous_default_cap(lull_cuda_backend* cuda, size_t needed)
{
  if (needed <= cuda->scratch_bytes)
    return 0; /* the scratch it has is enough */
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  /* the scratch held now is freed before a larger one is allocated; a run
   * that would take more than 90% of what is free gets 3/4 of it instead,
   * in tiles, which leaves room for the application and the driver */
  const size_t available = free_bytes + cuda->scratch_bytes;
  return needed <= available / 10 * 9 ? 0 : available / 4 * 3;
}

/* The caller's progress monitor, told 1 only once the stream has run the
 * tiles' last copies (the driver reports 1 after queueing them). */
typedef struct synced_progress
{
  const lull_progress* outer;
  cudaStream_t stream;
} synced_progress;

static int report_synced(void* user, double done)
{
  const synced_progress* p = (const synced_progress*)user;
  if (done >= 1.0 && cudaStreamSynchronize(p->stream) != cudaSuccess)
    return 1; /* the error stays on the stream for the device's sync */
  return p->outer->report(p->outer->user, done);
}

lull_atrous_tiling lull_cuda_atrous_tiling(const lull_atrous_params* params,
                                           const lull_atrous_images* images, int schedule)
{
  cuda_tiles t = {NULL, schedule, NULL, 0, 0};
  const lull_atrous_tiler tiler = tiler_of(&t);
  return lull_atrous_choose_tiling_for(params, images, &tiler);
}

lull_status lull_cuda_atrous_tiles(lull_cuda_backend* cuda, const lull_atrous_params* params,
                                   const lull_atrous_images* images, int schedule,
                                   const lull_atrous_tiling* tiling,
                                   const lull_progress* progress, lull_error* err)
{
  if (tiling->columns * (long long)tiling->rows <= 1) /* the caller runs it untiled */
    return lull_fail(err, LULL_ERROR_UNKNOWN, "internal error: a grid of one tile");
  cuda_tiles t = {cuda, schedule, NULL, 0, 0};
  const lull_atrous_tiler tiler = tiler_of(&t);
  /* the tile's planes, then its output and the held rows (tiling->bytes
   * in all), the pieces' rounding, and the colour pass's results */
  if (tiling->bytes > SIZE_MAX - 8 * PIECE_ALIGN)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "image too large");
  t.bytes = round_piece(tiling->bytes) + 4 * PIECE_ALIGN;
  t.base = (unsigned char*)lull_cuda_scratch(cuda, t.bytes, err);
  if (!t.base)
    return err ? err->code : LULL_ERROR_OUT_OF_MEMORY;
  t.used = round_piece(tiling->planes);
  synced_progress synced = {progress, cuda->stream};
  const lull_progress reporting = {report_synced, &synced};
  const int watched = progress && progress->report;
  return lull_atrous_run_tiles(params, images, tiling, &tiler, watched ? &reporting : NULL, err);
}
