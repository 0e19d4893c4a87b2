/* Per-pixel formulas of the RHF filter: ray histogram fusion (Delbracio
 * et al. 2014, as Szeracki et al. §3 describe it), shared by the CPU
 * backend (rhf_cpu.c), the renderer that writes histograms
 * (examples/gdpt) and the tests.  rhf.h says what a run does; the layout
 * of the histograms and the definitions are in docs/rhf.md. */
#pragma once

#include <math.h>

#include "platform.h"

enum
{
  LULL_RHF_MAX_BINS = 32,     /* histogram images histogram0 .. histogram31 */
  LULL_RHF_MAX_RADIUS = 12,   /* search radius: windows up to 25 x 25 */
  LULL_RHF_MAX_PATCH = 3,     /* patch radius: patches up to 7 x 7 */
  LULL_RHF_MAX_SCALES = 6,
  LULL_RHF_MASK_WORDS = ((2 * LULL_RHF_MAX_RADIUS + 1) * (2 * LULL_RHF_MAX_RADIUS + 1) + 31) / 32,
};

/* Where a sample of value v (one colour channel) goes in a histogram of
 * `bins` bins (§3 of Delbracio et al.: the value tone-compressed by
 * v^(1 / gamma), saturated at max^(1 / gamma), spread linearly over the
 * two nearest bins): bin k0 gets w0, bin k0 + 1 gets 1 - w0 (k0 + 1 <
 * bins, else all of it goes to k0).  Negative and non-finite values
 * count as 0 and as saturated. */
LULL_HD void lull_rhf_bin(float v, int bins, float gamma, float max, int* k0, float* w0)
{
  float t;
  if (v != v)
    t = 0.0f;
  else if (!(v < max))
    t = 1.0f;
  else
    t = v > 0.0f ? powf(v / max, 1.0f / gamma) : 0.0f;
  const float s = t * (float)(bins - 1);
  int k = (int)floorf(s);
  k = k < 0 ? 0 : (k > bins - 1 ? bins - 1 : k);
  *k0 = k;
  *w0 = k + 1 < bins ? 1.0f - (s - (float)k) : 1.0f;
}

/* The chi-square term of one bin (Szeracki et al. §3: the chi^2 distance
 * of two histograms), the sample counts n_p, n_q of the channel
 * balancing it: (sqrt(n_q / n_p) h_p - sqrt(n_p / n_q) h_q)^2 / (h_p + h_q),
 * 0 for an empty bin.  A channel without samples on one side is compared
 * unbalanced (both factors 1).  *used is 1 for a bin that is not empty
 * (the distance is the mean over those). */
LULL_HD float lull_rhf_chi2(float hp, float hq, float np, float nq, int* used)
{
  const float s = hp + hq;
  if (!(s > 0.0f)) {
    *used = 0;
    return 0.0f;
  }
  *used = 1;
  float a = 1.0f, b = 1.0f;
  if (np > 0.0f && nq > 0.0f) {
    a = sqrtf(nq / np);
    b = 1.0f / a;
  }
  const float d = a * hp - b * hq;
  return d * d / s;
}

/* The bit of the window offset (ox, oy) in a pixel's mask of similar
 * pixels (radius r: offsets row by row). */
LULL_HD int lull_rhf_offset_bit(int ox, int oy, int r)
{
  return (oy + r) * (2 * r + 1) + (ox + r);
}

/* Two patches are similar when their distance, the mean chi^2 term over
 * the patch's non-empty bins (sum / used), is at most k (Szeracki et al.
 * §3: "if the result falls below a certain threshold"); patches with no
 * samples at all are similar. */
LULL_HD int lull_rhf_similar(float sum, float used, float k)
{
  return sum <= k * used;
}

/* A coarser scale's pixel (x, y) from the finer one of w x h: the 2 x 2
 * block it covers, clamped at the edge (histograms add, colours average:
 * lull_rhf_down with mean 0 and 1). */
LULL_HD float lull_rhf_down(const float* fine, int w, int h, int x, int y, int mean)
{
  const int x0 = 2 * x, y0 = 2 * y;
  const int x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
  float s = 0.0f;
  int n = 0;
  for (int yy = y0; yy <= y1; ++yy)
    for (int xx = x0; xx <= x1; ++xx) {
      s += fine[(size_t)yy * (size_t)w + (size_t)xx];
      ++n;
    }
  return mean ? s / (float)n : s;
}

/* The coarser scale (cw x ch) at the finer pixel (x, y): bilinear, pixel
 * centres aligned ((x + 0.5) / 2 - 0.5), the edge repeated. */
LULL_HD float lull_rhf_up(const float* coarse, int cw, int ch, int x, int y)
{
  float fx = ((float)x + 0.5f) * 0.5f - 0.5f, fy = ((float)y + 0.5f) * 0.5f - 0.5f;
  fx = fx < 0.0f ? 0.0f : (fx > (float)(cw - 1) ? (float)(cw - 1) : fx);
  fy = fy < 0.0f ? 0.0f : (fy > (float)(ch - 1) ? (float)(ch - 1) : fy);
  const int x0 = (int)fx, y0 = (int)fy;
  const int x1 = x0 + 1 < cw ? x0 + 1 : x0, y1 = y0 + 1 < ch ? y0 + 1 : y0;
  const float ax = fx - (float)x0, ay = fy - (float)y0;
  const float top = (1.0f - ax) * coarse[(size_t)y0 * (size_t)cw + (size_t)x0] +
                    ax * coarse[(size_t)y0 * (size_t)cw + (size_t)x1];
  const float bottom = (1.0f - ax) * coarse[(size_t)y1 * (size_t)cw + (size_t)x0] +
                       ax * coarse[(size_t)y1 * (size_t)cw + (size_t)x1];
  return (1.0f - ay) * top + ay * bottom;
}
