#include "poisson_input.h"
#include "planes.h"
#include "poisson_math.h"

#include <math.h>
#include <stdlib.h>

static int has(const lull_image* image)
{
  return image && image->data != NULL;
}

static const lull_image* primal_of(const lull_poisson_input* in)
{
  return has(in->color) ? in->color : in->color_a;
}

int lull_poisson_input_channels(const lull_poisson_input* in)
{
  return LULL_MIN(lull_format_channels(primal_of(in)->format), 3);
}

lull_status lull_poisson_input_validate(const lull_poisson_input* in, const lull_image* output,
                                        lull_error* err)
{
  if (!has(output))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "output image not specified");
  const lull_image* halves[6] = {in->color_a,      in->color_b,      in->gradient_x_a,
                                 in->gradient_x_b, in->gradient_y_a, in->gradient_y_b};
  int count = 0;
  for (int i = 0; i < 6; ++i)
    count += has(halves[i]);
  if (count != 0 && count != 6)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "half-buffers must be given together: colorA, colorB, gradientXA, "
                     "gradientXB, gradientYA, gradientYB");
  const int halves_given = count == 6;
  if (!has(in->color) && !halves_given)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "input image not specified");
  if (has(in->gradient_x) != has(in->gradient_y))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "gradientX and gradientY must be given together");
  if (!has(in->gradient_x) && !halves_given)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "gradient images not specified (gradientX, gradientY)");
  const lull_image* all[9] = {in->color, in->gradient_x, in->gradient_y, halves[0], halves[1],
                              halves[2], halves[3], halves[4], halves[5]};
  for (int i = 0; i < 9; ++i)
    if (has(all[i]) && (all[i]->width != output->width || all[i]->height != output->height))
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "image size mismatch");
  const int channels = lull_format_channels(primal_of(in)->format);
  if (lull_format_channels(output->format) != channels)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "input/output image channel count mismatch");
  if (halves_given && (lull_format_channels(in->color_a->format) != channels ||
                       lull_format_channels(in->color_b->format) != channels))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION,
                     "colorA/colorB must have as many channels as color");
  const int solved = LULL_MIN(channels, 3);
  static const char* const names[9] = {"color",      "gradientX",  "gradientY",
                                       "colorA",     "colorB",     "gradientXA",
                                       "gradientXB", "gradientYA", "gradientYB"};
  for (int i = 0; i < 9; ++i)
    if (has(all[i]) && lull_format_channels(all[i]->format) < solved)
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "%s must have at least %d channels",
                       names[i], solved);
  return LULL_OK;
}

/* Reads pixel (x, y) of a set; FULL without full images averages A and B. */
static void load_pixel(const lull_image* full, const lull_image* a, const lull_image* b, int x,
                       int y, float out[4])
{
  if (has(full)) {
    lull_image_load(full, x, y, out);
    return;
  }
  float va[4], vb[4];
  lull_image_load(a, x, y, va);
  lull_image_load(b, x, y, vb);
  for (int c = 0; c < 4; ++c)
    out[c] = lull_poisson_half_mean(va[c], vb[c]);
}

void lull_poisson_input_load(const lull_poisson_input* in, int which, int channels,
                             float* const b[4], float* const gx[3], float* const gy[3],
                             int threads)
{
  const lull_image* image = which == LULL_POISSON_INPUT_A   ? in->color_a
                            : which == LULL_POISSON_INPUT_B ? in->color_b
                                                            : in->color;
  const lull_image* image_x = which == LULL_POISSON_INPUT_A   ? in->gradient_x_a
                              : which == LULL_POISSON_INPUT_B ? in->gradient_x_b
                                                              : in->gradient_x;
  const lull_image* image_y = which == LULL_POISSON_INPUT_A   ? in->gradient_y_a
                              : which == LULL_POISSON_INPUT_B ? in->gradient_y_b
                                                              : in->gradient_y;
  const lull_image* primal = primal_of(in);
  const int w = primal->width, h = primal->height;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      float v[4], vx[4], vy[4];
      load_pixel(image, in->color_a, in->color_b, x, y, v);
      load_pixel(image_x, in->gradient_x_a, in->gradient_x_b, x, y, vx);
      load_pixel(image_y, in->gradient_y_a, in->gradient_y_b, x, y, vy);
      for (int c = 0; c < channels; ++c) {
        /* Inf counts as missing too: NaN marks the pixel for repair */
        b[c][i] = isfinite(v[c]) ? v[c] : NAN;
        gx[c][i] = isfinite(vx[c]) ? vx[c] : 0.0f;
        gy[c][i] = isfinite(vy[c]) ? vy[c] : 0.0f;
      }
      if (b[3])
        b[3][i] = v[3];
    }
#pragma omp parallel for schedule(static, 1) num_threads(threads)
  for (int c = 0; c < channels; ++c)
    lull_plane_repair(b[c], w, h);
}

void lull_poisson_finite_or(const lull_poisson_system* sys, float* const x[3],
                            const float* const fallback[3])
{
  const size_t n = (size_t)sys->width * (size_t)sys->height;
  for (int c = 0; c < sys->channels; ++c) {
    float* xc = x[c];
    const float* f = fallback[c];
#pragma omp parallel for schedule(static) num_threads(sys->threads)
    for (ptrdiff_t i = 0; i < (ptrdiff_t)n; ++i)
      if (!isfinite(xc[i]))
        xc[i] = f[i];
  }
}

void lull_poisson_store(const lull_image* output, int channels, const float* const x[3],
                        const float* alpha, int threads)
{
  const int w = output->width, h = output->height;
  const int out_channels = lull_format_channels(output->format);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < h; ++y)
    for (int px = 0; px < w; ++px) {
      const size_t i = (size_t)y * (size_t)w + (size_t)px;
      float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int c = 0; c < channels; ++c)
        v[c] = x[c][i];
      if (out_channels == 4 && alpha)
        v[3] = alpha[i];
      lull_image_store(output, px, y, v);
    }
}

void lull_poisson_store_variance(const lull_image* output, int channels, const float* const a[3],
                                 const float* const b[3], int threads)
{
  const int w = output->width, h = output->height;
  const int mean = lull_format_channels(output->format) == 1;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < h; ++y)
    for (int px = 0; px < w; ++px) {
      const size_t i = (size_t)y * (size_t)w + (size_t)px;
      float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      float sum = 0.0f;
      for (int c = 0; c < channels; ++c) {
        v[c] = lull_poisson_two_buffer_variance(a[c][i], b[c][i]);
        sum += v[c] / (float)channels;
      }
      if (mean)
        v[0] = sum;
      lull_image_store(output, px, y, v);
    }
}

lull_poisson_input lull_poisson_input_of(const lull_poisson_images* images)
{
  const lull_poisson_input in = {&images->color,        &images->gradient_x,
                                 &images->gradient_y,   &images->color_a,
                                 &images->color_b,      &images->gradient_x_a,
                                 &images->gradient_x_b, &images->gradient_y_a,
                                 &images->gradient_y_b};
  return in;
}
