/* Per-pixel formulas of the Gaussian blur (core/gaussian.h), shared by the
 * CPU backend (gaussian_cpu.c) and the CUDA kernels (cuda/gaussian_cuda.cu). */
#pragma once

#include "image.h"
#include "platform.h"

/* The passes' working scale, on both backends: colour enters them halved
 * and leaves doubled (exact above 2^-125).  Each pass is a weighted
 * sum with weights summing to 1, which rounds up to a few ulp above its
 * largest input; at full scale a colour at +-FLT_MAX overflowed to +-inf
 * in the row pass (then inf - inf = NaN where the signs met, or a clipped
 * inf where a bright band was blurred into the dark).  Halved, every sum
 * stays finite, and only the last doubling can pass FLT_MAX, which
 * lull_hold_in_range takes back. */
LULL_HD float lull_gaussian_in(float v)
{
  return 0.5f * v;
}

/* An output value from its blurred sum and 1 / the blurred mask. */
LULL_HD float lull_gaussian_out(float sum, float inv_mask)
{
  return lull_hold_in_range(2.0f * (sum * inv_mask));
}
