/* GradientDomain's post-filter on the CPU (gradient_domain_post.h).  As
 * the patch weights (gradient_domain_patch.c), one window offset at a time
 * over whole planes: its weights (lull_gd_offset_weights), then the
 * regression's sums.  The CUDA kernel computes each pixel's sums over all
 * offsets in the same order (gradient_domain_kernels.cuh). */
#include "gradient_domain_post.h"

#include "gradient_domain_patch.h"
#include "gradient_domain_planes.h"

/* The values of the nc planes x at pixel i (unused channels 0). */
static void values_at(const float* const x[3], int nc, size_t i, float v[3])
{
  for (int c = 0; c < 3; ++c)
    v[c] = c < nc ? x[c][i] : 0.0f;
}

void lull_gd_post_pass(int width, int height, int nc, const lull_gd_guide* guide,
                       const lull_gd_features* features, const lull_gd_candidate* cand,
                       int radius, int nlm_radius, float ridge, const float* const x[3],
                       const float* const var[3], float* const out[3], float* const out_var[3],
                       lull_gd_llr* sums, float* weight, float* scratch, int threads)
{
  const size_t w = (size_t)width, n = w * (size_t)height;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (ptrdiff_t ii = 0; ii < (ptrdiff_t)n; ++ii) {
    const size_t i = (size_t)ii;
    float v[3];
    values_at(x, nc, i, v);
    lull_gd_llr_centre(&sums[i], nc, v);
  }
  /* The weight is symmetric (lull_gd_pair_weight_at: the distances of
   * (p, p + o) and (p + o, p) are the same terms, the NL-means windows the
   * same pixels in the same order), so one plane serves o and -o: each
   * offset of the half-window dy > 0 or dy = 0 < dx adds p + o to p, then
   * p to p + o (the CUDA kernel sums in the same order). */
  for (int dy = 0; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx) {
      if (dy == 0 && dx <= 0)
        continue;
      lull_gd_offset_weights(width, height, guide, features, cand, LULL_GD_WEIGHT_THRESHOLD,
                             nlm_radius, dx, dy, weight, scratch, threads);
      /* pixels p whose neighbour p + o is inside: [x0, x1) x [y0, y1) */
      const int x0 = LULL_MAX(0, -dx), x1 = LULL_MIN(width, width - dx);
      const int y0 = LULL_MAX(0, -dy), y1 = LULL_MIN(height, height - dy);
      const ptrdiff_t o = (ptrdiff_t)dy * (ptrdiff_t)width + dx;
      const float sx = lull_gd_post_offset(dx, radius), sy = lull_gd_post_offset(dy, radius);
      for (int sign = 1; sign >= -1; sign -= 2) {
        /* sign 1: p += (p + o); sign -1: q += (q - o) with the weight of
         * p = q - o (one loop each: their rows overlap) */
        const ptrdiff_t so = sign * o;
        const float ssx = (float)sign * sx, ssy = (float)sign * sy;
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int y = y0; y < y1; ++y)
          for (int px = x0; px < x1; ++px) {
            const size_t p = (size_t)y * w + (size_t)px;
            const size_t i = sign > 0 ? p : (size_t)((ptrdiff_t)p + o);
            const size_t q = (size_t)((ptrdiff_t)i + so);
            float v[3];
            values_at(x, nc, q, v);
            lull_gd_llr_add(&sums[i], nc, weight[p], ssx, ssy, v);
          }
      }
    }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (ptrdiff_t ii = 0; ii < (ptrdiff_t)n; ++ii) {
    const size_t i = (size_t)ii;
    const lull_gd_llr* s = &sums[i];
    for (int c = 0; c < nc; ++c) {
      out[c][i] = lull_gd_llr_estimate(s->m, s->b[c][0], s->b[c][1], s->b[c][2], ridge);
      if (out_var)
        out_var[c][i] = lull_gd_llr_variance(s, var[c][i]);
    }
  }
}
