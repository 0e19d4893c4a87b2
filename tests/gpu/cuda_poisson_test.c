/* The CUDA Poisson filter against the CPU's, through the OIDN API (label
 * gpu):
 *   - the cases of poisson_cases.h (L2 by DCT and CG, L1 by IRLS with each
 *     preconditioner, halves and outputVariance, RGBA, non-finite inputs,
 *     1-pixel sides, a prime length): CUDA = CPU within the documented
 *     tolerances;
 *   - the gradient scenes (exported by export_gradient_testdata.py): CUDA =
 *     CPU, and relMSE against the scene's reference within 0.1% of the
 *     CPU's;
 *   - 1280x720 (L2 and L1) and a 10000-pixel row (FFT buffers in global
 *     memory);
 *   - half-float images, asynchronous execution, progress and
 *     cancellation, two runs equal bit for bit.
 * (GradientDomain: cuda_gradient_domain_test.c.)
 * `test_cuda_poisson quick` leaves out the scenes and 1280x720 (for
 * memcheck and initcheck), `race` also caps the iterations (racecheck).
 * poisson_emulation_test.cu checks the same kernels on the CPU in CI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test_util.h"
#include "half.h"
#include "metrics.h"
#include "poisson_cases.h"
#include "test_util.h"

typedef struct run_options
{
  int inputs;            /* INPUT_* */
  int variance_channels;
  int half;              /* half-float images */
  int async;
  OIDNProgressMonitorFunction progress;
  void* user;
} run_options;

static OIDNFormat format_of(int channels, int half)
{
  return (OIDNFormat)((half ? OIDN_FORMAT_HALF : OIDN_FORMAT_FLOAT) + channels - 1);
}

static OIDNBuffer upload(OIDNDevice dev, OIDNFilter f, const char* name, const float* data,
                         size_t count, int channels, int w, int h, int half)
{
  const size_t bytes = count * (half ? 2 : 4);
  OIDNBuffer b = oidnNewBuffer(dev, bytes);
  if (half) {
    uint16_t* tmp = malloc(bytes);
    for (size_t i = 0; i < count; ++i)
      tmp[i] = lull_float_to_half(data[i]);
    oidnWriteBuffer(b, 0, bytes, tmp);
    free(tmp);
  } else {
    oidnWriteBuffer(b, 0, bytes, data);
  }
  oidnSetFilterImage(f, name, b, format_of(channels, half), (size_t)w, (size_t)h, 0, 0, 0);
  return b;
}

static void download(OIDNBuffer b, float* out, size_t count, int half)
{
  if (!half) {
    oidnReadBuffer(b, 0, count * 4, out);
    return;
  }
  uint16_t* tmp = malloc(count * 2);
  oidnReadBuffer(b, 0, count * 2, tmp);
  for (size_t i = 0; i < count; ++i)
    out[i] = lull_half_to_float(tmp[i]);
  free(tmp);
}

/* Runs Poisson on dev; returns the device's error code. */
static int run(OIDNDevice dev, const poisson_data* d, const lull_poisson_params* p,
               const run_options* o, float* out, float* variance)
{
  const int w = d->width, h = d->height, ch = d->channels;
  const size_t n = (size_t)w * (size_t)h, count = n * (size_t)ch;
  OIDNFilter f = oidnNewFilter(dev, "Poisson");
  OIDNBuffer buffers[11] = {NULL};
  int nb = 0;
  if (o->inputs != INPUT_HALVES) {
    buffers[nb++] = upload(dev, f, "color", d->color, count, ch, w, h, o->half);
    buffers[nb++] = upload(dev, f, "gradientX", d->gx, count, ch, w, h, o->half);
    buffers[nb++] = upload(dev, f, "gradientY", d->gy, count, ch, w, h, o->half);
  }
  if (o->inputs != INPUT_FULL) {
    const char* names[6] = {"colorA", "colorB", "gradientXA", "gradientXB", "gradientYA",
                            "gradientYB"};
    const float* data[6] = {d->color_a, d->color_b, d->gx_a, d->gx_b, d->gy_a, d->gy_b};
    for (int k = 0; k < 6; ++k)
      buffers[nb++] = upload(dev, f, names[k], data[k], count, ch, w, h, o->half);
  }
  const size_t unit = o->half ? 2 : 4;
  OIDNBuffer ob = oidnNewBuffer(dev, count * unit);
  oidnSetFilterImage(f, "output", ob, format_of(ch, o->half), (size_t)w, (size_t)h, 0, 0, 0);
  OIDNBuffer vb = NULL;
  if (o->variance_channels) {
    vb = oidnNewBuffer(dev, n * (size_t)o->variance_channels * unit);
    oidnSetFilterImage(f, "outputVariance", vb, format_of(o->variance_channels, o->half),
                       (size_t)w, (size_t)h, 0, 0, 0);
  }
  oidnSetFilterFloat(f, "alpha", p->alpha);
  oidnSetFilterInt(f, "norm", p->norm);
  oidnSetFilterInt(f, "solver", p->solver);
  oidnSetFilterInt(f, "irlsIterations", p->irls_iterations);
  oidnSetFilterInt(f, "cgIterations", p->cg_iterations);
  oidnSetFilterFloat(f, "cgTolerance", p->cg_tolerance);
  oidnSetFilterInt(f, "preconditioner", p->preconditioner);
  if (o->progress)
    oidnSetFilterProgressMonitorFunction(f, o->progress, o->user);
  oidnCommitFilter(f);
  if (o->async) {
    oidnExecuteFilterAsync(f);
    oidnSyncDevice(dev);
  } else {
    oidnExecuteFilter(f);
  }
  download(ob, out, count, o->half);
  if (vb)
    download(vb, variance, n * (size_t)o->variance_channels, o->half);
  const char* message = NULL;
  const int code = oidnGetDeviceError(dev, &message);
  if (code != OIDN_ERROR_NONE)
    fprintf(stderr, "Poisson: error %d: %s\n", code, message ? message : "");
  oidnReleaseFilter(f);
  oidnReleaseBuffer(ob);
  if (vb)
    oidnReleaseBuffer(vb);
  for (int k = 0; k < nb; ++k)
    oidnReleaseBuffer(buffers[k]);
  return code;
}

/* CPU and CUDA on one input; returns max |cuda - cpu| / max |cpu|. */
static double compare(OIDNDevice cpu, OIDNDevice gpu, const poisson_data* d,
                      const lull_poisson_params* p, const run_options* o, double* var_diff,
                      float** keep_cpu, float** keep_gpu)
{
  const size_t n = (size_t)d->width * (size_t)d->height, count = n * (size_t)d->channels;
  float* a = malloc(count * sizeof(float));
  float* b = malloc(count * sizeof(float));
  float* va = calloc(n * 3, sizeof(float));
  float* vb = calloc(n * 3, sizeof(float));
  for (size_t i = 0; i < count; ++i)
    b[i] = -12345.0f;
  CHECK_EQ_INT(run(cpu, d, p, o, a, va), OIDN_ERROR_NONE);
  CHECK_EQ_INT(run(gpu, d, p, o, b, vb), OIDN_ERROR_NONE);
  CHECK(lull_test_all_finite(b, count));
  const double diff = poisson_rel_max_diff(b, a, count);
  if (var_diff)
    *var_diff = o->variance_channels
                    ? poisson_rel_max_diff(vb, va, n * (size_t)o->variance_channels)
                    : 0.0;
  if (d->channels == 4)
    for (size_t i = 0; i < n; ++i)
      if (b[4 * i + 3] != a[4 * i + 3]) {
        CHECK(b[4 * i + 3] == a[4 * i + 3]); /* alpha copied through */
        break;
      }
  if (keep_cpu)
    *keep_cpu = a;
  else
    free(a);
  if (keep_gpu)
    *keep_gpu = b;
  else
    free(b);
  free(va);
  free(vb);
  return diff;
}

/* iteration_cap > 0 (racecheck): every case with at most that many IRLS
 * steps and CG iterations, so that each kernel still runs (the CPU runs
 * the same capped solve, so the tolerances hold). */
static void run_cases(OIDNDevice cpu, OIDNDevice gpu, int iteration_cap)
{
  for (size_t k = 0; k < sizeof POISSON_CASES / sizeof POISSON_CASES[0]; ++k) {
    const poisson_case* c = &POISSON_CASES[k];
    poisson_data d;
    poisson_data_make(&d, c->width, c->height, c->channels, c->poison, 77u);
    lull_poisson_params p = poisson_case_params(c);
    if (iteration_cap > 0) {
      p.irls_iterations = p.irls_iterations < iteration_cap ? p.irls_iterations : iteration_cap;
      p.cg_iterations = p.cg_iterations < iteration_cap ? p.cg_iterations : iteration_cap;
    }
    const run_options o = {c->inputs, c->variance_channels, 0, 0, NULL, NULL};
    double vdiff = 0.0;
    const double diff = compare(cpu, gpu, &d, &p, &o, &vdiff, NULL, NULL);
    printf("%-20s %4dx%-4d CUDA vs CPU: max rel %.2e (variance %.2e), tolerance %.0e\n", c->name,
           c->width, c->height, diff, vdiff, c->tolerance);
    CHECK(diff <= c->tolerance);
    CHECK(vdiff <= 10 * c->tolerance);
    poisson_data_free(&d);
  }
}

/* Large images: 1280x720 with both norms; a 10000-pixel row, longer than
 * one block's shared memory holds (global FFT buffers). */
static void run_large(OIDNDevice cpu, OIDNDevice gpu, int quick)
{
  const struct
  {
    int w, h, norm;
    double tolerance;
  } sizes[] = {{1280, 720, 2, POISSON_TOL_DCT}, {1280, 720, 1, POISSON_TOL_L1},
               {10000, 3, 2, POISSON_TOL_DCT}};
  for (size_t k = quick ? 2 : 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    poisson_data d;
    poisson_data_make(&d, sizes[k].w, sizes[k].h, 3, 0, 3u);
    lull_poisson_params p = lull_poisson_default_params();
    p.norm = sizes[k].norm;
    const run_options o = {INPUT_FULL, 0, 0, 0, NULL, NULL};
    const double diff = compare(cpu, gpu, &d, &p, &o, NULL, NULL, NULL);
    printf("%dx%d L%d CUDA vs CPU: max rel %.2e, tolerance %.0e\n", sizes[k].w, sizes[k].h,
           sizes[k].norm, diff, sizes[k].tolerance);
    CHECK(diff <= sizes[k].tolerance);
    poisson_data_free(&d);
  }
}

/* Half-float inputs and output: the same half-float result within fp16
 * rounding (2^-11 relative). */
static void run_half(OIDNDevice cpu, OIDNDevice gpu)
{
  poisson_data d;
  poisson_data_make(&d, 57, 41, 3, 1, 9u);
  lull_poisson_params p = lull_poisson_default_params();
  const run_options o = {INPUT_BOTH, 3, 1, 0, NULL, NULL};
  double vdiff = 0.0;
  const double diff = compare(cpu, gpu, &d, &p, &o, &vdiff, NULL, NULL);
  printf("half-float L1         CUDA vs CPU: max rel %.2e (variance %.2e)\n", diff, vdiff);
  CHECK(diff <= 1e-3);
  CHECK(vdiff <= 1e-2);
  poisson_data_free(&d);
}

typedef struct progress_log
{
  int calls, cancel_at;
  double last;
} progress_log;

static bool on_progress(void* user, double done)
{
  progress_log* log = user;
  log->last = done;
  return ++log->calls != log->cancel_at;
}

/* Asynchronous = synchronous, bit for bit, and so is a repeat; progress
 * reaches 1; a cancel gives OIDN_ERROR_CANCELLED. */
static void run_execution(OIDNDevice gpu)
{
  poisson_data d;
  poisson_data_make(&d, 200, 150, 3, 0, 4u);
  const size_t count = (size_t)200 * 150 * 3;
  lull_poisson_params p = lull_poisson_default_params();
  float* a = malloc(count * sizeof(float));
  float* b = malloc(count * sizeof(float));
  float* c = malloc(count * sizeof(float));
  run_options o = {INPUT_FULL, 0, 0, 0, NULL, NULL};
  CHECK_EQ_INT(run(gpu, &d, &p, &o, a, NULL), OIDN_ERROR_NONE);
  CHECK_EQ_INT(run(gpu, &d, &p, &o, b, NULL), OIDN_ERROR_NONE);
  o.async = 1;
  CHECK_EQ_INT(run(gpu, &d, &p, &o, c, NULL), OIDN_ERROR_NONE);
  CHECK(memcmp(a, b, count * sizeof(float)) == 0);
  CHECK(memcmp(a, c, count * sizeof(float)) == 0);
  progress_log log = {0, -1, 0.0};
  o.async = 0;
  o.progress = on_progress;
  o.user = &log;
  CHECK_EQ_INT(run(gpu, &d, &p, &o, b, NULL), OIDN_ERROR_NONE);
  printf("progress on CUDA: %d reports, last %.3f\n", log.calls, log.last);
  CHECK(log.calls > 7);
  CHECK(log.last == 1.0);
  CHECK(memcmp(a, b, count * sizeof(float)) == 0);
  progress_log stop = {0, 4, 0.0};
  o.user = &stop;
  CHECK_EQ_INT(run(gpu, &d, &p, &o, b, NULL), OIDN_ERROR_CANCELLED);
  free(a);
  free(b);
  free(c);
  poisson_data_free(&d);
}

/* The gradient scenes: CUDA vs CPU, and relMSE of reconstruction + direct
 * against the reference (as tests/gradient/test_gradient_scenes.c). */
static void run_scenes(OIDNDevice cpu, OIDNDevice gpu)
{
  static const char* const scenes[] = {"cornell", "window", "textured"};
  for (size_t s = 0; s < sizeof scenes / sizeof scenes[0]; ++s) {
    poisson_data d;
    float *reference = NULL, *direct = NULL;
    if (!poisson_scene_load(&d, scenes[s], &reference, &direct)) {
      fprintf(stderr, "%s: not exported (run tests/gpu/export_gradient_testdata.py)\n", scenes[s]);
      ++lull_test_failures;
      continue;
    }
    const size_t count = (size_t)d.width * (size_t)d.height * 3;
    for (int norm = 1; norm <= 2; ++norm) {
      lull_poisson_params p = lull_poisson_default_params();
      p.norm = norm;
      const run_options o = {INPUT_FULL, 0, 0, 0, NULL, NULL};
      float *on_cpu = NULL, *on_gpu = NULL;
      const double diff = compare(cpu, gpu, &d, &p, &o, NULL, &on_cpu, &on_gpu);
      const double tol = norm == 2 ? POISSON_TOL_DCT : POISSON_TOL_L1;
      for (size_t i = 0; i < count; ++i) {
        on_cpu[i] += direct[i];
        on_gpu[i] += direct[i];
      }
      const size_t w = (size_t)d.width, h = (size_t)d.height;
      const double rel_cpu = lull_metric_rel_mse(on_cpu, reference, w, h, 3);
      const double rel_gpu = lull_metric_rel_mse(on_gpu, reference, w, h, 3);
      printf("%-10s L%d CUDA vs CPU: max rel %.2e (tolerance %.0e), relMSE CUDA %.6f CPU %.6f\n",
             scenes[s], norm, diff, tol, rel_gpu, rel_cpu);
      CHECK(diff <= tol);
      /* the same quality: relMSE within 0.1% of the CPU's */
      CHECK(fabs(rel_gpu - rel_cpu) <= 1e-3 * rel_cpu);
      free(on_cpu);
      free(on_gpu);
    }
    free(reference);
    free(direct);
    poisson_data_free(&d);
  }
}

/* `quick` (for memcheck and initcheck): without the scenes and 1280x720;
 * `race` (for racecheck, which instruments every shared-memory access and
 * did not finish `quick` in 200 s): the cases with at most 3 IRLS steps
 * and CG iterations, and the 10000-pixel row. */
int main(int argc, char** argv)
{
  const int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
  const int race = argc > 1 && strcmp(argv[1], "race") == 0;
  OIDNDevice cpu = gpu_new_device(OIDN_DEVICE_TYPE_CPU);
  OIDNDevice gpu = gpu_new_device(OIDN_DEVICE_TYPE_CUDA);
  if (!gpu) {
    fprintf(stderr, "cuda_poisson: no CUDA device\n");
    return 1;
  }
  run_cases(cpu, gpu, race ? 3 : 0);
  if (!race) {
    run_half(cpu, gpu);
    run_execution(gpu);
  }
  if (!quick && !race)
    run_scenes(cpu, gpu);
  run_large(cpu, gpu, quick || race);
  oidnReleaseDevice(cpu);
  oidnReleaseDevice(gpu);
  return lull_test_result("cuda_poisson");
}
