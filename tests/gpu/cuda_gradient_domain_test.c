/* The CUDA GradientDomain filter against the CPU's, through the OIDN API
 * (label gpu):
 *   - synthetic data with albedo, normal and depth, with position and
 *     feature variances, with no features, with non-finite inputs, and a
 *     single candidate: CUDA = CPU up to float rounding and the few
 *     discrete decisions it flips (see MEAN_TOLERANCE);
 *   - 1- and 2-channel albedo and normal: the expanded guides' result bit
 *     for bit;
 *   - the gradient scenes (exported by export_gradient_testdata.py with
 *     their features): CUDA = CPU, and relMSE against the scene's
 *     reference within 0.5% of the CPU's;
 *   - two runs equal bit for bit; a 1024 x 1024 run gives finite output.
 * `test_cuda_gradient_domain quick` runs the synthetic cases only (for
 * memcheck and initcheck), `tiny` one 12 x 10 case (for racecheck).  gradient_domain_emulation_test.cu runs the same
 * kernels on the CPU in CI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test_util.h"
#include "metrics.h"
#include "poisson_cases.h"
#include "test_util.h"

/* The GPU contracts products into FMAs where the CPU rounds them apart
 * (the emulation, which does not, agrees within 5e-6), and the filter has
 * discrete decisions that a last-bit difference can flip at a few pixels:
 * the per-pixel choice between candidates of nearly equal estimated error,
 * a patch weight at the threshold, a singular value at the rank cut.  So:
 * the mean difference is small, few values differ by more than 1e-3 of
 * the largest, and the quality (relMSE on the scenes) is the same.
 * Measured on the H100 (first run): largest difference 1.8e-6 to 2.1e-3 of
 * the largest value on the synthetic cases, 2.0e-3 to 2.1e-2 on the
 * scenes, with equal relMSE to six digits. */
static const double MEAN_TOLERANCE = 1e-4;   /* mean |cuda - cpu| / mean |cpu| */
static const double OUTLIER_SHARE = 0.01;    /* values differing by > 1e-3 max |cpu| */

enum { FEAT_NONE, FEAT_DEPTH, FEAT_POSITION };

/* `tiny`: 2 IRLS steps of 3 CG iterations (racecheck) */
static int few_iterations = 0;

/* The channels of f's albedo, normal and depth images as a run shares
 * them. */
typedef struct guide_channels
{
  int albedo, normal, depth;
} guide_channels;

static const guide_channels DEPTH_1 = {3, 3, 1}, DEPTH_3 = {3, 3, 3};

/* Runs GradientDomain on dev; returns the device's error code. */
static int run(OIDNDevice dev, const poisson_data* d, const poisson_features* f, int which,
               guide_channels gc, int candidate, float* out)
{
  const int ch = d->channels;
  gpu_image images[14] = {{"color", d->color, ch},        {"gradientX", d->gx, ch},
                          {"gradientY", d->gy, ch},       {"colorA", d->color_a, ch},
                          {"colorB", d->color_b, ch},     {"gradientXA", d->gx_a, ch},
                          {"gradientXB", d->gx_b, ch},    {"gradientYA", d->gy_a, ch},
                          {"gradientYB", d->gy_b, ch}};
  int n = 9;
  if (which == FEAT_DEPTH) {
    images[n++] = (gpu_image){"albedo", f->albedo, gc.albedo};
    images[n++] = (gpu_image){"normal", f->normal, gc.normal};
    images[n++] = (gpu_image){"depth", f->depth, gc.depth};
    images[n++] = (gpu_image){"featureVariance", f->variance, 3};
  } else if (which == FEAT_POSITION) {
    images[n++] = (gpu_image){"normal", f->normal, 3};
    images[n++] = (gpu_image){"position", f->position, 3};
  }
  const gpu_param params[3] = {
      {"candidate", 0, candidate}, {"irlsIterations", 0, 2}, {"cgIterations", 0, 3}};
  return gpu_run_filter(dev, "GradientDomain", d->width, d->height, images, n, ch, params,
                        few_iterations ? 3 : 1, out);
}

typedef poisson_agreement agreement;

static agreement compare(OIDNDevice cpu, OIDNDevice gpu, const poisson_data* d,
                         const poisson_features* f, int which, guide_channels gc,
                         int candidate, float* on_cpu, float* on_gpu)
{
  CHECK_EQ_INT(run(cpu, d, f, which, gc, candidate, on_cpu), OIDN_ERROR_NONE);
  CHECK_EQ_INT(run(gpu, d, f, which, gc, candidate, on_gpu), OIDN_ERROR_NONE);
  const size_t count = (size_t)d->width * (size_t)d->height * (size_t)d->channels;
  CHECK(lull_test_all_finite(on_gpu, count));
  return poisson_agreement_of(on_gpu, on_cpu, count);
}

static void check_agreement(const char* name, int w, int h, const agreement* a)
{
  printf("%-28s %3dx%-3d CUDA vs CPU: max rel %.2e, mean rel %.2e (tolerance %.0e), "
         "beyond 1e-3: %.3f%% (at most %.1f%%)\n", name, w, h, a->max_rel, a->mean_rel,
         MEAN_TOLERANCE, 100.0 * a->outliers, 100.0 * OUTLIER_SHARE);
  CHECK(a->mean_rel <= MEAN_TOLERANCE);
  CHECK(a->outliers <= OUTLIER_SHARE);
}

static void run_synthetic(OIDNDevice cpu, OIDNDevice gpu)
{
  static const struct
  {
    const char* name;
    int w, h, channels, features, poison, candidate;
  } cases[] = {
      {"rgb albedo normal depth", 64, 48, 3, FEAT_DEPTH, 0, -1},
      {"rgba normal position", 45, 37, 4, FEAT_POSITION, 0, -1},
      {"two channels, no features", 33, 29, 2, FEAT_NONE, 0, -1},
      {"non-finite inputs", 40, 30, 3, FEAT_DEPTH, 1, -1},
      {"candidate 2 only", 52, 31, 3, FEAT_DEPTH, 0, 2},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    poisson_data d;
    poisson_data_make(&d, cases[k].w, cases[k].h, cases[k].channels, cases[k].poison, 13u);
    poisson_features f;
    poisson_features_make(&f, cases[k].w, cases[k].h);
    const size_t count = (size_t)cases[k].w * (size_t)cases[k].h * (size_t)cases[k].channels;
    float* a = malloc(count * sizeof(float));
    float* b = malloc(count * sizeof(float));
    const agreement g =
        compare(cpu, gpu, &d, &f, cases[k].features, DEPTH_1, cases[k].candidate, a, b);
    check_agreement(cases[k].name, cases[k].w, cases[k].h, &g);
    free(a);
    free(b);
    poisson_features_free(&f);
    poisson_data_free(&d);
  }
}

static void run_scenes(OIDNDevice cpu, OIDNDevice gpu)
{
  const char* scenes[] = {"cornell", "textured", "window"};
  for (size_t s = 0; s < sizeof scenes / sizeof scenes[0]; ++s) {
    poisson_data d;
    float *reference = NULL, *direct = NULL;
    poisson_features f;
    if (!poisson_scene_load(&d, scenes[s], &reference, &direct) ||
        !poisson_scene_features(&f, scenes[s], d.width, d.height)) {
      fprintf(stderr, "cuda_gradient_domain: scene %s not exported "
                      "(tests/gpu/export_gradient_testdata.py)\n", scenes[s]);
      CHECK(0);
      poisson_data_free(&d);
      free(reference);
      free(direct);
      continue;
    }
    const size_t w = (size_t)d.width, h = (size_t)d.height, count = w * h * 3;
    float* on_cpu = malloc(count * sizeof(float));
    float* on_gpu = malloc(count * sizeof(float));
    const agreement g = compare(cpu, gpu, &d, &f, FEAT_DEPTH, DEPTH_3, -1, on_cpu, on_gpu);
    check_agreement(scenes[s], d.width, d.height, &g);
    for (size_t i = 0; i < count; ++i) {
      on_cpu[i] += direct[i];
      on_gpu[i] += direct[i];
    }
    const double rel_cpu = lull_metric_rel_mse(on_cpu, reference, w, h, 3);
    const double rel_gpu = lull_metric_rel_mse(on_gpu, reference, w, h, 3);
    printf("%-10s relMSE CUDA %.6f CPU %.6f\n", scenes[s], rel_gpu, rel_cpu);
    CHECK(fabs(rel_gpu - rel_cpu) <= 5e-3 * rel_cpu);
    free(on_cpu);
    free(on_gpu);
    free(reference);
    free(direct);
    poisson_features_free(&f);
    poisson_data_free(&d);
  }
}

/* 1- and 2-channel albedo and normal, read as OIDN 2.1+ reads them (v as
 * (v, v, v), (x, y) as (x, y, y)): on the GPU bit for bit the run of the
 * expanded guides, and the CPU's narrow run within the usual agreement. */
static void run_narrow_guides(OIDNDevice cpu, OIDNDevice gpu)
{
  const int w = 64, h = 48;
  poisson_data d;
  poisson_data_make(&d, w, h, 3, 0, 29u);
  poisson_features f;
  poisson_features_make(&f, w, h);
  gpu_narrow_guides g;
  gpu_narrow_guides_make(f.albedo, f.normal, (size_t)w * (size_t)h, &g);
  poisson_features narrow = f, expanded = f; /* views: f owns the arrays */
  narrow.albedo = g.albedo1;
  narrow.normal = g.normal2;
  expanded.albedo = g.albedo3;
  expanded.normal = g.normal3;
  const guide_channels narrow_channels = {1, 2, 1};
  const size_t count = (size_t)w * (size_t)h * 3;
  float* on_cpu = malloc(count * sizeof(float));
  float* on_gpu = malloc(count * sizeof(float));
  float* on_gpu_expanded = malloc(count * sizeof(float));
  const agreement a =
      compare(cpu, gpu, &d, &narrow, FEAT_DEPTH, narrow_channels, -1, on_cpu, on_gpu);
  check_agreement("narrow albedo and normal", w, h, &a);
  CHECK_EQ_INT(run(gpu, &d, &expanded, FEAT_DEPTH, DEPTH_1, -1, on_gpu_expanded),
               OIDN_ERROR_NONE);
  const int equal = memcmp(on_gpu, on_gpu_expanded, count * sizeof(float)) == 0;
  printf("narrow guides on the GPU %s the expanded guides' run\n",
         equal ? "equal bit for bit" : "DIFFER FROM");
  CHECK(equal);
  free(on_gpu_expanded);
  free(on_gpu);
  free(on_cpu);
  gpu_narrow_guides_free(&g);
  poisson_features_free(&f);
  poisson_data_free(&d);
}

/* Two runs equal bit for bit (fixed-order reductions, no atomics in the
 * stencil assembly); a megapixel gives finite output. */
static void run_repeat_and_large(OIDNDevice gpu, int quick)
{
  const int w = quick ? 48 : 1024, h = quick ? 40 : 1024;
  poisson_data d;
  poisson_data_make(&d, w, h, 3, 0, 3u);
  poisson_features f;
  poisson_features_make(&f, w, h);
  const size_t count = (size_t)w * (size_t)h * 3;
  float* a = malloc(count * sizeof(float));
  float* b = malloc(count * sizeof(float));
  CHECK_EQ_INT(run(gpu, &d, &f, FEAT_DEPTH, DEPTH_1, -1, a), OIDN_ERROR_NONE);
  CHECK_EQ_INT(run(gpu, &d, &f, FEAT_DEPTH, DEPTH_1, -1, b), OIDN_ERROR_NONE);
  CHECK(lull_test_all_finite(a, count));
  CHECK(memcmp(a, b, count * sizeof(float)) == 0);
  printf("%dx%d: two CUDA runs %s\n", w, h,
         memcmp(a, b, count * sizeof(float)) == 0 ? "equal bit for bit" : "DIFFER");
  free(a);
  free(b);
  poisson_features_free(&f);
  poisson_data_free(&d);
}

/* One small run with few iterations (racecheck instruments every access
 * of every launch: the quick mode's 2000 launches per run take it over
 * ten minutes). */
static void run_tiny(OIDNDevice cpu, OIDNDevice gpu)
{
  poisson_data d;
  poisson_data_make(&d, 12, 10, 3, 0, 7u);
  poisson_features f;
  poisson_features_make(&f, 12, 10);
  float a[12 * 10 * 3], b[12 * 10 * 3];
  const agreement g = compare(cpu, gpu, &d, &f, FEAT_DEPTH, DEPTH_1, -1, a, b);
  check_agreement("tiny", 12, 10, &g);
  poisson_features_free(&f);
  poisson_data_free(&d);
}

int main(int argc, char** argv)
{
  const int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
  const int tiny = argc > 1 && strcmp(argv[1], "tiny") == 0;
  OIDNDevice cpu = gpu_new_device(OIDN_DEVICE_TYPE_CPU);
  OIDNDevice gpu = gpu_new_device(OIDN_DEVICE_TYPE_CUDA);
  if (!gpu) {
    fprintf(stderr, "cuda_gradient_domain: no CUDA device\n");
    return 1;
  }
  if (tiny) {
    few_iterations = 1;
    run_tiny(cpu, gpu);
    oidnReleaseDevice(cpu);
    oidnReleaseDevice(gpu);
    return lull_test_result("cuda_gradient_domain");
  }
  run_synthetic(cpu, gpu);
  run_narrow_guides(cpu, gpu);
  if (!quick)
    run_scenes(cpu, gpu);
  run_repeat_and_large(gpu, quick);
  oidnReleaseDevice(cpu);
  oidnReleaseDevice(gpu);
  return lull_test_result("cuda_gradient_domain");
}
