/* The Gaussian blur on the GPU: the normalised convolution of
 * core/gaussian_cpu.c, blur(c m) / blur(m) with m = 1 for finite pixels,
 * as a row pass and a column pass, one thread per pixel.  A fourth channel
 * (alpha) passes through unchanged, as on the CPU; it rides in the w
 * component of the working colour. */
#include <stdlib.h>

#include "../core/gaussian_math.h"
#include "backend_cuda.h"
#include "image_access.cuh"

typedef struct gaussian_args
{
  lull_image color, output;
  int width, height, channels, radius;
  const float* kernel; /* 2 radius + 1 weights */
  float4* c[2];        /* colour times mask, and alpha; ping-pong */
  float* m[2];         /* mask */
} gaussian_args;

static __global__ void gaussian_load(const gaussian_args a)
{
  const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= a.width || y >= a.height)
    return;
  float c[4];
  lull_cuda_image_load(&a.color, x, y, c);
  int finite = 1;
  for (int k = 0; k < LULL_MIN(a.channels, 3); ++k)
    finite &= (c[k] - c[k]) == 0.0f;
  const size_t i = (size_t)y * (size_t)a.width + (size_t)x;
  a.c[0][i] = finite ? make_float4(lull_gaussian_in(c[0]), lull_gaussian_in(c[1]),
                                   lull_gaussian_in(c[2]), c[3])
                     : make_float4(0.0f, 0.0f, 0.0f, c[3]);
  a.m[0][i] = finite ? 1.0f : 0.0f;
}

/* One separable pass from buffers 0 to 1 (along x) or 1 to 0 (along y,
 * then normalise and store). */
static __global__ void gaussian_pass(const gaussian_args a, int along_x)
{
  const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= a.width || y >= a.height)
    return;
  const int src = along_x ? 0 : 1;
  float s[4] = {0, 0, 0, 0}; /* colour and mask */
  for (int k = -a.radius; k <= a.radius; ++k) {
    const int xx = along_x ? x + k : x, yy = along_x ? y : y + k;
    if (xx < 0 || yy < 0 || xx >= a.width || yy >= a.height)
      continue;
    const size_t j = (size_t)yy * (size_t)a.width + (size_t)xx;
    const float kw = __ldg(a.kernel + k + a.radius);
    const float4 c = a.c[src][j];
    s[0] += kw * c.x;
    s[1] += kw * c.y;
    s[2] += kw * c.z;
    s[3] += kw * a.m[src][j];
  }
  const size_t i = (size_t)y * (size_t)a.width + (size_t)x;
  const float alpha = a.c[src][i].w;
  if (along_x) {
    a.c[1][i] = make_float4(s[0], s[1], s[2], alpha);
    a.m[1][i] = s[3];
    return;
  }
  const float inv = s[3] > 0.0f ? 1.0f / s[3] : 0.0f;
  const float out[4] = {lull_gaussian_out(s[0], inv), lull_gaussian_out(s[1], inv),
                        lull_gaussian_out(s[2], inv), alpha};
  lull_cuda_image_store_n(&a.output, x, y, out, lull_format_channels(a.output.format));
}

lull_status lull_cuda_gaussian(lull_cuda_backend* cuda, const lull_gaussian_params* params,
                               const lull_gaussian_images* images,
                               const lull_progress* progress, lull_error* err)
{
  lull_status status = lull_gaussian_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  gaussian_args a;
  memset(&a, 0, sizeof a);
  a.color = images->color;
  a.output = images->output;
  a.width = images->color.width;
  a.height = images->color.height;
  a.channels = lull_format_channels(images->color.format);
  a.radius = lull_gaussian_radius(params->sigma);
  const size_t pixels = (size_t)a.width * (size_t)a.height;
  if (pixels > SIZE_MAX / 64)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "image too large");
  const size_t kernel_bytes = ((size_t)(2 * a.radius + 1) * sizeof(float) + 255) / 256 * 256;
  const size_t plane4 = (pixels * 16 + 255) / 256 * 256, plane1 = (pixels * 4 + 255) / 256 * 256;
  unsigned char* base =
      (unsigned char*)lull_cuda_scratch(cuda, kernel_bytes + 2 * plane4 + 2 * plane1, err);
  if (!base)
    return err ? err->code : LULL_ERROR_OUT_OF_MEMORY;
  float* kernel = (float*)malloc((size_t)(2 * a.radius + 1) * sizeof(float));
  if (!kernel)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  lull_gaussian_kernel(params->sigma, kernel);
  a.kernel = (const float*)base;
  a.c[0] = (float4*)(base + kernel_bytes);
  a.c[1] = (float4*)(base + kernel_bytes + plane4);
  a.m[0] = (float*)(base + kernel_bytes + 2 * plane4);
  a.m[1] = (float*)(base + kernel_bytes + 2 * plane4 + plane1);
  /* from pageable memory the copy returns once the data is staged */
  cudaError_t code = cudaMemcpyAsync(base, kernel, (size_t)(2 * a.radius + 1) * sizeof(float),
                                     cudaMemcpyHostToDevice, cuda->stream);
  free(kernel);
  const dim3 block(32, 8);
  const dim3 grid((unsigned)((a.width + 31) / 32), (unsigned)((a.height + 7) / 8));
  if (code == cudaSuccess) {
    gaussian_load<<<grid, block, 0, cuda->stream>>>(a);
    gaussian_pass<<<grid, block, 0, cuda->stream>>>(a, 1);
    code = cudaGetLastError();
  }
  if (code == cudaSuccess)
    status = lull_progress_report(progress, 0.5, err);
  if (code == cudaSuccess && status == LULL_OK) {
    gaussian_pass<<<grid, block, 0, cuda->stream>>>(a, 0);
    code = cudaGetLastError();
  }
  if (code != cudaSuccess)
    return lull_cuda_fail(err, code, "cannot run the Gaussian filter");
  return status;
}
