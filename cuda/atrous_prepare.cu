/* The prepare kernel (atrous_prepare.cuh) and its launcher. */
#include "atrous_prepare.cuh"

#define LULL_PREPARE_KERNEL(name, position)                                  \
  static __global__ void __launch_bounds__(PREP_THREADS) name(const lull_atrous_prepare_args a) \
  {                                                                           \
    __shared__ prepare_tile s;                                                \
    const lull_thread t = LULL_THREAD_HERE();                                 \
    prepare_body(&a, &s, 0, t, position);                                     \
    __syncthreads();                                                          \
    prepare_body(&a, &s, 1, t, position);                                     \
    __syncthreads();                                                          \
    prepare_body(&a, &s, 2, t, position);                                     \
  }

LULL_PREPARE_KERNEL(prepare_depth, 0)
LULL_PREPARE_KERNEL(prepare_position, 1)

cudaError_t lull_atrous_prepare_launch(const lull_atrous_prepare_args* args, cudaStream_t stream)
{
  const dim3 block(PREP_BW, PREP_BH);
  const dim3 grid((unsigned)((args->width + PREP_BW - 1) / PREP_BW),
                  (unsigned)((args->height + PREP_BH - 1) / PREP_BH));
  if (args->geometry_kind == LULL_ATROUS_GEOMETRY_POSITION)
    prepare_position<<<grid, block, 0, stream>>>(*args);
  else
    prepare_depth<<<grid, block, 0, stream>>>(*args);
  return cudaGetLastError();
}
