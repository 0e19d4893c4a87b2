/* Filters through the API (the filter mathematics is tested elsewhere):
 * finite output also from NaN/Inf input, RT's rules for combining inputs
 * and modes, progress reporting and cancellation, asynchronous execution. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

enum { W = 21, H = 19, N = W * H };

/* Sets the RT images named in `inputs` ("c", "a", "n": colour, albedo,
 * normal) and an output, then commits; returns the device's error. */
static OIDNError rt_commit(OIDNDevice device, OIDNFilter filter, const char* inputs,
                           float* color, float* albedo, float* normal, float* output)
{
  oidnUnsetFilterImage(filter, "color");
  oidnUnsetFilterImage(filter, "albedo");
  oidnUnsetFilterImage(filter, "normal");
  if (strchr(inputs, 'c'))
    oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  if (strchr(inputs, 'a'))
    oidnSetSharedFilterImage(filter, "albedo", albedo, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  if (strchr(inputs, 'n'))
    oidnSetSharedFilterImage(filter, "normal", normal, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  return oidnGetDeviceError(device, NULL);
}

static void rt_rules(OIDNDevice device)
{
  float* color = api_noisy_image(W, H, 3, 0.3f, 3);
  float* albedo = api_albedo_image(W, H);
  float* normal = api_normal_image(W, H);
  float* output = api_filled(3 * N, 0.0f);
  OIDNFilter filter = oidnNewFilter(device, "RT");

  /* legal combinations, in LDR and HDR */
  static const char* const legal[] = {"c", "ca", "can", "a", "n"};
  for (size_t i = 0; i < sizeof legal / sizeof legal[0]; ++i)
    for (int hdr = 0; hdr < 2; ++hdr) {
      oidnSetFilterBool(filter, "hdr", hdr);
      const OIDNError code = rt_commit(device, filter, legal[i], color, albedo, normal, output);
      /* prefiltering an auxiliary image is LDR only */
      const int aux_only = strchr(legal[i], 'c') == NULL;
      CHECK_EQ_INT(code, aux_only && hdr ? OIDN_ERROR_INVALID_OPERATION : OIDN_ERROR_NONE);
      if (code == OIDN_ERROR_NONE) {
        for (int k = 0; k < 3 * N; ++k)
          output[k] = NAN;
        oidnExecuteFilter(filter);
        EXPECT_OK(device);
        CHECK(lull_test_all_finite(output, 3 * N));
      }
    }
  oidnSetFilterBool(filter, "hdr", false);
  /* normal needs albedo; aux alone is one image */
  CHECK_EQ_INT(rt_commit(device, filter, "cn", color, albedo, normal, output),
               OIDN_ERROR_INVALID_OPERATION);
  CHECK_EQ_INT(rt_commit(device, filter, "an", color, albedo, normal, output),
               OIDN_ERROR_INVALID_OPERATION);
  /* nothing to filter */
  CHECK_EQ_INT(rt_commit(device, filter, "", color, albedo, normal, output),
               OIDN_ERROR_INVALID_OPERATION);
  rt_commit(device, filter, "", color, albedo, normal, output);
  oidnCommitFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "input image not specified");
  /* no output */
  rt_commit(device, filter, "c", color, albedo, normal, output);
  oidnUnsetFilterImage(filter, "output");
  oidnCommitFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "output image not specified");
  /* hdr and srgb together */
  oidnSetFilterBool(filter, "hdr", true);
  oidnSetFilterBool(filter, "srgb", true);
  CHECK_EQ_INT(rt_commit(device, filter, "c", color, albedo, normal, output),
               OIDN_ERROR_INVALID_OPERATION);
  oidnSetFilterBool(filter, "hdr", false);
  CHECK_EQ_INT(rt_commit(device, filter, "c", color, albedo, normal, output), OIDN_ERROR_NONE);
  /* srgb is not for normals */
  CHECK_EQ_INT(rt_commit(device, filter, "n", color, albedo, normal, output),
               OIDN_ERROR_INVALID_OPERATION);
  oidnSetFilterBool(filter, "srgb", false);

  /* quality, as OIDN's setter: 4, 5, 6, and 0 stored as 6; any other mode
   * is INVALID_ARGUMENT at once, and the filter keeps its mode and stays
   * committed (lull had stored it and failed the next commit, the filter
   * uncommitted meanwhile; a review helper's finding) */
  static const struct { int value, stored; } qualities[] = {
      {OIDN_QUALITY_FAST, OIDN_QUALITY_FAST}, {OIDN_QUALITY_BALANCED, OIDN_QUALITY_BALANCED},
      {OIDN_QUALITY_DEFAULT, OIDN_QUALITY_HIGH}, {OIDN_QUALITY_HIGH, OIDN_QUALITY_HIGH}};
  for (size_t i = 0; i < sizeof qualities / sizeof qualities[0]; ++i) {
    oidnSetFilterInt(filter, "quality", qualities[i].value);
    EXPECT_OK(device);
    CHECK_EQ_INT(oidnGetFilterInt(filter, "quality"), qualities[i].stored);
    CHECK_EQ_INT(rt_commit(device, filter, "can", color, albedo, normal, output), OIDN_ERROR_NONE);
  }
  static const int refused[] = {1, 2, 3, 7, -1, 1000};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
    oidnSetFilterInt(filter, "quality", refused[i]);
    EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "invalid filter quality mode");
    CHECK_EQ_INT(oidnGetFilterInt(filter, "quality"), OIDN_QUALITY_HIGH);
    oidnExecuteFilter(filter); /* still committed */
    EXPECT_OK(device);
  }

  /* sizes and channel counts must match */
  oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "albedo", albedo, OIDN_FORMAT_FLOAT3, W - 1, H, 0, 0, 0);
  oidnCommitFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "image size mismatch");
  oidnUnsetFilterImage(filter, "albedo");
  oidnUnsetFilterImage(filter, "normal");
  oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H - 1, 0, 0, 0);
  oidnCommitFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "image size mismatch");
  oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT2, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  /* mixed formats are fine: float colour, half albedo */
  unsigned short* h_albedo = malloc(3 * N * sizeof *h_albedo);
  api_to_half(albedo, h_albedo, 3 * N);
  oidnSetSharedFilterImage(filter, "albedo", h_albedo, OIDN_FORMAT_HALF3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  CHECK(lull_test_all_finite(output, 3 * N));

  free(h_albedo);
  oidnReleaseFilter(filter);
  free(color);
  free(albedo);
  free(normal);
  free(output);
}

/* Every filter type gives finite output, also when the input holds NaN and
 * infinities, and the Gaussian checks its size rule too. */
static void finite_output(OIDNDevice device)
{
  static const char* const types[] = {"RT", "ATrous", "Gaussian", "RTLightmap"};
  float* color = api_noisy_image(W, H, 3, 0.5f, 8);
  color[3 * 5 + 1] = NAN;
  color[3 * 40] = INFINITY;
  color[3 * 41 + 2] = -INFINITY;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    OIDNFilter filter = oidnNewFilter(device, types[i]);
    float* output = api_filled(3 * N, NAN);
    oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    if (strcmp(types[i], "RT") == 0)
      oidnSetFilterBool(filter, "hdr", true);
    oidnCommitFilter(filter);
    oidnExecuteFilter(filter);
    EXPECT_OK(device);
    if (!lull_test_all_finite(output, 3 * N))
      fprintf(stderr, "%s: non-finite output\n", types[i]);
    CHECK(lull_test_all_finite(output, 3 * N));
    /* size mismatch: caught at commit */
    oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H - 2, 0, 0, 0);
    oidnCommitFilter(filter);
    EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "image size mismatch");
    free(output);
    oidnReleaseFilter(filter);
  }
  free(color);
}

/* Non-finite albedo and normal pixels do not spread into the output. */
static void non_finite_guides(OIDNDevice device)
{
  float* color = api_noisy_image(W, H, 3, 0.5f, 9);
  float* albedo = api_albedo_image(W, H);
  float* normal = api_normal_image(W, H);
  float* output = api_filled(3 * N, NAN);
  albedo[3 * 7] = NAN;
  albedo[3 * 60 + 1] = INFINITY;
  normal[3 * 8 + 2] = NAN;
  normal[3 * 70] = -INFINITY;
  for (int i = 0; i < 3; ++i)
    normal[3 * 100 + i] = 0.0f; /* zero length */
  static const char* const types[] = {"RT", "ATrous"};
  for (size_t t = 0; t < 2; ++t) {
    OIDNFilter filter = oidnNewFilter(device, types[t]);
    oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(filter, "albedo", albedo, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(filter, "normal", normal, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnCommitFilter(filter);
    oidnExecuteFilter(filter);
    EXPECT_OK(device);
    if (!lull_test_all_finite(output, 3 * N))
      fprintf(stderr, "%s: non-finite output from non-finite guides\n", types[t]);
    CHECK(lull_test_all_finite(output, 3 * N));
    oidnReleaseFilter(filter);
  }
  free(color);
  free(albedo);
  free(normal);
  free(output);
}

/* OIDN's sanitization (oidnTest "image sanitization"): RT with one value
 * everywhere as colour, albedo and normal (NaN, +-Inf, -100, 10, -2) gives
 * a finite output in [0, FLT_MAX] (HDR) or [0, 1] (LDR); RTLightmap's
 * output is never negative either.  The colour's negative values read as
 * 0, as OIDN's: a negative pixel changes nothing that a 0 there would not
 * (explicit inputScale: the automatic one counts every value). */
static int all_within(const float* v, size_t n, float lo, float hi)
{
  for (size_t i = 0; i < n; ++i)
    if (!isfinite(v[i]) || v[i] < lo || v[i] > hi)
      return 0;
  return 1;
}

static void sanitization(OIDNDevice device)
{
  static const float values[] = {NAN, INFINITY, -INFINITY, -100.0f, 10.0f, -2.0f};
  float* input = api_filled(3 * N, 0.0f);
  float* output = api_filled(3 * N, 0.0f);
  for (int hdr = 0; hdr < 2; ++hdr)
    for (size_t k = 0; k < sizeof values / sizeof values[0]; ++k) {
      for (size_t i = 0; i < 3 * N; ++i) {
        input[i] = values[k];
        output[i] = -1000.0f;
      }
      OIDNFilter filter = oidnNewFilter(device, "RT");
      oidnSetFilterBool(filter, "hdr", hdr);
      CHECK_EQ_INT(rt_commit(device, filter, "can", input, input, input, output), OIDN_ERROR_NONE);
      oidnExecuteFilter(filter);
      EXPECT_OK(device);
      if (!all_within(output, 3 * N, 0.0f, hdr ? FLT_MAX : 1.0f)) {
        fprintf(stderr, "RT hdr=%d, input %g: output out of range\n", hdr, (double)values[k]);
        CHECK(0);
      }
      oidnReleaseFilter(filter);
      filter = oidnNewFilter(device, "RTLightmap");
      oidnSetSharedFilterImage(filter, "color", input, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
      oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
      oidnCommitFilter(filter);
      oidnExecuteFilter(filter);
      EXPECT_OK(device);
      CHECK(all_within(output, 3 * N, 0.0f, FLT_MAX));
      oidnReleaseFilter(filter);
    }
  /* a negative pixel is a 0 pixel */
  float* color = api_noisy_image(W, H, 3, 0.5f, 10);
  float* albedo = api_albedo_image(W, H);
  float* normal = api_normal_image(W, H);
  float* zeroed = api_filled(3 * N, 0.0f);
  for (int pass = 0; pass < 2; ++pass) {
    float* out = pass ? output : zeroed;
    color[3 * 50 + 1] = pass ? -5.0f : 0.0f;
    color[3 * 51] = pass ? -1e30f : 0.0f;
    OIDNFilter filter = oidnNewFilter(device, "RT");
    oidnSetFilterBool(filter, "hdr", true);
    oidnSetFilterFloat(filter, "inputScale", 1.0f);
    CHECK_EQ_INT(rt_commit(device, filter, "can", color, albedo, normal, out), OIDN_ERROR_NONE);
    oidnExecuteFilter(filter);
    EXPECT_OK(device);
    oidnReleaseFilter(filter);
  }
  CHECK(lull_test_max_abs_diff(output, zeroed, 3 * N) == 0.0);
  CHECK(all_within(output, 3 * N, 0.0f, FLT_MAX));
  free(color);
  free(albedo);
  free(normal);
  free(zeroed);
  free(input);
  free(output);
}

/* Filters of one device run from several threads at once: calls are
 * serialised per device and every result equals the single-threaded one. */
typedef struct concurrent_job
{
  OIDNDevice device;
  float* color;
  const float* reference;
  int wrong;
} concurrent_job;

static void* concurrent_run(void* arg)
{
  concurrent_job* job = arg;
  OIDNFilter filter = oidnNewFilter(job->device, "ATrous");
  float* output = api_filled(3 * N, 0.0f);
  oidnSetSharedFilterImage(filter, "color", job->color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  for (int i = 0; i < 10; ++i) {
    memset(output, 0, 3 * N * sizeof(float));
    oidnExecuteFilter(filter);
    if (oidnGetDeviceError(job->device, NULL) != OIDN_ERROR_NONE ||
        lull_test_max_abs_diff(output, job->reference, 3 * N) != 0.0)
      ++job->wrong;
  }
  oidnReleaseFilter(filter);
  free(output);
  return NULL;
}

static void concurrent(OIDNDevice device)
{
  float* color = api_noisy_image(W, H, 3, 0.3f, 23);
  float* reference = api_run_color(device, "ATrous", color, W, H);
  concurrent_job jobs[3];
  pthread_t threads[3];
  for (int t = 0; t < 3; ++t) {
    jobs[t] = (concurrent_job){device, color, reference, 0};
    CHECK(pthread_create(&threads[t], NULL, concurrent_run, &jobs[t]) == 0);
  }
  for (int t = 0; t < 3; ++t) {
    pthread_join(threads[t], NULL);
    CHECK_EQ_INT(jobs[t].wrong, 0);
  }
  free(reference);
  free(color);
}

/* -- progress and cancellation ------------------------------------------------ */

typedef struct progress_log
{
  int calls;
  int cancel_at;     /* return false on this call (1-based); 0 never */
  int calls_after_cancel;
  int out_of_range;
  int decreasing;
  double last;
} progress_log;

static bool monitor(void* user, double n)
{
  progress_log* log = user;
  if (log->cancel_at > 0 && log->calls >= log->cancel_at)
    ++log->calls_after_cancel;
  ++log->calls;
  if (!(n >= 0.0 && n <= 1.0))
    ++log->out_of_range;
  if (log->calls > 1 && n < log->last)
    ++log->decreasing;
  log->last = n;
  return !(log->cancel_at > 0 && log->calls >= log->cancel_at);
}

/* Cancelling (returning false) fails the execution with CANCELLED and
 * leaves the output as it was: lull writes the output only once the whole
 * filter has run, so a cancelled in-place run does not lose the input. */
static void progress(OIDNDevice device, const char* type)
{
  float* color = api_noisy_image(W, H, 3, 0.3f, 13);
  float* output = api_filled(3 * N, 42.0f);
  OIDNFilter filter = oidnNewFilter(device, type);
  oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  progress_log log;
  memset(&log, 0, sizeof log);
  oidnSetFilterProgressMonitorFunction(filter, monitor, &log);
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  CHECK(log.calls >= 2);
  CHECK_EQ_INT(log.out_of_range, 0);
  CHECK_EQ_INT(log.decreasing, 0);
  CHECK(log.last == 1.0);
  const int full = log.calls;

  /* cancel at the first report and at the one before the end */
  const int cancel_points[] = {1, full - 1};
  for (int k = 0; k < 2; ++k) {
    float* before = api_filled(3 * N, 42.0f);
    memcpy(output, before, 3 * N * sizeof(float));
    memset(&log, 0, sizeof log);
    log.cancel_at = cancel_points[k];
    oidnExecuteFilter(filter);
    EXPECT_ERROR_MSG(device, OIDN_ERROR_CANCELLED, "cancel");
    CHECK_EQ_INT(log.calls, cancel_points[k]);
    CHECK_EQ_INT(log.calls_after_cancel, 0);
    CHECK(memcmp(output, before, 3 * N * sizeof(float)) == 0);
    free(before);
  }

  /* cancelled in place: the input survives */
  float* inplace = malloc(3 * N * sizeof(float));
  memcpy(inplace, color, 3 * N * sizeof(float));
  oidnSetSharedFilterImage(filter, "color", inplace, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", inplace, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  memset(&log, 0, sizeof log);
  log.cancel_at = 2;
  oidnExecuteFilter(filter);
  EXPECT_ERROR(device, OIDN_ERROR_CANCELLED);
  CHECK(memcmp(inplace, color, 3 * N * sizeof(float)) == 0);

  /* asynchronous: the cancellation surfaces at the next sync */
  memset(&log, 0, sizeof log);
  log.cancel_at = 1;
  oidnExecuteFilterAsync(filter);
  oidnSyncDevice(device);
  EXPECT_ERROR(device, OIDN_ERROR_CANCELLED);
  oidnSyncDevice(device); /* reported once */
  EXPECT_OK(device);

  /* a blocking execution or copy synchronises: it raises what an
   * asynchronous run parked, though it succeeded itself; releases wait
   * without raising it (OIDN's semantics) */
  OIDNBuffer spare = oidnNewBuffer(device, 64);
  unsigned char bytes[64];
  /* (a queued run keeps the monitor it was queued with: the blocking run
   * gets another one, which does not cancel) */
  progress_log cancelling;
  memset(&cancelling, 0, sizeof cancelling);
  cancelling.cancel_at = 1;
  oidnSetFilterProgressMonitorFunction(filter, monitor, &cancelling);
  oidnExecuteFilterAsync(filter);
  EXPECT_OK(device); /* parked, not raised */
  memset(&log, 0, sizeof log);
  oidnSetFilterProgressMonitorFunction(filter, monitor, &log);
  oidnExecuteFilter(filter);
  EXPECT_ERROR(device, OIDN_ERROR_CANCELLED);
  CHECK(log.calls >= 2); /* the blocking run itself ran to the end */
  CHECK_EQ_INT(cancelling.calls, 1);
  oidnSyncDevice(device);
  EXPECT_OK(device);
  memset(&log, 0, sizeof log);
  log.cancel_at = 1;
  oidnExecuteFilterAsync(filter);
  oidnReadBuffer(spare, 0, sizeof bytes, bytes);
  EXPECT_ERROR(device, OIDN_ERROR_CANCELLED);
  memset(&log, 0, sizeof log);
  log.cancel_at = 1;
  oidnExecuteFilterAsync(filter);
  OIDNBuffer gone = oidnNewBuffer(device, 16);
  oidnReleaseBuffer(gone);
  EXPECT_OK(device);
  oidnWriteBufferAsync(spare, 0, sizeof bytes, bytes); /* asynchronous: no sync */
  EXPECT_OK(device);
  oidnSyncDevice(device);
  EXPECT_ERROR(device, OIDN_ERROR_CANCELLED);
  /* a commit after a parameter change waits too, and raises it without
   * committing (as OIDN's commit does) */
  memset(&log, 0, sizeof log);
  log.cancel_at = 1;
  oidnExecuteFilterAsync(filter);
  EXPECT_OK(device);
  const int gaussian = strcmp(type, "Gaussian") == 0; /* it has no hdr */
  const float sigma = gaussian ? oidnGetFilterFloat(filter, "sigma") : 0.0f;
  const bool hdr = gaussian ? false : oidnGetFilterBool(filter, "hdr");
  if (gaussian)
    oidnSetFilterFloat(filter, "sigma", 2.0f * sigma);
  else
    oidnSetFilterBool(filter, "hdr", !hdr);
  oidnCommitFilter(filter);
  EXPECT_ERROR(device, OIDN_ERROR_CANCELLED);
  oidnCommitFilter(filter);
  EXPECT_OK(device); /* raised once */
  if (gaussian)
    oidnSetFilterFloat(filter, "sigma", sigma);
  else
    oidnSetFilterBool(filter, "hdr", hdr);
  oidnCommitFilter(filter);
  EXPECT_OK(device);
  /* one after new image pointers alone commits, and the next sync raises
   * it: the next frame of an interactive application runs (it had been
   * refused too; a review helper's finding) */
  float* next = malloc(3 * N * sizeof(float));
  memcpy(next, color, 3 * N * sizeof(float));
  memset(&log, 0, sizeof log);
  log.cancel_at = 1;
  oidnExecuteFilterAsync(filter);
  oidnSetSharedFilterImage(filter, "color", next, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", next, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  EXPECT_OK(device);
  log.cancel_at = 0;
  oidnExecuteFilterAsync(filter);
  EXPECT_OK(device);
  oidnSyncDevice(device);
  EXPECT_ERROR(device, OIDN_ERROR_CANCELLED);
  CHECK(memcmp(next, color, 3 * N * sizeof(float)) != 0); /* the second frame ran */
  oidnSetSharedFilterImage(filter, "color", inplace, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", inplace, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  EXPECT_OK(device);
  free(next);
  oidnReleaseBuffer(spare);

  /* removing the monitor */
  oidnSetFilterProgressMonitorFunction(filter, NULL, NULL);
  memset(&log, 0, sizeof log);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  CHECK_EQ_INT(log.calls, 0);
  CHECK(memcmp(inplace, color, 3 * N * sizeof(float)) != 0); /* it ran */

  oidnReleaseFilter(filter);
  free(inplace);
  free(color);
  free(output);
}

/* Asynchronous execution gives the synchronous result once synced; work
 * queued on a device runs in order. */
static void async_execution(OIDNDevice device)
{
  float* color = api_noisy_image(W, H, 3, 0.3f, 17);
  float* reference = api_run_color(device, "ATrous", color, W, H);
  OIDNBuffer in = oidnNewBuffer(device, 12 * N);
  OIDNBuffer out = oidnNewBuffer(device, 12 * N);
  OIDNFilter filter = oidnNewFilter(device, "ATrous");
  oidnSetFilterImage(filter, "color", in, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetFilterImage(filter, "output", out, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  float* result = api_filled(3 * N, -1.0f);
  oidnWriteBufferAsync(in, 0, 12 * N, color);
  oidnExecuteFilterAsync(filter);
  oidnReadBufferAsync(out, 0, 12 * N, result);
  oidnSyncDevice(device);
  EXPECT_OK(device);
  CHECK(reference && lull_test_max_abs_diff(result, reference, 3 * N) == 0.0);
  /* releasing with work queued waits for it */
  oidnExecuteFilterAsync(filter);
  oidnReleaseFilter(filter);
  oidnReleaseBuffer(in);
  oidnReleaseBuffer(out);
  EXPECT_OK(device);
  free(result);
  free(reference);
  free(color);
}

/* -- the CPU device's worker thread ------------------------------------------ */

/* A monitor that holds a queued run at its first report until the test
 * opens the gate, and calls the API of the run's own device from the
 * worker thread (what it does is `mode`). */
typedef struct gate
{
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int open, reached, calls, version;
  int mode;
  OIDNDevice device;
  OIDNFilter filter;
} gate;

enum { GATE_ONLY, GATE_QUERY, GATE_SYNC, GATE_RELEASE };

static bool gated(void* user, double done)
{
  (void)done;
  gate* g = user;
  pthread_mutex_lock(&g->mutex);
  const int first = g->calls++ == 0;
  if (first) {
    g->reached = 1;
    pthread_cond_broadcast(&g->cond);
    while (!g->open)
      pthread_cond_wait(&g->cond, &g->mutex);
  }
  pthread_mutex_unlock(&g->mutex);
  if (first && g->mode == GATE_QUERY)
    g->version = oidnGetDeviceInt(g->device, "version"); /* needs the device's lock */
  else if (first && g->mode == GATE_SYNC)
    oidnSyncDevice(g->device); /* does not wait for its own run */
  else if (first && g->mode == GATE_RELEASE)
    oidnReleaseFilter(g->filter); /* the run holds what it reads */
  return true;
}

static void gate_wait_reached(gate* g)
{
  pthread_mutex_lock(&g->mutex);
  while (!g->reached)
    pthread_cond_wait(&g->cond, &g->mutex);
  pthread_mutex_unlock(&g->mutex);
}

static void gate_open(gate* g)
{
  pthread_mutex_lock(&g->mutex);
  g->open = 1;
  pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->mutex);
}

/* Opens the gate once the run reached it, from another thread: the main
 * thread is then inside oidnSyncDevice, waiting for the queue. */
static void* open_later(void* arg)
{
  gate* g = arg;
  gate_wait_reached(g);
  gate_open(g);
  return NULL;
}

/* An asynchronous execution on the CPU device returns while its run is
 * still held at the monitor's first report (it runs on the device's
 * worker thread); once synced, the output is the blocking run's.  The
 * monitor of a queued run may call its own device while the application
 * waits in oidnSyncDevice (the waiting thread lets the device's lock go),
 * may synchronise the device (it does not wait for its own run) and may
 * release the filter (the run keeps it); an application that releases
 * the filter and the device without syncing still gets its output. */
static void worker_runs(void)
{
  float* color = api_noisy_image(W, H, 3, 0.3f, 23);
  OIDNDevice device = api_cpu_device();
  float* reference = api_run_color(device, "RT", color, W, H);
  for (int mode = GATE_ONLY; mode <= GATE_RELEASE; ++mode) {
    float* output = api_filled(3 * N, -1.0f);
    OIDNFilter filter = oidnNewFilter(device, "RT");
    oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    gate g;
    memset(&g, 0, sizeof g);
    pthread_mutex_init(&g.mutex, NULL);
    pthread_cond_init(&g.cond, NULL);
    g.mode = mode;
    g.device = device;
    g.filter = filter;
    oidnSetFilterProgressMonitorFunction(filter, gated, &g);
    oidnCommitFilter(filter);
    oidnExecuteFilterAsync(filter);
    EXPECT_OK(device);
    gate_wait_reached(&g); /* the run started and waits, but the call returned */
    CHECK(output[0] == -1.0f && output[3 * N - 1] == -1.0f);
    pthread_t opener;
    CHECK(pthread_create(&opener, NULL, open_later, &g) == 0);
    oidnSyncDevice(device);
    pthread_join(opener, NULL);
    EXPECT_OK(device);
    CHECK(g.calls >= 2);
    CHECK(reference && lull_test_max_abs_diff(output, reference, 3 * N) == 0.0);
    if (mode == GATE_QUERY)
      CHECK_EQ_INT(g.version, OIDN_VERSION);
    if (mode != GATE_RELEASE)
      oidnReleaseFilter(filter);
    pthread_cond_destroy(&g.cond);
    pthread_mutex_destroy(&g.mutex);
    free(output);
  }
  /* released without a sync: the device's last release waits for the run */
  float* output = api_filled(3 * N, -1.0f);
  OIDNFilter filter = oidnNewFilter(device, "RT");
  oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  oidnExecuteFilterAsync(filter);
  oidnReleaseFilter(filter);
  oidnReleaseDevice(device);
  CHECK(reference && lull_test_max_abs_diff(output, reference, 3 * N) == 0.0);
  free(output);
  free(reference);
  free(color);
}

/* -- a monitor that changes the filter while it runs -------------------------- */

/* The progress monitor runs with the device's lock held (it is recursive)
 * and may call the API.  What it changes applies to later runs: the run in
 * progress keeps its images' buffers, its parameters, its monitor and the
 * filter itself.  (Under AddressSanitizer and valgrind these runs once
 * wrote into a freed buffer and read a freed filter.) */
typedef struct meddler
{
  OIDNFilter filter;
  int mode, calls;
  float* other; /* a host image to swap the output for */
} meddler;

enum { SWAP_OUTPUT, UNSET_MONITOR, RELEASE_FILTER };

static bool meddle(void* user, double done)
{
  (void)done;
  meddler* m = user;
  if (++m->calls != 2)
    return true;
  if (m->mode == SWAP_OUTPUT)
    oidnSetSharedFilterImage(m->filter, "output", m->other, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  else if (m->mode == UNSET_MONITOR)
    oidnSetFilterProgressMonitorFunction(m->filter, NULL, NULL);
  else
    oidnReleaseFilter(m->filter); /* the last reference but the run's */
  return true;
}

static void monitor_changes_the_filter(void)
{
  float* color = api_noisy_image(W, H, 3, 0.3f, 17);
  float* other = api_filled(3 * N, -1.0f);
  for (int mode = SWAP_OUTPUT; mode <= RELEASE_FILTER; ++mode) {
    OIDNDevice device = api_cpu_device();
    OIDNFilter filter = oidnNewFilter(device, "ATrous");
    OIDNBuffer out = oidnNewBuffer(device, 3 * N * sizeof(float));
    oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetFilterImage(filter, "output", out, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    meddler m = {filter, mode, 0, other};
    oidnSetFilterProgressMonitorFunction(filter, meddle, &m);
    oidnCommitFilter(filter);
    oidnReleaseBuffer(out); /* the filter holds the output's only reference */
    if (mode == RELEASE_FILTER)
      oidnReleaseDevice(device); /* and the filter the device's */
    oidnExecuteFilter(filter);
    CHECK(m.calls > 2); /* the run went on, with its own monitor */
    if (mode == RELEASE_FILTER)
      continue; /* the run released the filter, and with it the device */
    EXPECT_OK(device);
    m.calls = 0;
    oidnCommitFilter(filter);
    oidnExecuteFilter(filter); /* the changes apply now */
    EXPECT_OK(device);
    if (mode == SWAP_OUTPUT) {
      int written = 0;
      for (size_t i = 0; i < 3 * N; ++i)
        written += other[i] != -1.0f;
      CHECK_EQ_INT(written, (int)(3 * N)); /* the second run wrote the new output */
    } else {
      CHECK_EQ_INT(m.calls, 0); /* no monitor any more */
    }
    oidnReleaseFilter(filter);
    oidnReleaseDevice(device);
  }
  free(other);
  free(color);
}

void api_test_execute(void)
{
  OIDNDevice device = api_cpu_device();
  rt_rules(device);
  finite_output(device);
  non_finite_guides(device);
  sanitization(device);
  concurrent(device);
  progress(device, "RT");
  progress(device, "ATrous");
  progress(device, "Gaussian");
  async_execution(device);
  oidnReleaseDevice(device);
  worker_runs();
  monitor_changes_the_filter();
  EXPECT_OK(NULL);
}
