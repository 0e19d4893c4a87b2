/* GradientDomain's post-filter on the CPU (gradient_domain_post.h).  As
 * the patch weights (gradient_domain_patch.c), one window offset at a time
 * over whole planes: its weights (lull_gd_offset_weights), then the
 * regression's sums.  The CUDA kernel computes each pixel's sums over all
 * offsets in the same order (gradient_domain_kernels.cuh). */
#include "gradient_domain_post.h"

#include "gradient_domain_patch.h"
#include "gradient_domain_planes.h"

void lull_gd_post_pass(int width, int height, int nc, const lull_gd_guide* guide,
                       const lull_gd_features* features, const lull_gd_candidate* cand,
                       int radius, int nlm_radius, float ridge, const float* const x[3],
                       const float* const var[3], float* const out[3], float* const out_var[3],
                       const lull_gd_post_sums* sums, float* weight, float* scratch, int threads)
{
  const size_t w = (size_t)width, n = w * (size_t)height;
  /* the centre: weight 1 at offset (0, 0) */
#pragma omp parallel for schedule(static) num_threads(threads)
  for (ptrdiff_t ii = 0; ii < (ptrdiff_t)n; ++ii) {
    const size_t i = (size_t)ii;
    sums->m[0][i] = 1.0f;
    for (int k = 1; k < 6; ++k)
      sums->m[k][i] = 0.0f;
    sums->w2[i] = 1.0f;
    for (int c = 0; c < nc; ++c) {
      sums->b[c][0][i] = x[c][i];
      sums->b[c][1][i] = sums->b[c][2][i] = 0.0f;
    }
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
            const float wt = weight[p];
            sums->m[0][i] += wt;
            sums->m[1][i] += wt * ssx;
            sums->m[2][i] += wt * ssy;
            sums->m[3][i] += wt * ssx * ssx;
            sums->m[4][i] += wt * ssx * ssy;
            sums->m[5][i] += wt * ssy * ssy;
            sums->w2[i] += wt * wt;
            for (int c = 0; c < nc; ++c) {
              const float v = wt * x[c][q];
              sums->b[c][0][i] += v;
              sums->b[c][1][i] += v * ssx;
              sums->b[c][2][i] += v * ssy;
            }
          }
      }
    }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (ptrdiff_t ii = 0; ii < (ptrdiff_t)n; ++ii) {
    const size_t i = (size_t)ii;
    const float m[6] = {sums->m[0][i], sums->m[1][i], sums->m[2][i],
                        sums->m[3][i], sums->m[4][i], sums->m[5][i]};
    for (int c = 0; c < nc; ++c) {
      out[c][i] = lull_gd_llr_estimate(m, sums->b[c][0][i], sums->b[c][1][i], sums->b[c][2][i],
                                       ridge);
      if (out_var)
        out_var[c][i] = var[c][i] * sums->w2[i] / (m[0] * m[0]);
    }
  }
}
