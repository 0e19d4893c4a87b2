/* The CUDA GradientDomain filter's kernels run on the CPU (no GPU needed;
 * CI runs this) against the CPU filter (lull_gradient_domain_cpu).
 *
 * The whole CUDA schedule (cuda/gradient_domain_cuda.cu: loads, guide,
 * features, three candidates with their weights, stencils, L1 and second
 * solves, selection, store) runs through emulating launchers
 * (pk_emulator.cuh) on small synthetic cases: RGB with albedo, normal and
 * depth; RGBA with position and feature variances; one channel without
 * features; non-finite inputs; a single candidate; 1- and 2-channel
 * albedo and normal.  Then: progress reaches
 * 1 and a cancel leaves the output untouched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradient_domain_cuda.h"
#include "pk_emulator.cuh"

extern "C" {
#include "gpu_test_util.h"
#include "poisson_cases.h"
#include "test_util.h"
}

enum
{
  FEAT_NONE = 0,
  FEAT_DEPTH = 1,    /* albedo, normal, depth */
  FEAT_POSITION = 2, /* normal, position, featureVariance */
};

typedef struct gd_case
{
  const char* name;
  int width, height, channels;
  int features;
  int poison;
  int candidate;
} gd_case;

static const gd_case CASES[] = {
    {"rgb albedo normal depth", 29, 23, 3, FEAT_DEPTH, 0, -1},
    {"rgba position variance", 21, 18, 4, FEAT_POSITION, 0, -1},
    {"one channel, no features", 19, 16, 1, FEAT_NONE, 0, -1},
    {"non-finite inputs", 24, 20, 3, FEAT_DEPTH, 1, -1},
    {"candidate 1 only", 26, 17, 3, FEAT_DEPTH, 0, 1},
};

/* The results may differ by float rounding only: the kernels sum the
 * weights' windows in the CPU's order, but the reductions of CG (double,
 * other order) and the solves built on them differ in the last bits, and
 * each IRLS step and candidate builds on the last. */
static const double TOLERANCE = 1e-4;

static lull_gradient_domain_images images_of(const poisson_data* d, const poisson_features* f, int which,
                                             float* out)
{
  const int w = d->width, h = d->height, ch = d->channels;
  lull_gradient_domain_images im;
  memset(&im, 0, sizeof im);
  im.color = lull_test_float_view(d->color, ch, w, h);
  im.gradient_x = lull_test_float_view(d->gx, ch, w, h);
  im.gradient_y = lull_test_float_view(d->gy, ch, w, h);
  im.color_a = lull_test_float_view(d->color_a, ch, w, h);
  im.color_b = lull_test_float_view(d->color_b, ch, w, h);
  im.gradient_x_a = lull_test_float_view(d->gx_a, ch, w, h);
  im.gradient_x_b = lull_test_float_view(d->gx_b, ch, w, h);
  im.gradient_y_a = lull_test_float_view(d->gy_a, ch, w, h);
  im.gradient_y_b = lull_test_float_view(d->gy_b, ch, w, h);
  im.output = lull_test_float_view(out, ch, w, h);
  if (which == FEAT_DEPTH) {
    im.albedo = lull_test_float_view(f->albedo, 3, w, h);
    im.normal = lull_test_float_view(f->normal, 3, w, h);
    im.depth = lull_test_float_view(f->depth, 1, w, h);
  } else if (which == FEAT_POSITION) {
    im.normal = lull_test_float_view(f->normal, 3, w, h);
    im.position = lull_test_float_view(f->position, 3, w, h);
    im.feature_variance = lull_test_float_view(f->variance, 3, w, h);
  }
  return im;
}

static lull_gradient_domain_params case_params(int candidate)
{
  lull_gradient_domain_params p = lull_gradient_domain_default_params();
  p.irls_iterations = 3; /* the emulation runs every thread of every launch */
  p.cg_iterations = 12;
  p.candidate = candidate;
  return p;
}

static lull_status run_emulated(const lull_gradient_domain_params* p,
                                const lull_gradient_domain_images* im,
                                const lull_progress* progress, lull_error* err)
{
  lull_status status = lull_gradient_domain_validate(p, im, err);
  if (status != LULL_OK)
    return status;
  const lull_image* primal = &im->color;
  lull_gdk_plan plan;
  status = lull_gdk_plan_make(im->output.width, im->output.height,
                              LULL_MIN(lull_format_channels(primal->format), 3), 4, 96 * 1024,
                              &plan, err);
  if (status != LULL_OK)
    return status;
  unsigned char* scratch = pk_emulator_scratch(plan.scratch_bytes);
  if (!scratch)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  pk_emulator emu = {0};
  const lull_pk_launchers launchers = {&emu, pk_emulator_launch, pk_emulator_sync};
  status = lull_gdk_filter_enqueue(&plan, p, im, scratch, &launchers, progress, err);
  free(scratch);
  return status;
}

static void run_case(const gd_case* c)
{
  poisson_data d;
  poisson_data_make(&d, c->width, c->height, c->channels, c->poison, 91u);
  poisson_features f;
  poisson_features_make(&f, c->width, c->height);
  const size_t count = (size_t)c->width * (size_t)c->height * (size_t)c->channels;
  float* ref = (float*)malloc(count * sizeof(float));
  float* emu = (float*)malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i)
    ref[i] = emu[i] = -12345.0f; /* every value must be written */
  const lull_gradient_domain_params p = case_params(c->candidate);
  lull_error err = {LULL_OK, ""};
  lull_gradient_domain_images im = images_of(&d, &f, c->features, ref);
  CHECK_EQ_INT(lull_gradient_domain_cpu(&p, &im, 2, NULL, &err), LULL_OK);
  im = images_of(&d, &f, c->features, emu);
  const lull_status status = run_emulated(&p, &im, NULL, &err);
  CHECK_EQ_INT(status, LULL_OK);
  if (status != LULL_OK)
    fprintf(stderr, "%s: %s\n", c->name, err.message);
  const double diff = poisson_rel_max_diff(emu, ref, count);
  printf("%-26s %3dx%-3d: max |emu - cpu| / max |cpu| %.2e, tolerance %.0e\n", c->name, c->width,
         c->height, diff, TOLERANCE);
  CHECK(diff <= TOLERANCE);
  CHECK(lull_test_all_finite(emu, count));
  if (c->channels == 4) /* alpha is copied through */
    for (size_t i = 0; i < count / 4; ++i)
      if (emu[4 * i + 3] != d.color[4 * i + 3]) {
        CHECK(emu[4 * i + 3] == d.color[4 * i + 3]);
        break;
      }
  free(ref);
  free(emu);
  poisson_features_free(&f);
  poisson_data_free(&d);
}

/* 1- and 2-channel albedo and normal (OIDN 2.1+'s reading, v as (v, v, v),
 * (x, y) as (x, y, y)): bit for bit the emulated run of the expanded
 * guides, and the CPU's narrow run within TOLERANCE. */
static void test_narrow_guides(void)
{
  const int w = 23, h = 19;
  poisson_data d;
  poisson_data_make(&d, w, h, 3, 0, 17u);
  poisson_features f;
  poisson_features_make(&f, w, h);
  gpu_narrow_guides g;
  gpu_narrow_guides_make(f.albedo, f.normal, (size_t)w * (size_t)h, &g);
  const size_t count = (size_t)w * (size_t)h * 3;
  float* out[3];
  for (int k = 0; k < 3; ++k)
    out[k] = (float*)malloc(count * sizeof(float));
  const lull_gradient_domain_params p = case_params(-1);
  lull_error err = {LULL_OK, ""};
  for (int k = 0; k < 3; ++k) {
    lull_gradient_domain_images im = images_of(&d, &f, FEAT_DEPTH, out[k]);
    im.albedo = k == 1 ? lull_test_float_view(g.albedo3, 3, w, h)
                       : lull_test_float_view(g.albedo1, 1, w, h);
    im.normal = k == 1 ? lull_test_float_view(g.normal3, 3, w, h)
                       : lull_test_float_view(g.normal2, 2, w, h);
    /* 0: emulated narrow, 1: emulated expanded, 2: the CPU's narrow */
    CHECK_EQ_INT(k == 2 ? lull_gradient_domain_cpu(&p, &im, 2, NULL, &err)
                        : run_emulated(&p, &im, NULL, &err),
                 LULL_OK);
  }
  const double diff = poisson_rel_max_diff(out[0], out[2], count);
  printf("narrow guides: emulated narrow %s expanded; max |emu - cpu| / max |cpu| %.2e\n",
         memcmp(out[0], out[1], count * sizeof(float)) == 0 ? "equals" : "DIFFERS FROM", diff);
  CHECK(memcmp(out[0], out[1], count * sizeof(float)) == 0);
  CHECK(diff <= TOLERANCE);
  for (int k = 0; k < 3; ++k)
    free(out[k]);
  gpu_narrow_guides_free(&g);
  poisson_features_free(&f);
  poisson_data_free(&d);
}

static void test_progress(void)
{
  poisson_data d;
  poisson_data_make(&d, 16, 12, 3, 0, 5u);
  poisson_features f;
  poisson_features_make(&f, 16, 12);
  const size_t count = 16 * 12 * 3;
  float* out = (float*)malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i)
    out[i] = 7.0f;
  const lull_gradient_domain_params p = case_params(-1);
  const lull_gradient_domain_images im = images_of(&d, &f, FEAT_DEPTH, out);
  poisson_progress_log log = {0, -1, 0.0, 1};
  const lull_progress progress = {poisson_on_progress, &log};
  lull_error err = {LULL_OK, ""};
  CHECK_EQ_INT(run_emulated(&p, &im, &progress, &err), LULL_OK);
  printf("progress: %d reports, last %.3f, monotone %d\n", log.calls, log.last, log.monotone);
  CHECK(log.calls > 10);
  CHECK(log.monotone);
  CHECK(log.last == 1.0);
  for (size_t i = 0; i < count; ++i)
    out[i] = 7.0f;
  poisson_progress_log stop = {0, 9, 0.0, 1};
  const lull_progress cancel = {poisson_on_progress, &stop};
  CHECK_EQ_INT(run_emulated(&p, &im, &cancel, &err), LULL_ERROR_CANCELLED);
  for (size_t i = 0; i < count; ++i)
    if (out[i] != 7.0f) {
      CHECK(out[i] == 7.0f);
      break;
    }
  free(out);
  poisson_features_free(&f);
  poisson_data_free(&d);
}

/* The post-filter pass (a tile per block, distances shared through shared
 * memory: gradient_domain_kernels.cuh) against the plain evaluation, pixel
 * by pixel, of lull_gd_pair_weight_at and the regression sums in the same
 * order: equal bit for bit, on images of several tiles with partial ones
 * at the right and bottom, with 3 and 1 channels, 3 and 0 features, the
 * result's variance written or not. */
static void test_post_pass(int w, int h, int channels, int features, int with_variance)
{
  const size_t n = (size_t)w * (size_t)h;
  /* guide value and variance, src; the features' value, variance and
   * scale; src2, the result and its variance */
  enum { PLANES = 3 * 3 + 3 * LULL_GD_MAX_CHANNELS + 3 * 3 };
  float* mem = (float*)malloc(PLANES * n * sizeof(float));
  CHECK(mem != NULL);
  if (!mem)
    return;
  unsigned state = 12345u + (unsigned)(w * 31 + channels * 7 + features);
  for (size_t i = 0; i < PLANES * n; ++i) {
    state = state * 1664525u + 1013904223u;
    mem[i] = (float)(state >> 8) * (1.0f / 16777216.0f);
  }
  float* next = mem;
  lull_pk_args a;
  memset(&a, 0, sizeof a);
  a.width = w;
  a.height = h;
  a.channels = channels;
  lull_gdk_args* g = &a.gd;
  g->guide.channels = channels;
  for (int c = 0; c < 3; ++c) {
    g->guide.value[c] = next, next += n;
    float* var = next;
    next += n;
    for (size_t i = 0; i < n; ++i)
      var[i] *= 0.05f; /* variances that leave weights on both sides of the threshold */
    g->guide.variance[c] = var;
    g->src[c] = next, next += n;
  }
  g->features.count = features;
  for (int j = 0; j < LULL_GD_MAX_CHANNELS; ++j) {
    g->features.value[j] = next, next += n;
    g->features.variance[j] = next, next += n;
    g->features.scale[j] = next, next += n;
  }
  float* out[2][3];
  for (int c = 0; c < 3; ++c) {
    g->src2[c] = next, next += n;
    out[0][c] = next, next += n;
  }
  for (int c = 0; c < 3; ++c) {
    out[1][c] = next, next += n;
    g->dst[c] = out[0][c];
    g->dst2[c] = with_variance ? out[1][c] : NULL;
  }
  g->candidate.kc = LULL_GD_POST_KC1;
  g->candidate.kf = LULL_GD_POST_KF;
  g->candidate.beta = 1.0f;
  g->count = LULL_GD_POST_RADIUS;

  lull_pk_plan plan;
  lull_error err = {LULL_OK, ""};
  CHECK_EQ_INT(lull_pk_plan_make(w, h, channels, 0, 0, 4, 96 * 1024, &plan, &err), LULL_OK);
  pk_emulator emu = {0};
  const lull_pk_launchers launchers = {&emu, pk_emulator_launch, pk_emulator_sync};
  CHECK_EQ_INT(lull_pk_launch_kind(&plan, &launchers, LULL_PK_GD_POST, &a, &err), LULL_OK);

  const int r = LULL_GD_POST_RADIUS;
  size_t differ = 0, taps = 0, zero = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      float v[3] = {0.0f, 0.0f, 0.0f};
      for (int c = 0; c < channels; ++c)
        v[c] = g->src[c][i];
      lull_gd_llr s;
      lull_gd_llr_centre(&s, channels, v);
      for (int dy = 0; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
          if (dy == 0 && dx <= 0)
            continue;
          for (int sign = 1; sign >= -1; sign -= 2) {
            const float wt = lull_gd_pair_weight_at(w, h, &g->guide, &g->features, &g->candidate,
                                                    LULL_GD_WEIGHT_THRESHOLD, LULL_GD_POST_NLM, x,
                                                    y, sign * dx, sign * dy);
            ++taps;
            if (wt == 0.0f) {
              ++zero;
              continue;
            }
            const size_t q = (size_t)((ptrdiff_t)i + sign * ((ptrdiff_t)dy * w + dx));
            for (int c = 0; c < channels; ++c)
              v[c] = g->src[c][q];
            lull_gd_llr_add(&s, channels, wt, (float)sign * lull_gd_post_offset(dx, r),
                            (float)sign * lull_gd_post_offset(dy, r), v);
          }
        }
      for (int c = 0; c < channels; ++c) {
        const float e = lull_gd_llr_estimate(s.m, s.b[c][0], s.b[c][1], s.b[c][2],
                                             LULL_GD_POST_RIDGE);
        differ += memcmp(&e, &out[0][c][i], sizeof e) != 0;
        if (with_variance) {
          const float var = lull_gd_llr_variance(&s, g->src2[c][i]);
          differ += memcmp(&var, &out[1][c][i], sizeof var) != 0;
        }
      }
    }
  printf("post-filter pass %dx%d, %d ch, %d features%s: %zu of %zu taps weigh 0, %zu values "
         "differ from the per-pixel evaluation\n",
         w, h, channels, features, with_variance ? ", variance" : "", zero, taps, differ);
  CHECK(differ == 0);
  CHECK(zero > 0 && zero < taps); /* both kinds of tap were exercised */
  free(mem);
}

int main(void)
{
  for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; ++k)
    run_case(&CASES[k]);
  test_narrow_guides();
  test_progress();
  test_post_pass(70, 19, 3, 3, 1);
  test_post_pass(33, 9, 1, 0, 0);
  return lull_test_result("gradient_domain_emulation");
}
