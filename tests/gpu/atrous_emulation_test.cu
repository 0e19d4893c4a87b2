/* The CUDA à-trous kernels run on the CPU (no GPU needed; CI runs this).
 *
 * The kernels are written as host-and-device bodies (cuda/kernel_body.cuh);
 * this test runs exactly those bodies, block by block, phase by phase,
 * thread by thread, in the order the library launches them
 * (lull_atrous_enqueue with emulating launchers), and checks what
 * tests/gpu/cuda_atrous_test.c checks on a GPU:
 *   - baseline equals the CPU backend within 1e-4 relative;
 *   - permuted equals baseline bit for bit away from the border, and stays
 *     close at the border (the mirrored sub-images of Dolp et al. 2024
 *     §3.4/§4.1 change the taps there);
 *   - packedGuides (fp16 colour, oct normals) stays within fp16 precision
 *     of the fp32 path: PACKED_TOLERANCE below.
 * So the indexing of tiles, layouts, borders and packing is checked before
 * a GPU ever runs it.  (On the host, lull_edge_weight_log2 is exp2f, so
 * the emulation agrees with the CPU more closely than the GPU, which uses
 * the exp2 unit.) */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atrous_baseline.cuh"
#include "atrous_level_guides.cuh"
#include "atrous_permuted.cuh"
#include "atrous_prepare.cuh"

extern "C" {
#include "gpu_test_util.h"
#include "test_util.h"
}

/* packedGuides against the fp32 permuted schedule: mean |packed - fp32| /
 * mean |fp32| over the image.  Measured 1.5e-4 to 6e-4 on these scenes
 * (fp16 has 2^-11 = 4.9e-4 relative precision); 2e-3 leaves room and still
 * flags a wrong packing (a swapped or lost channel moves whole images). */
#define PACKED_TOLERANCE 2e-3
/* Border difference of the permuted schedule (cuda_atrous_test.c). */
#define BORDER_TOLERANCE 0.1

/* -- the emulating launchers -------------------------------------------- */

static void* emu_alloc(size_t bytes)
{
  void* p = calloc(1, bytes);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

/* Whether the last emulated prepare took the variant for float images
 * (prepare_inputs_float), as the launcher would have. */
static int emu_prepare_float = -1;

/* The colour pass's grid (the launch zeroes its results first). */
static void emu_prepare_bound(const lull_atrous_prepare_args* a)
{
  memset(a->stats, 0, sizeof *a->stats);
  const int blocks = prepare_bound_blocks(a->width, a->height);
  bound_tile* b = (bound_tile*)emu_alloc(sizeof *b);
  for (int bx = 0; bx < blocks; ++bx)
    for (int phase = 0; phase < BOUND_PHASES; ++phase)
      for (int tx = 0; tx < BOUND_THREADS; ++tx)
        prepare_bound_body(a, b, phase, lull_thread{bx, 0, tx, 0}, blocks,
                           prepare_inputs_float(a));
  free(b);
}

static cudaError_t emu_prepare(void* ctx, const lull_atrous_prepare_args* a)
{
  (void)ctx;
  emu_prepare_float = prepare_inputs_float(a);
  if (a->stats)
    emu_prepare_bound(a);
  prepare_tile* s = (prepare_tile*)emu_alloc(sizeof *s);
  for (int by = 0; by < (a->height + PREP_BH - 1) / PREP_BH; ++by)
    for (int bx = 0; bx < (a->width + PREP_BW - 1) / PREP_BW; ++bx)
      for (int phase = 0; phase < PREP_PHASES; ++phase)
        for (int ty = 0; ty < PREP_BH; ++ty)
          for (int tx = 0; tx < PREP_BW; ++tx)
            prepare_body(a, s, phase, lull_thread{bx, by, tx, ty},
                         a->geometry_kind == LULL_ATROUS_GEOMETRY_POSITION,
                         prepare_inputs_float(a));
  free(s);
  return cudaSuccess;
}

static cudaError_t emu_layout_tables(void* ctx, int* tables, int width, int height, int levels)
{
  (void)ctx;
  const int n = width > height ? width : height;
  for (int axis = 0; axis < 2; ++axis)
    for (int bx = 0; bx < (n + 255) / 256; ++bx)
      for (int tx = 0; tx < 256; ++tx)
        layout_tables_body(tables, width, height, levels, lull_thread{bx, axis, tx, 0});
  return cudaSuccess;
}

static cudaError_t emu_level(void* ctx, const lull_atrous_level_args* a, int permuted,
                             int variance_mode, int geometry_kind)
{
  (void)ctx;
  const int gx = (a->width + 31) / 32, gy = (a->height + 7) / 8;
  if (variance_mode) {
    /* with the tiles per block the launch would use, and with the other
     * count (the test images are small: the GPU takes two tiles a block
     * at 1080p and up), which must give the same bits */
    const size_t bytes = (size_t)a->width * (size_t)a->height * sizeof(float2);
    float2* other = (float2*)emu_alloc(bytes);
    const int launched = guide_tiles_for(a->width, a->height);
    for (int pass = 0; pass < 2; ++pass) {
      const int tiles = pass == 0 ? 3 - launched : launched;
      guide_tile* g = (guide_tile*)emu_alloc(sizeof *g);
      for (int by = 0; by < guide_grid_y(a->height, tiles); ++by)
        for (int bx = 0; bx < (a->width + GUIDE_BW - 1) / GUIDE_BW; ++bx)
          for (int phase = 0; phase <= tiles; ++phase)
            for (int ty = 0; ty < GUIDE_TY; ++ty)
              for (int tx = 0; tx < GUIDE_BW; ++tx)
                level_guides_body(a, g, phase, lull_thread{bx, by, tx, ty}, a->packed, tiles);
      free(g);
      if (pass == 0)
        memcpy(other, a->lg, bytes);
    }
    CHECK_EQ_INT(memcmp(other, a->lg, bytes), 0);
    free(other);
  }
  if (!permuted) {
    for (int by = 0; by < (a->height + BASE_BH - 1) / BASE_BH; ++by)
      for (int bx = 0; bx < (a->width + BASE_BW - 1) / BASE_BW; ++bx)
        for (int ty = 0; ty < BASE_BH; ++ty)
          for (int tx = 0; tx < BASE_BW; ++tx)
            baseline_body(a, lull_thread{bx, by, tx, ty}, variance_mode, geometry_kind);
    return cudaSuccess;
  }
  const int packed = a->packed;
  permuted_tile* s = (permuted_tile*)emu_alloc(sizeof *s);
  for (int by = 0; by < (a->height + PERM_OUT_H - 1) / PERM_OUT_H; ++by)
    for (int bx = 0; bx < (a->width + PERM_BW - 1) / PERM_BW; ++bx)
      for (int phase = 0; phase < PERM_PHASES; ++phase)
        for (int ty = 0; ty < PERM_BH; ++ty)
          for (int tx = 0; tx < PERM_BW; ++tx)
            permuted_body(a, s, phase, lull_thread{bx, by, tx, ty}, variance_mode, geometry_kind,
                          packed);
  free(s);
  if (a->last)
    for (int by = 0; by < gy; ++by)
      for (int bx = 0; bx < gx; ++bx)
        for (int ty = 0; ty < 8; ++ty)
          for (int tx = 0; tx < 32; ++tx)
            permuted_finish_body(a, lull_thread{bx, by, tx, ty});
  return cudaSuccess;
}

/* -- running the filter ---------------------------------------------------- */

/* A view of `format` into buf at byte `offset`, pixels `pixel_stride` and
 * rows `row_stride` bytes apart. */
static lull_image view_at(unsigned char* buf, size_t offset, lull_format format, int w, int h,
                          size_t pixel_stride, size_t row_stride)
{
  const lull_image v = {buf + offset, format, w, h, pixel_stride, row_stride};
  return v;
}

/* Compact floats, `channels` a pixel (none when p is NULL). */
static lull_image view(const float* p, int channels, int w, int h)
{
  lull_image v;
  memset(&v, 0, sizeof v);
  if (!p)
    return v;
  const size_t ps = (size_t)channels * sizeof(float);
  /* FLOAT..FLOAT4 = 1..4 */
  return view_at((unsigned char*)p, 0, (lull_format)channels, w, h, ps, ps * (size_t)w);
}

/* How the test stores its inputs: the prepare kernel has a variant for
 * float images that are aligned (prepare_inputs_float) and a generic one
 * for the others, which both must match the CPU. */
enum { STORE_FLOAT, STORE_HALF, STORE_UNALIGNED };

/* view() of p in storage `store`; a copy made for it goes to *copy (the
 * caller frees it). */
static lull_image stored_view(const float* p, int channels, int w, int h, int store,
                              void** copy)
{
  lull_image v = view(p, channels, w, h);
  *copy = NULL;
  if (!p || store == STORE_FLOAT)
    return v;
  const size_t n = (size_t)w * (size_t)h * (size_t)channels;
  if (store == STORE_HALF) {
    uint16_t* q = (uint16_t*)emu_alloc(n * sizeof(uint16_t));
    for (size_t i = 0; i < n; ++i)
      q[i] = lull_float_to_half(p[i]);
    v.data = (unsigned char*)q;
    v.format = (lull_format)(LULL_FORMAT_HALF + channels - 1);
    v.pixel_stride = (size_t)channels * sizeof(uint16_t);
    v.row_stride = v.pixel_stride * (size_t)w;
    *copy = q;
  } else { /* floats 2 bytes past an aligned address */
    unsigned char* q = (unsigned char*)emu_alloc(n * sizeof(float) + 2);
    memcpy(q + 2, p, n * sizeof(float));
    v.data = q + 2;
    *copy = q;
  }
  return v;
}

/* schedule: -2 the CPU backend, 0 baseline, 1 permuted (emulated). */
static int run(const lull_atrous_params* params, const lull_atrous_images* images, int schedule)
{
  lull_error err = {LULL_OK, ""};
  if (schedule == -2)
    return lull_atrous_cpu(params, images, 0, NULL, &err);
  lull_atrous_plan plan;
  lull_status status = lull_atrous_plan_make(params, images, schedule, &plan, &err);
  if (status != LULL_OK)
    return status;
  unsigned char* scratch = (unsigned char*)emu_alloc(plan.scratch_bytes);
  lull_atrous_launchers l;
  memset(&l, 0, sizeof l);
  l.prepare = emu_prepare;
  l.layout_tables = emu_layout_tables;
  l.level = emu_level;
  status = lull_atrous_enqueue(&plan, params, images, scratch, &l, NULL, &err);
  free(scratch);
  return status;
}

typedef struct config
{
  const char* name;
  int width, height, channels;
  int use_albedo, use_normal, geometry; /* 0 none, 1 depth, 2 position */
  int color_mode, iterations, srgb, variance_channels;
  float input_scale;
  int poison; /* non-finite values in the inputs */
  int store;       /* STORE_* of the colour */
  int guide_store; /* STORE_* of albedo, normal, depth or position, variance */
  int float_variant; /* the prepare variant expected: 1 float, 0 generic */
} config;

/* The runs the test compares: the CPU backend, baseline, permuted, and
 * permuted with packedGuides. */
enum { BACKENDS = 4 };

static int run_backend(lull_atrous_params params, const lull_atrous_images* images, int backend)
{
  params.packed_guides = backend == 3;
  return run(&params, images, backend == 0 ? -2 : (backend == 1 ? 0 : 1));
}

/* out[k] = backend k's output, compact FLOAT with `channels` channels (new
 * arrays, freed by the caller). */
static void run_backends(lull_atrous_params params, lull_atrous_images images, int width,
                         int height, int channels, float* out[BACKENDS])
{
  const size_t count = (size_t)width * (size_t)height * (size_t)channels;
  for (int k = 0; k < BACKENDS; ++k) {
    out[k] = (float*)emu_alloc(count * sizeof(float));
    for (size_t i = 0; i < count; ++i)
      out[k][i] = -12345.0f; /* every value must be written */
    images.output = view(out[k], channels, width, height);
    CHECK_EQ_INT(run_backend(params, &images, k), LULL_OK);
  }
}

/* Runs CPU, baseline, permuted and permuted+packed on the same inputs and
 * checks them against each other. */
static void compare(const char* name, lull_atrous_params params, lull_atrous_images images,
                    int width, int height, int channels)
{
  const size_t count = (size_t)width * (size_t)height * (size_t)channels;
  float* out[BACKENDS];
  run_backends(params, images, width, height, channels, out);
  const float *cpu = out[0], *base = out[1], *perm = out[2], *packed = out[3];
  double scale = 0;
  for (size_t i = 0; i < count; ++i)
    scale = fmax(scale, fabs(cpu[i]));
  const double rel = gpu_max_rel_diff(base, cpu, count, 1e-3 * scale);
  const int margin = gpu_atrous_margin(params.iterations);
  const double interior = gpu_interior_max_abs_diff(perm, base, width, height, channels, margin);
  const double border = gpu_border_rel_l1(perm, base, width, height, channels, margin);
  const double packed_rel = gpu_rel_l1(packed, perm, count);
  printf("%-20s baseline vs CPU max rel %.2e | permuted vs baseline: interior max %.1e, "
         "border rel L1 %.2e | packed vs fp32 rel L1 %.2e\n",
         name, rel, interior, border, packed_rel);
  CHECK(rel <= 1e-4);
  CHECK(interior <= 0.0); /* -1: no interior; 0: bitwise equal */
  CHECK(lull_test_all_finite(perm, count));
  CHECK(lull_test_all_finite(packed, count));
  CHECK(border <= (interior >= 0.0 ? BORDER_TOLERANCE : GPU_ATROUS_TINY_TOLERANCE));
  CHECK(packed_rel <= PACKED_TOLERANCE);
  if (channels == 4) /* alpha passes through unchanged */
    for (size_t i = 3; i < count; i += 4) {
      CHECK_EQ_INT(base[i] == ((const float*)images.color.data)[i], 1);
      CHECK_EQ_INT(perm[i] == ((const float*)images.color.data)[i], 1);
      CHECK_EQ_INT(packed[i] == ((const float*)images.color.data)[i], 1);
    }
  for (int k = 0; k < BACKENDS; ++k)
    free(out[k]);
}

static void run_config(const config* c)
{
  gpu_scene s;
  gpu_scene_make(&s, c->width, c->height, 1234u);
  const size_t n = (size_t)c->width * (size_t)c->height;
  float* color = (float*)emu_alloc(n * 4 * sizeof(float));
  float* variance = (float*)emu_alloc(n * 3 * sizeof(float));
  gpu_scene_atrous_inputs(&s, c->channels, c->srgb, c->poison, color, variance);
  lull_atrous_images images;
  memset(&images, 0, sizeof images);
  void* copies[6];
  images.color = stored_view(color, c->channels, c->width, c->height, c->store, &copies[0]);
  const int g = c->guide_store;
  images.albedo = stored_view(c->use_albedo ? s.albedo : NULL, 3, c->width, c->height, g,
                              &copies[1]);
  images.normal = stored_view(c->use_normal ? s.normal : NULL, 3, c->width, c->height, g,
                              &copies[2]);
  images.depth =
      stored_view(c->geometry == 1 ? s.depth : NULL, 1, c->width, c->height, g, &copies[3]);
  images.position =
      stored_view(c->geometry == 2 ? s.position : NULL, 3, c->width, c->height, g, &copies[4]);
  images.variance = stored_view(c->variance_channels ? variance : NULL, c->variance_channels,
                                c->width, c->height, g, &copies[5]);
  lull_atrous_params params = lull_atrous_default_params();
  params.iterations = c->iterations;
  params.color_mode = c->color_mode;
  params.srgb = c->srgb;
  params.clamp_output = c->srgb;
  params.input_scale = c->input_scale;
  compare(c->name, params, images, c->width, c->height, c->channels);
  /* the inputs went to the prepare variant their storage calls for (only
   * the images prepare reads count; on the host, unlike the GPU, the float
   * variant would also read unaligned floats, so the choice is checked) */
  CHECK_EQ_INT(emu_prepare_float, c->float_variant);
  for (int k = 0; k < 6; ++k)
    free(copies[k]);
  free(color);
  free(variance);
  gpu_scene_free(&s);
}

/* The scene's colour (3 channels), albedo, normal and depth as compact
 * float views, the depth replaced by `depth` when given; *color and
 * *variance are new arrays (gpu_scene_atrous_inputs). */
static lull_atrous_images scene_images(gpu_scene* s, const float* depth, float** color,
                                       float** variance)
{
  const size_t n = (size_t)s->width * (size_t)s->height;
  *color = (float*)emu_alloc(n * 4 * sizeof(float));
  *variance = (float*)emu_alloc(n * 3 * sizeof(float));
  gpu_scene_atrous_inputs(s, 3, 0, 0, *color, *variance);
  lull_atrous_images images;
  memset(&images, 0, sizeof images);
  images.color = view(*color, 3, s->width, s->height);
  images.albedo = view(s->albedo, 3, s->width, s->height);
  images.normal = view(s->normal, 3, s->width, s->height);
  images.depth = view(depth ? depth : s->depth, 1, s->width, s->height);
  return images;
}

/* A constant image at +-FLT_MAX (no guides): every backend keeps it finite
 * and constant to rounding (fp16 for packedGuides); the weighted means had
 * rounded beyond the float range to inf before lull_hold_in_range. */
static void run_float_max(void)
{
  const int w = 45, h = 37;
  const size_t n = (size_t)w * (size_t)h * 3;
  float* color = (float*)emu_alloc(n * sizeof(float));
  double worst = 0.0;
  for (int sign = -1; sign <= 1; sign += 2) {
    const float value = (float)sign * FLT_MAX;
    for (size_t i = 0; i < n; ++i)
      color[i] = value;
    lull_atrous_images images;
    memset(&images, 0, sizeof images);
    images.color = view(color, 3, w, h);
    lull_atrous_params params = lull_atrous_default_params();
    float* out[BACKENDS];
    run_backends(params, images, w, h, 3, out);
    for (int k = 0; k < BACKENDS; ++k) {
      for (size_t i = 0; i < n; ++i)
        worst = fmax(worst, isfinite(out[k][i]) ? fabs((double)out[k][i] / value - 1.0) : INFINITY);
      free(out[k]);
    }
  }
  printf("%-20s constant +-FLT_MAX: largest relative change %.2e\n", "float range", worst);
  CHECK(worst <= 5e-4);
  free(color);
}

/* Albedo and normal of 1 and 2 channels (and in fp16), read as OIDN reads
 * them (lull_expand_rgb: v is (v, v, v), (x, y) is (x, y, y)): every
 * backend must give the bits it gives for the expanded 3-channel images,
 * and differ from runs without those guides and with them padded by zeros
 * (which is what a reader that ignored the rule would see). */
static void run_aux_channels(void)
{
  const int w = 90, h = 70;
  const size_t n = (size_t)w * (size_t)h;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 777u);
  float *color, *variance;
  lull_atrous_images images = scene_images(&s, NULL, &color, &variance);
  gpu_narrow_guides g;
  gpu_narrow_guides_make(s.albedo, s.normal, (size_t)s.width * (size_t)s.height, &g);
  uint16_t* albedo1_half = (uint16_t*)emu_alloc(n * sizeof(uint16_t));
  uint16_t* normal2_half = (uint16_t*)emu_alloc(2 * n * sizeof(uint16_t));
  for (size_t i = 0; i < n; ++i) /* exact: the values are fp16 already */
    albedo1_half[i] = lull_float_to_half(g.albedo1[i]);
  for (size_t i = 0; i < 2 * n; ++i)
    normal2_half[i] = lull_float_to_half(g.normal2[i]);
  const lull_image narrow[2][2] = {
      {view(g.albedo1, 1, w, h), view(g.normal2, 2, w, h)},
      {view_at((unsigned char*)albedo1_half, 0, LULL_FORMAT_HALF, w, h, 2, 2 * (size_t)w),
       view_at((unsigned char*)normal2_half, 0, LULL_FORMAT_HALF2, w, h, 4, 4 * (size_t)w)}};
  lull_atrous_params params = lull_atrous_default_params();
  params.iterations = 3;
  float* expanded[BACKENDS];
  images.albedo = view(g.albedo3, 3, w, h);
  images.normal = view(g.normal3, 3, w, h);
  run_backends(params, images, w, h, 3, expanded);
  float* unguided[BACKENDS];
  lull_atrous_images bare = images;
  memset(&bare.albedo, 0, sizeof bare.albedo);
  memset(&bare.normal, 0, sizeof bare.normal);
  run_backends(params, bare, w, h, 3, unguided);
  float* padded[BACKENDS];
  float* albedo0 = (float*)emu_alloc(3 * n * sizeof(float));
  float* normal0 = (float*)emu_alloc(3 * n * sizeof(float));
  for (size_t i = 0; i < 3 * n; ++i) {
    albedo0[i] = i % 3 == 0 ? g.albedo3[i] : 0.0f;
    normal0[i] = i % 3 == 2 ? 0.0f : g.normal3[i];
  }
  lull_atrous_images zeros = images;
  zeros.albedo = view(albedo0, 3, w, h);
  zeros.normal = view(normal0, 3, w, h);
  run_backends(params, zeros, w, h, 3, padded);
  int same = 1, guided = 1;
  for (int fmt = 0; fmt < 2; ++fmt) {
    images.albedo = narrow[fmt][0];
    images.normal = narrow[fmt][1];
    float* out[BACKENDS];
    run_backends(params, images, w, h, 3, out);
    for (int k = 0; k < BACKENDS; ++k) {
      same &= memcmp(out[k], expanded[k], 3 * n * sizeof(float)) == 0;
      /* measured 5.6e-4 to 6.2e-4 from the runs without the guides and
       * 9.2e-3 to 9.5e-3 from those with zeros; rounding is below 1e-6 */
      guided &= gpu_rel_l1(out[k], unguided[k], 3 * n) > 1e-5;
      guided &= gpu_rel_l1(out[k], padded[k], 3 * n) > 1e-5;
      free(out[k]);
    }
  }
  printf("%-20s every backend equal to the expanded images bit for bit: %s, guides used: %s\n",
         "1-ch albedo, 2-ch normal", same ? "yes" : "NO", guided ? "yes" : "NO");
  CHECK(same);
  CHECK(guided);
  for (int k = 0; k < BACKENDS; ++k) {
    free(expanded[k]);
    free(unguided[k]);
    free(padded[k]);
  }
  free(albedo0);
  free(normal0);
  gpu_narrow_guides_free(&g);
  free(albedo1_half);
  free(normal2_half);
  free(color);
  free(variance);
  gpu_scene_free(&s);
}

/* sigmaDepth 1e-8 over all-zero depth: (sigma_g s_p)^2 = (1e-8 1e-12)^2
 * underflows, and without LULL_GEOMETRY_MIN_SCALE2 ig = inf made every
 * tap's geometry exponent 0 inf = NaN: the CPU then averaged with equal
 * weights (a box filter) while the GPU, which skips the centre's term,
 * kept mostly the centre.  Now equal depths do not count, on both, and a
 * constant colour (no albedo to demodulate by) stays constant. */
static void run_tiny_geometry_scale(void)
{
  const int w = 70, h = 50;
  const size_t n = (size_t)w * (size_t)h;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 77u);
  float* zero = (float*)emu_alloc(n * sizeof(float));
  float *color, *variance;
  lull_atrous_images images = scene_images(&s, zero, &color, &variance);
  lull_atrous_params params = lull_atrous_default_params();
  params.sigma_depth = 1e-8f;
  params.iterations = 3;
  compare("sigmaDepth 1e-8", params, images, w, h, 3);

  const float value[3] = {0.25f, 0.5f, 2.0f};
  for (size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k)
      color[3 * i + (size_t)k] = value[k];
  memset(&images.albedo, 0, sizeof images.albedo);
  float* out[BACKENDS];
  run_backends(params, images, w, h, 3, out);
  double worst = 0;
  for (int k = 0; k < BACKENDS; ++k)
    for (size_t i = 0; i < 3 * n; ++i) {
      const double d = fabs((double)out[k][i] - value[i % 3]) / value[i % 3];
      worst = d <= worst ? worst : (isnan(d) ? INFINITY : d);
    }
  printf("%-20s constant colour: max rel change %.2e\n", "sigmaDepth 1e-8", worst);
  /* the weighted means of equal values round by a few ulp; fp16
   * (packedGuides) keeps 2^-11 */
  CHECK(worst <= 1e-3);
  for (int k = 0; k < BACKENDS; ++k)
    free(out[k]);
  free(zero);
  free(color);
  free(variance);
  gpu_scene_free(&s);
}

/* Images without an interior (every pixel within gpu_atrous_margin of the
 * border): the permuted schedule against the CPU, for every size in
 * {1..9, 15, 17}^2 with 5 and 10 levels, within
 * GPU_ATROUS_TINY_TOLERANCE (whose comment has the measured table's
 * extremes). */
static void run_tiny_images(void)
{
  static const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 17};
  const int ns = (int)(sizeof sizes / sizeof sizes[0]);
  for (int levels = 5; levels <= 10; levels += 5) {
    printf("permuted vs CPU rel L1, %d levels (rows: height, columns: width)\n     ", levels);
    for (int i = 0; i < ns; ++i)
      printf(" %7d", sizes[i]);
    printf("\n");
    double worst = 0, worst_packed = 0;
    for (int j = 0; j < ns; ++j) {
      printf("%4d ", sizes[j]);
      for (int i = 0; i < ns; ++i) {
        const int w = sizes[i], h = sizes[j];
        gpu_scene s;
        gpu_scene_make(&s, w, h, 1234u);
        float *color, *variance;
        const lull_atrous_images images = scene_images(&s, NULL, &color, &variance);
        lull_atrous_params params = lull_atrous_default_params();
        params.iterations = levels;
        float* out[BACKENDS];
        run_backends(params, images, w, h, 3, out);
        const size_t count = (size_t)w * (size_t)h * 3;
        const double perm = gpu_rel_l1(out[2], out[0], count);
        const double packed = gpu_rel_l1(out[3], out[0], count);
        printf(" %7.1e", perm);
        worst = fmax(worst, perm);
        worst_packed = fmax(worst_packed, packed);
        CHECK(perm <= GPU_ATROUS_TINY_TOLERANCE);
        CHECK(packed <= GPU_ATROUS_TINY_TOLERANCE);
        CHECK(lull_test_all_finite(out[2], count));
        for (int k = 0; k < BACKENDS; ++k)
          free(out[k]);
        free(color);
        free(variance);
        gpu_scene_free(&s);
      }
      printf("\n");
    }
    printf("largest: permuted %.2e, packed %.2e\n", worst, worst_packed);
  }
}

/* -- image views: strides, offsets, aliasing, half outputs ---------------- */

/* A new buffer of `bytes` filled with 0xA5: bytes that are no pixel's must
 * keep it. */
static unsigned char* guard_alloc(size_t bytes)
{
  unsigned char* p = (unsigned char*)emu_alloc(bytes);
  memset(p, 0xA5, bytes);
  return p;
}

/* Stores compact floats (the view's channels per pixel) into the view. */
static void view_fill(const lull_image* v, const float* src)
{
  const int n = lull_format_channels(v->format);
  for (int y = 0; y < v->height; ++y)
    for (int x = 0; x < v->width; ++x) {
      float c[4] = {0, 0, 0, 0};
      memcpy(c, src + ((size_t)y * (size_t)v->width + (size_t)x) * (size_t)n,
             (size_t)n * sizeof(float));
      lull_image_store(v, x, y, c);
    }
}

/* The view's pixels as compact floats (a new array; halves widen exactly,
 * so equal arrays mean equal bits). */
static float* view_read(const lull_image* v)
{
  const int n = lull_format_channels(v->format);
  float* out = (float*)emu_alloc((size_t)v->width * (size_t)v->height * (size_t)n * sizeof(float));
  for (int y = 0; y < v->height; ++y)
    for (int x = 0; x < v->width; ++x) {
      float c[4];
      lull_image_load(v, x, y, c);
      memcpy(out + ((size_t)y * (size_t)v->width + (size_t)x) * (size_t)n, c,
             (size_t)n * sizeof(float));
    }
  return out;
}

/* Whether every byte of buf that no pixel of v covers still holds 0xA5. */
static int guard_intact(const unsigned char* buf, size_t bytes, const lull_image* v)
{
  unsigned char* mine = (unsigned char*)emu_alloc(bytes);
  const size_t size = lull_format_size(v->format);
  for (int y = 0; y < v->height; ++y)
    for (int x = 0; x < v->width; ++x)
      memset(mine + (size_t)(lull_image_pixel(v, x, y) - buf), 1, size);
  int ok = 1;
  for (size_t i = 0; i < bytes; ++i)
    ok &= mine[i] || buf[i] == 0xA5;
  free(mine);
  return ok;
}

/* The layouts checked against compact images. */
enum
{
  VIEWS_INTERLEAVED, /* colour, albedo, normal, depth in one buffer */
  VIEWS_IN_PLACE,    /* output = colour */
  VIEWS_INTO_ALBEDO, /* output = albedo */
  VIEWS_HALF3_OUT,   /* HALF3 output, padded rows */
  VIEWS_HALF4_IN_PLACE, /* HALF4 colour, output = colour: alpha unchanged */
  VIEWS_CASES
};

/* Each backend's output with the images laid out as `layout` says must
 * equal, bit for bit, its output for compact images of the same formats
 * (colour HALF4 for VIEWS_HALF4_IN_PLACE, output HALF3 or HALF4 where the
 * case has them, FLOAT3 else); nothing outside the output's pixels may be
 * written. */
static void run_views(int layout)
{
  static const char* const names[VIEWS_CASES] = {"interleaved, padded", "output = colour",
                                                 "output = albedo", "HALF3 out, padded",
                                                 "HALF4 colour in place"};
  const int w = 45, h = 37;
  const size_t n = (size_t)w * (size_t)h;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 4321u);
  const int ch = layout == VIEWS_HALF4_IN_PLACE ? 4 : 3;
  float* color = (float*)emu_alloc(n * 4 * sizeof(float));
  float* variance = (float*)emu_alloc(n * 3 * sizeof(float));
  gpu_scene_atrous_inputs(&s, ch, 0, 0, color, variance);
  const lull_format color_format =
      layout == VIEWS_HALF4_IN_PLACE ? LULL_FORMAT_HALF4 : LULL_FORMAT_FLOAT3;
  const lull_format out_format = layout == VIEWS_HALF3_OUT ? LULL_FORMAT_HALF3 : color_format;
  const size_t cs = lull_format_size(color_format), os = lull_format_size(out_format);
  lull_atrous_params params = lull_atrous_default_params();
  params.iterations = 3;
  int same = 1, intact = 1, alpha = 1;
  for (int k = 0; k < BACKENDS; ++k) {
    /* compact */
    unsigned char* cbuf = guard_alloc(n * cs);
    unsigned char* obuf = guard_alloc(n * os);
    lull_atrous_images images;
    memset(&images, 0, sizeof images);
    images.color = view_at(cbuf, 0, color_format, w, h, cs, cs * (size_t)w);
    view_fill(&images.color, color);
    images.albedo = view(s.albedo, 3, w, h);
    images.normal = view(s.normal, 3, w, h);
    images.depth = view(s.depth, 1, w, h);
    images.output = view_at(obuf, 0, out_format, w, h, os, os * (size_t)w);
    CHECK_EQ_INT(run_backend(params, &images, k), LULL_OK);
    float* expect = view_read(&images.output);
    free(cbuf);
    free(obuf);

    /* the case's layout; buf holds the output */
    unsigned char* buf = NULL;
    size_t bytes = 0;
    if (layout == VIEWS_INTERLEAVED) {
      /* per pixel: colour, albedo, normal (12 bytes each), depth (4)
       * and 8 bytes of padding; rows padded by 40 bytes; 4 bytes in */
      const size_t ps = 48, rs = ps * (size_t)w + 40;
      unsigned char* in = guard_alloc(4 + rs * (size_t)h);
      images.color = view_at(in, 4, LULL_FORMAT_FLOAT3, w, h, ps, rs);
      images.albedo = view_at(in, 16, LULL_FORMAT_FLOAT3, w, h, ps, rs);
      images.normal = view_at(in, 28, LULL_FORMAT_FLOAT3, w, h, ps, rs);
      images.depth = view_at(in, 40, LULL_FORMAT_FLOAT, w, h, ps, rs);
      view_fill(&images.color, color);
      view_fill(&images.albedo, s.albedo);
      view_fill(&images.normal, s.normal);
      view_fill(&images.depth, s.depth);
      bytes = n * os;
      buf = guard_alloc(bytes);
      images.output = view_at(buf, 0, out_format, w, h, os, os * (size_t)w);
      CHECK_EQ_INT(run_backend(params, &images, k), LULL_OK);
      free(in);
    } else if (layout == VIEWS_INTO_ALBEDO) {
      bytes = n * 3 * sizeof(float);
      buf = (unsigned char*)emu_alloc(bytes);
      memcpy(buf, s.albedo, bytes);
      images.color = view(color, 3, w, h);
      images.albedo = view((const float*)buf, 3, w, h);
      images.output = images.albedo;
      CHECK_EQ_INT(run_backend(params, &images, k), LULL_OK);
    } else if (layout == VIEWS_HALF3_OUT) {
      /* rows padded by 10 bytes, 2 bytes in */
      const size_t rs = os * (size_t)w + 10;
      bytes = 2 + rs * (size_t)h;
      buf = guard_alloc(bytes);
      images.color = view(color, 3, w, h);
      images.output = view_at(buf, 2, out_format, w, h, os, rs);
      CHECK_EQ_INT(run_backend(params, &images, k), LULL_OK);
    } else { /* in place */
      bytes = n * cs;
      buf = guard_alloc(bytes);
      images.color = view_at(buf, 0, color_format, w, h, cs, cs * (size_t)w);
      view_fill(&images.color, color);
      images.output = images.color;
      CHECK_EQ_INT(run_backend(params, &images, k), LULL_OK);
    }
    float* got = view_read(&images.output);
    same &= memcmp(got, expect, n * (size_t)lull_format_channels(out_format) * sizeof(float)) == 0;
    if (layout != VIEWS_INTO_ALBEDO)
      intact &= guard_intact(buf, bytes, &images.output);
    if (layout == VIEWS_HALF4_IN_PLACE) /* alpha as given, in fp16 */
      for (size_t i = 0; i < n; ++i)
        alpha &= lull_float_to_half(got[4 * i + 3]) == lull_float_to_half(color[4 * i + 3]);
    free(got);
    free(expect);
    free(buf);
  }
  printf("%-22s every backend equal to compact images bit for bit: %s\n", names[layout],
         same && intact && alpha ? "yes" : "NO");
  CHECK(same);
  CHECK(intact);
  CHECK(alpha);
  free(color);
  free(variance);
  gpu_scene_free(&s);
}

/* A test render (tests/gpu/export_testdata.py), when it was exported. */
static void run_render(const char* scene)
{
  float* data[4];
  int w = 0, h = 0, ch = 0;
  gpu_read_render(scene, data, &w, &h, &ch);
  if (!data[0] || ch != 3) {
    printf("%-20s not exported (tests/gpu/export_testdata.py): skipped\n", scene);
  } else {
    lull_atrous_images images;
    memset(&images, 0, sizeof images);
    images.color = view(data[0], 3, w, h);
    images.albedo = view(data[1], 3, w, h);
    images.normal = view(data[2], 3, w, h);
    images.depth = view(data[3], 1, w, h);
    compare(scene, lull_atrous_default_params(), images, w, h, 3);
  }
  for (int k = 0; k < 4; ++k)
    free(data[k]);
}

/* packedGuides' packing scale (atrous_packing.cuh): 2^k puts every bound
 * in [2^14, 2^15) unless k is clamped, and the edge cases. */
static void check_pack_scale(void)
{
  CHECK_EQ_INT(lull_pack_scale_exponent(0u), 0);                        /* all black */
  CHECK_EQ_INT(lull_pack_scale_exponent(lull_float_bits(1.0f)), 14);
  CHECK_EQ_INT(lull_pack_scale_exponent(lull_float_bits(65504.0f)), -1);
  CHECK_EQ_INT(lull_pack_scale_exponent(lull_float_bits(INFINITY)), -100);
  CHECK_EQ_INT(lull_pack_scale_exponent(lull_float_bits(FLT_MAX)), -100);
  CHECK_EQ_INT(lull_pack_scale_exponent(1u), 100);                      /* subnormal */
  CHECK(lull_pow2(-100) == ldexpf(1.0f, -100) && lull_pow2(100) == ldexpf(1.0f, 100));
  int unclamped = 0;
  for (float b = 1e-36f; b < 1e36f; b *= 1.37f) {
    const int k = lull_pack_scale_exponent(lull_float_bits(b));
    if (k == -100 || k == 100)
      continue;
    const float scaled = b * lull_pow2(k);
    CHECK(scaled >= 16384.0f && scaled < 32768.0f);
    ++unclamped;
  }
  CHECK(unclamped > 100);
}

/* The colour pass over a colour image with non-finite values, read as a
 * flat array and through a view with padded rows (the per-pixel path), for
 * 1 to 4 channels (the fourth, alpha, does not count): both give the
 * largest finite magnitude, times 50 when demodulating; with the automatic
 * scale, the same counts and the scale the CPU backend picks
 * (lull_atrous_input_scale), and the bound times that scale. */
static void check_pack_bound(void)
{
  const int w = 37, h = 23;
  for (int channels = 1; channels <= 4; ++channels)
    for (int demodulate = 0; demodulate <= 1; ++demodulate) {
      const size_t n = (size_t)w * (size_t)h * (size_t)channels;
      float* flat = (float*)emu_alloc(n * sizeof(float));
      unsigned seed = 7u;
      float largest = 0.0f;
      for (size_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        flat[i] = ((float)(seed >> 8) / 16777216.0f - 0.3f) * 100.0f;
        if (i % 97 == 5)
          flat[i] = i % 2 ? NAN : -INFINITY;
        if (i == n / 2 + 1)
          flat[i] = -4321.0f; /* the largest magnitude: negative */
        if (channels == 4 && i % 4 == 3)
          flat[i] = 1e9f; /* alpha: not packed */
        else if ((flat[i] - flat[i]) == 0.0f)
          largest = fmaxf(largest, fabsf(flat[i]));
      }
      const size_t row = (size_t)w * (size_t)channels * sizeof(float);
      unsigned char* padded = (unsigned char*)emu_alloc((row + 12) * (size_t)h);
      for (int y = 0; y < h; ++y)
        memcpy(padded + (size_t)y * (row + 12), (const unsigned char*)flat + (size_t)y * row, row);
      lull_atrous_color_stats st[4];
      for (int k = 0; k < 4; ++k) {
        lull_atrous_prepare_args a;
        memset(&a, 0, sizeof a);
        a.color = view(flat, channels, w, h);
        if (k % 2 == 1) {
          a.color.data = padded;
          a.color.row_stride = row + 12;
        }
        CHECK_EQ_INT(prepare_bound_flat(&a.color), k % 2 == 0);
        a.width = w;
        a.height = h;
        a.channels = channels < 3 ? channels : 3;
        a.demodulate = demodulate;
        a.input_scale = 1.0f;
        a.auto_scale = k >= 2;
        a.stats = &st[k];
        emu_prepare_bound(&a);
      }
      const float expected = largest * (demodulate ? 1.0f / 0.02f : 1.0f);
      CHECK_EQ_INT((int)st[0].bound, (int)st[1].bound);
      CHECK(lull_bits_float(st[0].bound) == expected);
      CHECK(st[0].scale == 1.0f && st[0].inv_scale == 1.0f && st[0].count == 0u);
      lull_atrous_params params = lull_atrous_default_params();
      params.input_scale = NAN;
      const lull_image flat_view = view(flat, channels, w, h);
      float cpu_scale = 0.0f;
      lull_error err;
      CHECK_EQ_INT(lull_atrous_input_scale(&params, &flat_view, 1, &cpu_scale, &err), LULL_OK);
      CHECK(cpu_scale != 1.0f); /* the values' geometric mean is about 20 */
      for (int k = 2; k < 4; ++k) {
        CHECK(st[k].sum == st[2].sum && st[k].count == st[2].count);
        CHECK(st[k].count > (unsigned long long)(w * h) / 2u);
        CHECK(st[k].scale == cpu_scale && st[k].inv_scale * cpu_scale == 1.0f);
        CHECK(lull_bits_float(st[k].bound) == expected * cpu_scale);
      }
      /* the same values in half precision, 2 bytes into a buffer (the
       * per-pixel path's half and unaligned loads): the CPU and the pass
       * still count alike */
      const size_t n_px = (size_t)w * (size_t)h;
      unsigned char* halves = (unsigned char*)emu_alloc(n * 2 + 2);
      for (size_t i = 0; i < n; ++i) {
        const uint16_t v = lull_float_to_half(flat[i] * 1e-3f);
        memcpy(halves + 2 + 2 * i, &v, 2);
      }
      const lull_image half_view =
          view_at(halves, 2, (lull_format)(LULL_FORMAT_HALF + channels - 1), w, h,
                  (size_t)channels * 2, (size_t)channels * 2 * (size_t)w);
      CHECK_EQ_INT(lull_atrous_input_scale(&params, &half_view, 1, &cpu_scale, &err), LULL_OK);
      lull_atrous_color_stats hs;
      lull_atrous_prepare_args ha;
      memset(&ha, 0, sizeof ha);
      ha.color = half_view;
      ha.width = w;
      ha.height = h;
      ha.channels = channels < 3 ? channels : 3;
      ha.input_scale = 1.0f;
      ha.auto_scale = 1;
      ha.stats = &hs;
      emu_prepare_bound(&ha);
      CHECK(hs.scale == cpu_scale && hs.count > n_px / 2u);
      CHECK(cpu_scale != st[2].scale); /* the values are about 2^-10 of the floats' */
      free(halves);
      free(flat);
      free(padded);
    }
}

/* packedGuides over fp16's range: colour times `factor` (zero albedo: the
 * demodulation divides by 0.02), inputScale `input_scale`, colorMode
 * `color_mode`; before the packing scale, values above 65504 were clipped
 * (1e4 with zero albedo: a mean 0.13 of the fp32 result) and dark images
 * flushed to zero.  The fixed colour test compares packed colours with a
 * sigma times the packing scale (atrous_color_scale); sigma_color 0: the
 * default. */
static void run_packing_range(const char* name, float factor, int zero_albedo,
                              float input_scale, int color_mode, float sigma_color)
{
  const int w = 90, h = 70;
  gpu_scene s;
  gpu_scene_make(&s, w, h, 99u);
  const size_t n = (size_t)w * (size_t)h;
  float* color = (float*)emu_alloc(n * 3 * sizeof(float));
  float* variance = (float*)emu_alloc(n * 3 * sizeof(float));
  gpu_scene_atrous_inputs(&s, 3, 0, 0, color, variance);
  for (size_t i = 0; i < n * 3; ++i) {
    color[i] *= factor;
    if (zero_albedo)
      s.albedo[i] = 0.0f;
  }
  lull_atrous_images images;
  memset(&images, 0, sizeof images);
  images.color = view(color, 3, w, h);
  images.albedo = view(s.albedo, 3, w, h);
  images.normal = view(s.normal, 3, w, h);
  images.depth = view(s.depth, 1, w, h);
  lull_atrous_params params = lull_atrous_default_params();
  params.iterations = 3;
  params.input_scale = input_scale;
  params.color_mode = color_mode;
  if (sigma_color > 0.0f)
    params.sigma_color = sigma_color;
  compare(name, params, images, w, h, 3);
  free(color);
  free(variance);
  gpu_scene_free(&s);
}

int main(void)
{
  check_pack_scale();
  check_pack_bound();
  const int var = LULL_ATROUS_COLOR_VARIANCE, fixed = LULL_ATROUS_COLOR_FIXED;
  run_packing_range("hdr 1e4, zero albedo", 1e4f, 1, 1.0f, var, 0.0f);
  run_packing_range("hdr 1e6", 1e6f, 0, 1.0f, var, 0.0f);
  run_packing_range("dark 1e-6", 1e-6f, 0, 1.0f, var, 0.0f);
  run_packing_range("inputScale 1e5", 1.0f, 1, 1e5f, var, 0.0f);
  /* the automatic scale: the packing bound is found in the colour's own
   * units and scaled at the end (it overflowed to inf at 1e37 with zero
   * albedo, x50, and every packed value was flushed to 0) */
  run_packing_range("auto, 1e37, zero albedo", 1e37f, 1, NAN, var, 0.0f);
  run_packing_range("auto, 1e-30", 1e-30f, 0, NAN, var, 0.0f);
  /* the fixed test: 1 / sigma^2 in packed units from tiny to beyond the
   * float range (colour clamped at 1e15, sigma 1e-7: held at -FLT_MAX,
   * where 0 * -inf made the centre's weight NaN) */
  run_packing_range("fixed, hdr 1e4, zero albedo", 1e4f, 1, 1.0f, fixed, 0.0f);
  run_packing_range("fixed, dark 1e-6", 1e-6f, 0, 1.0f, fixed, 0.0f);
  run_packing_range("fixed, 1e20, sigma 1e-7", 1e20f, 0, 1.0f, fixed, 1e-7f);
  run_packing_range("fixed, auto, 1e-30", 1e-30f, 0, NAN, fixed, 0.0f);
  static const config configs[] = {
      /* name              w    h  ch alb nrm geo mode it srgb var scale poison
       *   (scale NaN: automatic, lull_atrous_scale_is_auto)
       *   colour storage, guide storage, float variant */
      {"variance+depth", 160, 120, 3, 1, 1, 1, 1, 4, 0, 0, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"variance+position", 150, 110, 3, 1, 1, 2, 1, 4, 0, 0, 1.0f, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"fixed+position", 150, 110, 3, 1, 1, 2, 0, 4, 0, 0, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"fixed+depth", 97, 61, 3, 1, 1, 1, 0, 3, 0, 0, 1.0f, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"rgba no-normal", 131, 97, 4, 1, 0, 1, 1, 3, 0, 0, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"non-finite inputs", 120, 90, 3, 1, 1, 1, 1, 3, 0, 0, NAN, 1, STORE_FLOAT, STORE_FLOAT, 1},
      {"ldr srgb scale", 100, 80, 3, 1, 1, 1, 1, 3, 1, 0, 0.5f, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"variance image 1ch", 90, 70, 3, 1, 1, 1, 1, 3, 0, 1, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      /* an explicit scale applies to a given variance squared */
      {"variance image, scale 4", 90, 70, 3, 1, 1, 1, 1, 3, 0, 3, 4.0f, 0, STORE_FLOAT,
       STORE_FLOAT, 1},
      {"variance image 3ch", 90, 70, 3, 1, 1, 2, 1, 3, 0, 3, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"gray, no guides", 101, 67, 1, 0, 0, 0, 1, 3, 0, 0, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"two channels", 64, 64, 2, 0, 1, 1, 0, 2, 0, 0, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"10 levels, 13x9", 13, 9, 3, 1, 1, 1, 1, 10, 0, 0, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"1x1", 1, 1, 3, 1, 1, 1, 1, 5, 0, 0, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      /* the first level is the last (packed: its output goes to the fp16
       * colour buffer it does not read) */
      {"one level, rgba", 83, 59, 4, 1, 1, 1, 1, 1, 0, 0, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"1x37", 1, 37, 3, 1, 1, 1, 1, 6, 0, 0, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"large, 5 levels", 333, 257, 3, 1, 1, 1, 1, 5, 0, 0, NAN, 0, STORE_FLOAT, STORE_FLOAT, 1},
      {"half inputs", 121, 83, 3, 1, 1, 1, 1, 4, 0, 1, NAN, 0, STORE_HALF, STORE_HALF, 0},
      {"half, position", 77, 50, 3, 1, 1, 2, 1, 3, 0, 3, NAN, 0, STORE_HALF, STORE_HALF, 0},
      {"unaligned floats", 110, 75, 3, 1, 1, 1, 1, 4, 0, 1, NAN, 1, STORE_UNALIGNED,
       STORE_UNALIGNED, 0},
      {"half guides", 96, 70, 3, 1, 1, 1, 1, 3, 0, 0, NAN, 0, STORE_FLOAT, STORE_HALF, 0},
      {"unaligned variance", 70, 45, 3, 0, 0, 0, 1, 3, 0, 1, NAN, 0, STORE_FLOAT,
       STORE_UNALIGNED, 0},
      /* the fixed colour test reads no variance image */
      {"half variance, fixed", 70, 45, 3, 0, 0, 0, 0, 3, 0, 1, NAN, 0, STORE_FLOAT, STORE_HALF,
       1},
  };
  for (size_t i = 0; i < sizeof configs / sizeof configs[0]; ++i)
    run_config(&configs[i]);
  run_tiny_geometry_scale();
  run_aux_channels();
  run_float_max();
  run_tiny_images();
  for (int layout = 0; layout < VIEWS_CASES; ++layout)
    run_views(layout);
  run_render("cornell");
  return lull_test_result("atrous_emulation");
}
