/* Temporal accumulation on the GPU: core/temporal.h's step 1 as two
 * kernels, one thread per pixel, calling the formulas of
 * core/temporal_math.h as the CPU backend does (temporal_cpu.c): load (the
 * frame's colour and guides into the planes) and, once every pixel is
 * loaded, accumulate (which reads 3x3 neighbourhoods of the loaded planes
 * and the history). */
#include "backend_cuda.h"
#include "image_access.cuh"

typedef struct temporal_args
{
  lull_temporal_params p;
  lull_temporal_planes t;
  lull_temporal_images im;
} temporal_args;

static __global__ void temporal_load(const temporal_args a)
{
  const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= a.t.width || y >= a.t.height)
    return;
  float c[4], al[4] = {0, 0, 0, 0}, n[4] = {0, 0, 0, 0}, z[4] = {0, 0, 0, 0};
  lull_cuda_image_load(&a.im.color, x, y, c);
  if (a.im.albedo.data) {
    lull_cuda_image_load(&a.im.albedo, x, y, al);
    lull_expand_rgb(al, lull_format_channels(a.im.albedo.format));
  }
  if (a.im.normal.data) {
    lull_cuda_image_load(&a.im.normal, x, y, n);
    lull_expand_rgb(n, lull_format_channels(a.im.normal.format));
  }
  if (a.im.depth.data)
    lull_cuda_image_load(&a.im.depth, x, y, z);
  lull_temporal_load(&a.p, &a.t, x, y, c, al, n, z[0]);
}

static __global__ void temporal_accumulate(const temporal_args a)
{
  const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= a.t.width || y >= a.t.height)
    return;
  float m[4] = {0, 0, 0, 0};
  if (a.im.motion.data)
    lull_cuda_image_load(&a.im.motion, x, y, m);
  const lull_temporal_stats st = lull_temporal_neighbourhood(&a.p, &a.t, x, y);
  lull_temporal_accumulate(&a.p, &a.t, x, y, m[0], m[1], &st);
}

lull_status lull_cuda_temporal(lull_cuda_backend* cuda, const lull_temporal_params* params,
                               const lull_temporal_images* images,
                               const lull_temporal_planes* planes, lull_error* err)
{
  temporal_args a;
  memset(&a, 0, sizeof a);
  a.p = *params;
  a.t = *planes;
  a.im = *images;
  const dim3 block(32, 8);
  const dim3 grid((unsigned)((planes->width + 31) / 32), (unsigned)((planes->height + 7) / 8));
  temporal_load<<<grid, block, 0, cuda->stream>>>(a);
  temporal_accumulate<<<grid, block, 0, cuda->stream>>>(a);
  const cudaError_t code = cudaGetLastError();
  if (code != cudaSuccess)
    return lull_cuda_fail(err, code, "cannot run the temporal accumulation");
  return LULL_OK;
}
