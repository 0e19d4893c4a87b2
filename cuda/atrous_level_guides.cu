/* The guide kernel (atrous_level_guides.cuh): a kernel of its own because
 * every tap of the level reads its neighbours' gl, and the original
 * neighbours of a pixel lie in other sub-images of the permuted layout; it
 * works on tiles of the original image, so it serves both schedules. */
#include "atrous_level_guides.cuh"

static __global__ void __launch_bounds__(GUIDE_THREADS) level_guides(const lull_atrous_level_args a)
{
  __shared__ guide_tile s;
  const lull_thread t = LULL_THREAD_HERE();
  level_guides_body(&a, &s, 0, t);
  __syncthreads();
  level_guides_body(&a, &s, 1, t);
}

cudaError_t lull_atrous_level_guides_launch(const lull_atrous_level_args* args, cudaStream_t stream)
{
  const dim3 block(GUIDE_BW, GUIDE_TY);
  const dim3 grid((unsigned)((args->width + GUIDE_BW - 1) / GUIDE_BW),
                  (unsigned)((args->height + GUIDE_BH - 1) / GUIDE_BH));
  level_guides<<<grid, block, 0, stream>>>(*args);
  return cudaGetLastError();
}
