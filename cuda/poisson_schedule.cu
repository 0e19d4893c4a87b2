/* The Poisson filter's host scheduling: the plan and scratch layout, and
 * the order of the kernels, step for step the CPU solver's
 * (core/poisson_cpu.c: load, repair, solve, store; poisson_cg.c:
 * lull_poisson_solve and cg_solve).  It never touches the GPU itself: the
 * launchers run the kernels (on a stream, or emulated on the CPU by
 * tests/gpu/poisson_emulation_test.cu). */
#include <string.h>

#include "backend_cuda.h"
#include "poisson_kernels.cuh"

enum
{
  /* signal pairs of a DCT block at most */
  DCT_MAX_PAIRS = 8,
  DCT_MAX_LENGTH = 1 << 26, /* as the CPU's DCT plans (core/dct.c) */
  ALIGN = 256,
};


static void axis_plan(int n, lull_dct_axis* axis)
{
  int radix, ns;
  axis->n = n;
  axis->passes = lull_fft_factor(n, -1, &radix, &ns);
}

lull_dct_shape lull_pk_dct_shape(int n, int lines, int num_sms, size_t max_smem, int pairs)
{
  lull_dct_shape s;
  memset(&s, 0, sizeof s);
  const size_t pair = 2 * (size_t)n * sizeof(float2);
  const size_t table = (size_t)n * sizeof(float2);
  const int sms = LULL_MAX(num_sms, 1);
  const int most = LULL_MAX(LULL_MIN(DCT_MAX_PAIRS, (lines + 1) / 2), 1);
  if (table + pair > max_smem) {
    /* one pair does not fit: FFT buffers in global memory, a grid of two
     * blocks per multiprocessor */
    s.global = 1;
    s.pairs = 1;
    s.groups = (lines + 1) / 2;
    s.grid = LULL_MIN(s.groups, 2 * sms);
    s.smem = 16;
    return s;
  }
  if (pairs <= 0) {
    /* The blocks of a kernel run in waves of (resident blocks per
     * multiprocessor) x (multiprocessors), and a block's time grows with
     * its pairs: the least waves x pairs wins (a ragged last wave costs a
     * whole one), more pairs on a tie (fewer table copies). */
    double best = 0.0;
    for (int p = 1; p <= most && table + (size_t)p * pair <= max_smem; ++p) {
      const size_t smem = table + (size_t)p * pair;
      const int resident = LULL_MIN(LULL_PK_BLOCKS_PER_SM, (int)((max_smem + 1024) / (smem + 1024)));
      const int groups = (lines + 2 * p - 1) / (2 * p);
      const int slots = LULL_MAX(resident, 1) * sms;
      const double cost = (double)((groups + slots - 1) / slots) * p;
      if (pairs <= 0 || cost <= best) {
        best = cost;
        pairs = p;
      }
    }
  }
  while (pairs > 1 && table + (size_t)pairs * pair > max_smem)
    --pairs;
  s.pairs = LULL_MAX(LULL_MIN(pairs, most), 1);
  s.groups = (lines + 2 * s.pairs - 1) / (2 * s.pairs);
  s.grid = LULL_MIN(s.groups, 1 << 20);
  s.smem = table + (size_t)s.pairs * pair;
  return s;
}

/* Bytes of the global FFT buffers of a shape. */
static size_t dct_work_bytes(const lull_dct_shape* s, int n)
{
  return s->global ? (size_t)s->grid * 2 * (size_t)s->pairs * (size_t)n * sizeof(float2) : 0;
}

static size_t align_up(size_t v)
{
  return (v + ALIGN - 1) / ALIGN * ALIGN;
}

/* The scratch layout: a cursor over the block (base NULL: sizes only). */
typedef struct cursor
{
  unsigned char* base;
  size_t offset;
} cursor;

static void* take(cursor* c, size_t bytes)
{
  void* p = c->base ? c->base + c->offset : NULL;
  c->offset += align_up(bytes);
  return p;
}

/* `count` planes of `plane` bytes; channels beyond count alias the first. */
static void take_planes(cursor* c, float* out[3], int count, size_t plane)
{
  float* first = (float*)take(c, plane * (size_t)count);
  for (int k = 0; k < 3; ++k)
    out[k] = first ? first + (k < count ? k : 0) * (plane / sizeof(float)) : NULL;
}

static size_t layout(const lull_pk_plan* plan, unsigned char* base, lull_pk_buffers* buf)
{
  const size_t n = (size_t)plan->width * (size_t)plan->height;
  const size_t plane = align_up(n * sizeof(float));
  const int nc = plan->channels;
  cursor c = {base, 0};
  memset(buf, 0, sizeof *buf);
  take_planes(&c, buf->b, nc, plane);
  take_planes(&c, buf->gx, nc, plane);
  take_planes(&c, buf->gy, nc, plane);
  take_planes(&c, buf->x, nc, plane);
  take_planes(&c, buf->r, nc, plane);
  take_planes(&c, buf->p[0], nc, plane);
  take_planes(&c, buf->p[1], nc, plane);
  /* ap holds the DCT's transposed image: channels planes in a row */
  take_planes(&c, buf->ap, nc, plane);
  if (plan->dct_preconditioner)
    take_planes(&c, buf->z, nc, plane);
  if (plan->variance) {
    take_planes(&c, buf->xa, nc, plane);
    take_planes(&c, buf->xb, nc, plane);
  }
  buf->alpha = (float*)take(&c, plane);
  buf->wa = (float*)take(&c, plane);
  buf->wx = (float*)take(&c, plane);
  buf->wy = (float*)take(&c, plane);
  buf->inv_diag = (float*)take(&c, plane);
  buf->partials = (double*)take(&c, (size_t)LULL_PK_MAX_SUMS * LULL_PK_MAX_GRID * sizeof(double));
  buf->state = (lull_pk_state*)take(&c, sizeof(lull_pk_state));
  const size_t work_x = dct_work_bytes(&plan->x_shape, plan->width);
  const size_t work_y = dct_work_bytes(&plan->y_shape, plan->height);
  buf->dct_work = (float2*)take(&c, work_x > work_y ? work_x : work_y);
  return c.offset;
}

/* The DCT tables of both axes (after the buffers). */
static size_t tables(lull_pk_plan* plan, unsigned char* base, size_t offset)
{
  cursor c = {base, offset};
  lull_dct_axis* axes[2] = {&plan->ax, &plan->ay};
  for (int k = 0; k < 2; ++k) {
    const size_t len = (size_t)axes[k]->n;
    axes[k]->twiddle = (float2*)take(&c, len * sizeof(float2));
    axes[k]->quarter = (float2*)take(&c, len * sizeof(float2));
    axes[k]->eigen = (float*)take(&c, len * sizeof(float));
  }
  return c.offset;
}

lull_status lull_pk_plan_make(int width, int height, int channels, int variance,
                              int dct_preconditioner, int num_sms, size_t max_smem,
                              lull_pk_plan* plan, lull_error* err)
{
  memset(plan, 0, sizeof *plan);
  if (width < 1 || height < 1 || channels < 1 || channels > 3)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid image size");
  if (width > DCT_MAX_LENGTH || height > DCT_MAX_LENGTH)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "DCT length %d out of range",
                     width > height ? width : height);
  plan->width = width;
  plan->height = height;
  plan->channels = channels;
  plan->variance = variance;
  plan->dct_preconditioner = dct_preconditioner;
  const size_t n = (size_t)width * (size_t)height;
  const size_t blocks = (n + LULL_PK_THREADS - 1) / LULL_PK_THREADS;
  const size_t most =
      LULL_MIN((size_t)LULL_PK_MAX_GRID, (size_t)LULL_PK_BLOCKS_PER_SM * (size_t)LULL_MAX(num_sms, 1));
  plan->grid = (int)LULL_MIN(blocks, most);
  axis_plan(width, &plan->ax);
  axis_plan(height, &plan->ay);
  plan->x_shape = lull_pk_dct_shape(width, channels * height, num_sms, max_smem, 0);
  plan->y_shape = lull_pk_dct_shape(height, channels * width, num_sms, max_smem, 0);
  /* 32 planes at most, of at most 2^52 pixels: no overflow in 64 bits,
   * but a 32-bit size_t needs the check */
  const size_t per_plane = align_up(n * sizeof(float));
  if (n > ((size_t)-1) / 64 / sizeof(float) || per_plane > ((size_t)-1) / 64)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "image too large");
  lull_pk_buffers buf;
  plan->scratch_bytes = tables(plan, NULL, layout(plan, NULL, &buf));
  return LULL_OK;
}

void lull_pk_layout(lull_pk_plan* plan, unsigned char* scratch, lull_pk_buffers* buf)
{
  tables(plan, scratch, layout(plan, scratch, buf));
}

lull_pk_args lull_pk_args_make(const lull_pk_plan* plan, const lull_pk_buffers* buf, float alpha)
{
  lull_pk_args a;
  memset(&a, 0, sizeof a);
  a.width = plan->width;
  a.height = plan->height;
  a.channels = plan->channels;
  a.alpha2 = alpha * alpha;
  a.buf = *buf;
  for (int c = 0; c < 3; ++c) {
    a.primal[c] = buf->b[c];
    a.gx[c] = buf->gx[c];
    a.gy[c] = buf->gy[c];
    a.x[c] = buf->x[c];
  }
  a.ax = plan->ax;
  a.ay = plan->ay;
  a.dct_c = 1.0f;
  return a;
}

/* -- launches ------------------------------------------------------------------ */

lull_status lull_pk_launch_kind(const lull_pk_plan* plan, const lull_pk_launchers* launchers,
                                int kind, const lull_pk_args* args, lull_error* err)
{
  lull_pk_launch l;
  l.kind = kind;
  l.args = *args;
  /* a reduction's sums, then its last-block flag (lull_pk_reduce_body) */
  l.smem = (size_t)lull_pk_sums(args, kind) * LULL_PK_THREADS * sizeof(double) + 16;
  l.grid = plan->grid;
  l.groups = 0; /* below: one per block unless a kind hands out more */
  if (lull_pk_is_dct(kind)) {
    l.args.shape = kind == LULL_PK_DCT_Y_SOLVE ? plan->y_shape : plan->x_shape;
    l.grid = l.args.shape.grid;
    l.smem = l.args.shape.smem;
    l.groups = l.args.shape.groups;
  } else if (kind == LULL_PK_GD_POST) {
    /* a tile per work item (gradient_domain_kernels.cuh) */
    l.smem = lull_gdk_post_smem(args);
    l.groups = lull_gdk_post_tiles(plan->width, plan->height);
    l.grid = LULL_MIN(l.groups, plan->grid);
  } else if (kind == LULL_PK_CLEAR) {
    l.grid = 1;
  } else if (kind == LULL_PK_DCT_TABLES) {
    const int total = plan->width + plan->height;
    l.grid = LULL_MIN((total + LULL_PK_THREADS - 1) / LULL_PK_THREADS, LULL_PK_MAX_GRID);
  }
  if (l.groups == 0)
    l.groups = l.grid;
  l.phases = lull_pk_phases(&l.args, kind);
  const cudaError_t code = launchers->launch(launchers->ctx, &l);
  if (code != cudaSuccess)
    return lull_cuda_fail(err, code, "cannot run the Poisson filter");
  return LULL_OK;
}

lull_status lull_pk_report(const lull_pk_launchers* launchers, const lull_progress_span* span,
                           double done, lull_error* err)
{
  if (!span || !span->progress || !span->progress->report)
    return LULL_OK;
  if (launchers->sync) {
    const cudaError_t code = launchers->sync(launchers->ctx);
    if (code != cudaSuccess)
      return lull_cuda_fail(err, code, "CUDA error in the Poisson filter");
  }
  return lull_progress_span_report(span, done, err);
}

/* The constant-weight solve (poisson_dct.c): src planes (NULL: the
 * right-hand side of the unweighted system) into dst. */
static lull_status dct_solve(const lull_pk_plan* plan, const lull_pk_launchers* launchers,
                             const lull_pk_args* args, float* const src[3], float* const dst[3],
                             int preconditioner, int gate, lull_error* err)
{
  lull_pk_args a = *args;
  a.dct_rhs = src == NULL;
  for (int c = 0; c < 3; ++c) {
    a.dct_src[c] = src ? src[c] : NULL;
    a.dct_dst[c] = dst[c];
  }
  a.dct_preconditioner = preconditioner;
  a.dct_gate = gate;
  a.dct_a = a.alpha2;
  a.dct_c = 1.0f;
  lull_status status = lull_pk_launch_kind(plan, launchers, LULL_PK_DCT_X_FORWARD, &a, err);
  if (status == LULL_OK)
    status = lull_pk_launch_kind(plan, launchers, LULL_PK_DCT_Y_SOLVE, &a, err);
  if (status == LULL_OK)
    status = lull_pk_launch_kind(plan, launchers, LULL_PK_DCT_X_INVERSE, &a, err);
  return status;
}

/* Preconditioned CG from x, deflated by the constant (poisson_cg.c,
 * cg_solve). */
static lull_status cg_solve(const lull_pk_plan* plan, const lull_poisson_params* params,
                            const lull_pk_args* args, const lull_pk_launchers* launchers,
                            const lull_progress_span* progress, lull_error* err)
{
  lull_pk_args a = *args;
  const int dct = a.precond == LULL_POISSON_PRECOND_DCT;
  a.tolerance = params->cg_tolerance;
  a.deflate = lull_cg_deflates(a.alpha2, a.width, a.height);
  a.initial = 1;
  const int update = a.deflate ? LULL_PK_CG_UPDATE_DEFLATED : LULL_PK_CG_UPDATE;
  lull_status status = lull_pk_launch_kind(plan, launchers, LULL_PK_CG_INIT, &a, err);
  if (status == LULL_OK && a.deflate)
    status = lull_pk_launch_kind(plan, launchers, LULL_PK_CG_START, &a, err);
  if (status == LULL_OK && dct) {
    status = dct_solve(plan, launchers, &a, a.buf.r, a.buf.z, 1, 0, err);
    if (status == LULL_OK)
      status = lull_pk_launch_kind(plan, launchers, LULL_PK_PRECOND_SUMS, &a, err);
  }
  a.initial = 0;
  a.reduce = !dct;
  for (int it = 0; it < params->cg_iterations && status == LULL_OK; ++it) {
    if (it % 8 == 0) {
      status = lull_pk_report(launchers, progress, (double)it / params->cg_iterations, err);
      if (status != LULL_OK)
        break;
    }
    a.cur = it & 1;
    if (a.stencil)
      status = lull_pk_launch_kind(plan, launchers, LULL_PK_CG_DIRECTION, &a, err);
    if (status == LULL_OK)
      status = lull_pk_launch_kind(plan, launchers, LULL_PK_CG_APPLY, &a, err);
    if (status == LULL_OK)
      status = lull_pk_launch_kind(plan, launchers, update, &a, err);
    if (status == LULL_OK && dct) {
      status = dct_solve(plan, launchers, &a, a.buf.r, a.buf.z, 1, 1, err);
      if (status == LULL_OK)
        status = lull_pk_launch_kind(plan, launchers, LULL_PK_PRECOND_SUMS, &a, err);
    }
  }
  return status;
}

/* The preconditioner of a solve: the DCT has no constant-weight model of a
 * patch term, so a solve with the stencil takes Jacobi (as poisson_cg.c). */
static int preconditioner_of(const lull_poisson_params* params, const lull_pk_args* args)
{
  const int p = params->preconditioner;
  return p == LULL_POISSON_PRECOND_DCT && args->stencil ? LULL_POISSON_PRECOND_JACOBI : p;
}

lull_status lull_pk_cg(const lull_pk_plan* plan, const lull_poisson_params* params,
                       const lull_pk_args* args, const lull_pk_launchers* launchers,
                       const lull_progress_span* progress, lull_error* err)
{
  lull_pk_args a = *args;
  a.precond = preconditioner_of(params, &a);
  if (a.precond == LULL_POISSON_PRECOND_DCT && !plan->dct_preconditioner)
    a.precond = LULL_POISSON_PRECOND_JACOBI; /* as lull_poisson_cg without a DCT */
  lull_status status = cg_solve(plan, params, &a, launchers, progress, err);
  if (status == LULL_OK)
    status = lull_pk_report(launchers, progress, 1.0, err);
  return status;
}

lull_status lull_pk_prepare(const lull_pk_plan* plan, const lull_pk_buffers* buf,
                            const lull_pk_launchers* launchers, lull_error* err)
{
  const lull_pk_args a = lull_pk_args_make(plan, buf, 0.0f);
  lull_status status = lull_pk_launch_kind(plan, launchers, LULL_PK_CLEAR, &a, err);
  if (status == LULL_OK)
    status = lull_pk_launch_kind(plan, launchers, LULL_PK_DCT_TABLES, &a, err);
  return status;
}

lull_status lull_pk_solve(const lull_pk_plan* plan, const lull_poisson_params* params,
                          const lull_pk_args* args, const lull_pk_launchers* launchers,
                          const lull_progress_span* progress, lull_error* err)
{
  lull_pk_args a = *args;
  const int use_dct = params->solver == LULL_POISSON_SOLVER_DCT && !args->stencil;
  const int solves = params->norm == LULL_POISSON_NORM_L1 ? LULL_MAX(params->irls_iterations, 1) : 1;
  a.precond = preconditioner_of(params, &a);
  if (a.precond == LULL_POISSON_PRECOND_DCT && !plan->dct_preconditioner)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "the plan has no DCT preconditioner planes");
  a.power = params->irls_weight_power;
  const double w = a.width, h = a.height;
  a.rows = (a.alpha2 > 0.0f ? w * h : 0.0) + (w - 1.0) * h + w * (h - 1.0);
  lull_status status = LULL_OK;
  /* the DCT solve reads no weights, and the first reweighting rewrites
   * them all: the unweighted ones are needed when CG starts */
  if (!use_dct) {
    status = lull_pk_launch_kind(plan, launchers, LULL_PK_WEIGHTS_RESET, &a, err);
    if (status == LULL_OK && a.precond == LULL_POISSON_PRECOND_DCT)
      status = lull_pk_launch_kind(plan, launchers, LULL_PK_MEAN_WEIGHTS, &a, err);
  }
  float eps = params->irls_reg_init;
  for (int k = 0; k < solves && status == LULL_OK; ++k) {
    const lull_progress_span sub = lull_progress_subspan(progress, (double)k / solves,
                                                         (double)(k + 1) / solves);
    if (k > 0) {
      /* §5.2 SOLVEL1: the k-th reweighting uses regInit regIter^(k-1) */
      a.eps = eps;
      status = lull_pk_launch_kind(plan, launchers, LULL_PK_REWEIGHT, &a, err);
      if (status == LULL_OK)
        status = lull_pk_launch_kind(plan, launchers, LULL_PK_SCALE_WEIGHTS, &a, err);
      if (status == LULL_OK && a.precond == LULL_POISSON_PRECOND_DCT)
        status = lull_pk_launch_kind(plan, launchers, LULL_PK_MEAN_WEIGHTS, &a, err);
      eps *= params->irls_reg_factor;
    }
    if (status != LULL_OK)
      break;
    if (k == 0 && use_dct) {
      status = lull_pk_launch_kind(plan, launchers, LULL_PK_PRIMAL_MEAN, &a, err);
      if (status == LULL_OK)
        status = dct_solve(plan, launchers, &a, NULL, a.x, 0, 0, err);
    } else {
      status = cg_solve(plan, params, &a, launchers, &sub, err);
    }
  }
  /* alpha = 0 after CG: the constant the DCT solve takes (poisson_cg.c,
   * lull_poisson_solve) */
  if (status == LULL_OK && !(a.alpha2 > 0.0f) && (!use_dct || solves > 1)) {
    status = lull_pk_launch_kind(plan, launchers, LULL_PK_MEAN_OFFSET, &a, err);
    if (status == LULL_OK)
      status = lull_pk_launch_kind(plan, launchers, LULL_PK_SHIFT, &a, err);
  }
  if (status == LULL_OK)
    status = lull_pk_report(launchers, progress, 1.0, err);
  return status;
}

void lull_pk_set_inputs(lull_pk_args* a, const lull_poisson_input* in, int which)
{
  if (which == LULL_POISSON_INPUT_FULL) {
    a->color = *in->color;
    a->gradient_x = *in->gradient_x;
    a->gradient_y = *in->gradient_y;
    a->load_alpha = 1;
  } else {
    const int half_a = which == LULL_POISSON_INPUT_A;
    a->color = half_a ? *in->color_a : *in->color_b;
    a->gradient_x = half_a ? *in->gradient_x_a : *in->gradient_x_b;
    a->gradient_y = half_a ? *in->gradient_y_a : *in->gradient_y_b;
  }
  a->half_color[0] = *in->color_a;
  a->half_color[1] = *in->color_b;
  a->half_gx[0] = *in->gradient_x_a;
  a->half_gx[1] = *in->gradient_x_b;
  a->half_gy[0] = *in->gradient_y_a;
  a->half_gy[1] = *in->gradient_y_b;
}

/* One set of inputs (full, A or B): load, repair, solve, and replace
 * non-finite results by the primal (poisson_cpu.c, solve_set). */
static lull_status solve_set(lull_pk_plan* plan, const lull_poisson_params* params,
                             const lull_poisson_images* im, const lull_pk_buffers* buf, int which,
                             float* const x[3], const lull_pk_launchers* launchers,
                             const lull_progress_span* span, lull_error* err)
{
  lull_pk_args a = lull_pk_args_make(plan, buf, params->alpha);
  const lull_poisson_input in = lull_poisson_input_of(im);
  lull_pk_set_inputs(&a, &in, which);
  for (int c = 0; c < 3; ++c) {
    a.repaired[c] = buf->b[c];
    a.x[c] = x[c];
  }
  lull_status status = lull_pk_launch_kind(plan, launchers, LULL_PK_LOAD, &a, err);
  if (status == LULL_OK)
    status = lull_pk_launch_kind(plan, launchers, LULL_PK_REPAIR, &a, err);
  if (status == LULL_OK)
    status = lull_pk_solve(plan, params, &a, launchers, span, err);
  if (status == LULL_OK)
    status = lull_pk_launch_kind(plan, launchers, LULL_PK_FINITE_OR, &a, err);
  return status;
}

lull_status lull_pk_filter_enqueue(lull_pk_plan* plan, const lull_poisson_params* params,
                                   const lull_poisson_images* images, unsigned char* scratch,
                                   const lull_pk_launchers* launchers,
                                   const lull_progress* progress, lull_error* err)
{
  lull_pk_buffers buf;
  lull_pk_layout(plan, scratch, &buf);
  const lull_progress_span whole = {progress, 0.0, 1.0};
  const double parts = plan->variance ? 3.0 : 1.0;
  lull_status status = lull_pk_prepare(plan, &buf, launchers, err);
  if (status == LULL_OK)
    status = lull_pk_report(launchers, &whole, 0.0, err);
  const int sets[3] = {LULL_POISSON_INPUT_FULL, LULL_POISSON_INPUT_A, LULL_POISSON_INPUT_B};
  float* const* targets[3] = {buf.x, buf.xa, buf.xb};
  for (int s = 0; s < (plan->variance ? 3 : 1) && status == LULL_OK; ++s) {
    const lull_progress_span span = lull_progress_subspan(&whole, s / parts, (s + 1) / parts);
    status = solve_set(plan, params, images, &buf, sets[s], targets[s], launchers, &span, err);
  }
  if (status == LULL_OK) {
    lull_pk_args a = lull_pk_args_make(plan, &buf, params->alpha);
    a.output = images->output;
    a.output_variance = images->output_variance;
    a.alpha = buf.alpha;
    status = lull_pk_launch_kind(plan, launchers, LULL_PK_STORE, &a, err);
  }
  return status;
}
