/* The CUDA à-trous filter against the CPU implementation, run at run time
 * (so tuning of the CPU filter flows through), and the two CUDA schedules
 * against each other:
 *   - baseline (schedule 0) equals the CPU output within 1e-4 relative;
 *   - permuted (schedule 1) equals the baseline bit for bit away from the
 *     border (gpu_atrous_margin) and stays close at the border, where the
 *     mirrored sub-images of Dolp et al. 2024 §3.4/§4.1 change the taps;
 *   - permuted with packedGuides (fp16 colour, oct normals) stays within
 *     fp16 precision of the fp32 permuted result (PACKED_TOLERANCE), also
 *     for colours far outside fp16's range (the packing scale);
 *   - on the test renders, permuted (packed or not) is as close to the
 *     reference as the baseline;
 *   - the automatic input scale: 2^j colour gives 2^j output bit for bit;
 *   - the cached graphs of the library's path equal direct launches;
 *   - the Gaussian filter equals the CPU's.
 * atrous_emulation_test.cu checks the same on the CPU, running the kernels'
 * bodies there. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test_util.h"
#include "half.h"
#include "test_util.h"

/* Border difference of the permuted schedule, mean |perm - base| / mean
 * |base| over the border band (gpu_atrous_margin wide): measured 1e-3 to
 * 5e-3 on an H100 for these scenes (2e-3 on the Cornell render), 4e-2 to
 * 6e-2 for images that are all border (13x9 with 10 levels, 1x37); 0.1
 * flags a broken embedding (a wrong tap moves whole sub-images). */
#define BORDER_TOLERANCE 0.1

/* packedGuides against fp32, mean |packed - fp32| / mean |fp32|: measured
 * 1e-4 to 4e-4 in the CPU emulation of the kernels (fp16 has 4.9e-4
 * relative precision); 2e-3 still flags a wrong packing. */
#define PACKED_TOLERANCE 2e-3

typedef struct config
{
  const char* name;
  int width, height, channels;
  int use_albedo, use_normal, geometry; /* 0 none, 1 depth, 2 position */
  int color_mode, iterations, hdr, srgb, variance_channels;
  float input_scale;
  int poison; /* non-finite values in the inputs */
} config;

static void run_config(OIDNDevice cpu, OIDNDevice gpu, const config* c)
{
  gpu_scene s;
  gpu_scene_make(&s, c->width, c->height, 1234u);
  const size_t n = (size_t)c->width * (size_t)c->height;
  float* color = malloc(n * 4 * sizeof(float));
  float* variance = malloc(n * 3 * sizeof(float));
  gpu_scene_atrous_inputs(&s, c->channels, !c->hdr, c->poison, color, variance);
  gpu_image images[6];
  int ni = 0;
  images[ni++] = (gpu_image){"color", color, c->channels};
  if (c->use_albedo)
    images[ni++] = (gpu_image){"albedo", s.albedo, 3};
  if (c->use_normal)
    images[ni++] = (gpu_image){"normal", s.normal, 3};
  if (c->geometry == 1)
    images[ni++] = (gpu_image){"depth", s.depth, 1};
  if (c->geometry == 2)
    images[ni++] = (gpu_image){"position", s.position, 3};
  if (c->variance_channels)
    images[ni++] = (gpu_image){"variance", variance, c->variance_channels};
  gpu_param params[8] = {
      {"iterations", 0, c->iterations}, {"colorMode", 0, c->color_mode},
      {"hdr", 0, c->hdr},               {"srgb", 0, c->srgb},
      {"inputScale", 1, c->input_scale}, {"schedule", 0, 0},
      {"packedGuides", 0, 0},
  };
  const size_t count = n * (size_t)c->channels;
  float* ref = malloc(count * sizeof(float));
  float* base = malloc(count * sizeof(float));
  float* perm = malloc(count * sizeof(float));
  float* packed = malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) /* poison: every value must be written */
    ref[i] = base[i] = perm[i] = packed[i] = -12345.0f;
  CHECK_EQ_INT(gpu_run_filter(cpu, "ATrous", c->width, c->height, images, ni, c->channels, params,
                              7, ref), OIDN_ERROR_NONE);
  CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", c->width, c->height, images, ni, c->channels, params,
                              7, base), OIDN_ERROR_NONE);
  params[5].value = 1;
  CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", c->width, c->height, images, ni, c->channels, params,
                              7, perm), OIDN_ERROR_NONE);
  params[6].value = 1;
  CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", c->width, c->height, images, ni, c->channels, params,
                              7, packed), OIDN_ERROR_NONE);

  double scale = 0;
  for (size_t i = 0; i < count; ++i)
    scale = fmax(scale, fabs(ref[i]));
  const double rel = gpu_max_rel_diff(base, ref, count, 1e-3 * scale);
  const int margin = gpu_atrous_margin(c->iterations);
  const double interior = gpu_interior_max_abs_diff(perm, base, c->width, c->height,
                                                    c->channels, margin);
  const double border = gpu_border_rel_l1(perm, base, c->width, c->height, c->channels, margin);
  const double packed_rel = gpu_rel_l1(packed, perm, count);
  printf("%-22s baseline vs CPU max rel %.2e | permuted vs baseline: interior max %.1e, "
         "border rel L1 %.2e | packed vs fp32 rel L1 %.2e\n", c->name, rel, interior, border,
         packed_rel);
  CHECK(rel <= 1e-4);
  CHECK(interior <= 0.0); /* -1: no interior; 0: bitwise equal */
  CHECK(lull_test_all_finite(perm, count));
  CHECK(lull_test_all_finite(packed, count));
  CHECK(packed_rel <= PACKED_TOLERANCE);
  CHECK(border <= (interior >= 0.0 ? BORDER_TOLERANCE : GPU_ATROUS_TINY_TOLERANCE));
  if (c->channels == 4) /* alpha passes through unchanged */
    for (size_t i = 0; i < n; i += 97) {
      CHECK_EQ_INT(base[4 * i + 3] == color[4 * i + 3], 1);
      CHECK_EQ_INT(perm[4 * i + 3] == color[4 * i + 3], 1);
      CHECK_EQ_INT(packed[4 * i + 3] == color[4 * i + 3], 1);
    }
  free(ref);
  free(base);
  free(perm);
  free(packed);
  free(color);
  free(variance);
  gpu_scene_free(&s);
}

/* The test renders (exported by export_testdata.py): baseline vs CPU, and
 * both schedules' error against the reference render. */
static void run_render(OIDNDevice cpu, OIDNDevice gpu, const char* scene)
{
  char path[512];
  int w = 0, h = 0, ch = 0, w2, h2, ch2;
  const char* names[4] = {"color", "albedo", "normal", "depth"};
  float* data[4];
  gpu_read_render(scene, data, &w, &h, &ch);
  if (!data[0]) {
    fprintf(stderr, "%s: no exported render (run tests/gpu/export_testdata.py)\n", scene);
    ++lull_test_failures;
    return;
  }
  gpu_image images[4];
  int ni = 0;
  for (int k = 0; k < 4; ++k)
    if (data[k])
      images[ni++] = (gpu_image){names[k], data[k], k == 3 ? 1 : 3};
  const size_t count = (size_t)w * (size_t)h * (size_t)ch;
  float* ref = malloc(count * sizeof(float));
  float* base = malloc(count * sizeof(float));
  float* perm = malloc(count * sizeof(float));
  float* packed = malloc(count * sizeof(float));
  gpu_param params[2] = {{"schedule", 0, 0}, {"packedGuides", 0, 0}};
  CHECK_EQ_INT(gpu_run_filter(cpu, "ATrous", w, h, images, ni, 3, params, 2, ref), OIDN_ERROR_NONE);
  CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", w, h, images, ni, 3, params, 2, base), OIDN_ERROR_NONE);
  params[0].value = 1;
  CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", w, h, images, ni, 3, params, 2, perm), OIDN_ERROR_NONE);
  params[1].value = 1;
  CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", w, h, images, ni, 3, params, 2, packed),
               OIDN_ERROR_NONE);
  double scale = 0;
  for (size_t i = 0; i < count; ++i)
    scale = fmax(scale, fabs(ref[i]));
  const double rel = gpu_max_rel_diff(base, ref, count, 1e-3 * scale);
  const int margin = gpu_atrous_margin(5);
  const double interior = gpu_interior_max_abs_diff(perm, base, w, h, 3, margin);
  printf("%-22s baseline vs CPU max rel %.2e | permuted vs baseline interior max %.1e, border "
         "rel L1 %.2e\n", scene, rel, interior, gpu_border_rel_l1(perm, base, w, h, 3, margin));
  CHECK(rel <= 1e-4);
  CHECK(interior <= 0.0);
  CHECK(gpu_rel_l1(packed, perm, count) <= PACKED_TOLERANCE);
  snprintf(path, sizeof path, "%s/%s_ref_color.pfm", LULL_GPU_TESTDATA_DIR, scene);
  float* truth = gpu_read_pfm(path, &w2, &h2, &ch2);
  if (truth && w2 == w && h2 == h && ch2 == 3) {
    double eb = 0, ep = 0, ek = 0;
    for (size_t i = 0; i < count; ++i) {
      const double t2 = (double)truth[i] * truth[i] + 1e-2;
      eb += ((double)base[i] - truth[i]) * ((double)base[i] - truth[i]) / t2;
      ep += ((double)perm[i] - truth[i]) * ((double)perm[i] - truth[i]) / t2;
      ek += ((double)packed[i] - truth[i]) * ((double)packed[i] - truth[i]) / t2;
    }
    printf("%-22s relMSE vs reference: baseline %.5f, permuted %.5f, packed %.5f\n", scene,
           eb / (double)count, ep / (double)count, ek / (double)count);
    CHECK(ep <= 1.05 * eb);
    CHECK(ek <= 1.05 * eb);
  }
  free(truth);
  free(ref);
  free(base);
  free(perm);
  free(packed);
  for (int k = 0; k < 4; ++k)
    free(data[k]);
}

/* The automatic input scale on the GPU (core/atrous_math.h): for the
 * colour 2^j c every schedule (and packedGuides) gives 2^j times its
 * result for c, bit for bit, from 2^-100 to 2^100; colours of 1e-30 and
 * 1e35 give the CPU's result (before, the CPU clipped at 1e15 and filtered
 * dark renders harder). */
static void run_scale_invariance(OIDNDevice cpu, OIDNDevice gpu)
{
  const int w = 120, h = 90;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 4321u);
  const size_t n = (size_t)w * (size_t)h, count = n * 3;
  float* color = malloc(n * 4 * sizeof(float));
  float* variance = malloc(n * 3 * sizeof(float));
  float* scaled = malloc(count * sizeof(float));
  float* ref = malloc(count * sizeof(float));
  float* out = malloc(count * sizeof(float));
  gpu_scene_atrous_inputs(&s, 3, 0, 0, color, variance);
  gpu_image images[4] = {{"color", scaled, 3}, {"albedo", s.albedo, 3}, {"normal", s.normal, 3},
                         {"depth", s.depth, 1}};
  static const int schedules[3][2] = {{0, 0}, {1, 0}, {1, 1}}; /* schedule, packedGuides */
  static const int exponents[] = {-100, -30, 30, 100};
  int same = 1;
  for (int k = 0; k < 3; ++k) {
    gpu_param params[2] = {{"schedule", 0, schedules[k][0]}, {"packedGuides", 0, schedules[k][1]}};
    memcpy(scaled, color, count * sizeof(float));
    CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", w, h, images, 4, 3, params, 2, ref),
                 OIDN_ERROR_NONE);
    for (size_t e = 0; e < sizeof exponents / sizeof exponents[0]; ++e) {
      const float f = ldexpf(1.0f, exponents[e]);
      for (size_t i = 0; i < count; ++i)
        scaled[i] = color[i] * f;
      CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", w, h, images, 4, 3, params, 2, out),
                   OIDN_ERROR_NONE);
      for (size_t i = 0; i < count; ++i)
        same &= out[i] == ref[i] * f;
    }
  }
  CHECK(same);
  /* the baseline against the CPU, as run_config compares them, and
   * packedGuides against fp32 (at 3e37 the packing bound overflowed); the
   * last, 0 here, is a wide range: the image at 1e-20 but its last four
   * rows, whose magnitudes cap the scale (both backends must pick it) */
  static const float factors[] = {1e-30f, 1e35f, 3e37f, 0.0f};
  double worst = 0.0, worst_packed = 0.0;
  for (size_t e = 0; e < 4; ++e) {
    const float f = factors[e];
    for (size_t i = 0; i < count; ++i)
      scaled[i] = color[i] * (f != 0.0f ? f : (i / 3 / (size_t)w >= (size_t)h - 4 ? 1.0f : 1e-20f));
    gpu_param params[2] = {{"schedule", 0, 0}, {"packedGuides", 0, 0}};
    CHECK_EQ_INT(gpu_run_filter(cpu, "ATrous", w, h, images, 4, 3, params, 2, ref),
                 OIDN_ERROR_NONE);
    CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", w, h, images, 4, 3, params, 2, out),
                 OIDN_ERROR_NONE);
    double scale = 0;
    for (size_t i = 0; i < count; ++i)
      scale = fmax(scale, fabs(ref[i]));
    worst = fmax(worst, gpu_max_rel_diff(out, ref, count, 1e-3 * scale));
    CHECK(scale > 0.0 && lull_test_all_finite(out, count));
    params[0].value = 1;
    CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", w, h, images, 4, 3, params, 2, ref),
                 OIDN_ERROR_NONE);
    params[1].value = 1;
    CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", w, h, images, 4, 3, params, 2, out),
                 OIDN_ERROR_NONE);
    worst_packed = fmax(worst_packed, gpu_rel_l1(out, ref, count));
  }
  printf("%-22s 2^j colour gives 2^j output bit for bit: %s; x1e-30, x1e35, x3e37, 1e-20..1 "
         "baseline vs CPU max rel %.2e, packed vs fp32 rel L1 %.2e\n", "automatic scale",
         same ? "yes" : "NO",
         worst, worst_packed);
  CHECK(worst <= 1e-4);
  CHECK(worst_packed <= PACKED_TOLERANCE);
  free(color);
  free(variance);
  free(scaled);
  free(ref);
  free(out);
  gpu_scene_free(&s);
}

/* Unaligned float inputs (2 bytes into their buffers) go to the prepare
 * kernel's generic variant (atrous_prepare.cuh, prepare_inputs_float),
 * which must give exactly what the float variant gives for the same
 * values; the CPU emulation checks the choice itself. */
static void run_unaligned(OIDNDevice gpu)
{
  const int w = 150, h = 97;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 99u);
  const size_t n = (size_t)w * (size_t)h;
  float* color = malloc(n * 4 * sizeof(float));
  float* variance = malloc(n * 3 * sizeof(float));
  gpu_scene_atrous_inputs(&s, 3, 0, 1, color, variance);
  gpu_image images[4] = {{"color", color, 3}, {"albedo", s.albedo, 3}, {"normal", s.normal, 3},
                         {"depth", s.depth, 1}};
  float* aligned = malloc(n * 3 * sizeof(float));
  float* unaligned = malloc(n * 3 * sizeof(float));
  for (int packed = 0; packed < 2; ++packed) {
    gpu_param params[2] = {{"schedule", 0, 1}, {"packedGuides", 0, packed}};
    CHECK_EQ_INT(gpu_run_filter_at(gpu, "ATrous", w, h, images, 4, 3, params, 2, aligned, 0),
                 OIDN_ERROR_NONE);
    CHECK_EQ_INT(gpu_run_filter_at(gpu, "ATrous", w, h, images, 4, 3, params, 2, unaligned, 2),
                 OIDN_ERROR_NONE);
    CHECK_EQ_INT(memcmp(aligned, unaligned, n * 3 * sizeof(float)), 0);
  }
  printf("%-22s output equal to the aligned inputs' bit for bit\n", "unaligned inputs");
  free(aligned);
  free(unaligned);
  free(color);
  free(variance);
  gpu_scene_free(&s);
}

/* A device buffer holding `bytes` of data. */
static OIDNBuffer new_filled_buffer(OIDNDevice device, const void* data, size_t bytes)
{
  OIDNBuffer b = oidnNewBuffer(device, bytes);
  oidnWriteBuffer(b, 0, bytes, data);
  return b;
}

/* The output of ATrous (schedule and packedGuides as given; the CPU
 * device ignores them) for colour `color` (bytes of `format`, compact)
 * with the scene's albedo, normal and depth, into out: in place (output
 * = the colour buffer) or into a buffer of its own. */
static int run_color_buffer(OIDNDevice device, const gpu_scene* s, OIDNFormat format,
                            size_t pixel_bytes, const void* color, int schedule, int packed,
                            int in_place, void* out)
{
  const size_t w = (size_t)s->width, h = (size_t)s->height, n = w * h;
  const size_t bytes = n * pixel_bytes;
  OIDNBuffer cb = new_filled_buffer(device, color, bytes);
  OIDNBuffer guides[3] = {new_filled_buffer(device, s->albedo, n * 3 * sizeof(float)),
                          new_filled_buffer(device, s->normal, n * 3 * sizeof(float)),
                          new_filled_buffer(device, s->depth, n * sizeof(float))};
  OIDNBuffer ob = in_place ? cb : oidnNewBuffer(device, bytes);
  OIDNFilter f = oidnNewFilter(device, "ATrous");
  oidnSetFilterImage(f, "color", cb, format, w, h, 0, 0, 0);
  oidnSetFilterImage(f, "albedo", guides[0], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  oidnSetFilterImage(f, "normal", guides[1], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  oidnSetFilterImage(f, "depth", guides[2], OIDN_FORMAT_FLOAT, w, h, 0, 0, 0);
  oidnSetFilterImage(f, "output", ob, format, w, h, 0, 0, 0);
  oidnSetFilterInt(f, "iterations", 3);
  oidnSetFilterInt(f, "schedule", schedule);
  oidnSetFilterBool(f, "packedGuides", packed);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  oidnReadBuffer(ob, 0, bytes, out);
  const int code = gpu_device_error(device, "ATrous");
  oidnReleaseFilter(f);
  if (!in_place)
    oidnReleaseBuffer(ob);
  oidnReleaseBuffer(cb);
  for (int k = 0; k < 3; ++k)
    oidnReleaseBuffer(guides[k]);
  return code;
}

static bool keep_going(void* user, double done)
{
  (void)user;
  (void)done;
  return true;
}

/* One execution of filter f (images in device buffers, set by the caller)
 * after writing `color` into buffer cb; the output read into out. */
static void execute_with(OIDNFilter f, OIDNBuffer cb, OIDNBuffer ob, const float* color,
                         float* out, size_t bytes)
{
  oidnWriteBuffer(cb, 0, bytes, color);
  oidnExecuteFilter(f);
  oidnReadBuffer(ob, 0, bytes, out);
}

/* The cached graphs of the library's CUDA path (cuda/atrous_graph.cu):
 * a filter run again on new data in the same buffers, with a changed
 * parameter, and after more filters than the cache holds, gives what the
 * direct launches give (a progress monitor keeps a run off the graphs),
 * bit for bit; asynchronous runs queue behind each other correctly. */
static void run_graph_cache(OIDNDevice gpu)
{
  const int w = 97, h = 61, filters = 6;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 777u);
  const size_t n = (size_t)w * (size_t)h, bytes = n * 3 * sizeof(float);
  float* color[2];
  float* variance = malloc(n * 3 * sizeof(float));
  for (int k = 0; k < 2; ++k) {
    color[k] = malloc(n * 4 * sizeof(float));
    gpu_scene_atrous_inputs(&s, 3, 0, k, color[k], variance);
  }
  float* got = malloc(bytes);
  float* want = malloc(bytes);
  OIDNBuffer guides[3] = {new_filled_buffer(gpu, s.albedo, bytes),
                          new_filled_buffer(gpu, s.normal, bytes),
                          new_filled_buffer(gpu, s.depth, n * sizeof(float))};
  OIDNBuffer cb[6], ob[6];
  OIDNFilter f[6], direct = oidnNewFilter(gpu, "ATrous");
  for (int k = 0; k <= filters; ++k) {
    OIDNFilter g = k < filters ? oidnNewFilter(gpu, "ATrous") : direct;
    const int b = k < filters ? k : 0;
    if (k < filters) {
      cb[k] = oidnNewBuffer(gpu, bytes);
      ob[k] = oidnNewBuffer(gpu, bytes);
      f[k] = g;
    }
    oidnSetFilterImage(g, "color", cb[b], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetFilterImage(g, "albedo", guides[0], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetFilterImage(g, "normal", guides[1], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetFilterImage(g, "depth", guides[2], OIDN_FORMAT_FLOAT, w, h, 0, 0, 0);
    oidnSetFilterImage(g, "output", ob[b], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetFilterInt(g, "iterations", 3 + k % 3);
    oidnSetFilterBool(g, "packedGuides", k % 2);
    oidnCommitFilter(g);
  }
  oidnSetFilterProgressMonitorFunction(direct, keep_going, NULL);
  int same = 1;
  /* every filter on both colours, twice over: graphs made, reused, evicted */
  for (int round = 0; round < 2; ++round)
    for (int k = 0; k < filters; ++k)
      for (int c = 0; c < 2; ++c) {
        execute_with(f[k], cb[k], ob[k], color[c], got, bytes);
        /* the same settings, launched directly, on the same buffers */
        oidnSetFilterInt(direct, "iterations", 3 + k % 3);
        oidnSetFilterBool(direct, "packedGuides", k % 2);
        oidnSetFilterImage(direct, "color", cb[k], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
        oidnSetFilterImage(direct, "output", ob[k], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
        oidnCommitFilter(direct);
        execute_with(direct, cb[k], ob[k], color[c], want, bytes);
        same &= memcmp(got, want, bytes) == 0;
      }
  /* a changed parameter: a new graph */
  oidnSetFilterFloat(f[0], "sigmaLuminance", 0.5f);
  oidnCommitFilter(f[0]);
  execute_with(f[0], cb[0], ob[0], color[0], got, bytes);
  oidnSetFilterFloat(direct, "sigmaLuminance", 0.5f);
  oidnSetFilterInt(direct, "iterations", 3);
  oidnSetFilterBool(direct, "packedGuides", 0);
  oidnSetFilterImage(direct, "color", cb[0], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  oidnSetFilterImage(direct, "output", ob[0], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  oidnCommitFilter(direct);
  execute_with(direct, cb[0], ob[0], color[0], want, bytes);
  same &= memcmp(got, want, bytes) == 0;
  /* queued: colour 1 into filter 1's output, then colour 0 into filter 2's */
  oidnWriteBuffer(cb[1], 0, bytes, color[1]);
  oidnWriteBuffer(cb[2], 0, bytes, color[0]);
  oidnExecuteFilterAsync(f[1]);
  oidnExecuteFilterAsync(f[2]);
  oidnSyncDevice(gpu);
  float* queued = malloc(bytes);
  oidnReadBuffer(ob[2], 0, bytes, queued);
  execute_with(f[2], cb[2], ob[2], color[0], got, bytes);
  same &= memcmp(got, queued, bytes) == 0;
  const char* message = NULL;
  CHECK_EQ_INT(oidnGetDeviceError(gpu, &message), OIDN_ERROR_NONE);
  printf("%-22s graph runs equal direct launches bit for bit: %s\n", "cached graphs",
         same ? "yes" : "NO");
  CHECK(same);
  for (int k = 0; k < filters; ++k) {
    oidnReleaseFilter(f[k]);
    oidnReleaseBuffer(cb[k]);
    oidnReleaseBuffer(ob[k]);
  }
  oidnReleaseFilter(direct);
  for (int k = 0; k < 3; ++k)
    oidnReleaseBuffer(guides[k]);
  free(queued);
  free(got);
  free(want);
  free(color[0]);
  free(color[1]);
  free(variance);
  gpu_scene_free(&s);
}

/* Output = colour (in place), FLOAT3 and HALF4 (whose alpha must come
 * back unchanged): on the CPU device and on both schedules (packed too)
 * of the GPU, bit for bit what the same run writes into a buffer of its
 * own.  atrous_emulation_test.cu checks more layouts (strides, offsets,
 * output = albedo, HALF3) with the kernels' bodies on the CPU. */
static void run_in_place(OIDNDevice cpu, OIDNDevice gpu)
{
  const int w = 91, h = 67;
  const size_t n = (size_t)w * (size_t)h;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 555u);
  float* color = malloc(n * 4 * sizeof(float));
  float* variance = malloc(n * 3 * sizeof(float));
  gpu_scene_atrous_inputs(&s, 4, 0, 0, color, variance);
  for (int half = 0; half < 2; ++half) {
    const size_t pixel_bytes = half ? 4 * sizeof(uint16_t) : 3 * sizeof(float);
    const OIDNFormat format = half ? OIDN_FORMAT_HALF4 : OIDN_FORMAT_FLOAT3;
    unsigned char* in = malloc(n * pixel_bytes);
    unsigned char* out[2] = {malloc(n * pixel_bytes), malloc(n * pixel_bytes)};
    for (size_t i = 0; i < n; ++i)
      for (int k = 0; k < (half ? 4 : 3); ++k) {
        if (half)
          ((uint16_t*)in)[4 * i + (size_t)k] = lull_float_to_half(color[4 * i + (size_t)k]);
        else
          ((float*)in)[3 * i + (size_t)k] = color[4 * i + (size_t)k];
      }
    for (int run = 0; run < 4; ++run) { /* CPU, baseline, permuted, packed */
      for (int in_place = 0; in_place < 2; ++in_place)
        CHECK_EQ_INT(run_color_buffer(run == 0 ? cpu : gpu, &s, format, pixel_bytes, in,
                                      run >= 2, run == 3, in_place, out[in_place]),
                     OIDN_ERROR_NONE);
      CHECK_EQ_INT(memcmp(out[0], out[1], n * pixel_bytes), 0);
      if (half) /* alpha as given */
        for (size_t i = 0; i < n; ++i)
          CHECK_EQ_INT(((const uint16_t*)out[1])[4 * i + 3], ((const uint16_t*)in)[4 * i + 3]);
    }
    printf("%-22s in place equal to a separate output bit for bit\n",
           half ? "HALF4 colour" : "FLOAT3 colour");
    free(in);
    free(out[0]);
    free(out[1]);
  }
  free(color);
  free(variance);
  gpu_scene_free(&s);
}

/* Gaussian on RGBA with a NaN pixel: the CPU's output, alpha unchanged. */
static void run_gaussian(OIDNDevice cpu, OIDNDevice gpu)
{
  enum { GW = 77, GH = 45 };
  gpu_scene s;
  gpu_scene_make(&s, GW, GH, 99u);
  const size_t n = (size_t)GW * GH, count = n * 4;
  float* rgba = malloc(count * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k)
      rgba[4 * i + (size_t)k] = s.color[3 * i + (size_t)k];
    rgba[4 * i + 3] = (float)(i % 5) * 0.25f;
  }
  rgba[4 * 100] = NAN;
  float* a = malloc(count * sizeof(float));
  float* b = malloc(count * sizeof(float));
  gpu_image images[1] = {{"color", rgba, 4}};
  gpu_param params[1] = {{"sigma", 1, 2.5}};
  CHECK_EQ_INT(gpu_run_filter(cpu, "Gaussian", GW, GH, images, 1, 4, params, 1, a), OIDN_ERROR_NONE);
  CHECK_EQ_INT(gpu_run_filter(gpu, "Gaussian", GW, GH, images, 1, 4, params, 1, b), OIDN_ERROR_NONE);
  const double rel = gpu_max_rel_diff(b, a, count, 1e-6);
  printf("Gaussian               CUDA vs CPU max rel %.2e\n", rel);
  CHECK(rel <= 1e-5);
  for (size_t i = 0; i < n; i += 13)
    CHECK_EQ_INT(b[4 * i + 3] == rgba[4 * i + 3], 1);
  free(rgba);
  free(a);
  free(b);
  gpu_scene_free(&s);
}

/* RT on the CUDA device with a 1-channel albedo and a 2-channel normal
 * (OIDN 2.1+ reads them as (v, v, v) and (x, y, y), lull_expand_rgb):
 * bit for bit the result of the expanded 3-channel images (and so for
 * ATrous with packedGuides), and the baseline within 1e-4 of the CPU
 * device's. */
static void run_aux_channels(OIDNDevice cpu, OIDNDevice gpu)
{
  const int w = 90, h = 70;
  const size_t n = (size_t)w * (size_t)h;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 777u);
  gpu_narrow_guides g;
  gpu_narrow_guides_make(s.albedo, s.normal, (size_t)s.width * (size_t)s.height, &g);
  const gpu_image narrow[4] = {{"color", s.color, 3}, {"albedo", g.albedo1, 1},
                               {"normal", g.normal2, 2}, {"depth", s.depth, 1}};
  const gpu_image expanded[4] = {{"color", s.color, 3}, {"albedo", g.albedo3, 3},
                                 {"normal", g.normal3, 3}, {"depth", s.depth, 1}};
  float* ref = malloc(3 * n * sizeof(float));
  float* a = malloc(3 * n * sizeof(float));
  float* b = malloc(3 * n * sizeof(float));
  int same = 1;
  /* RT (the permuted schedule), then ATrous with packedGuides (RT has no
   * such parameter) */
  for (int packed = 0; packed < 2; ++packed) {
    const char* type = packed ? "ATrous" : "RT";
    const gpu_param params[1] = {{"packedGuides", 0, 1}};
    CHECK_EQ_INT(gpu_run_filter(gpu, type, w, h, narrow, 4, 3, params, packed, a),
                 OIDN_ERROR_NONE);
    CHECK_EQ_INT(gpu_run_filter(gpu, type, w, h, expanded, 4, 3, params, packed, b),
                 OIDN_ERROR_NONE);
    same &= memcmp(a, b, 3 * n * sizeof(float)) == 0;
  }
  /* against the CPU: the baseline schedule, which takes the CPU's taps at
   * the border too (the permuted one mirrors them there, Dolp et al. §4.1) */
  const gpu_param baseline[1] = {{"schedule", 0, 0}};
  CHECK_EQ_INT(gpu_run_filter(cpu, "ATrous", w, h, narrow, 4, 3, NULL, 0, ref), OIDN_ERROR_NONE);
  CHECK_EQ_INT(gpu_run_filter(gpu, "ATrous", w, h, narrow, 4, 3, baseline, 1, a),
               OIDN_ERROR_NONE);
  double scale = 0;
  for (size_t i = 0; i < 3 * n; ++i)
    scale = fmax(scale, fabs(ref[i]));
  const double worst = gpu_max_rel_diff(a, ref, 3 * n, 1e-3 * scale);
  printf("%-22s equal to the expanded images bit for bit: %s; baseline vs CPU max rel %.2e\n",
         "1-ch albedo, 2-ch normal", same ? "yes" : "NO", worst);
  CHECK(same);
  CHECK(worst <= 1e-4);
  free(ref);
  free(a);
  free(b);
  gpu_narrow_guides_free(&g);
  gpu_scene_free(&s);
}

/* A constant image at +-FLT_MAX on the GPU (lull_hold_in_range): finite,
 * and that constant to float rounding (fp16 for packedGuides), through
 * ATrous, ATrous packed, RT with hdr (0 for -FLT_MAX) and Gaussian; and the Gaussian of an
 * image half +FLT_MAX, half -FLT_MAX (lull_gaussian_in) finite. */
static void run_float_max(OIDNDevice gpu)
{
  const int w = 64, h = 48;
  const size_t n = (size_t)w * (size_t)h * 3;
  float* color = malloc(n * sizeof(float));
  float* out = malloc(n * sizeof(float));
  static const char* const types[4] = {"ATrous", "ATrous", "RT", "Gaussian"};
  double worst[4] = {0, 0, 0, 0};
  for (int sign = -1; sign <= 1; sign += 2) {
    const float value = (float)sign * FLT_MAX;
    for (size_t i = 0; i < n; ++i)
      color[i] = value;
    const gpu_image images[1] = {{"color", color, 3}};
    for (int t = 0; t < 4; ++t) {
      const gpu_param params[1] = {{t == 2 ? "hdr" : "packedGuides", 0, t == 1 || t == 2}};
      CHECK_EQ_INT(gpu_run_filter(gpu, types[t], w, h, images, 1, 3, params, t < 3, out),
                   OIDN_ERROR_NONE);
      /* RT reads negative colour as 0 (OIDN's RT does): -FLT_MAX gives 0 */
      const float expected = t == 2 && sign < 0 ? 0.0f : value;
      for (size_t i = 0; i < n; ++i)
        worst[t] = fmax(worst[t], !isfinite(out[i]) ? INFINITY
                                  : expected == 0.0f ? fabs((double)out[i])
                                                     : fabs((double)out[i] / expected - 1.0));
    }
  }
  /* half +FLT_MAX, half -FLT_MAX at sigma 1.5, where the Gaussian's row
   * pass had overflowed (inf - inf = NaN): finite */
  for (size_t i = 0; i < n; ++i)
    color[i] = i < n / 2 ? FLT_MAX : -FLT_MAX;
  const gpu_image split[1] = {{"color", color, 3}};
  const gpu_param sigma[1] = {{"sigma", 1, 1.5}};
  CHECK_EQ_INT(gpu_run_filter(gpu, "Gaussian", w, h, split, 1, 3, sigma, 1, out), OIDN_ERROR_NONE);
  const int split_finite = lull_test_all_finite(out, n);
  printf("%-22s largest relative change: ATrous %.1e, packed %.1e, RT %.1e, Gaussian %.1e; "
         "Gaussian of +-FLT_MAX halves finite: %s\n", "constant +-FLT_MAX", worst[0], worst[1],
         worst[2], worst[3], split_finite ? "yes" : "NO");
  CHECK(split_finite);
  CHECK(worst[0] < 1e-6);
  CHECK(worst[1] < 5e-4);
  CHECK(worst[2] < 1e-6);
  CHECK(worst[3] < 1e-6);
  free(color);
  free(out);
}

int main(void)
{
  OIDNDevice cpu = gpu_new_device(OIDN_DEVICE_TYPE_CPU);
  OIDNDevice gpu = gpu_new_device(OIDN_DEVICE_TYPE_CUDA);
  if (!gpu) {
    fprintf(stderr, "cuda_atrous: no CUDA device\n");
    return 1;
  }
  static const config configs[] = {
      /* name              w    h  ch alb nrm geo mode it hdr srgb var scale poison
       * (scale NaN: automatic, core/atrous.h) */
      {"variance+depth", 160, 120, 3, 1, 1, 1, 1, 4, 1, 0, 0, NAN, 0},
      {"fixed+position", 150, 110, 3, 1, 1, 2, 0, 4, 1, 0, 0, 1.0f, 0},
      {"rgba no-normal", 131, 97, 4, 1, 0, 1, 1, 3, 1, 0, 0, NAN, 0},
      {"non-finite inputs", 120, 90, 3, 1, 1, 1, 1, 3, 1, 0, 0, NAN, 1},
      {"ldr srgb scale", 100, 80, 3, 1, 1, 1, 1, 3, 0, 1, 0, 0.5f, 0},
      {"variance image 1ch", 90, 70, 3, 1, 1, 1, 1, 3, 1, 0, 1, NAN, 0},
      {"variance image, scale 4", 90, 70, 3, 1, 1, 1, 1, 3, 1, 0, 3, 4.0f, 0},
      {"variance image 3ch", 90, 70, 3, 1, 1, 2, 1, 3, 1, 0, 3, NAN, 0},
      {"gray, no guides", 101, 67, 1, 0, 0, 0, 1, 3, 1, 0, 0, NAN, 0},
      {"two channels", 64, 64, 2, 0, 1, 1, 0, 2, 1, 0, 0, NAN, 0},
      {"10 levels, 13x9", 13, 9, 3, 1, 1, 1, 1, 10, 1, 0, 0, NAN, 0},
      {"1x1", 1, 1, 3, 1, 1, 1, 1, 5, 1, 0, 0, NAN, 0},
      /* the first level is the last: its output goes to the colour buffer
       * it does not read (packed: the fp16 one) */
      {"one level", 83, 59, 4, 1, 1, 1, 1, 1, 1, 0, 0, NAN, 0},
      {"1x37", 1, 37, 3, 1, 1, 1, 1, 6, 1, 0, 0, NAN, 0},
      /* no interior: GPU_ATROUS_TINY_TOLERANCE; 2 pixels reflect with
       * period 2 (lull_layout_reflect) */
      {"2x2", 2, 2, 3, 1, 1, 1, 1, 5, 1, 0, 0, 1.0f, 0},
      {"2x9", 2, 9, 3, 1, 1, 1, 1, 5, 1, 0, 0, NAN, 0},
      {"9x2", 9, 2, 3, 1, 1, 1, 1, 5, 1, 0, 0, NAN, 0},
      {"1x2", 1, 2, 3, 1, 1, 1, 1, 5, 1, 0, 0, NAN, 0},
      {"4x4, 10 levels", 4, 4, 3, 1, 1, 1, 1, 10, 1, 0, 0, NAN, 0},
      {"17x1", 17, 1, 3, 1, 1, 1, 1, 5, 1, 0, 0, NAN, 0},
      {"large, 5 levels", 333, 257, 3, 1, 1, 1, 1, 5, 1, 0, 0, NAN, 0},
      /* beyond fp16's range without packedGuides' packing scale: clipped
       * above 65504 (after demodulation), flushed to 0 in the dark */
      {"inputScale 1e5", 90, 70, 3, 1, 1, 1, 1, 3, 1, 0, 0, 1e5f, 0},
      {"inputScale 1e-6", 90, 70, 3, 1, 1, 1, 1, 3, 1, 0, 0, 1e-6f, 0},
  };
  for (size_t i = 0; i < sizeof configs / sizeof configs[0]; ++i)
    run_config(cpu, gpu, &configs[i]);
  run_render(cpu, gpu, "cornell");
  run_aux_channels(cpu, gpu);
  run_float_max(gpu);
  run_scale_invariance(cpu, gpu);
  run_unaligned(gpu);
  run_in_place(cpu, gpu);
  run_graph_cache(gpu);
  run_gaussian(cpu, gpu);
  oidnReleaseDevice(cpu);
  oidnReleaseDevice(gpu);
  return lull_test_result("cuda_atrous");
}
