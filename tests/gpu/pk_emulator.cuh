/* Launchers that run the Poisson and GradientDomain kernels' bodies
 * (cuda/poisson_kernels.cuh) on the CPU: block by block, phase by phase,
 * thread by thread, in the order the library's scheduling launches them.
 * Shared by the emulation tests. */
#pragma once

#include <stdlib.h>
#include <string.h>

#include "poisson_kernels.cuh"

typedef struct pk_emulator
{
  int launches;
} pk_emulator;

static cudaError_t pk_emulator_launch(void* ctx, const lull_pk_launch* l)
{
  ((pk_emulator*)ctx)->launches++;
  unsigned char* smem = (unsigned char*)calloc(1, l->smem + 64);
  if (!smem)
    return cudaErrorMemoryAllocation;
  for (int g = 0; g < l->groups; ++g)
    for (int phase = 0; phase < l->phases; ++phase)
      for (int tid = 0; tid < LULL_PK_THREADS; ++tid)
        lull_pk_body(l->kind, l, smem, g, g % l->grid, phase, tid);
  free(smem);
  return cudaSuccess;
}

/* Scratch for an emulated run: `bytes` (rounded up to the 256-byte
 * alignment) filled with NaN, so that reading unset memory shows. */
static unsigned char* pk_emulator_scratch(size_t bytes)
{
  const size_t rounded = (bytes + 255) / 256 * 256;
  unsigned char* scratch = (unsigned char*)aligned_alloc(256, rounded ? rounded : 256);
  if (scratch)
    memset(scratch, 0xff, rounded);
  return scratch;
}

static cudaError_t pk_emulator_sync(void* ctx)
{
  (void)ctx;
  return cudaSuccess;
}
