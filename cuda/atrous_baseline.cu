/* The baseline schedule (Dammertz et al. 2010, §2.2 and their GLSL
 * listing): one kernel per level, one thread per pixel, 25 taps 2^level
 * pixels apart read straight from global memory (through the L1/L2
 * caches); taps outside the image are skipped. */
#include "atrous_common.cuh"

static __device__ __forceinline__ void baseline_level(const lull_atrous_level_args* a,
                                                      const int variance_mode,
                                                      const int geometry_kind)
{
  const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= a->width || y >= a->height)
    return;
  const int w = a->width, h = a->height;
  const int step = 1 << a->level;
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  const atrous_tap self = atrous_tap_load(a, i, geometry_kind);
  const float inv_l = variance_mode ? __ldg(&a->lg[i].y) : 0.0f;
  const atrous_center c = atrous_center_from(&self, __ldg(a->ig_in + i), inv_l);

  atrous_rows rows;
#pragma unroll
  for (int dy = -2; dy <= 2; ++dy) {
    atrous_sums row;
    atrous_sums_zero(&row);
    const int yy = y + dy * step;
    if (yy >= 0 && yy < h) {
#pragma unroll
      for (int dx = -2; dx <= 2; ++dx) {
        const int xx = x + dx * step;
        if (xx < 0 || xx >= w)
          continue;
        const atrous_tap q = atrous_tap_load(a, (size_t)yy * (size_t)w + (size_t)xx, geometry_kind);
        atrous_accumulate(&row, &c, &q, lull_b3_tap(dx) * lull_b3_tap(dy),
                          a->inv_d2[dx * dx + dy * dy], a, variance_mode, geometry_kind);
      }
    }
    atrous_rows_add(&rows, &row, dy, dy <= 0);
  }
  const atrous_sums total = atrous_rows_total(&rows);
  const float4 out = atrous_normalise(&total);
  if (a->last)
    atrous_encode_store(a, x, y, atrous_remodulate(a, out, c.ar, c.ag, c.ab));
  else
    a->c_out[i] = out;
}

static __global__ void baseline_variance_depth(const lull_atrous_level_args a)
{
  baseline_level(&a, 1, LULL_ATROUS_GEOMETRY_DEPTH);
}

static __global__ void baseline_variance_position(const lull_atrous_level_args a)
{
  baseline_level(&a, 1, LULL_ATROUS_GEOMETRY_POSITION);
}

static __global__ void baseline_fixed_depth(const lull_atrous_level_args a)
{
  baseline_level(&a, 0, LULL_ATROUS_GEOMETRY_DEPTH);
}

static __global__ void baseline_fixed_position(const lull_atrous_level_args a)
{
  baseline_level(&a, 0, LULL_ATROUS_GEOMETRY_POSITION);
}

cudaError_t lull_atrous_baseline_launch(const lull_atrous_level_args* args, int variance_mode,
                                        int geometry_kind, cudaStream_t stream)
{
  const dim3 block(32, 8);
  const dim3 grid((unsigned)((args->width + 31) / 32), (unsigned)((args->height + 7) / 8));
  const int pos = geometry_kind == LULL_ATROUS_GEOMETRY_POSITION;
  if (variance_mode)
    (pos ? baseline_variance_position : baseline_variance_depth)<<<grid, block, 0, stream>>>(*args);
  else
    (pos ? baseline_fixed_position : baseline_fixed_depth)<<<grid, block, 0, stream>>>(*args);
  return cudaGetLastError();
}
