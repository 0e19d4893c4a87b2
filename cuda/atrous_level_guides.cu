/* The colour test's per-level inputs (atrous_cpu.c, prepare_level_guides):
 * before each level of the variance-guided filter, every pixel gets the
 * 3x3-binomial-smoothed luminance gl (the guide the colour test compares)
 * and il = 1 / (sigma_l sqrt(g3x3 Var) + eps) (SVGF §4.4), from its original
 * 3x3 neighbourhood.  A kernel of its own because every tap of the level
 * reads its neighbours' gl; it runs in the level's layout, so it serves
 * both schedules. */
#include "atrous_common.cuh"

/* The colour test's inputs of a level, for every pixel of its layout. */
static __global__ void level_guides(const lull_atrous_level_args a)
{
  const int px = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int py = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (px >= a.width || py >= a.height)
    return;
  const int ox = a.inv_x ? __ldg(a.inv_x + px) : px;
  const int oy = a.inv_y ? __ldg(a.inv_y + py) : py;
  a.lg[(size_t)py * (size_t)a.width + (size_t)px] = atrous_level_guides(&a, ox, oy);
}

cudaError_t lull_atrous_level_guides_launch(const lull_atrous_level_args* args, cudaStream_t stream)
{
  const dim3 block(32, 8);
  const dim3 grid((unsigned)((args->width + 31) / 32), (unsigned)((args->height + 7) / 8));
  level_guides<<<grid, block, 0, stream>>>(*args);
  return cudaGetLastError();
}

