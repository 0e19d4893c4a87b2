/* The synthetic inputs of poisson_cases.h. */
#include "poisson_cases.h"

#include <stdlib.h>
#include <string.h>

#include "synthetic.h"
#include "test_util.h"

void poisson_data_make(poisson_data* d, int w, int h, int channels, int poison, unsigned seed)
{
  memset(d, 0, sizeof *d);
  d->width = w;
  d->height = h;
  d->channels = channels;
  const size_t count = (size_t)w * (size_t)h * (size_t)channels;
  float** all[9] = {&d->color, &d->gx, &d->gy, &d->color_a, &d->color_b,
                    &d->gx_a,  &d->gx_b, &d->gy_a, &d->gy_b};
  for (int k = 0; k < 9; ++k)
    *all[k] = calloc(count, sizeof(float));
  unsigned rng = seed;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c) {
        const size_t i = ((size_t)y * (size_t)w + (size_t)x) * (size_t)channels + (size_t)c;
        const float t = synthetic_truth(x, y, c, w, h);
        const float tx = x + 1 < w ? synthetic_truth(x + 1, y, c, w, h) - t : 0.0f;
        const float ty = y + 1 < h ? synthetic_truth(x, y + 1, c, w, h) - t : 0.0f;
        float* const colour[2] = {d->color_a, d->color_b};
        float* const grad_x[2] = {d->gx_a, d->gx_b};
        float* const grad_y[2] = {d->gy_a, d->gy_b};
        for (int half = 0; half < 2; ++half) {
          if (c == 3) {
            colour[half][i] = (float)x / (float)w;
            continue;
          }
          /* uniform noise of standard deviation 0.1 and 0.01 */
          colour[half][i] = t + 0.35f * (lull_test_random(&rng) - 0.5f);
          grad_x[half][i] = tx + 0.035f * (lull_test_random(&rng) - 0.5f);
          grad_y[half][i] = ty + 0.035f * (lull_test_random(&rng) - 0.5f);
          if (lull_test_random(&rng) < 0.01f)
            grad_x[half][i] += 2.0f * (lull_test_random(&rng) - 0.5f);
          if (lull_test_random(&rng) < 0.01f)
            grad_y[half][i] += 2.0f * (lull_test_random(&rng) - 0.5f);
        }
        d->color[i] = 0.5f * (d->color_a[i] + d->color_b[i]);
        d->gx[i] = 0.5f * (d->gx_a[i] + d->gx_b[i]);
        d->gy[i] = 0.5f * (d->gy_a[i] + d->gy_b[i]);
      }
  if (poison && w * h >= 4) {
    const size_t n = (size_t)w * (size_t)h, ch = (size_t)channels;
    d->color[(n / 3) * ch] = NAN;
    d->color[(n / 2) * ch + (channels > 1)] = INFINITY;
    d->color_a[(n / 5) * ch] = -INFINITY;
    d->color_b[(n / 7) * ch] = NAN;
    d->gx[(n / 4) * ch] = NAN;
    d->gy[(n / 6) * ch] = INFINITY;
    d->gx_b[(n - 1) * ch] = NAN;
    /* a whole 5x5 neighbourhood missing: the repair falls back to 0 */
    if (w >= 8 && h >= 8)
      for (int y = 0; y < 5; ++y)
        for (int x = 0; x < 5; ++x)
          d->color[((size_t)y * (size_t)w + (size_t)x) * ch] = NAN;
  }
}

void poisson_data_free(poisson_data* d)
{
  float* all[9] = {d->color, d->gx, d->gy, d->color_a, d->color_b, d->gx_a, d->gx_b, d->gy_a, d->gy_b};
  for (int k = 0; k < 9; ++k)
    free(all[k]);
  memset(d, 0, sizeof *d);
}
