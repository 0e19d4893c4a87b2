/* The command-line tool: help and usage errors, parameter typing, the
 * non-destructive multilayer output, OIDN-style flags (and that they give
 * the same result as the Blender-style input), round trips, failures
 * that must leave an existing output as it was, outputs that would
 * replace an input (refused), and `lull blender` / `lull run` (a program
 * started with lull's OIDN library first on its library path). */
#define _XOPEN_SOURCE 700

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_test_util.h"
#include "half.h"
#include "metrics.h"
#include "rhf_math.h"
#include "test_util.h"
#if defined(LULL_IO_HAS_OIIO)
  #include "exr_fixtures.h"
#endif

#define ARGS(...) ((const char* const[]){__VA_ARGS__, NULL})

static const char* tool = LULL_CLI_TOOL;

/* Runs the tool and checks its exit status; on a mismatch prints its stderr. */
#define EXPECT(status, ...) \
  cli_expect(tool, dir, status, ARGS(__VA_ARGS__), __FILE__, __LINE__)

static int stderr_lines(const char* dir)
{
  char* s = cli_slurp(dir, "stderr.txt");
  const int n = s ? cli_count_lines(s) : -1;
  free(s);
  return n;
}

/* The value after `key` in the captured stdout (after the first `after`). */
static double number_after(const char* dir, const char* after, const char* key)
{
  char* s = cli_slurp(dir, "stdout.txt");
  double v = NAN;
  const char* p = s ? strstr(s, after) : NULL;
  p = p ? strstr(p, key) : NULL;
  if (p)
    v = strtod(p + strlen(key), NULL);
  free(s);
  return v;
}

static float max_diff(const lull_io_pass* a, const lull_io_pass* b, size_t pixels)
{
  if (!a || !b || a->channels != b->channels)
    return INFINITY;
  return (float)lull_test_max_abs_diff(a->data, b->data, pixels * (size_t)a->channels);
}

#if defined(LULL_IO_HAS_OIIO)
/* A Blender EXR of one view layer, "ViewLayer", as dir/name into path
 * (with "Noisy Image" when noisy_image_pass): 0 or non-zero. */
static int write_view_layer_exr(const char* dir, const cli_scene* scene, const char* name,
                                int noisy_image_pass, char* path, size_t size)
{
  static const char* const layers[] = {"ViewLayer"};
  cli_path(path, size, dir, name);
  return cli_scene_write_blender(scene, path, layers, 1, noisy_image_pass);
}
#endif

/* -- help and usage ---------------------------------------------------------------------------- */

static void test_usage(const char* dir)
{
  EXPECT(0, "--help");
  CHECK(cli_said(dir, "stdout.txt", "denoise"));
  EXPECT(0, "--version");
  EXPECT(0, "denoise", "--help");
  CHECK(cli_said(dir, "stdout.txt", "--shard"));
  CHECK(cli_said(dir, "stdout.txt", "--hdr"));
  EXPECT(0, "compare", "--help");
  EXPECT(0, "info", "--help");
  EXPECT(0, "extract", "--help");
  EXPECT(0, "filters", "--help");
  EXPECT(2, "frobnicate");
  CHECK(cli_said(dir, "stderr.txt", "frobnicate"));
  CHECK_EQ_INT(stderr_lines(dir), 1);
  EXPECT(2, "denoise", "--bogus", "x.exr");
  CHECK(cli_said(dir, "stderr.txt", "--bogus"));
  CHECK_EQ_INT(stderr_lines(dir), 1);
  EXPECT(2, "denoise");
  EXPECT(2, "denoise", "a.exr", "b.exr");
  EXPECT(2, "denoise", "a.exr", "-o");
  EXPECT(2, "denoise", "--quiet=1", "a.exr");
  EXPECT(2, "compare", "a.exr");
  EXPECT(2, "info");
  EXPECT(2, "extract", "a.exr");
  EXPECT(2, "extract", "-o", "a.pfm");
  EXPECT(2, "extract", "a.exr", "b.exr", "-o", "c.pfm");
  EXPECT(2, "filters", "Nope");
  EXPECT(0, "filters");
  CHECK(cli_said(dir, "stdout.txt", "ATrous"));
  EXPECT(0, "filters", "ATrous");
  /* integer ranges in full (they printed as -2.14748e+09, a float limit) */
  CHECK(cli_said(dir, "stdout.txt", "[-2147483648, 2147483647]"));
  CHECK(cli_said(dir, "stdout.txt", "iterations"));
}

/* -- parameters -------------------------------------------------------------------------------- */

static void test_params(const char* dir, const char* in)
{
  char out[1200], out1[1200];
  cli_path(out, sizeof out, dir, "p.pfm");
  cli_path(out1, sizeof out1, dir, "p1.pfm");
  EXPECT(2, "denoise", "-f", "ATrous", "--param", "iterations=abc", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "'iterations' of filter ATrous is an int"));
  CHECK_EQ_INT(stderr_lines(dir), 1);
  EXPECT(2, "denoise", "-f", "ATrous", "--param", "iterations=99", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "must be in"));
  EXPECT(2, "denoise", "-f", "ATrous", "--param", "iterations=2.5", in, "-o", out);
  EXPECT(2, "denoise", "-f", "ATrous", "--param", "nosuch=1", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "no parameter 'nosuch'"));
  EXPECT(2, "denoise", "-f", "ATrous", "--param", "demodulate=maybe", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "bool"));
  EXPECT(2, "denoise", "-f", "ATrous", "--param", "sigmaColor=nan", in, "-o", out);
  EXPECT(2, "denoise", "-f", "ATrous", "--param", "sigmaColor=-1", in, "-o", out);
  EXPECT(2, "denoise", "-f", "ATrous", "--param", "tileOverlap=3", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "read-only"));
  EXPECT(2, "denoise", "-f", "ATrous", "--param", "iterations", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "NAME=VALUE"));
  EXPECT(2, "denoise", "-f", "Nope", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "unknown filter 'Nope'"));
  EXPECT(2, "denoise", "-q", "ultra", in, "-o", out);
  EXPECT(2, "denoise", "-d", "quantum", in, "-o", out);
  EXPECT(2, "denoise", "-w", "weights.tza", in, "-o", out);
  EXPECT(2, "denoise", "--threads", "-1", in, "-o", out);
  EXPECT(2, "denoise", "--shard", "3/3", in, "-o", out);
  EXPECT(2, "denoise", "--image", "gradientX=x.pfm", in, "-o", out); /* RT takes none */
  CHECK(!cli_file_exists(out));

  /* well-typed parameters reach the filter: they change the result */
  EXPECT(0, "denoise", "-f", "ATrous", "--param", "iterations=4", "-p", "sigmaColor=0.5",
         "--param=colorMode=0", "--param", "demodulate=off", in, "-o", out);
  EXPECT(0, "denoise", "-f", "ATrous", "--param", "iterations=1", "-p", "sigmaColor=0.5",
         "--param=colorMode=0", "--param", "demodulate=off", in, "-o", out1);
  lull_io_image a = cli_read(out), b = cli_read(out1);
  CHECK(a.num_passes == 1 && b.num_passes == 1);
  if (a.num_passes == 1 && b.num_passes == 1)
    CHECK(max_diff(&a.passes[0], &b.passes[0], (size_t)a.width * (size_t)a.height) > 1e-3);
  lull_io_free(&a);
  lull_io_free(&b);
  EXPECT(0, "denoise", "--param", "inputScale=auto", "--quiet", in, "-o", out);
  CHECK_EQ_INT(stderr_lines(dir), 0);
  /* OIDN-style flags a filter lacks: a warning, not an error */
  EXPECT(0, "denoise", "-f", "Gaussian", "--clean_aux", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "ignored"));
}

/* -- OIDN-style flags and PFM ------------------------------------------------------------------ */

static void test_oidn_flags(const char* dir, const cli_scene* scene)
{
  char c[1200], alb[1200], nrm[1200], out[1200], half[1200], inplace[1200], png[1200];
  cli_path(c, sizeof c, dir, "color.pfm");
  cli_path(alb, sizeof alb, dir, "albedo.pfm");
  cli_path(nrm, sizeof nrm, dir, "normal.pfm");
  cli_path(out, sizeof out, dir, "out.pfm");
  cli_path(half, sizeof half, dir, "half.pfm");
  cli_path(inplace, sizeof inplace, dir, "inplace.pfm");
  cli_path(png, sizeof png, dir, "out.png");
  CHECK_EQ_INT(cli_scene_write_plain(scene, "noisy", c), 0);
  CHECK_EQ_INT(cli_scene_write_plain(scene, "albedo", alb), 0);
  CHECK_EQ_INT(cli_scene_write_plain(scene, "normal", nrm), 0);

  EXPECT(0, "denoise", "--hdr", c, "--alb", alb, "--nrm", nrm, "-o", out);
  const size_t pixels = (size_t)scene->width * (size_t)scene->height;
  lull_io_image result = cli_read(out);
  CHECK_EQ_INT(result.num_passes, 1);
  if (result.num_passes == 1) {
    CHECK_EQ_INT(result.width, scene->width);
    CHECK_EQ_INT(result.passes[0].channels, 3);
    CHECK(lull_test_all_finite(result.passes[0].data, pixels * 3));
    const double noisy = lull_metric_rel_mse(scene->noisy, scene->clean, (size_t)scene->width,
                                             (size_t)scene->height, 3);
    const double denoised = cli_pass_rel_mse(&result.passes[0], scene->clean, scene->width,
                                             scene->height);
    printf("synthetic scene: relMSE noisy %.5f, denoised (RT, albedo + normal) %.5f\n", noisy,
           denoised);
    CHECK(denoised < 0.5 * noisy);
  }
  /* in place: the same numbers; half buffers: nearly */
  EXPECT(0, "denoise", "--hdr", c, "--alb", alb, "--nrm", nrm, "--inplace", "-o", inplace);
  EXPECT(0, "denoise", "--hdr", c, "--alb", alb, "--nrm", nrm, "-t", "half", "-o", half);
  lull_io_image b = cli_read(inplace), h = cli_read(half);
  if (result.num_passes == 1 && b.num_passes == 1 && h.num_passes == 1) {
    CHECK(max_diff(&result.passes[0], &b.passes[0], pixels) == 0.0f);
    CHECK(max_diff(&result.passes[0], &h.passes[0], pixels) < 0.02f);
  }
  lull_io_free(&b);
  lull_io_free(&h);
  lull_io_free(&result);
  EXPECT(0, "denoise", "--hdr", c, "--alb", alb, "--nrm", nrm, "--clean_aux", "-q", "fast",
         "--is", "1.0", "--maxmem", "100", "-d", "cpu", "--threads", "1", "-o", out);
  EXPECT(0, "denoise", "--hdr", c, "-n", "3", "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "median"));
  EXPECT(0, "denoise", "--ll");
  CHECK(cli_said(dir, "stdout.txt", "cpu"));
  EXPECT(2, "denoise", "--hdr", c, "--ldr", c, "-o", out);
  /* --nrm without --alb: the API's rule (normal needs albedo), as an error */
  EXPECT(1, "denoise", "--hdr", c, "--nrm", nrm, "-o", out);
  /* default output name */
  char expected[1200];
  cli_path(expected, sizeof expected, dir, "color_denoised.pfm");
  EXPECT(0, "denoise", c);
  CHECK(cli_file_exists(expected));
#if defined(LULL_IO_HAS_OIIO)
  /* LDR: a PNG in, a PNG out */
  char ldr[1200], ldr_out[1200];
  cli_path(ldr, sizeof ldr, dir, "ldr.png");
  cli_path(ldr_out, sizeof ldr_out, dir, "ldr_out.png");
  EXPECT(0, "denoise", "--hdr", c, "-f", "Gaussian", "-o", ldr); /* an 8-bit sRGB image */
  EXPECT(0, "denoise", ldr, "-o", ldr_out);
  EXPECT(0, "denoise", "--ldr", ldr, "--srgb", "--alb", alb, "-o", ldr_out);
  lull_io_image l = cli_read(ldr_out);
  lull_io_file_info info;
  lull_io_get_file_info(&l, &info);
  CHECK(l.width == scene->width && info.integer == 1 && info.bits == 8);
  lull_io_free(&l);
  char hdr[1200];
  cli_path(hdr, sizeof hdr, dir, "out.hdr");
  EXPECT(0, "denoise", c, "-o", hdr);
  CHECK(cli_file_exists(hdr));
#endif
}

/* -- Blender multilayer ------------------------------------------------------------------------ */
#if defined(LULL_IO_HAS_OIIO)

static void test_multilayer(const char* dir, const cli_scene* scene)
{
  char in[1200], out[1200], png[1200];
  cli_path(in, sizeof in, dir, "render.exr");
  cli_path(out, sizeof out, dir, "render_out.exr");
  cli_path(png, sizeof png, dir, "render_out.png");
  static const char* const layers[] = {"ViewLayer", "Second Layer"};
  CHECK_EQ_INT(cli_scene_write_blender(scene, in, layers, 2, 0), 0);
  const size_t pixels = (size_t)scene->width * (size_t)scene->height;
  if (pixels == 0)
    return;

  EXPECT(0, "denoise", in, "-o", out);
  /* the position goes unused beside a depth, and the log says so */
  CHECK(cli_said(dir, "stderr.txt", "albedo, normal, depth; position unused"));
  lull_io_image original = cli_read(in), result = cli_read(out);
  CHECK_EQ_INT(result.num_passes, original.num_passes + 2);
  for (int i = 0; i < original.num_passes; ++i) { /* every original channel, bit for bit */
    const lull_io_pass* a = &original.passes[i];
    const lull_io_pass* b = lull_io_find_pass(&result, a->layer, a->name);
    CHECK(b && b->half == a->half && max_diff(a, b, pixels) == 0.0f);
    if (b && max_diff(a, b, pixels) != 0.0f)
      fprintf(stderr, "pass %s.%s changed\n", a->layer, a->name);
  }
  for (int l = 0; l < 2; ++l) {
    const lull_io_pass* denoised = lull_io_find_pass(&result, layers[l], "Denoised");
    const lull_io_pass* combined = lull_io_find_pass(&original, layers[l], "Combined");
    CHECK(denoised && combined);
    if (!denoised || !combined)
      continue;
    CHECK_EQ_INT(denoised->channels, 4);
    CHECK_EQ_INT(denoised->half, 1);
    int alpha_same = 1;
    for (size_t i = 0; i < pixels; ++i)
      alpha_same &= denoised->data[i * 4 + 3] == combined->data[i * 4 + 3];
    CHECK(alpha_same);
    float* clean = malloc(pixels * 3 * sizeof(float));
    for (size_t i = 0; i < pixels * 3; ++i)
      clean[i] = scene->clean[i] * (1.0f + 0.1f * (float)l);
    const double before = cli_pass_rel_mse(combined, clean, scene->width, scene->height);
    const double after = cli_pass_rel_mse(denoised, clean, scene->width, scene->height);
    CHECK(after < 0.5 * before);
    free(clean);
  }
  CHECK_EQ_INT(fixture_channel_type(out, "ViewLayer.Denoised.R"), 'h');
  CHECK_EQ_INT(fixture_channel_type(out, "ViewLayer.Denoising Normal.X"), 'f');
  char value[128];
  CHECK(fixture_attribute(out, "Note", value, sizeof value) == 0 &&
        strcmp(value, "lull test fixture") == 0);
  lull_io_free(&result);

  /* again on its own output, in place: the pass is replaced, not added */
  EXPECT(0, "denoise", out, "-o", out);
  result = cli_read(out);
  CHECK_EQ_INT(result.num_passes, original.num_passes + 2);
  lull_io_free(&result);

  /* one layer */
  EXPECT(0, "denoise", in, "--layer", "Second Layer", "-o", out);
  result = cli_read(out);
  CHECK(lull_io_find_pass(&result, "Second Layer", "Denoised") != NULL);
  CHECK(lull_io_find_pass(&result, "ViewLayer", "Denoised") == NULL);
  lull_io_free(&result);
  EXPECT(1, "denoise", in, "--layer", "Nope", "-o", png);
  CHECK(cli_said(dir, "stderr.txt", "no layer 'Nope' (layers: ")); /* and which there are */
  CHECK(cli_said(dir, "stderr.txt", "'ViewLayer'"));
  CHECK(cli_said(dir, "stderr.txt", "'Second Layer'"));
  CHECK_EQ_INT(stderr_lines(dir), 1);
  /* a PNG holds one image */
  EXPECT(1, "denoise", in, "-o", png);
  CHECK(cli_said(dir, "stderr.txt", "--layer"));
  CHECK(!cli_file_exists(png));
  EXPECT(0, "denoise", in, "--layer", "ViewLayer", "-o", png);
  lull_io_image picture = cli_read(png);
  CHECK(picture.width == scene->width && picture.num_passes == 1);
  lull_io_free(&picture);
  EXPECT(1, "denoise", in, "--output-pass", "Combined", "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "would replace"));
  EXPECT(1, "denoise", in, "--pass", "color=Nope", "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "Nope"));
  EXPECT(0, "denoise", in, "--pass", "color=ViewLayer.Emit", "--output-pass", "Emit Denoised",
         "-o", out);
  result = cli_read(out);
  CHECK(lull_io_find_pass(&result, "ViewLayer", "Emit Denoised") != NULL);
  lull_io_free(&result);

  /* the guides matter: without albedo the result changes */
  char no_albedo[1200];
  cli_path(no_albedo, sizeof no_albedo, dir, "no_albedo.exr");
  EXPECT(0, "denoise", in, "--layer", "ViewLayer", "-o", out);
  EXPECT(0, "denoise", in, "--layer", "ViewLayer", "--pass", "albedo=none", "--pass",
         "normal=none", "-o", no_albedo);
  CHECK(cli_said(dir, "stderr.txt", "(RT: depth; position unused"));
  lull_io_image with = cli_read(out), without = cli_read(no_albedo);
  CHECK(max_diff(lull_io_find_pass(&with, "ViewLayer", "Denoised"),
                 lull_io_find_pass(&without, "ViewLayer", "Denoised"), pixels) > 1e-3);
  lull_io_free(&with);
  lull_io_free(&without);

  /* "Noisy Image" wins over "Combined" (which Cycles may have denoised) */
  char noisy_in[1200];
  cli_path(noisy_in, sizeof noisy_in, dir, "render_noisy_image.exr");
  CHECK_EQ_INT(cli_scene_write_blender(scene, noisy_in, layers, 1, 1), 0);
  EXPECT(0, "denoise", noisy_in, "-o", out);
  result = cli_read(out);
  const lull_io_pass* denoised = lull_io_find_pass(&result, "ViewLayer", "Denoised");
  const lull_io_pass* combined = lull_io_find_pass(&result, "ViewLayer", "Combined");
  CHECK(denoised && combined && max_diff(denoised, combined, pixels) > 1e-3);
  lull_io_free(&result);
  lull_io_free(&original);
}

/* Renders without Blender's denoising data: Normal, Depth and Diffuse
 * Color stand in; a normal without an albedo is left out for RT. */
/* `lull info` of a multi-part file whose layers' parts interleave, as
 * Blender 5 writes them (a part per pass) after lull added a Denoised pass
 * per layer (new parts at the end): each pass under its own layer (A's
 * Denoised was listed under B, the layer printed last). */
static void test_info_layers(const char* dir)
{
  enum { W = 4, H = 3, N = W * H };
  float plane[N] = {0};
  const fixture_channel channels[] = {
      {"A.Combined.R", 1, 0, plane}, {"A.Combined.G", 1, 0, plane},
      {"A.Combined.B", 1, 0, plane}, {"B.Combined.R", 1, 1, plane},
      {"B.Combined.G", 1, 1, plane}, {"B.Combined.B", 1, 1, plane},
      {"A.Denoised.R", 0, 2, plane}, {"A.Denoised.G", 0, 2, plane},
      {"A.Denoised.B", 0, 2, plane}};
  static const char* const parts[] = {"A.Combined", "B.Combined", "A.Denoised"};
  char path[1200];
  cli_path(path, sizeof path, dir, "interleaved.exr");
  CHECK_EQ_INT(fixture_write_exr(path, W, H, channels, 9, parts, 3, NULL, NULL), 0);
  EXPECT(0, "info", path);
  char* out = cli_slurp(dir, "stdout.txt");
  const char* a = out ? strstr(out, "layer 'A'") : NULL;
  const char* b = out ? strstr(out, "layer 'B'") : NULL;
  const char* denoised = out ? strstr(out, "Denoised") : NULL;
  CHECK(a && b && denoised);
  if (a && b && denoised) {
    CHECK(a < denoised && denoised < b);       /* A's pass under A */
    CHECK(strstr(b + 1, "layer 'A'") == NULL); /* one heading per layer */
  }
  free(out);
}

/* Names from a file reach the terminal without their control characters
 * (an escape sequence in a layer name had coloured and broken the lines). */
static void test_info_printable(const char* dir)
{
  enum { W = 4, H = 3, N = W * H };
  float plane[N] = {0};
  const fixture_channel channels[] = {{"L\x1b[31mX\nY.Combined.R", 1, 0, plane},
                                      {"L\x1b[31mX\nY.Combined.G", 1, 0, plane},
                                      {"L\x1b[31mX\nY.Combined.B", 1, 0, plane}};
  static const char* const parts[] = {"L\x1b[31mX\nY.Combined"};
  char path[1200];
  cli_path(path, sizeof path, dir, "escape.exr");
  CHECK_EQ_INT(fixture_write_exr(path, W, H, channels, 3, parts, 1, NULL, NULL), 0);
  EXPECT(0, "info", path);
  char* out = cli_slurp(dir, "stdout.txt");
  CHECK(out && strchr(out, '\x1b') == NULL);
  CHECK(out && strstr(out, "layer 'L?[31mX?Y'") != NULL);
  free(out);
}

/* info: each pass's storage, and the file's line counts the channels of
 * each kind (a Blender render's colour passes are half, its geometry
 * float: the line had said "32-bit float" for all of them). */
static void test_info_pixel_types(const char* dir, const cli_scene* scene)
{
  char path[1200], pfm[1200];
  CHECK_EQ_INT(write_view_layer_exr(dir, scene, "types.exr", 0, path, sizeof path), 0);
  EXPECT(0, "info", path);
  /* Combined RGBA, Denoising Albedo, Emit half; normal, depth, position float */
  CHECK(cli_said(dir, "stdout.txt", "17 channels: 10 half (16-bit), 7 float (32-bit)"));
  CHECK(cli_said(dir, "stdout.txt", "Denoising Albedo         R G B      half"));
  CHECK(cli_said(dir, "stdout.txt", "Denoising Normal         X Y Z      float"));
  cli_path(pfm, sizeof pfm, dir, "types.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(scene, "noisy", pfm), 0);
  EXPECT(0, "info", pfm);
  CHECK(cli_said(dir, "stdout.txt", "3 channels, 32-bit float"));
}

/* compare names the passes it measured (a denoised render holds Combined
 * and Denoised; it measured Denoised without saying so), and --pass picks
 * another. */
static void test_compare_names_passes(const char* dir, const cli_scene* scene)
{
  char in[1200], out[1200], ref[1200];
  CHECK_EQ_INT(write_view_layer_exr(dir, scene, "named.exr", 0, in, sizeof in), 0);
  cli_path(out, sizeof out, dir, "named_out.exr");
  cli_path(ref, sizeof ref, dir, "named_ref.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(scene, "clean", ref), 0);
  EXPECT(0, "denoise", in, "-o", out, "--quiet");
  EXPECT(0, "compare", out, ref);
  CHECK(cli_said(dir, "stdout.txt", "named_out.exr [ViewLayer.Denoised] against "));
  CHECK(cli_said(dir, "stdout.txt", "named_ref.pfm\n")); /* a plain file's only pass */
  const double denoised = number_after(dir, "image", "relMSE ");
  EXPECT(0, "compare", out, ref, "--pass", "Combined");
  CHECK(cli_said(dir, "stdout.txt", "named_out.exr [ViewLayer.Combined] against "));
  const double noisy = number_after(dir, "image", "relMSE ");
  CHECK(denoised < noisy);
  EXPECT(0, "compare", in, ref); /* the input's own colour: the same figure */
  CHECK(cli_said(dir, "stdout.txt", "named.exr [ViewLayer.Combined] against "));
  CHECK(number_after(dir, "image", "relMSE ") == noisy);
  EXPECT(1, "compare", out, ref, "--pass", "Bogus");
  CHECK(cli_said(dir, "stderr.txt", "Bogus"));
}

/* extract: one pass as an image of its own, its values exactly (half
 * widens to float exactly), a grey pass replicated, the alpha dropped; a
 * failure leaves an existing output as it was; the input is never the
 * output. */
static void test_extract(const char* dir, const cli_scene* scene)
{
  char in[1200], albedo[1200], color[1200], depth[1200], kept[1200];
  CHECK_EQ_INT(write_view_layer_exr(dir, scene, "extract.exr", 0, in, sizeof in), 0);
  cli_path(albedo, sizeof albedo, dir, "extract_albedo.pfm");
  cli_path(color, sizeof color, dir, "extract_color.pfm");
  cli_path(depth, sizeof depth, dir, "extract_depth.pfm");
  cli_path(kept, sizeof kept, dir, "extract_kept.pfm");
  const size_t pixels = (size_t)scene->width * (size_t)scene->height;
  EXPECT(0, "extract", in, "--pass", "Denoising Albedo", "-o", albedo);
  EXPECT(0, "extract", in, "-o", color);
  EXPECT(0, "extract", in, "--pass", "ViewLayer.Denoising Depth", "-o", depth);
  lull_io_image render = cli_read(in), a = cli_read(albedo), c = cli_read(color),
                d = cli_read(depth);
  const lull_io_pass* want_a = lull_io_find_pass(&render, "ViewLayer", "Denoising Albedo");
  const lull_io_pass* want_c = lull_io_find_pass(&render, "ViewLayer", "Combined");
  const lull_io_pass* want_d = lull_io_find_pass(&render, "ViewLayer", "Denoising Depth");
  CHECK(want_a && want_c && want_d && want_c->channels == 4 && want_d->channels == 1);
  CHECK(a.num_passes == 1 && c.num_passes == 1 && d.num_passes == 1);
  if (want_a && want_c && want_d && want_c->channels == 4 && want_d->channels == 1 &&
      a.num_passes == 1 && c.num_passes == 1 && d.num_passes == 1) {
    CHECK_EQ_INT(a.passes[0].channels, 3);
    CHECK(max_diff(want_a, &a.passes[0], pixels) == 0.0f);
    CHECK_EQ_INT(c.passes[0].channels, 3);
    CHECK_EQ_INT(d.passes[0].channels, 3);
    int same = c.passes[0].channels == 3 && d.passes[0].channels == 3;
    for (size_t i = 0; same && i < pixels; ++i)
      for (int k = 0; k < 3; ++k)
        same &= c.passes[0].data[i * 3 + (size_t)k] == want_c->data[i * 4 + (size_t)k] &&
                d.passes[0].data[i * 3 + (size_t)k] == want_d->data[i];
    CHECK(same);
  }
  lull_io_free(&render);
  lull_io_free(&a);
  lull_io_free(&c);
  lull_io_free(&d);
  /* failures */
  CHECK_EQ_INT(cli_copy_file(albedo, kept), 0);
  EXPECT(1, "extract", in, "--pass", "Bogus", "-o", albedo);
  CHECK(cli_said(dir, "stderr.txt", "no pass 'Bogus'"));
  CHECK(cli_same_bytes(albedo, kept));
  EXPECT(1, "extract", in, "--layer", "Nope", "-o", albedo);
  CHECK(cli_same_bytes(albedo, kept));
  EXPECT(1, "extract", "missing.exr", "-o", albedo);
  CHECK(cli_same_bytes(albedo, kept));
  CHECK_EQ_INT(cli_copy_file(in, kept), 0);
  EXPECT(2, "extract", in, "-o", in);
  CHECK(cli_same_bytes(in, kept));
  CHECK_EQ_INT(cli_temp_files(dir), 0);
}

/* A texture (MIP levels) may not be denoised onto itself: only its first
 * level is read, and the rewrite had dropped the others; to another file
 * it is denoised.  info says how many levels there are. */
static void test_mip_levels_kept(const char* dir)
{
  char path[1200], copy[1200], out[1200];
  cli_path(path, sizeof path, dir, "texture.exr");
  cli_path(copy, sizeof copy, dir, "texture_copy.exr");
  cli_path(out, sizeof out, dir, "texture_out.exr");
  CHECK_EQ_INT(fixture_write_mipmapped(path, 64, 32), 0);
  CHECK_EQ_INT(cli_copy_file(path, copy), 0);
  EXPECT(1, "denoise", path, "-o", path);
  CHECK(cli_said(dir, "stderr.txt", "7 resolution levels"));
  CHECK(cli_same_bytes(path, copy));
  EXPECT(0, "denoise", path, "-o", out);
  EXPECT(0, "info", path);
  CHECK(cli_said(dir, "stdout.txt", "7 resolution levels"));
}

static void test_fallback_guides(const char* dir, const cli_scene* scene)
{
  char in[1200], out[1200];
  cli_path(in, sizeof in, dir, "plain_passes.exr");
  cli_path(out, sizeof out, dir, "plain_passes_out.exr");
  const size_t n = (size_t)scene->width * (size_t)scene->height;
  float* planes = malloc(n * 7 * sizeof(float));
  if (!planes)
    return;
  const float* sources[7] = {scene->noisy, scene->noisy, scene->noisy, scene->normal,
                             scene->normal, scene->normal, scene->depth};
  for (int c = 0; c < 7; ++c)
    for (size_t i = 0; i < n; ++i)
      planes[(size_t)c * n + i] = c < 6 ? sources[c][i * 3 + (size_t)(c % 3)] : scene->depth[i];
  fixture_channel channels[10] = {
      {"ViewLayer.Combined.R", 1, 0, planes}, {"ViewLayer.Combined.G", 1, 0, planes + n},
      {"ViewLayer.Combined.B", 1, 0, planes + 2 * n}, {"ViewLayer.Normal.X", 0, 0, planes + 3 * n},
      {"ViewLayer.Normal.Y", 0, 0, planes + 4 * n}, {"ViewLayer.Normal.Z", 0, 0, planes + 5 * n},
      {"ViewLayer.Depth.Z", 0, 0, planes + 6 * n}, {"ViewLayer.DiffCol.R", 1, 0, planes + 3 * n},
      {"ViewLayer.DiffCol.G", 1, 0, planes + 4 * n}, {"ViewLayer.DiffCol.B", 1, 0, planes + 5 * n}};
  static const char* const part[] = {"rgba"};
  CHECK_EQ_INT(
      fixture_write_exr(in, scene->width, scene->height, channels, 7, part, 1, NULL, NULL), 0);
  EXPECT(0, "denoise", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "(RT: depth; normal unused: RT takes it only with an albedo)"));
  EXPECT(1, "denoise", in, "--pass", "normal=Normal", "-o", out); /* named: the API decides */
  CHECK(cli_said(dir, "stderr.txt", "combination"));
  CHECK_EQ_INT(
      fixture_write_exr(in, scene->width, scene->height, channels, 10, part, 1, NULL, NULL), 0);
  EXPECT(0, "denoise", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "(RT: albedo, normal, depth)"));
  free(planes);
}

/* The Blender-style EXR and the OIDN-style PFMs of the same pixels give
 * the same denoised image: both paths feed the API the same images. */
static void test_input_paths_agree(const char* dir, const cli_scene* scene)
{
  char in[1200], out[1200], c[1200], alb[1200], nrm[1200], pfm_out[1200];
  cli_path(out, sizeof out, dir, "agree_out.exr");
  cli_path(c, sizeof c, dir, "agree_color.pfm");
  cli_path(alb, sizeof alb, dir, "agree_albedo.pfm");
  cli_path(nrm, sizeof nrm, dir, "agree_normal.pfm");
  cli_path(pfm_out, sizeof pfm_out, dir, "agree_out.pfm");
  CHECK_EQ_INT(write_view_layer_exr(dir, scene, "agree.exr", 0, in, sizeof in), 0);
  lull_io_image image = cli_read(in);
  static const char* const names[][2] = {
      {"Combined", ""}, {"Denoising Albedo", ""}, {"Denoising Normal", ""}};
  const char* paths[3] = {c, alb, nrm};
  for (int k = 0; k < 3; ++k) {
    const lull_io_pass* pass = lull_io_find_pass(&image, "ViewLayer", names[k][0]);
    CHECK(pass != NULL);
    if (!pass)
      continue;
    lull_io_image one;
    memset(&one, 0, sizeof one);
    one.width = image.width;
    one.height = image.height;
    const char* channel_names[4] = {"R", "G", "B", "A"};
    lull_io_add_pass(&one, "", "", pass->channels, channel_names, pass->data);
    char err[512];
    CHECK_EQ_INT(lull_io_write(paths[k], &one, 0, err, sizeof err), 0);
    lull_io_free(&one);
  }
  lull_io_free(&image);
  EXPECT(0, "denoise", in, "--pass", "depth=none", "--pass", "position=none", "-o", out);
  EXPECT(0, "denoise", "--hdr", c, "--alb", alb, "--nrm", nrm, "-o", pfm_out);
  lull_io_image exr = cli_read(out), pfm = cli_read(pfm_out);
  const lull_io_pass* denoised = lull_io_find_pass(&exr, "ViewLayer", "Denoised");
  CHECK(denoised && pfm.num_passes == 1);
  if (denoised && pfm.num_passes == 1) {
    const size_t pixels = (size_t)scene->width * (size_t)scene->height;
    int same = 1;
    for (size_t i = 0; i < pixels; ++i)
      for (int k = 0; k < 3; ++k) /* the EXR pass is stored as half */
        same &= denoised->data[i * 4 + (size_t)k] ==
                lull_half_to_float(lull_float_to_half(pfm.passes[0].data[i * 3 + (size_t)k]));
    CHECK(same);
  }
  lull_io_free(&exr);
  lull_io_free(&pfm);
}
#endif

/* -- failures leave the output alone ----------------------------------------------------------- */

/* A new copy of the scene's noisy colour (RGB floats). */
static float* noisy_copy(const cli_scene* scene)
{
  const size_t bytes = (size_t)scene->width * (size_t)scene->height * 3 * sizeof(float);
  float* data = malloc(bytes);
  if (!data) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  memcpy(data, scene->noisy, bytes);
  return data;
}

/* Writes RGB floats of the scene's size as a plain image: 0 or non-zero. */
static int write_rgb(const char* path, const cli_scene* scene, const float* data)
{
  lull_io_image image;
  memset(&image, 0, sizeof image);
  image.width = scene->width;
  image.height = scene->height;
  static const char* const rgb[] = {"R", "G", "B"};
  lull_io_add_pass(&image, "", "", 3, rgb, data);
  char err[512];
  const int status = lull_io_write(path, &image, 0, err, sizeof err);
  if (status)
    fprintf(stderr, "%s\n", err);
  lull_io_free(&image);
  return status;
}

static void test_failures_keep_output(const char* dir, const cli_scene* scene)
{
  char keep[1200], copy[1200], c[1200], bad_pfm[1200], small[1200], nan_pfm[1200];
  cli_path(keep, sizeof keep, dir, "keep.pfm");
  cli_path(copy, sizeof copy, dir, "keep_copy.pfm");
  cli_path(c, sizeof c, dir, "fail_color.pfm");
  cli_path(bad_pfm, sizeof bad_pfm, dir, "truncated.pfm");
  cli_path(small, sizeof small, dir, "small.pfm");
  cli_path(nan_pfm, sizeof nan_pfm, dir, "nan.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(scene, "noisy", c), 0);
  CHECK_EQ_INT(cli_scene_write_plain(scene, "clean", keep), 0);
  CHECK_EQ_INT(cli_copy_file(keep, copy), 0);
  /* a truncated PFM */
  FILE* f = fopen(bad_pfm, "wb");
  if (f) {
    fputs("PF\n64 48\n-1.0\n", f);
    for (int i = 0; i < 100; ++i)
      fputc(i, f);
    fclose(f);
  }
  EXPECT(1, "denoise", bad_pfm, "-o", keep);
  CHECK(cli_said(dir, "stderr.txt", "truncated.pfm"));
  CHECK_EQ_INT(stderr_lines(dir), 1);
  CHECK(cli_same_bytes(keep, copy));
  /* mismatched sizes */
  cli_scene tiny;
  CHECK_EQ_INT(cli_scene_make(&tiny, 8, 8, 1, 0.1f), 0);
  CHECK_EQ_INT(cli_scene_write_plain(&tiny, "albedo", small), 0);
  cli_scene_free(&tiny);
  EXPECT(1, "denoise", "--hdr", c, "--alb", small, "-o", keep);
  CHECK(cli_said(dir, "stderr.txt", "albedo image is 8x8"));
  CHECK(cli_same_bytes(keep, copy));
  /* the API refuses the parameters at commit */
  EXPECT(1, "denoise", c, "-f", "ATrous", "--param", "hdr=1", "--param", "srgb=1", "-o", keep);
  CHECK(cli_said(dir, "stderr.txt", "hdr and srgb"));
  CHECK(cli_same_bytes(keep, copy));
  /* folders made for an output that then cannot be written go again */
  char unwritable[1200], made[1200];
  cli_path(unwritable, sizeof unwritable, dir, "made/for/nothing/out.xyz");
  cli_path(made, sizeof made, dir, "made");
  EXPECT(1, "denoise", c, "-o", unwritable);
  CHECK(!cli_file_exists(made));
  /* nowhere to write: a folder that is a file (missing folders are made) */
  char nowhere[1300];
  snprintf(nowhere, sizeof nowhere, "%s/out.pfm", c);
  EXPECT(1, "denoise", c, "-o", nowhere);
  CHECK(cli_said(dir, "stderr.txt", "out.pfm"));
  EXPECT(1, "denoise", c, "-o", dir);
  /* NaN and infinity in the colour: no crash, a finite or reported result */
  float* data = noisy_copy(scene);
  data[10] = NAN;
  data[200] = INFINITY;
  data[300] = -INFINITY;
  CHECK_EQ_INT(write_rgb(nan_pfm, scene, data), 0);
  free(data);
  char nan_out[1200];
  cli_path(nan_out, sizeof nan_out, dir, "nan_out.pfm");
  const int status = cli_run(tool, dir, ARGS("denoise", nan_pfm, "-o", nan_out));
  CHECK(status == 0 || status == 1);
  CHECK_EQ_INT(cli_file_exists(nan_out), status == 0);
#if defined(LULL_IO_HAS_OIIO)
  /* a truncated EXR */
  char exr[1200], bad_exr[1200];
  cli_path(bad_exr, sizeof bad_exr, dir, "truncated.exr");
  CHECK_EQ_INT(write_view_layer_exr(dir, scene, "whole.exr", 0, exr, sizeof exr), 0);
  FILE* in = fopen(exr, "rb");
  FILE* out = fopen(bad_exr, "wb");
  if (in && out)
    for (int i = 0; i < 3000; ++i)
      fputc(fgetc(in), out);
  if (in)
    fclose(in);
  if (out)
    fclose(out);
  EXPECT(1, "denoise", bad_exr, "-o", keep);
  CHECK(cli_said(dir, "stderr.txt", "truncated.exr"));
  CHECK_EQ_INT(stderr_lines(dir), 1);
  CHECK(cli_same_bytes(keep, copy));
  EXPECT(1, "info", bad_exr);
#endif
  CHECK_EQ_INT(cli_temp_files(dir), 0);
}

/* -t half holds colour beyond half's range at 65504 and says so (it had
 * become inf, which the filter drops: a highlight of 1e6 came out black). */
static void test_half_range(const char* dir, const cli_scene* scene)
{
  float* data = noisy_copy(scene);
  for (int y = 10; y < 20; ++y)
    for (int x = 10; x < 20; ++x)
      for (int c = 0; c < 3; ++c)
        data[((size_t)y * (size_t)scene->width + (size_t)x) * 3 + (size_t)c] = 1e6f;
  char bright[1200], out[1200];
  cli_path(bright, sizeof bright, dir, "bright.pfm");
  cli_path(out, sizeof out, dir, "bright_half.pfm");
  CHECK_EQ_INT(write_rgb(bright, scene, data), 0);
  free(data);
  EXPECT(0, "denoise", bright, "-o", out, "-t", "half");
  CHECK(cli_said(dir, "stderr.txt", "300 colour values beyond half's range"));
  lull_io_image result = cli_read(out);
  const float v = result.passes ? result.passes[0].data[((size_t)15 * scene->width + 15) * 3] : 0;
  if (!(v > 60000.0f))
    fprintf(stderr, "-t half: the highlight came out %g\n", (double)v);
  CHECK(v > 60000.0f && v <= 65504.0f);
  lull_io_free(&result);
}

/* Past the file-size limit (ulimit -f) the write fails and says so, the old
 * output stays and no temporary file is left (SIGXFSZ had killed the tool
 * and left its partial temporary file). */
static void test_file_size_limit(const char* dir, const cli_scene* scene)
{
  char c[1200], keep[1200], copy[1200];
  cli_path(c, sizeof c, dir, "fsize_in.pfm");
  cli_path(keep, sizeof keep, dir, "fsize_out.pfm");
  cli_path(copy, sizeof copy, dir, "fsize_copy.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(scene, "noisy", c), 0);
  CHECK_EQ_INT(cli_scene_write_plain(scene, "clean", keep), 0);
  CHECK_EQ_INT(cli_copy_file(keep, copy), 0);
  struct rlimit old, small;
  CHECK_EQ_INT(getrlimit(RLIMIT_FSIZE, &old), 0);
  small = old;
  small.rlim_cur = 16384; /* the 64x48 output is 36 KB */
  CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &small), 0);
  const int pid = cli_start(tool, dir, ARGS("denoise", c, "-o", keep, "--quiet"));
  CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &old), 0);
  CHECK_EQ_INT(cli_wait(pid), 1);
  CHECK(cli_said(dir, "stderr.txt", "fsize_out.pfm"));
  CHECK(cli_same_bytes(keep, copy));
  CHECK_EQ_INT(cli_temp_files(dir), 0);
}

/* "--" ends the options: a file whose name starts with '-' follows. */
static void test_end_of_options(const char* dir, const cli_scene* scene)
{
  char dashed[1200], out[1200], here[1200];
  cli_path(dashed, sizeof dashed, dir, "-dashed.pfm");
  cli_path(out, sizeof out, dir, "dashed_out.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(scene, "noisy", dashed), 0);
  CHECK(getcwd(here, sizeof here) != NULL);
  CHECK_EQ_INT(chdir(dir), 0);
  const int unknown = cli_run(tool, dir, ARGS("denoise", "-dashed.pfm", "-o", out));
  const int ended = cli_run(tool, dir, ARGS("denoise", "-o", out, "--", "-dashed.pfm"));
  const int info = cli_run(tool, dir, ARGS("info", "--", "-dashed.pfm"));
  const int compare = cli_run(tool, dir, ARGS("compare", "--", "-dashed.pfm", "-dashed.pfm"));
  CHECK_EQ_INT(chdir(here), 0);
  CHECK_EQ_INT(unknown, 2); /* an unknown option without "--" */
  CHECK_EQ_INT(ended, 0);
  CHECK(cli_file_exists(out));
  CHECK_EQ_INT(info, 0);
  CHECK_EQ_INT(compare, 0);
}

/* --layer "" is the unnamed layer, not every layer (an unset $LAYER had
 * denoised them all). */
static void test_unnamed_layer(const char* dir, const cli_scene* scene)
{
#if defined(LULL_IO_HAS_OIIO)
  char exr[1200], out[1200];
  cli_path(out, sizeof out, dir, "unnamed_out.exr");
  CHECK_EQ_INT(write_view_layer_exr(dir, scene, "named_only.exr", 0, exr, sizeof exr), 0);
  EXPECT(1, "denoise", exr, "--layer", "", "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "no layer ''"));
  CHECK(!cli_file_exists(out));
  EXPECT(1, "compare", exr, exr, "--layer", ""); /* compare reads it as denoise does */
#endif
  char plain[1200], plain_out[1200];
  cli_path(plain, sizeof plain, dir, "unnamed.pfm");
  cli_path(plain_out, sizeof plain_out, dir, "unnamed_out.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(scene, "noisy", plain), 0);
  EXPECT(0, "denoise", plain, "--layer", "", "-o", plain_out);
  EXPECT(0, "compare", plain_out, plain, "--layer", "");
}

/* -- inputs are never replaced; odd arguments ------------------------------------------------ */

static void test_inputs_kept(const char* dir, const cli_scene* scene)
{
  char c[1200], copy[1200], link[1200], side[1200], side_copy[1200], a[1200], b[1200];
  char nowhere[1300], hashed[1200], out[1200];
  cli_path(c, sizeof c, dir, "kept_color.pfm");
  cli_path(copy, sizeof copy, dir, "kept_color_copy.pfm");
  cli_path(link, sizeof link, dir, "kept_link.pfm");
  cli_path(side, sizeof side, dir, "kept_side.png");
  cli_path(side_copy, sizeof side_copy, dir, "kept_side_copy.png");
  cli_path(a, sizeof a, dir, "inplace_1.pfm");
  cli_path(b, sizeof b, dir, "inplace_3.pfm");
  snprintf(nowhere, sizeof nowhere, "%s/out.pfm", c); /* a folder that is a file */
  cli_path(hashed, sizeof hashed, dir, "take#2.pfm");
  cli_path(out, sizeof out, dir, "kept_out.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(scene, "noisy", c), 0);
  CHECK_EQ_INT(cli_copy_file(c, copy), 0);
  CHECK_EQ_INT(symlink(c, link), 0);
  /* the output, a link to it, or the side-by-side picture as the input */
  EXPECT(1, "denoise", c, "-o", c);
  CHECK(cli_said(dir, "stderr.txt", "-o would replace its colour"));
  EXPECT(1, "denoise", c, "-o", link);
  EXPECT(1, "denoise", c, "-o", copy, "--reference", copy);
  CHECK(cli_said(dir, "stderr.txt", "-o would replace it"));
  EXPECT(1, "denoise", c, "-o", out, "--side-by-side", c);
  CHECK(cli_said(dir, "stderr.txt", "--side-by-side would replace it"));
  /* the picture over the output, neither written yet (it was, exit 0) */
  char fresh[1200];
  cli_path(fresh, sizeof fresh, dir, "kept_fresh.png");
  EXPECT(1, "denoise", c, "-o", fresh, "--side-by-side", fresh, "--reference", copy);
  CHECK(!cli_file_exists(fresh));
  EXPECT(2, "compare", c, copy, "--png", c);
  CHECK(cli_same_bytes(c, copy));
  /* a failed run keeps an existing side-by-side picture */
  FILE* f = fopen(side, "wb");
  if (f) {
    fputs("an older picture", f);
    fclose(f);
  }
  CHECK_EQ_INT(cli_copy_file(side, side_copy), 0);
  EXPECT(1, "denoise", c, "-o", nowhere, "--side-by-side", side);
  CHECK(cli_same_bytes(side, side_copy));
  /* in place, timed runs each start from the noisy colour: -n 3 writes
   * what one run writes */
  EXPECT(0, "denoise", c, "-o", a, "--inplace", "--quiet");
  EXPECT(0, "denoise", c, "-o", b, "--inplace", "-n", "3", "--quiet");
  CHECK(cli_same_bytes(a, b));
  /* empty values (an unset variable in a script) */
  EXPECT(2, "denoise", c, "--alb", "", "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "empty value"));
  EXPECT(2, "denoise", c, "--image", "albedo=", "-o", out);
  EXPECT(2, "denoise", c, "--output-pass=", "-o", out);
  /* frame numbers past +-1e9 (the range once overflowed into an endless
   * loop); a frame number in a name beside a single input */
  EXPECT(2, "denoise", "seq/####.pfm", "-o", "out/####.pfm",
         "--frames=9223372036854775806-9223372036854775807");
  CHECK(cli_said(dir, "stderr.txt", "frame numbers beyond"));
  EXPECT(2, "denoise", c, "-o", out, "--side-by-side", "side_####.png");
  /* a file named with '#' is that file */
  CHECK_EQ_INT(cli_copy_file(c, hashed), 0);
  EXPECT(0, "denoise", hashed, "-o", out, "--quiet");
  /* the user's srgb replaces the mode the file implies (float: hdr) */
  EXPECT(0, "denoise", c, "-p", "srgb=1", "-o", out, "--quiet");
  CHECK(cli_same_bytes(c, copy));
  /* but srgb=0, the default, keeps the file's hdr (the output had been
   * clamped to [0, 1]); --hdr with --srgb is refused, not run as LDR */
  char plain_out[1200], srgb0_out[1200];
  cli_path(plain_out, sizeof plain_out, dir, "plain_mode.pfm");
  cli_path(srgb0_out, sizeof srgb0_out, dir, "srgb0_mode.pfm");
  EXPECT(0, "denoise", c, "-o", plain_out, "--quiet");
  EXPECT(0, "denoise", c, "-p", "srgb=0", "-o", srgb0_out, "--quiet");
  CHECK(cli_same_bytes(plain_out, srgb0_out));
  EXPECT(1, "denoise", "--hdr", c, "--srgb", "-o", srgb0_out);
  CHECK(cli_said(dir, "stderr.txt", "hdr and srgb"));
#if defined(LULL_IO_HAS_OIIO)
  /* --output-pass naming a pass of the input: only with --overwrite */
  char exr[1200], exr_out[1200];
  cli_path(exr_out, sizeof exr_out, dir, "kept_layers_out.exr");
  CHECK_EQ_INT(write_view_layer_exr(dir, scene, "kept_layers.exr", 1, exr, sizeof exr), 0);
  EXPECT(1, "denoise", exr, "-o", exr_out, "--output-pass", "Emit");
  CHECK(cli_said(dir, "stderr.txt", "--overwrite"));
  CHECK_EQ_INT(cli_file_exists(exr_out), 0);
  EXPECT(0, "denoise", exr, "-o", exr_out, "--output-pass", "Emit", "--overwrite", "--quiet");
  /* a pass name with a dot would read back as part of the layer (a second
   * run failed: "written twice") */
  EXPECT(2, "denoise", exr, "-o", exr_out, "--output-pass", "Denoised.v2");
  CHECK(cli_said(dir, "stderr.txt", "cannot hold a dot"));
  /* a dotted layer named with its pass: "ViewLayer.001.Combined" */
  char dotted[1200], dotted_out[1200];
  cli_path(dotted, sizeof dotted, dir, "dotted_layer.exr");
  cli_path(dotted_out, sizeof dotted_out, dir, "dotted_layer_out.exr");
  lull_io_image image = cli_read(c);
  if (image.num_passes == 1) {
    snprintf(image.passes[0].layer, sizeof image.passes[0].layer, "ViewLayer.001");
    snprintf(image.passes[0].name, sizeof image.passes[0].name, "Combined");
    char err[256];
    CHECK_EQ_INT(lull_io_write(dotted, &image, LULL_IO_VALUES_LINEAR, err, sizeof err), 0);
  }
  lull_io_free(&image);
  EXPECT(0, "denoise", dotted, "-o", dotted_out, "--pass", "color=ViewLayer.001.Combined",
         "--quiet");
  EXPECT(0, "compare", dotted_out, dotted, "--pass", "ViewLayer.001.Denoised");
#endif
  CHECK_EQ_INT(cli_temp_files(dir), 0);
}

/* -- compare and the pictures ------------------------------------------------------------------ */

static void test_compare(const char* dir, const cli_scene* scene)
{
  char c[1200], clean[1200], out[1200], side[1200], small[1200];
  cli_path(c, sizeof c, dir, "cmp_color.pfm");
  cli_path(clean, sizeof clean, dir, "cmp_clean.pfm");
  cli_path(out, sizeof out, dir, "cmp_out.pfm");
  cli_path(side, sizeof side, dir, "cmp_side.png");
  cli_path(small, sizeof small, dir, "cmp_small.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(scene, "noisy", c), 0);
  CHECK_EQ_INT(cli_scene_write_plain(scene, "clean", clean), 0);
  EXPECT(0, "compare", c, clean);
  const double printed = number_after(dir, "image", "relMSE ");
  lull_io_image noisy = cli_read(c);
  if (noisy.num_passes == 1) /* the printed figure is the metric's */
    CHECK_NEAR(printed, cli_pass_rel_mse(&noisy.passes[0], scene->clean, scene->width,
                                         scene->height), 2e-6);
  lull_io_free(&noisy);
  CHECK(cli_said(dir, "stdout.txt", "PSNR"));
  CHECK(cli_said(dir, "stdout.txt", "SSIM"));
  EXPECT(0, "compare", clean, clean);
  CHECK(number_after(dir, "image", "relMSE ") == 0.0);
  CHECK(cli_said(dir, "stdout.txt", "PSNR    inf"));
  cli_scene tiny;
  CHECK_EQ_INT(cli_scene_make(&tiny, 8, 8, 1, 0.1f), 0);
  CHECK_EQ_INT(cli_scene_write_plain(&tiny, "clean", small), 0);
  cli_scene_free(&tiny);
  EXPECT(1, "compare", c, small);
  CHECK(cli_said(dir, "stderr.txt", "8x8"));
  EXPECT(1, "compare", c, "missing.exr");
  EXPECT(2, "compare", c, clean, "--png", ""); /* an unset variable */
#if defined(LULL_IO_HAS_OIIO)
  /* an 8-bit PNG holds display-encoded values: measured as what they
   * show (they were taken as linear: relMSE 1.6 against the same image) */
  char clean_png[1200];
  cli_path(clean_png, sizeof clean_png, dir, "cmp_clean.png");
  lull_io_image plain = cli_read(clean);
  char err[256];
  CHECK_EQ_INT(lull_io_write(clean_png, &plain, 1, err, sizeof err), 0);
  lull_io_free(&plain);
  EXPECT(0, "info", clean_png); /* its pass is stored as bytes (it said "float") */
  CHECK(cli_said(dir, "stdout.txt", "R G B      8-bit"));
  EXPECT(0, "compare", clean_png, clean);
  CHECK(number_after(dir, "image", "relMSE ") < 1e-3);
  CHECK(number_after(dir, "image", "PSNR ") > 40.0);
  /* denoised from a PNG into a float file: linear values, as an 8-bit
   * output measures them (the EXR had held the PNG's bytes as halves:
   * relMSE 0.8) */
  char png_out[1200], exr_out[1200];
  cli_path(png_out, sizeof png_out, dir, "cmp_from_png.png");
  cli_path(exr_out, sizeof exr_out, dir, "cmp_from_png.exr");
  EXPECT(0, "denoise", clean_png, "-o", png_out, "--quiet");
  EXPECT(0, "compare", png_out, clean);
  const double via_png = number_after(dir, "image", "relMSE ");
  EXPECT(0, "denoise", clean_png, "-o", exr_out, "--quiet");
  EXPECT(0, "compare", exr_out, clean);
  CHECK_NEAR(number_after(dir, "image", "relMSE "), via_png, 2e-3);
  CHECK(via_png < 0.05);
  /* a 16-bit PNG stays 16-bit (it came out as 8-bit) */
  char png16[1200], png16_out[1200];
  cli_path(png16, sizeof png16, dir, "cmp_16bit.png");
  cli_path(png16_out, sizeof png16_out, dir, "cmp_16bit_out.png");
  float* grey = malloc((size_t)scene->width * (size_t)scene->height * 3 * sizeof(float));
  for (int i = 0; grey && i < scene->width * scene->height * 3; ++i)
    grey[i] = 0.25f + 0.5f * (float)(i % 7) / 7.0f;
  CHECK(grey && fixture_write_png16(png16, scene->width, scene->height, 3, grey) == 0);
  free(grey);
  EXPECT(0, "denoise", png16, "-o", png16_out, "--quiet");
  lull_io_image deep = cli_read(png16_out);
  lull_io_file_info deep_info;
  lull_io_get_file_info(&deep, &deep_info);
  CHECK_EQ_INT(deep_info.bits, 16);
  lull_io_free(&deep);
  EXPECT(0, "compare", c, clean, "--png", side);
  lull_io_image picture = cli_read(side);
  CHECK(picture.width == 3 * scene->width && picture.height == scene->height);
  lull_io_free(&picture);
  /* denoise with a reference: noisy and denoised figures, three panels */
  EXPECT(0, "denoise", c, "-o", out, "--reference", clean, "--side-by-side", side);
  const double before = number_after(dir, "noisy", "relMSE ");
  const double after = number_after(dir, "denoised", "relMSE ");
  CHECK(after < before);
  picture = cli_read(side);
  CHECK(picture.width == 3 * scene->width && picture.height == scene->height);
  lull_io_free(&picture);
  EXPECT(1, "denoise", c, "-o", out, "--reference", small);
#endif
}

/* -- lull blender / lull run ------------------------------------------------------------- */

/* A stand-in for Blender: prints its arguments, where its first library
 * folder's libOpenImageDenoise.so.2 leads, the rest of LD_LIBRARY_PATH and
 * the folder itself, and exits 7. */
static void write_fake_blender(const char* path)
{
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f)
    return;
  fputs("#!/bin/sh\n"
        "for a in \"$@\"; do echo \"arg=$a\"; done\n"
        "first=${LD_LIBRARY_PATH%%:*}\n"
        "echo \"lib=$(readlink -f \"$first/libOpenImageDenoise.so.2\")\"\n"
        "echo \"files=$(ls \"$first\")\"\n"
        "echo \"rest=${LD_LIBRARY_PATH#*:}\"\n"
        "echo \"told=$LULL_OIDN_LIBRARY\"\n"
        "echo \"dir=$first\"\n"
        "exit 7\n",
        f);
  fclose(f);
  chmod(path, 0755);
}

/* The value of "key=" on a line of <dir>/stdout.txt (static buffer). */
static const char* said_value(const char* dir, const char* key)
{
  static char value[PATH_MAX];
  value[0] = '\0';
  char* text = cli_slurp(dir, "stdout.txt");
  const size_t n = strlen(key);
  for (char* line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
    if (strncmp(line, key, n) == 0 && line[n] == '=') {
      snprintf(value, sizeof value, "%s", line + n + 1);
      break;
    }
  free(text);
  return value;
}

static void test_launch(const char* dir)
{
  /* lull's library: beside the library the tool runs on (build or prefix) */
  char expected[PATH_MAX], guess[PATH_MAX + 64], tool_dir[PATH_MAX];
  snprintf(tool_dir, sizeof tool_dir, "%s", tool);
  *strrchr(tool_dir, '/') = '\0';
  snprintf(guess, sizeof guess, "%s/../lib/libOpenImageDenoise.so.2", tool_dir);
  CHECK(realpath(guess, expected) != NULL);
  char fake[1200];
  cli_path(fake, sizeof fake, dir, "fake-blender");
  write_fake_blender(fake);
  const char* old_path = getenv("PATH");
  char* saved_path = old_path ? strdup(old_path) : NULL;
  setenv("LD_LIBRARY_PATH", "/keep/me", 1);

  /* every argument but --blender goes through, in order, blanks kept */
  EXPECT(7, "blender", "--blender", fake, "-b", "two words", "--python-expr", "x");
  char* out = cli_slurp(dir, "stdout.txt");
  CHECK(strstr(out, "arg=-b\narg=two words\narg=--python-expr\narg=x\nlib=") != NULL);
  free(out);
  CHECK(strcmp(said_value(dir, "lib"), expected) == 0);
  CHECK(strcmp(said_value(dir, "files"), "libOpenImageDenoise.so.2") == 0); /* nothing else */
  CHECK(strcmp(said_value(dir, "rest"), "/keep/me") == 0);
  CHECK(strcmp(said_value(dir, "told"), expected) == 0);
  struct stat st;
  CHECK(said_value(dir, "dir")[0] == '/' && stat(said_value(dir, "dir"), &st) != 0); /* removed */
  EXPECT(2, "blender", "--blender=", "x"); /* an empty path is no Blender */
  /* found on PATH */
  char blender[1200];
  cli_path(blender, sizeof blender, dir, "blender");
  CHECK_EQ_INT(cli_copy_file(fake, blender), 0);
  chmod(blender, 0755);
  setenv("PATH", dir, 1);
  EXPECT(7, "blender", "scene.blend");
  CHECK(strcmp(said_value(dir, "arg"), "scene.blend") == 0);
  unlink(blender);
  EXPECT(2, "blender", "scene.blend");
  CHECK(cli_said(dir, "stderr.txt", "blender is not on PATH"));
  if (saved_path)
    setenv("PATH", saved_path, 1);
  free(saved_path);
  EXPECT(2, "blender", "--blender", "/no/such/blender");
  CHECK(cli_said(dir, "stderr.txt", "not an executable Blender"));
  EXPECT(2, "blender", "--blender");
  EXPECT(0, "blender", "--help");
  CHECK(cli_said(dir, "stdout.txt", "--blender PATH"));

  /* lull run: the command's status, its signal, usage */
  EXPECT(7, "run", fake);
  CHECK(strcmp(said_value(dir, "lib"), expected) == 0);
  EXPECT(3, "run", "sh", "-c", "exit 3");
  EXPECT(127, "run", "no-such-command-here");
  EXPECT(2, "run");
  EXPECT(0, "run", "--help");
  int signal_number = 0;
  const int pid = cli_start(tool, dir, ARGS("run", "sh", "-c", "kill -TERM $$"));
  CHECK(pid > 0 && cli_wait_signal(pid, &signal_number) == 128 + SIGTERM);
  CHECK_EQ_INT(signal_number, SIGTERM); /* ended as the program ended */
  unsetenv("LD_LIBRARY_PATH");
}

/* RHF through the tool: --image histogram=FILE takes the file's passes
 * histogram0, histogram1, ... as the bins (as gdpt writes them), and the
 * result is less noisy; a file without histogram0 is a message and exit
 * 1, a filter without histograms a usage error (exit 2), the output kept
 * by both. */
static void test_rhf_histograms(const char* dir, const cli_scene* scene)
{
  enum { BINS = 4, SAMPLES = 8 };
  char in[1200], hist[1200], wrong[1200], out[1200], kept[1200];
  cli_path(in, sizeof in, dir, "rhf_color.pfm");
  cli_path(hist, sizeof hist, dir, "rhf_histogram.exr");
  cli_path(wrong, sizeof wrong, dir, "rhf_wrong.exr");
  cli_path(out, sizeof out, dir, "rhf_out.pfm");
  cli_path(kept, sizeof kept, dir, "rhf_kept.pfm");
  const int w = scene->width, h = scene->height;
  const size_t n = (size_t)w * (size_t)h;
  /* each pixel's samples: the clean value times an exponential factor
   * (mean 1); the colour is their mean, the histograms bin them as
   * docs/rhf.md says */
  float* bins = calloc(n * 3 * BINS, sizeof(float));
  float* color = calloc(n * 3, sizeof(float));
  if (!bins || !color) {
    free(bins);
    free(color);
    return;
  }
  unsigned seed = 5u;
  for (size_t i = 0; i < 3 * n; ++i) {
    for (int k = 0; k < SAMPLES; ++k) {
      const float v = scene->clean[i] * -logf(1.0f - 0.999f * lull_test_random(&seed));
      color[i] += v / SAMPLES;
      int k0;
      float w0;
      lull_rhf_bin(v, BINS, 2.2f, 2.5f, &k0, &w0);
      bins[(size_t)k0 * 3 * n + i] += w0;
      if (k0 + 1 < BINS)
        bins[(size_t)(k0 + 1) * 3 * n + i] += 1.0f - w0;
    }
  }
  static const char* const rgb[] = {"R", "G", "B"};
  for (int file = 0; file < 2; ++file) {
    lull_io_image image;
    memset(&image, 0, sizeof image);
    image.width = w;
    image.height = h;
    for (int k = 0; k < BINS; ++k) {
      char name[32];
      snprintf(name, sizeof name, file ? "bin%d" : "histogram%d", k);
      CHECK(lull_io_add_pass(&image, "", name, 3, rgb, bins + (size_t)k * 3 * n) != NULL);
    }
    CHECK_EQ_INT(lull_io_write(file ? wrong : hist, &image, LULL_IO_VALUES_LINEAR, NULL, 0), 0);
    lull_io_free(&image);
  }
  lull_io_image colour;
  memset(&colour, 0, sizeof colour);
  colour.width = w;
  colour.height = h;
  CHECK(lull_io_add_pass(&colour, "", "", 3, rgb, color) != NULL);
  CHECK_EQ_INT(lull_io_write(in, &colour, LULL_IO_VALUES_LINEAR, NULL, 0), 0);
  lull_io_free(&colour);
  free(bins);
  free(color);
  char hist_arg[1300], wrong_arg[1300];
  snprintf(hist_arg, sizeof hist_arg, "histogram=%s", hist);
  snprintf(wrong_arg, sizeof wrong_arg, "histogram=%s", wrong);
  EXPECT(0, "denoise", in, "-f", "RHF", "--image", hist_arg, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "(RHF: histogram0, histogram1, histogram2, histogram3)"));
  lull_io_image result = cli_read(out), noisy = cli_read(in);
  CHECK_EQ_INT(result.num_passes, 1);
  if (result.num_passes == 1 && noisy.num_passes == 1) {
    const double before = cli_pass_rel_mse(&noisy.passes[0], scene->clean, w, h);
    const double after = cli_pass_rel_mse(&result.passes[0], scene->clean, w, h);
    printf("RHF through the tool: relMSE %.4f -> %.4f\n", before, after);
    CHECK(after < 0.5 * before);
  }
  lull_io_free(&result);
  lull_io_free(&noisy);
  CHECK_EQ_INT(cli_copy_file(out, kept), 0);
  EXPECT(1, "denoise", in, "-f", "RHF", "--image", wrong_arg, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "no pass 'histogram0'"));
  CHECK(cli_same_bytes(out, kept));
  EXPECT(2, "denoise", in, "-f", "ATrous", "--image", hist_arg, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "takes no 'histogram' image"));
  CHECK(cli_same_bytes(out, kept));
}

int main(void)
{
  if (cli_tool_built(tool))
    return 77;
  char dir[1024];
  if (cli_scratch("tool", dir, sizeof dir))
    return 1;
  cli_scene scene;
  if (cli_scene_make(&scene, 64, 48, 11, 0.6f))
    return 1;
  char in[1200];
  cli_path(in, sizeof in, dir, "params_in.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(&scene, "noisy", in), 0);
  test_usage(dir);
  test_params(dir, in);
  test_oidn_flags(dir, &scene);
#if defined(LULL_IO_HAS_OIIO)
  test_multilayer(dir, &scene);
  test_info_layers(dir);
  test_info_printable(dir);
  test_mip_levels_kept(dir);
  test_info_pixel_types(dir, &scene);
  test_compare_names_passes(dir, &scene);
  test_extract(dir, &scene);
  test_input_paths_agree(dir, &scene);
  test_fallback_guides(dir, &scene);
  test_rhf_histograms(dir, &scene);
#endif
  test_failures_keep_output(dir, &scene);
  test_half_range(dir, &scene);
  test_file_size_limit(dir, &scene);
  test_end_of_options(dir, &scene);
  test_unnamed_layer(dir, &scene);
  test_inputs_kept(dir, &scene);
  test_compare(dir, &scene);
  test_launch(dir);
  cli_scene_free(&scene);
  return lull_test_result("cli_tool");
}
