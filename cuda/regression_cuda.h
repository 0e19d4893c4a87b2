/* The Regression filter on CUDA: the kernels' arguments, the launchers the
 * host schedule (regression_schedule.cu) runs them through, and the entry
 * of the backend.  The schedule mirrors core/regression_cpu.c step for
 * step over working planes in one device block; the per-pixel formulas are
 * core/regression_math.h's, the kernel bodies cuda/regression_kernels.cuh.
 * tests/gpu/regression_emulation_test.cu runs the same schedule with the
 * same bodies on the CPU (launchers that loop over blocks and threads).
 *
 * Where the time goes: the regression passes (per pixel and window offset
 * an NL-means weight and a rank-one update of the normal equations) and
 * the collaborative gather.  A pass is one kernel per step over tiles of
 * 16 x 16 pixels (16 x 8 when two bandwidths share a tile, a thread for
 * each pixel and bandwidth); per window offset the block computes the
 * pair terms of its tile and patch margin into shared memory once, box-sums
 * them there, and every thread adds the offset's row to its normal
 * equations held in registers (the column count is a template parameter).
 * The fits are stored as planes (coefficients, then the range of the
 * values each fit saw), and the gather reads the fits of the centres
 * around a pixel (no atomics; results do not depend on the schedule). */
#pragma once

#include <cuda_runtime.h>

#include "core_c.h"
#include "../core/regression_math.h"

enum
{
  LULL_RK_THREADS = 256,  /* threads of every block */
  LULL_RK_TILE_W = 16,    /* tile width of the passes; height 16 / bandwidths */
  LULL_RK_MAX_PLANES = 12, /* planes per operand of a pixel kernel */
  LULL_RK_REDUCE_BLOCKS = 256,
  LULL_RK_GROUP = 2,      /* window offsets a tile kernel takes per round */
};

/* Values the reductions compute on the GPU and every kernel reads from
 * device memory (so the host never waits for them). */
typedef struct lull_rk_consts
{
  float scale, inv_scale;   /* the input scale and its inverse */
  float inv_depth;          /* 1 / the mean finite positive depth */
  float centre[3];          /* the position's centroid */
  float inv_position;       /* 1 / the mean distance to it */
} lull_rk_consts;

/* One block's part of a reduction. */
typedef struct lull_rk_partial
{
  double s[3];
  unsigned long long u[2];
  float m;
  float pad;
} lull_rk_partial;

typedef enum lull_rk_reduce_kind
{
  LULL_RK_REDUCE_SCALE,    /* the colour's exponent sum, count, largest magnitude */
  LULL_RK_REDUCE_DEPTH,    /* sum and count of the finite positive depths */
  LULL_RK_REDUCE_CENTROID, /* sums of the finite positions and their count */
  LULL_RK_REDUCE_DISTANCE, /* sum of the distances to the centroid */
} lull_rk_reduce_kind;

typedef struct lull_rk_reduce_args
{
  int kind;
  int finalize; /* 0: the blocks' partials; 1: one thread sums them into consts */
  lull_image image;
  lull_rk_partial* partials; /* LULL_RK_REDUCE_BLOCKS */
  lull_rk_consts* consts;
  /* SCALE with finalize: the scale is automatic, else fixed_scale */
  int auto_scale;
  float fixed_scale;
} lull_rk_reduce_args;

/* Kernels of one thread per pixel (regression_kernels.cuh says what each
 * reads and writes). */
typedef enum lull_rk_pixel_kind
{
  LULL_RK_LOAD_COLOR,
  LULL_RK_LOAD_FEATURES,
  LULL_RK_LOAD_VARIANCE,
  LULL_RK_REPAIR,
  LULL_RK_COPY,
  LULL_RK_LUMINANCE,
  LULL_RK_FIREFLY_SCALE,
  LULL_RK_GUIDES,
  LULL_RK_HALF_VARIANCE,
  LULL_RK_BOX_MEAN,
  LULL_RK_SELECT_ERRORS,
  LULL_RK_CHOICE,
  LULL_RK_BLEND,
  LULL_RK_MEAN,
  LULL_RK_ONE_PREPARE,
  LULL_RK_ONE_GUIDE_VARIANCE,
  LULL_RK_INTERLEAVE,
  LULL_RK_STORE,
  LULL_RK_COPY_OUT,
  LULL_RK_FIREFLY_LEVEL, /* its own kernel (the window's values in registers) */
} lull_rk_pixel_kind;

typedef struct lull_rk_pixel_args
{
  int kind;
  int width, height;  /* of the region (planes are width x height) */
  int channels;       /* planes per operand */
  const float* src[LULL_RK_MAX_PLANES];
  const float* src2[LULL_RK_MAX_PLANES];
  float* dst[LULL_RK_MAX_PLANES];
  float* dst2[LULL_RK_MAX_PLANES];
  int radius;
  int flag, flag2;    /* kind-specific switches */
  float f, f2;        /* kind-specific values */
  int count;          /* kind-specific */
  lull_image image, image2;
  lull_image albedo, normal, depth, position;
  float* interleaved; /* float3 per pixel */
  const lull_rk_consts* consts;
  int x0, y0, x1, y1, ox, oy; /* STORE: the region's rows and columns kept, and where */
} lull_rk_pixel_args;

typedef enum lull_rk_tile_kind
{
  LULL_RK_FIT,    /* the normal equations of each pixel's window, solved */
  LULL_RK_GATHER, /* the collaborative mean of the predictions */
  LULL_RK_SMOOTH, /* NL-means (zero order) of up to 6 planes */
} lull_rk_tile_kind;

/* A smoothing problem of a SMOOTH launch (blockIdx.z picks it). */
typedef struct lull_rk_smooth_set
{
  const float* g[3];
  const float* gv[3];
  const float* in[6];
  float* out[6];
} lull_rk_smooth_set;

typedef struct lull_rk_tile_args
{
  int kind;
  int width, height;
  int radius, patch;
  int nb;               /* bandwidths (threads per pixel) */
  float k[2];
  int gc;               /* guide channels */
  const float* g[3];    /* FIT, GATHER: the guide and its variance */
  const float* gv[3];
  int n;                /* FIT, GATHER: columns (3 + features) */
  int nf;
  const float* y[3];    /* FIT: the regressed colour */
  const float* f[LULL_REG_MAX_FEATURES];
  float* out[2][3];     /* GATHER: per bandwidth */
  float* fits;          /* planes: per bandwidth 3 n coefficients, 3 lows, 3 highs */
  size_t plane_stride;
  float inv_r, ridge;
  int nc, sets;         /* SMOOTH: channels, problems */
  lull_rk_smooth_set set[2];
} lull_rk_tile_args;

/* How the schedule's kernels run: on a stream (regression_cuda.cu) or on
 * the CPU (the emulation test). */
typedef struct lull_rk_launchers
{
  void* ctx;
  cudaError_t (*pixels)(void* ctx, const lull_rk_pixel_args* args);
  cudaError_t (*tiles)(void* ctx, const lull_rk_tile_args* args);
  cudaError_t (*reduce)(void* ctx, const lull_rk_reduce_args* args);
  /* the à-trous pilot of one buffer (float3 colour in, float3 out), with
   * `scratch` (pilot_bytes of lull_rk_plan) as its working memory */
  lull_status (*pilot)(void* ctx, const lull_atrous_params* params,
                       const lull_atrous_images* images, unsigned char* scratch,
                       size_t scratch_bytes, lull_error* err);
  cudaError_t (*sync)(void* ctx); /* NULL: never waits (no progress reports) */
  /* a named step is done (the benchmark's timing; NULL: none) */
  void (*mark)(void* ctx, const char* step);
} lull_rk_launchers;

/* The working memory of a run on a region of width x height. */
typedef struct lull_rk_plan
{
  int width, height;    /* the region */
  int halves, nf, feature_halves, n;
  unsigned shared;      /* bit k: feature channel k given once (not prefiltered) */
  size_t plane_stride;  /* floats between planes (a multiple of 64) */
  size_t pilot_bytes;   /* one buffer: the à-trous scratch */
  size_t bytes;         /* all of it */
} lull_rk_plan;

/* Bytes of device memory a run on a width x height region takes (without
 * the staging of a tiled run's output). */
size_t lull_rk_memory(const lull_regression_params* params, const lull_regression_images* images,
                      int width, int height);

/* The whole filter on validated images with `memory` (lull_rk_filter_bytes
 * for the tile grid the cap gives) as working memory: tiles, the constants,
 * each region's run, the staging of a tiled output. */
size_t lull_rk_filter_bytes(const lull_regression_params* params,
                            const lull_regression_images* images, size_t cap);
lull_status lull_rk_filter(const lull_regression_params* params,
                           const lull_regression_images* images, size_t cap,
                           unsigned char* memory, const lull_rk_launchers* launchers,
                           const lull_progress* progress, lull_error* err);

/* Column counts a pass is compiled for (3 + features: none, depth, albedo
 * or normal or position, and their sums). */
static inline int lull_rk_columns_supported(int n)
{
  return n == 3 || n == 4 || n == 6 || n == 7 || n == 9 || n == 10 || n == 12;
}

/* The stream launchers (regression_cuda.cu). */
struct lull_cuda_backend;
lull_rk_launchers lull_rk_stream_launchers(struct lull_cuda_backend* cuda);

/* The backend's entry. */
lull_status lull_cuda_regression(struct lull_cuda_backend* cuda,
                                 const lull_regression_params* params,
                                 const lull_regression_images* images,
                                 const lull_progress* progress, lull_error* err);
