/* The Poisson filter on CUDA: the device-side system, the kernels' one
 * argument block, the launch descriptors, and the host scheduling that
 * mirrors the CPU solver (core/poisson_cg.c, poisson_dct.c, poisson_cpu.c).
 *
 * Shared by the kernel files (poisson_kernels.cuh, dct_cuda.cuh), the
 * launches on a stream (poisson_launch.cu), the scheduling
 * (poisson_schedule.cu), the backend entry (poisson_cuda.cu), the CPU
 * emulation of the kernels (tests/gpu/poisson_emulation_test.cu) and the
 * benchmark (tests/gradient/bench_poisson_cuda.cu).
 *
 * Everything the solver decides from data (CG step sizes, which channels
 * are still active, IRLS normalisation, the DCT preconditioner's mean
 * weights) lives in a small state block in device memory that the kernels
 * read and the last block of each reduction writes, so a whole solve is
 * enqueued without waiting for the GPU (the host syncs only to report
 * progress).  Reductions are in double, in a fixed order (per thread, per
 * block, then over the blocks in index order), so a run repeats bit for
 * bit. */
#pragma once

#include <cuda_runtime_api.h>

#include "core_c.h" /* poisson.h through backend.h */

#if defined(__cplusplus)
extern "C" {
#endif
#include "../core/poisson_solver.h" /* progress spans */

enum
{
  LULL_PK_THREADS = 256,    /* threads of every block */
  LULL_PK_MAX_GRID = 1024,  /* blocks of the pixel kernels (grid-stride loops) */
  LULL_PK_MAX_SUMS = 12,    /* values one reduction sums (a kernel's shared memory: its own) */
  /* blocks of a pixel kernel per multiprocessor: the kernels are limited
   * to 51 registers so that this many fit, and the grid is one wave of
   * them (a grid-stride loop gives every block the same share: a second,
   * partial wave would double the time) */
  LULL_PK_BLOCKS_PER_SM = 5,
};

/* The kernels.  Each is a host-and-device body run phase by phase with a
 * barrier in between (kernel_body.cuh). */
typedef enum lull_pk_kind
{
  LULL_PK_CLEAR,           /* state := 0 */
  LULL_PK_DCT_TABLES,      /* twiddles, quarter-wave factors and eigenvalues of both axes */
  LULL_PK_DCT_X_FORWARD,   /* DCT-II along rows, written transposed */
  LULL_PK_DCT_Y_SOLVE,     /* DCT-II along columns, division by the eigenvalues, DCT-III */
  LULL_PK_DCT_X_INVERSE,   /* DCT-III along rows, transposed back */
  LULL_PK_LOAD,            /* user images -> planes (non-finite primal marked NaN) */
  LULL_PK_REPAIR,          /* NaN primal -> 5x5 mean of finite neighbours; start x = primal */
  LULL_PK_WEIGHTS_RESET,   /* unweighted (L2) rows */
  LULL_PK_CG_INIT,         /* r = b - A x, Jacobi diagonal, sums for the constant's solve */
  LULL_PK_CG_APPLY,        /* p = z + beta p, A p, p.Ap -> step */
  LULL_PK_CG_UPDATE,       /* x += step p, r -= step A p, r.z, r.r -> beta, active */
  LULL_PK_PRECOND_SUMS,    /* r.z and r.r after the DCT preconditioner */
  LULL_PK_REWEIGHT,        /* IRLS weights from the residuals, their sum */
  LULL_PK_SCALE_WEIGHTS,   /* weights normalised to mean 1 */
  LULL_PK_MEAN_WEIGHTS,    /* the DCT preconditioner's constant-weight operator */
  LULL_PK_PRIMAL_MEAN,     /* the mean that fixes the DCT solve's constant when alpha = 0 */
  LULL_PK_FINITE_OR,       /* non-finite solution values -> primal */
  LULL_PK_STORE,           /* planes -> output (and outputVariance) */
  LULL_PK_CG_DIRECTION,    /* p = z + beta p (before APPLY with a patch stencil) */
  LULL_PK_MEAN_OFFSET,     /* alpha = 0 after CG: mean of primal - x, the constant's fix */
  LULL_PK_SHIFT,           /* x += that offset */
  LULL_PK_CG_START,        /* deflated: x += the constant's solve, r -= its A 1; first sums (not DCT) */
  LULL_PK_CG_UPDATE_DEFLATED, /* CG_UPDATE that also sums wa z (the deflation's mu) */
  /* GradientDomain (gradient_domain_kernels.cuh) */
  LULL_PK_GD_AXPY,         /* dst = src + f src2 (src2 NULL: a copy) */
  LULL_PK_GD_ZERO,         /* `count` planes from dst[0] := 0 */
  LULL_PK_GD_GRADIENTS,    /* forward differences of src into dst (x), dst2 (y) */
  LULL_PK_GD_HALF_VARIANCE,/* dst = (src / 2)^2: the two-buffer variance of a half difference */
  LULL_PK_GD_BOX_MEAN,     /* dst = box mean of src (radius) */
  LULL_PK_GD_MAX,          /* dst = max(dst, src) */
  LULL_PK_GD_FEATURE_LOAD, /* one feature channel and its variance, non-finite -> 0 */
  LULL_PK_GD_FEATURE_RANGE,/* its smallest and largest value -> state */
  LULL_PK_GD_FEATURE_NORMALIZE, /* to [0, 1] (variance scaled alike) */
  LULL_PK_GD_FEATURE_SCALE,/* V_j of eq. 5.12 */
  LULL_PK_GD_WEIGHTS,      /* the 25 patch weights w~ (eq. 5.9-5.15) */
  LULL_PK_GD_STENCIL,      /* the patch constraints of one of 25 pixel classes -> stencil */
  LULL_PK_GD_SCORE,        /* a candidate's raw error estimate, or its difference to the first's */
  LULL_PK_GD_KEEP_BEST,    /* the candidate where its score (lull_gd_choice_score) is lowest */
  LULL_PK_GD_POST_SCALE,   /* dst = lull_gd_post_scale(src): a feature's post-filter scale */
  LULL_PK_GD_POST,         /* one pass of the post-filter, a tile per block (lull_gdk_post_body) */
  LULL_PK_KINDS
} lull_pk_kind;

/* Scalars of a solve, in device memory. */
typedef struct lull_pk_state
{
  double rz[3], rr[3], rhs2[3];
  float step[3], beta[3];
  double wsum;           /* sum of the data weights (the deflation, poisson_cg.c) */
  float shift[3];        /* the constant's solve at the start of CG */
  float mu[3];           /* the constant taken out of the next direction */
  int active[3];
  int fresh;             /* the next direction is z itself (first iteration) */
  int iterations;        /* CG iterations since the last CLEAR */
  int scale_valid;
  float scale;           /* IRLS normalisation of the weights (§5.2 SOLVEL1, line 9) */
  float dct_a, dct_c;    /* the DCT preconditioner's a I + c L */
  float mean[3];         /* primal means */
  float offset[3];       /* LULL_PK_MEAN_OFFSET: what x is shifted by */
  float range_lo, range_inv; /* GradientDomain: a feature's smallest value, 1 / its range */
  unsigned int arrived;  /* blocks of the running reduction that are done */
} lull_pk_state;

/* One transform length: its number of radix passes (dct_cuda.cuh,
 * lull_fft_factor) and tables (device memory). */
typedef struct lull_dct_axis
{
  int n;
  int passes;
  float2* twiddle;  /* exp(-2 pi i t / n), t < n */
  float2* quarter;  /* (cos, sin)(pi k / 2n), k < n: Makhoul's DCT factor */
  float* eigen;     /* lull_poisson_axis_eigenvalue(k, n) */
} lull_dct_axis;

/* Device planes of one run (row-major, row stride = width; unused
 * channels alias channel 0). */
typedef struct lull_pk_buffers
{
  float* b[3];      /* primal (after repair) */
  float* gx[3];
  float* gy[3];
  float* alpha;     /* 4th colour channel, copied through */
  float* wa;        /* squared row weights (poisson_math.h) */
  float* wx;
  float* wy;
  float* inv_diag;  /* Jacobi */
  float* x[3];      /* the solution of the full data */
  float* xa[3];     /* of the halves (outputVariance only) */
  float* xb[3];
  float* r[3];      /* CG residual; LOAD's raw primal before the repair */
  float* p[2][3];   /* directions, old and new by turns */
  float* ap[3];     /* A p; the DCT's transposed image (channels planes) */
  float* z[3];      /* DCT preconditioner's output */
  float2* dct_work; /* FFT buffers in global memory when shared memory is too small */
  double* partials; /* LULL_PK_MAX_SUMS x LULL_PK_MAX_GRID block sums */
  lull_pk_state* state;
} lull_pk_buffers;

/* How the DCT kernels of one axis run. */
typedef struct lull_dct_shape
{
  int pairs;    /* complex signals (two real lines each) per block */
  int global;   /* FFT buffers in dct_work instead of shared memory */
  int grid;     /* blocks */
  int groups;   /* line groups, handed out to the blocks in turn */
  size_t smem;  /* dynamic shared memory of a block */
} lull_dct_shape;

/* The plan of a run: sizes, grids and the scratch layout. */
typedef struct lull_pk_plan
{
  int width, height, channels;
  int variance;          /* halves solved too */
  int dct_preconditioner; /* planes for the DCT preconditioner's output */
  int grid;              /* blocks of the pixel kernels */
  lull_dct_axis ax, ay;  /* tables point into the scratch after lull_pk_layout */
  lull_dct_shape x_shape, y_shape;
  size_t scratch_bytes;
} lull_pk_plan;

/* GradientDomain's part of the arguments (gradient_domain_kernels.cuh). */
typedef struct lull_gdk_args
{
  const float* src[3];      /* per-channel operands of the plane kernels */
  const float* src2[3];
  float* dst[3];
  float* dst2[3];
  float f;                  /* AXPY factor */
  int count;                /* ZERO: planes; BOX_MEAN: radius */
  size_t plane_stride;      /* floats between planes */
  /* FEATURE_*: the image, its channel, and the variance image's channel */
  lull_image feature_image, feature_variance;
  int feature_channel, variance_channel;
  /* WEIGHTS, STENCIL, SCORE */
  lull_gd_guide guide;
  lull_gd_features features;
  lull_gd_candidate candidate;
  float* weights[LULL_GD_PATCH];
  float* stencil;           /* LULL_STENCIL_TAPS planes of plane_stride floats */
  int phase;                /* STENCIL: pixels with x % 5, y % 5 = phase % 5, phase / 5 */
  const float* score_sets[4][3]; /* SCORE: candidate on A, on B; references A, B */
  const float* guide_value[3];   /* SCORE: the guide (relative error) */
  int first;                /* SCORE, KEEP_BEST: the first candidate */
  float* best_var[3];       /* KEEP_BEST: the chosen one's variance (score_sets[0], [1]) */
} lull_gdk_args;

/* Everything a kernel may read: one block passed by value to every launch. */
typedef struct lull_pk_args
{
  int width, height, channels;
  float alpha2;
  lull_pk_buffers buf;
  const float* primal[3];   /* the system's data (of the set being solved) */
  const float* gx[3];
  const float* gy[3];
  float* x[3];              /* the solution being computed */
  int precond;              /* lull_poisson_preconditioner */
  double tolerance;         /* cg_tolerance */
  int initial;              /* CG_INIT / PRECOND_SUMS: sums start a solve */
  int reduce;               /* CG_UPDATE: sums r.z (no DCT preconditioner) */
  int deflate;              /* CG deflated by the constant (lull_cg_deflates) */
  int cur;                  /* p[cur]: the previous direction, p[cur ^ 1] the next */
  float eps;                /* REWEIGHT */
  int power;
  double rows;
  /* DCT */
  lull_dct_axis ax, ay;
  lull_dct_shape shape;     /* of the running DCT kernel */
  int dct_rhs;              /* X_FORWARD reads the right-hand side of the unweighted system */
  const float* dct_src[3];  /* else these planes */
  float* dct_dst[3];        /* X_INVERSE writes here */
  int dct_preconditioner;   /* a, c from the state, mean 0 */
  float dct_a, dct_c;       /* else these, and the state's means */
  int dct_gate;             /* skipped when no channel is active (inside CG) */
  /* images: LOAD (one set), STORE */
  lull_image color, gradient_x, gradient_y;  /* the set; color NULL: mean of the halves */
  lull_image half_color[2], half_gx[2], half_gy[2];
  int load_alpha;
  float* repaired[3];       /* REPAIR: the primal planes it writes (x gets a copy) */
  lull_image output, output_variance;
  float* alpha;             /* STORE */
  /* GradientDomain: the patch term of the CG operator (LULL_STENCIL_TAPS
   * planes of stencil_stride floats; NULL: none), and the kernels' own */
  const float* stencil;
  size_t stencil_stride;
  lull_gdk_args gd;
} lull_pk_args;

typedef struct lull_pk_launch
{
  int kind;     /* lull_pk_kind */
  int grid;     /* blocks */
  int groups;   /* work items handed out to the blocks in turn (pixel kernels: = grid) */
  int phases;   /* barrier-separated steps of a work item */
  size_t smem;  /* dynamic shared memory */
  lull_pk_args args;
} lull_pk_launch;

/* Who runs the kernels: the real ones on a stream (poisson_launch.cu) or
 * the CPU emulation (tests). */
typedef struct lull_pk_launchers
{
  void* ctx;
  cudaError_t (*launch)(void* ctx, const lull_pk_launch* launch);
  /* waits for the queued work (progress reports); NULL: nothing to wait for */
  cudaError_t (*sync)(void* ctx);
} lull_pk_launchers;

/* (The functions have C linkage: the benchmark is a C program.) */

/* The launchers of the real kernels on *stream (ctx = the cudaStream_t*). */
lull_pk_launchers lull_pk_stream_launchers(cudaStream_t* stream);

/* Plans a run of a width x height image with `channels` solved channels,
 * the halves too when `variance`, with room for the DCT preconditioner
 * when `dct_preconditioner`.  num_sms sizes the grids; max_smem is the
 * shared memory one block may use (the device's opt-in limit; 0 forces the
 * FFT buffers into global memory). */
lull_status lull_pk_plan_make(int width, int height, int channels, int variance,
                              int dct_preconditioner, int num_sms, size_t max_smem,
                              lull_pk_plan* plan, lull_error* err);
/* The DCT kernels' shape for lines of length n: `pairs` signal pairs per
 * block (0: chosen by the plan's model), in shared memory when one pair
 * and the twiddles fit in max_smem, else in global memory. */
lull_dct_shape lull_pk_dct_shape(int n, int lines, int num_sms, size_t max_smem, int pairs);

/* Lays the buffers out in scratch (plan->scratch_bytes, 256-byte aligned)
 * and points the plan's DCT tables into it. */
void lull_pk_layout(lull_pk_plan* plan, unsigned char* scratch, lull_pk_buffers* buf);

/* Arguments of a solve of the full data in buf (b, gx, gy) into buf.x. */
lull_pk_args lull_pk_args_make(const lull_pk_plan* plan, const lull_pk_buffers* buf, float alpha);

/* Enqueues CLEAR and DCT_TABLES (once per run). */
lull_status lull_pk_prepare(const lull_pk_plan* plan, const lull_pk_buffers* buf,
                            const lull_pk_launchers* launchers, lull_error* err);

/* The solve of lull_poisson_solve: x (args->x) holds the start (CG) and
 * receives the solution; the weights are rewritten.  The state's iteration
 * counter adds the CG iterations. */
lull_status lull_pk_solve(const lull_pk_plan* plan, const lull_poisson_params* params,
                          const lull_pk_args* args, const lull_pk_launchers* launchers,
                          const lull_progress_span* progress, lull_error* err);

/* One CG solve with the weights as they are (lull_poisson_cg): x
 * (args->x) holds the start. */
lull_status lull_pk_cg(const lull_pk_plan* plan, const lull_poisson_params* params,
                       const lull_pk_args* args, const lull_pk_launchers* launchers,
                       const lull_progress_span* progress, lull_error* err);

/* The images LOAD reads for input set `which` (LULL_POISSON_INPUT_*). */
void lull_pk_set_inputs(lull_pk_args* a, const lull_poisson_input* in, int which);

/* Enqueues one kernel of the plan's grid. */
lull_status lull_pk_launch_kind(const lull_pk_plan* plan, const lull_pk_launchers* launchers,
                                int kind, const lull_pk_args* args, lull_error* err);

/* Waits for the GPU and reports progress (nothing without a callback). */
lull_status lull_pk_report(const lull_pk_launchers* launchers, const lull_progress_span* span,
                           double done, lull_error* err);

/* The whole filter (lull_poisson_cpu): loads, repairs, solves the full data
 * and, for outputVariance, each half, and stores.  images are validated
 * already; scratch holds plan->scratch_bytes. */
lull_status lull_pk_filter_enqueue(lull_pk_plan* plan, const lull_poisson_params* params,
                                   const lull_poisson_images* images, unsigned char* scratch,
                                   const lull_pk_launchers* launchers,
                                   const lull_progress* progress, lull_error* err);

/* The backend's entry (backend_cuda.cu calls it with the device current). */
struct lull_cuda_backend;
lull_status lull_cuda_poisson(struct lull_cuda_backend* cuda, const lull_poisson_params* params,
                              const lull_poisson_images* images, const lull_progress* progress,
                              lull_error* err);

#if defined(__cplusplus)
}
#endif
