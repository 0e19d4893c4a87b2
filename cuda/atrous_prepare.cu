/* The prepare kernel (atrous_prepare.cuh) and its launcher. */
#include "atrous_prepare.cuh"

/* Blocks per multiprocessor the register budget must allow, on sm_90: 4
 * blocks of 384 threads (40 registers, 40 bytes spilled in the float
 * variant), the most that its shared memory (46 KB a block) allows.
 * H100, 1080p (4K): 0.146 (0.525) ms against 0.157 (0.570) with 3 blocks
 * (56 registers) and 0.162 (0.587) with the former blocks of 32 x 8 pixels
 * at 5 blocks; before phase 0 issued its loads together, 0.174 ms.
 * Elsewhere no bound: shared memory holds 3 blocks on sm_80, 2 on sm_86
 * and sm_89 and 1 on sm_75, so a register cap would buy spills and no
 * occupancy. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PREP_MIN_BLOCKS 4
#else
#define PREP_MIN_BLOCKS 1
#endif

#define LULL_PREPARE_KERNEL(name, position, floats)                          \
  static __global__ void __launch_bounds__(PREP_THREADS, PREP_MIN_BLOCKS)   \
      name(const lull_atrous_prepare_args a)                                  \
  {                                                                           \
    __shared__ prepare_tile s;                                                \
    const lull_thread t = LULL_THREAD_HERE();                                 \
    prepare_body(&a, &s, 0, t, position, floats);                             \
    __syncthreads();                                                          \
    prepare_body(&a, &s, 1, t, position, floats);                             \
    __syncthreads();                                                          \
    prepare_body(&a, &s, 2, t, position, floats);                             \
  }

/* the float variants read float images without format dispatch */
LULL_PREPARE_KERNEL(prepare_depth, 0, 0)
LULL_PREPARE_KERNEL(prepare_position, 1, 0)
LULL_PREPARE_KERNEL(prepare_depth_float, 0, 1)
LULL_PREPARE_KERNEL(prepare_position_float, 1, 1)

#define LULL_BOUND_KERNEL(name, floats)                                       \
  static __global__ void __launch_bounds__(BOUND_THREADS)                     \
      name(const lull_atrous_prepare_args a, int blocks)                      \
  {                                                                           \
    __shared__ bound_tile s;                                                  \
    const lull_thread t = LULL_THREAD_HERE();                                 \
    prepare_bound_body(&a, &s, 0, t, blocks, floats);                         \
    __syncthreads();                                                          \
    prepare_bound_body(&a, &s, 1, t, blocks, floats);                         \
    __syncthreads();                                                          \
    prepare_bound_body(&a, &s, 2, t, blocks, floats);                         \
  }

LULL_BOUND_KERNEL(prepare_bound, 0)
LULL_BOUND_KERNEL(prepare_bound_float, 1)

cudaError_t lull_atrous_stats_launch(const lull_atrous_prepare_args* args, cudaStream_t stream)
{
  const cudaError_t code = cudaMemsetAsync(args->stats, 0, sizeof(lull_atrous_color_stats), stream);
  if (code != cudaSuccess)
    return code;
  const int blocks = prepare_bound_blocks(args->width, args->height);
  if (prepare_inputs_float(args))
    prepare_bound_float<<<blocks, BOUND_THREADS, 0, stream>>>(*args, blocks);
  else
    prepare_bound<<<blocks, BOUND_THREADS, 0, stream>>>(*args, blocks);
  return cudaGetLastError();
}

cudaError_t lull_atrous_prepare_launch(const lull_atrous_prepare_args* args, cudaStream_t stream)
{
  if (args->stats) {
    const cudaError_t code = lull_atrous_stats_launch(args, stream);
    if (code != cudaSuccess)
      return code;
  }
  const dim3 block(PREP_BW, PREP_BH);
  const dim3 grid((unsigned)((args->width + PREP_BW - 1) / PREP_BW),
                  (unsigned)((args->height + PREP_BH - 1) / PREP_BH));
  const int pos = args->geometry_kind == LULL_ATROUS_GEOMETRY_POSITION;
  if (prepare_inputs_float(args))
    (pos ? prepare_position_float : prepare_depth_float)<<<grid, block, 0, stream>>>(*args);
  else
    (pos ? prepare_position : prepare_depth)<<<grid, block, 0, stream>>>(*args);
  return cudaGetLastError();
}
