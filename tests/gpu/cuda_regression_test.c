/* The CUDA Regression filter against the CPU's, through the OIDN API
 * (label gpu):
 *   - every case of regression_cases.c (halves with features given once or
 *     as halves, position, 1 to 4 channels, one buffer with and without a
 *     variance image, non-finite inputs, 1x1, 3x2 and 2x9 images, tiled
 *     runs under maxMemoryMB): CUDA = CPU up to float rounding and the few
 *     discrete decisions it flips (see MEAN_TOLERANCE), output and
 *     outputVariance;
 *   - OIDN's errors for bad input (a missing half, halves of another size,
 *     outputVariance without halves, variance with halves) on both devices;
 *   - two CUDA runs equal bit for bit (no atomics: the collaborative step
 *     is a gather); a 1024 x 768 run of each kind gives finite output.
 * `test_cuda_regression quick` runs the small cases only (for memcheck and
 * initcheck), `tiny` two 20 x 12 runs with small windows (for racecheck).
 * regression_emulation_test.cu runs the same kernels on the CPU in CI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test_util.h"
#include "regression_cases.h"
#include "test_util.h"

/* The GPU contracts products into FMAs where the CPU rounds them apart,
 * and its expf, logf and powf differ from glibc's by an ulp or two; the
 * filter has discrete decisions (the per-pixel bandwidth choice, the
 * fits' range, a firefly's test) that a last-bit difference can flip at a
 * few pixels.  The kernels' CPU emulation with FMA contraction (-mfma
 * -ffp-contract=fast) agrees with the CPU within mean 5e-6 (outputVariance
 * 2e-4), no value beyond 1e-3 of the largest.  So: the mean difference is
 * small and few values differ by more than 1e-3 of the largest. */
static const double MEAN_TOLERANCE = 1e-4;     /* mean |cuda - cpu| / mean |cpu| */
static const double VARIANCE_TOLERANCE = 2e-3; /* the same of outputVariance */
static const double OUTLIER_SHARE = 0.01;      /* values differing by > 1e-3 max |cpu| */

static OIDNFormat float_format(int channels)
{
  return (OIDNFormat)(OIDN_FORMAT_FLOAT + channels - 1);
}

typedef struct named
{
  const char* name;
  const float* data;
  int channels;
} named;

/* The case's images by their filter names. */
static int case_images(const reg_data* d, named* out)
{
  const named all[] = {
      {"color", d->color, d->channels},   {"colorA", d->color_a, d->channels},
      {"colorB", d->color_b, d->channels}, {"albedo", d->albedo, 3},
      {"albedoA", d->albedo_a, 3},        {"albedoB", d->albedo_b, 3},
      {"normal", d->normal, 3},           {"normalA", d->normal_a, 3},
      {"normalB", d->normal_b, 3},        {"depth", d->depth, 1},
      {"depthA", d->depth_a, 1},          {"depthB", d->depth_b, 1},
      {"position", d->position, 3},       {"positionA", d->position_a, 3},
      {"positionB", d->position_b, 3},    {"variance", d->variance, 3}};
  int n = 0;
  for (size_t k = 0; k < sizeof all / sizeof *all; ++k)
    if (all[k].data)
      out[n++] = all[k];
  return n;
}

/* Runs Regression on dev with the case's parameters; the output (and, when
 * out_var is set, outputVariance) read back.  Returns the device's error. */
static int run(OIDNDevice dev, const reg_case* c, const reg_data* d, const named* images,
               int count, float* out, float* out_var)
{
  const int w = d->width, h = d->height;
  const size_t pixels = (size_t)w * (size_t)h;
  OIDNFilter f = oidnNewFilter(dev, "Regression");
  OIDNBuffer buffers[18] = {0};
  for (int k = 0; k < count; ++k) {
    const size_t bytes = pixels * (size_t)images[k].channels * sizeof(float);
    buffers[k] = oidnNewBuffer(dev, bytes);
    oidnWriteBuffer(buffers[k], 0, bytes, images[k].data);
    oidnSetFilterImage(f, images[k].name, buffers[k], float_format(images[k].channels),
                       (size_t)w, (size_t)h, 0, 0, 0);
  }
  const size_t out_bytes = pixels * (size_t)d->channels * sizeof(float);
  OIDNBuffer ob = oidnNewBuffer(dev, out_bytes);
  oidnSetFilterImage(f, "output", ob, float_format(d->channels), (size_t)w, (size_t)h, 0, 0, 0);
  OIDNBuffer vb = NULL;
  if (out_var) {
    vb = oidnNewBuffer(dev, pixels * 3 * sizeof(float));
    oidnSetFilterImage(f, "outputVariance", vb, OIDN_FORMAT_FLOAT3, (size_t)w, (size_t)h, 0, 0, 0);
  }
  if (c->radius > 0)
    oidnSetFilterInt(f, "radius", c->radius);
  if (c->second_radius != 0)
    oidnSetFilterInt(f, "secondPassRadius", c->second_radius > 0 ? c->second_radius : 0);
  if (c->ldr)
    oidnSetFilterBool(f, "hdr", false);
  if (c->max_memory_mb >= 0)
    oidnSetFilterInt(f, "maxMemoryMB", c->max_memory_mb);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  oidnReadBuffer(ob, 0, out_bytes, out);
  if (vb)
    oidnReadBuffer(vb, 0, pixels * 3 * sizeof(float), out_var);
  const int code = gpu_device_error(dev, "Regression");
  oidnReleaseFilter(f);
  oidnReleaseBuffer(ob);
  if (vb)
    oidnReleaseBuffer(vb);
  for (int k = 0; k < count; ++k)
    oidnReleaseBuffer(buffers[k]);
  return code;
}

static void run_case(OIDNDevice cpu, OIDNDevice gpu, const reg_case* c)
{
  reg_data d;
  reg_data_make(&d, c, 1234u + (unsigned)c->width);
  named images[18];
  const int count = case_images(&d, images);
  const size_t n = (size_t)c->width * (size_t)c->height, values = n * (size_t)c->channels;
  float* on_cpu = calloc(values, sizeof(float));
  float* on_gpu = calloc(values, sizeof(float));
  const int with_var = c->halves && c->out_variance;
  float* var_cpu = with_var ? calloc(3 * n, sizeof(float)) : NULL;
  float* var_gpu = with_var ? calloc(3 * n, sizeof(float)) : NULL;
  CHECK_EQ_INT(run(cpu, c, &d, images, count, on_cpu, var_cpu), OIDN_ERROR_NONE);
  CHECK_EQ_INT(run(gpu, c, &d, images, count, on_gpu, var_gpu), OIDN_ERROR_NONE);
  CHECK(lull_test_all_finite(on_gpu, values));
  const reg_agreement a = reg_agreement_of(on_gpu, on_cpu, values);
  printf("%-36s %3dx%-3d CUDA vs CPU: max rel %.2e, mean rel %.2e (tolerance %.0e), "
         "beyond 1e-3: %.3f%% (at most %.1f%%)", c->name, c->width, c->height, a.max_rel,
         a.mean_rel, MEAN_TOLERANCE, 100.0 * a.outliers, 100.0 * OUTLIER_SHARE);
  CHECK(a.mean_rel <= MEAN_TOLERANCE);
  CHECK(a.outliers <= OUTLIER_SHARE);
  if (with_var) {
    const reg_agreement v = reg_agreement_of(var_gpu, var_cpu, 3 * n);
    printf("; variance mean rel %.2e (tolerance %.0e)", v.mean_rel, VARIANCE_TOLERANCE);
    CHECK(lull_test_all_finite(var_gpu, 3 * n));
    CHECK(v.mean_rel <= VARIANCE_TOLERANCE);
  }
  printf("\n");
  free(on_cpu);
  free(on_gpu);
  free(var_cpu);
  free(var_gpu);
  reg_data_free(&d);
}

/* OIDN's error for bad input, the same on both devices. */
static void run_bad_input(OIDNDevice cpu, OIDNDevice gpu)
{
  const reg_case c = {"bad input", 16, 12, 1, REG_ALBEDO, 3, 0, 0, 0, 0, 0, 0, -1};
  reg_data d;
  reg_data_make(&d, &c, 5u);
  float out[16 * 12 * 3], var[16 * 12 * 3];
  const named half_missing[] = {{"colorA", d.color_a, 3}, {"albedo", d.albedo, 3}};
  const named with_full[] = {{"colorA", d.color_a, 3}, {"colorB", d.color_b, 3},
                             {"color", d.color_a, 3}};
  const named with_variance[] = {{"colorA", d.color_a, 3}, {"colorB", d.color_b, 3},
                                 {"variance", d.color_b, 3}};
  const named one[] = {{"color", d.color_a, 3}};
  OIDNDevice devices[2] = {cpu, gpu};
  for (int k = 0; k < 2; ++k) {
    OIDNDevice dev = devices[k];
    CHECK_EQ_INT(run(dev, &c, &d, half_missing, 2, out, NULL), OIDN_ERROR_INVALID_OPERATION);
    CHECK_EQ_INT(run(dev, &c, &d, with_full, 3, out, NULL), OIDN_ERROR_INVALID_OPERATION);
    CHECK_EQ_INT(run(dev, &c, &d, with_variance, 3, out, NULL), OIDN_ERROR_INVALID_OPERATION);
    CHECK_EQ_INT(run(dev, &c, &d, one, 1, out, var), OIDN_ERROR_INVALID_OPERATION);
  }
  /* halves of different sizes */
  OIDNFilter f = oidnNewFilter(gpu, "Regression");
  OIDNBuffer a = oidnNewBuffer(gpu, 16 * 12 * 3 * sizeof(float));
  OIDNBuffer b = oidnNewBuffer(gpu, 16 * 12 * 3 * sizeof(float));
  OIDNBuffer o = oidnNewBuffer(gpu, 16 * 12 * 3 * sizeof(float));
  oidnSetFilterImage(f, "colorA", a, OIDN_FORMAT_FLOAT3, 16, 12, 0, 0, 0);
  oidnSetFilterImage(f, "colorB", b, OIDN_FORMAT_FLOAT3, 12, 16, 0, 0, 0);
  oidnSetFilterImage(f, "output", o, OIDN_FORMAT_FLOAT3, 16, 12, 0, 0, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  const char* message = NULL;
  CHECK_EQ_INT(oidnGetDeviceError(gpu, &message), OIDN_ERROR_INVALID_OPERATION);
  printf("bad input: OIDN's errors on both devices (halves of different sizes: %s)\n",
         message ? message : "");
  oidnReleaseFilter(f);
  oidnReleaseBuffer(a);
  oidnReleaseBuffer(b);
  oidnReleaseBuffer(o);
  reg_data_free(&d);
}

/* Two runs equal bit for bit; a large image gives finite output. */
static void run_repeat_and_large(OIDNDevice gpu, int quick)
{
  for (int halves = 1; halves >= 0; --halves) {
    const reg_case c = {"large", quick ? 48 : 1024, quick ? 40 : 768, halves,
                        REG_ALBEDO | REG_NORMAL | REG_DEPTH, 3, 0, 0, halves, 0, 0, 0, -1};
    reg_data d;
    reg_data_make(&d, &c, 3u);
    named images[18];
    const int count = case_images(&d, images);
    const size_t values = (size_t)c.width * (size_t)c.height * 3;
    float* a = calloc(values, sizeof(float));
    float* b = calloc(values, sizeof(float));
    CHECK_EQ_INT(run(gpu, &c, &d, images, count, a, NULL), OIDN_ERROR_NONE);
    CHECK_EQ_INT(run(gpu, &c, &d, images, count, b, NULL), OIDN_ERROR_NONE);
    CHECK(lull_test_all_finite(a, values));
    const int equal = memcmp(a, b, values * sizeof(float)) == 0;
    CHECK(equal);
    printf("%s %dx%d: two CUDA runs %s\n", halves ? "halves" : "one buffer", c.width, c.height,
           equal ? "equal bit for bit" : "DIFFER");
    free(a);
    free(b);
    reg_data_free(&d);
  }
}

/* Small windows on a small image (racecheck instruments every shared
 * memory access of every launch). */
static void run_tiny(OIDNDevice cpu, OIDNDevice gpu)
{
  const reg_case cases[] = {
      {"tiny halves", 20, 12, 1, REG_ALBEDO | REG_DEPTH | REG_FEATURE_HALVES, 3, 0, 0, 1, 0, 2, 3, -1},
      {"tiny one buffer", 20, 12, 0, REG_ALBEDO | REG_NORMAL, 3, 0, 0, 0, 0, 2, 0, -1}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k)
    run_case(cpu, gpu, &cases[k]);
}

int main(int argc, char** argv)
{
  const int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
  const int tiny = argc > 1 && strcmp(argv[1], "tiny") == 0;
  OIDNDevice cpu = gpu_new_device(OIDN_DEVICE_TYPE_CPU);
  OIDNDevice gpu = gpu_new_device(OIDN_DEVICE_TYPE_CUDA);
  if (!gpu) {
    fprintf(stderr, "cuda_regression: no CUDA device\n");
    return 1;
  }
  if (tiny) {
    run_tiny(cpu, gpu);
  } else {
    for (int k = 0; k < reg_case_count; ++k)
      if (!quick || reg_cases[k].width * reg_cases[k].height <= 48 * 48)
        run_case(cpu, gpu, &reg_cases[k]);
    run_bad_input(cpu, gpu);
    run_repeat_and_large(gpu, quick);
  }
  oidnReleaseDevice(cpu);
  oidnReleaseDevice(gpu);
  return lull_test_result("cuda_regression");
}
