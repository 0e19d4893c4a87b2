/* The Regression filter's CUDA run: core/regression_cpu.c's steps as
 * launches of the kernels of regression_kernels.cuh through launchers
 * (regression_cuda.h), over working planes in one block of memory.
 * Host code only: the stream launchers (regression_cuda.cu) run it on the
 * GPU, the emulation test's on the CPU.  Nothing here waits for the GPU
 * except the progress reports. */
#include <math.h>
#include <string.h>

#include "atrous_cuda.h"
#include "backend_cuda.h"
#include "regression_cuda.h"

extern "C" {
#include "../core/poisson_solver.h" /* progress spans */
}

static int has(const lull_image* image)
{
  return image->data != NULL;
}

/* the features of each half (regression.h: the halves' own, or the
 * images given once, as on the CPU) */
typedef lull_regression_features feature_set;

static int feature_channels(const feature_set* s)
{
  return lull_regression_feature_channels(s);
}

/* Working planes of a region (regression_cpu.c has the same steps; the
 * layout is this backend's). */
enum
{
  P_A = 0,      /* colour A (or the buffer) */
  P_B = 3,      /* colour B */
  P_GA = 6,     /* log guide of A; one buffer: of the pilot */
  P_GB = 9,     /* log guide of B; one buffer: its variance */
  P_GV = 12,    /* variance of the log guides; one buffer: of the colour */
  P_OUT = 15,   /* the result */
  P_ALPHA = 18, /* the 4th colour channel */
  P_TMP = 19,   /* 12 planes of scratch */
  P_FA = 31,    /* features of A (or the only ones), up to 9 */
  P_YIN = 40,   /* one buffer: the pilot's input, 3 planes' floats interleaved */
  P_PILOT = 43, /* one buffer: the pilot, interleaved */
  ONE_COUNT = 46,
  P_FB = 40,    /* halves: features of B */
  P_CAND = 49,  /* A at bandwidths 0, 1; B at 0, 1: 12 planes */
  P_MEAN = 61,  /* the mean of the halves' chosen results */
  P_MVAR = 64,  /* its two-buffer variance */
  P_E = 67,     /* error estimates (6), smoothed (6) */
  P_ES = 73,
  P_CHOICE = 79,
  TWO_COUNT = 82,
};

enum { ALIGN = 256 };

static size_t align_up(size_t bytes)
{
  return (bytes + ALIGN - 1) / ALIGN * ALIGN;
}

/* The à-trous pilot's images on the region (colour and output set by the
 * caller). */
static lull_atrous_images pilot_images(const lull_regression_images* im)
{
  lull_atrous_images ai;
  memset(&ai, 0, sizeof ai);
  ai.albedo = im->albedo;
  ai.normal = im->normal;
  ai.depth = im->depth;
  ai.position = im->position;
  return ai;
}

static lull_atrous_params pilot_params(void)
{
  lull_atrous_params ap = lull_atrous_default_params();
  ap.input_scale = 1.0f; /* the colour is scaled already */
  return ap;
}

static lull_image float3_view(float* data, int w, int h)
{
  lull_image v;
  memset(&v, 0, sizeof v);
  v.data = (unsigned char*)data;
  v.format = LULL_FORMAT_FLOAT3;
  v.width = w;
  v.height = h;
  v.pixel_stride = 3 * sizeof(float);
  v.row_stride = 3 * sizeof(float) * (size_t)w;
  return v;
}

static void plan_make(const lull_regression_params* params, const lull_regression_images* im,
                      int width, int height, lull_rk_plan* plan)
{
  (void)params;
  memset(plan, 0, sizeof *plan);
  plan->width = width;
  plan->height = height;
  plan->halves = lull_regression_has_halves(im);
  const feature_set fa = lull_regression_half_features(im, 0);
  plan->feature_halves = lull_regression_feature_halves(im);
  plan->nf = feature_channels(&fa);
  plan->shared = 0;
  for (int k = 0; k < plan->nf; ++k)
    plan->shared |= (unsigned)lull_regression_feature_shared(im, k) << k;
  plan->n = 3 + plan->nf;
  const size_t pixels = (size_t)width * (size_t)height;
  plan->plane_stride = (pixels + 63) / 64 * 64;
  const size_t planes = (size_t)(plan->halves ? TWO_COUNT : ONE_COUNT) +
                        (size_t)(plan->halves ? 2 : 1) * (size_t)(3 * plan->n + 6);
  if (!plan->halves) {
    /* the pilot's scratch, as lull_cuda_atrous plans it (baseline) */
    lull_atrous_params ap = pilot_params();
    lull_atrous_images ai = pilot_images(im);
    static float placeholder; /* planning reads no pixel */
    ai.color = float3_view(&placeholder, width, height);
    ai.output = ai.color;
    lull_atrous_plan ap_plan;
    lull_error ignored;
    if (lull_atrous_plan_make(&ap, &ai, LULL_ATROUS_SCHEDULE_BASELINE, &ap_plan, &ignored) == LULL_OK)
      plan->pilot_bytes = align_up(ap_plan.scratch_bytes);
  }
  plan->bytes = plan->pilot_bytes + planes * plan->plane_stride * sizeof(float);
}

size_t lull_rk_memory(const lull_regression_params* params, const lull_regression_images* images,
                      int width, int height)
{
  lull_rk_plan plan;
  plan_make(params, images, width, height, &plan);
  return plan.bytes;
}

/* -- one region ------------------------------------------------------------------- */

typedef struct rk_run
{
  const lull_regression_params* params;
  const lull_rk_launchers* l;
  lull_rk_plan plan;
  unsigned char* block; /* the region's memory */
  float* fits;
  const lull_rk_consts* consts;
  float* P[TWO_COUNT];
} rk_run;

static lull_status check(cudaError_t code, lull_error* err)
{
  return code == cudaSuccess ? LULL_OK : lull_cuda_fail(err, code, "cannot run the Regression filter");
}

static lull_rk_pixel_args pixel_args(const rk_run* r, int kind)
{
  lull_rk_pixel_args a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  a.width = r->plan.width;
  a.height = r->plan.height;
  a.consts = r->consts;
  return a;
}

static lull_status pixels(const rk_run* r, const lull_rk_pixel_args* a, lull_error* err)
{
  const lull_status status = check(r->l->pixels(r->l->ctx, a), err);
  return status;
}

/* Planes [first, first + count) into an operand. */
static void planes_into(const rk_run* r, const float** op, int first, int count)
{
  for (int c = 0; c < count; ++c)
    op[c] = r->P[first + c];
}

static void planes_out(const rk_run* r, float** op, int first, int count)
{
  for (int c = 0; c < count; ++c)
    op[c] = r->P[first + c];
}

static lull_status copy_planes(const rk_run* r, int dst, int src, int count, lull_error* err)
{
  lull_rk_pixel_args a = pixel_args(r, LULL_RK_COPY);
  a.channels = count;
  planes_into(r, a.src, src, count);
  planes_out(r, a.dst, dst, count);
  return pixels(r, &a, err);
}

static lull_status box_mean(const rk_run* r, int dst, int src, int count, int radius,
                            lull_error* err)
{
  lull_rk_pixel_args a = pixel_args(r, LULL_RK_BOX_MEAN);
  a.channels = count;
  a.radius = radius;
  planes_into(r, a.src, src, count);
  planes_out(r, a.dst, dst, count);
  return pixels(r, &a, err);
}

/* Non-finite values of `count` planes from src replaced into dst. */
static lull_status repair(const rk_run* r, int dst, int src, int count, lull_error* err)
{
  lull_rk_pixel_args a = pixel_args(r, LULL_RK_REPAIR);
  a.channels = count;
  planes_into(r, a.src, src, count);
  planes_out(r, a.dst, dst, count);
  return pixels(r, &a, err);
}

/* The colour of an image into 3 planes from `into` (and its 4th channel
 * into P_ALPHA when alpha; averaged with what P_ALPHA holds when
 * mean_alpha), scaled, linearised, repaired. */
static lull_status load_color(const rk_run* r, const lull_image* image, int into, int alpha,
                              int mean_alpha, lull_error* err)
{
  lull_rk_pixel_args a = pixel_args(r, LULL_RK_LOAD_COLOR);
  a.image = *image;
  a.count = mean_alpha;
  a.flag = r->params->srgb;
  a.flag2 = r->params->nonnegative;
  planes_out(r, a.dst, P_TMP, 3);
  a.dst[3] = alpha ? r->P[P_ALPHA] : NULL;
  lull_status status = pixels(r, &a, err);
  if (status == LULL_OK)
    status = repair(r, into, P_TMP, 3, err);
  return status;
}

static lull_status load_features(const rk_run* r, const feature_set* s, int into, lull_error* err)
{
  const int nf = feature_channels(s);
  if (nf == 0)
    return LULL_OK;
  lull_rk_pixel_args a = pixel_args(r, LULL_RK_LOAD_FEATURES);
  a.albedo = *s->albedo;
  a.normal = *s->normal;
  a.depth = *s->depth;
  a.position = *s->position; /* read where depth is absent */
  planes_out(r, a.dst, P_TMP, nf);
  lull_status status = pixels(r, &a, err);
  if (status == LULL_OK)
    status = repair(r, into, P_TMP, nf, err);
  return status;
}

/* Scales down the fireflies of planes x (regression_cpu.c,
 * clamp_fireflies) against ref (x itself: same). */
static lull_status clamp_fireflies(const rk_run* r, int x, int ref, int same, int wr, float z,
                                   int isolated, int iso_radius, lull_error* err)
{
  const int lx = P_TMP, lr = P_TMP + 1, level = P_TMP + 2, cand = P_TMP + 3;
  lull_rk_pixel_args a = pixel_args(r, LULL_RK_LUMINANCE);
  planes_into(r, a.src, x, 3);
  if (!same)
    planes_into(r, a.src2, ref, 3);
  a.dst[0] = r->P[lx];
  a.dst[1] = r->P[lr];
  lull_status status = pixels(r, &a, err);
  a = pixel_args(r, LULL_RK_FIREFLY_LEVEL);
  a.src[0] = r->P[lx];
  a.src[1] = same ? NULL : r->P[lr];
  a.dst[0] = r->P[level];
  a.dst[1] = r->P[cand];
  a.radius = wr;
  a.flag = same;
  a.f = LULL_REG_FIREFLY_TAU;
  a.f2 = z;
  if (status == LULL_OK)
    status = pixels(r, &a, err);
  a = pixel_args(r, LULL_RK_FIREFLY_SCALE);
  a.src[0] = r->P[lx];
  a.src[1] = r->P[level];
  a.src[2] = r->P[cand];
  planes_out(r, a.dst, x, 3);
  a.count = isolated;
  a.radius = iso_radius;
  if (status == LULL_OK)
    status = pixels(r, &a, err);
  return status;
}

static lull_rk_tile_args tile_args(const rk_run* r, int kind)
{
  lull_rk_tile_args a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  a.width = r->plan.width;
  a.height = r->plan.height;
  a.radius = r->params->radius;
  a.patch = r->params->patch_radius;
  a.nb = 1;
  a.gc = 3;
  a.ridge = r->params->ridge;
  a.fits = r->fits;
  a.plane_stride = r->plan.plane_stride;
  return a;
}

/* A regression pass (regression_cpu.c, run_pass): the fits, then the
 * gather into out[b][c] = planes out + 3 b + c. */
static lull_status regress(const rk_run* r, lull_rk_tile_args* a, int y, int g, int gv,
                           int features, int out, lull_error* err)
{
  a->n = r->plan.n;
  a->nf = r->plan.nf;
  a->inv_r = 1.0f / (float)LULL_MAX(a->radius, 1);
  for (int c = 0; c < 3; ++c) {
    a->y[c] = r->P[y + c];
    a->g[c] = r->P[g + c];
    a->gv[c] = r->P[gv + c];
  }
  for (int k = 0; k < a->nf; ++k)
    a->f[k] = r->P[features + k];
  for (int b = 0; b < a->nb; ++b)
    for (int c = 0; c < 3; ++c)
      a->out[b][c] = r->P[out + 3 * b + c];
  a->kind = LULL_RK_FIT;
  lull_status status = check(r->l->tiles(r->l->ctx, a), err);
  a->kind = LULL_RK_GATHER;
  if (status == LULL_OK)
    status = check(r->l->tiles(r->l->ctx, a), err);
  return status;
}

static void mark(const rk_run* r, const char* step)
{
  if (r->l->mark)
    r->l->mark(r->l->ctx, step);
}

/* A progress report (the GPU's work so far done first). */
static lull_status report(const rk_run* r, const lull_progress_span* span, double done,
                          lull_error* err)
{
  if (!span->progress || !span->progress->report)
    return LULL_OK;
  if (r->l->sync) {
    const cudaError_t code = r->l->sync(r->l->ctx);
    if (code != cudaSuccess)
      return lull_cuda_fail(err, code, "CUDA error in the Regression filter");
  }
  return lull_progress_span_report(span, done, err);
}

/* NL-means smoothing of the selection (§5.3): nc planes from `in` into
 * `out`, with the weights of the halves' mean's log guide. */
static lull_status select_smooth(const rk_run* r, int in, int out, int nc, lull_error* err)
{
  lull_rk_tile_args t = tile_args(r, LULL_RK_SMOOTH);
  t.radius = LULL_REG_SELECT_RADIUS;
  t.patch = LULL_REG_SELECT_PATCH;
  t.k[0] = LULL_REG_SELECT_K;
  t.sets = 1;
  t.nc = nc;
  for (int c = 0; c < 3; ++c) {
    t.set[0].g[c] = r->P[P_MEAN + c];
    t.set[0].gv[c] = r->P[P_MVAR + c];
  }
  for (int c = 0; c < nc; ++c) {
    t.set[0].in[c] = r->P[in + c];
    t.set[0].out[c] = r->P[out + c];
  }
  return check(r->l->tiles(r->l->ctx, &t), err);
}

/* The two-buffer run (regression.h, steps 1-5); result in P_OUT, its
 * variance in P_MVAR. */
static lull_status run_halves(const rk_run* r, const lull_progress_span* span, lull_error* err)
{
  const lull_regression_params* params = r->params;
  const int nf = r->plan.nf;
  lull_status status = LULL_OK;
  /* 1. fireflies, each half against the other as it was */
  if (params->fireflies) {
    status = clamp_fireflies(r, P_B, P_A, 0, LULL_REG_FIREFLY_RADIUS_HALVES,
                             LULL_REG_FIREFLY_Z_HALVES, 0, 0, err);
    if (status == LULL_OK)
      status = clamp_fireflies(r, P_A, P_B, 0, LULL_REG_FIREFLY_RADIUS_HALVES,
                               LULL_REG_FIREFLY_Z_HALVES, 0, 0, err);
  }
  /* the log guides and their variance */
  lull_rk_pixel_args a = pixel_args(r, LULL_RK_GUIDES);
  planes_into(r, a.src, P_A, 3);
  planes_into(r, a.src2, P_B, 3);
  planes_out(r, a.dst, P_GA, 3);
  planes_out(r, a.dst + 3, P_TMP, 3);
  planes_out(r, a.dst2, P_GB, 3);
  if (status == LULL_OK)
    status = pixels(r, &a, err);
  if (status == LULL_OK)
    status = box_mean(r, P_GV, P_TMP, 3, LULL_REG_GUIDE_VARIANCE_RADIUS, err);
  mark(r, "fireflies, guides");
  /* 2. feature cross-prefiltering (§5.1) */
  if (r->plan.feature_halves && status == LULL_OK) {
    a = pixel_args(r, LULL_RK_HALF_VARIANCE);
    a.channels = nf;
    planes_into(r, a.src, P_FA, nf);
    planes_into(r, a.src2, P_FB, nf);
    planes_out(r, a.dst, P_TMP, nf);
    status = pixels(r, &a, err);
    if (status == LULL_OK) /* P_E, P_ES: 12 contiguous planes */
      status = box_mean(r, P_E, P_TMP, nf, 1, err);
    lull_rk_tile_args t = tile_args(r, LULL_RK_SMOOTH);
    t.radius = LULL_REG_PREFILTER_RADIUS;
    t.patch = LULL_REG_PREFILTER_PATCH;
    t.k[0] = LULL_REG_PREFILTER_K;
    t.gc = 1;
    t.nc = 1;
    t.sets = 2;
    for (int k = 0; k < nf && status == LULL_OK; ++k) {
      if (r->plan.shared >> k & 1u)
        continue; /* a guide given once: nothing to cross-filter */
      /* A with B's guide, B with A's, both from the planes as they were */
      t.set[0].g[0] = r->P[P_FB + k];
      t.set[0].gv[0] = r->P[P_E + k];
      t.set[0].in[0] = r->P[P_FA + k];
      t.set[0].out[0] = r->P[P_CAND];
      t.set[1].g[0] = r->P[P_FA + k];
      t.set[1].gv[0] = r->P[P_E + k];
      t.set[1].in[0] = r->P[P_FB + k];
      t.set[1].out[0] = r->P[P_CAND + 1];
      status = check(r->l->tiles(r->l->ctx, &t), err);
      if (status == LULL_OK)
        status = copy_planes(r, P_FA + k, P_CAND, 1, err);
      if (status == LULL_OK)
        status = copy_planes(r, P_FB + k, P_CAND + 1, 1, err);
    }
    mark(r, "feature prefilter");
  }
  if (status == LULL_OK)
    status = report(r, span, 0.05, err);
  /* 3. each half regressed with the other's guide and features */
  for (int half = 0; half < 2 && status == LULL_OK; ++half) {
    lull_rk_tile_args t = tile_args(r, LULL_RK_FIT);
    t.nb = 2;
    t.k[0] = params->bandwidth[0];
    t.k[1] = params->bandwidth[1];
    status = regress(r, &t, half ? P_B : P_A, half ? P_GA : P_GB, P_GV, half ? P_FA : P_FB,
                     P_CAND + 6 * half, err);
    mark(r, half ? "pass B" : "pass A");
    if (status == LULL_OK)
      status = report(r, span, 0.35 + 0.3 * half, err);
  }
  if (status != LULL_OK)
    return status;
  /* 4. the bandwidth of the smaller two-buffer error (§5.3), the errors and
   * the choice smoothed with the weights of the mean's log guide */
  a = pixel_args(r, LULL_RK_SELECT_ERRORS);
  planes_into(r, a.src, P_CAND, 12);
  planes_into(r, a.src2, P_A, 3);
  planes_into(r, a.src2 + 3, P_B, 3);
  planes_into(r, a.src2 + 6, P_GV, 3);
  planes_out(r, a.dst, P_E, 6);
  planes_out(r, a.dst2, P_MEAN, 3);
  planes_out(r, a.dst2 + 3, P_MVAR, 3);
  status = pixels(r, &a, err);
  if (status == LULL_OK)
    status = select_smooth(r, P_E, P_ES, 6, err);
  a = pixel_args(r, LULL_RK_CHOICE);
  planes_into(r, a.src, P_ES, 6);
  planes_out(r, a.dst, P_CHOICE, 3);
  if (status == LULL_OK)
    status = pixels(r, &a, err);
  if (status == LULL_OK)
    status = select_smooth(r, P_CHOICE, P_ES, 3, err);
  a = pixel_args(r, LULL_RK_BLEND);
  planes_into(r, a.src, P_ES, 3);
  planes_into(r, a.src2, P_CAND, 12);
  planes_out(r, a.dst, P_MEAN, 3);
  planes_out(r, a.dst2, P_MVAR, 3);
  if (status == LULL_OK)
    status = pixels(r, &a, err);
  mark(r, "selection");
  if (status == LULL_OK)
    status = report(r, span, 0.7, err);
  if (status != LULL_OK)
    return status;
  /* 5. the second pass (§5.4): the mean, self-guided, over a wider window */
  if (params->second_radius <= 0)
    return copy_planes(r, P_OUT, P_MEAN, 3, err);
  if (r->plan.feature_halves && nf > 0) {
    a = pixel_args(r, LULL_RK_MEAN);
    a.channels = nf;
    planes_into(r, a.src, P_FA, nf);
    planes_into(r, a.src2, P_FB, nf);
    planes_out(r, a.dst, P_FA, nf);
    status = pixels(r, &a, err);
  }
  lull_rk_tile_args t = tile_args(r, LULL_RK_FIT);
  t.radius = params->second_radius;
  t.k[0] = params->second_bandwidth;
  if (status == LULL_OK)
    status = regress(r, &t, P_MEAN, P_MEAN, P_MVAR, P_FA, P_OUT, err);
  mark(r, "second pass");
  if (status == LULL_OK)
    status = report(r, span, 1.0, err);
  return status;
}

/* The one-buffer run; result in P_OUT. */
static lull_status run_one(const rk_run* r, const lull_regression_images* im,
                           const lull_progress_span* span, lull_error* err)
{
  const lull_regression_params* params = r->params;
  const int W = r->plan.width, H = r->plan.height;
  lull_status status = LULL_OK;
  if (params->fireflies)
    status = clamp_fireflies(r, P_A, P_A, 1, LULL_REG_FIREFLY_RADIUS_ONE, 0.0f,
                             LULL_REG_FIREFLY_ISOLATED_ONE, LULL_REG_FIREFLY_ISOLATION_RADIUS, err);
  /* the pilot: the à-trous filter on the colour with the same guides */
  lull_rk_pixel_args a = pixel_args(r, LULL_RK_INTERLEAVE);
  planes_into(r, a.src, P_A, 3);
  a.interleaved = r->P[P_YIN];
  if (status == LULL_OK)
    status = pixels(r, &a, err);
  mark(r, "fireflies");
  if (status == LULL_OK) {
    const lull_atrous_params ap = pilot_params();
    lull_atrous_images ai = pilot_images(im);
    ai.color = float3_view(r->P[P_YIN], W, H);
    ai.output = float3_view(r->P[P_PILOT], W, H);
    status = r->l->pilot(r->l->ctx, &ap, &ai, r->block, r->plan.pilot_bytes, err);
  }
  mark(r, "pilot");
  if (status == LULL_OK)
    status = report(r, span, 0.05, err);
  /* the noise variance: the residual against the pilot over 5x5, or the
   * given variance; the guide: log of the pilot */
  a = pixel_args(r, LULL_RK_ONE_PREPARE);
  planes_into(r, a.src, P_A, 3);
  a.interleaved = r->P[P_PILOT];
  planes_out(r, a.dst, P_TMP, 3);
  planes_out(r, a.dst2, P_GA, 3);
  if (status == LULL_OK)
    status = pixels(r, &a, err);
  if (status == LULL_OK)
    status = box_mean(r, P_GV, P_TMP, 3, LULL_REG_ONE_VARIANCE_RADIUS, err);
  if (status == LULL_OK && has(&im->variance)) {
    a = pixel_args(r, LULL_RK_LOAD_VARIANCE);
    a.image = im->variance;
    planes_out(r, a.dst, P_GV, 3);
    status = pixels(r, &a, err);
  }
  a = pixel_args(r, LULL_RK_ONE_GUIDE_VARIANCE);
  planes_into(r, a.src, P_GV, 3);
  a.interleaved = r->P[P_PILOT];
  planes_out(r, a.dst, P_GB, 3);
  if (status == LULL_OK)
    status = pixels(r, &a, err);
  lull_rk_tile_args t = tile_args(r, LULL_RK_FIT);
  t.k[0] = params->bandwidth[0];
  if (status == LULL_OK)
    status = regress(r, &t, P_A, P_GA, P_GB, P_FA, P_OUT, err);
  mark(r, "pass");
  if (status == LULL_OK)
    status = report(r, span, 1.0, err);
  return status;
}

/* One region (the whole image, or a tile and its margin): loads, runs and
 * stores the interior [ix0, ix1) x [iy0, iy1) (region coordinates) at
 * (ox, oy) of output and output_variance. */
static lull_status run_region(const lull_regression_params* params,
                              const lull_regression_images* im, const lull_rk_consts* consts,
                              unsigned char* block, const lull_rk_launchers* l, int ix0, int iy0,
                              int ix1, int iy1, int ox, int oy, const lull_image* output,
                              const lull_image* output_variance, const lull_progress_span* span,
                              lull_error* err)
{
  rk_run r;
  memset(&r, 0, sizeof r);
  r.params = params;
  r.l = l;
  r.consts = consts;
  r.block = block;
  plan_make(params, im, im->output.width, im->output.height, &r.plan);
  if (!lull_rk_columns_supported(r.plan.n))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "unsupported feature set");
  float* planes = (float*)(block + r.plan.pilot_bytes);
  const int count = r.plan.halves ? TWO_COUNT : ONE_COUNT;
  for (int k = 0; k < count; ++k)
    r.P[k] = planes + (size_t)k * r.plan.plane_stride;
  r.fits = planes + (size_t)count * r.plan.plane_stride;
  const int halves = r.plan.halves;
  const lull_image* color = halves ? &im->color_a : &im->color;
  const int color_channels = lull_format_channels(color->format);
  lull_status status = load_color(&r, color, P_A, color_channels == 4, 0, err);
  if (status == LULL_OK && halves) /* the 4th channel: the mean of the halves' */
    status = load_color(&r, &im->color_b, P_B, color_channels == 4, 1, err);
  const feature_set fa = lull_regression_half_features(im, 0);
  const feature_set fb = lull_regression_half_features(im, 1);
  if (status == LULL_OK)
    status = load_features(&r, &fa, P_FA, err);
  if (r.plan.feature_halves) {
    if (status == LULL_OK)
      status = load_features(&r, &fb, P_FB, err);
  } else if (halves) {
    for (int k = 0; k < r.plan.nf; ++k)
      r.P[P_FB + k] = r.P[P_FA + k];
  }
  mark(&r, "load");
  if (status == LULL_OK)
    status = halves ? run_halves(&r, span, err) : run_one(&r, im, span, err);
  if (status != LULL_OK)
    return status;
  lull_rk_pixel_args a = pixel_args(&r, LULL_RK_STORE);
  planes_into(&r, a.src, P_OUT, 3);
  a.src[3] = color_channels == 4 ? r.P[P_ALPHA] : NULL;
  if (halves)
    planes_into(&r, a.src2, P_MVAR, 3);
  a.image = *output;
  if (halves && has(output_variance))
    a.image2 = *output_variance;
  a.flag = params->hdr;
  a.flag2 = params->srgb;
  a.x0 = ix0;
  a.y0 = iy0;
  a.x1 = ix1;
  a.y1 = iy1;
  a.ox = ox;
  a.oy = oy;
  status = pixels(&r, &a, err);
  mark(&r, "store");
  return status;
}

/* -- the whole filter --------------------------------------------------------------- */

/* The tile grid for a cap (regression_cpu.c picks its tiles the same
 * way, from its own memory): the largest square interior whose region
 * fits the cap, at least four margins. */
typedef struct rk_grid
{
  int tile, margin, tiles_x, tiles_y, rw, rh;
  size_t consts_bytes, staged_bytes, region_bytes;
} rk_grid;

static void grid_make(const lull_regression_params* params, const lull_regression_images* im,
                      size_t cap, rk_grid* g)
{
  const int W = im->output.width, H = im->output.height;
  g->margin = lull_regression_reach(params, im);
  const int smallest = 4 * g->margin; /* as on the CPU: a region at most 2.25 interiors */
  g->tile = LULL_MAX(W, H);
  if (cap)
    while (g->tile > smallest &&
           lull_rk_memory(params, im, LULL_MIN(W, g->tile + 2 * g->margin),
                          LULL_MIN(H, g->tile + 2 * g->margin)) > cap)
      g->tile = LULL_MAX(smallest, g->tile * 3 / 4);
  g->tile = LULL_MAX(g->tile, 1);
  g->tiles_x = (W + g->tile - 1) / g->tile;
  g->tiles_y = (H + g->tile - 1) / g->tile;
  g->rw = LULL_MIN(W, g->tile + 2 * g->margin);
  g->rh = LULL_MIN(H, g->tile + 2 * g->margin);
  g->consts_bytes = align_up(sizeof(lull_rk_consts)) +
                    align_up(sizeof(lull_rk_partial) * LULL_RK_REDUCE_BLOCKS);
  g->staged_bytes = 0;
  if (g->tiles_x * g->tiles_y > 1) {
    const int oc = lull_format_channels(im->output.format);
    const int vc = has(&im->output_variance) ? lull_format_channels(im->output_variance.format) : 0;
    g->staged_bytes = align_up(sizeof(float) * (size_t)W * (size_t)H * (size_t)(oc + vc));
  }
  g->region_bytes = lull_rk_memory(params, im, g->rw, g->rh);
}

size_t lull_rk_filter_bytes(const lull_regression_params* given,
                            const lull_regression_images* images, size_t cap)
{
  const lull_regression_params params = lull_regression_resolve(given, images);
  rk_grid g;
  grid_make(&params, images, cap, &g);
  return g.consts_bytes + g.staged_bytes + g.region_bytes;
}

static lull_status reduce(const lull_rk_launchers* l, lull_rk_reduce_args* a, lull_error* err)
{
  a->finalize = 0;
  lull_status status = check(l->reduce(l->ctx, a), err);
  a->finalize = 1;
  if (status == LULL_OK)
    status = check(l->reduce(l->ctx, a), err);
  return status;
}

/* The constants of the whole image (so that tiles agree): the input
 * scale and the scales of the depth or position feature. */
static lull_status constants(const lull_regression_params* params,
                             const lull_regression_images* im, lull_rk_consts* consts,
                             lull_rk_partial* partials, const lull_rk_launchers* l,
                             lull_error* err)
{
  lull_rk_reduce_args a;
  memset(&a, 0, sizeof a);
  a.kind = LULL_RK_REDUCE_SCALE;
  a.image = lull_regression_has_halves(im) ? im->color_a : im->color;
  a.partials = partials;
  a.consts = consts;
  lull_atrous_params ap = lull_atrous_default_params();
  ap.input_scale = params->input_scale;
  ap.srgb = params->srgb;
  a.auto_scale = lull_atrous_scale_is_auto(&ap);
  a.fixed_scale = isnan(params->input_scale) ? 1.0f : params->input_scale;
  lull_status status = reduce(l, &a, err);
  const feature_set fa = lull_regression_half_features(im, 0);
  const feature_set* s = &fa;
  if (status == LULL_OK && has(s->depth)) {
    a.kind = LULL_RK_REDUCE_DEPTH;
    a.image = *s->depth;
    status = reduce(l, &a, err);
  } else if (status == LULL_OK && has(s->position)) {
    a.kind = LULL_RK_REDUCE_CENTROID;
    a.image = *s->position;
    status = reduce(l, &a, err);
    a.kind = LULL_RK_REDUCE_DISTANCE;
    if (status == LULL_OK)
      status = reduce(l, &a, err);
  }
  return status;
}

static lull_image staged_view(float* data, int w, int h, int channels)
{
  lull_image v;
  memset(&v, 0, sizeof v);
  v.data = (unsigned char*)data;
  v.format = (lull_format)channels; /* FLOAT..FLOAT4 are 1..4 */
  v.width = w;
  v.height = h;
  v.pixel_stride = sizeof(float) * (size_t)channels;
  v.row_stride = v.pixel_stride * (size_t)w;
  return v;
}

lull_status lull_rk_filter(const lull_regression_params* given,
                           const lull_regression_images* images, size_t cap,
                           unsigned char* memory, const lull_rk_launchers* l,
                           const lull_progress* progress, lull_error* err)
{
  const lull_regression_params resolved = lull_regression_resolve(given, images);
  const lull_regression_params* params = &resolved;
  const int W = images->output.width, H = images->output.height;
  rk_grid g;
  grid_make(params, images, cap, &g);
  lull_rk_consts* consts = (lull_rk_consts*)memory;
  lull_rk_partial* partials = (lull_rk_partial*)(memory + align_up(sizeof(lull_rk_consts)));
  unsigned char* staged = memory + g.consts_bytes;
  unsigned char* block = staged + g.staged_bytes;
  lull_status status = constants(params, images, consts, partials, l, err);
  if (l->mark)
    l->mark(l->ctx, "constants");
  /* the output may alias an input: with tiles, results wait in a copy */
  const int tiled = g.tiles_x * g.tiles_y > 1;
  lull_image out = images->output, var = images->output_variance;
  if (tiled) {
    const int oc = lull_format_channels(images->output.format);
    out = staged_view((float*)staged, W, H, oc);
    if (has(&images->output_variance))
      var = staged_view((float*)staged + (size_t)W * (size_t)H * (size_t)oc, W, H,
                        lull_format_channels(images->output_variance.format));
  }
  const lull_progress_span whole = {progress, 0.0, 1.0};
  const int tiles = g.tiles_x * g.tiles_y;
  for (int t = 0; t < tiles && status == LULL_OK; ++t) {
    const int tx0 = (t % g.tiles_x) * g.tile, ty0 = (t / g.tiles_x) * g.tile;
    const int tx1 = LULL_MIN(W, tx0 + g.tile), ty1 = LULL_MIN(H, ty0 + g.tile);
    const int x0 = LULL_MAX(0, tx0 - g.margin), y0 = LULL_MAX(0, ty0 - g.margin);
    const int x1 = LULL_MIN(W, tx1 + g.margin), y1 = LULL_MIN(H, ty1 + g.margin);
    const lull_regression_images region =
        lull_regression_crop(images, x0, y0, x1 - x0, y1 - y0);
    const lull_progress_span span =
        lull_progress_subspan(&whole, (double)t / tiles, (double)(t + 1) / tiles);
    status = run_region(params, &region, consts, block, l, tx0 - x0, ty0 - y0, tx1 - x0,
                        ty1 - y0, tx0, ty0, &out, &var, &span, err);
  }
  if (status == LULL_OK && tiled) {
    lull_rk_pixel_args a;
    memset(&a, 0, sizeof a);
    a.kind = LULL_RK_COPY_OUT;
    a.width = W;
    a.height = H;
    a.image = out;
    a.image2 = var;
    a.albedo = images->output;
    a.normal = images->output_variance;
    status = check(l->pixels(l->ctx, &a), err);
  }
  if (status != LULL_OK)
    return status;
  if (progress && progress->report && l->sync) {
    const cudaError_t code = l->sync(l->ctx);
    if (code != cudaSuccess)
      return lull_cuda_fail(err, code, "CUDA error in the Regression filter");
  }
  return lull_progress_report(progress, 1.0, err);
}
