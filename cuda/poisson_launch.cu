/* The Poisson filter's kernels (poisson_kernels.cuh, dct_cuda.cuh) as
 * __global__ functions, one per kind, and their launcher on a stream. */
#include "poisson_kernels.cuh"

/* Every block runs its work items (pixel kernels: one; DCT kernels: line
 * groups in turn) phase by phase with a barrier in between. */
/* Turing (sm_75) holds 1024 threads per multiprocessor, four of our blocks:
 * asking ptxas for five there is an error, not a hint.  The grid is still
 * sized for five (poisson_schedule.cu), a quarter wave more on Turing. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define LULL_PK_MIN_BLOCKS (1024 / LULL_PK_THREADS)
#else
#define LULL_PK_MIN_BLOCKS LULL_PK_BLOCKS_PER_SM
#endif

template <int K>
static __global__ void __launch_bounds__(LULL_PK_THREADS, LULL_PK_MIN_BLOCKS) lull_pk_kernel(const lull_pk_launch launch)
{
  extern __shared__ __align__(16) unsigned char lull_pk_shared[];
  for (int g = (int)blockIdx.x; g < launch.groups; g += (int)gridDim.x)
    for (int phase = 0; phase < launch.phases; ++phase) {
      lull_pk_body(K, &launch, lull_pk_shared, g, (int)blockIdx.x, phase, (int)threadIdx.x);
      __syncthreads();
    }
}

/* The GradientDomain kernels that build patches per pixel (a 25 x 14
 * feature matrix, its factorisation and a 25 x 25 Gram matrix in local
 * memory) and the post-filter's (a regression's sums and two windows of
 * distances per tap) get the registers they want instead of the 51 the
 * sweeps are held to. */
template <int K>
static __global__ void __launch_bounds__(LULL_PK_THREADS) lull_pk_patch_kernel(const lull_pk_launch launch)
{
  extern __shared__ __align__(16) unsigned char lull_pk_shared[];
  for (int g = (int)blockIdx.x; g < launch.groups; g += (int)gridDim.x)
    for (int phase = 0; phase < launch.phases; ++phase) {
      lull_pk_body(K, &launch, lull_pk_shared, g, (int)blockIdx.x, phase, (int)threadIdx.x);
      __syncthreads();
    }
}

template <int K>
static cudaError_t launch_kind(const lull_pk_launch* l, cudaStream_t stream)
{
  if constexpr (K == LULL_PK_GD_WEIGHTS || K == LULL_PK_GD_STENCIL || K == LULL_PK_GD_POST) {
    lull_pk_patch_kernel<K><<<(unsigned)l->grid, LULL_PK_THREADS, l->smem, stream>>>(*l);
  } else {
    if (l->smem > 48 * 1024) {
      /* above the default limit a kernel must ask (the plan stays within the
       * device's opt-in maximum), and the DCT kernels want the whole
       * carveout as shared memory to keep several blocks resident */
      cudaError_t code = cudaFuncSetAttribute(
          lull_pk_kernel<K>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)l->smem);
      if (code == cudaSuccess)
        code = cudaFuncSetAttribute(lull_pk_kernel<K>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared);
      if (code != cudaSuccess)
        return code;
    }
    lull_pk_kernel<K><<<(unsigned)l->grid, LULL_PK_THREADS, l->smem, stream>>>(*l);
  }
  return cudaGetLastError();
}

static cudaError_t stream_launch(void* ctx, const lull_pk_launch* l)
{
  const cudaStream_t stream = *(cudaStream_t*)ctx;
  switch (l->kind) {
#define LULL_PK_CASE(k) \
  case k: return launch_kind<k>(l, stream);
    LULL_PK_CASE(LULL_PK_CLEAR)
    LULL_PK_CASE(LULL_PK_DCT_TABLES)
    LULL_PK_CASE(LULL_PK_DCT_X_FORWARD)
    LULL_PK_CASE(LULL_PK_DCT_Y_SOLVE)
    LULL_PK_CASE(LULL_PK_DCT_X_INVERSE)
    LULL_PK_CASE(LULL_PK_LOAD)
    LULL_PK_CASE(LULL_PK_REPAIR)
    LULL_PK_CASE(LULL_PK_WEIGHTS_RESET)
    LULL_PK_CASE(LULL_PK_CG_INIT)
    LULL_PK_CASE(LULL_PK_CG_APPLY)
    LULL_PK_CASE(LULL_PK_CG_UPDATE)
    LULL_PK_CASE(LULL_PK_PRECOND_SUMS)
    LULL_PK_CASE(LULL_PK_REWEIGHT)
    LULL_PK_CASE(LULL_PK_SCALE_WEIGHTS)
    LULL_PK_CASE(LULL_PK_MEAN_WEIGHTS)
    LULL_PK_CASE(LULL_PK_PRIMAL_MEAN)
    LULL_PK_CASE(LULL_PK_FINITE_OR)
    LULL_PK_CASE(LULL_PK_STORE)
    LULL_PK_CASE(LULL_PK_CG_DIRECTION)
    LULL_PK_CASE(LULL_PK_MEAN_OFFSET)
    LULL_PK_CASE(LULL_PK_SHIFT)
    LULL_PK_CASE(LULL_PK_CG_START)
    LULL_PK_CASE(LULL_PK_CG_UPDATE_DEFLATED)
    LULL_PK_CASE(LULL_PK_GD_AXPY)
    LULL_PK_CASE(LULL_PK_GD_ZERO)
    LULL_PK_CASE(LULL_PK_GD_GRADIENTS)
    LULL_PK_CASE(LULL_PK_GD_HALF_VARIANCE)
    LULL_PK_CASE(LULL_PK_GD_BOX_MEAN)
    LULL_PK_CASE(LULL_PK_GD_MAX)
    LULL_PK_CASE(LULL_PK_GD_FEATURE_LOAD)
    LULL_PK_CASE(LULL_PK_GD_FEATURE_RANGE)
    LULL_PK_CASE(LULL_PK_GD_FEATURE_NORMALIZE)
    LULL_PK_CASE(LULL_PK_GD_FEATURE_SCALE)
    LULL_PK_CASE(LULL_PK_GD_WEIGHTS)
    LULL_PK_CASE(LULL_PK_GD_STENCIL)
    LULL_PK_CASE(LULL_PK_GD_SCORE)
    LULL_PK_CASE(LULL_PK_GD_KEEP_BEST)
    LULL_PK_CASE(LULL_PK_GD_POST_SCALE)
    LULL_PK_CASE(LULL_PK_GD_POST)
#undef LULL_PK_CASE
    default: return cudaErrorInvalidValue;
  }
}

static cudaError_t stream_sync(void* ctx)
{
  return cudaStreamSynchronize(*(cudaStream_t*)ctx);
}

lull_pk_launchers lull_pk_stream_launchers(cudaStream_t* stream)
{
  lull_pk_launchers l;
  l.ctx = stream;
  l.launch = stream_launch;
  l.sync = stream_sync;
  return l;
}
