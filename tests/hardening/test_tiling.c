/* maxMemoryMB: the à-trous filter in overlapping tiles (core/atrous_tiled.c)
 * gives the untiled result, on real renders (tests/data).
 *
 *   - on a 1024 x 1024 mosaic of a render (768 x 768 under AddressSanitizer:
 *     one scene, one case), caps of 1/2, 1/4, 1/8 of the
 *     untiled scratch give different grids; each grid's tiles fit its cap
 *     and the output agrees with the untiled run within 1e-5 (relative, at
 *     least 1 in the denominator), for the variance-guided and the fixed
 *     colour test, depth or position guides, a given variance image, and
 *     colour alone (RTLightmap);
 *   - in place (the output is the colour image, or overlaps it shifted by
 *     rows) gives the same output;
 *   - the reach is the filter's real footprint: with the colour test off
 *     (the filter is then linear), a change of the colour exactly
 *     lull_atrous_reach pixels away (through the taps, and through the
 *     inpainting of a non-finite pixel) changes the output, one pixel
 *     further away nothing changes.  (The 3x3 guide, 5x5 variance and
 *     footprint stencils are counted from the code: at the far end of the
 *     reach their influence is below float resolution.)
 *   - the grid: for every cap from 1 byte to the untiled scratch, no more
 *     tiles along an axis than tiles as wide as the overlap need (narrower
 *     ones filter more than 9 pixels for each they output: 2 x 2 tiles once
 *     took 49152 runs of a 512 x 384 image), within the cap whenever such
 *     tiles fit it, and the pixels filtered in all never grow as the cap
 *     grows;
 *   - progress over the tiles rises to 1, reported once, last; a run
 *     cancelled half way returns CANCELLED and leaves each output pixel
 *     either as it was or filtered (the tiles done before the request),
 *     never anything else;
 *   - through the API, ATrous, RT and RTLightmap with maxMemoryMB set give
 *     the output of maxMemoryMB = -1, also in place; and tiling by hand as
 *     OIDN documents it (tiles overlapping by the filter's tileOverlap)
 *     gives the untiled output;
 *   - the cap holds: on a 1024 x 1024 image, the process's peak resident
 *     memory grows by at most the cap (+1 MB) over its images while
 *     filtering with 8 and 32 MB (glibc, not under AddressSanitizer, whose
 *     allocator keeps freed memory in quarantine).
 *
 * Prints the largest difference of each case (the README's figures). */
#define _XOPEN_SOURCE 700

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <OpenImageDenoise/oidn.h>

#include "atrous_tiled.h"
#include "lull_io.h"
#include "peak_memory.h"
#include "sanitizer.h"
#include "test_util.h"

static double worst_seen = 0.0; /* largest difference of all agreeing runs */

/* Largest |a - b| / max(1, |b|) over the first `channels` floats of each of
 * n pixels `stride` floats apart. */
static double rel_diff(const float* a, const float* b, size_t n, int stride, int channels)
{
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < channels; ++c) {
      const double x = a[i * (size_t)stride + (size_t)c], y = b[i * (size_t)stride + (size_t)c];
      const double d = fabs(x - y) / fmax(1.0, fabs(y));
      if (!(d <= worst)) /* NaN counts */
        worst = isnan(d) ? INFINITY : d;
    }
  return worst;
}

static lull_image view(float* data, int channels, int w, int h, int stride_floats)
{
  lull_image image;
  image.data = (unsigned char*)data;
  image.format = (lull_format)channels; /* FLOAT..FLOAT4 */
  image.width = w;
  image.height = h;
  image.pixel_stride = (size_t)stride_floats * sizeof(float);
  image.row_stride = image.pixel_stride * (size_t)w;
  return image;
}

static const lull_io_pass* pass_of(const lull_io_image* image, const char* name)
{
  const lull_io_pass* pass = lull_io_find_pass(image, NULL, name);
  if (!pass) {
    fprintf(stderr, "no pass '%s'\n", name);
    exit(1);
  }
  return pass;
}

typedef struct scene
{
  const char* name;
  int w, h;
  float* color; /* RGBA (Combined) */
  float* albedo;
  float* normal;
  float* depth;
  float* position;
  float* variance; /* synthetic: one channel */
} scene;

static int load_scene(const char* name, int mosaic, scene* s)
{
  char path[512], err[512];
  snprintf(path, sizeof path, "%s/%s/%s_spp4.exr", LULL_TEST_DATA_DIR, name, name);
  lull_io_image image;
  if (lull_io_read(path, &image, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 0;
  }
  s->name = name;
  const int iw = image.width, ih = image.height;
  s->w = mosaic * iw;
  s->h = mosaic * ih;
  const size_t n = (size_t)s->w * (size_t)s->h;
  const struct
  {
    const char* pass;
    float** dst;
    int channels;
  } passes[] = {{"Combined", &s->color, 4},         {"Denoising Albedo", &s->albedo, 3},
                {"Denoising Normal", &s->normal, 3}, {"Denoising Depth", &s->depth, 1},
                {"Position", &s->position, 3}};
  for (size_t k = 0; k < sizeof passes / sizeof passes[0]; ++k) {
    const lull_io_pass* pass = pass_of(&image, passes[k].pass);
    const size_t c = (size_t)pass->channels;
    CHECK_EQ_INT(pass->channels, passes[k].channels);
    float* dst = malloc(n * c * sizeof(float));
    /* mirrored copies, so the mosaic has no seams */
    for (int y = 0; y < s->h; ++y)
      for (int x = 0; x < s->w; ++x) {
        const int sx = (x / iw) % 2 ? iw - 1 - x % iw : x % iw;
        const int sy = (y / ih) % 2 ? ih - 1 - y % ih : y % ih;
        memcpy(dst + ((size_t)y * (size_t)s->w + (size_t)x) * c,
               pass->data + ((size_t)sy * (size_t)iw + (size_t)sx) * c, c * sizeof(float));
      }
    *passes[k].dst = dst;
  }
  /* a variance image: noisy pixels are those far from their right neighbour */
  s->variance = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    const float d = s->color[4 * i] - s->color[4 * ((i + 1) % n)];
    s->variance[i] = 0.25f * d * d;
  }
  lull_io_free(&image);
  return 1;
}

static void free_scene(scene* s)
{
  free(s->color);
  free(s->albedo);
  free(s->normal);
  free(s->depth);
  free(s->position);
  free(s->variance);
}

enum { CASE_DEFAULT, CASE_FIXED_POSITION, CASE_VARIANCE_GIVEN, CASE_COLOR_ONLY, CASES };
static const char* const case_names[CASES] = {"variance-guided, depth", "fixed, position",
                                              "variance given", "colour only"};

/* The images and parameters of a case; the output is `out` (RGBA). */
static void setup(const scene* s, int which, float* color, float* out, lull_atrous_params* p,
                  lull_atrous_images* im)
{
  *p = lull_atrous_default_params();
  memset(im, 0, sizeof *im);
  im->color = view(color, 4, s->w, s->h, 4);
  im->output = view(out, 4, s->w, s->h, 4);
  if (which != CASE_COLOR_ONLY) {
    im->albedo = view(s->albedo, 3, s->w, s->h, 3);
    im->normal = view(s->normal, 3, s->w, s->h, 3);
  }
  if (which == CASE_DEFAULT || which == CASE_VARIANCE_GIVEN)
    im->depth = view(s->depth, 1, s->w, s->h, 1);
  if (which == CASE_FIXED_POSITION) {
    im->position = view(s->position, 3, s->w, s->h, 3);
    p->color_mode = LULL_ATROUS_COLOR_FIXED;
    p->sigma_color = 0.5f;
    p->sigma_depth = 0.5f;
  }
  if (which == CASE_VARIANCE_GIVEN)
    im->variance = view(s->variance, 1, s->w, s->h, 1);
  if (which == CASE_COLOR_ONLY)
    p->iterations = 4;
}

static void run(const lull_atrous_params* p, const lull_atrous_images* im,
                const lull_atrous_tiling* tiling)
{
  lull_error err = {LULL_OK, ""};
  const lull_status status = tiling ? lull_atrous_cpu_tiling(p, im, tiling, 2, NULL, NULL, &err)
                                    : lull_atrous_cpu_tiled(p, im, 2, NULL, NULL, &err);
  if (status != LULL_OK) {
    fprintf(stderr, "filter failed: %s\n", err.message);
    ++lull_test_failures;
  }
}

static void check_agrees(const char* what, const float* out, const float* ref, size_t n)
{
  const double d = rel_diff(out, ref, n, 4, 4);
  printf("  %-58s max rel. difference %.3g\n", what, d);
  CHECK(d <= 1e-5);
  worst_seen = fmax(worst_seen, d);
}

static void test_caps(const scene* s, int which, int in_place)
{
  const size_t n = (size_t)s->w * (size_t)s->h;
  float* ref = calloc(n * 4, sizeof(float));
  float* out = calloc(n * 4, sizeof(float));
  lull_atrous_params p;
  lull_atrous_images im;
  setup(s, which, s->color, ref, &p, &im);
  run(&p, &im, NULL); /* no cap: untiled */
  const size_t full = lull_atrous_cpu_scratch_bytes(&im);
  printf("%s, %s: reach %d, untiled scratch %zu bytes\n", s->name, case_names[which],
         lull_atrous_reach(&p, &im), full);

  int last_cells = 1;
  for (int k = 1; k <= 3; ++k) {
    setup(s, which, s->color, out, &p, &im);
    p.memory_cap = full >> k;
    const lull_atrous_tiling t = lull_atrous_choose_tiling(&p, &im);
    char what[160];
    snprintf(what, sizeof what, "cap 1/%d: %d x %d tiles of %d x %d, overlap %d", 1 << k,
             t.columns, t.rows, t.tile_width, t.tile_height, t.overlap);
    CHECK(t.columns * t.rows > last_cells); /* smaller caps, more tiles */
    CHECK(t.bytes <= p.memory_cap);
    last_cells = t.columns * t.rows;
    memset(out, 0, n * 4 * sizeof(float));
    run(&p, &im, NULL);
    check_agrees(what, out, ref, n);
  }

  if (!in_place) {
    free(out);
    free(ref);
    return;
  }
  /* in place: the output is the colour */
  float* color = malloc(n * 4 * sizeof(float));
  memcpy(color, s->color, n * 4 * sizeof(float));
  setup(s, which, color, color, &p, &im);
  p.memory_cap = full >> 3;
  run(&p, &im, NULL);
  check_agrees("in place, cap 1/8", color, ref, n);

  /* the output overlaps the colour 3 rows further on (held back whole) */
  const int shift = 3;
  float* block = malloc((n + (size_t)shift * (size_t)s->w) * 4 * sizeof(float));
  memcpy(block, s->color, n * 4 * sizeof(float));
  setup(s, which, block, block + (size_t)shift * (size_t)s->w * 4, &p, &im);
  p.memory_cap = full >> 2;
  const lull_atrous_tiling t = lull_atrous_choose_tiling(&p, &im);
  CHECK(t.columns * t.rows > 1);
  run(&p, &im, NULL);
  check_agrees("output overlapping the colour 3 rows down, cap 1/4",
               block + (size_t)shift * (size_t)s->w * 4, ref, n);
  free(block);
  free(color);
  free(out);
  free(ref);
}

/* Output pixel (c, c) of a linear run (no colour test, no guides) on a
 * smooth image, with the colour at (c + d, c + d) changed to `value` and,
 * when nan_at >= 0, the colour at (c + nan_at, c + nan_at) non-finite. */
static float probe(int iterations, int d, float value, int nan_at)
{
  enum { SIDE = 160, C = 80 };
  float* color = malloc((size_t)SIDE * SIDE * 3 * sizeof(float));
  float* out = malloc((size_t)SIDE * SIDE * 3 * sizeof(float));
  for (int i = 0; i < SIDE * SIDE * 3; ++i)
    color[i] = 0.5f + 0.25f * sinf(0.01f * (float)i);
  if (d >= 0)
    for (int k = 0; k < 3; ++k)
      color[((size_t)(C + d) * SIDE + (size_t)(C + d)) * 3 + (size_t)k] = value;
  if (nan_at >= 0)
    color[((size_t)(C + nan_at) * SIDE + (size_t)(C + nan_at)) * 3] = NAN;
  lull_atrous_params p = lull_atrous_default_params();
  p.iterations = iterations;
  p.color_mode = LULL_ATROUS_COLOR_FIXED;
  p.sigma_color = 1e30f; /* weights are the B3 kernel's alone */
  lull_atrous_images im;
  memset(&im, 0, sizeof im);
  im.color = view(color, 3, SIDE, SIDE, 3);
  im.output = view(out, 3, SIDE, SIDE, 3);
  run(&p, &im, NULL);
  const float v = out[((size_t)C * SIDE + C) * 3];
  free(out);
  free(color);
  return v;
}

static void test_reach_exact(void)
{
  for (int n = 1; n <= 5; ++n) {
    lull_atrous_params p = lull_atrous_default_params();
    p.iterations = n;
    p.color_mode = LULL_ATROUS_COLOR_FIXED;
    lull_atrous_images im;
    memset(&im, 0, sizeof im);
    im.color.width = im.color.height = 1;
    const int reach = lull_atrous_reach(&p, &im);
    const int taps = reach - 2; /* the inpainting radius is the rest */
    const float base = probe(n, -1, 0.0f, -1);
    /* through the taps: a far colour counts with weight (1/16)^(2N) */
    CHECK(probe(n, taps, 1e20f, -1) != base);
    CHECK(probe(n, taps + 1, 1e20f, -1) == base);
    /* through the inpainting of a non-finite pixel at the taps' end */
    const float nan_base = probe(n, -1, 0.0f, taps);
    CHECK(probe(n, reach, 1e20f, taps) != nan_base);
    CHECK(probe(n, reach + 1, 1e20f, taps) == nan_base);
    printf("  iterations %d: reach %d (taps %d, inpainting 2): output changes with the colour "
           "%d pixels away, not %d\n", n, reach, taps, reach, reach + 1);
  }
}

/* The grid lull_atrous_choose_tiling picks for caps from 1 byte to the
 * untiled scratch, for four image shapes and iteration counts, with the
 * output apart from the inputs, in place (its rows held back), and
 * overlapping the colour 3 rows further on (all of it held back). */
static void test_chooser(void)
{
  static const int shapes[4][3] = {{512, 384, 5}, {256, 192, 5}, {2048, 96, 5}, {300, 200, 3}};
  static const char* const aliasing[3] = {"apart", "in place", "overlapping"};
  for (int k = 0; k < 4; ++k)
    for (int a = 0; a < 3; ++a) {
      const int w = shapes[k][0], h = shapes[k][1];
      const size_t floats = (size_t)w * (size_t)(h + 3) * 3;
      float* memory = calloc(3 * floats, sizeof(float)); /* never read: addresses only */
      lull_atrous_params p = lull_atrous_default_params();
      p.iterations = shapes[k][2];
      lull_atrous_images im;
      memset(&im, 0, sizeof im);
      im.color = view(memory, 3, w, h, 3);
      im.albedo = view(memory + floats, 3, w, h, 3);
      im.normal = im.albedo;
      im.depth = view(memory + floats, 1, w, h, 1);
      float* out = a == 0 ? memory + 2 * floats : memory + (a == 2 ? 3 * w * 3 : 0);
      im.output = view(out, 3, w, h, 3);
      const size_t full = lull_atrous_cpu_scratch_bytes(&im);
      const int overlap = lull_atrous_reach(&p, &im);
      const int min_w = LULL_MIN(overlap, w), min_h = LULL_MIN(overlap, h);
      p.memory_cap = 1;
      const lull_atrous_tiling smallest = lull_atrous_choose_tiling(&p, &im);
      double last_cost = INFINITY;
      int last_fits = 0, grids = 0, over = 0, bad = 0;
      for (size_t cap = 1; cap < full + full / 10; cap += cap / 20 + 1) {
        p.memory_cap = cap;
        const lull_atrous_tiling t = lull_atrous_choose_tiling(&p, &im);
        const double cost = (double)t.columns * t.rows *
                            (double)LULL_MIN(t.tile_width + 2 * overlap, w) *
                            (double)LULL_MIN(t.tile_height + 2 * overlap, h);
        const int fits = t.bytes <= cap;
        const int narrow =
            t.columns > (w + min_w - 1) / min_w || t.rows > (h + min_h - 1) / min_h ||
            (t.columns - 1) * t.tile_width >= w || (t.rows - 1) * t.tile_height >= h;
        const int broken = (smallest.bytes <= cap && !fits) ||
                           (t.columns * t.rows > 1 && t.bytes >= full); /* untiled takes less */
        /* a larger cap never filters more, but for the step from a grid over
         * the cap to one within it */
        const int worse = last_fits && cost > last_cost * (1.0 + 1e-12);
        if ((narrow || broken || worse) && bad++ < 3)
          printf("  %dx%d %s, cap %zu: %d x %d tiles of %d x %d (%zu bytes), %.0f pixels "
                 "filtered (before %.0f)\n", w, h, aliasing[a], cap, t.columns, t.rows,
                 t.tile_width, t.tile_height, t.bytes, cost, last_cost);
        over += !fits;
        last_cost = cost;
        last_fits = fits;
        ++grids;
      }
      printf("  %dx%d, %d levels, output %s: %d caps up to %zu bytes, %d over the cap (smallest "
             "grid %d x %d of %zu bytes), %d wrong\n", w, h, p.iterations, aliasing[a], grids,
             full, over, smallest.columns, smallest.rows, smallest.bytes, bad);
      CHECK_EQ_INT(bad, 0);
      /* a chooser that never tiled would pass the above: the smallest grids
       * take well under the untiled scratch (but for 256 x 192, whose
       * overlap-wide tiles' windows span most of it) */
      if (k != 1)
        CHECK(smallest.columns * smallest.rows > 1 && smallest.bytes < full / 2);
      free(memory);
    }
}

/* -- the cap holds -------------------------------------------------------------- */

#if defined(__GLIBC__) && !defined(LULL_ASAN)
/* In a child (the peak only ever grows): images, then the filter under a
 * cap; exits 0 when the peak grew by at most the cap plus 1 MB. */
static int peak_within_cap(int cap_mb)
{
  enum { SIDE = 1024 };
  const size_t n = (size_t)SIDE * SIDE;
  float* color = malloc(n * 3 * sizeof(float));
  float* out = malloc(n * 3 * sizeof(float));
  for (size_t i = 0; i < n * 3; ++i) {
    color[i] = 0.5f + 0.25f * sinf(0.001f * (float)i);
    out[i] = 1.0f; /* touched, so it counts before the run */
  }
  lull_atrous_params p = lull_atrous_default_params();
  p.memory_cap = (size_t)cap_mb << 20;
  lull_atrous_images im;
  memset(&im, 0, sizeof im);
  im.color = view(color, 3, SIDE, SIDE, 3);
  im.output = view(out, 3, SIDE, SIDE, 3);
  const long before = lull_peak_memory_kb();
  lull_error err;
  const lull_status status = lull_atrous_cpu_tiled(&p, &im, 2, NULL, NULL, &err);
  const long grown = lull_peak_memory_kb() - before;
  printf("  maxMemoryMB %d on %dx%d: peak memory grew by %.1f MB\n", cap_mb, SIDE, SIDE,
         (double)grown / 1024.0);
  fflush(stdout);
  return status == LULL_OK && before > 0 && grown <= ((long)cap_mb + 1) * 1024;
}

static void test_peak_memory(void)
{
  static const int caps[] = {8, 32};
  for (int k = 0; k < 2; ++k) {
    fflush(stdout);
    const pid_t child = fork();
    if (child == 0)
      _exit(peak_within_cap(caps[k]) ? 0 : 1);
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}
#else
static void test_peak_memory(void) {}
#endif

/* -- through the API ---------------------------------------------------------- */

static float* api_run(const scene* s, const char* type, int max_memory_mb, int in_place)
{
  const size_t n = (size_t)s->w * (size_t)s->h, w = (size_t)s->w, h = (size_t)s->h;
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  OIDNFilter f = oidnNewFilter(device, type);
  float* color = malloc(n * 4 * sizeof(float));
  memcpy(color, s->color, n * 4 * sizeof(float));
  float* out = in_place ? color : calloc(n * 4, sizeof(float));
  oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, w, h, 0, 16, 0);
  oidnSetSharedFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, w, h, 0, 16, 0);
  if (strcmp(type, "RTLightmap") != 0) {
    oidnSetSharedFilterImage(f, "albedo", s->albedo, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetSharedFilterImage(f, "normal", s->normal, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  }
  if (strcmp(type, "RT") == 0)
    oidnSetFilterBool(f, "hdr", true);
  oidnSetFilterInt(f, "maxMemoryMB", max_memory_mb);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  const char* message = NULL;
  if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE) {
    fprintf(stderr, "%s: %s\n", type, message);
    ++lull_test_failures;
  }
  oidnReleaseFilter(f);
  oidnReleaseDevice(device);
  if (in_place)
    return color;
  free(color);
  return out;
}

static void test_api(const scene* s)
{
  static const char* const types[] = {"ATrous", "RT", "RTLightmap"};
  const size_t n = (size_t)s->w * (size_t)s->h;
  for (int t = 0; t < 3; ++t) {
    float* ref = api_run(s, types[t], -1, 0);
    for (int mb = 0; mb <= 4; mb += 4)
      for (int in_place = 0; in_place <= 1; ++in_place) {
        float* out = api_run(s, types[t], mb, in_place);
        char what[160];
        snprintf(what, sizeof what, "API %s, maxMemoryMB %d%s", types[t], mb,
                 in_place ? ", in place" : "");
        const double d = rel_diff(out, ref, n, 4, 3);
        printf("  %-58s max rel. difference %.3g\n", what, d);
        CHECK(d <= 1e-5);
        worst_seen = fmax(worst_seen, d);
        free(out);
      }
    free(ref);
  }
}

/* A progress monitor that records the calls and can ask to stop. */
typedef struct progress_log
{
  int calls, ones, cancel_at, monotonic;
  double last;
} progress_log;

static int log_progress(void* user, double done)
{
  progress_log* p = user;
  p->calls += 1;
  p->ones += done == 1.0;
  p->monotonic &= done >= p->last && done <= 1.0;
  p->last = done;
  return p->cancel_at <= 0 || p->calls < p->cancel_at;
}

static void test_progress(const scene* s)
{
  enum { SENTINEL = -7 };
  const size_t n = (size_t)s->w * (size_t)s->h;
  float* ref = calloc(n * 4, sizeof(float));
  float* out = malloc(n * 4 * sizeof(float));
  lull_atrous_params p;
  lull_atrous_images im;
  setup(s, CASE_DEFAULT, s->color, ref, &p, &im);
  run(&p, &im, NULL);
  setup(s, CASE_DEFAULT, s->color, out, &p, &im);
  p.memory_cap = lull_atrous_cpu_scratch_bytes(&im) >> 3;
  const lull_atrous_tiling t = lull_atrous_choose_tiling(&p, &im);
  const int tiles = t.columns * t.rows;
  CHECK(tiles > 2);
  int full = 0;
  for (int cancel = 0; cancel <= 1; ++cancel) {
    for (size_t i = 0; i < n * 4; ++i)
      out[i] = (float)SENTINEL;
    progress_log log = {0, 0, cancel ? full / 2 : 0, 1, 0.0};
    const lull_progress monitor = {log_progress, &log};
    lull_error err = {LULL_OK, ""};
    const lull_status status = lull_atrous_cpu_tiled(&p, &im, 2, NULL, &monitor, &err);
    size_t filtered = 0, untouched = 0;
    for (size_t i = 0; i < n; ++i) {
      int same = 1, kept = 1;
      for (int c = 0; c < 4; ++c) {
        const float a = out[4 * i + (size_t)c], b = ref[4 * i + (size_t)c];
        same &= c == 3 || fabsf(a - b) <= 1e-5f * fmaxf(1.0f, fabsf(b));
        kept &= a == (float)SENTINEL;
      }
      filtered += (size_t)same;
      untouched += (size_t)kept;
    }
    printf("  progress over %d tiles%s: %d calls, %d of them 1, status %d; %zu pixels filtered, "
           "%zu untouched\n", tiles, cancel ? ", cancelled half way" : "", log.calls, log.ones,
           (int)status, filtered, untouched);
    CHECK(log.monotonic);
    if (!cancel) {
      CHECK_EQ_INT((int)status, LULL_OK);
      CHECK(log.calls > tiles);
      CHECK_EQ_INT(log.ones, 1); /* the run's end, not each tile's */
      CHECK(log.last == 1.0);
      CHECK_EQ_INT((int)filtered, (int)n);
      full = log.calls;
    } else {
      CHECK_EQ_INT((int)status, LULL_ERROR_CANCELLED);
      CHECK_EQ_INT(log.calls, log.cancel_at); /* not called after the request */
      CHECK_EQ_INT(log.ones, 0);
      CHECK_EQ_INT((int)(filtered + untouched), (int)n);
      CHECK(filtered > 0 && untouched > 0);
    }
  }
  free(out);
  free(ref);
}

/* RT by hand in 2 x 2 tiles with OIDN's tileOverlap, as OIDN's users tile. */
static void test_manual_tiling(const scene* s)
{
  const size_t w = (size_t)s->w, h = (size_t)s->h, n = w * h;
  float* ref = calloc(n * 4, sizeof(float));
  float* out = calloc(n * 4, sizeof(float));
  float* tile_out = calloc(n * 4, sizeof(float));
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  OIDNFilter f = oidnNewFilter(device, "RT");
  oidnSetFilterBool(f, "hdr", true);
  /* the whole image */
  oidnSetSharedFilterImage(f, "color", s->color, OIDN_FORMAT_FLOAT3, w, h, 0, 16, 0);
  oidnSetSharedFilterImage(f, "albedo", s->albedo, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  oidnSetSharedFilterImage(f, "normal", s->normal, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", ref, OIDN_FORMAT_FLOAT3, w, h, 0, 16, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  const size_t overlap = (size_t)oidnGetFilterInt(f, "tileOverlap");
  /* each quarter with `overlap` pixels around it (inside the image) */
  for (int q = 0; q < 4; ++q) {
    const size_t x0 = (size_t)(q % 2) * (w / 2), y0 = (size_t)(q / 2) * (h / 2);
    const size_t x1 = x0 + w / 2, y1 = y0 + h / 2;
    const size_t ex0 = x0 > overlap ? x0 - overlap : 0, ey0 = y0 > overlap ? y0 - overlap : 0;
    const size_t ex1 = x1 + overlap < w ? x1 + overlap : w;
    const size_t ey1 = y1 + overlap < h ? y1 + overlap : h;
    const size_t tw = ex1 - ex0, th = ey1 - ey0;
    oidnSetSharedFilterImage(f, "color", s->color + (ey0 * w + ex0) * 4, OIDN_FORMAT_FLOAT3, tw,
                             th, 0, 16, w * 16);
    oidnSetSharedFilterImage(f, "albedo", s->albedo + (ey0 * w + ex0) * 3, OIDN_FORMAT_FLOAT3, tw,
                             th, 0, 12, w * 12);
    oidnSetSharedFilterImage(f, "normal", s->normal + (ey0 * w + ex0) * 3, OIDN_FORMAT_FLOAT3, tw,
                             th, 0, 12, w * 12);
    oidnSetSharedFilterImage(f, "output", tile_out, OIDN_FORMAT_FLOAT3, tw, th, 0, 16, tw * 16);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    for (size_t y = y0; y < y1; ++y)
      memcpy(out + (y * w + x0) * 4, tile_out + ((y - ey0) * tw + (x0 - ex0)) * 4,
             (x1 - x0) * 4 * sizeof(float));
  }
  const char* message = NULL;
  if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE) {
    fprintf(stderr, "manual tiling: %s\n", message);
    ++lull_test_failures;
  }
  char what[120];
  snprintf(what, sizeof what, "API RT in 2 x 2 tiles by hand, tileOverlap %zu", overlap);
  const double d = rel_diff(out, ref, n, 4, 3);
  printf("  %-58s max rel. difference %.3g\n", what, d);
  CHECK(overlap > 0 && overlap % 16 == 0);
  CHECK(d <= 1e-5);
  oidnReleaseFilter(f);
  oidnReleaseDevice(device);
  free(tile_out);
  free(out);
  free(ref);
}

int main(void)
{
  if (!lull_io_has_oiio()) {
    printf("hardening_tiling: this build cannot read EXR (no OpenImageIO); skipped\n");
    return 77;
  }
  test_peak_memory(); /* first: the children fork before any thread exists */
  test_reach_exact();
  test_chooser();
  static const char* const scenes[] = {"cornell", "dof_glossy"};
#if defined(LULL_ASAN)
  /* 5x slower under AddressSanitizer: the default case on one scene */
  const int scene_count = 1, case_count = 1, mosaic = 3;
#else
  const int scene_count = 2, case_count = CASES, mosaic = 4;
#endif
  for (int k = 0; k < scene_count; ++k) {
    scene s;
    memset(&s, 0, sizeof s);
    if (!load_scene(scenes[k], mosaic, &s)) {
      printf("hardening_tiling: test renders missing; skipped\n");
      return 77;
    }
    /* every case on the first scene, the default one on the other */
    for (int which = 0; which < (k == 0 ? case_count : 1); ++which)
      test_caps(&s, which, which == CASE_DEFAULT);
    if (k == 0) {
      test_manual_tiling(&s);
      test_progress(&s);
    }
    free_scene(&s);
  }
  scene s;
  memset(&s, 0, sizeof s);
  if (load_scene("cornell", 1, &s))
    test_api(&s);
  free_scene(&s);
  printf("hardening_tiling: largest difference tiled vs untiled %.3g\n", worst_seen);
  return lull_test_result("hardening_tiling");
}
