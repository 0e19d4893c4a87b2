/* The guide kernel (atrous_level_guides.cuh): a kernel of its own because
 * every tap of the level reads its neighbours' gl, and the original
 * neighbours of a pixel lie in other sub-images of the permuted layout; it
 * works on tiles of the original image, so it serves both schedules. */
#include "atrous_level_guides.cuh"

/* packed: a compile-time constant, so that a thread holds the loaded words
 * of one buffer kind while it sums.  min_blocks: blocks per multiprocessor
 * the register budget must allow, measured (H100, bench_atrous_cuda,
 * GUIDE_TILES 2 against the former one tile a block): packed 8 (32
 * registers), guides at 1080p 0.0187-0.0213 -> 0.0176-0.0205 ms (levels
 * 0-3), whole filter 0.6574/0.6585 -> 0.6547/0.6535 ms, 4K 2.431 -> 2.422
 * (6 blocks: 0.6613/0.6602); fp32 6 (40 registers; with 8 it spills),
 * 0.0245 -> 0.0220 ms a level, fp32 permuted 0.839 -> 0.830 ms; 4 tiles a
 * block were slower than 2 in both (1080p has 135 tile rows: 34 blocks a
 * column leave a thin last wave). */
#define LULL_GUIDE_KERNEL(name, packed, min_blocks)                                 \
  static __global__ void __launch_bounds__(GUIDE_THREADS, min_blocks)               \
      name(const lull_atrous_level_args a)                                          \
  {                                                                                 \
    __shared__ guide_tile s;                                                        \
    const lull_thread t = LULL_THREAD_HERE();                                       \
    level_guides_body(&a, &s, 0, t, packed);                                        \
    LULL_UNROLL for (int phase = 1; phase < GUIDE_PHASES; ++phase) {                \
      __syncthreads();                                                              \
      level_guides_body(&a, &s, phase, t, packed);                                  \
    }                                                                               \
  }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GUIDE_MIN_BLOCKS_FP32 6
#define GUIDE_MIN_BLOCKS_PACKED 8
#else /* measured on sm_90 only; older chips hold fewer threads */
#define GUIDE_MIN_BLOCKS_FP32 1
#define GUIDE_MIN_BLOCKS_PACKED 1
#endif
LULL_GUIDE_KERNEL(level_guides, 0, GUIDE_MIN_BLOCKS_FP32)
LULL_GUIDE_KERNEL(level_guides_packed, 1, GUIDE_MIN_BLOCKS_PACKED)

cudaError_t lull_atrous_level_guides_launch(const lull_atrous_level_args* args, cudaStream_t stream)
{
  const dim3 block(GUIDE_BW, GUIDE_TY);
  const dim3 grid((unsigned)((args->width + GUIDE_BW - 1) / GUIDE_BW),
                  (unsigned)((args->height + GUIDE_BLOCK_H - 1) / GUIDE_BLOCK_H));
  (args->packed ? level_guides_packed : level_guides)<<<grid, block, 0, stream>>>(*args);
  return cudaGetLastError();
}
