/* Synthetic gradient-domain data for the solver tests: a known image (smooth
 * shading, a step edge, a bright disc; different per channel), its exact
 * forward differences, and noisy or corrupted copies, in the planar layout
 * of core/poisson_solver.h. */
#pragma once

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poisson_solver.h"
#include "test_util.h"

typedef struct synthetic
{
  int w, h;
  float* truth[3];
  float* b[3];
  float* gx[3];
  float* gy[3];
  float* wa;
  float* wx;
  float* wy;
  float* zero;
  float* x[3];
  lull_poisson_dct dct; /* the DCT solver for this size */
} synthetic;

static inline float* synthetic_plane(const synthetic* s)
{
  return calloc((size_t)s->w * (size_t)s->h, sizeof(float));
}

static inline float synthetic_truth(int x, int y, int c, int w, int h)
{
  const float shade = 0.5f + 0.3f * sinf(0.21f * (float)x + (float)c) * cosf(0.13f * (float)y);
  const float edge = x > w / 2 ? 0.4f : 0.0f;
  const float dx = (float)x - 0.3f * (float)w, dy = (float)y - 0.6f * (float)h;
  const float disc = dx * dx + dy * dy < 0.04f * (float)(w * w + h * h) ? 2.0f : 0.0f;
  return (shade + edge + disc) * (1.0f + 0.2f * (float)c);
}

/* Exact data: primal = truth, gradients = its forward differences (0 at
 * the far border), then primal noise sigma_p and gradient noise sigma_g
 * (uniform, same standard deviation). */
static inline void synthetic_init(synthetic* s, int w, int h, float sigma_p, float sigma_g,
                                  unsigned seed)
{
  memset(s, 0, sizeof *s);
  s->w = w;
  s->h = h;
  unsigned rng = seed;
  const float k = 3.4641016f; /* sqrt(12): unit variance of a centred uniform */
  for (int c = 0; c < 3; ++c) {
    s->truth[c] = synthetic_plane(s);
    s->b[c] = synthetic_plane(s);
    s->gx[c] = synthetic_plane(s);
    s->gy[c] = synthetic_plane(s);
    s->x[c] = synthetic_plane(s);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        s->truth[c][y * w + x] = synthetic_truth(x, y, c, w, h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const int i = y * w + x;
        const float* t = s->truth[c];
        s->b[c][i] = t[i] + sigma_p * k * (lull_test_random(&rng) - 0.5f);
        s->gx[c][i] = (x + 1 < w ? t[i + 1] - t[i] : 0.0f) + sigma_g * k * (lull_test_random(&rng) - 0.5f);
        s->gy[c][i] = (y + 1 < h ? t[i + w] - t[i] : 0.0f) + sigma_g * k * (lull_test_random(&rng) - 0.5f);
      }
  }
  s->wa = synthetic_plane(s);
  s->wx = synthetic_plane(s);
  s->wy = synthetic_plane(s);
  s->zero = synthetic_plane(s);
  lull_error err = {LULL_OK, ""};
  CHECK_EQ_INT(lull_poisson_dct_init(&s->dct, w, h, 2, &err), LULL_OK);
}

static inline void synthetic_free(synthetic* s)
{
  for (int c = 0; c < 3; ++c) {
    free(s->truth[c]);
    free(s->b[c]);
    free(s->gx[c]);
    free(s->gy[c]);
    free(s->x[c]);
  }
  free(s->wa);
  free(s->wx);
  free(s->wy);
  free(s->zero);
  lull_poisson_dct_free(&s->dct);
}

/* A copy of the current solution (planes to free with synthetic_drop). */
static inline void synthetic_keep(const synthetic* s, float* copy[3])
{
  for (int c = 0; c < 3; ++c) {
    copy[c] = synthetic_plane(s);
    memcpy(copy[c], s->x[c], (size_t)s->w * (size_t)s->h * sizeof(float));
  }
}

static inline void synthetic_drop(float* copy[3])
{
  for (int c = 0; c < 3; ++c)
    free(copy[c]);
}

static inline lull_poisson_system synthetic_system(synthetic* s, float alpha)
{
  lull_poisson_system sys;
  memset(&sys, 0, sizeof sys);
  sys.width = s->w;
  sys.height = s->h;
  sys.channels = 3;
  sys.threads = 2;
  sys.alpha2 = alpha * alpha;
  sys.wa = s->wa;
  sys.wx = s->wx;
  sys.wy = s->wy;
  sys.zero = s->zero;
  for (int c = 0; c < 3; ++c) {
    sys.primal[c] = s->b[c];
    sys.gx[c] = s->gx[c];
    sys.gy[c] = s->gy[c];
  }
  return sys;
}

/* x = primal (the CG start). */
static inline void synthetic_start(synthetic* s)
{
  for (int c = 0; c < 3; ++c)
    memcpy(s->x[c], s->b[c], (size_t)s->w * (size_t)s->h * sizeof(float));
}

/* Largest |a - b| over the three channels. */
static inline double synthetic_max_diff(const synthetic* s, float* const a[3], float* const b[3])
{
  double m = 0.0;
  for (int c = 0; c < 3; ++c)
    m = fmax(m, lull_test_max_abs_diff(a[c], b[c], (size_t)s->w * (size_t)s->h));
  return m;
}

/* Root-mean-square difference from the truth. */
static inline double synthetic_rmse(const synthetic* s, float* const x[3])
{
  double sum = 0.0;
  const size_t n = (size_t)s->w * (size_t)s->h;
  for (int c = 0; c < 3; ++c)
    for (size_t i = 0; i < n; ++i) {
      const double d = (double)x[c][i] - s->truth[c][i];
      sum += d * d;
    }
  return sqrt(sum / (3.0 * (double)n));
}
