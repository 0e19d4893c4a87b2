/* The permuted-schedule kernels (atrous_permuted.cuh) and their launchers. */
#include "atrous_permuted.cuh"

/* Blocks per multiprocessor the register budget must allow: the most
 * warps without spills, measured (bench_atrous_cuda, H100, five levels
 * or the whole packed filter at 1080p):
 *   - fp32 kernels 6 (at most 80 registers; they take 71-80): 0.747 ms
 *     with 6 against 0.753 with 7 (whole fp32 filter 0.849 against 0.860
 *     after the normal term lost its clamp, 058d4b5);
 *   - the packed depth kernel 8 (at most 64; it takes 63 since 058d4b5):
 *     whole filter 0.668 against 0.676 ms with 7 (0.686 with 6), 4K 2.47
 *     against 2.50 ms;
 *   - the packed position kernel 7 (at most 72, 69 used; with 8 it
 *     spills 16 bytes);
 *   - the packed fixed-colour kernels 6 (80 registers, as the fp32 ones:
 *     the centre's colour and the colour test's factor): 1080p 0.545-0.548
 *     ms with 6 against 0.557 with 7, where the depth kernel spills 40
 *     bytes (4K 2.041 against 2.078-2.082).
 * The fixed-colour position kernel keeps a 12-byte spill on sm_90.  With
 * strips of 4 pixels the kernels needed 115 registers and ran 4 blocks
 * (atrous_permuted.cuh says why the strips are 2 pixels now). */
enum
{
  PERM_MIN_BLOCKS_FP32 = 6,
  PERM_MIN_BLOCKS_PACKED_DEPTH = 8,
  PERM_MIN_BLOCKS_PACKED_POSITION = 7,
  PERM_MIN_BLOCKS_PACKED_FIXED = 6
};
LULL_PERMUTED_KERNEL(permuted_variance_depth, 1, LULL_ATROUS_GEOMETRY_DEPTH, 0,
                     PERM_MIN_BLOCKS_FP32)
LULL_PERMUTED_KERNEL(permuted_variance_position, 1, LULL_ATROUS_GEOMETRY_POSITION, 0,
                     PERM_MIN_BLOCKS_FP32)
LULL_PERMUTED_KERNEL(permuted_fixed_depth, 0, LULL_ATROUS_GEOMETRY_DEPTH, 0, PERM_MIN_BLOCKS_FP32)
LULL_PERMUTED_KERNEL(permuted_fixed_position, 0, LULL_ATROUS_GEOMETRY_POSITION, 0,
                     PERM_MIN_BLOCKS_FP32)
LULL_PERMUTED_KERNEL(permuted_packed_depth, 1, LULL_ATROUS_GEOMETRY_DEPTH, 1,
                     PERM_MIN_BLOCKS_PACKED_DEPTH)
LULL_PERMUTED_KERNEL(permuted_packed_position, 1, LULL_ATROUS_GEOMETRY_POSITION, 1,
                     PERM_MIN_BLOCKS_PACKED_POSITION)
LULL_PERMUTED_KERNEL(permuted_packed_fixed_depth, 0, LULL_ATROUS_GEOMETRY_DEPTH, 1,
                     PERM_MIN_BLOCKS_PACKED_FIXED)
LULL_PERMUTED_KERNEL(permuted_packed_fixed_position, 0, LULL_ATROUS_GEOMETRY_POSITION, 1,
                     PERM_MIN_BLOCKS_PACKED_FIXED)

cudaError_t lull_atrous_kernels_configure(void)
{
  /* the permuted kernels live on shared memory (6-7 tiles of 24-28 KB per
   * multiprocessor): ask for the largest shared-memory carveout; the
   * baseline keeps the default, as it relies on L1 */
  void* const kernels[] = {(void*)permuted_variance_depth,     (void*)permuted_variance_position,
                           (void*)permuted_fixed_depth,        (void*)permuted_fixed_position,
                           (void*)permuted_packed_depth,       (void*)permuted_packed_position,
                           (void*)permuted_packed_fixed_depth, (void*)permuted_packed_fixed_position};
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
  if (variance_mode && args->packed)
    (pos ? permuted_packed_position : permuted_packed_depth)<<<grid, block, 0, stream>>>(*args);
  else if (args->packed)
    (pos ? permuted_packed_fixed_position
         : permuted_packed_fixed_depth)<<<grid, block, 0, stream>>>(*args);
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
