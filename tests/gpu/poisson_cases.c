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

poisson_agreement poisson_agreement_of(const float* test, const float* ref, size_t n)
{
  poisson_agreement a;
  a.max_rel = poisson_rel_max_diff(test, ref, n);
  double largest = 0.0, sum_diff = 0.0, sum_ref = 0.0;
  for (size_t i = 0; i < n; ++i) {
    largest = fmax(largest, fabs(ref[i]));
    sum_diff += fabs((double)test[i] - ref[i]);
    sum_ref += fabs(ref[i]);
  }
  size_t beyond = 0;
  for (size_t i = 0; i < n; ++i)
    beyond += !(fabs((double)test[i] - ref[i]) <= 1e-3 * largest);
  a.mean_rel = sum_ref > 0.0 ? sum_diff / sum_ref : sum_diff;
  a.outliers = n ? (double)beyond / (double)n : 0.0;
  return a;
}

int poisson_on_progress(void* user, double done)
{
  poisson_progress_log* log = (poisson_progress_log*)user;
  if (done < log->last)
    log->monotone = 0;
  log->last = done;
  return ++log->calls != log->cancel_at;
}

void poisson_features_make(poisson_features* f, int w, int h)
{
  const size_t n = (size_t)w * (size_t)h;
  f->albedo = malloc(n * 3 * sizeof(float));
  f->normal = malloc(n * 3 * sizeof(float));
  f->depth = malloc(n * sizeof(float));
  f->position = malloc(n * 3 * sizeof(float));
  f->variance = malloc(n * 3 * sizeof(float));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      const int checker = ((x / 4) + (y / 4)) & 1;
      const int right = x > w / 2;
      for (int c = 0; c < 3; ++c) {
        f->albedo[3 * i + c] = checker ? 0.8f - 0.1f * (float)c : 0.2f + 0.05f * (float)c;
        f->variance[3 * i + c] = 1e-4f * (float)(c + 1) * (float)(1 + (x + y) % 3);
      }
      f->normal[3 * i + 0] = right ? 0.6f : -0.3f;
      f->normal[3 * i + 1] = right ? 0.0f : 0.2f;
      f->normal[3 * i + 2] = right ? 0.8f : 0.93f;
      f->depth[i] = 2.0f + 0.05f * (float)y + (right ? 1.5f : 0.0f);
      f->position[3 * i + 0] = 0.1f * (float)x;
      f->position[3 * i + 1] = 0.1f * (float)y;
      f->position[3 * i + 2] = f->depth[i];
    }
}

void poisson_features_free(poisson_features* f)
{
  free(f->albedo);
  free(f->normal);
  free(f->depth);
  free(f->position);
  free(f->variance);
  memset(f, 0, sizeof *f);
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

int poisson_scene_features(poisson_features* f, const char* scene, int w, int h)
{
  memset(f, 0, sizeof *f);
  int fw = w, fh = h;
  f->albedo = scene_part(scene, "albedo", &fw, &fh);
  f->normal = scene_part(scene, "normal", &fw, &fh);
  f->depth = scene_part(scene, "depth", &fw, &fh);
  f->variance = scene_part(scene, "feature-variance", &fw, &fh);
  if (f->albedo && f->normal && f->depth && f->variance)
    return 1;
  poisson_features_free(f);
  return 0;
}
