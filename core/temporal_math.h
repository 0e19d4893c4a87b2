/* Per-pixel formulas of temporal accumulation, shared verbatim by the CPU
 * backend (temporal_cpu.c) and the CUDA kernels (cuda/temporal_cuda.cu).
 *
 * One frame t (SVGF, Schied et al. 2017, §4.1-4.2; Falcor's SVGFReproject
 * for the tap tests):
 *
 *   1. load: the colour, linear and demodulated by the albedo as the
 *      à-trous filter demodulates it (atrous_math.h), c_t(p);
 *   2. reproject: p's position in frame t-1 from the motion vector, and
 *      the history there by bilinear interpolation of its 4 pixels, each
 *      of which must pass the depth and normal tests against p (a tap of
 *      zero weight is not read); one failing tap drops the whole history
 *      of p (a disocclusion: the spatial filter alone handles p);
 *   3. guard against ghosting, two tests on the reprojected colour h:
 *      - neighbourhood clipping (Salvi 2016, "variance clipping"): each
 *        channel of h into mean +- gamma sigma of c_t's 3x3 neighbourhood;
 *      - a statistical test: when the luminance of h differs from the mean
 *        of that neighbourhood by more than k standard deviations of the
 *        difference's noise (the mean's and the history's own), the weight
 *        of the current frame rises to lambda = 1 - k sigma / |dl| (A-SVGF's
 *        idea, Schied et al. 2018, with the noise scale in place of the
 *        re-shaded gradient, which offline renders do not have);
 *   4. blend: with a = max(alpha, 1 / (n + 1), lambda) (n the history
 *      length), the colour c = (1 - a) h + a c_t, the luminance moments
 *      (weight a_m = max(alpha_m, 1 / (n + 1), lambda)), the variance
 *      scale s = (1 - a)^2 s_h + a^2 (the sum of squared weights of the
 *      frames in c: Var(c) = s Var(c_t) for frames with independent noise)
 *      and n = min((1 - lambda) n + 1, max_history);
 *   5. the variance the spatial filter gets: s (m2 - m1^2), the noise of
 *      one frame measured over the history times the scale, once the
 *      history holds LULL_TEMPORAL_MIN_MOMENTS frames; before that
 *      LULL_TEMPORAL_ESTIMATE, the à-trous filter's own spatial estimate
 *      (SVGF §4.2 falls back to a spatial estimate in the same way);
 *   6. the albedo the spatial filter demodulates by, remodulates with and
 *      takes as a guide: the frame's own blended with its history (weight
 *      of the current frame max(albedo_alpha, a)), reprojected by
 *      Catmull-Rom interpolation (sharper than bilinear: every frame
 *      resamples the history again) and clipped to the min-max box of the
 *      frame's 3x3 albedo (Karis 2014), as TAA does.  A Cycles albedo
 *      averages the pixel filter's samples, so at a texture's edges it
 *      carries the sampling noise of the edge's coverage, which the output
 *      inherits through the remodulation: at 4-16 spp the largest part of
 *      what flickers once the illumination is accumulated (docs/temporal.md).
 *
 * The history (per pixel: colour, moments, s, n, and the depth and normal
 * of the frame for the next frame's tests) is kept in planes, two sets
 * that swap roles every frame (temporal.h). */
#pragma once

#include <math.h>

#include "atrous_math.h"
#include "platform.h"

/* Consistency tests of a history tap (SVGF §4.1; thresholds ours, chosen
 * on the test animation, docs/temporal.md): depths within 5% of the larger
 * (a camera moving along the view changes a static surface's depth from
 * one frame to the next; 2% rejected a fifth of the valid history of
 * 4-spp frames, whose depth is noisy at edges) plus one pixel footprint of
 * the current depth (a slanted surface); unit normals within about 26
 * degrees. */
#define LULL_TEMPORAL_DEPTH_RELATIVE 0.05f
#define LULL_TEMPORAL_DEPTH_FOOTPRINTS 1.0f
#define LULL_TEMPORAL_NORMAL_COS 0.9f

/* History frames after which the moments give the noise variance; before,
 * the spatial filter estimates it from the neighbourhood (SVGF's 4: with 2
 * the variance of two samples, often near 0, left pixels unfiltered). */
#define LULL_TEMPORAL_MIN_MOMENTS 4.0f

/* Whether a history of length n (a bilinear mix of the taps' lengths)
 * holds LULL_TEMPORAL_MIN_MOMENTS frames.  Without rejections n is a whole
 * number up to rounding: the mix of four taps of length 4 is 4 or one ulp
 * below, and the GPU's fused multiply-adds round it otherwise than the
 * CPU, so the test takes half a frame of slack rather than flip there. */
LULL_HD int lull_temporal_has_moments(float n)
{
  return n > LULL_TEMPORAL_MIN_MOMENTS - 0.5f;
}

/* The variance value that asks the à-trous filter for its own estimate
 * (lull_atrous_params.variance_fallback). */
#define LULL_TEMPORAL_ESTIMATE (-1.0f)

/* Magnitudes the moments and the clipping statistics see (as the à-trous
 * filter's LULL_COLOR_MAX): their squares and sums stay finite. */
#define LULL_TEMPORAL_VALUE_MAX 1e15f

/* Indices of the history planes of one set. */
enum
{
  LULL_TH_R, LULL_TH_G, LULL_TH_B, /* accumulated demodulated colour */
  LULL_TH_M1, LULL_TH_M2,          /* luminance moments */
  LULL_TH_S,                       /* variance scale of the accumulated colour */
  LULL_TH_N,                       /* history length (0: no history) */
  LULL_TH_Z,                       /* depth */
  LULL_TH_NX, LULL_TH_NY, LULL_TH_NZ, /* unit normal, (0, 0, 0) missing */
  LULL_TH_AR, LULL_TH_AG, LULL_TH_AB, /* accumulated albedo */
  LULL_TH_PLANES
};

/* The settings of one run (temporal.h fills them from the filter's). */
typedef struct lull_temporal_params
{
  float alpha;         /* least weight of the current frame's colour */
  float moments_alpha; /* least weight of its luminance moments */
  float max_history;   /* cap of the history length */
  float clip_sigma;    /* gamma of the neighbourhood clipping, 0: off */
  float reject_sigma;  /* k of the per-pixel test, 0: off */
  float albedo_alpha;  /* least weight of the current frame's albedo (1: not accumulated) */
  int has_albedo;
  int demodulate;      /* divide by the albedo (albedo given, 3 colour channels) */
  int srgb;            /* colour is sRGB-encoded */
  int has_normal, has_depth, has_motion;
  int channels;        /* colour channels (3 or 4; the 4th is copied through) */
} lull_temporal_params;

/* The planes one run reads and writes (backend memory), width x height
 * floats each, row by row. */
typedef struct lull_temporal_planes
{
  int width, height;
  float* cur[6];                 /* this frame's demodulated colour (NaN: not finite), albedo */
  const float* in[LULL_TH_PLANES]; /* the history of the previous frame (NULL: none) */
  float* out[LULL_TH_PLANES];      /* the history after this frame */
  lull_image acc;                /* the colour the spatial filter gets (channels) */
  lull_image variance;           /* its luminance variance, 1 channel */
  lull_image albedo;             /* the albedo the spatial filter gets (FLOAT3) */
} lull_temporal_planes;

LULL_HD float lull_temporal_limit(float v)
{
  return v > LULL_TEMPORAL_VALUE_MAX ? LULL_TEMPORAL_VALUE_MAX
                                     : (v < -LULL_TEMPORAL_VALUE_MAX ? -LULL_TEMPORAL_VALUE_MAX : v);
}

/* -- step 1: load ------------------------------------------------------------ */

/* Pixel (x, y) of this frame into the planes: c the colour (channels as
 * loaded), a the albedo (RGB, lull_expand_rgb applied), n the normal, z
 * the depth (guides not given: zeros).  The demodulated linear colour goes
 * to cur (NaN when a channel is not finite: the pixel keeps its history,
 * and the spatial filter inpaints it when it has none), with the albedo
 * (non-finite components 0), the depth and unit normal to the new history
 * set, a 4th colour channel to acc unchanged. */
LULL_HD void lull_temporal_load(const lull_temporal_params* p, const lull_temporal_planes* t,
                                int x, int y, const float c[4], const float a[3], const float n[3],
                                float z)
{
  const size_t i = (size_t)y * (size_t)t->width + (size_t)x;
  const int finite = lull_isfinite3(c[0], c[1], c[2]);
  for (int k = 0; k < 3; ++k) {
    const float ak = (a[k] - a[k]) == 0.0f ? a[k] : 0.0f;
    float v = c[k];
    if (p->srgb)
      v = lull_srgb_to_linear(v);
    if (p->demodulate)
      v /= lull_demodulation_albedo(ak);
    t->cur[k][i] = finite ? v : NAN;
    if (p->has_albedo)
      t->cur[3 + k][i] = ak;
  }
  float u[3] = {(n[0] - n[0]) == 0.0f ? n[0] : 0.0f, (n[1] - n[1]) == 0.0f ? n[1] : 0.0f,
                (n[2] - n[2]) == 0.0f ? n[2] : 0.0f};
  (void)lull_normalize_normal(u);
  t->out[LULL_TH_NX][i] = u[0];
  t->out[LULL_TH_NY][i] = u[1];
  t->out[LULL_TH_NZ][i] = u[2];
  t->out[LULL_TH_Z][i] = (z - z) == 0.0f ? z : 0.0f;
  if (p->channels == 4) {
    float alpha[4] = {0.0f, 0.0f, 0.0f, c[3]};
    unsigned char* q = t->acc.data + (size_t)y * t->acc.row_stride +
                       (size_t)x * t->acc.pixel_stride;
    /* the 4th channel alone (lull_image_store_n stores from the 1st) */
    if (lull_format_is_half(t->acc.format)) {
      const uint16_t h = lull_float_to_half(alpha[3]);
      memcpy(q + 6, &h, sizeof h);
    } else {
      memcpy(q + 12, &alpha[3], sizeof(float));
    }
  }
}

/* -- step 2: reprojection ---------------------------------------------------- */

/* The position of pixel (x, y) (rows top-down) in the previous frame, from
 * a motion vector in Blender's Vector convention (docs/temporal.md): m =
 * (previous - current) in pixels, x to the right, y up; so the previous
 * frame's pixel is (x + m_x, y - m_y) in top-down rows.  Returns 0 when
 * the position is not finite or lies outside the image by a pixel or
 * more (no tap of it is inside). */
LULL_HD int lull_temporal_previous(int x, int y, float mx, float my, int width, int height,
                                   float* px, float* py)
{
  *px = (float)x + mx;
  *py = (float)y - my;
  /* also false for NaN; checked before any conversion to int */
  return *px > -1.0f && *px < (float)width && *py > -1.0f && *py < (float)height;
}

/* Whether a history tap at depth zq with unit normal nq matches the
 * current pixel (depth z, footprint f, unit normal n): the tests of the
 * guides given.  A missing normal (0, 0, 0: Cycles' background) matches
 * nothing; the caller gives such pixels no history at all. */
LULL_HD int lull_temporal_tap_matches(const lull_temporal_params* p, float z, float f, float zq,
                                      float nx, float ny, float nz, float qx, float qy, float qz)
{
  if (p->has_depth) {
    const float az = fabsf(z), aq = fabsf(zq);
    const float tolerance = LULL_TEMPORAL_DEPTH_RELATIVE * (az > aq ? az : aq) +
                            LULL_TEMPORAL_DEPTH_FOOTPRINTS * f;
    if (!(fabsf(z - zq) <= tolerance))
      return 0;
  }
  if (p->has_normal && !(nx * qx + ny * qy + nz * qz >= LULL_TEMPORAL_NORMAL_COS))
    return 0;
  return 1;
}

/* The depth footprint of pixel i: the change towards its smoother
 * neighbour (lull_geometry_footprint without the floor: a flat surface
 * needs none, the relative term covers it). */
LULL_HD float lull_temporal_footprint(const float* z, int x, int y, int width, int height)
{
  int xs[4], ys[4];
  lull_footprint_neighbours(x, y, width, height, xs, ys);
  const float c = z[(size_t)y * (size_t)width + (size_t)x];
  float d[4];
  for (int k = 0; k < 4; ++k) {
    const int inside = xs[k] >= 0 && xs[k] < width && ys[k] >= 0 && ys[k] < height;
    d[k] = inside ? fabsf(z[(size_t)ys[k] * (size_t)width + (size_t)xs[k]] - c) : 0.0f;
  }
  const float gx = d[0] < d[1] ? d[0] : d[1];
  const float gy = d[2] < d[3] ? d[2] : d[3];
  return gx > gy ? gx : gy;
}

/* The reprojected history of one pixel. */
typedef struct lull_temporal_sample
{
  float r, g, b, m1, m2, s, n; /* n = 0: none */
  float a[3];                  /* albedo (Catmull-Rom) */
} lull_temporal_sample;

/* Catmull-Rom weights of the taps at -1, 0, 1, 2 for a position f in
 * [0, 1) past tap 0 (they sum to 1; the outer two are <= 0). */
LULL_HD void lull_catmull_rom(float f, float w[4])
{
  const float f2 = f * f, f3 = f2 * f;
  w[0] = 0.5f * (-f3 + 2.0f * f2 - f);
  w[1] = 0.5f * (3.0f * f3 - 5.0f * f2 + 2.0f);
  w[2] = 0.5f * (-3.0f * f3 + 4.0f * f2 + f);
  w[3] = 0.5f * (f3 - f2);
}

/* Step 2 for pixel (x, y) with motion (mx, my): the bilinear mix of the
 * previous frame's history at its previous position, or n = 0. */
LULL_HD lull_temporal_sample lull_temporal_reproject(const lull_temporal_params* p,
                                                     const lull_temporal_planes* t, int x, int y,
                                                     float mx, float my)
{
  lull_temporal_sample h = {0, 0, 0, 0, 0, 0, 0, {0, 0, 0}};
  const int w = t->width, ht = t->height;
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  const float nx = t->out[LULL_TH_NX][i], ny = t->out[LULL_TH_NY][i], nz = t->out[LULL_TH_NZ][i];
  if (!t->in[0] || (p->has_normal && nx == 0.0f && ny == 0.0f && nz == 0.0f))
    return h;
  float px, py;
  if (!lull_temporal_previous(x, y, p->has_motion ? mx : 0.0f, p->has_motion ? my : 0.0f, w,
                              ht, &px, &py))
    return h;
  const float fx0 = floorf(px), fy0 = floorf(py);
  const int x0 = (int)fx0, y0 = (int)fy0;
  const float fx = px - fx0, fy = py - fy0;
  const float z = t->out[LULL_TH_Z][i];
  const float f = p->has_depth ? lull_temporal_footprint(t->out[LULL_TH_Z], x, y, w, ht) : 0.0f;
  float acc[7] = {0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < 4; ++k) {
    const int dx = k & 1, dy = k >> 1;
    const float wgt = (dx ? fx : 1.0f - fx) * (dy ? fy : 1.0f - fy);
    if (wgt == 0.0f)
      continue; /* not read: a pixel exactly on the previous grid needs one tap */
    const int qx = x0 + dx, qy = y0 + dy;
    if (qx < 0 || qy < 0 || qx >= w || qy >= ht)
      return h;
    const size_t q = (size_t)qy * (size_t)w + (size_t)qx;
    if (!(t->in[LULL_TH_N][q] > 0.0f) ||
        !lull_temporal_tap_matches(p, z, f, t->in[LULL_TH_Z][q], nx, ny, nz, t->in[LULL_TH_NX][q],
                                   t->in[LULL_TH_NY][q], t->in[LULL_TH_NZ][q]))
      return h;
    acc[0] += wgt * t->in[LULL_TH_R][q];
    acc[1] += wgt * t->in[LULL_TH_G][q];
    acc[2] += wgt * t->in[LULL_TH_B][q];
    acc[3] += wgt * t->in[LULL_TH_M1][q];
    acc[4] += wgt * t->in[LULL_TH_M2][q];
    acc[5] += wgt * t->in[LULL_TH_S][q];
    acc[6] += wgt * t->in[LULL_TH_N][q];
  }
  /* the weights of the taps read sum to 1 */
  if (p->has_albedo) {
    /* the 4 x 4 pixels around (outside the image: the nearest inside) */
    float wx[4], wy[4];
    lull_catmull_rom(fx, wx);
    lull_catmull_rom(fy, wy);
    for (int j = 0; j < 4; ++j) {
      int qy = y0 - 1 + j;
      qy = qy < 0 ? 0 : (qy >= ht ? ht - 1 : qy);
      for (int k = 0; k < 4; ++k) {
        int qx = x0 - 1 + k;
        qx = qx < 0 ? 0 : (qx >= w ? w - 1 : qx);
        const size_t q = (size_t)qy * (size_t)w + (size_t)qx;
        const float wgt = wx[k] * wy[j];
        h.a[0] += wgt * t->in[LULL_TH_AR][q];
        h.a[1] += wgt * t->in[LULL_TH_AG][q];
        h.a[2] += wgt * t->in[LULL_TH_AB][q];
      }
    }
  }
  h.r = acc[0];
  h.g = acc[1];
  h.b = acc[2];
  h.m1 = acc[3];
  h.m2 = acc[4];
  h.s = acc[5];
  h.n = acc[6];
  return h;
}

/* -- step 3: the guards against ghosting -------------------------------------- */

/* Mean and variance of the 3x3 neighbourhood of pixel (x, y) in this
 * frame's colour, per channel and of the luminance; non-finite pixels and
 * pixels outside the image left out (the centre is finite); and the min-max
 * box of the albedo. */
typedef struct lull_temporal_stats
{
  float mean[3], var[3];
  float lum_var;
  float count;            /* finite pixels in it (>= 1: the centre) */
  float amin[3], amax[3]; /* the albedo's box (when given) */
} lull_temporal_stats;

/* The sums the statistics come from, added pixel by pixel. */
enum
{
  LULL_TS_R, LULL_TS_G, LULL_TS_B, LULL_TS_R2, LULL_TS_G2, LULL_TS_B2, LULL_TS_L, LULL_TS_L2,
  LULL_TS_COUNT, LULL_TS_SUMS, /* the sums; then the albedo's box */
  LULL_TS_AMIN = LULL_TS_SUMS, LULL_TS_AMAX = LULL_TS_SUMS + 3, LULL_TS_ALL = LULL_TS_SUMS + 6
};

/* The empty sums. */
LULL_HD void lull_temporal_sums_clear(float s[LULL_TS_ALL])
{
  for (int k = 0; k < LULL_TS_SUMS; ++k)
    s[k] = 0.0f;
  for (int k = 0; k < 3; ++k) {
    s[LULL_TS_AMIN + k] = FLT_MAX;
    s[LULL_TS_AMAX + k] = -FLT_MAX;
  }
}

/* Pixel q of this frame (cur planes) added to the sums. */
LULL_HD void lull_temporal_sums_add(const lull_temporal_params* p, const lull_temporal_planes* t,
                                    size_t q, float s[LULL_TS_ALL])
{
  if (p->has_albedo)
    for (int k = 0; k < 3; ++k) {
      const float av = t->cur[3 + k][q];
      s[LULL_TS_AMIN + k] = av < s[LULL_TS_AMIN + k] ? av : s[LULL_TS_AMIN + k];
      s[LULL_TS_AMAX + k] = av > s[LULL_TS_AMAX + k] ? av : s[LULL_TS_AMAX + k];
    }
  const float r = t->cur[0][q], g = t->cur[1][q], b = t->cur[2][q];
  const int finite = lull_isfinite3(r, g, b);
  const float v[3] = {finite ? lull_temporal_limit(r) : 0.0f, finite ? lull_temporal_limit(g) : 0.0f,
                      finite ? lull_temporal_limit(b) : 0.0f};
  const float l = lull_luminance(v[0], v[1], v[2]);
  s[LULL_TS_R] += v[0];
  s[LULL_TS_G] += v[1];
  s[LULL_TS_B] += v[2];
  s[LULL_TS_R2] += v[0] * v[0];
  s[LULL_TS_G2] += v[1] * v[1];
  s[LULL_TS_B2] += v[2] * v[2];
  s[LULL_TS_L] += l;
  s[LULL_TS_L2] += l * l;
  s[LULL_TS_COUNT] += finite ? 1.0f : 0.0f;
}

LULL_HD lull_temporal_stats lull_temporal_stats_of(const float s[LULL_TS_ALL])
{
  lull_temporal_stats st;
  const float count = s[LULL_TS_COUNT];
  const float inv = count > 0.0f ? 1.0f / count : 0.0f;
  for (int k = 0; k < 3; ++k) {
    st.mean[k] = s[LULL_TS_R + k] * inv;
    const float var = s[LULL_TS_R2 + k] * inv - st.mean[k] * st.mean[k];
    st.var[k] = var > 0.0f ? var : 0.0f;
    st.amin[k] = s[LULL_TS_AMIN + k];
    st.amax[k] = s[LULL_TS_AMAX + k];
  }
  const float ml = s[LULL_TS_L] * inv, vl = s[LULL_TS_L2] * inv - ml * ml;
  st.lum_var = vl > 0.0f ? vl : 0.0f;
  st.count = count > 0.0f ? count : 1.0f;
  return st;
}

LULL_HD lull_temporal_stats lull_temporal_neighbourhood(const lull_temporal_params* p,
                                                        const lull_temporal_planes* t, int x,
                                                        int y)
{
  float s[LULL_TS_ALL];
  lull_temporal_sums_clear(s);
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      const int qx = x + dx, qy = y + dy;
      if (qx < 0 || qy < 0 || qx >= t->width || qy >= t->height)
        continue;
      lull_temporal_sums_add(p, t, (size_t)qy * (size_t)t->width + (size_t)qx, s);
    }
  return lull_temporal_stats_of(s);
}

/* Neighbourhood clipping of one channel of the history. */
LULL_HD float lull_temporal_clip(float h, float mean, float var, float gamma)
{
  const float r = gamma * sqrtf(var);
  const float lo = mean - r, hi = mean + r;
  return h < lo ? lo : (h > hi ? hi : h);
}

/* lambda of the per-pixel test: the weight the current frame needs so that
 * the blend's luminance lies within k sigma of the current luminance lc
 * (0 when the history's lh already does, or the test is off). */
LULL_HD float lull_temporal_reject(float lh, float lc, float sigma, float k)
{
  const float d = fabsf(lh - lc);
  const float allowed = k * sigma;
  if (!(k > 0.0f) || !(d > allowed))
    return 0.0f;
  return 1.0f - allowed / d;
}

/* -- step 4 and 5: blend, store, and the spatial filter's inputs -------------- */

/* (1 - a) h + a c, held in range (a mix of finite values stays finite). */
LULL_HD float lull_temporal_mix(float h, float c, float a)
{
  return lull_hold_in_range((1.0f - a) * h + a * c);
}

/* Steps 2 to 6 for pixel (x, y): reads the planes (this frame's colour
 * and albedo, the history), the statistics of its 3x3 neighbourhood
 * (lull_temporal_neighbourhood) and the motion; writes
 * the new history, the accumulated colour (remodulated by the accumulated
 * albedo, sRGB-encoded when the input is), its variance in the colour's
 * units (lull_variance_luminance's one-channel form) and the albedo. */
LULL_HD void lull_temporal_accumulate(const lull_temporal_params* p, const lull_temporal_planes* t,
                                      int x, int y, float mx, float my,
                                      const lull_temporal_stats* st)
{
  const size_t i = (size_t)y * (size_t)t->width + (size_t)x;
  const float c[3] = {t->cur[0][i], t->cur[1][i], t->cur[2][i]};
  float alb[3] = {0.0f, 0.0f, 0.0f};
  if (p->has_albedo)
    for (int k = 0; k < 3; ++k)
      alb[k] = t->cur[3 + k][i];
  const int finite = lull_isfinite3(c[0], c[1], c[2]);
  lull_temporal_sample h = lull_temporal_reproject(p, t, x, y, mx, my);
  float out[3], m1, m2, s, n, aa = 1.0f;
  if (!finite) {
    /* keeps the history (the spatial filter inpaints a pixel without) */
    out[0] = h.n > 0.0f ? h.r : NAN;
    out[1] = h.n > 0.0f ? h.g : NAN;
    out[2] = h.n > 0.0f ? h.b : NAN;
    m1 = h.m1;
    m2 = h.m2;
    s = h.s;
    n = h.n;
  } else {
    const float l = lull_temporal_limit(lull_luminance(c[0], c[1], c[2]));
    float lambda = 0.0f;
    if (h.n > 0.0f) {
      if (p->clip_sigma > 0.0f) {
        h.r = lull_temporal_clip(h.r, st->mean[0], st->var[0], p->clip_sigma);
        h.g = lull_temporal_clip(h.g, st->mean[1], st->var[1], p->clip_sigma);
        h.b = lull_temporal_clip(h.b, st->mean[2], st->var[2], p->clip_sigma);
      }
      if (p->has_albedo)
        for (int k = 0; k < 3; ++k)
          h.a[k] = h.a[k] < st->amin[k] ? st->amin[k]
                                        : (h.a[k] > st->amax[k] ? st->amax[k] : h.a[k]);
      /* the noise of one frame: from the history's moments once they are
       * there, else the neighbourhood's spread (which edges widen).  The
       * test compares the history with the neighbourhood's mean: their
       * difference has the variance var (1 / count + s) when the history
       * is right (the mean's noise plus the history's own), a third or
       * less of a single pixel's, so a change of shading shows 2-3 times
       * sooner than against the pixel itself */
      const float vm = h.m2 - h.m1 * h.m1;
      const float var = lull_temporal_has_moments(h.n) ? (vm > 0.0f ? vm : 0.0f) : st->lum_var;
      const float lm = lull_luminance(st->mean[0], st->mean[1], st->mean[2]);
      lambda = lull_temporal_reject(lull_luminance(h.r, h.g, h.b), lm,
                                    sqrtf(var * (1.0f / st->count + h.s)), p->reject_sigma);
    }
    const float first = 1.0f / (h.n + 1.0f);
    float ac = p->alpha > first ? p->alpha : first;
    float am = p->moments_alpha > first ? p->moments_alpha : first;
    ac = ac > lambda ? ac : lambda;
    am = am > lambda ? am : lambda;
    aa = p->albedo_alpha > ac ? p->albedo_alpha : ac;
    out[0] = lull_temporal_mix(h.r, c[0], ac);
    out[1] = lull_temporal_mix(h.g, c[1], ac);
    out[2] = lull_temporal_mix(h.b, c[2], ac);
    m1 = lull_temporal_mix(h.m1, l, am);
    m2 = lull_temporal_mix(h.m2, l * l, am);
    s = (1.0f - ac) * (1.0f - ac) * h.s + ac * ac;
    n = (1.0f - lambda) * h.n + 1.0f;
    n = n < p->max_history ? n : p->max_history;
  }
  /* the albedo: blended where the colour has a history (the same
   * tests), the frame's own elsewhere */
  if (p->has_albedo && h.n > 0.0f)
    for (int k = 0; k < 3; ++k)
      alb[k] = lull_temporal_mix(h.a[k], alb[k], aa);
  t->out[LULL_TH_R][i] = out[0];
  t->out[LULL_TH_G][i] = out[1];
  t->out[LULL_TH_B][i] = out[2];
  t->out[LULL_TH_M1][i] = m1;
  t->out[LULL_TH_M2][i] = m2;
  t->out[LULL_TH_S][i] = s;
  /* a pixel without a finite colour yet has no history to give */
  t->out[LULL_TH_N][i] = lull_isfinite3(out[0], out[1], out[2]) ? n : 0.0f;
  if (p->has_albedo) {
    t->out[LULL_TH_AR][i] = alb[0];
    t->out[LULL_TH_AG][i] = alb[1];
    t->out[LULL_TH_AB][i] = alb[2];
    const float av[4] = {alb[0], alb[1], alb[2], 0.0f};
    lull_image_store_n(&t->albedo, x, y, av, 3);
  }

  /* the spatial filter's colour: remodulated by the albedo it gets,
   * encoded as the input was */
  float da[3] = {1.0f, 1.0f, 1.0f};
  if (p->demodulate)
    for (int k = 0; k < 3; ++k)
      da[k] = lull_demodulation_albedo(alb[k]);
  float v[4];
  for (int k = 0; k < 3; ++k) {
    v[k] = lull_hold_in_range(out[k] * da[k]);
    if (p->srgb)
      v[k] = lull_linear_to_srgb(v[k] > 0.0f ? v[k] : 0.0f);
  }
  v[3] = 0.0f;
  lull_image_store_n(&t->acc, x, y, v, 3);
  /* and its variance: one channel, luminance variance times the
   * luminance of the albedo squared, which the filter divides out */
  float var[4] = {LULL_TEMPORAL_ESTIMATE, 0.0f, 0.0f, 0.0f};
  if (finite && lull_temporal_has_moments(n) && !p->srgb) {
    const float vm = m2 - m1 * m1;
    const float la = lull_luminance(da[0], da[1], da[2]);
    var[0] = lull_hold_in_range((vm > 0.0f ? vm : 0.0f) * s * la * la);
  }
  lull_image_store_n(&t->variance, x, y, var, 1);
}
