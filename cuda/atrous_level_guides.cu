/* The colour test's per-level inputs (atrous_cpu.c, prepare_level_guides):
 * before each level of the variance-guided filter, every pixel gets the
 * 3x3-binomial-smoothed luminance gl (the guide the colour test compares)
 * and il = 1 / (sigma_l sqrt(g3x3 Var) + eps) (SVGF §4.4), from its original
 * 3x3 neighbourhood (level_guides_body, atrous_common.cuh).  A kernel of
 * its own because every tap of the level reads its neighbours' gl, and the
 * original neighbours of a pixel lie in other sub-images of the permuted
 * layout; it runs in the level's layout, so it serves both schedules. */
#include "atrous_common.cuh"

static __global__ void level_guides(const lull_atrous_level_args a)
{
  level_guides_body(&a, LULL_THREAD_HERE());
}

cudaError_t lull_atrous_level_guides_launch(const lull_atrous_level_args* args, cudaStream_t stream)
{
  const dim3 block(32, 8);
  const dim3 grid((unsigned)((args->width + 31) / 32), (unsigned)((args->height + 7) / 8));
  level_guides<<<grid, block, 0, stream>>>(*args);
  return cudaGetLastError();
}
