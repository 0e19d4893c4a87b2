/* Per-pixel formulas of the feature-patch reconstruction (Vicini 2015 §5.3;
 * Manzi, Vicini and Zwicker 2016), shared by the CPU backend
 * (gradient_domain_patch.c, gradient_domain_cpu.c) and the CUDA kernels.
 *
 * The patch constraint of pixel p (eq. 5.6) is || D_p (B_p B_p^T - I) x_p ||^2
 * over the 5x5 neighbourhood x_p; B_p is an orthonormal basis of the
 * pixel's local subspace (truncated SVD, §5.3.1) of the columns: constant,
 * screen-space terms (lull_gd_screen_terms) and feature channels, each
 * zero at the pixels whose weight is 0; D_p holds the weights w~(p, q)
 * (eq. 5.9-5.15, §5.3.2). */
#pragma once

#include <math.h>
#include <stddef.h>

#include "nlmeans_math.h"
#include "platform.h"
#include "poisson_math.h"

enum
{
  LULL_GD_RADIUS = 2,             /* patch radius r (§5.3.1: 2) */
  LULL_GD_PATCH = 25,             /* (2r + 1)^2 pixels */
  LULL_GD_SCREEN_TERMS = 5,       /* x, y, x^2, xy, y^2 of the pixel's offset in the patch */
  LULL_GD_MAX_FEATURES = 15,      /* constant + screen terms + albedo 3, normal 3, depth/position 3 */
  /* feature channels (without the constant and the screen-space terms) */
  LULL_GD_MAX_CHANNELS = LULL_GD_MAX_FEATURES - 1 - LULL_GD_SCREEN_TERMS,
};

/* Feature channels normalised to [0, 1] (§5.3.2), with their variance and
 * the scale V_j of eq. 5.12. */
typedef struct lull_gd_features
{
  int count;
  const float* value[LULL_GD_MAX_CHANNELS];
  const float* variance[LULL_GD_MAX_CHANNELS];
  const float* scale[LULL_GD_MAX_CHANNELS];
} lull_gd_features;

/* The colour guide: the L1 reconstruction and its variance per channel. */
typedef struct lull_gd_guide
{
  int channels;
  const float* value[3];
  const float* variance[3];
} lull_gd_guide;

typedef struct lull_gd_candidate
{
  float kc, kf, beta; /* sensitivities and the constraints' scale (§5.3.2, §5.4) */
} lull_gd_candidate;

/* Screen-space columns of the local subspace: the pixel offset (dx, dy)
 * within the patch, scaled to [-1, 1], to first and second order (the
 * squares centred on the patch).  Why: the features describe geometry and
 * texture but not shading, and the span of feature patches alone forces
 * each patch towards piecewise-constant shading; the thesis' features
 * include world position, which spans about the first-order screen terms
 * on a surface.  A local quadratic (as in local polynomial regression)
 * keeps smooth shading out of the constraint, so strong candidates stop
 * flattening it: on the test scenes at 128x96, 32 spp, the third candidate
 * went from relMSE 0.036 (features only) to 0.0056 (first order) to 0.0024
 * (second order) on cornell, and the selected result improved slightly. */
LULL_HD void lull_gd_screen_terms(int dx, int dy, float out[LULL_GD_SCREEN_TERMS])
{
  const float sx = 0.5f * (float)dx, sy = 0.5f * (float)dy;
  out[0] = sx;
  out[1] = sy;
  out[2] = sx * sx - 0.4f; /* mean of sx^2 over the 5 offsets */
  out[3] = sx * sy;
  out[4] = sy * sy - 0.4f;
}

/* Patch index of offset (dx, dy), |dx|, |dy| <= 2, and back. */
LULL_HD int lull_gd_patch_index(int dx, int dy)
{
  return (dy + LULL_GD_RADIUS) * (2 * LULL_GD_RADIUS + 1) + dx + LULL_GD_RADIUS;
}

LULL_HD void lull_gd_patch_offset(int index, int* dx, int* dy)
{
  *dx = index % (2 * LULL_GD_RADIUS + 1) - LULL_GD_RADIUS;
  *dy = index / (2 * LULL_GD_RADIUS + 1) - LULL_GD_RADIUS;
}

/* V_j[p] of eq. 5.12: the feature's variance, or its local contrast
 * |grad f_j|^2, but at least 1e-3 (features normalised to [0, 1]). */
LULL_HD float lull_gd_feature_scale(float variance, float gradient2)
{
  return LULL_MAX(1e-3f, LULL_MAX(variance, gradient2));
}

/* Feature distance of one feature channel j (eq. 5.12). */
LULL_HD float lull_gd_feature_distance(float fp, float fq, float var_p, float var_q, float scale_p,
                                       float scale_q, float kf)
{
  const float d = fp - fq;
  return (d * d - (var_p + var_q)) / (1e-10f + kf * kf * (scale_p + scale_q));
}

/* The weight w~(p, q) of eq. 5.15 from the patch-averaged colour distance
 * d_c^2 and the largest patch-averaged feature distance max_j d_fj^2:
 * w_c = exp(-max(d_c^2, 0)) (5.11), w_f = min_j exp(-max(d_fj^2, 0)) (5.13),
 * w = min(w_c, w_f) (5.14); beta w when w > delta, else 0. */
LULL_HD float lull_gd_weight(float color_distance, float feature_distance, float beta,
                             float delta)
{
  const float d = LULL_MAX(0.0f, LULL_MAX(color_distance, feature_distance));
  const float w = expf(-d);
  return w > delta ? beta * w : 0.0f;
}

/* Orthonormal basis of the local subspace of a patch (§5.3.1) from its
 * 25 x m feature matrix m_cols (column-major, m_cols[c * 25 + row]), whose
 * column 0 is the constant (1 at the patch's weighted pixels), in place.
 * Returns the number of basis vectors kept, which are normalised and moved
 * to the first columns: the constant first, then the singular vectors of
 * the other columns with the constant projected out, by one-sided Jacobi
 * rotations (Hestenes; the thesis used Nash 1990's variant, §5.3.4; the
 * columns converge to sigma_k u_k), in order of decreasing sigma: those
 * with sigma > 1e-3 of the largest column norm (the numerical rank), less
 * the smallest one when they have full rank (§5.3.1: the singular vector
 * with the smallest singular value carries the most noise; in a
 * rank-deficient patch the dropped directions are already zero).
 *
 * Why the constant is kept apart: truncating the SVD of the whole matrix
 * dropped a direction that in general had a part along the constant, so a
 * constant image no longer met its patch constraints and GradientDomain
 * bent flat regions (+-0.5% on a constant image without features, +-9%
 * with a random albedo; a review helper's finding).  With the constant in
 * every subspace, D (B B^T - I) 1 = 0: constants cost nothing, as the
 * thesis' smoothness prior intends. */
LULL_HD int lull_gd_feature_basis(float* m_cols, int m)
{
  const int n = LULL_GD_PATCH;
  float norm0 = 0.0f;
  for (int i = 0; i < n; ++i)
    norm0 += m_cols[i] * m_cols[i];
  norm0 = sqrtf(norm0);
  /* the constant, normalised, out of the other columns */
  if (norm0 > 0.0f)
    for (int i = 0; i < n; ++i)
      m_cols[i] /= norm0;
  for (int j = 1; j < m && norm0 > 0.0f; ++j) {
    float* a = m_cols + j * n;
    float dot = 0.0f;
    for (int i = 0; i < n; ++i)
      dot += a[i] * m_cols[i];
    for (int i = 0; i < n; ++i)
      a[i] -= dot * m_cols[i];
  }
  float* rest = m_cols + n; /* columns 1 .. m-1 */
  const int r = m - 1;
  for (int sweep = 0; sweep < 12; ++sweep) {
    int rotated = 0;
    for (int j = 0; j < r - 1; ++j)
      for (int k = j + 1; k < r; ++k) {
        float* a = rest + j * n;
        float* b = rest + k * n;
        float alpha = 0.0f, beta = 0.0f, gamma = 0.0f;
        for (int i = 0; i < n; ++i) {
          alpha += a[i] * a[i];
          beta += b[i] * b[i];
          gamma += a[i] * b[i];
        }
        if (fabsf(gamma) <= 1e-5f * sqrtf(alpha * beta) || gamma == 0.0f)
          continue;
        rotated = 1;
        const float zeta = (beta - alpha) / (2.0f * gamma);
        const float t = (zeta >= 0.0f ? 1.0f : -1.0f) / (fabsf(zeta) + sqrtf(1.0f + zeta * zeta));
        const float c = 1.0f / sqrtf(1.0f + t * t), s = c * t;
        for (int i = 0; i < n; ++i) {
          const float x = a[i], y = b[i];
          a[i] = c * x - s * y;
          b[i] = s * x + c * y;
        }
      }
    if (!rotated)
      break;
  }
  float sigma[LULL_GD_MAX_FEATURES];
  float largest = norm0;
  for (int j = 0; j < r; ++j) {
    float s = 0.0f;
    for (int i = 0; i < n; ++i)
      s += rest[j * n + i] * rest[j * n + i];
    sigma[j] = sqrtf(s);
    largest = LULL_MAX(largest, sigma[j]);
  }
  /* selection sort by sigma, descending */
  for (int j = 0; j < r; ++j) {
    int best = j;
    for (int k = j + 1; k < r; ++k)
      if (sigma[k] > sigma[best])
        best = k;
    if (best != j) {
      const float t = sigma[j];
      sigma[j] = sigma[best];
      sigma[best] = t;
      for (int i = 0; i < n; ++i) {
        const float x = rest[j * n + i];
        rest[j * n + i] = rest[best * n + i];
        rest[best * n + i] = x;
      }
    }
  }
  int rank = 0;
  while (rank < r && sigma[rank] > 1e-3f * largest)
    ++rank;
  const int keep = rank == r && r > 0 ? r - 1 : rank;
  for (int j = 0; j < keep; ++j) {
    const float inv = 1.0f / sigma[j];
    for (int i = 0; i < n; ++i)
      rest[j * n + i] *= inv;
  }
  if (!(norm0 > 0.0f)) { /* no constant: the others move up */
    for (int j = 0; j < keep * n; ++j)
      m_cols[j] = rest[j];
    return keep;
  }
  return 1 + keep;
}

/* The patch term's contribution G = Q^T Q, Q = D (B B^T - I) (eq. 5.6), for
 * the pixels of one patch: g[a * 25 + b] for a <= b (the upper triangle),
 * from the basis (first `keep` columns of basis, column-major) and the row
 * weights d (w~ of eq. 5.15).  Entries of a pixel with weight 0 are not
 * written: its row and column of G are zero (§5.3.2, reshaping). */
LULL_HD void lull_gd_patch_gram(const float* basis, int keep, const float* d, float* g)
{
  const int n = LULL_GD_PATCH;
  float proj[LULL_GD_PATCH * LULL_GD_PATCH]; /* P - I, symmetric */
  for (int a = 0; a < n; ++a)
    for (int b = a; b < n; ++b) {
      float s = a == b ? -1.0f : 0.0f;
      for (int k = 0; k < keep; ++k)
        s += basis[k * n + a] * basis[k * n + b];
      proj[a * n + b] = proj[b * n + a] = s;
    }
  float d2[LULL_GD_PATCH];
  for (int k = 0; k < n; ++k)
    d2[k] = d[k] * d[k];
  for (int a = 0; a < n; ++a) {
    if (d[a] == 0.0f)
      continue;
    for (int b = a; b < n; ++b) {
      if (d[b] == 0.0f)
        continue;
      float s = 0.0f;
      for (int k = 0; k < n; ++k)
        s += d2[k] * proj[k * n + a] * proj[k * n + b];
      g[a * n + b] = s;
    }
  }
}

/* Pixels of the (2 radius + 1)^2 window around (x, y) inside the image:
 * the count behind lull_box_mean's mean there. */
LULL_HD float lull_gd_window_count(int x, int y, int width, int height, int radius)
{
  const int x0 = x > radius ? x - radius : 0, y0 = y > radius ? y - radius : 0;
  const int x1 = x + radius < width ? x + radius : width - 1;
  const int y1 = y + radius < height ? y + radius : height - 1;
  return (float)(x1 - x0 + 1) * (float)(y1 - y0 + 1);
}

/* The score of a candidate against the first one at a pixel, from the
 * window means of D and D^2, D being the difference of their per-pixel
 * error estimates (lull_two_buffer_error): the mean of D plus z of its
 * standard errors.  The candidate replaces the first (score 0) only where
 * the score is negative, i.e. where the window's evidence that it is
 * better is significant.  Why: the plain minimum of the window means
 * (§5.4 picks the smallest estimate) let the noise of the estimate from
 * two half-buffers pick the strong candidates where they flatten shading,
 * and came out worse than the first candidate alone (relMSE 0.00031 vs
 * 0.00027 on the textured test scene, 8192-spp reference).  D is correlated in space, so
 * sqrt(Var/n) understates its spread; z (LULL_GD_CHOICE_Z) makes up for
 * it. */
LULL_HD float lull_gd_choice_score(float mean_d, float mean_d2, float count, float z)
{
  const float var = mean_d2 - mean_d * mean_d;
  return mean_d + z * sqrtf((var > 0.0f ? var : 0.0f) / count);
}

/* The distance of one pixel i to i + o that the windows average: the
 * colour's (source -1, the mean over the guide's channels, eq. 5.10) or
 * feature channel source's (eq. 5.12).  Symmetric bit for bit: swapping i
 * and i + o changes neither the squared difference nor the sums.
 * inv_channels: 1 / guide->channels, which callers compute once. */
LULL_HD float lull_gd_pixel_distance(const lull_gd_guide* guide, const lull_gd_features* f,
                                     const lull_gd_candidate* cand, float inv_channels,
                                     int source, size_t i, ptrdiff_t o)
{
  if (source >= 0)
    return lull_gd_feature_distance(f->value[source][i], f->value[source][i + o],
                                    f->variance[source][i], f->variance[source][i + o],
                                    f->scale[source][i], f->scale[source][i + o], cand->kf);
  float d = 0.0f;
  for (int c = 0; c < guide->channels; ++c)
    d += lull_nlm_distance(guide->value[c][i], guide->value[c][i + o], guide->variance[c][i],
                                guide->variance[c][i + o], cand->kc);
  return d * inv_channels;
}

/* The weight w~(p, p + o) of patch offset `offset` (lull_gd_patch_index)
 * at pixel (x, y), for one pixel at a time (the CUDA kernels; the CPU
 * computes the same one offset at a time over whole planes,
 * gradient_domain_patch.c).  The distances are averaged over the NL-means
 * patch of radius nlm_radius (eq. 5.10, 5.12) restricted to the pixels
 * whose neighbour p + o is inside the image, in lull_box_mean's order:
 * each row's mean, then the mean of the rows. */
LULL_HD float lull_gd_window_distance(const lull_gd_guide* guide, const lull_gd_features* f,
                                      const lull_gd_candidate* cand, int source, int width,
                                      ptrdiff_t o, int xa, int xb, int ya, int yb)
{
  const float inv_channels = 1.0f / (float)guide->channels;
  float mean = 0.0f;
  for (int k = ya; k <= yb; ++k) {
    float s = 0.0f;
    for (int kx = xa; kx <= xb; ++kx)
      s += lull_gd_pixel_distance(guide, f, cand, inv_channels, source,
                                  (size_t)k * (size_t)width + (size_t)kx, o);
    mean += s / (float)(xb - xa + 1);
  }
  return mean * (1.0f / (float)(yb - ya + 1));
}

/* Whether p = (x, y) and p + (dx, dy) are both inside the image. */
LULL_HD int lull_gd_pair_inside(int width, int height, int x, int y, int dx, int dy)
{
  return x >= LULL_MAX(0, -dx) && x < LULL_MIN(width, width - dx) && y >= LULL_MAX(0, -dy) &&
         y < LULL_MIN(height, height - dy);
}

/* The NL-means window of the pair (p, p + (dx, dy)), p = (x, y): the
 * pixels [xa, xb] x [ya, yb] within nlm_radius of p whose neighbour at
 * (dx, dy) is inside the image.  0 (no window) when p + (dx, dy) is
 * outside. */
LULL_HD int lull_gd_pair_window(int width, int height, int nlm_radius, int x, int y, int dx,
                                int dy, int* xa, int* xb, int* ya, int* yb)
{
  if (!lull_gd_pair_inside(width, height, x, y, dx, dy))
    return 0;
  const int x0 = LULL_MAX(0, -dx), x1 = LULL_MIN(width, width - dx);
  const int y0 = LULL_MAX(0, -dy), y1 = LULL_MIN(height, height - dy);
  *xa = LULL_MAX(x0, x - nlm_radius);
  *xb = LULL_MIN(x1 - 1, x + nlm_radius);
  *ya = LULL_MAX(y0, y - nlm_radius);
  *yb = LULL_MIN(y1 - 1, y + nlm_radius);
  return 1;
}

/* The weight of the pair (p, p + (dx, dy)), p = (x, y), (dx, dy) != (0, 0):
 * 0 when p + (dx, dy) is outside the image. */
LULL_HD float lull_gd_pair_weight_at(int width, int height, const lull_gd_guide* guide,
                                     const lull_gd_features* f, const lull_gd_candidate* cand,
                                     float delta, int nlm_radius, int x, int y, int dx, int dy)
{
  int xa, xb, ya, yb;
  if (!lull_gd_pair_window(width, height, nlm_radius, x, y, dx, dy, &xa, &xb, &ya, &yb))
    return 0.0f;
  const ptrdiff_t o = (ptrdiff_t)dy * (ptrdiff_t)width + dx;
  const float color = lull_gd_window_distance(guide, f, cand, -1, width, o, xa, xb, ya, yb);
  /* the largest feature distance: eq. 5.13 takes the smallest weight */
  float feature = -INFINITY;
  for (int j = 0; j < f->count; ++j)
    feature =
        LULL_MAX(feature, lull_gd_window_distance(guide, f, cand, j, width, o, xa, xb, ya, yb));
  return lull_gd_weight(color, feature, cand->beta, delta);
}

LULL_HD float lull_gd_patch_weight_at(int width, int height, const lull_gd_guide* guide,
                                      const lull_gd_features* f, const lull_gd_candidate* cand,
                                      float delta, int nlm_radius, int x, int y, int offset)
{
  int dx, dy;
  lull_gd_patch_offset(offset, &dx, &dy);
  if (dx == 0 && dy == 0)
    return lull_gd_weight(0.0f, 0.0f, cand->beta, delta); /* d(p, p) < 0 (eq. 5.9) */
  return lull_gd_pair_weight_at(width, height, guide, f, cand, delta, nlm_radius, x, y, dx, dy);
}

/* -- the post-filter (not in the thesis) ------------------------------------
 *
 * The chosen result is noise-limited where the patch constraints are weak
 * (thin geometry, patches with few similar pixels): on the textured test
 * scene its error is almost all variance (two-buffer estimate) and bias is
 * near 0.  A weighted local linear regression over a wider window then
 * removes noise the constraints could not: per pixel, the fit of
 * a + b dx + c dy to the window's values with the NL-means weights above
 * (colour eq. 5.9-5.11 on a guide, features 5.12-5.13), evaluated at the
 * centre.  Feature distances use the feature's variance as their scale
 * (lull_gd_post_scale): the thesis' scale also admits the local contrast
 * |grad f|^2, which lets texture edges through (textured 0.00043 instead
 * of 0.00019 relMSE). */

/* The post-filter's scale of a feature (the lull_gd_feature_distance
 * denominator's V): its variance, at least 5e-4. */
LULL_HD float lull_gd_post_scale(float variance)
{
  return LULL_MAX(5e-4f, variance);
}

/* The screen offset of a post-filter tap, scaled to [-1, 1]. */
LULL_HD float lull_gd_post_offset(int d, int radius)
{
  return (float)d / (float)radius;
}

/* One pixel's regression sums: the weighted moments sum w, sum w sx,
 * sum w sy, sum w sx^2, sum w sx sy, sum w sy^2, sum w^2 (for the result's
 * variance), and per channel sum w v, w v sx, w v sy. */
typedef struct lull_gd_llr
{
  float m[6];
  float w2;
  float b[3][3];
} lull_gd_llr;

/* The sums of the centre alone: weight 1 at offset (0, 0), values v. */
LULL_HD void lull_gd_llr_centre(lull_gd_llr* s, int channels, const float v[3])
{
  s->m[0] = 1.0f;
  for (int k = 1; k < 6; ++k)
    s->m[k] = 0.0f;
  s->w2 = 1.0f;
  for (int c = 0; c < channels; ++c) {
    s->b[c][0] = v[c];
    s->b[c][1] = s->b[c][2] = 0.0f;
  }
}

/* Adds a tap of weight wt at the scaled offset (sx, sy) with values v. */
LULL_HD void lull_gd_llr_add(lull_gd_llr* s, int channels, float wt, float sx, float sy,
                             const float v[3])
{
  s->m[0] += wt;
  s->m[1] += wt * sx;
  s->m[2] += wt * sy;
  s->m[3] += wt * sx * sx;
  s->m[4] += wt * sx * sy;
  s->m[5] += wt * sy * sy;
  s->w2 += wt * wt;
  for (int c = 0; c < channels; ++c) {
    const float wv = wt * v[c];
    s->b[c][0] += wv;
    s->b[c][1] += wv * sx;
    s->b[c][2] += wv * sy;
  }
}

/* The regression's value at the centre: m the weighted moments sum w,
 * sum w sx, sum w sy, sum w sx^2, sum w sx sy, sum w sy^2 and b the sums
 * w v, w v sx, w v sy of one channel; ridge (relative to sum w) on the
 * slopes keeps the 3 x 3 system regular (on the constant too it would
 * scale every value by 1 / (1 + ridge) where the weight is all on the
 * centre).  A near-singular system gives the weighted mean. */
LULL_HD float lull_gd_llr_estimate(const float m[6], float b0, float b1, float b2, float ridge)
{
  const double rg = (double)ridge * m[0];
  const double a = m[0], b = m[1], c = m[2], d = m[3] + rg, e = m[4], f = m[5] + rg;
  const double c0 = d * f - e * e, c1 = c * e - b * f, c2 = b * e - c * d;
  const double det = a * c0 + b * c1 + c * c2;
  if (!(det > 1e-12 * a * a * a))
    return b0 / m[0];
  return (float)((c0 * b0 + c1 * b1 + c2 * b2) / det);
}

/* The variance of a regression's result from the variance var of the
 * centre's value (the values' variances taken equal): var sum w^2 /
 * (sum w)^2. */
LULL_HD float lull_gd_llr_variance(const lull_gd_llr* s, float var)
{
  return var * s->w2 / (s->m[0] * s->m[0]);
}

/* The constraint of pixel (x, y) (§5.3.1, §5.3.4): the patch's feature
 * matrix (constant, screen terms, features; rows of weight-0 pixels
 * zeroed: the reshaping of §5.3.2), its truncated basis, and the Gram
 * matrix G of the constraint into g (upper triangle, lull_gd_patch_gram),
 * the row weights into d.  weights: the 25 planes of w~.  Returns 0 when
 * the patch has fewer than two pixels (a one-pixel patch lies in any
 * subspace with the constant: no constraint). */
LULL_HD int lull_gd_patch_gram_at(int width, int x, int y, const float* const* weights,
                                  const lull_gd_features* features, float d[LULL_GD_PATCH],
                                  float g[LULL_GD_PATCH * LULL_GD_PATCH])
{
  const size_t i = (size_t)y * (size_t)width + (size_t)x;
  int active = 0;
  for (int k = 0; k < LULL_GD_PATCH; ++k) {
    d[k] = weights[k][i];
    active += d[k] > 0.0f;
  }
  if (active < 2)
    return 0;
  const int m = 1 + LULL_GD_SCREEN_TERMS + features->count;
  float cols[LULL_GD_MAX_FEATURES * LULL_GD_PATCH];
  for (int k = 0; k < LULL_GD_PATCH; ++k) {
    int dx, dy;
    lull_gd_patch_offset(k, &dx, &dy);
    const ptrdiff_t q = (ptrdiff_t)i + (ptrdiff_t)dy * width + dx;
    cols[k] = d[k] > 0.0f ? 1.0f : 0.0f;
    float terms[LULL_GD_SCREEN_TERMS];
    lull_gd_screen_terms(dx, dy, terms);
    for (int t = 0; t < LULL_GD_SCREEN_TERMS; ++t)
      cols[(1 + t) * LULL_GD_PATCH + k] = d[k] > 0.0f ? terms[t] : 0.0f;
    for (int j = 0; j < features->count; ++j)
      cols[(1 + LULL_GD_SCREEN_TERMS + j) * LULL_GD_PATCH + k] =
          d[k] > 0.0f ? features->value[j][q] : 0.0f;
  }
  const int keep = lull_gd_feature_basis(cols, m);
  lull_gd_patch_gram(cols, keep, d, g);
  return 1;
}

/* Where entry (a, b), a <= b, of the Gram matrix of pixel (x, y)'s patch
 * goes: floats from the start of the symmetric stencil (LULL_STENCIL_TAPS
 * planes of `stride` floats; the pair's tap, at the pixel that stores
 * it). */
LULL_HD size_t lull_gd_stencil_entry(int width, int x, int y, int a, int b, size_t stride)
{
  int ax, ay, bx, by, mirrored;
  lull_gd_patch_offset(a, &ax, &ay);
  lull_gd_patch_offset(b, &bx, &by);
  const int tap = lull_stencil_tap(bx - ax, by - ay, &mirrored);
  const int px = x + (mirrored ? bx : ax), py = y + (mirrored ? by : ay);
  return (size_t)tap * stride + (size_t)py * (size_t)width + (size_t)px;
}

/* Adds pixel (x, y)'s constraint to the stencil at coef (the CPU's float
 * sums; the CUDA kernels add the same entries in fixed point). */
LULL_HD void lull_gd_patch_constraint(int width, int x, int y, const float* const* weights,
                                      const lull_gd_features* features, float* coef,
                                      size_t stride)
{
  float d[LULL_GD_PATCH];
  float g[LULL_GD_PATCH * LULL_GD_PATCH];
  if (!lull_gd_patch_gram_at(width, x, y, weights, features, d, g))
    return;
  for (int a = 0; a < LULL_GD_PATCH; ++a) {
    if (d[a] == 0.0f)
      continue;
    for (int b = a; b < LULL_GD_PATCH; ++b)
      if (d[b] != 0.0f)
        coef[lull_gd_stencil_entry(width, x, y, a, b, stride)] += g[a * LULL_GD_PATCH + b];
  }
}
