/* The guide kernel (atrous_level_guides.cuh): a kernel of its own because
 * every tap of the level reads its neighbours' gl, and the original
 * neighbours of a pixel lie in other sub-images of the permuted layout; it
 * works on tiles of the original image, so it serves both schedules. */
#include "atrous_level_guides.cuh"

/* packed and tiles: compile-time constants, so that a thread holds the
 * loaded words of one buffer kind while it sums, and the tile loop has
 * constant bounds (as run-time values they cost registers and spills);
 * phase k + 1 sums tile k (level_guides_body).  min_blocks: blocks per
 * multiprocessor the register budget must allow, measured (H100,
 * bench_atrous_cuda, two tiles a block against the former one, at 1080p):
 * packed 8 (32 registers), guides 0.0187-0.0213 -> 0.0176-0.0205 ms
 * (levels 0-3), whole filter 0.6574/0.6585 -> 0.6547/0.6535 ms, 4K 2.431
 * -> 2.422 (6 blocks: 0.6613/0.6602); fp32 6 (40 registers; with 8 it
 * spills), 0.0245 -> 0.0220 ms a level, fp32 permuted 0.839 -> 0.830 ms.
 * Four tiles a block were slower than two in both (1080p has 135 tile
 * rows: 34 blocks a column leave a thin last wave). */
#define LULL_GUIDE_KERNEL(name, packed, tiles, min_blocks)                          \
  static __global__ void __launch_bounds__(GUIDE_THREADS, min_blocks)               \
      name(const lull_atrous_level_args a)                                          \
  {                                                                                 \
    __shared__ guide_tile s;                                                        \
    const lull_thread t = LULL_THREAD_HERE();                                       \
    level_guides_body(&a, &s, 0, t, packed, tiles);                                 \
    LULL_UNROLL for (int phase = 1; phase <= (tiles); ++phase) {                    \
      __syncthreads();                                                              \
      level_guides_body(&a, &s, phase, t, packed, tiles);                           \
    }                                                                               \
  }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GUIDE_MIN_BLOCKS 8        /* 32 registers */
#define GUIDE_MIN_BLOCKS_FP32_2 6 /* 40 registers: the fp32 two-tile kernel spills at 8 */
#else /* measured on sm_90 only; older chips hold fewer threads */
#define GUIDE_MIN_BLOCKS 1
#define GUIDE_MIN_BLOCKS_FP32_2 1
#endif
LULL_GUIDE_KERNEL(level_guides_1, 0, 1, GUIDE_MIN_BLOCKS)
LULL_GUIDE_KERNEL(level_guides_2, 0, 2, GUIDE_MIN_BLOCKS_FP32_2)
LULL_GUIDE_KERNEL(level_guides_packed_1, 1, 1, GUIDE_MIN_BLOCKS)
LULL_GUIDE_KERNEL(level_guides_packed_2, 1, 2, GUIDE_MIN_BLOCKS)

cudaError_t lull_atrous_level_guides_launch(const lull_atrous_level_args* args, cudaStream_t stream)
{
  const int tiles = guide_tiles_for(args->width, args->height);
  const dim3 block(GUIDE_BW, GUIDE_TY);
  const dim3 grid((unsigned)((args->width + GUIDE_BW - 1) / GUIDE_BW),
                  (unsigned)guide_grid_y(args->height, tiles));
  if (args->packed)
    (tiles == 2 ? level_guides_packed_2 : level_guides_packed_1)<<<grid, block, 0, stream>>>(*args);
  else
    (tiles == 2 ? level_guides_2 : level_guides_1)<<<grid, block, 0, stream>>>(*args);
  return cudaGetLastError();
}
