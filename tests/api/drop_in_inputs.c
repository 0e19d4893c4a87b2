/* Prepares the inputs of the drop-in proof (oidn_program.c), which reads
 * only PFM: color.pfm, albedo.pfm, normal.pfm and ref.pfm in OUTDIR.
 *
 *   drop_in_inputs exr NOISY.exr REFERENCE.exr OUTDIR
 *       the Combined, Denoising Albedo and Denoising Normal passes of a
 *       Blender multilayer render, and the reference's Combined pass
 *   drop_in_inputs pfm DIR SCENE OUTDIR
 *       the same passes as PFM files, as tests/gpu/export_testdata.py
 *       writes them for machines without OpenImageIO (the GPU machine):
 *       DIR/SCENE_spp4_{color,albedo,normal}.pfm and DIR/SCENE_ref_color.pfm
 *   drop_in_inputs synthetic OUTDIR
 *       a generated scene: two materials, a crease in the geometry, smooth
 *       lighting, noise whose variance grows with the signal (as in a path
 *       tracer); the reference is the noise-free image
 *
 *   drop_in_inputs check OUTDIR OUTPUT.pfm
 *       checks a program's result: OUTPUT has the size of OUTDIR's inputs,
 *       is finite, and its relMSE against ref.pfm is under half the noisy
 *       colour's (the examples' tests, tests/api/example_program.cmake)
 *
 * Exits 77 (ctest: skipped) when a render is missing or EXR cannot be read
 * (lull_io built without OpenImageIO; lull_io reads PFM itself). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lull_io.h"
#include "test_util.h"

enum { SKIP = 77 };

static int write_rgb(const char* dir, const char* name, int width, int height, const float* rgb)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  lull_io_image image;
  memset(&image, 0, sizeof image);
  image.width = width;
  image.height = height;
  static const char* const channels[] = {"R", "G", "B"};
  char err[512] = "";
  int rc = 1;
  if (lull_io_add_pass(&image, "", "", 3, channels, rgb))
    rc = lull_io_write(path, &image, 0, err, sizeof err);
  if (rc != 0)
    fprintf(stderr, "%s: cannot write: %s\n", path, err);
  lull_io_free(&image);
  return rc == 0;
}

/* The first three channels of a pass, as a new RGB array. */
static float* pass_rgb(const lull_io_image* image, const char* name)
{
  const lull_io_pass* pass = lull_io_find_pass(image, NULL, name);
  if (!pass || pass->channels < 3) {
    fprintf(stderr, "no 3-channel pass '%s'\n", name);
    return NULL;
  }
  const size_t n = (size_t)image->width * (size_t)image->height;
  float* rgb = malloc(3 * n * sizeof *rgb);
  if (!rgb)
    return NULL;
  for (size_t i = 0; i < n; ++i)
    memcpy(rgb + 3 * i, pass->data + (size_t)pass->channels * i, 3 * sizeof(float));
  return rgb;
}

static int from_exr(const char* noisy_path, const char* ref_path, const char* dir)
{
  if (!lull_io_has_oiio()) {
    fprintf(stderr, "skipped: lull_io was built without OpenImageIO (no EXR)\n");
    return SKIP;
  }
  FILE* probe_noisy = fopen(noisy_path, "rb");
  FILE* probe_ref = fopen(ref_path, "rb");
  const int present = probe_noisy && probe_ref;
  if (probe_noisy)
    fclose(probe_noisy);
  if (probe_ref)
    fclose(probe_ref);
  if (!present) {
    fprintf(stderr, "skipped: %s or %s is missing\n", noisy_path, ref_path);
    return SKIP;
  }
  lull_io_image noisy, ref;
  char err[512] = "";
  if (lull_io_read(noisy_path, &noisy, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  if (lull_io_read(ref_path, &ref, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    lull_io_free(&noisy);
    return 1;
  }
  int ok = noisy.width == ref.width && noisy.height == ref.height;
  float* color = pass_rgb(&noisy, "Combined");
  float* albedo = pass_rgb(&noisy, "Denoising Albedo");
  float* normal = pass_rgb(&noisy, "Denoising Normal");
  float* clean = pass_rgb(&ref, "Combined");
  ok = ok && color && albedo && normal && clean;
  const int w = noisy.width, h = noisy.height;
  ok = ok && write_rgb(dir, "color.pfm", w, h, color) && write_rgb(dir, "albedo.pfm", w, h, albedo) &&
       write_rgb(dir, "normal.pfm", w, h, normal) && write_rgb(dir, "ref.pfm", w, h, clean);
  free(color);
  free(albedo);
  free(normal);
  free(clean);
  lull_io_free(&noisy);
  lull_io_free(&ref);
  return ok ? 0 : 1;
}

/* The RGB of a PFM file (3 channels), as a new array; its size in w, h. */
static float* read_pfm_rgb(const char* path, int* w, int* h)
{
  lull_io_image image;
  char err[512] = "";
  if (lull_io_read(path, &image, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return NULL;
  }
  float* rgb = NULL;
  if (image.num_passes == 1 && image.passes[0].channels == 3) {
    const size_t bytes = (size_t)image.width * (size_t)image.height * 3 * sizeof(float);
    rgb = malloc(bytes);
    if (rgb)
      memcpy(rgb, image.passes[0].data, bytes);
    *w = image.width;
    *h = image.height;
  } else {
    fprintf(stderr, "%s: not a 3-channel image\n", path);
  }
  lull_io_free(&image);
  return rgb;
}

static int from_pfm(const char* dir, const char* scene, const char* out)
{
  static const char* const suffixes[4] = {"spp4_color", "spp4_albedo", "spp4_normal",
                                          "ref_color"};
  static const char* const names[4] = {"color.pfm", "albedo.pfm", "normal.pfm", "ref.pfm"};
  char paths[4][4096];
  for (int k = 0; k < 4; ++k) {
    snprintf(paths[k], sizeof paths[k], "%s/%s_%s.pfm", dir, scene, suffixes[k]);
    FILE* probe = fopen(paths[k], "rb");
    if (!probe) {
      fprintf(stderr, "skipped: %s is missing (tests/gpu/export_testdata.py writes it)\n",
              paths[k]);
      return SKIP;
    }
    fclose(probe);
  }
  int ok = 1, w0 = 0, h0 = 0;
  for (int k = 0; k < 4 && ok; ++k) {
    int w = 0, h = 0;
    float* rgb = read_pfm_rgb(paths[k], &w, &h);
    if (k == 0) {
      w0 = w;
      h0 = h;
    }
    ok = rgb && w == w0 && h == h0 && write_rgb(out, names[k], w, h, rgb);
    free(rgb);
  }
  return ok ? 0 : 1;
}

static int synthetic(const char* dir)
{
  enum { W = 96, H = 64 };
  const size_t n = (size_t)W * H;
  float* color = malloc(3 * n * sizeof *color);
  float* albedo = malloc(3 * n * sizeof *albedo);
  float* normal = malloc(3 * n * sizeof *normal);
  float* clean = malloc(3 * n * sizeof *clean);
  if (!color || !albedo || !normal || !clean) {
    free(color);
    free(albedo);
    free(normal);
    free(clean);
    return 1;
  }
  unsigned state = 2026;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const size_t i = (size_t)y * W + (size_t)x;
      const int left = x < W / 2;
      const int upper = y < x * H / W; /* a crease along the diagonal */
      const float a[3] = {left ? 0.8f : 0.25f, left ? 0.6f : 0.5f, left ? 0.3f : 0.7f};
      const float nrm[3] = {upper ? 0.0f : 0.6f, upper ? 0.6f : 0.0f, 0.8f};
      const float light = (upper ? 1.5f : 0.8f) * (0.5f + (float)y / H);
      for (int c = 0; c < 3; ++c) {
        albedo[3 * i + (size_t)c] = a[c];
        normal[3 * i + (size_t)c] = nrm[c];
        clean[3 * i + (size_t)c] = a[c] * light;
        /* zero-mean noise, standard deviation 0.5 of the signal; a path
         * tracer's estimate is never negative */
        const float u = lull_test_random(&state) + lull_test_random(&state) +
                        lull_test_random(&state) - 1.5f;
        const float noisy = clean[3 * i + (size_t)c] * (1.0f + u);
        color[3 * i + (size_t)c] = noisy > 0.0f ? noisy : 0.0f;
      }
    }
  const int ok = write_rgb(dir, "color.pfm", W, H, color) &&
                 write_rgb(dir, "albedo.pfm", W, H, albedo) &&
                 write_rgb(dir, "normal.pfm", W, H, normal) && write_rgb(dir, "ref.pfm", W, H, clean);
  free(color);
  free(albedo);
  free(normal);
  free(clean);
  return ok ? 0 : 1;
}

/* relMSE of x against ref (core/metrics.h's definition), over n RGB pixels. */
static double rel_mse(const float* x, const float* ref, size_t n)
{
  double sum = 0.0;
  for (size_t i = 0; i < 3 * n; ++i) {
    const double d = (double)x[i] - (double)ref[i];
    sum += d * d / ((double)ref[i] * (double)ref[i] + 0.01);
  }
  return sum / (double)(3 * n);
}

static int check_output(const char* dir, const char* output)
{
  char color_path[4096], ref_path[4096];
  snprintf(color_path, sizeof color_path, "%s/color.pfm", dir);
  snprintf(ref_path, sizeof ref_path, "%s/ref.pfm", dir);
  int w[3] = {0, 0, 0}, h[3] = {0, 0, 0};
  float* color = read_pfm_rgb(color_path, &w[0], &h[0]);
  float* ref = read_pfm_rgb(ref_path, &w[1], &h[1]);
  float* out = read_pfm_rgb(output, &w[2], &h[2]);
  int ok = color && ref && out;
  if (ok && (w[2] != w[0] || h[2] != h[0] || w[1] != w[0] || h[1] != h[0])) {
    fprintf(stderr, "%s is %d x %d, the inputs %d x %d\n", output, w[2], h[2], w[0], h[0]);
    ok = 0;
  }
  const size_t n = ok ? (size_t)w[0] * (size_t)h[0] : 0;
  for (size_t i = 0; ok && i < 3 * n; ++i)
    if (!isfinite(out[i])) {
      fprintf(stderr, "%s: value %zu is not finite\n", output, i);
      ok = 0;
    }
  if (ok) {
    const double noisy = rel_mse(color, ref, n), denoised = rel_mse(out, ref, n);
    printf("relMSE against ref.pfm: noisy %.5f, %s %.5f\n", noisy, output, denoised);
    ok = denoised < 0.5 * noisy;
  }
  free(color);
  free(ref);
  free(out);
  return ok ? 0 : 1;
}

int main(int argc, char** argv)
{
  if (argc == 4 && strcmp(argv[1], "check") == 0)
    return check_output(argv[2], argv[3]);
  if (argc == 5 && strcmp(argv[1], "exr") == 0)
    return from_exr(argv[2], argv[3], argv[4]);
  if (argc == 5 && strcmp(argv[1], "pfm") == 0)
    return from_pfm(argv[2], argv[3], argv[4]);
  if (argc == 3 && strcmp(argv[1], "synthetic") == 0)
    return synthetic(argv[2]);
  fprintf(stderr,
          "usage: %s exr NOISY.exr REFERENCE.exr OUTDIR | pfm DIR SCENE OUTDIR | synthetic "
          "OUTDIR | check OUTDIR OUTPUT.pfm\n",
          argv[0]);
  return 2;
}
