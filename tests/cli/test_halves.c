/* Two halves of a render (two renders of half the samples with different
 * seeds): `lull denoise A --half-b B`, the halves as passes of one file
 * ("Combined A", "Combined B", "Denoising Albedo A", ...; or any names with
 * --pass colorA=/colorB=), the filter chosen for them, the mean of the
 * halves for a filter that takes one image, sequences of halves, and the
 * errors that must leave an existing output as it was. */
#define _XOPEN_SOURCE 700

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_test_util.h"
#include "test_util.h"

#define ARGS(...) ((const char* const[]){__VA_ARGS__, NULL})

static const char* tool = LULL_CLI_TOOL;

#define EXPECT(status, ...) \
  cli_expect(tool, dir, status, ARGS(__VA_ARGS__), __FILE__, __LINE__)

enum { W = 32, H = 24 };

/* The two halves' scenes: the same clean image and guides, independent noise. */
static cli_scene scene_a, scene_b;

/* The library has a filter of this name (lull filters NAME succeeds). */
static int has_filter(const char* dir, const char* name)
{
  return cli_run(tool, dir, ARGS("filters", name)) == 0;
}

/* A half as Blender writes it, but every pass stored as float: the tool
 * stores its Denoised pass as the colour is stored, so that results
 * compared here are not rounded to half. */
static int write_half(const char* dir, const char* name, const cli_scene* scene, char* path,
                      size_t size)
{
  static const char* const layers[] = {"ViewLayer"};
  cli_path(path, size, dir, name);
  lull_io_image image;
  if (cli_scene_write_blender(scene, path, layers, 1, 0) || lull_io_read(path, &image, NULL, 0))
    return 1;
  for (int i = 0; i < image.num_passes; ++i)
    image.passes[i].half = 0;
  const int status = lull_io_write(path, &image, LULL_IO_VALUES_LINEAR, NULL, 0);
  lull_io_free(&image);
  return status;
}

/* The passes of two files as the halves of one file: each pass of A as
 * "<pass> A" and of B as "<pass> B" (renamed: "Combined" as color_a and
 * color_b), in `layer` ("" the unnamed layer, as a compositor's File
 * Output node writes them).  Returns 0 or non-zero. */
static int write_one_file(const char* path, const char* a_path, const char* b_path,
                          const char* layer, const char* color_a, const char* color_b)
{
  lull_io_image halves[2], out;
  memset(&out, 0, sizeof out);
  if (lull_io_read(a_path, &halves[0], NULL, 0) || lull_io_read(b_path, &halves[1], NULL, 0))
    return 1;
  out.width = halves[0].width;
  out.height = halves[0].height;
  int status = 0;
  for (int h = 0; h < 2 && !status; ++h)
    for (int i = 0; i < halves[h].num_passes && !status; ++i) {
      const lull_io_pass* p = &halves[h].passes[i];
      if (strcmp(p->name, "Emit") == 0)
        continue;
      char name[LULL_IO_NAME_SIZE];
      if (strcmp(p->name, "Combined") == 0)
        snprintf(name, sizeof name, "%s", h ? color_b : color_a);
      else
        snprintf(name, sizeof name, "%.100s %c", p->name, 'A' + h);
      const char* channels[LULL_IO_MAX_CHANNELS];
      for (int c = 0; c < p->channels; ++c)
        channels[c] = p->channel_names[c];
      status = lull_io_add_pass(&out, layer, name, p->channels, channels, p->data) == NULL;
    }
  if (!status)
    status = lull_io_write(path, &out, LULL_IO_VALUES_LINEAR, NULL, 0);
  lull_io_free(&halves[0]);
  lull_io_free(&halves[1]);
  lull_io_free(&out);
  return status;
}

/* A copy of file `from` with pass `pass` of `layer` renamed: 0 or non-zero. */
static int copy_renaming(const char* from, const char* to, const char* layer, const char* pass,
                         const char* name)
{
  lull_io_image image;
  if (lull_io_read(from, &image, NULL, 0))
    return 1;
  lull_io_pass* p = lull_io_find_pass(&image, layer, pass);
  if (p)
    snprintf(p->name, sizeof p->name, "%s", name);
  const int status = !p || lull_io_write(to, &image, LULL_IO_VALUES_LINEAR, NULL, 0);
  lull_io_free(&image);
  return status;
}

/* A file's pass (NULL when the file or pass is missing); *image must be
 * freed. */
static const lull_io_pass* read_pass(const char* path, lull_io_image* image, const char* layer,
                                     const char* name)
{
  memset(image, 0, sizeof *image);
  if (lull_io_read(path, image, NULL, 0))
    return NULL;
  return lull_io_find_pass(image, layer, name);
}

/* The number after `key` in the tool's captured stdout (NaN when none). */
static double number_after(const char* dir, const char* key)
{
  char* s = cli_slurp(dir, "stdout.txt");
  const char* p = s ? strstr(s, key) : NULL;
  const double v = p ? strtod(p + strlen(key), NULL) : NAN;
  free(s);
  return v;
}

/* Largest difference between the Denoised passes of two outputs. */
static double denoised_diff(const char* a, const char* b, const char* layer)
{
  lull_io_image ia, ib;
  const lull_io_pass* pa = read_pass(a, &ia, layer, "Denoised");
  const lull_io_pass* pb = read_pass(b, &ib, layer, "Denoised");
  double d = INFINITY;
  if (pa && pb && pa->channels == pb->channels)
    d = lull_test_max_abs_diff(pa->data, pb->data, (size_t)W * H * (size_t)pa->channels);
  lull_io_free(&ia);
  lull_io_free(&ib);
  return d;
}

/* -- two files -------------------------------------------------------------------------------- */

static void test_two_files(const char* dir, const char* a, const char* b, int regression)
{
  double noisy = NAN;
  char out[1200];
  cli_path(out, sizeof out, dir, "two.exr");
  EXPECT(0, "denoise", a, "--half-b", b, "-o", out);
  /* Regression is chosen for halves; it takes them as colorA/colorB and
   * each guide as its two halves */
  if (regression)
    CHECK(cli_said(dir, "stderr.txt",
                   "(Regression: colorA, colorB, albedo (halves), normal (halves), depth "
                   "(halves); position unused"));
  lull_io_image in, result;
  CHECK_EQ_INT(lull_io_read(a, &in, NULL, 0), 0);
  CHECK_EQ_INT(lull_io_read(out, &result, NULL, 0), 0);
  /* every pass of half A as it was, and the Denoised pass */
  CHECK_EQ_INT(result.num_passes, in.num_passes + 1);
  for (int i = 0; i < in.num_passes; ++i) {
    const lull_io_pass* p = &in.passes[i];
    const lull_io_pass* q = lull_io_find_pass(&result, p->layer, p->name);
    CHECK(q && q->channels == p->channels &&
          memcmp(p->data, q->data, (size_t)W * H * (size_t)p->channels * sizeof(float)) == 0);
  }
  const lull_io_pass* denoised = lull_io_find_pass(&result, "ViewLayer", "Denoised");
  CHECK(denoised != NULL && denoised->channels == 4);
  lull_io_image half_b;
  CHECK_EQ_INT(lull_io_read(b, &half_b, NULL, 0), 0);
  const lull_io_pass* ca = lull_io_find_pass(&in, "ViewLayer", "Combined");
  const lull_io_pass* cb = lull_io_find_pass(&half_b, "ViewLayer", "Combined");
  if (denoised && ca && cb) {
    const size_t n = (size_t)W * H;
    CHECK(lull_test_all_finite(denoised->data, n * 4));
    /* the alpha is the halves' mean, the colour far closer to the clean
     * image than the mean of the halves (the noisy render of all samples) */
    float* mean = malloc(n * 3 * sizeof(float));
    double alpha_error = 0;
    for (size_t i = 0; mean && i < n; ++i) {
      for (int c = 0; c < 3; ++c)
        mean[i * 3 + (size_t)c] = 0.5f * (ca->data[i * 4 + (size_t)c] + cb->data[i * 4 + (size_t)c]);
      alpha_error = fmax(alpha_error, fabs(denoised->data[i * 4 + 3] -
                                           0.5f * (ca->data[i * 4 + 3] + cb->data[i * 4 + 3])));
    }
    CHECK(alpha_error < 1e-6);
    if (mean) {
      lull_io_pass mean_pass = *ca;
      float* packed = malloc(n * 4 * sizeof(float));
      for (size_t i = 0; packed && i < n; ++i) {
        for (int c = 0; c < 3; ++c)
          packed[i * 4 + (size_t)c] = mean[i * 3 + (size_t)c];
        packed[i * 4 + 3] = 1;
      }
      mean_pass.data = packed;
      noisy = packed ? cli_pass_rel_mse(&mean_pass, scene_a.clean, W, H) : 0;
      const double after = cli_pass_rel_mse(denoised, scene_a.clean, W, H);
      printf("halves: relMSE of their mean %.5f, denoised %.5f\n", noisy, after);
      CHECK(after < 0.5 * noisy);
      free(packed);
    }
    free(mean);
  }
  lull_io_free(&half_b);
  lull_io_free(&in);
  lull_io_free(&result);

  /* --image colorB=FILE is --half-b */
  char other[1200], image_arg[1300];
  cli_path(other, sizeof other, dir, "two_image.exr");
  snprintf(image_arg, sizeof image_arg, "colorB=%s", b);
  EXPECT(0, "denoise", a, "--image", image_arg, "-o", other, "--quiet");
  CHECK_NEAR(denoised_diff(out, other, "ViewLayer"), 0, 1e-6);

  /* --reference measures the halves' mean as the noisy image */
  char ref[1200];
  cli_path(ref, sizeof ref, dir, "clean.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(&scene_a, "clean", ref), 0);
  cli_path(other, sizeof other, dir, "two_ref.exr");
  EXPECT(0, "denoise", a, "--half-b", b, "-o", other, "--reference", ref);
  CHECK_NEAR(number_after(dir, "noisy    relMSE "), noisy, 2e-6 + 1e-3 * noisy);
}

/* A filter without halves gets their mean: the same result as the mean
 * given as one image. */
static void test_mean_for_other_filters(const char* dir, const char* a, const char* b)
{
  lull_io_image ia, ib;
  CHECK_EQ_INT(lull_io_read(a, &ia, NULL, 0), 0);
  CHECK_EQ_INT(lull_io_read(b, &ib, NULL, 0), 0);
  /* the mean file: every pass the mean of the halves' (the guides are the
   * same in both), stored as float */
  for (int i = 0; i < ia.num_passes; ++i) {
    lull_io_pass* p = &ia.passes[i];
    const lull_io_pass* q = lull_io_find_pass(&ib, p->layer, p->name);
    CHECK(q != NULL);
    for (size_t k = 0; q && k < (size_t)W * H * (size_t)p->channels; ++k)
      p->data[k] = 0.5f * (p->data[k] + q->data[k]);
    p->half = 0;
  }
  char mean[1200], from_mean[1200], from_halves[1200];
  cli_path(mean, sizeof mean, dir, "mean.exr");
  cli_path(from_mean, sizeof from_mean, dir, "from_mean.exr");
  cli_path(from_halves, sizeof from_halves, dir, "from_halves.exr");
  CHECK_EQ_INT(lull_io_write(mean, &ia, LULL_IO_VALUES_LINEAR, NULL, 0), 0);
  lull_io_free(&ia);
  lull_io_free(&ib);
  EXPECT(0, "denoise", mean, "-f", "ATrous", "-o", from_mean);
  EXPECT(0, "denoise", a, "--half-b", b, "-f", "ATrous", "-o", from_halves);
  CHECK(cli_said(dir, "stderr.txt", "the halves' mean: ATrous takes no colorA/colorB"));
  CHECK(cli_said(dir, "stderr.txt", "albedo (the halves' mean)"));
  CHECK_NEAR(denoised_diff(from_mean, from_halves, "ViewLayer"), 0, 0);
}

/* -- one file --------------------------------------------------------------------------------- */

static void test_one_file(const char* dir, const char* a, const char* b, int regression)
{
  char two[1200];
  cli_path(two, sizeof two, dir, "two.exr"); /* test_two_files' output */
  char one[1200], out[1200];
  cli_path(one, sizeof one, dir, "one.exr");
  cli_path(out, sizeof out, dir, "one_denoised.exr");
  CHECK_EQ_INT(write_one_file(one, a, b, "ViewLayer", "Combined A", "Combined B"), 0);
  /* found by their names, denoised as the two files are */
  EXPECT(0, "denoise", one, "-o", out);
  if (regression)
    CHECK(cli_said(dir, "stderr.txt", "(Regression: colorA, colorB, albedo (halves)"));
  CHECK(denoised_diff(two, out, "ViewLayer") == 0);
  lull_io_image result;
  const lull_io_pass* denoised = read_pass(out, &result, "ViewLayer", "Denoised");
  CHECK(denoised && denoised->channels == 4);
  lull_io_free(&result);

  /* any names, with --pass colorA/colorB ("Layer.Pass" too) */
  char named[1200];
  cli_path(named, sizeof named, dir, "named.exr");
  CHECK_EQ_INT(write_one_file(named, a, b, "ViewLayer", "Beauty 1", "Beauty 2"), 0);
  EXPECT(0, "denoise", named, "--pass", "colorA=Beauty 1", "--pass", "colorB=ViewLayer.Beauty 2",
         "-o", out);
  CHECK(denoised_diff(two, out, "ViewLayer") == 0);
  /* without the names they are not halves (and there is no colour) */
  EXPECT(1, "denoise", named, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "no colour pass"));

  /* the unnamed layer, as a File Output node writes "Combined A.R" */
  char plain[1200];
  cli_path(plain, sizeof plain, dir, "file_output_node.exr");
  CHECK_EQ_INT(write_one_file(plain, a, b, "", "Combined A", "Combined B"), 0);
  EXPECT(0, "denoise", plain, "-o", out);
  CHECK(denoised_diff(plain, out, "") > 0); /* (plain has no Denoised: infinite) */
  lull_io_image ia, ib;
  const lull_io_pass* pa = read_pass(two, &ia, "ViewLayer", "Denoised");
  const lull_io_pass* pb = read_pass(out, &ib, "", "Denoised");
  CHECK(pa && pb && lull_test_max_abs_diff(pa->data, pb->data, (size_t)W * H * 4) == 0);
  lull_io_free(&ia);
  lull_io_free(&ib);

  /* a half without its partner: an error, the output left as it was */
  char lonely[1200];
  cli_path(lonely, sizeof lonely, dir, "lonely.exr");
  CHECK_EQ_INT(copy_renaming(one, lonely, "ViewLayer", "Combined B", "Combined C"), 0);
  char before[1200];
  cli_path(before, sizeof before, dir, "before.exr");
  CHECK_EQ_INT(cli_copy_file(out, before), 0);
  EXPECT(1, "denoise", lonely, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "pass 'Combined A' (layer 'ViewLayer') has no other half: "
                                    "no 'Combined B'"));
  CHECK(cli_same_bytes(out, before));
  /* a guide half without its partner */
  CHECK_EQ_INT(copy_renaming(one, lonely, "ViewLayer", "Denoising Albedo B", "Albedo"), 0);
  EXPECT(1, "denoise", lonely, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "no 'Denoising Albedo B'"));
  CHECK(cli_same_bytes(out, before));
}

/* -- errors ----------------------------------------------------------------------------------- */

static void test_errors(const char* dir, const char* a, const char* b, int regression)
{
  char out[1200], before[1200];
  cli_path(out, sizeof out, dir, "errors.exr");
  cli_path(before, sizeof before, dir, "errors_before.exr");
  EXPECT(0, "denoise", a, "--half-b", b, "-o", out, "--quiet");
  CHECK_EQ_INT(cli_copy_file(out, before), 0);

  /* usage errors (exit 2) */
  EXPECT(2, "denoise", a, "--half-b", b, "--half-b", b, "-o", out);
  EXPECT(2, "denoise", a, "--half-b", "", "-o", out);
  EXPECT(2, "denoise", a, "--pass", "colorA=Combined", "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "needs --pass colorB=PASS too"));
  EXPECT(2, "denoise", a, "--half-b", b, "--pass", "colorA=X", "--pass", "colorB=Y", "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "give the halves one way"));
  EXPECT(2, "denoise", a, "--half-b", b, "--inplace", "-o", out);
  EXPECT(2, "denoise", a, "--half-b", b, "--pass", "color=Combined", "-o", out);
  CHECK(cli_same_bytes(out, before));

  /* a missing half B */
  char missing[1200];
  cli_path(missing, sizeof missing, dir, "no_such_half.exr");
  EXPECT(1, "denoise", a, "--half-b", missing, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "no_such_half.exr"));
  /* the input as its own other half */
  EXPECT(1, "denoise", a, "--half-b", a, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "--half-b names the input itself"));

  /* halves of different sizes */
  cli_scene small;
  CHECK_EQ_INT(cli_scene_make(&small, W / 2, H, 7, 0.5f), 0);
  char other[1200];
  CHECK_EQ_INT(write_half(dir, "small.exr", &small, other, sizeof other), 0);
  cli_scene_free(&small);
  EXPECT(1, "denoise", a, "--half-b", other, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "the halves differ in size"));
  CHECK(cli_said(dir, "stderr.txt", "is 32x24"));
  CHECK(cli_said(dir, "stderr.txt", "is 16x24"));

  /* other layers */
  static const char* const layers[] = {"ViewLayer", "Other"};
  cli_path(other, sizeof other, dir, "two_layers.exr");
  CHECK_EQ_INT(cli_scene_write_blender(&scene_b, other, layers, 2, 0), 0);
  EXPECT(1, "denoise", a, "--half-b", other, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "has layer 'Other' to denoise"));
  CHECK(cli_said(dir, "stderr.txt", "the halves must have the same layers and passes"));
  EXPECT(1, "denoise", other, "--half-b", a, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "has no pass 'Combined' in layer 'Other'"));
  static const char* const renamed[] = {"RenderLayer"};
  cli_path(other, sizeof other, dir, "renamed.exr");
  CHECK_EQ_INT(cli_scene_write_blender(&scene_b, other, renamed, 1, 0), 0);
  EXPECT(1, "denoise", a, "--half-b", other, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "has no pass 'Combined' in layer 'ViewLayer'"));

  /* a guide only one half has */
  cli_path(other, sizeof other, dir, "no_albedo.exr");
  CHECK_EQ_INT(copy_renaming(b, other, "ViewLayer", "Denoising Albedo", "Albedo"), 0);
  EXPECT(1, "denoise", a, "--half-b", other, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "has no pass 'Denoising Albedo' in layer 'ViewLayer'"));
  CHECK(cli_said(dir, "stderr.txt", "the halves must have the same passes"));
  EXPECT(1, "denoise", other, "--half-b", a, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "(half A) has no pass 'Denoising Albedo'"));
  /* ... unless the guide is named for both: --pass albedo=none */
  char kept[1200];
  cli_path(kept, sizeof kept, dir, "no_albedo_denoised.exr");
  EXPECT(0, "denoise", a, "--half-b", other, "--pass", "albedo=none", "-o", kept);
  if (regression)
    CHECK(cli_said(dir, "stderr.txt", "(Regression: colorA, colorB, normal (halves)"));

  /* a parameter the filter for halves lacks is a usage error */
  EXPECT(2, "denoise", a, "--half-b", b, "-p", "iterations=3", "-o", out);
  CHECK(cli_same_bytes(out, before));
}

/* -- sequences -------------------------------------------------------------------------------- */

static void test_sequence(const char* dir)
{
  char path[1300];
  for (int h = 0; h < 2; ++h) {
    snprintf(path, sizeof path, "%s/seq_%c", dir, 'a' + h);
    CHECK_EQ_INT(mkdir(path, 0755), 0);
  }
  for (int frame = 1; frame <= 3; ++frame)
    for (int h = 0; h < 2; ++h) {
      if (frame == 3 && h == 1)
        continue; /* frame 3 has no half B */
      cli_scene scene;
      CHECK_EQ_INT(cli_scene_make(&scene, W, H, (unsigned)(10 * frame + h), 0.5f), 0);
      snprintf(path, sizeof path, "%s/seq_%c/%04d.pfm", dir, 'a' + h, frame);
      CHECK_EQ_INT(cli_scene_write_plain(&scene, "noisy", path), 0);
      cli_scene_free(&scene);
    }
  char in[1200], half_b[1200], out[1200];
  snprintf(in, sizeof in, "%s/seq_a/####.pfm", dir);
  snprintf(half_b, sizeof half_b, "%s/seq_b/####.pfm", dir);
  snprintf(out, sizeof out, "%s/seq_out/####.pfm", dir);
  /* frame 3's half B is missing: that frame fails, the others are written */
  EXPECT(1, "denoise", in, "--half-b", half_b, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "3 frames: 2 denoised, 0 up to date (skipped), 1 failed"));
  CHECK(cli_said(dir, "stderr.txt", "seq_b/0003.pfm"));
  for (int frame = 1; frame <= 3; ++frame) {
    snprintf(path, sizeof path, "%s/seq_out/%04d.pfm", dir, frame);
    CHECK_EQ_INT(cli_file_exists(path), frame < 3);
  }
  /* resume: up to date, unless half B is newer than the output */
  EXPECT(0, "denoise", in, "--half-b", half_b, "-o", out, "--frames", "1-2");
  CHECK(cli_said(dir, "stderr.txt", "2 frames: 0 denoised, 2 up to date (skipped), 0 failed"));
  snprintf(path, sizeof path, "%s/seq_b/0002.pfm", dir);
  CHECK_EQ_INT(cli_touch(path, 5), 0);
  EXPECT(0, "denoise", in, "--half-b", half_b, "-o", out, "--frames", "1-2");
  CHECK(cli_said(dir, "stderr.txt", "2 frames: 1 denoised, 1 up to date (skipped), 0 failed"));
  /* a sequence needs a pattern for half B, a single file none */
  snprintf(path, sizeof path, "%s/seq_b/0001.pfm", dir);
  EXPECT(2, "denoise", in, "--half-b", path, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "--half-b"));
  char one_a[1200];
  snprintf(one_a, sizeof one_a, "%s/seq_a/0001.pfm", dir);
  EXPECT(2, "denoise", one_a, "--half-b", half_b, "-o", out);
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
  if (cli_scratch("halves", dir, sizeof dir))
    return 1;
  CHECK_EQ_INT(cli_scene_make(&scene_a, W, H, 1, 0.5f), 0);
  CHECK_EQ_INT(cli_scene_make(&scene_b, W, H, 2, 0.5f), 0);
  char a[1200], b[1200];
  CHECK_EQ_INT(write_half(dir, "half_a.exr", &scene_a, a, sizeof a), 0);
  CHECK_EQ_INT(write_half(dir, "half_b.exr", &scene_b, b, sizeof b), 0);
  const int regression = has_filter(dir, "Regression");
  if (!regression)
    printf("the library has no Regression filter: its choice is not checked\n");
  test_two_files(dir, a, b, regression);
  test_mean_for_other_filters(dir, a, b);
  test_one_file(dir, a, b, regression);
  test_errors(dir, a, b, regression);
  test_sequence(dir);
  cli_scene_free(&scene_a);
  cli_scene_free(&scene_b);
  return lull_test_result("cli_halves");
}
