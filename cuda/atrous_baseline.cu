/* The baseline kernels (atrous_baseline.cuh) and their launcher. */
#include "atrous_baseline.cuh"

#define LULL_BASELINE_KERNEL(name, variance_mode, geometry_kind) \
  static __global__ void name(const lull_atrous_level_args a)   \
  {                                                              \
    baseline_body(&a, LULL_THREAD_HERE(), variance_mode, geometry_kind); \
  }

LULL_BASELINE_KERNEL(baseline_variance_depth, 1, LULL_ATROUS_GEOMETRY_DEPTH)
LULL_BASELINE_KERNEL(baseline_variance_position, 1, LULL_ATROUS_GEOMETRY_POSITION)
LULL_BASELINE_KERNEL(baseline_fixed_depth, 0, LULL_ATROUS_GEOMETRY_DEPTH)
LULL_BASELINE_KERNEL(baseline_fixed_position, 0, LULL_ATROUS_GEOMETRY_POSITION)

cudaError_t lull_atrous_baseline_launch(const lull_atrous_level_args* args, int variance_mode,
                                        int geometry_kind, cudaStream_t stream)
{
  const dim3 block(BASE_BW, BASE_BH);
  const dim3 grid((unsigned)((args->width + BASE_BW - 1) / BASE_BW),
                  (unsigned)((args->height + BASE_BH - 1) / BASE_BH));
  const int pos = geometry_kind == LULL_ATROUS_GEOMETRY_POSITION;
  if (variance_mode)
    (pos ? baseline_variance_position : baseline_variance_depth)<<<grid, block, 0, stream>>>(*args);
  else
    (pos ? baseline_fixed_position : baseline_fixed_depth)<<<grid, block, 0, stream>>>(*args);
  return cudaGetLastError();
}
