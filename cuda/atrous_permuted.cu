/* The permuted-schedule kernels (atrous_permuted.cuh) and their launchers. */
#include "atrous_permuted.cuh"

/* min_blocks 4 (128 registers, 16 warps per multiprocessor) for every
 * kernel.  The fp32 variance kernel keeps the centre's
 * 1 / (sigma_g s_p)^2 / |p - q|^2 per class (atrous_math.h subtracts the
 * geometry before scaling): at 1080p its five levels took 1.010 ms with 5
 * blocks and 0.902 ms with 4.  The packed depth kernel spilled a little
 * with 5 blocks (96 registers, 0.59 M local-memory requests per 1080p
 * level); once its staging loads overlapped, 4 blocks were faster: 0.711
 * against 0.729 ms for the five levels (bench_atrous_cuda, H100). */
LULL_PERMUTED_KERNEL(permuted_variance_depth, 1, LULL_ATROUS_GEOMETRY_DEPTH, 0, 4)
LULL_PERMUTED_KERNEL(permuted_variance_position, 1, LULL_ATROUS_GEOMETRY_POSITION, 0, 4)
LULL_PERMUTED_KERNEL(permuted_fixed_depth, 0, LULL_ATROUS_GEOMETRY_DEPTH, 0, 4)
LULL_PERMUTED_KERNEL(permuted_fixed_position, 0, LULL_ATROUS_GEOMETRY_POSITION, 0, 4)
LULL_PERMUTED_KERNEL(permuted_packed_depth, 1, LULL_ATROUS_GEOMETRY_DEPTH, 1, 4)
LULL_PERMUTED_KERNEL(permuted_packed_position, 1, LULL_ATROUS_GEOMETRY_POSITION, 1, 4)

cudaError_t lull_atrous_kernels_configure(void)
{
  /* the permuted kernels live on shared memory (4 tiles of 42-47 KB per
   * multiprocessor): ask for the largest shared-memory carveout; the
   * baseline keeps the default, as it relies on L1 */
  void* const kernels[] = {(void*)permuted_variance_depth, (void*)permuted_variance_position,
                           (void*)permuted_fixed_depth,    (void*)permuted_fixed_position,
                           (void*)permuted_packed_depth,   (void*)permuted_packed_position};
  for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; ++k) {
    const cudaError_t code = cudaFuncSetAttribute(
        kernels[k], cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
    if (code != cudaSuccess)
      return code;
  }
  return cudaSuccess;
}

static __global__ void permuted_finish(const lull_atrous_level_args a)
{
  permuted_finish_body(&a, LULL_THREAD_HERE());
}

cudaError_t lull_atrous_permuted_launch(const lull_atrous_level_args* args, int variance_mode,
                                        int geometry_kind, cudaStream_t stream)
{
  const dim3 block(PERM_BW, PERM_BH);
  const dim3 grid((unsigned)((args->width + PERM_BW - 1) / PERM_BW),
                  (unsigned)((args->height + PERM_OUT_H - 1) / PERM_OUT_H));
  const int pos = geometry_kind == LULL_ATROUS_GEOMETRY_POSITION;
  /* packed buffers exist for the variance-guided colour test only */
  if (variance_mode && args->packed)
    (pos ? permuted_packed_position : permuted_packed_depth)<<<grid, block, 0, stream>>>(*args);
  else if (variance_mode)
    (pos ? permuted_variance_position : permuted_variance_depth)<<<grid, block, 0, stream>>>(*args);
  else
    (pos ? permuted_fixed_position : permuted_fixed_depth)<<<grid, block, 0, stream>>>(*args);
  if (args->last) {
    const dim3 fblock(32, 8);
    const dim3 fgrid((unsigned)((args->width + 31) / 32), (unsigned)((args->height + 7) / 8));
    permuted_finish<<<fgrid, fblock, 0, stream>>>(*args);
  }
  return cudaGetLastError();
}

static __global__ void layout_tables(int* tables, int width, int height, int levels)
{
  layout_tables_body(tables, width, height, levels, LULL_THREAD_HERE());
}

cudaError_t lull_atrous_layout_tables_launch(int* tables, int width, int height, int levels,
                                             cudaStream_t stream)
{
  const int n = width > height ? width : height;
  const dim3 grid((unsigned)((n + 255) / 256), 2);
  layout_tables<<<grid, 256, 0, stream>>>(tables, width, height, levels);
  return cudaGetLastError();
}
