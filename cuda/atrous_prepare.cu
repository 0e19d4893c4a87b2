/* Step 1 of core/atrous.h on the GPU: read the user's images (any format
 * and stride), clean and normalise them, and build level 0's input.  One
 * thread per pixel; three kernels because steps 2 and 3 read neighbours of
 * the previous step's output.  The arithmetic follows atrous_cpu.c's
 * prepare_* functions line by line, with the formulas of atrous_math.h. */
#include "atrous_common.cuh"

static __device__ __forceinline__ float finite_or_zero(float v)
{
  return (v - v) == 0.0f ? v : 0.0f;
}

static __device__ __forceinline__ int pixel_of(const lull_atrous_prepare_args* a, int* x, int* y)
{
  *x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  *y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  return *x < a->width && *y < a->height;
}

/* Guides as they are (non-finite components become 0, normals unit or 0)
 * and the colour scaled and linearised, with a finite flag. */
static __global__ void prepare_load(const lull_atrous_prepare_args a)
{
  int x, y;
  if (!pixel_of(&a, &x, &y))
    return;
  const size_t i = (size_t)y * (size_t)a.width + (size_t)x;
  float v[4];
  float4 g0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 g1 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (a.has_albedo) {
    lull_cuda_image_load(&a.albedo, x, y, v);
    g1.x = finite_or_zero(v[0]);
    g1.y = finite_or_zero(v[1]);
    g1.z = finite_or_zero(v[2]);
  }
  if (a.has_normal) {
    lull_cuda_image_load(&a.normal, x, y, v);
    float n[3] = {finite_or_zero(v[0]), finite_or_zero(v[1]), finite_or_zero(v[2])};
    g0.w = lull_normalize_normal(n); /* the "missing" flag */
    g0.x = n[0];
    g0.y = n[1];
    g0.z = n[2];
  }
  if (a.geometry_kind != LULL_ATROUS_GEOMETRY_NONE) {
    lull_cuda_image_load(&a.geometry, x, y, v);
    g1.w = finite_or_zero(v[0]);
    if (a.geometry_kind == LULL_ATROUS_GEOMETRY_POSITION)
      a.g2[i] = make_float2(finite_or_zero(v[1]), finite_or_zero(v[2]));
  }
  a.g0[i] = g0;
  a.g1[i] = g1;

  float c[4];
  lull_cuda_image_load(&a.color, x, y, c);
  const int ok = lull_isfinite3(c[0], c[1], c[2]);
  if (!ok)
    c[0] = c[1] = c[2] = 0.0f;
  for (int k = 0; k < 3; ++k) {
    /* keep squares and sums of squares finite */
    c[k] = c[k] > 1e15f ? 1e15f : (c[k] < -1e15f ? -1e15f : c[k]);
    c[k] *= a.input_scale;
    if (a.srgb)
      c[k] = lull_srgb_to_linear(c[k]);
  }
  a.raw[i] = make_float4(c[0], c[1], c[2], ok ? 1.0f : 0.0f);
  if (a.has_alpha)
    a.alpha[i] = c[3];
}

/* The geometry footprint ig = 1 / (sigma_g s_p)^2, and the colour with
 * non-finite pixels replaced by the mean of the finite ones in their 5x5
 * neighbourhood (they never spread), then demodulated. */
static __global__ void prepare_neighbours(const lull_atrous_prepare_args a)
{
  int x, y;
  if (!pixel_of(&a, &x, &y))
    return;
  const int w = a.width, h = a.height;
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  const float4 g1 = a.g1[i];
  a.ig[i] = 0.0f;
  if (a.geometry_kind != LULL_ATROUS_GEOMETRY_NONE) {
    const int pos = a.geometry_kind == LULL_ATROUS_GEOMETRY_POSITION;
    const float gx = g1.w;
    const float2 gyz = pos ? a.g2[i] : make_float2(0.0f, 0.0f);
    const int xs[4] = {x > 0 ? x - 1 : x + 1, x < w - 1 ? x + 1 : x - 1, x, x};
    const int ys[4] = {y, y, y > 0 ? y - 1 : y + 1, y < h - 1 ? y + 1 : y - 1};
    float d[4];
    for (int k = 0; k < 4; ++k) {
      if (xs[k] < 0 || xs[k] >= w || ys[k] < 0 || ys[k] >= h) {
        d[k] = 0.0f; /* 1-pixel-wide image: no neighbour on this axis */
        continue;
      }
      const size_t j = (size_t)ys[k] * (size_t)w + (size_t)xs[k];
      const float qx = a.g1[j].w;
      float dd = (qx - gx) * (qx - gx);
      if (pos) {
        const float2 q = a.g2[j];
        dd += (q.x - gyz.x) * (q.x - gyz.x) + (q.y - gyz.y) * (q.y - gyz.y);
      }
      d[k] = sqrtf(dd);
    }
    float magnitude = fabsf(gx);
    if (pos)
      magnitude = sqrtf(gx * gx + gyz.x * gyz.x + gyz.y * gyz.y);
    const float fp = lull_geometry_footprint(d[0], d[1], d[2], d[3], magnitude);
    const float scale = a.sigma_depth * fp;
    a.ig[i] = 1.0f / (scale * scale);
  }

  float4 c = a.raw[i];
  if (c.w == 0.0f) {
    float sum[3] = {0, 0, 0}, n = 0;
    for (int dy = -2; dy <= 2; ++dy)
      for (int dx = -2; dx <= 2; ++dx) {
        const int xx = x + dx, yy = y + dy;
        if (xx < 0 || yy < 0 || xx >= w || yy >= h)
          continue;
        const float4 q = a.raw[(size_t)yy * (size_t)w + (size_t)xx];
        if (q.w == 0.0f)
          continue;
        sum[0] += q.x;
        sum[1] += q.y;
        sum[2] += q.z;
        n += 1;
      }
    const float inv = n > 0 ? 1.0f / n : 0.0f;
    c.x = sum[0] * inv;
    c.y = sum[1] * inv;
    c.z = sum[2] * inv;
  }
  if (a.demodulate) {
    c.x /= lull_demodulation_albedo(g1.x);
    c.y /= lull_demodulation_albedo(g1.y);
    c.z /= lull_demodulation_albedo(g1.z);
  }
  c.w = 0.0f;
  a.c_plain[i] = c;
}

/* The variance of the luminance at level 0: from the variance image, or
 * estimated from the guide-weighted luminance moments of the 5x5
 * neighbourhood (atrous_cpu.c, prepare_variance); 0 in fixed-sigma mode. */
static __global__ void prepare_variance(const lull_atrous_prepare_args a)
{
  int x, y;
  if (!pixel_of(&a, &x, &y))
    return;
  const int w = a.width, h = a.height;
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  const float4 c = a.c_plain[i];
  float var = 0.0f;
  if (a.variance_mode && a.variance.data) {
    const float4 g1 = a.g1[i];
    float v[4];
    lull_cuda_image_load(&a.variance, x, y, v);
    if (lull_format_channels(a.variance.format) >= 3) {
      /* Var(sum_k w_k c_k / a_k) for independent channels */
      const float dr = a.demodulate ? lull_demodulation_albedo(g1.x) : 1.0f;
      const float dg = a.demodulate ? lull_demodulation_albedo(g1.y) : 1.0f;
      const float db = a.demodulate ? lull_demodulation_albedo(g1.z) : 1.0f;
      var = 0.2126f * 0.2126f * v[0] / (dr * dr) + 0.7152f * 0.7152f * v[1] / (dg * dg) +
            0.0722f * 0.0722f * v[2] / (db * db);
    } else {
      const float la =
          a.demodulate ? lull_demodulation_albedo(lull_luminance(g1.x, g1.y, g1.z)) : 1.0f;
      var = v[0] / (la * la);
    }
    var = (var - var) == 0.0f && var > 0.0f ? var : 0.0f;
  } else if (a.variance_mode) {
    const float4 cg0 = a.g0[i];
    const float4 cg1 = a.g1[i];
    const int pos = a.geometry_kind == LULL_ATROUS_GEOMETRY_POSITION;
    const float2 cg2 = pos ? a.g2[i] : make_float2(0.0f, 0.0f);
    const float cl = atrous_luminance(a.channels, c.x, c.y, c.z);
    const float cig = a.ig[i];
    float sw = 0, sd = 0, sd2 = 0;
    for (int dy = -2; dy <= 2; ++dy) {
      const int yy = y + dy;
      if (yy < 0 || yy >= h)
        continue;
      for (int dx = -2; dx <= 2; ++dx) {
        const int xx = x + dx;
        if (xx < 0 || xx >= w)
          continue;
        const size_t j = (size_t)yy * (size_t)w + (size_t)xx;
        const float4 q = a.c_plain[j];
        const float4 q0 = a.g0[j];
        const float4 q1 = a.g1[j];
        const float2 q2 = pos ? a.g2[j] : make_float2(0.0f, 0.0f);
        const int d2 = dx * dx + dy * dy;
        const float inv_d2 = d2 ? 1.0f / (float)d2 : 0.0f;
        const float dgx = cg1.w - q1.w, dgy = cg2.x - q2.x, dgz = cg2.y - q2.y;
        const float e =
            lull_edge_normal(lull_normal_dot(cg0.x, cg0.y, cg0.z, cg0.w, q0.x, q0.y, q0.z, q0.w),
                             a.k_normal) +
            lull_edge_geometry(dgx * dgx + dgy * dgy + dgz * dgz, cig, inv_d2) +
            lull_edge_albedo(cg1.x - q1.x, cg1.y - q1.y, cg1.z - q1.z, a.k_albedo);
        const float wgt = lull_edge_weight(e);
        const float d = atrous_luminance(a.channels, q.x, q.y, q.z) - cl;
        sw += wgt;
        sd += wgt * d;
        sd2 += wgt * d * d;
      }
    }
    const float inv = 1.0f / sw; /* the centre's own weight is 1 */
    const float mean = sd * inv;
    const float v = sd2 * inv - mean * mean;
    var = v > 0.0f ? v : 0.0f;
  }
  a.c_out[i] = make_float4(c.x, c.y, c.z, var);
}

cudaError_t lull_atrous_prepare_launch(const lull_atrous_prepare_args* args, cudaStream_t stream)
{
  const dim3 block(32, 8);
  const dim3 grid((unsigned)((args->width + 31) / 32), (unsigned)((args->height + 7) / 8));
  prepare_load<<<grid, block, 0, stream>>>(*args);
  prepare_neighbours<<<grid, block, 0, stream>>>(*args);
  prepare_variance<<<grid, block, 0, stream>>>(*args);
  return cudaGetLastError();
}
