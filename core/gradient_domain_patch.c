/* Patch weights and the patch term's stencil on the CPU (see
 * gradient_domain_patch.h; formulas in gradient_domain_math.h).
 *
 * Weights: one patch offset o at a time, the per-pixel distance between p
 * and p + o for every pixel, then its mean over the NL-means patch (a box
 * filter, eq. 5.10), so each of the 24 offsets costs a few passes over the
 * image instead of 25 x 25 taps per pixel.
 *
 * Stencil: per pixel, the truncated SVD of its patch's feature matrix and
 * the 25 x 25 Gram matrix G of its constraint, scattered into the 9x9
 * stencil of the pixels it couples (§5.3.4: A^T W^2 A precomputed, about
 * seven times fewer coefficients than A).  A patch writes rows y-2..y+2,
 * so rows are processed in five interleaved phases whose patches never
 * touch the same row; no atomics are needed. */
#include "gradient_domain_patch.h"

#include <math.h>
#include <string.h>

#include "poisson_math.h"

void lull_gd_offset_weights(int width, int height, const lull_gd_guide* guide,
                            const lull_gd_features* features, const lull_gd_candidate* candidate,
                            float delta, int nlm_radius, int dx, int dy, float* out,
                            float* scratch, int threads)
{
  const size_t w = (size_t)width, n = w * (size_t)height;
  float* dist = scratch;
  float* color = scratch + n;
  float* feature = scratch + 2 * n;
  float* tmp = scratch + 3 * n;
  /* pixels whose neighbour p + o is inside the image */
  const int x0 = LULL_MAX(0, -dx), x1 = LULL_MIN(width, width - dx);
  const int y0 = LULL_MAX(0, -dy), y1 = LULL_MIN(height, height - dy);
  const ptrdiff_t o = (ptrdiff_t)dy * (ptrdiff_t)width + dx;
  const float inv_channels = 1.0f / (float)guide->channels;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const size_t i = (size_t)y * w + (size_t)x;
      float s = 0.0f;
      for (int c = 0; c < guide->channels; ++c)
        s += lull_nlm_distance(guide->value[c][i], guide->value[c][i + o],
                                    guide->variance[c][i], guide->variance[c][i + o],
                                    candidate->kc);
      dist[i] = s * inv_channels;
    }
  lull_box_mean(width, height, dist, color, tmp, nlm_radius, x0, x1, y0, y1, threads);
  /* the largest patch-averaged feature distance (eq. 5.13 takes the
   * smallest weight) */
  for (size_t i = 0; i < n; ++i)
    out[i] = -INFINITY;
  for (int j = 0; j < features->count; ++j) {
    const float* f = features->value[j];
    const float* v = features->variance[j];
    const float* sc = features->scale[j];
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        const size_t i = (size_t)y * w + (size_t)x;
        dist[i] = lull_gd_feature_distance(f[i], f[i + o], v[i], v[i + o], sc[i], sc[i + o],
                                           candidate->kf);
      }
    lull_box_mean(width, height, dist, feature, tmp, nlm_radius, x0, x1, y0, y1, threads);
    for (size_t i = 0; i < n; ++i)
      out[i] = LULL_MAX(out[i], feature[i]);
  }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const size_t i = (size_t)y * w + (size_t)x;
      const int inside = x >= x0 && x < x1 && y >= y0 && y < y1;
      out[i] = inside ? lull_gd_weight(color[i], out[i], candidate->beta, delta) : 0.0f;
    }
}

void lull_gd_patch_weights(int width, int height, const lull_gd_guide* guide,
                           const lull_gd_features* features, const lull_gd_candidate* candidate,
                           float delta, int nlm_radius, float* const weights[LULL_GD_PATCH],
                           float* scratch, int threads)
{
  const size_t n = (size_t)width * (size_t)height;
  for (int k = 0; k < LULL_GD_PATCH; ++k) {
    int dx, dy;
    lull_gd_patch_offset(k, &dx, &dy);
    if (dx == 0 && dy == 0) {
      /* d(p, p) < 0 (eq. 5.9), so w(p, p) = 1 */
      const float centre = lull_gd_weight(0.0f, 0.0f, candidate->beta, delta);
      for (size_t i = 0; i < n; ++i)
        weights[k][i] = centre;
      continue;
    }
    lull_gd_offset_weights(width, height, guide, features, candidate, delta, nlm_radius, dx, dy,
                           weights[k], scratch, threads);
  }
}

void lull_gd_patch_stencil(int width, int height, const lull_gd_features* features,
                           const float* const weights[LULL_GD_PATCH], lull_stencil* stencil,
                           int threads)
{
  const int phases = 2 * LULL_GD_RADIUS + 1;
  for (int phase = 0; phase < phases; ++phase) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int y = phase; y < height; y += phases)
      for (int x = 0; x < width; ++x)
        lull_gd_patch_constraint(width, x, y, weights, features, stencil->coef,
                                 stencil->stride);
  }
}
