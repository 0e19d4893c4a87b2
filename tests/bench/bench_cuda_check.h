/* CHECK_CUDA for the CUDA benchmark programs: a failed call ends the
 * program with the call, its place and CUDA's message. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#define CHECK_CUDA(x)                                                                   \
  do {                                                                                  \
    const cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                            \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)
