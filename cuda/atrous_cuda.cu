/* The à-trous filter on the GPU: scratch memory, the order of the kernels,
 * the schedule choice and progress.  Contract: core/atrous.h (prepare ->
 * levels -> finish, with the finish done by the last level).  The order is
 * written once (lull_atrous_enqueue) and run by the library on a stream, by
 * the benchmark with timing events, and by the CPU emulation in the tests. */
#include "atrous_cuda.h"

#include "atrous_graph.h"
#include "backend_cuda.h"

/* Bytes of `per_pixel` bytes per pixel, with overflow checks. */
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

/* Where each buffer lives in the scratch memory (offsets; NONE = absent). */
#define NONE SIZE_MAX

typedef struct scratch_layout
{
  size_t c[2], cp[2], g0[2], g1[2], gp[2], g2[2], ig[2];
  size_t lg, alpha, tables, stats;
  size_t bytes;
} scratch_layout;

/* Lays the buffers out; 0 when the sizes overflow. */
static int scratch_layout_make(const lull_atrous_plan* p, int color_channels, scratch_layout* s)
{
  const size_t pixels = (size_t)p->width * (size_t)p->height;
  size_t b16 = 0, b8 = 0, b4 = 0, bt = 0;
  if (!bytes_of(pixels, 16, &b16) || !bytes_of(pixels, 8, &b8) || !bytes_of(pixels, 4, &b4) ||
      !bytes_of((size_t)p->levels * 2 * ((size_t)p->width + (size_t)p->height), sizeof(int), &bt))
    return 0;
  /* a bound on the sum below, so the running offset cannot overflow */
  if (b16 > SIZE_MAX / 16)
    return 0;
  size_t offset = 0;
  /* guides: one copy for the baseline, ping-pong for the permuted layouts */
  const int copies = p->permuted ? 2 : 1;
  const int position = p->geometry_kind == LULL_ATROUS_GEOMETRY_POSITION;
  for (int k = 0; k < 2; ++k) {
    const int own = k < copies;
    s->c[k] = p->packed ? NONE : carve(&offset, b16);
    s->cp[k] = p->packed ? carve(&offset, b8) : NONE;
    s->g0[k] = p->packed ? NONE : (own ? carve(&offset, b16) : s->g0[0]);
    s->g1[k] = p->packed ? NONE : (own ? carve(&offset, b16) : s->g1[0]);
    s->gp[k] = p->packed ? (own ? carve(&offset, b16) : s->gp[0]) : NONE;
    s->g2[k] = !position ? NONE : (own ? carve(&offset, b8) : s->g2[0]);
    s->ig[k] = own ? carve(&offset, b4) : s->ig[0];
  }
  s->lg = p->variance_mode ? carve(&offset, b8) : NONE;
  s->alpha = color_channels == 4 ? carve(&offset, b4) : NONE;
  s->tables = p->permuted ? carve(&offset, bt) : NONE;
  s->stats = p->packed || p->auto_scale ? carve(&offset, sizeof(lull_atrous_color_stats)) : NONE;
  s->bytes = offset;
  return 1;
}

#define AT(type, base, offset) ((offset) == NONE ? (type*)NULL : (type*)((base) + (offset)))

static lull_atrous_buffers buffers_at(unsigned char* base, const scratch_layout* s, int color,
                                      int guides)
{
  lull_atrous_buffers b;
  b.c = AT(float4, base, s->c[color]);
  b.cp = AT(uint2, base, s->cp[color]);
  b.g0 = AT(float4, base, s->g0[guides]);
  b.g1 = AT(float4, base, s->g1[guides]);
  b.gp = AT(uint4, base, s->gp[guides]);
  b.g2 = AT(float2, base, s->g2[guides]);
  b.ig = AT(float, base, s->ig[guides]);
  return b;
}

lull_status lull_atrous_plan_make(const lull_atrous_params* params, const lull_atrous_images* images,
                                  int schedule, lull_atrous_plan* plan, lull_error* err)
{
  const lull_status status = lull_atrous_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  memset(plan, 0, sizeof *plan);
  plan->width = images->color.width;
  plan->height = images->color.height;
  plan->levels = params->iterations;
  /* -1 (auto): the permuted schedule, the faster as measured (NOTES.md) */
  plan->permuted = schedule != 0;
  plan->variance_mode = params->color_mode == LULL_ATROUS_COLOR_VARIANCE;
  /* packed buffers: a hint, taken by the permuted schedule (the fast
   * path); the baseline stays fp32, the reference the others are held to */
  plan->packed = params->packed_guides && plan->permuted;
  plan->auto_scale = lull_atrous_scale_is_auto(params);
  const int has_geometry =
      (images->depth.data || images->position.data) && params->sigma_depth > 0.0f;
  plan->geometry_kind = !has_geometry ? LULL_ATROUS_GEOMETRY_NONE
                        : images->depth.data ? LULL_ATROUS_GEOMETRY_DEPTH
                                             : LULL_ATROUS_GEOMETRY_POSITION;
  scratch_layout s;
  if (!scratch_layout_make(plan, lull_format_channels(images->color.format), &s))
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "image too large");
  plan->scratch_bytes = s.bytes;
  return LULL_OK;
}

/* The per-level constants of atrous_common.cuh's tap evaluation, which
 * carries the exponent as n = -log2(e) E (atrous_cuda.h). */
static void level_constants(lull_atrous_level_args* la, float k_normal, float k_albedo, int level)
{
  la->normal_scale = lull_normal_scale_log2(k_normal);
  la->sqrt_k_albedo = sqrtf(k_albedo * LULL_LOG2E);
  const int step = 1 << level;
  for (int d2 = 0; d2 < 9; ++d2) {
    la->base[d2] = 0.0f;
    const int dd = d2 * step * step;
    la->inv_d2[d2] = dd ? 1.0f / (float)dd : 0.0f;
  }
  /* 2 k_n + ln(1 / h) per class; h = B3(dx) B3(dy) (Dammertz 2010 §2.2) */
  for (int dy = 0; dy <= 2; ++dy)
    for (int dx = 0; dx <= 2; ++dx)
      la->base[dx * dx + dy * dy] =
          -LULL_LOG2E * lull_tap_constant(k_normal, lull_b3_tap(dx) * lull_b3_tap(dy));
}

lull_status lull_atrous_enqueue(const lull_atrous_plan* plan, const lull_atrous_params* params,
                                const lull_atrous_images* images, unsigned char* scratch,
                                const lull_atrous_launchers* launchers,
                                const lull_progress* progress, lull_error* err)
{
  const int w = plan->width, h = plan->height, levels = plan->levels;
  const int color_channels = lull_format_channels(images->color.format);
  const int channels = LULL_MIN(color_channels, 3);
  const int has_albedo = images->albedo.data != NULL;
  const int has_normal = images->normal.data != NULL;
  const int demodulate = params->demodulate && has_albedo && channels == 3;
  const float k_normal =
      lull_edge_factor(params->sigma_normal, has_normal, LULL_NORMAL_SIGMA2_MIN);
  const float k_albedo =
      lull_edge_factor(params->sigma_albedo, has_albedo, LULL_ALBEDO_SIGMA2_MIN);
  scratch_layout s;
  if (!scratch_layout_make(plan, color_channels, &s))
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "image too large");
  float* alpha = AT(float, scratch, s.alpha);
  int* tables = AT(int, scratch, s.tables);
  lull_atrous_color_stats* stats = AT(lull_atrous_color_stats, scratch, s.stats);
  /* an explicit scale, or 1 where NaN does not mean automatic */
  const float input_scale = isnan(params->input_scale) ? 1.0f : params->input_scale;

  /* 1. prepare: level 0's input in buffers 0 */
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
  pa.geometry_kind = plan->geometry_kind;
  pa.demodulate = demodulate;
  pa.variance_mode = plan->variance_mode;
  pa.variance_fallback = params->variance_fallback;
  pa.input_scale = input_scale;
  pa.auto_scale = plan->auto_scale;
  pa.sigma_depth = params->sigma_depth;
  pa.k_normal = k_normal;
  pa.k_albedo = k_albedo;
  pa.srgb = params->srgb;
  pa.nonnegative = params->nonnegative;
  pa.packed = plan->packed;
  pa.out = buffers_at(scratch, &s, 0, 0);
  pa.alpha = alpha;
  pa.stats = stats;
  cudaError_t code = launchers->prepare(launchers->ctx, &pa);
  if (code == cudaSuccess && plan->permuted)
    code = launchers->layout_tables(launchers->ctx, tables, w, h, levels);
  if (code != cudaSuccess)
    return lull_cuda_fail(err, code, "cannot launch the ATrous filter");
  lull_status status = lull_progress_report(progress, 0.0, err);

  /* 2.+3. the levels; the last one writes the output */
  int cur = 0, gcur = 0;
  for (int level = 0; level < levels && status == LULL_OK; ++level) {
    lull_atrous_level_args la;
    memset(&la, 0, sizeof la);
    const int last = level == levels - 1;
    la.in = buffers_at(scratch, &s, cur, gcur);
    la.out = buffers_at(scratch, &s, 1 - cur, plan->permuted ? 1 - gcur : gcur);
    if (!plan->permuted) /* the baseline writes the colour only */
      la.out.g0 = la.out.g1 = NULL, la.out.gp = NULL, la.out.g2 = NULL, la.out.ig = NULL;
    /* the last permuted level's colour in the original layout goes to the
     * colour buffer it does not read (packed: fp16, as the levels' colour) */
    la.final_c = la.out.c;
    la.final_cp = la.out.cp;
    la.lg = AT(float2, scratch, s.lg);
    if (plan->permuted) {
      la.fwd_x = tables + (size_t)level * (size_t)w;
      la.inv_x = tables + ((size_t)levels + (size_t)level) * (size_t)w;
      const int* ty = tables + 2 * (size_t)levels * (size_t)w;
      la.fwd_y = ty + (size_t)level * (size_t)h;
      la.inv_y = ty + ((size_t)levels + (size_t)level) * (size_t)h;
    }
    la.width = w;
    la.height = h;
    la.level = level;
    la.last = last;
    la.channels = channels;
    la.packed = plan->packed;
    /* Dammertz §2.2: sigma of level i is sigma_0 2^-i */
    const float sigma_c = params->sigma_color * ldexpf(1.0f, -level);
    la.color_scale = -LULL_LOG2E / (sigma_c * sigma_c);
    la.sigma_luminance = params->sigma_luminance;
    level_constants(&la, k_normal, k_albedo, level);
    la.output = images->output;
    la.alpha = alpha;
    la.has_alpha = color_channels == 4;
    la.demodulate = demodulate;
    la.srgb = params->srgb;
    la.clamp_output = params->clamp_output;
    la.out_channels = lull_format_channels(images->output.format);
    la.inv_scale = 1.0f / input_scale;
    la.auto_scale = plan->auto_scale;
    la.stats = stats;
    code = launchers->level(launchers->ctx, &la, plan->permuted, plan->variance_mode,
                            plan->geometry_kind);
    if (code != cudaSuccess)
      return lull_cuda_fail(err, code, "cannot launch the ATrous filter");
    cur = 1 - cur;
    if (plan->permuted)
      gcur = 1 - gcur;
    if (progress && progress->report && launchers->sync) {
      /* reporting (and cancelling) between levels needs the level done */
      code = launchers->sync(launchers->ctx);
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

/* -- the real kernels on a stream ----------------------------------------- */

static cudaError_t stream_prepare(void* ctx, const lull_atrous_prepare_args* args)
{
  return lull_atrous_prepare_launch(args, *(cudaStream_t*)ctx);
}

static cudaError_t stream_layout_tables(void* ctx, int* tables, int width, int height, int levels)
{
  return lull_atrous_layout_tables_launch(tables, width, height, levels, *(cudaStream_t*)ctx);
}

static cudaError_t stream_level(void* ctx, const lull_atrous_level_args* args, int permuted,
                                int variance_mode, int geometry_kind)
{
  const cudaStream_t stream = *(cudaStream_t*)ctx;
  cudaError_t code = variance_mode ? lull_atrous_level_guides_launch(args, stream) : cudaSuccess;
  if (code == cudaSuccess)
    code = permuted ? lull_atrous_permuted_launch(args, variance_mode, geometry_kind, stream)
                    : lull_atrous_baseline_launch(args, variance_mode, geometry_kind, stream);
  return code;
}

static cudaError_t stream_sync(void* ctx)
{
  return cudaStreamSynchronize(*(cudaStream_t*)ctx);
}

lull_atrous_launchers lull_atrous_stream_launchers(cudaStream_t* stream)
{
  lull_atrous_launchers l;
  l.ctx = stream;
  l.prepare = stream_prepare;
  l.layout_tables = stream_layout_tables;
  l.level = stream_level;
  l.sync = stream_sync;
  return l;
}

lull_status lull_cuda_atrous(lull_cuda_backend* cuda, const lull_atrous_params* params,
                             const lull_atrous_images* images, int schedule,
                             const lull_progress* progress, lull_error* err)
{
  lull_atrous_plan plan;
  const lull_status status = lull_atrous_plan_make(params, images, schedule, &plan, err);
  if (status != LULL_OK)
    return status;
  if (!cuda->kernels_configured) {
    /* a hint: a failure leaves the default settings */
    if (lull_atrous_kernels_configure() != cudaSuccess)
      (void)cudaGetLastError();
    cuda->kernels_configured = 1;
  }
  /* tiles under maxMemoryMB, or in what the GPU has free when the scratch
   * would not fit it (whichever cap is smaller) */
  size_t cap = lull_cuda_atrous_default_cap(cuda, plan.scratch_bytes);
  if (params->memory_cap != 0 && (cap == 0 || params->memory_cap < cap))
    cap = params->memory_cap;
  lull_atrous_params capped = *params;
  capped.memory_cap = cap;
  /* (a grid of one tile: untiled takes the least memory) */
  if (cap != 0 && plan.scratch_bytes > cap) {
    const lull_atrous_tiling tiling = lull_cuda_atrous_tiling(&capped, images, schedule);
    if (tiling.columns * (long long)tiling.rows > 1)
      return lull_cuda_atrous_tiles(cuda, &capped, images, schedule, &tiling, progress, err);
  }
  unsigned char* base = (unsigned char*)lull_cuda_scratch(cuda, plan.scratch_bytes, err);
  if (!base) {
    /* the free memory was there, but not in one piece, or another process
     * took it meanwhile: tiles in what is free now */
    capped.memory_cap = lull_cuda_atrous_default_cap(cuda, SIZE_MAX);
    if (err && err->code == LULL_ERROR_OUT_OF_MEMORY && capped.memory_cap != 0 &&
        capped.memory_cap < plan.scratch_bytes) {
      const lull_atrous_tiling tiling = lull_cuda_atrous_tiling(&capped, images, schedule);
      if (tiling.columns * (long long)tiling.rows > 1)
        return lull_cuda_atrous_tiles(cuda, &capped, images, schedule, &tiling, progress, err);
    }
    return err ? err->code : LULL_ERROR_OUT_OF_MEMORY;
  }
  /* without progress reports: one cached graph (atrous_graph.cu) */
  if (!progress || !progress->report)
    return lull_cuda_atrous_graph_enqueue(&cuda->atrous_graphs, cuda->stream, &plan, params,
                                          images, base, err);
  const lull_atrous_launchers launchers = lull_atrous_stream_launchers(&cuda->stream);
  return lull_atrous_enqueue(&plan, params, images, base, &launchers, progress, err);
}
