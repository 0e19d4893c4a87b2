/* The Regression filter's kernels on a stream, and the backend's entry
 * (regression_cuda.h says how the run is built; regression_schedule.cu
 * orders the kernels). */
#include "atrous_cuda.h"
#include "backend_cuda.h"
#include "regression_kernels.cuh"

template <class Acc>
static __global__ void __launch_bounds__(LULL_RK_THREADS)
    rk_tile_kernel(const __grid_constant__ lull_rk_tile_args a)
{
  lull_rk_tile_kernel_body<Acc, LULL_RK_GROUP>(&a);
}

static __global__ void rk_pixel_kernel(const __grid_constant__ lull_rk_pixel_args a)
{
  lull_rk_pixel_body(&a, (int)(blockIdx.x * blockDim.x + threadIdx.x),
                     (int)(blockIdx.y * blockDim.y + threadIdx.y));
}

template <int WR, int SAME>
static __global__ void rk_firefly_kernel(const __grid_constant__ lull_rk_pixel_args a)
{
  lull_rk_firefly_level_at<WR, SAME>(&a, (int)(blockIdx.x * blockDim.x + threadIdx.x),
                                     (int)(blockIdx.y * blockDim.y + threadIdx.y));
}

static __global__ void __launch_bounds__(LULL_RK_THREADS)
    rk_reduce_kernel(const __grid_constant__ lull_rk_reduce_args a)
{
  __shared__ lull_rk_partial part[LULL_RK_THREADS];
  if (a.finalize) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
      lull_rk_reduce_finalize(&a);
    return;
  }
  lull_rk_reduce_thread(&a, (int)blockIdx.x, (int)threadIdx.x, &part[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x == 0)
    lull_rk_reduce_block(part, &a.partials[blockIdx.x]);
}

/* -- launchers ---------------------------------------------------------------------- */

static cudaStream_t stream_of(void* ctx)
{
  return ((lull_cuda_backend*)ctx)->stream;
}

template <class Acc>
static cudaError_t launch_tiles(const lull_rk_tile_args* a, cudaStream_t stream)
{
  const int th = LULL_RK_TILE_W / a->nb;
  const dim3 grid((unsigned)((a->width + LULL_RK_TILE_W - 1) / LULL_RK_TILE_W),
                  (unsigned)((a->height + th - 1) / th),
                  (unsigned)(a->kind == LULL_RK_SMOOTH ? a->sets : 1));
  const size_t smem = lull_rk_tile_smem_floats(a->nb, a->patch, LULL_RK_GROUP) * sizeof(float);
  if (smem > 48 * 1024) {
    const cudaError_t code = cudaFuncSetAttribute(
        rk_tile_kernel<Acc>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (code != cudaSuccess)
      return code;
  }
  rk_tile_kernel<Acc><<<grid, LULL_RK_THREADS, smem, stream>>>(*a);
  return cudaGetLastError();
}

template <int N>
static cudaError_t launch_pass(const lull_rk_tile_args* a, cudaStream_t stream)
{
  return a->kind == LULL_RK_FIT ? launch_tiles<lull_rk_fit<N>>(a, stream)
                                : launch_tiles<lull_rk_gather<N>>(a, stream);
}

static cudaError_t stream_tiles(void* ctx, const lull_rk_tile_args* a)
{
  const cudaStream_t stream = stream_of(ctx);
  if (a->kind == LULL_RK_SMOOTH)
    return launch_tiles<lull_rk_smooth>(a, stream);
  switch (a->n) {
    case 3: return launch_pass<3>(a, stream);
    case 4: return launch_pass<4>(a, stream);
    case 6: return launch_pass<6>(a, stream);
    case 7: return launch_pass<7>(a, stream);
    case 9: return launch_pass<9>(a, stream);
    case 10: return launch_pass<10>(a, stream);
    case 12: return launch_pass<12>(a, stream);
    default: return cudaErrorInvalidValue;
  }
}

static cudaError_t stream_pixels(void* ctx, const lull_rk_pixel_args* a)
{
  const cudaStream_t stream = stream_of(ctx);
  const dim3 block(32, 8);
  const dim3 grid((unsigned)((a->width + 31) / 32), (unsigned)((a->height + 7) / 8));
  if (a->kind == LULL_RK_FIREFLY_LEVEL) {
    if (a->radius == LULL_REG_FIREFLY_RADIUS_HALVES && !a->flag)
      rk_firefly_kernel<LULL_REG_FIREFLY_RADIUS_HALVES, 0><<<grid, block, 0, stream>>>(*a);
    else if (a->radius == LULL_REG_FIREFLY_RADIUS_ONE && a->flag)
      rk_firefly_kernel<LULL_REG_FIREFLY_RADIUS_ONE, 1><<<grid, block, 0, stream>>>(*a);
    else
      return cudaErrorInvalidValue;
  } else {
    rk_pixel_kernel<<<grid, block, 0, stream>>>(*a);
  }
  return cudaGetLastError();
}

static cudaError_t stream_reduce(void* ctx, const lull_rk_reduce_args* a)
{
  rk_reduce_kernel<<<a->finalize ? 1 : LULL_RK_REDUCE_BLOCKS, LULL_RK_THREADS, 0, stream_of(ctx)>>>(*a);
  return cudaGetLastError();
}

/* The pilot is the backend's own à-trous run (the baseline schedule: its
 * borders are the CPU's, where the permuted schedule mirrors taps), with
 * the region's block in front as its scratch. */
static lull_status stream_pilot(void* ctx, const lull_atrous_params* params,
                                const lull_atrous_images* images, unsigned char* scratch,
                                size_t scratch_bytes, lull_error* err)
{
  lull_cuda_backend* cuda = (lull_cuda_backend*)ctx;
  lull_atrous_plan plan;
  lull_status status =
      lull_atrous_plan_make(params, images, LULL_ATROUS_SCHEDULE_BASELINE, &plan, err);
  if (status != LULL_OK)
    return status;
  if (plan.scratch_bytes > scratch_bytes)
    return lull_fail(err, LULL_ERROR_UNKNOWN, "Regression: the pilot's scratch is too small");
  void* saved = cuda->scratch;
  const size_t saved_bytes = cuda->scratch_bytes;
  cuda->scratch = scratch;
  cuda->scratch_bytes = scratch_bytes;
  status = lull_cuda_atrous(cuda, params, images, LULL_ATROUS_SCHEDULE_BASELINE, NULL, err);
  cuda->scratch = saved;
  cuda->scratch_bytes = saved_bytes;
  return status;
}

static cudaError_t stream_sync(void* ctx)
{
  return cudaStreamSynchronize(stream_of(ctx));
}

lull_rk_launchers lull_rk_stream_launchers(lull_cuda_backend* cuda)
{
  lull_rk_launchers l;
  memset(&l, 0, sizeof l);
  l.ctx = cuda;
  l.pixels = stream_pixels;
  l.tiles = stream_tiles;
  l.reduce = stream_reduce;
  l.pilot = stream_pilot;
  l.sync = stream_sync;
  return l;
}

lull_status lull_cuda_regression(lull_cuda_backend* cuda, const lull_regression_params* params,
                                 const lull_regression_images* images,
                                 const lull_progress* progress, lull_error* err)
{
  lull_status status = lull_regression_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  /* tiles under maxMemoryMB, or in what the GPU has free when an untiled
   * run would not fit it (whichever cap is smaller) */
  const size_t untiled = lull_rk_filter_bytes(params, images, 0);
  size_t cap = lull_cuda_atrous_default_cap(cuda, untiled);
  if (params->memory_cap != 0 && (cap == 0 || params->memory_cap < cap))
    cap = params->memory_cap;
  const size_t bytes = lull_rk_filter_bytes(params, images, cap);
  unsigned char* memory = (unsigned char*)lull_cuda_scratch(cuda, bytes, err);
  if (!memory)
    return err ? err->code : LULL_ERROR_OUT_OF_MEMORY;
  const lull_rk_launchers launchers = lull_rk_stream_launchers(cuda);
  return lull_rk_filter(params, images, cap, memory, &launchers, progress, err);
}
