/* Qualifiers shared by the C backend and the CUDA kernels.
 *
 * Per-pixel formulas live in headers as LULL_HD inline functions, compiled
 * once by the C compiler for the CPU backend and once by nvcc for the CUDA
 * kernels (the way Cycles shares its kernels), so both backends evaluate the
 * same arithmetic. */
#pragma once

#if defined(__CUDACC__)
  #define LULL_HD __host__ __device__ __forceinline__
  #define LULL_RESTRICT __restrict__
#else
  #define LULL_HD static inline
  #if defined(__cplusplus)
    #define LULL_RESTRICT __restrict__
  #else
    #define LULL_RESTRICT restrict
  #endif
#endif

#if defined(__GNUC__) && !defined(__CUDACC__) && !defined(__clang__) && defined(__x86_64__)
  /* One binary, the widest vector unit found at run time (AVX-512, AVX2 or
   * SSE2): the library is built for a generic x86-64 yet the hot loops of
   * the CPU backend use the machine's SIMD width. */
  #define LULL_TARGET_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
  #define LULL_TARGET_CLONES
#endif

#define LULL_MIN(a, b) ((a) < (b) ? (a) : (b))
#define LULL_MAX(a, b) ((a) > (b) ? (a) : (b))
