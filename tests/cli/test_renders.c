/* The tool on the Blender test renders (tests/data/<scene>/, see the README
 * there): the denoised pass is added without touching any original channel
 * or the header, and it is much closer to the high-sample reference than
 * the noisy render.  Skipped when no scene has a reference yet. */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_test_util.h"
#include "metrics.h"
#include "test_util.h"
#if defined(LULL_IO_HAS_OIIO)
  #include "exr_fixtures.h"
#endif

static const char* tool = LULL_CLI_TOOL;

static double rel_mse(const lull_io_pass* pass, const lull_io_pass* reference, int width,
                      int height)
{
  float* rgb = malloc((size_t)width * (size_t)height * 3 * sizeof(float));
  if (!rgb)
    return 1e30;
  for (size_t i = 0; i < (size_t)width * (size_t)height; ++i)
    for (int c = 0; c < 3; ++c)
      rgb[i * 3 + (size_t)c] = reference->data[i * (size_t)reference->channels + (size_t)c];
  const double e = cli_pass_rel_mse(pass, rgb, width, height);
  free(rgb);
  return e;
}

/* Blender's stereo render (tests/data/stereo): both views denoised, each
 * into a Denoised pass of its view; with --reference the metrics say which
 * view they measure (the first: they had named none). */
static void check_stereo(const char* dir)
{
  char in[1024], out[1200];
  snprintf(in, sizeof in, "%s/stereo/multiview.exr", LULL_TEST_DATA_DIR);
  snprintf(out, sizeof out, "%s/stereo_denoised.exr", dir);
  const char* const args[] = {"denoise", in, "-o", out, "--reference", in, NULL};
  CHECK_EQ_INT(cli_run(tool, dir, args), 0);
  CHECK(cli_said(dir, "stdout.txt", "[ViewLayer/left] against"));
  CHECK(cli_said(dir, "stdout.txt", "the first of 2 layers and views"));
  lull_io_image result;
  char err[512];
  CHECK_EQ_INT(lull_io_read(out, &result, err, sizeof err), 0);
  CHECK(lull_io_find_pass_view(&result, "ViewLayer", "Denoised", "left") != NULL);
  CHECK(lull_io_find_pass_view(&result, "ViewLayer", "Denoised", "right") != NULL);
  lull_io_free(&result);
  /* guides from a separate stereo file: each view its own (the right eye
   * had been denoised with the left eye's guides) */
  char guided[1200];
  snprintf(guided, sizeof guided, "%s/stereo_guided.exr", dir);
  char albedo_arg[1200], normal_arg[1200];
  snprintf(albedo_arg, sizeof albedo_arg, "albedo=%s", in);
  snprintf(normal_arg, sizeof normal_arg, "normal=%s", in);
  const char* const from_file[] = {"denoise", in, "-o", guided, "--image", albedo_arg,
                                   "--image", normal_arg, "--quiet", NULL};
  CHECK_EQ_INT(cli_run(tool, dir, from_file), 0);
  lull_io_image own, other;
  CHECK_EQ_INT(lull_io_read(out, &own, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_read(guided, &other, err, sizeof err), 0);
  for (int v = 0; v < 2; ++v) {
    const char* view = v ? "right" : "left";
    const lull_io_pass* a = lull_io_find_pass_view(&own, "ViewLayer", "Denoised", view);
    const lull_io_pass* b = lull_io_find_pass_view(&other, "ViewLayer", "Denoised", view);
    CHECK(a && b);
    if (a && b)
      CHECK(memcmp(a->data, b->data, (size_t)own.width * (size_t)own.height *
                                         (size_t)a->channels * sizeof(float)) == 0);
  }
  lull_io_free(&own);
  lull_io_free(&other);
  /* one view into a file of one image (it could not be picked: --layer
   * does not choose a view) */
  char one[1200];
  snprintf(one, sizeof one, "%s/stereo_right.pfm", dir);
  const char* const both[] = {"denoise", in, "-o", one, NULL};
  CHECK_EQ_INT(cli_run(tool, dir, both), 1);
  CHECK(cli_said(dir, "stderr.txt", "--view"));
  const char* const right_only[] = {"denoise", in, "-o", one, "--view", "right", NULL};
  CHECK_EQ_INT(cli_run(tool, dir, right_only), 0);
  CHECK(cli_said(dir, "stderr.txt", "[ViewLayer/right]"));
  const char* const no_view[] = {"denoise", in, "-o", one, "--view", "lef", NULL};
  CHECK_EQ_INT(cli_run(tool, dir, no_view), 1);
  CHECK(cli_said(dir, "stderr.txt", "no view 'lef' (views: 'left', 'right')"));
  /* compare measures the first view, or --view's, and says which */
  const char* const left[] = {"compare", out, in, NULL};
  CHECK_EQ_INT(cli_run(tool, dir, left), 0);
  CHECK(cli_said(dir, "stdout.txt", "(view left)"));
  const char* const right[] = {"compare", out, in, "--view", "right", NULL};
  CHECK_EQ_INT(cli_run(tool, dir, right), 0);
  CHECK(cli_said(dir, "stdout.txt", "(view right)"));
  const char* const unknown[] = {"compare", out, in, "--view", "up", NULL};
  CHECK_EQ_INT(cli_run(tool, dir, unknown), 1);
  CHECK(cli_said(dir, "stderr.txt", "in view 'up'"));
}

#if defined(LULL_IO_HAS_OIIO)
/* Two stereo files listing their views in other orders: compare measures
 * each view against the same view (left had been measured against right,
 * relMSE 7, and called "view left"). */
static void check_view_order(const char* dir)
{
  enum { W = 8, H = 6, N = W * H };
  static float planes[2][3][N];
  for (int v = 0; v < 2; ++v)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < N; ++i)
        planes[v][c][i] = v ? 0.9f : 0.1f + 0.001f * (float)(i + c);
  char lr[1200], rl[1200];
  snprintf(lr, sizeof lr, "%s/views_lr.exr", dir);
  snprintf(rl, sizeof rl, "%s/views_rl.exr", dir);
  for (int order = 0; order < 2; ++order) {
    fixture_channel channels[6];
    static const char* const names[3] = {"ViewLayer.Combined.R", "ViewLayer.Combined.G",
                                         "ViewLayer.Combined.B"};
    for (int p = 0; p < 2; ++p) {
      const int v = order ? 1 - p : p; /* the view of part p */
      for (int c = 0; c < 3; ++c) {
        const fixture_channel ch = {names[c], 0, p, planes[v][c]};
        channels[3 * p + c] = ch;
      }
    }
    const char* part_names[2] = {order ? "right" : "left", order ? "left" : "right"};
    const char* part_views[2] = {part_names[0], part_names[1]};
    const char* const views[] = {"left", "right", NULL};
    CHECK_EQ_INT(fixture_write_exr_part_views(order ? rl : lr, W, H, channels, 6, part_names,
                                              part_views, 2, NULL, views),
                 0);
  }
  const char* const args[] = {"compare", lr, rl, NULL};
  CHECK_EQ_INT(cli_run(tool, dir, args), 0);
  CHECK(cli_said(dir, "stdout.txt", "(view left)"));
  CHECK(cli_said(dir, "stdout.txt", "relMSE 0.000000"));
}
#endif

/* Denoises one render and checks it; returns 1 when it ran. */
static int check_render(const char* dir, const char* scene, int spp)
{
  char in[1024], ref[1024], out[1200];
  snprintf(in, sizeof in, "%s/%s/%s_spp%d.exr", LULL_TEST_DATA_DIR, scene, scene, spp);
  snprintf(ref, sizeof ref, "%s/%s/%s_ref.exr", LULL_TEST_DATA_DIR, scene, scene);
  snprintf(out, sizeof out, "%s/%s_spp%d_denoised.exr", dir, scene, spp);
  if (!cli_file_exists(in) || !cli_file_exists(ref))
    return 0;
  const char* const args[] = {"denoise", in, "-o", out, "--reference", ref, NULL};
  const int status = cli_run(tool, dir, args);
  CHECK_EQ_INT(status, 0);
  if (status != 0) {
    char* err = cli_slurp(dir, "stderr.txt");
    fprintf(stderr, "%s", err ? err : "");
    free(err);
    return 1;
  }
  lull_io_image noisy, result, reference;
  char err[512];
  CHECK_EQ_INT(lull_io_read(in, &noisy, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_read(out, &result, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_read(ref, &reference, err, sizeof err), 0);
  const size_t pixels = (size_t)noisy.width * (size_t)noisy.height;
  /* the log names the guides used: with a depth, not the position (it
   * was listed, and ignored by the filter) */
  if (lull_io_find_pass(&noisy, "ViewLayer", "Position") &&
      lull_io_find_pass(&noisy, "ViewLayer", "Denoising Depth"))
    CHECK(cli_said(dir, "stderr.txt", "depth; position unused"));
  /* every original channel bit for bit, the header kept */
  CHECK_EQ_INT(result.num_passes, noisy.num_passes + 1);
  for (int i = 0; i < noisy.num_passes; ++i) {
    const lull_io_pass* a = &noisy.passes[i];
    const lull_io_pass* b = lull_io_find_pass(&result, a->layer, a->name);
    CHECK(b && b->channels == a->channels && b->half == a->half &&
          memcmp(a->data, b->data, pixels * (size_t)a->channels * sizeof(float)) == 0);
  }
#if defined(LULL_IO_HAS_OIIO)
  char a[256], b[256];
  CHECK(fixture_attribute(in, "Note", a, sizeof a) != 0 ||
        (fixture_attribute(out, "Note", b, sizeof b) == 0 && strcmp(a, b) == 0));
#endif
  const lull_io_pass* combined = lull_io_find_pass(&noisy, "ViewLayer", "Combined");
  const lull_io_pass* denoised = lull_io_find_pass(&result, "ViewLayer", "Denoised");
  const lull_io_pass* truth = lull_io_find_pass(&reference, "ViewLayer", "Combined");
  CHECK(combined && denoised && truth);
  if (combined && denoised && truth) {
    CHECK(lull_test_all_finite(denoised->data, pixels * (size_t)denoised->channels));
    const double before = rel_mse(combined, truth, noisy.width, noisy.height);
    const double after = rel_mse(denoised, truth, noisy.width, noisy.height);
    printf("%s spp%d: relMSE noisy %.5f, denoised %.5f (%.1fx lower)\n", scene, spp, before,
           after, before / after);
    CHECK(after < 0.5 * before);
  }
  lull_io_free(&noisy);
  lull_io_free(&result);
  lull_io_free(&reference);
  return 1;
}

int main(void)
{
  if (cli_tool_built(tool))
    return 77;
  if (!lull_io_has_oiio()) {
    printf("EXR needs OpenImageIO: skipped\n");
    return 77;
  }
  char dir[1024];
  if (cli_scratch("renders", dir, sizeof dir))
    return 1;
  static const char* const scenes[] = {"cornell", "indirect", "dof_glossy"};
  int ran = 0;
  for (int s = 0; s < 3; ++s)
    for (int spp = 4; spp <= 16; spp *= 4)
      ran += check_render(dir, scenes[s], spp);
  if (ran == 0) {
    printf("no test render with a reference in %s: skipped\n", LULL_TEST_DATA_DIR);
    return 77;
  }
  check_stereo(dir);
#if defined(LULL_IO_HAS_OIIO)
  check_view_order(dir);
#endif
  return lull_test_result("cli_renders");
}
