/* Kernel bodies that the CPU can run too.
 *
 * Every à-trous kernel is written as a __host__ __device__ body that takes
 * its block and thread index explicitly, its shared memory by pointer, and
 * a phase number; the __global__ wrapper runs the phases with a barrier in
 * between.  tests/gpu/atrous_emulation_test.cu runs the same bodies on the
 * CPU (block by block, phase by phase, thread by thread) and compares the
 * result with the CPU backend, so the kernels' indexing is checked on a
 * machine without a GPU (and in CI).  Rule for a body: data passes from one
 * phase to the next only through shared memory. */
#pragma once

#include "../core/platform.h"

#define LULL_BODY __host__ __device__ __forceinline__

typedef struct lull_thread
{
  int bx, by; /* block */
  int tx, ty; /* thread in the block */
} lull_thread;

#if defined(__CUDA_ARCH__)
  /* read-only data path */
  #define LULL_LDG(p) __ldg(p)
  /* products that must round on their own (never contracted into an FMA),
   * so that both schedules compute bitwise the same values */
  #define LULL_MUL_RN(a, b) __fmul_rn((a), (b))
  #define LULL_UNROLL _Pragma("unroll")
#else
  #define LULL_LDG(p) (*(p))
  #define LULL_MUL_RN(a, b) ((a) * (b))
  #define LULL_UNROLL
#endif

/* The calling thread's index, in a __global__ wrapper. */
#define LULL_THREAD_HERE() \
  lull_thread{(int)blockIdx.x, (int)blockIdx.y, (int)threadIdx.x, (int)threadIdx.y}
