/* The prepare kernel (atrous_prepare.cuh) and its launcher. */
#include "atrous_prepare.cuh"

/* Blocks per multiprocessor the register budget must allow, on sm_90: 5
 * (48 registers, 40 bytes spilled) beat the 4 that 53 registers would
 * give: H100, 1080p, 0.162 against 0.178 ms, and 0.174 ms before phase 0
 * issued its loads together.  Elsewhere no bound: shared memory (35 KB a
 * block) holds 4 blocks on sm_80 and 2 on sm_86 and sm_89, so a register
 * cap would buy spills and no occupancy. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PREP_MIN_BLOCKS 5
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

cudaError_t lull_atrous_prepare_launch(const lull_atrous_prepare_args* args, cudaStream_t stream)
{
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
