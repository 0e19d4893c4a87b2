/* The à-trous filter on the GPU: scratch memory, the order of the kernels,
 * the schedule choice and progress.  Contract: core/atrous.h (prepare ->
 * levels -> finish, with the finish done by the last level). */
#include "atrous_cuda.h"

#include "backend_cuda.h"

/* Bytes of one float4 / float2 / float per pixel, with overflow checks. */
static int bytes_of(size_t pixels, size_t per_pixel, size_t* out)
{
  if (pixels && per_pixel > SIZE_MAX / pixels)
    return 0;
  *out = pixels * per_pixel;
  return 1;
}

/* Carves `bytes` (rounded up to 256) from a running offset. */
static size_t carve(size_t* offset, size_t bytes)
{
  const size_t at = *offset;
  *offset += (bytes + 255) / 256 * 256;
  return at;
}

typedef struct atrous_scratch
{
  float4* c[2];
  float4* g0[2];
  float4* g1[2];
  float2* g2[2];
  float* ig[2];
  float2* lg;
  float* alpha;
  int* tables;
} atrous_scratch;

lull_status lull_cuda_atrous(lull_cuda_backend* cuda, const lull_atrous_params* params,
                             const lull_atrous_images* images, int schedule, int packed,
                             const lull_progress* progress, lull_error* err)
{
  (void)packed; /* fp32 working buffers only, see README */
  lull_status status = lull_atrous_validate(params, images, err);
  if (status != LULL_OK)
    return status;

  const int w = images->color.width, h = images->color.height;
  const int color_channels = lull_format_channels(images->color.format);
  const int channels = LULL_MIN(color_channels, 3);
  const int has_albedo = images->albedo.data != NULL;
  const int has_normal = images->normal.data != NULL;
  const int has_geometry = (images->depth.data || images->position.data) && params->sigma_depth > 0.0f;
  const int geometry_kind = !has_geometry ? LULL_ATROUS_GEOMETRY_NONE
                            : images->depth.data ? LULL_ATROUS_GEOMETRY_DEPTH
                                                 : LULL_ATROUS_GEOMETRY_POSITION;
  const int position = geometry_kind == LULL_ATROUS_GEOMETRY_POSITION;
  const int variance_mode = params->color_mode == LULL_ATROUS_COLOR_VARIANCE;
  const int permuted = schedule != 0; /* -1 (auto): the permuted schedule is the faster */
  const int levels = params->iterations;

  /* scratch: C, G0, G1, IG double (guides only for the permuted schedule),
   * G2 for positions, LG for the variance-guided colour test, alpha for
   * 4-channel colour, layout tables */
  const size_t pixels = (size_t)w * (size_t)h;
  size_t b16 = 0, b8 = 0, b4 = 0, bt = 0;
  if (!bytes_of(pixels, 16, &b16) || !bytes_of(pixels, 8, &b8) || !bytes_of(pixels, 4, &b4) ||
      !bytes_of((size_t)levels * 2 * ((size_t)w + (size_t)h), sizeof(int), &bt))
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "image too large");
  size_t offset = 0;
  size_t at_c[2] = {0, 0}, at_g0[2] = {0, 0}, at_g1[2] = {0, 0}, at_g2[2] = {0, 0};
  size_t at_ig[2] = {0, 0}, at_lg = 0, at_alpha = 0, at_tables = 0;
  const int guide_copies = permuted ? 2 : 1;
  for (int k = 0; k < 2; ++k) {
    at_c[k] = carve(&offset, b16);
    at_g0[k] = k < guide_copies ? carve(&offset, b16) : at_g0[0];
    at_g1[k] = k < guide_copies ? carve(&offset, b16) : at_g1[0];
    at_g2[k] = position && k < guide_copies ? carve(&offset, b8) : (position ? at_g2[0] : 0);
    at_ig[k] = k < guide_copies ? carve(&offset, b4) : at_ig[0];
  }
  if (variance_mode)
    at_lg = carve(&offset, b8);
  if (color_channels == 4)
    at_alpha = carve(&offset, b4);
  if (permuted)
    at_tables = carve(&offset, bt);
  unsigned char* base = (unsigned char*)lull_cuda_scratch(cuda, offset, err);
  if (!base)
    return err ? err->code : LULL_ERROR_OUT_OF_MEMORY;
  atrous_scratch s;
  for (int k = 0; k < 2; ++k) {
    s.c[k] = (float4*)(base + at_c[k]);
    s.g0[k] = (float4*)(base + at_g0[k]);
    s.g1[k] = (float4*)(base + at_g1[k]);
    s.g2[k] = position ? (float2*)(base + at_g2[k]) : NULL;
    s.ig[k] = (float*)(base + at_ig[k]);
  }
  s.lg = variance_mode ? (float2*)(base + at_lg) : NULL;
  s.alpha = color_channels == 4 ? (float*)(base + at_alpha) : NULL;
  s.tables = permuted ? (int*)(base + at_tables) : NULL;

  const float k_normal =
      has_normal && params->sigma_normal > 0.0f ? 1.0f / (params->sigma_normal * params->sigma_normal) : 0.0f;
  const float k_albedo =
      has_albedo && params->sigma_albedo > 0.0f ? 1.0f / (params->sigma_albedo * params->sigma_albedo) : 0.0f;
  const int demodulate = params->demodulate && has_albedo && channels == 3;

  /* 1. prepare: raw colour in c[1], plain colour in c[0], level 0 input in c[1] */
  lull_atrous_prepare_args pa;
  memset(&pa, 0, sizeof pa);
  pa.color = images->color;
  pa.albedo = images->albedo;
  pa.normal = images->normal;
  pa.geometry = images->depth.data ? images->depth : images->position;
  pa.variance = images->variance;
  pa.width = w;
  pa.height = h;
  pa.channels = channels;
  pa.has_alpha = color_channels == 4;
  pa.has_albedo = has_albedo;
  pa.has_normal = has_normal;
  pa.geometry_kind = geometry_kind;
  pa.demodulate = demodulate;
  pa.variance_mode = variance_mode;
  pa.input_scale = params->input_scale;
  pa.sigma_depth = params->sigma_depth;
  pa.k_normal = k_normal;
  pa.k_albedo = k_albedo;
  pa.srgb = params->srgb;
  pa.raw = s.c[1];
  pa.c_plain = s.c[0];
  pa.c_out = s.c[1];
  pa.g0 = s.g0[0];
  pa.g1 = s.g1[0];
  pa.g2 = s.g2[0];
  pa.ig = s.ig[0];
  pa.alpha = s.alpha;
  cudaError_t code = lull_atrous_prepare_launch(&pa, cuda->stream);
  if (code == cudaSuccess && permuted)
    code = lull_atrous_layout_tables_launch(s.tables, w, h, levels, cuda->stream);
  if (code != cudaSuccess)
    return lull_cuda_fail(err, code, "cannot launch the ATrous filter");
  status = lull_progress_report(progress, 0.0, err);

  /* 2.+3. the levels; the last one writes the output */
  int cur = 1, gcur = 0;
  for (int level = 0; level < levels && status == LULL_OK; ++level) {
    lull_atrous_level_args la;
    memset(&la, 0, sizeof la);
    const int last = level == levels - 1;
    la.c_in = s.c[cur];
    la.c_out = s.c[1 - cur];
    la.g0_in = s.g0[gcur];
    la.g1_in = s.g1[gcur];
    la.g2_in = s.g2[gcur];
    la.ig_in = s.ig[gcur];
    la.lg = s.lg;
    if (permuted && !last) {
      la.g0_out = s.g0[1 - gcur];
      la.g1_out = s.g1[1 - gcur];
      la.g2_out = s.g2[1 - gcur];
      la.ig_out = s.ig[1 - gcur];
    }
    if (permuted) {
      la.fwd_x = s.tables + (size_t)level * (size_t)w;
      la.inv_x = s.tables + ((size_t)levels + (size_t)level) * (size_t)w;
      const int* ty = s.tables + 2 * (size_t)levels * (size_t)w;
      la.fwd_y = ty + (size_t)level * (size_t)h;
      la.inv_y = ty + ((size_t)levels + (size_t)level) * (size_t)h;
    }
    la.width = w;
    la.height = h;
    la.level = level;
    la.last = last;
    la.channels = channels;
    la.k_normal = k_normal;
    la.k_albedo = k_albedo;
    /* Dammertz §2.2: sigma of level i is sigma_0 2^-i */
    const float sigma_c = params->sigma_color * ldexpf(1.0f, -level);
    la.k_color = 1.0f / (sigma_c * sigma_c);
    la.sigma_luminance = params->sigma_luminance;
    const int step = 1 << level;
    for (int d2 = 0; d2 < 9; ++d2) {
      const int dd = d2 * step * step;
      la.inv_d2[d2] = dd ? 1.0f / (float)dd : 0.0f;
    }
    la.output = images->output;
    la.alpha = s.alpha;
    la.has_alpha = color_channels == 4;
    la.demodulate = demodulate;
    la.srgb = params->srgb;
    la.clamp_output = params->clamp_output;
    la.out_channels = lull_format_channels(images->output.format);
    la.inv_scale = 1.0f / params->input_scale;
    code = variance_mode ? lull_atrous_level_guides_launch(&la, cuda->stream) : cudaSuccess;
    if (code == cudaSuccess)
      code = permuted ? lull_atrous_permuted_launch(&la, variance_mode, geometry_kind, cuda->stream)
                      : lull_atrous_baseline_launch(&la, variance_mode, geometry_kind, cuda->stream);
    if (code != cudaSuccess)
      return lull_cuda_fail(err, code, "cannot launch the ATrous filter");
    cur = 1 - cur;
    if (permuted && !last)
      gcur = 1 - gcur;
    if (progress && progress->report) {
      /* reporting (and cancelling) between levels needs the level done */
      code = cudaStreamSynchronize(cuda->stream);
      if (code != cudaSuccess)
        return lull_cuda_fail(err, code, "CUDA error in the ATrous filter");
      if (!last)
        status = lull_progress_report(progress, (double)(level + 1) / (levels + 1), err);
    }
  }
  if (status == LULL_OK && progress && progress->report) {
    /* the output is complete: a request to cancel now changes nothing */
    lull_error ignored;
    (void)lull_progress_report(progress, 1.0, &ignored);
  }
  return status;
}
