/* Per-pixel formulas of the RHF filter: ray histogram fusion (Delbracio
 * et al. 2014, as Szeracki et al. §3 describe it), shared by the CPU
 * backend (rhf_cpu.c), the renderer that writes histograms
 * (examples/gdpt) and the tests.  rhf.h says what a run does; the layout
 * of the histograms and the definitions are in docs/rhf.md. */
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>

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

/* -- a run's per-pixel steps (rhf_schedule.c orders them; each backend runs
 * lull_rhf_step_at over the step's grid) ---------------------------------------- */

/* One scale's planes (w x h each). */
typedef struct lull_rhf_scale
{
  int w, h;
  float* u[3];  /* the colour */
  float* hist;  /* bins x 3 planes: bin k, channel c at plane 3 k + c */
  float* n[3];  /* the samples per channel: the sum over the bins */
  float* f[3];  /* the filtered colour */
  float* r[3];  /* the fused result */
  float* du[3]; /* scratch of the fusion: the filtered finer scale, down */
} lull_rhf_scale;

typedef enum lull_rhf_step_kind
{
  LULL_RHF_COUNTS,    /* n = the sum over the bins (grid: the scale) */
  LULL_RHF_CLEAR,     /* the mask's words of each pixel to 0 */
  LULL_RHF_TERMS,     /* t, z at (ex, ey) of the image and a margin of f (grid: ew x eh) */
  LULL_RHF_ROWS,      /* rt, rz: t, z summed along rows over 2f + 1 (grid: w x eh) */
  LULL_RHF_TEST,      /* the bit of the offset where the patches are similar */
  LULL_RHF_GATHER,    /* f: the mean of what the similar patches give */
  LULL_RHF_DOWN,      /* the coarser scale's colour and histograms (grid: coarse) */
  LULL_RHF_FUSE_DOWN, /* coarse du = the finer f, down (grid: coarse) */
  LULL_RHF_FUSE,      /* fine r = f - up(coarse du) + up(coarse r) (grid: fine) */
  LULL_RHF_COPY,      /* r = f (the coarsest scale) */
} lull_rhf_step_kind;

typedef struct lull_rhf_step
{
  int kind;
  int width, height;        /* the grid */
  lull_rhf_scale s;         /* the scale (the finer one of DOWN, FUSE_DOWN, FUSE) */
  lull_rhf_scale coarse;    /* DOWN, FUSE_DOWN, FUSE */
  int bins, radius, patch;  /* B, b, f */
  float threshold;          /* k */
  int ox, oy;               /* TERMS, TEST: the window offset */
  float* t;                 /* (w + 2f) x (h + 2f): the terms' sums, */
  float* z;                 /* their non-empty bins, */
  float* rt;                /* w x (h + 2f): their row sums */
  float* rz;
  uint32_t* mask;           /* words per pixel */
  int words;
} lull_rhf_step;

LULL_HD size_t lull_rhf_at(int x, int y, int w, int h)
{
  x = x < 0 ? 0 : (x > w - 1 ? w - 1 : x);
  y = y < 0 ? 0 : (y > h - 1 ? h - 1 : y);
  return (size_t)y * (size_t)w + (size_t)x;
}

LULL_HD void lull_rhf_step_at(const lull_rhf_step* a, int x, int y)
{
  if (x < 0 || y < 0 || x >= a->width || y >= a->height)
    return;
  const lull_rhf_scale* s = &a->s;
  const int w = s->w, h = s->h, f = a->patch, P = 2 * f + 1;
  const size_t plane = (size_t)w * (size_t)h;
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  switch (a->kind) {
    case LULL_RHF_COUNTS:
      for (int c = 0; c < 3; ++c) {
        float sum = 0.0f;
        for (int k = 0; k < a->bins; ++k)
          sum += s->hist[(size_t)(3 * k + c) * plane + i];
        s->n[c][i] = sum;
      }
      break;
    case LULL_RHF_CLEAR:
      for (int k = 0; k < a->words; ++k)
        a->mask[i * (size_t)a->words + (size_t)k] = 0u;
      break;
    case LULL_RHF_TERMS: {
      /* (x, y) of the margin-extended grid; both patches read the
       * nearest pixel inside */
      const size_t p = lull_rhf_at(x - f, y - f, w, h);
      const size_t q = lull_rhf_at(x - f + a->ox, y - f + a->oy, w, h);
      float sum = 0.0f;
      int used = 0;
      for (int k = 0; k < a->bins; ++k)
        for (int c = 0; c < 3; ++c) {
          const float* hk = s->hist + (size_t)(3 * k + c) * plane;
          int u = 0;
          sum += lull_rhf_chi2(hk[p], hk[q], s->n[c][p], s->n[c][q], &u);
          used += u;
        }
      const size_t e = (size_t)y * (size_t)(w + 2 * f) + (size_t)x;
      a->t[e] = sum;
      a->z[e] = (float)used;
      break;
    }
    case LULL_RHF_ROWS: {
      const size_t e = (size_t)y * (size_t)(w + 2 * f) + (size_t)x;
      float st = 0.0f, sz = 0.0f;
      for (int j = 0; j < P; ++j) {
        st += a->t[e + (size_t)j];
        sz += a->z[e + (size_t)j];
      }
      a->rt[(size_t)y * (size_t)w + (size_t)x] = st;
      a->rz[(size_t)y * (size_t)w + (size_t)x] = sz;
      break;
    }
    case LULL_RHF_TEST: {
      if (x + a->ox < 0 || x + a->ox >= w || y + a->oy < 0 || y + a->oy >= h)
        break;
      float st = 0.0f, sz = 0.0f;
      for (int j = 0; j < P; ++j) {
        st += a->rt[(size_t)(y + j) * (size_t)w + (size_t)x];
        sz += a->rz[(size_t)(y + j) * (size_t)w + (size_t)x];
      }
      if (lull_rhf_similar(st, sz, a->threshold)) {
        const int bit = lull_rhf_offset_bit(a->ox, a->oy, a->radius);
        a->mask[i * (size_t)a->words + (size_t)(bit >> 5)] |= 1u << (bit & 31);
      }
      break;
    }
    case LULL_RHF_GATHER: {
      /* x gets, from every patch p holding it (x = p + o') and every
       * q = p + o similar to p, the colour at x + o */
      const int b = a->radius;
      float acc[3] = {0.0f, 0.0f, 0.0f};
      int count = 0;
      for (int py = y - f; py <= y + f; ++py)
        for (int px = x - f; px <= x + f; ++px) {
          if (px < 0 || px >= w || py < 0 || py >= h)
            continue;
          const uint32_t* m = a->mask + ((size_t)py * (size_t)w + (size_t)px) * (size_t)a->words;
          for (int oy = -b; oy <= b; ++oy)
            for (int ox = -b; ox <= b; ++ox) {
              const int bit = lull_rhf_offset_bit(ox, oy, b);
              if (!(m[bit >> 5] & (1u << (bit & 31))))
                continue;
              const size_t q = lull_rhf_at(x + ox, y + oy, w, h);
              for (int c = 0; c < 3; ++c)
                acc[c] += s->u[c][q];
              ++count;
            }
        }
      for (int c = 0; c < 3; ++c) /* count >= 1: p = x, q = p is similar */
        s->f[c][i] = acc[c] / (float)count;
      break;
    }
    case LULL_RHF_DOWN: {
      const lull_rhf_scale* o = &a->coarse;
      const size_t ci = (size_t)y * (size_t)o->w + (size_t)x, cn = (size_t)o->w * (size_t)o->h;
      for (int c = 0; c < 3; ++c)
        o->u[c][ci] = lull_rhf_down(s->u[c], w, h, x, y, 1);
      for (int k = 0; k < 3 * a->bins; ++k)
        o->hist[(size_t)k * cn + ci] = lull_rhf_down(s->hist + (size_t)k * plane, w, h, x, y, 0);
      break;
    }
    case LULL_RHF_FUSE_DOWN: {
      const lull_rhf_scale* o = &a->coarse;
      for (int c = 0; c < 3; ++c)
        o->du[c][(size_t)y * (size_t)o->w + (size_t)x] = lull_rhf_down(s->f[c], w, h, x, y, 1);
      break;
    }
    case LULL_RHF_FUSE: {
      const lull_rhf_scale* o = &a->coarse;
      for (int c = 0; c < 3; ++c)
        s->r[c][i] = s->f[c][i] - lull_rhf_up(o->du[c], o->w, o->h, x, y) +
                     lull_rhf_up(o->r[c], o->w, o->h, x, y);
      break;
    }
    case LULL_RHF_COPY:
      for (int c = 0; c < 3; ++c)
        s->r[c][i] = s->f[c][i];
      break;
    default:
      break;
  }
}
