/* Pictures for people: packed RGB colour, metrics against a reference and
 * side-by-side PNGs with an error heat map. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "metrics.h"

float* cli_pass_rgb(const lull_io_pass* pass, int width, int height)
{
  const size_t pixels = (size_t)width * (size_t)height;
  float* rgb = malloc(pixels * 3 * sizeof(float));
  if (!rgb)
    return NULL;
  int color[3], alpha;
  const int n = cli_pass_channels(pass, color, &alpha);
  for (size_t i = 0; i < pixels; ++i)
    for (int c = 0; c < 3; ++c)
      rgb[i * 3 + (size_t)c] =
          n > 0 ? pass->data[i * (size_t)pass->channels + (size_t)color[c < n ? c : 0]] : 0.0f;
  return rgb;
}

int cli_write_panels(const char* path, const float* const* panels, const int* encoded, int count,
                     int width, int height, char* err, size_t err_size)
{
  if ((long long)width * count > LULL_IO_MAX_SIZE) {
    snprintf(err, err_size, "%s: %d panels of width %d do not fit in one image", path, count,
             width);
    return 1;
  }
  lull_io_image image;
  memset(&image, 0, sizeof image);
  image.width = width * count;
  image.height = height;
  static const char* const rgb[] = {"R", "G", "B"};
  lull_io_pass* pass = lull_io_add_pass(&image, "", "", 3, rgb, NULL);
  if (!pass) {
    snprintf(err, err_size, "%s: out of memory", path);
    return 1;
  }
  for (int p = 0; p < count; ++p)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        for (int c = 0; c < 3; ++c) {
          const float v = panels[p][((size_t)y * (size_t)width + (size_t)x) * 3 + (size_t)c];
          /* display values: the tone mapping the PSNR/SSIM of metrics.h use */
          const float display = encoded[p] ? (v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f)
                                           : lull_metric_tonemap(v);
          pass->data[((size_t)y * (size_t)image.width + (size_t)(p * width + x)) * 3 +
                     (size_t)c] = display;
        }
  const int status = cli_write_file(path, &image, 0, err, err_size);
  lull_io_free(&image);
  return status;
}

/* A heat-map ramp, display-encoded: black, purple, red, orange, yellow, white. */
static void ramp(float t, float out[3])
{
  static const float stops[6][3] = {{0.00f, 0.00f, 0.00f}, {0.34f, 0.06f, 0.43f},
                                    {0.80f, 0.18f, 0.30f}, {0.97f, 0.50f, 0.10f},
                                    {0.99f, 0.85f, 0.20f}, {1.00f, 1.00f, 1.00f}};
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  const float s = t * 5.0f;
  const int i = s >= 5.0f ? 4 : (int)s;
  const float f = s - (float)i;
  for (int c = 0; c < 3; ++c)
    out[c] = stops[i][c] + f * (stops[i + 1][c] - stops[i][c]);
}

float* cli_heat_map(const float* image, const float* reference, int width, int height)
{
  const size_t pixels = (size_t)width * (size_t)height;
  float* map = malloc(pixels * 3 * sizeof(float));
  if (!map)
    return NULL;
  for (size_t i = 0; i < pixels; ++i) {
    /* the relMSE of this one pixel, by the metric's own code */
    const double e = lull_metric_rel_mse(image + i * 3, reference + i * 3, 1, 1, 3);
    const double t = e > 0 ? (log10(e) + 4.0) / 4.0 : 0.0; /* 1e-4 .. 1 */
    ramp((float)t, map + i * 3);
  }
  return map;
}

int cli_print_metrics(FILE* out, const char* label, const float* image, const float* reference,
                      int width, int height)
{
  const lull_metrics m = lull_metrics_compute(image, reference, (size_t)width, (size_t)height, 3);
  if (isnan(m.ssim))
    return 1; /* out of memory */
  fprintf(out, "%-10s relMSE %.6f  PSNR %6.2f dB  SSIM %.4f\n", label, m.rel_mse, m.psnr, m.ssim);
  return 0;
}

void cli_decode_display(float* rgb, size_t count)
{
  for (size_t i = 0; i < count; ++i)
    rgb[i] = lull_io_display_to_linear(rgb[i]);
}
