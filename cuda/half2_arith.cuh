/* Paired fp16 arithmetic (half2) for kernel bodies that the CPU runs too
 * (kernel_body.cuh).
 *
 * A lull_h2 holds two binary16 values, lo in the low 16 bits: on the GPU
 * each operation is one HADD2 / HMUL2 / HFMA2 instruction on both halves
 * (CUDA C Programming Guide, "Arithmetic Instructions": 256 fp16 results
 * per clock and multiprocessor on sm_90 against 128 fp32), on the host each
 * lane is computed in double and rounded to half, so that the CPU emulation
 * of a kernel follows the GPU to within a rounding of the last bit.  The
 * values travel as unsigned words, so host code needs no fp16 type. */
#pragma once

#include <cuda_fp16.h>

#include "../core/half.h"
#include "kernel_body.cuh"

typedef unsigned lull_h2;

#if defined(__CUDA_ARCH__)
static __device__ __forceinline__ __half2 lull_h2_as_half2(lull_h2 v)
{
  return *(const __half2*)&v;
}

static __device__ __forceinline__ lull_h2 lull_half2_as_h2(__half2 v)
{
  return *(const lull_h2*)&v;
}
#else
static inline double lull_h2_lane(lull_h2 v, int hi)
{
  return (double)lull_half_to_float((uint16_t)(hi ? v >> 16 : v & 0xffffu));
}

static inline lull_h2 lull_h2_of(double lo, double hi)
{
  return (lull_h2)lull_float_to_half((float)lo) | ((lull_h2)lull_float_to_half((float)hi) << 16);
}
#endif

/* (lo, hi) rounded to nearest. */
LULL_BODY lull_h2 lull_h2_make(float lo, float hi)
{
#if defined(__CUDA_ARCH__)
  return lull_half2_as_h2(__floats2half2_rn(lo, hi));
#else
  return lull_h2_of(lo, hi);
#endif
}

LULL_BODY float lull_h2_lo(lull_h2 v)
{
#if defined(__CUDA_ARCH__)
  return __low2float(lull_h2_as_half2(v));
#else
  return (float)lull_h2_lane(v, 0);
#endif
}

LULL_BODY float lull_h2_hi(lull_h2 v)
{
#if defined(__CUDA_ARCH__)
  return __high2float(lull_h2_as_half2(v));
#else
  return (float)lull_h2_lane(v, 1);
#endif
}

/* The low half of a and the high half of b (PRMT). */
LULL_BODY lull_h2 lull_h2_join(lull_h2 a, lull_h2 b)
{
  return (a & 0xffffu) | (b & 0xffff0000u);
}

LULL_BODY lull_h2 lull_h2_add(lull_h2 a, lull_h2 b)
{
#if defined(__CUDA_ARCH__)
  return lull_half2_as_h2(__hadd2(lull_h2_as_half2(a), lull_h2_as_half2(b)));
#else
  return lull_h2_of(lull_h2_lane(a, 0) + lull_h2_lane(b, 0), lull_h2_lane(a, 1) + lull_h2_lane(b, 1));
#endif
}

LULL_BODY lull_h2 lull_h2_sub(lull_h2 a, lull_h2 b)
{
#if defined(__CUDA_ARCH__)
  return lull_half2_as_h2(__hsub2(lull_h2_as_half2(a), lull_h2_as_half2(b)));
#else
  return lull_h2_of(lull_h2_lane(a, 0) - lull_h2_lane(b, 0), lull_h2_lane(a, 1) - lull_h2_lane(b, 1));
#endif
}

LULL_BODY lull_h2 lull_h2_mul(lull_h2 a, lull_h2 b)
{
#if defined(__CUDA_ARCH__)
  return lull_half2_as_h2(__hmul2(lull_h2_as_half2(a), lull_h2_as_half2(b)));
#else
  return lull_h2_of(lull_h2_lane(a, 0) * lull_h2_lane(b, 0), lull_h2_lane(a, 1) * lull_h2_lane(b, 1));
#endif
}

/* a b + c, one rounding */
LULL_BODY lull_h2 lull_h2_fma(lull_h2 a, lull_h2 b, lull_h2 c)
{
#if defined(__CUDA_ARCH__)
  return lull_half2_as_h2(__hfma2(lull_h2_as_half2(a), lull_h2_as_half2(b), lull_h2_as_half2(c)));
#else
  return lull_h2_of(lull_h2_lane(a, 0) * lull_h2_lane(b, 0) + lull_h2_lane(c, 0),
                    lull_h2_lane(a, 1) * lull_h2_lane(b, 1) + lull_h2_lane(c, 1));
#endif
}

/* c - a b, one rounding (an HFMA2 with a negated operand) */
LULL_BODY lull_h2 lull_h2_fnma(lull_h2 a, lull_h2 b, lull_h2 c)
{
#if defined(__CUDA_ARCH__)
  return lull_half2_as_h2(
      __hfma2(__hneg2(lull_h2_as_half2(a)), lull_h2_as_half2(b), lull_h2_as_half2(c)));
#else
  return lull_h2_fma(a ^ 0x80008000u, b, c);
#endif
}

/* |a| b + c (the absolute value is an operand modifier of HFMA2) */
LULL_BODY lull_h2 lull_h2_fma_abs(lull_h2 a, lull_h2 b, lull_h2 c)
{
#if defined(__CUDA_ARCH__)
  return lull_half2_as_h2(
      __hfma2(__habs2(lull_h2_as_half2(a)), lull_h2_as_half2(b), lull_h2_as_half2(c)));
#else
  return lull_h2_fma(a & 0x7fff7fffu, b, c);
#endif
}

/* 2^a per half by the multifunction unit's fp16 exp2 (PTX ex2.approx.f16x2:
 * two MUFU.EX2.F16, maximum relative error 2^-9.9 per the PTX ISA); the
 * host rounds exp2 of each lane to half.  -inf gives 0. */
LULL_BODY lull_h2 lull_h2_exp2(lull_h2 a)
{
#if defined(__CUDA_ARCH__)
  lull_h2 r;
  asm("ex2.approx.f16x2 %0, %1;" : "=r"(r) : "r"(a));
  return r;
#else
  return lull_h2_of(exp2(lull_h2_lane(a, 0)), exp2(lull_h2_lane(a, 1)));
#endif
}
