/* The à-trous filter on CUDA: the working buffers and the arguments of the
 * kernels, shared by the host scheduling (atrous_cuda.cu) and the kernel
 * files (atrous_prepare.cu, atrous_baseline.cu, atrous_permuted.cu).
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

/* What prepare needs: the user's images and the parameters. */
typedef struct lull_atrous_prepare_args
{
  lull_image color, albedo, normal, geometry, variance;
  int width, height;
  int channels;        /* colour channels filtered, 1..3 */
  int has_alpha, has_albedo, has_normal, geometry_kind, demodulate, variance_mode;
  float input_scale, sigma_depth, k_normal, k_albedo;
  int srgb;
  /* outputs (original layout) */
  float4* raw;         /* colour before inpainting, w = 1 when finite */
  float4* c_plain;     /* inpainted and demodulated colour, w unused */
  float4* c_out;       /* level 0 input: (r, g, b, v) */
  float4* g0;
  float4* g1;
  float2* g2;
  float* ig;
  float* alpha;
} lull_atrous_prepare_args;

/* One level of the filter. */
typedef struct lull_atrous_level_args
{
  const float4* c_in;
  float4* c_out;
  const float4* g0_in;
  const float4* g1_in;
  const float2* g2_in;
  const float* ig_in;
  float2* lg;          /* this level's (gl, il), written by the guide kernel */
  float4* g0_out;      /* permuted schedule, all levels but the last */
  float4* g1_out;
  float2* g2_out;
  float* ig_out;
  /* layout tables of this level's input (permuted schedule; NULL for the
   * baseline, whose layout is the original one) */
  const int* fwd_x;    /* original x -> position */
  const int* fwd_y;
  const int* inv_x;    /* position -> original x */
  const int* inv_y;
  int width, height, level, last, channels;
  float k_normal, k_albedo, k_color, sigma_luminance;
  float inv_d2[9];     /* 1 / ((dx^2 + dy^2) step^2), indexed by dx^2 + dy^2 */
  /* finish, done by the last level */
  lull_image output;
  const float* alpha;
  int has_alpha, demodulate, srgb, clamp_output, out_channels;
  float inv_scale;
} lull_atrous_level_args;

/* Kernel launchers (each file's entry points).  They return the launch
 * error, if any. */
cudaError_t lull_atrous_prepare_launch(const lull_atrous_prepare_args* args, cudaStream_t stream);
/* The colour test's per-level inputs LG (variance mode), in the level's
 * layout: both schedules. */
cudaError_t lull_atrous_level_guides_launch(const lull_atrous_level_args* args, cudaStream_t stream);
cudaError_t lull_atrous_baseline_launch(const lull_atrous_level_args* args, int variance_mode,
                                        int geometry_kind, cudaStream_t stream);
cudaError_t lull_atrous_permuted_launch(const lull_atrous_level_args* args, int variance_mode,
                                        int geometry_kind, cudaStream_t stream);
/* Fills the layout tables of `levels` layouts for both axes:
 * tables = fwd_x[levels][w], inv_x[levels][w], fwd_y[levels][h], inv_y[levels][h]. */
cudaError_t lull_atrous_layout_tables_launch(int* tables, int width, int height, int levels,
                                             cudaStream_t stream);
