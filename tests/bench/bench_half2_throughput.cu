/* Throughput of the instructions an à-trous tap is made of, fp32 against
 * paired fp16 (half2), on the GPU at hand: fused multiply-add and the
 * multifunction unit's exp2.  A program, not a test (it asserts nothing).
 *
 *   build/bin/bench_half2_throughput
 *
 * Why it exists: the fp32 level kernel is bound by instruction issue
 * (cuda/NOTES.md), and half2 arithmetic, two pixels per instruction, was
 * the one change left that would cut its instructions per tap (25.8 ->
 * 15.0 in the SASS of the experiment of the seventeenth session).  That
 * kernel was slower, not faster; this program shows why.  On the H100
 * (NVIDIA H100 80GB HBM3, this program, 2026-11-27): fma.rn.f32 31.1 T
 * instructions/s, fma.rn.f16x2 16.4 T (0.53x), so half2 computes 1.06x the
 * values per second of fp32, not 2x; ex2.approx.f16x2 is two MUFU.EX2.F16
 * (and a PRMT): 4.16 T values/s against 4.14 T for ex2.approx.f32.
 *
 * Each thread runs 8 independent chains (enough to hide the latencies)
 * in a grid of 8 blocks of 256 threads per multiprocessor; the figures are
 * instructions (warp lanes) per second and values per second, the median of
 * 5 launches after a warm-up. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "bench_cuda_check.h"

enum { CHAINS = 8, THREADS = 256, BLOCKS_PER_SM = 8, STEPS = 4096, LAUNCHES = 5 };

/* The instructions, as inline PTX so that the compiler neither folds nor
 * reorders them away (volatile). */
static __device__ __forceinline__ unsigned ex2_f16x2(unsigned x)
{
  unsigned r;
  asm volatile("ex2.approx.f16x2 %0, %1;" : "=r"(r) : "r"(x));
  return r;
}

static __device__ __forceinline__ float ex2_f32(float x)
{
  float r;
  asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

static __device__ __forceinline__ unsigned fma_f16x2(unsigned a, unsigned b, unsigned c)
{
  unsigned r;
  asm volatile("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}

static __device__ __forceinline__ float fma_f32(float a, float b, float c)
{
  float r;
  asm volatile("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c));
  return r;
}

/* A kernel of CHAINS independent chains of `step` per thread, each value
 * starting at init(k) (about -1, in both halves for half2); the results
 * are stored so that nothing is dead code. */
#define CHAIN_KERNEL(name, type, init, step, bits)                    \
  static __global__ void name(unsigned* out)                          \
  {                                                                   \
    type v[CHAINS];                                                   \
    for (int k = 0; k < CHAINS; ++k)                                  \
      v[k] = init;                                                    \
    for (int i = 0; i < STEPS; ++i) {                                 \
      _Pragma("unroll") for (int k = 0; k < CHAINS; ++k) v[k] = step; \
    }                                                                 \
    unsigned s = 0;                                                   \
    for (int k = 0; k < CHAINS; ++k)                                  \
      s ^= bits(v[k]);                                                \
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;                   \
  }

#define AS_BITS(v) (v)
CHAIN_KERNEL(chain_fma_f32, float, -1.0f - 1e-3f * (float)(threadIdx.x + k),
             fma_f32(v[k], 0.999f, 1e-7f), __float_as_uint)
CHAIN_KERNEL(chain_fma_f16x2, unsigned, 0xbc00bc00u + threadIdx.x + (unsigned)k,
             fma_f16x2(v[k], 0x3bff3bffu, 0x00010001u), AS_BITS)
CHAIN_KERNEL(chain_ex2_f32, float, -1.0f - 1e-3f * (float)(threadIdx.x + k), ex2_f32(v[k]),
             __float_as_uint)
CHAIN_KERNEL(chain_ex2_f16x2, unsigned, 0xbc00bc00u + threadIdx.x + (unsigned)k,
             ex2_f16x2(v[k]), AS_BITS)

static int cmp_float(const void* a, const void* b)
{
  const float x = *(const float*)a, y = *(const float*)b;
  return (x > y) - (x < y);
}

int main(void)
{
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const int blocks = prop.multiProcessorCount * BLOCKS_PER_SM;
  unsigned* out;
  CHECK_CUDA(cudaMalloc(&out, (size_t)blocks * THREADS * sizeof(unsigned)));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  static const char* const names[4] = {"fma.rn.f32", "fma.rn.f16x2", "ex2.approx.f32",
                                       "ex2.approx.f16x2"};
  void (*const kernels[4])(unsigned*) = {chain_fma_f32, chain_fma_f16x2, chain_ex2_f32,
                                         chain_ex2_f16x2};
  const double lanes = (double)blocks * THREADS * STEPS * CHAINS;
  double rate[4];
  for (int kind = 0; kind < 4; ++kind) {
    float ms[LAUNCHES];
    kernels[kind]<<<blocks, THREADS>>>(out); /* warm-up */
    for (int r = 0; r < LAUNCHES; ++r) {
      CHECK_CUDA(cudaEventRecord(start));
      kernels[kind]<<<blocks, THREADS>>>(out);
      CHECK_CUDA(cudaEventRecord(stop));
      CHECK_CUDA(cudaEventSynchronize(stop));
      CHECK_CUDA(cudaEventElapsedTime(&ms[r], start, stop));
    }
    qsort(ms, LAUNCHES, sizeof ms[0], cmp_float);
    rate[kind] = lanes / (ms[LAUNCHES / 2] * 1e-3);
    const int paired = kind % 2;
    printf("  %-17s %8.3f ms  %7.2f T instructions/s  %7.2f T values/s\n", names[kind],
           ms[LAUNCHES / 2], rate[kind] / 1e12, rate[kind] * (paired ? 2 : 1) / 1e12);
  }
  printf("half2 against fp32, values per second: fma %.2fx, ex2 %.2fx\n",
         2 * rate[1] / rate[0], 2 * rate[3] / rate[2]);
  cudaFree(out);
  return 0;
}
