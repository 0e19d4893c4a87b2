/* The synthetic inputs of poisson_cases.h. */
#include "poisson_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test_util.h"
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

/* PFM file PART of a scene, of size w x h (both 0: any, then set). */
static float* scene_part(const char* scene, const char* part, int* w, int* h)
{
  char path[512];
  int w2 = 0, h2 = 0, channels = 0;
  snprintf(path, sizeof path, "%s/gradient/%s-%s.pfm", LULL_GPU_TESTDATA_DIR, scene, part);
  float* data = gpu_read_pfm(path, &w2, &h2, &channels);
  if (data && (channels != 3 || (*w && (w2 != *w || h2 != *h)))) {
    free(data);
    data = NULL;
  }
  if (data && !*w) {
    *w = w2;
    *h = h2;
  }
  return data;
}

int poisson_scene_load(poisson_data* d, const char* scene, float** reference, float** direct)
{
  memset(d, 0, sizeof *d);
  int w = 0, h = 0;
  float** halves[6] = {&d->color_a, &d->color_b, &d->gx_a, &d->gx_b, &d->gy_a, &d->gy_b};
  static const char* const parts[6] = {"A-primal", "B-primal", "A-dx", "B-dx", "A-dy", "B-dy"};
  int ok = 1;
  for (int k = 0; k < 6; ++k)
    ok = (*halves[k] = scene_part(scene, parts[k], &w, &h)) != NULL && ok;
  if (reference)
    ok = (*reference = scene_part(scene, "reference", &w, &h)) != NULL && ok;
  if (direct)
    ok = (*direct = scene_part(scene, "reference-direct", &w, &h)) != NULL && ok;
  d->width = w;
  d->height = h;
  d->channels = 3;
  const size_t count = (size_t)w * (size_t)h * 3;
  float** full[3] = {&d->color, &d->gx, &d->gy};
  for (int k = 0; ok && k < 3; ++k) {
    *full[k] = malloc(count * sizeof(float));
    ok = *full[k] != NULL;
    for (size_t i = 0; ok && i < count; ++i)
      (*full[k])[i] = 0.5f * ((*halves[2 * k])[i] + (*halves[2 * k + 1])[i]);
  }
  if (!ok) {
    poisson_data_free(d);
    if (reference) {
      free(*reference);
      *reference = NULL;
    }
    if (direct) {
      free(*direct);
      *direct = NULL;
    }
  }
  return ok;
}
