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

/* Reciprocal and roots for the per-pixel formulas: on the GPU by the
 * multifunction unit, one instruction each (about 2 ulp), where a few ulp
 * do not matter: IEEE 1.0f / x, sqrtf and 1.0f / sqrtf cost a Newton step
 * and slow-path branches each (cuda/NOTES.md); on the host (the CPU
 * backend, and the kernels' CPU emulation) IEEE.  LULL_RCP(x) needs |x|
 * normal and below 2^126, or infinite (gives 0); LULL_SQRT x >= 0.  A macro
 * rather than a function so that a shared formula (core/atrous_math.h)
 * compiles to the same instructions as when the kernels spelt it out. */
#if defined(__CUDA_ARCH__)
  #define LULL_RSQRT(x) rsqrtf(x)
  #define LULL_RCP(x) __fdividef(1.0f, (x))
  #define LULL_SQRT(x) lull_sqrt_approx(x)
static __device__ __forceinline__ float lull_sqrt_approx(float x)
{
  float r;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
#else
  #define LULL_RSQRT(x) (1.0f / sqrtf(x))
  #define LULL_RCP(x) (1.0f / (x))
  #define LULL_SQRT(x) sqrtf(x)
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
