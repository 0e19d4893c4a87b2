/* The à-trous filter on CUDA: the working buffers and the arguments of the
 * kernels, shared by the host scheduling (atrous_cuda.cu), the kernel files
 * (atrous_prepare.cu, atrous_level_guides.cu, atrous_baseline.cu,
 * atrous_permuted.cu) and the CPU emulation of the kernels
 * (tests/gpu/atrous_emulation_test.cu).
 *
 * Working layout per pixel, fp32 (one float4 is one 16-byte load):
 *   C  = (r, g, b, v)      colour (demodulated, scaled, linear) and the
 *                          luminance variance, ping-pong between levels
 *   G0 = (nx, ny, nz, nm)  unit normal and its "missing" flag
 *   G1 = (ar, ag, ab, gx)  albedo and depth (or position x)
 *   G2 = (gy, gz)          position y and z (position input only)
 *   IG = ig                1 / (sigma_g s_p)^2
 *   LG = (gl, il)          per level: the colour test's luminance guide
 *                          g3x3(l) and 1 / (sigma_l sqrt(g3x3 Var) + eps)
 * packedGuides (permuted schedule, variance-guided colour test) replaces C,
 * G0 and G1 by (atrous_packing.cuh):
 *   CP = half4 (r, g, b, sqrt v), times a per-run power of two that
 *        keeps them in fp16's range                       8 bytes
 *   GP = (oct normal 2 x snorm16, half ar, ag, ab, fp32 gx)  16 bytes
 * so a level moves 80 instead of 136 bytes per pixel.
 * The baseline reads the guides in the original layout at every level; the
 * permuted schedule rewrites them in the next level's layout as it goes
 * (the guides must follow the pixels; vkdt does the same). */
#pragma once

#include <cuda_runtime.h>

#include "core_c.h"

enum
{
  LULL_ATROUS_GEOMETRY_NONE = 0,
  LULL_ATROUS_GEOMETRY_DEPTH = 1,
  LULL_ATROUS_GEOMETRY_POSITION = 2,
};

/* The working buffers of one layout (fp32 or packed; unused ones NULL). */
typedef struct lull_atrous_buffers
{
  float4* c;
  uint2* cp;
  float4* g0;
  float4* g1;
  uint4* gp;
  float2* g2;
  float* ig;
} lull_atrous_buffers;

/* What the colour pass before prepare (the "bound kernel",
 * atrous_prepare.cuh) leaves in scratch memory for prepare and the finish:
 * zeroed by the prepare launch, summed by the pass's blocks, finalised by
 * its last block.  The pass runs for packedGuides and for the automatic
 * input scale. */
typedef struct lull_atrous_color_stats
{
  unsigned long long sum, count; /* automatic scale: lull_auto_scale_add's counts */
  unsigned bound;                /* packed: the packing bound (atrous_packing.cuh), float bits;
                                  * the colour's part of it until finalised */
  unsigned vbound;               /* the variance image's part */
  unsigned blocks_done;          /* the block that ends last finalises */
  float scale, inv_scale;        /* automatic scale: lull_auto_scale and 1 / it */
} lull_atrous_color_stats;

/* What prepare needs: the user's images and the parameters. */
typedef struct lull_atrous_prepare_args
{
  lull_image color, albedo, normal, geometry, variance;
  int width, height;
  int channels;        /* colour channels filtered, 1..3 */
  int has_alpha, has_albedo, has_normal, geometry_kind, demodulate, variance_mode;
  int variance_fallback; /* lull_atrous_params.variance_fallback */
  float input_scale;   /* the explicit scale (1 when automatic) */
  float sigma_depth, k_normal, k_albedo;
  int srgb, packed, nonnegative;
  int auto_scale;      /* the input scale is stats->scale (core/atrous.h) */
  lull_atrous_buffers out; /* level 0's input, original layout */
  float* alpha;        /* the fourth colour channel, copied through */
  /* packed or automatic scale: the colour pass's results, found by the
   * prepare launch first; NULL otherwise */
  lull_atrous_color_stats* stats;
} lull_atrous_prepare_args;

/* One level of the filter. */
typedef struct lull_atrous_level_args
{
  lull_atrous_buffers in;  /* this level's input, in its layout */
  lull_atrous_buffers out; /* next level's input (permuted schedule: guides
                            * too, in the next layout; baseline: c only) */
  float4* final_c;         /* permuted, last level: remodulated colour in
                            * the original layout, stored by the finish kernel */
  uint2* final_cp;         /* the same for packed buffers, fp16 (r, g, b, 0) */
  float2* lg;              /* this level's (gl, il), written by the guide kernel */
  /* layout tables of this level's input (permuted schedule; NULL for the
   * baseline, whose layout is the original one) */
  const int* fwd_x;        /* original x -> position */
  const int* fwd_y;
  const int* inv_x;        /* position -> original x */
  const int* inv_y;
  int width, height, level, last, channels, packed;
  float sigma_luminance;
  /* the edge-stopping terms as the kernels evaluate them (atrous_common.cuh),
   * as n = -log2(e) E: per tap class (indexed by dx^2 + dy^2 in units of
   * the step) base = -log2(e) (2 k_n + ln(1 / h)) and 1 / ((dx^2 + dy^2)
   * step^2); the centre's normal times normal_scale = 2 k_n log2(e); the
   * albedo times sqrt(k_a log2(e)); the fixed colour test's
   * color_scale = -k_c log2(e) */
  float normal_scale, sqrt_k_albedo, color_scale;
  float base[9];
  float inv_d2[9];
  /* finish, done by the last level */
  lull_image output;
  const float* alpha;
  int has_alpha, demodulate, srgb, clamp_output, out_channels;
  float inv_scale;         /* 1 / the explicit input scale */
  int auto_scale;          /* ... or stats->inv_scale */
  /* the colour pass's results (packed: the bound, to unscale the output) */
  const lull_atrous_color_stats* stats;
} lull_atrous_level_args;

/* Kernel launchers (each file's entry points).  They return the launch
 * error, if any.  Prepare's launch runs the colour pass first when
 * args->stats is set. */
cudaError_t lull_atrous_prepare_launch(const lull_atrous_prepare_args* args, cudaStream_t stream);
/* The colour pass alone (args->stats zeroed, then filled): the automatic
 * scale of args->color in stats->scale, for tiled runs (atrous_tiles.cu). */
cudaError_t lull_atrous_stats_launch(const lull_atrous_prepare_args* args, cudaStream_t stream);
/* The colour test's per-level inputs LG (variance mode), in the level's
 * layout: both schedules. */
cudaError_t lull_atrous_level_guides_launch(const lull_atrous_level_args* args, cudaStream_t stream);
cudaError_t lull_atrous_baseline_launch(const lull_atrous_level_args* args, int variance_mode,
                                        int geometry_kind, cudaStream_t stream);
/* The permuted level; the last one also launches the finish kernel. */
cudaError_t lull_atrous_permuted_launch(const lull_atrous_level_args* args, int variance_mode,
                                        int geometry_kind, cudaStream_t stream);
/* Per-kernel settings (shared-memory carveout), once per device before the
 * first launch; a hint: the kernels run without it. */
cudaError_t lull_atrous_kernels_configure(void);
/* Fills the layout tables of `levels` layouts for both axes:
 * tables = fwd_x[levels][w], inv_x[levels][w], fwd_y[levels][h], inv_y[levels][h]. */
cudaError_t lull_atrous_layout_tables_launch(int* tables, int width, int height, int levels,
                                             cudaStream_t stream);

/* -- the order of the kernels, shared by the library, the benchmark and the
 * CPU emulation: each supplies the launchers ----------------------------- */

typedef struct lull_atrous_launchers
{
  void* ctx;
  cudaError_t (*prepare)(void* ctx, const lull_atrous_prepare_args* args);
  cudaError_t (*layout_tables)(void* ctx, int* tables, int width, int height, int levels);
  /* one level: the guide kernel (variance mode) and the level kernel */
  cudaError_t (*level)(void* ctx, const lull_atrous_level_args* args, int permuted,
                       int variance_mode, int geometry_kind);
  /* waits for the work so far (progress reporting); may be NULL when no
   * progress is reported */
  cudaError_t (*sync)(void* ctx);
} lull_atrous_launchers;

/* The launchers of the real kernels on a stream (ctx = the cudaStream_t). */
lull_atrous_launchers lull_atrous_stream_launchers(cudaStream_t* stream);

/* How the run is set up: which schedule, buffers, sizes. */
typedef struct lull_atrous_plan
{
  int width, height, levels, permuted, packed, variance_mode, geometry_kind;
  int auto_scale; /* lull_atrous_scale_is_auto */
  size_t scratch_bytes;
} lull_atrous_plan;

/* Validates and plans a run (schedule: -1 auto, 0 baseline, 1 permuted). */
lull_status lull_atrous_plan_make(const lull_atrous_params* params, const lull_atrous_images* images,
                                  int schedule, lull_atrous_plan* plan, lull_error* err);

/* Enqueues the whole filter with `scratch` (plan->scratch_bytes, 256-byte
 * aligned) as working memory; the user's images must be reachable by the
 * launchers' kernels.  Reports progress between levels (then syncing). */
lull_status lull_atrous_enqueue(const lull_atrous_plan* plan, const lull_atrous_params* params,
                                const lull_atrous_images* images, unsigned char* scratch,
                                const lull_atrous_launchers* launchers,
                                const lull_progress* progress, lull_error* err);
