/* The edge-avoiding à-trous filter on the CPU.
 *
 * Scheduling only: the per-pixel formulas are in atrous_math.h.  The image
 * lives in planar float arrays (one array per channel) so that the inner
 * loop, which applies one of the 25 taps to a whole row, reads contiguous
 * memory and vectorises; taps that fall outside the image are skipped by
 * shrinking the x range of the row instead of testing every pixel.  Rows are
 * distributed over OpenMP threads; each thread owns its accumulator rows. */
#include "atrous.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atrous_math.h"
#include "image_rows.h"
#include "planes.h"
#include "threads.h"

#if defined(__GNUC__)
  #define LULL_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
  #define LULL_ALWAYS_INLINE inline
#endif

lull_atrous_params lull_atrous_default_params(void)
{
  lull_atrous_params p;
  p.iterations = 5;
  p.color_mode = LULL_ATROUS_COLOR_VARIANCE;
  p.sigma_color = 1.0f;
  /* Chosen on the test renders (tests/data: 3 Cycles scenes at 4, 16 and
   * 64 spp; README "Quality"): the optimum is flat, these sit inside it.
   * The guides of a Cycles render are noisy under depth of field and
   * glossy reflection, which favours soft normal and albedo tests. */
  p.sigma_luminance = 1.5f;
  p.sigma_normal = 0.5f;
  p.sigma_depth = 4.0f;
  p.sigma_albedo = 0.3f;
  p.demodulate = 1;
  p.input_scale = NAN; /* automatic */
  p.srgb = 0;
  p.clamp_output = 0;
  p.nonnegative = 0;
  p.packed_guides = 0;
  p.memory_cap = 0;
  p.variance_fallback = 0;
  return p;
}

static int same_size(const lull_image* a, const lull_image* b)
{
  return a->width == b->width && a->height == b->height;
}

lull_status lull_atrous_validate(const lull_atrous_params* params,
                                 const lull_atrous_images* images, lull_error* err)
{
  const lull_image* color = &images->color;
  if (!color->data)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "input image not specified");
  if (!images->output.data)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "output image not specified");
  if (lull_format_channels(color->format) != lull_format_channels(images->output.format))
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "input/output image channel count mismatch");
  const lull_image* optional[] = {&images->albedo, &images->normal, &images->depth,
                                  &images->position, &images->variance, &images->output};
  for (size_t i = 0; i < sizeof optional / sizeof optional[0]; ++i)
    if (optional[i]->data && !same_size(optional[i], color))
      return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "image size mismatch");
  /* albedo and normal of 1 or 2 channels read as OIDN reads them
   * (lull_expand_rgb); a position needs its 3 coordinates */
  if (images->position.data && lull_format_channels(images->position.format) < 3)
    return lull_fail(err, LULL_ERROR_INVALID_OPERATION, "position image must have 3 channels");
  if (params->iterations < 1 || params->iterations > LULL_ATROUS_MAX_ITERATIONS)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "iterations must be in [1, %d]",
                     LULL_ATROUS_MAX_ITERATIONS);
  if (params->color_mode != LULL_ATROUS_COLOR_FIXED &&
      params->color_mode != LULL_ATROUS_COLOR_VARIANCE)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "unknown colorMode %d", params->color_mode);
  /* normal: the finish step divides by it (a subnormal scale made inf) */
  if (!isnan(params->input_scale) &&
      (!(params->input_scale >= FLT_MIN) || !isfinite(params->input_scale)))
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT,
                     "inputScale must be a normal positive finite float");
  return LULL_OK;
}

int lull_atrous_scale_is_auto(const lull_atrous_params* params)
{
  return isnan(params->input_scale) && params->color_mode == LULL_ATROUS_COLOR_VARIANCE &&
         !params->srgb;
}

lull_status lull_atrous_input_scale(const lull_atrous_params* params, const lull_image* color,
                                   int num_threads, float* scale, lull_error* err)
{
  *scale = isnan(params->input_scale) ? 1.0f : params->input_scale;
  if (!lull_atrous_scale_is_auto(params))
    return LULL_OK;
  /* the colour channels of every pixel, a row at a time (a fourth channel
   * is alpha and does not count) */
  const int w = color->width, h = color->height;
  const int channels = LULL_MIN(lull_format_channels(color->format), 3);
  unsigned long long sum = 0, count = 0;
  int failed = 0;
  float largest = 0.0f; /* the largest finite magnitude */
#pragma omp parallel num_threads(lull_thread_count(num_threads)) \
    reduction(+ : sum, count, failed) reduction(max : largest)
  {
    float* row = malloc((size_t)w * 3 * sizeof(float));
    failed = row == NULL;
#pragma omp for schedule(static)
    for (int y = 0; y < h; ++y) {
      if (!row)
        continue;
      float* const planes[4] = {row, row + w, row + 2 * (size_t)w, NULL};
      lull_image_read_row(color, y, planes, channels);
      for (int c = 0; c < channels; ++c)
        for (int x = 0; x < w; ++x) {
          const float v = planes[c][x];
          lull_auto_scale_add(v, &sum, &count);
          if (isfinite(v))
            largest = fmaxf(largest, fabsf(v));
        }
    }
    free(row);
  }
  if (failed)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  *scale = lull_auto_scale(sum, count, largest);
  return LULL_OK;
}

/* Planes of the working image.  Colour, luminance and variance are double
 * buffered (level input, level output); the guides are read-only. */
enum
{
  P_R, P_G, P_B, P_L, P_V,             /* level input */
  P_R2, P_G2, P_B2, P_L2, P_V2,        /* level output */
  P_INV_L,                             /* 1 / (sigma_l sqrt(g3x3 Var) + eps) per level */
  P_GL,                                /* g3x3(luminance): the colour test's guide */
  P_NX, P_NY, P_NZ, P_NM,              /* unit normal, "missing" flag */
  P_GX, P_GY, P_GZ,                    /* depth (GX only) or position */
  P_INV_G,                             /* 1 / (sigma_g s_p)^2 */
  P_AR, P_AG, P_AB,                    /* albedo */
  P_ALPHA,                             /* 4th colour channel, copied through */
  P_ZERO,                              /* stands in for an absent guide */
  P_COUNT
};

size_t lull_atrous_cpu_scratch_bytes(const lull_atrous_images* images)
{
  return lull_planes_bytes((size_t)images->color.width, (size_t)images->color.height, P_COUNT);
}

typedef struct atrous_setup
{
  int width, height, channels; /* colour channels filtered (1..3) */
  int threads;                 /* OpenMP threads of every parallel loop */
  int has_alpha, has_albedo, has_normal, has_geometry, demodulate;
  int geometry_planes;         /* 3 for position, 1 for depth (or none) */
  float k_normal;              /* 1 / sigma_n^2, 0 when disabled */
  float k_albedo;              /* 1 / sigma_a^2, 0 when disabled */
  float input_scale;           /* lull_atrous_input_scale */
} atrous_setup;

/* -- prepare ------------------------------------------------------------- */

/* One row of prepare_color's first pass, in place on the rows read. */
typedef struct color_row_args
{
  float *r, *g, *b, *l;
  const float *ar, *ag, *ab;
  int width;
  float scale;
  int demodulate, channels, nonnegative;
} color_row_args;

/* Returns the number of non-finite pixels; `srgb` is a constant of each
 * caller, so the linear variant (no powf) vectorises. */
static LULL_ALWAYS_INLINE int color_row(const color_row_args* a, const int srgb)
{
  float* LULL_RESTRICT r = a->r;
  float* LULL_RESTRICT g = a->g;
  float* LULL_RESTRICT b = a->b;
  float* LULL_RESTRICT l = a->l;
  int nonfinite = 0;
#pragma omp simd reduction(+ : nonfinite)
  for (int x = 0; x < a->width; ++x) {
    const int ok = lull_isfinite3(r[x], g[x], b[x]);
    nonfinite += !ok;
    /* dividing by 1 without demodulation changes no bit */
    const float dr = a->demodulate ? lull_demodulation_albedo(a->ar[x]) : 1.0f;
    const float dg = a->demodulate ? lull_demodulation_albedo(a->ag[x]) : 1.0f;
    const float db = a->demodulate ? lull_demodulation_albedo(a->ab[x]) : 1.0f;
    const float cr = lull_prepare_color_channel(ok ? r[x] : 0.0f, a->scale, srgb, a->nonnegative) / dr;
    const float cg = lull_prepare_color_channel(ok ? g[x] : 0.0f, a->scale, srgb, a->nonnegative) / dg;
    const float cb = lull_prepare_color_channel(ok ? b[x] : 0.0f, a->scale, srgb, a->nonnegative) / db;
    r[x] = cr;
    g[x] = cg;
    b[x] = cb;
    l[x] = lull_luminance_of(a->channels, cr, cg, cb);
  }
  return nonfinite;
}

LULL_TARGET_CLONES
static int color_row_linear(const color_row_args* a)
{
  return color_row(a, 0);
}

static int color_row_srgb(const color_row_args* a)
{
  return color_row(a, 1);
}

/* Reads colour, applies clamp, scale and sRGB, replaces non-finite pixels
 * by the mean of the finite pixels in their 5x5 neighbourhood, demodulates
 * and computes the luminance.  One pass over the planes does all of it for
 * finite pixels; the (rare) non-finite ones are counted and fixed in a
 * second pass, which finds them and reads their neighbours in the input
 * again (the same function of the same input gives the same prepared
 * value), so an image without them is read and written once (the four
 * passes before took 13.6 ms at 1080p on 2 cores). */
static void prepare_color(const lull_atrous_params* params, const lull_atrous_images* images,
                          const atrous_setup* s, lull_planes* pl)
{
  const int w = s->width, h = s->height;
  float* r = lull_plane(pl, P_R);
  float* g = lull_plane(pl, P_G);
  float* b = lull_plane(pl, P_B);
  float* l = lull_plane(pl, P_L);
  /* 3-channel colour leaves P_ALPHA aliased to the zero plane */
  float* alpha = s->has_alpha ? lull_plane(pl, P_ALPHA) : NULL;
  const float* ar = lull_plane_c(pl, P_AR);
  const float* ag = lull_plane_c(pl, P_AG);
  const float* ab = lull_plane_c(pl, P_AB);
  const float scale = s->input_scale;
  const int srgb = params->srgb;

  long nonfinite = 0;
#pragma omp parallel for schedule(static) num_threads(s->threads) reduction(+ : nonfinite)
  for (int y = 0; y < h; ++y) {
    const size_t row = (size_t)y * (size_t)w;
    float* const planes[4] = {r + row, g + row, b + row, alpha ? alpha + row : NULL};
    lull_image_read_row(&images->color, y, planes, 4);
    const color_row_args a = {r + row, g + row, b + row, l + row, ar + row, ag + row, ab + row,
                              w, scale, s->demodulate, s->channels, params->nonnegative};
    nonfinite += srgb ? color_row_srgb(&a) : color_row_linear(&a);
  }
  if (nonfinite == 0)
    return;

  /* inpaint non-finite pixels from finite neighbours (they never spread:
   * only finite values are averaged) */
#pragma omp parallel for schedule(static) num_threads(s->threads)
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      float c[4];
      lull_image_load(&images->color, x, y, c);
      if (lull_isfinite3(c[0], c[1], c[2]))
        continue;
      float sum[3] = {0, 0, 0}, n = 0;
      for (int dy = -LULL_INPAINT_RADIUS; dy <= LULL_INPAINT_RADIUS; ++dy)
        for (int dx = -LULL_INPAINT_RADIUS; dx <= LULL_INPAINT_RADIUS; ++dx) {
          const int xx = x + dx, yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h)
            continue;
          float q[4];
          lull_image_load(&images->color, xx, yy, q);
          if (!lull_isfinite3(q[0], q[1], q[2]))
            continue;
          for (int k = 0; k < 3; ++k)
            sum[k] += lull_prepare_color_channel(q[k], scale, srgb, params->nonnegative);
          n += 1;
        }
      const float inv = n > 0 ? 1.0f / n : 0.0f;
      c[0] = sum[0] * inv;
      c[1] = sum[1] * inv;
      c[2] = sum[2] * inv;
      if (s->demodulate) {
        c[0] /= lull_demodulation_albedo(ar[i]);
        c[1] /= lull_demodulation_albedo(ag[i]);
        c[2] /= lull_demodulation_albedo(ab[i]);
      }
      r[i] = c[0];
      g[i] = c[1];
      b[i] = c[2];
      l[i] = lull_luminance_of(s->channels, c[0], c[1], c[2]);
    }
  }
}

/* Reads albedo and normals; non-finite components become 0. */
static void prepare_guides(const lull_atrous_images* images, const atrous_setup* s,
                           lull_planes* pl)
{
  const int w = s->width, h = s->height;
#pragma omp parallel for schedule(static) num_threads(s->threads)
  for (int y = 0; y < h; ++y) {
    const size_t row = (size_t)y * (size_t)w;
    if (s->has_albedo) {
      float* const a[3] = {lull_plane(pl, P_AR) + row, lull_plane(pl, P_AG) + row,
                           lull_plane(pl, P_AB) + row};
      lull_image_read_row_rgb(&images->albedo, y, a);
      for (int k = 0; k < 3; ++k)
        for (int x = 0; x < w; ++x)
          a[k][x] = (a[k][x] - a[k][x]) == 0.0f ? a[k][x] : 0.0f; /* non-finite: 0 */
    }
    if (s->has_normal) {
      float* nx = lull_plane(pl, P_NX) + row;
      float* ny = lull_plane(pl, P_NY) + row;
      float* nz = lull_plane(pl, P_NZ) + row;
      float* nm = lull_plane(pl, P_NM) + row;
      float* const n[3] = {nx, ny, nz};
      lull_image_read_row_rgb(&images->normal, y, n);
      for (int x = 0; x < w; ++x) {
        float v[3] = {nx[x], ny[x], nz[x]};
        for (int k = 0; k < 3; ++k)
          v[k] = (v[k] - v[k]) == 0.0f ? v[k] : 0.0f;
        nm[x] = lull_normalize_normal(v);
        nx[x] = v[0];
        ny[x] = v[1];
        nz[x] = v[2];
      }
    }
  }
}

/* The geometry planes: depth in x (y and z NULL), or a position. */
typedef struct geometry_planes
{
  const float *x, *y, *z;
} geometry_planes;

/* |g_j - g_i|, the distance lull_geometry_footprint takes */
static inline float geometry_distance(const geometry_planes* g, size_t i, size_t j)
{
  const float dx = g->x[j] - g->x[i];
  if (!g->y) /* a constant where geometry_row_interior inlines it */
    return sqrtf(dx * dx);
  const float dy = g->y[j] - g->y[i], dz = g->z[j] - g->z[i];
  return sqrtf(dx * dx + dy * dy + dz * dz);
}

static inline float geometry_magnitude(const geometry_planes* g, size_t i)
{
  if (!g->y)
    return fabsf(g->x[i]);
  return sqrtf(g->x[i] * g->x[i] + g->y[i] * g->y[i] + g->z[i] * g->z[i]);
}

/* 1 / (sigma_g s_p)^2 at any pixel (x, y), borders mirrored as
 * lull_footprint_neighbours says. */
static float geometry_inv_scale2(const geometry_planes* g, int x, int y, int w, int h,
                                 float sigma)
{
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  int xs[4], ys[4];
  lull_footprint_neighbours(x, y, w, h, xs, ys);
  float d[4];
  for (int k = 0; k < 4; ++k) {
    if (xs[k] < 0 || xs[k] >= w || ys[k] < 0 || ys[k] >= h) {
      d[k] = 0.0f; /* 1-pixel-wide image: no neighbour on this axis */
      continue;
    }
    d[k] = geometry_distance(g, i, (size_t)ys[k] * (size_t)w + (size_t)xs[k]);
  }
  return lull_geometry_inv_scale2(
      sigma, lull_geometry_footprint(d[0], d[1], d[2], d[3], geometry_magnitude(g, i)));
}

/* 1 / (sigma_g s_p)^2 for pixels [1, w - 1) of a row whose four
 * neighbours all lie inside the image: no mirroring, a loop that
 * vectorises (the general path took 7.3 ms at 1080p on 2 cores).  Inlined
 * once per geometry kind, so the depth-or-position test leaves the loop. */
static LULL_ALWAYS_INLINE void geometry_row_interior(const geometry_planes* g, size_t row, int w,
                                                     float sigma, float* LULL_RESTRICT inv_g)
{
  const size_t ws = (size_t)w;
#pragma omp simd
  for (int x = 1; x < w - 1; ++x) {
    const size_t i = row + (size_t)x;
    const float fp = lull_geometry_footprint(
        geometry_distance(g, i, i - 1), geometry_distance(g, i, i + 1),
        geometry_distance(g, i, i - ws), geometry_distance(g, i, i + ws),
        geometry_magnitude(g, i));
    inv_g[i] = lull_geometry_inv_scale2(sigma, fp);
  }
}

/* Reads depth or position and computes 1 / (sigma_g s_p)^2. */
static void prepare_geometry(const lull_atrous_params* params, const lull_atrous_images* images,
                             const atrous_setup* s, lull_planes* pl)
{
  const int w = s->width, h = s->height;
  const int use_depth = images->depth.data != NULL;
  const lull_image* src = use_depth ? &images->depth : &images->position;
  float* gx = lull_plane(pl, P_GX);
  float* gy = use_depth ? NULL : lull_plane(pl, P_GY);
  float* gz = use_depth ? NULL : lull_plane(pl, P_GZ);
#pragma omp parallel for schedule(static) num_threads(s->threads)
  for (int y = 0; y < h; ++y) {
    const size_t row = (size_t)y * (size_t)w;
    float* const planes[4] = {gx + row, use_depth ? NULL : gy + row, use_depth ? NULL : gz + row,
                              NULL};
    const int n = use_depth ? 1 : 3;
    lull_image_read_row(src, y, planes, n);
    for (int k = 0; k < n; ++k)
      for (int x = 0; x < w; ++x)
        planes[k][x] = (planes[k][x] - planes[k][x]) == 0.0f ? planes[k][x] : 0.0f;
  }

  float* inv_g = lull_plane(pl, P_INV_G);
  const float sigma = params->sigma_depth;
  const geometry_planes g = {gx, gy, gz};
#pragma omp parallel for schedule(static) num_threads(s->threads)
  for (int y = 0; y < h; ++y) {
    const size_t row = (size_t)y * (size_t)w;
    if (y > 0 && y < h - 1) {
      /* all four neighbours inside: no mirroring, a loop that vectorises
       * (the general path below took 8 ms at 1080p on 2 cores) */
      if (use_depth) /* NULL as a constant: the inlined loop has no test */
        geometry_row_interior(&(geometry_planes){gx, NULL, NULL}, row, w, sigma, inv_g);
      else
        geometry_row_interior(&g, row, w, sigma, inv_g);
      inv_g[row] = geometry_inv_scale2(&g, 0, y, w, h, sigma);
      inv_g[row + (size_t)w - 1] = geometry_inv_scale2(&g, w - 1, y, w, h, sigma);
      continue;
    }
    for (int x = 0; x < w; ++x)
      inv_g[row + (size_t)x] = geometry_inv_scale2(&g, x, y, w, h, sigma);
  }
}

/* -- one tap applied to one row ------------------------------------------ */

/* The guides' terms of a tap's exponent (normal, geometry, albedo) added to
 * e in the rearranged form of atrous_math.h (lull_tap_constant), in the
 * order of cuda/atrous_common.cuh: the centre's normal and flag are times
 * -2 k_n; cig = 1 / (sigma_g s_p)^2.  Depth leaves the y and z geometry
 * at zero, which adds exactly 0. */
static LULL_ALWAYS_INLINE float add_guide_terms(float e, float cnx, float cny,
                                                float cnz, float cnm, float qnx, float qny,
                                                float qnz, float qnm, float cig, float cgx,
                                                float cgy, float cgz, float qgx, float qgy,
                                                float qgz, float inv_d2, float car, float cag,
                                                float cab, float qar, float qag, float qab,
                                                float k_albedo, const int position)
{
  e += lull_normal_dot(cnx, cny, cnz, cnm, qnx, qny, qnz, qnm);
  const float dgx = cgx - qgx;
  float distance2 = dgx * dgx;
  if (position) {
    const float dgy = cgy - qgy, dgz = cgz - qgz;
    distance2 = dgx * dgx + dgy * dgy + dgz * dgz;
  }
  e += lull_edge_geometry(distance2, cig, inv_d2);
  return e + lull_edge_albedo(car - qar, cag - qag, cab - qab, k_albedo);
}

/* Pointers for the row-at-a-time path: the centre row (c*; normal and
 * flag scaled as add_guide_terms takes them) and
 * the tap row (q*, already offset by the tap's dx so index x reads pixel
 * q). */
typedef struct tap_rows
{
  const float *cl, *cgl, *cinv_l, *cnx, *cny, *cnz, *cnm, *cig, *cgx, *cgy, *cgz, *car, *cag,
      *cab;
  const float *ql, *qgl, *qr, *qg, *qb, *qv, *qnx, *qny, *qnz, *qnm, *qgx, *qgy, *qgz, *qar, *qag,
      *qab;
  float *sw, *sr, *sg, *sb, *sv;
} tap_rows;

/* The guide arguments of add_guide_terms at pixel x of t */
#define TAP_ROW_GUIDES(t, x)                                                                   \
  (t)->cnx[x], (t)->cny[x], (t)->cnz[x], (t)->cnm[x], (t)->qnx[x], (t)->qny[x], (t)->qnz[x],   \
      (t)->qnm[x], (t)->cig[x], (t)->cgx[x], (t)->cgy[x], (t)->cgz[x], (t)->qgx[x],            \
      (t)->qgy[x], (t)->qgz[x]

/* One tap over pixels [x0, x1) of a row, colour test variance-guided
 * (fixed = 0) or fixed (k_color = 1 / sigma_i^2; cr, cg, cb the centre
 * row's colour); c = lull_tap_constant of the tap. */
static LULL_ALWAYS_INLINE void tap_row_body(const tap_rows* t, int x0, int x1, float c,
                                            float inv_d2, float k_albedo, const int fixed,
                                            float k_color, const float* cr, const float* cg,
                                            const float* cb)
{
  float* LULL_RESTRICT sw = t->sw;
  float* LULL_RESTRICT sr = t->sr;
  float* LULL_RESTRICT sg = t->sg;
  float* LULL_RESTRICT sb = t->sb;
  float* LULL_RESTRICT sv = t->sv;
#pragma omp simd
  for (int x = x0; x < x1; ++x) {
    const float e_color =
        fixed ? lull_edge_color_fixed(cr[x] - t->qr[x], cg[x] - t->qg[x], cb[x] - t->qb[x],
                                      k_color)
              : lull_edge_luminance(t->cgl[x], t->qgl[x], t->cinv_l[x]);
    const float e = add_guide_terms(e_color + c, TAP_ROW_GUIDES(t, x), inv_d2,
                                    t->car[x], t->cag[x], t->cab[x], t->qar[x], t->qag[x],
                                    t->qab[x], k_albedo, 1);
    const float wgt = lull_edge_weight(e);
    sw[x] += wgt;
    sr[x] += wgt * t->qr[x];
    sg[x] += wgt * t->qg[x];
    sb[x] += wgt * t->qb[x];
    sv[x] += wgt * wgt * t->qv[x];
  }
}

LULL_TARGET_CLONES
static void tap_row_variance(const tap_rows* t, int x0, int x1, float c, float inv_d2,
                             float k_albedo)
{
  tap_row_body(t, x0, x1, c, inv_d2, k_albedo, 0, 0.0f, NULL, NULL, NULL);
}

LULL_TARGET_CLONES
static void tap_row_fixed(const tap_rows* t, int x0, int x1, float c, float inv_d2,
                          float k_albedo, float k_color, const float* cr,
                          const float* cg, const float* cb)
{
  tap_row_body(t, x0, x1, c, inv_d2, k_albedo, 1, k_color, cr, cg, cb);
}

/* -- variance ------------------------------------------------------------ */

/* Moments of the luminance around each pixel of a row for one tap,
 * weighted by the guides only (normal, depth/position, albedo; no colour):
 * sw += w, sd += w d, sd2 += w d^2 with d = l_q - l_p (centred, so the
 * variance E[d^2] - E[d]^2 keeps its precision in float); c =
 * lull_tap_constant(k_n, 1). */
LULL_TARGET_CLONES
static void tap_row_moments(const tap_rows* t, int x0, int x1, float c, float inv_d2,
                            float k_albedo)
{
  float* LULL_RESTRICT sw = t->sw;
  float* LULL_RESTRICT sd = t->sr;
  float* LULL_RESTRICT sd2 = t->sg;
#pragma omp simd
  for (int x = x0; x < x1; ++x) {
    const float e = add_guide_terms(c, TAP_ROW_GUIDES(t, x), inv_d2, t->car[x],
                                    t->cag[x], t->cab[x], t->qar[x], t->qag[x], t->qab[x],
                                    k_albedo, 1);
    const float wgt = lull_edge_weight(e);
    const float d = t->ql[x] - t->cl[x];
    sw[x] += wgt;
    sd[x] += wgt * d;
    sd2[x] += wgt * d * d;
  }
}

/* Points the centre-row pointers of t at row y: the planes, but the scaled
 * normal and flag of the pixels [0, xa) and [xb, w) computed into the
 * thread's scratch rows (4 rows after the 5 accumulator rows), as the
 * interior kernels scale them per centre. */
static void tap_rows_center(tap_rows* t, const lull_planes* pl, size_t row, float minus_2k,
                            float* scaled, size_t width, int xa, int xb)
{
  const float* nx = lull_plane_c(pl, P_NX) + row;
  const float* ny = lull_plane_c(pl, P_NY) + row;
  const float* nz = lull_plane_c(pl, P_NZ) + row;
  const float* nm = lull_plane_c(pl, P_NM) + row;
  float* out[4];
  for (int k = 0; k < 4; ++k)
    out[k] = scaled + (size_t)k * width;
  const int segments[2][2] = {{0, xa}, {xb, (int)width}};
  for (int k = 0; k < 2; ++k)
    for (int x = segments[k][0]; x < segments[k][1]; ++x) {
      out[0][x] = nx[x] * minus_2k;
      out[1][x] = ny[x] * minus_2k;
      out[2][x] = nz[x] * minus_2k;
      out[3][x] = nm[x] * minus_2k;
    }
  t->cnx = out[0];
  t->cny = out[1];
  t->cnz = out[2];
  t->cnm = out[3];
  t->cig = lull_plane_c(pl, P_INV_G) + row;
  t->cgx = lull_plane_c(pl, P_GX) + row;
  t->cgy = lull_plane_c(pl, P_GY) + row;
  t->cgz = lull_plane_c(pl, P_GZ) + row;

  t->cl = lull_plane_c(pl, P_L) + row;
  t->cgl = lull_plane_c(pl, P_GL) + row;
  t->cinv_l = lull_plane_c(pl, P_INV_L) + row;
  t->car = lull_plane_c(pl, P_AR) + row;
  t->cag = lull_plane_c(pl, P_AG) + row;
  t->cab = lull_plane_c(pl, P_AB) + row;
}

/* Points the tap-row pointers of t at pixel offset q (row start + dx). */
static void tap_rows_tap(tap_rows* t, const lull_planes* pl, ptrdiff_t q)
{
  t->ql = lull_plane_c(pl, P_L) + q;
  t->qgl = lull_plane_c(pl, P_GL) + q;
  t->qr = lull_plane_c(pl, P_R) + q;
  t->qg = lull_plane_c(pl, P_G) + q;
  t->qb = lull_plane_c(pl, P_B) + q;
  t->qv = lull_plane_c(pl, P_V) + q;
  t->qnx = lull_plane_c(pl, P_NX) + q;
  t->qny = lull_plane_c(pl, P_NY) + q;
  t->qnz = lull_plane_c(pl, P_NZ) + q;
  t->qnm = lull_plane_c(pl, P_NM) + q;
  t->qgx = lull_plane_c(pl, P_GX) + q;
  t->qgy = lull_plane_c(pl, P_GY) + q;
  t->qgz = lull_plane_c(pl, P_GZ) + q;
  t->qar = lull_plane_c(pl, P_AR) + q;
  t->qag = lull_plane_c(pl, P_AG) + q;
  t->qab = lull_plane_c(pl, P_AB) + q;
}

/* Accumulator rows of the calling thread, zeroed on [0, x0) and [x1, width)
 * (the pixels the row-at-a-time path accumulates); returns the thread's
 * rows after them (for tap_rows_center). */
static float* tap_rows_accumulators(tap_rows* t, float* scratch_rows, size_t scratch_stride,
                                    size_t width, size_t x0, size_t x1)
{
  float* acc = scratch_rows + (size_t)lull_thread_index() * scratch_stride;
  for (int k = 0; k < 5; ++k) {
    memset(acc + (size_t)k * width, 0, x0 * sizeof(float));
    memset(acc + (size_t)k * width + x1, 0, (width - x1) * sizeof(float));
  }
  t->sw = acc;
  t->sr = acc + width;
  t->sg = acc + 2 * width;
  t->sb = acc + 3 * width;
  t->sv = acc + 4 * width;
  return acc + 5 * width;
}

/* Lanes of the interior kernels: one AVX-512 vector, two AVX2 vectors. */
enum { LANES = 16 };


/* The 25 taps of a level as offsets into the planes, with their constants
 * (lull_tap_constant: 2 k_n + ln(1 / h) for the B3 weight h, or 2 k_n for
 * the variance estimate's unweighted taps) and inverse squared pixel
 * distances. */
typedef struct level_taps
{
  ptrdiff_t offset[25];
  float c[25];
  float inv_d2[25];
} level_taps;

static void level_taps_init(level_taps* taps, int step, size_t width, float k_normal,
                            int b3_weights)
{
  int k = 0;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx, ++k) {
      taps->offset[k] = (ptrdiff_t)dy * step * (ptrdiff_t)width + (ptrdiff_t)dx * step;
      taps->c[k] =
          lull_tap_constant(k_normal, b3_weights ? lull_b3_tap(dx) * lull_b3_tap(dy) : 1.0f);
      const int d2 = (dx * dx + dy * dy) * step * step;
      taps->inv_d2[k] = d2 ? 1.0f / (float)d2 : 0.0f;
    }
}

/* The variance estimate for blocks of LANES interior pixels (all 25 taps
 * inside): the moments of tap_row_moments kept in registers, as in
 * interior_body below. */
static LULL_ALWAYS_INLINE void moments_body(const lull_planes* pl, size_t row, int xa,
                                            int blocks, const level_taps* taps, float minus_2k,
                                            float k_albedo, float* LULL_RESTRICT v)
{
  const float* LULL_RESTRICT pl_ = lull_plane_c(pl, P_L);
  const float* LULL_RESTRICT pnx = lull_plane_c(pl, P_NX);
  const float* LULL_RESTRICT pny = lull_plane_c(pl, P_NY);
  const float* LULL_RESTRICT pnz = lull_plane_c(pl, P_NZ);
  const float* LULL_RESTRICT pnm = lull_plane_c(pl, P_NM);
  const float* LULL_RESTRICT pgx = lull_plane_c(pl, P_GX);
  const float* LULL_RESTRICT pgy = lull_plane_c(pl, P_GY);
  const float* LULL_RESTRICT pgz = lull_plane_c(pl, P_GZ);
  const float* LULL_RESTRICT pinv_g = lull_plane_c(pl, P_INV_G);
  const float* LULL_RESTRICT par = lull_plane_c(pl, P_AR);
  const float* LULL_RESTRICT pag = lull_plane_c(pl, P_AG);
  const float* LULL_RESTRICT pab = lull_plane_c(pl, P_AB);
  for (int b = 0; b < blocks; ++b) {
    const size_t i0 = row + (size_t)xa + (size_t)b * LANES;
    float cl[LANES], cnx[LANES], cny[LANES], cnz[LANES], cnm[LANES];
    float cig[LANES], cgx[LANES], cgy[LANES], cgz[LANES], car[LANES], cag[LANES], cab[LANES];
    float sw[LANES], sd[LANES], sd2[LANES];
#pragma omp simd
    for (int l = 0; l < LANES; ++l) {
      const size_t i = i0 + (size_t)l;
      cl[l] = pl_[i];
      cnx[l] = pnx[i] * minus_2k;
      cny[l] = pny[i] * minus_2k;
      cnz[l] = pnz[i] * minus_2k;
      cnm[l] = pnm[i] * minus_2k;
      cig[l] = pinv_g[i];
      cgx[l] = pgx[i];
      cgy[l] = pgy[i];
      cgz[l] = pgz[i];
      car[l] = par[i];
      cag[l] = pag[i];
      cab[l] = pab[i];
      sw[l] = sd[l] = sd2[l] = 0.0f;
    }
#pragma GCC unroll 1
    for (int k = 0; k < 25; ++k) {
      const size_t q0 = (size_t)((ptrdiff_t)i0 + taps->offset[k]);
      const float c = taps->c[k], inv_d2 = taps->inv_d2[k];
#pragma omp simd
      for (int l = 0; l < LANES; ++l) {
        const size_t j = q0 + (size_t)l;
        const float e = add_guide_terms(
            c, cnx[l], cny[l], cnz[l], cnm[l], pnx[j], pny[j], pnz[j], pnm[j], cig[l],
            cgx[l], cgy[l], cgz[l], pgx[j], pgy[j], pgz[j], inv_d2, car[l], cag[l], cab[l],
            par[j], pag[j], pab[j], k_albedo, 1);
        const float wgt = lull_edge_weight(e);
        const float d = pl_[j] - cl[l];
        sw[l] += wgt;
        sd[l] += wgt * d;
        sd2[l] += wgt * d * d;
      }
    }
#pragma omp simd
    for (int l = 0; l < LANES; ++l)
      v[i0 + (size_t)l] = lull_moments_variance(sw[l], sd[l], sd2[l]);
  }
}

/* One kernel for depth and position (depth's y and z planes are zero, and
 * add it exactly): GCC does not vectorise the tap loop of a depth-only
 * variant. */
LULL_TARGET_CLONES
static void moments_blocks(const lull_planes* pl, size_t row, int xa, int blocks,
                           const level_taps* taps, float minus_2k, float k_albedo, float* v)
{
  moments_body(pl, row, xa, blocks, taps, minus_2k, k_albedo, v);
}

/* The luminance variance of level 0 estimated from the luminance moments
 * of each pixel's 5x5 neighbourhood, weighted by the guides (SVGF §4.2
 * estimates spatially in the same way when temporal history is short),
 * into v. */
static void estimate_variance(const atrous_setup* s, lull_planes* pl, float* v,
                              float* scratch_rows, size_t scratch_stride)
{
  const int w = s->width, h = s->height;
  const size_t ws = (size_t)w;
  const float minus_2k = -2.0f * s->k_normal;
  level_taps taps;
  level_taps_init(&taps, 1, ws, s->k_normal, 0);
#pragma omp parallel for schedule(static) num_threads(s->threads)
  for (int y = 0; y < h; ++y) {
    const size_t row = (size_t)y * ws;
    /* interior blocks in registers, the rest row-at-a-time (as the levels) */
    int xa = w, xb = w;
    if (y >= 2 && y + 2 < h && 4 + LANES <= w) {
      const int blocks = (w - 4) / LANES;
      xa = 2;
      xb = 2 + blocks * LANES;
      moments_blocks(pl, row, xa, blocks, &taps, minus_2k, s->k_albedo, v);
    }
    tap_rows t;
    float* scaled =
        tap_rows_accumulators(&t, scratch_rows, scratch_stride, ws, (size_t)xa, (size_t)xb);
    tap_rows_center(&t, pl, row, minus_2k, scaled, ws, xa, xb);
    const int segments[2][2] = {{0, xa}, {xb, w}};
    for (int dy = -2; dy <= 2; ++dy) {
      const int yy = y + dy;
      if (yy < 0 || yy >= h)
        continue;
      for (int dx = -2; dx <= 2; ++dx) {
        tap_rows_tap(&t, pl, (ptrdiff_t)((size_t)yy * ws) + dx);
        const int tap = (dy + 2) * 5 + (dx + 2);
        for (int k = 0; k < 2; ++k) {
          const int x0 = LULL_MAX(segments[k][0], dx < 0 ? -dx : 0);
          const int x1 = LULL_MIN(segments[k][1], dx > 0 ? w - dx : w);
          if (x0 < x1)
            tap_row_moments(&t, x0, x1, taps.c[tap], taps.inv_d2[tap], s->k_albedo);
        }
      }
    }
    for (int k = 0; k < 2; ++k)
      for (int x = segments[k][0]; x < segments[k][1]; ++x)
        v[row + (size_t)x] = lull_moments_variance(t.sw[x], t.sr[x], t.sg[x]);
  }
}

/* Variance of the luminance of each pixel at level 0: from the variance
 * image when given, else estimated (estimate_variance); with
 * variance_fallback, estimated where the image's first channel is
 * negative. */
static void prepare_variance(const lull_atrous_params* params, const lull_atrous_images* images,
                             const atrous_setup* s, lull_planes* pl, float* scratch_rows,
                             size_t scratch_stride)
{
  const int w = s->width, h = s->height;
  float* v = lull_plane(pl, P_V);
  const float* ar = lull_plane_c(pl, P_AR);
  const float* ag = lull_plane_c(pl, P_AG);
  const float* ab = lull_plane_c(pl, P_AB);
  if (!images->variance.data) {
    estimate_variance(s, pl, v, scratch_rows, scratch_stride);
    return;
  }
  const int nc = lull_format_channels(images->variance.format);
  const int fallback = params->variance_fallback;
  long estimates = 0;
#pragma omp parallel for schedule(static) num_threads(s->threads) reduction(+ : estimates)
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      float c[4];
      lull_image_load(&images->variance, x, y, c);
      if (fallback && c[0] < 0.0f) {
        v[i] = -1.0f; /* a variance is never negative: marks the pixel */
        ++estimates;
        continue;
      }
      const float dr = s->demodulate ? lull_demodulation_albedo(ar[i]) : 1.0f;
      const float dg = s->demodulate ? lull_demodulation_albedo(ag[i]) : 1.0f;
      const float db = s->demodulate ? lull_demodulation_albedo(ab[i]) : 1.0f;
      v[i] = lull_variance_luminance(c, nc, dr, dg, db, s->input_scale);
    }
  if (estimates == 0)
    return;
  /* the level output's variance plane is free until the first level */
  float* e = lull_plane(pl, P_V2);
  estimate_variance(s, pl, e, scratch_rows, scratch_stride);
  const size_t n = (size_t)w * (size_t)h;
#pragma omp parallel for schedule(static) num_threads(s->threads)
  for (size_t i = 0; i < n; ++i)
    if (v[i] < 0.0f)
      v[i] = e[i];
}

/* The 3x3 binomial of prepare_level_guides along one row, renormalised at
 * the ends (the taps inside the row). */
LULL_TARGET_CLONES
static void binomial3_row(const float* LULL_RESTRICT in, float* LULL_RESTRICT out, int w)
{
  const float c = lull_binomial3_tap(0), e = lull_binomial3_tap(1);
  if (w == 1) {
    out[0] = in[0];
    return;
  }
  out[0] = (c * in[0] + e * in[1]) / (c + e);
  for (int x = 1; x < w - 1; ++x)
    out[x] = e * in[x - 1] + c * in[x] + e * in[x + 1];
  out[w - 1] = (e * in[w - 2] + c * in[w - 1]) / (c + e);
}

/* One output row of the level guides from the rows filtered along x above
 * (weight k0), at (the centre tap) and below (k2) the row */
LULL_TARGET_CLONES
static void level_guides_row(const float* const t_l[3], const float* const t_v[3], float k0,
                             float k2, float norm, float sigma, int w, float* LULL_RESTRICT gl,
                             float* LULL_RESTRICT inv_l)
{
  const float c = lull_binomial3_tap(0);
  const float* LULL_RESTRICT l0 = t_l[0];
  const float* LULL_RESTRICT l1 = t_l[1];
  const float* LULL_RESTRICT l2 = t_l[2];
  const float* LULL_RESTRICT v0 = t_v[0];
  const float* LULL_RESTRICT v1 = t_v[1];
  const float* LULL_RESTRICT v2 = t_v[2];
  for (int x = 0; x < w; ++x) {
    gl[x] = (k0 * l0[x] + c * l1[x] + k2 * l2[x]) * norm;
    inv_l[x] = lull_luminance_inv_scale(sigma, (k0 * v0[x] + c * v1[x] + k2 * v2[x]) * norm);
  }
}

/* The colour test's inputs for the current level (SVGF §4.4 prefilters the
 * variance with a 3x3 Gaussian; the luminance guide gets the same filter,
 * see atrous_math.h): g = g3x3(l) and 1 / (sigma_l sqrt(g3x3(Var)) + eps).
 * The 3x3 binomial is separable, and renormalising it at the border is
 * too (the taps inside form a product set).  Each thread takes a band of
 * rows and keeps the last three rows filtered along x in its scratch rows
 * (a ring), so each row is filtered once and nothing but the outputs goes
 * through memory (two whole-plane passes took 8.5 ms of a 1080p run on 2
 * cores, filtering three rows per output row 6.5 ms). */
static void prepare_level_guides(const lull_atrous_params* params, const atrous_setup* s,
                                 lull_planes* pl, float* scratch_rows, size_t scratch_stride)
{
  const int w = s->width, h = s->height;
  const size_t ws = (size_t)w;
  const float* l = lull_plane_c(pl, P_L);
  const float* v = lull_plane_c(pl, P_V);
  float* gl = lull_plane(pl, P_GL);
  float* inv_l = lull_plane(pl, P_INV_L);
  const float c = lull_binomial3_tap(0), e = lull_binomial3_tap(1);
  const float sigma = params->sigma_luminance;
  const int bands = s->threads, band = (h + bands - 1) / bands;
#pragma omp parallel for schedule(static) num_threads(s->threads)
  for (int b = 0; b < bands; ++b) {
    const int y0 = LULL_MIN(h, b * band), y1 = LULL_MIN(h, y0 + band);
    /* rows y - 1, y, y + 1 filtered along x: l in slots 0-2, v in 3-5 */
    float* ring = scratch_rows + (size_t)lull_thread_index() * scratch_stride;
    int filtered = y0 - 2; /* the last row filtered into the ring */
    for (int y = y0; y < y1; ++y) {
      for (int yy = LULL_MAX(filtered + 1, y - 1); yy <= y + 1; ++yy) {
        filtered = yy;
        if (yy < 0 || yy >= h)
          continue;
        const size_t src = (size_t)yy * ws, slot = (size_t)(yy % 3);
        binomial3_row(l + src, ring + slot * ws, w);
        binomial3_row(v + src, ring + (3 + slot) * ws, w);
      }
      /* a missing row above or below has weight 0 and stands in as row y */
      const int up = y > 0, down = y < h - 1;
      const int rows[3] = {up ? y - 1 : y, y, down ? y + 1 : y};
      const float* t_l[3];
      const float* t_v[3];
      for (int k = 0; k < 3; ++k) {
        const size_t slot = (size_t)(rows[k] % 3);
        t_l[k] = ring + slot * ws;
        t_v[k] = ring + (3 + slot) * ws;
      }
      const float k0 = up ? e : 0.0f, k2 = down ? e : 0.0f;
      const size_t row = (size_t)y * ws;
      level_guides_row(t_l, t_v, k0, k2, 1.0f / (c + k0 + k2), sigma, w, gl + row,
                       inv_l + row);
    }
  }
}

/* -- the levels ---------------------------------------------------------- */


/* Blocks of LANES pixels [xa, xa + LANES * blocks) of row `row` whose 25
 * taps all lie inside the image.  Each block keeps its accumulators in
 * registers across the taps and writes once, instead of the row-at-a-time
 * accumulation the borders need.  The tap loop stays a loop (the 16-lane
 * inner loops are what vectorises): unrolling it would give the compiler
 * 25 x 16 address streams to track, which it spills.  Same arithmetic and
 * tap order as the border path, so a pixel's value does not depend on the
 * path it takes. */

/* The body, specialised below for the colour test (fixed or variance),
 * the geometry (3 position planes or depth only) and the last level (no
 * luminance and variance for a next level) so each variant computes only
 * its own terms. */
static LULL_ALWAYS_INLINE void interior_body(const lull_planes* pl, size_t row, int xa,
                                             int blocks, const level_taps* taps, const int fixed,
                                             const int position, const int last, float k_color,
                                             float minus_2k, float k_albedo, int channels)
{
  const float* LULL_RESTRICT pr = lull_plane_c(pl, P_R);
  const float* LULL_RESTRICT pg = lull_plane_c(pl, P_G);
  const float* LULL_RESTRICT pb = lull_plane_c(pl, P_B);
  const float* LULL_RESTRICT pgl = lull_plane_c(pl, P_GL);
  const float* LULL_RESTRICT pv = lull_plane_c(pl, P_V);
  const float* LULL_RESTRICT pinv_l = lull_plane_c(pl, P_INV_L);
  const float* LULL_RESTRICT pnx = lull_plane_c(pl, P_NX);
  const float* LULL_RESTRICT pny = lull_plane_c(pl, P_NY);
  const float* LULL_RESTRICT pnz = lull_plane_c(pl, P_NZ);
  const float* LULL_RESTRICT pnm = lull_plane_c(pl, P_NM);
  const float* LULL_RESTRICT pgx = lull_plane_c(pl, P_GX);
  const float* LULL_RESTRICT pgy = lull_plane_c(pl, P_GY);
  const float* LULL_RESTRICT pgz = lull_plane_c(pl, P_GZ);
  const float* LULL_RESTRICT pinv_g = lull_plane_c(pl, P_INV_G);
  const float* LULL_RESTRICT par = lull_plane_c(pl, P_AR);
  const float* LULL_RESTRICT pag = lull_plane_c(pl, P_AG);
  const float* LULL_RESTRICT pab = lull_plane_c(pl, P_AB);
  float* LULL_RESTRICT r2 = ((lull_planes*)pl)->plane[P_R2];
  float* LULL_RESTRICT g2 = ((lull_planes*)pl)->plane[P_G2];
  float* LULL_RESTRICT b2 = ((lull_planes*)pl)->plane[P_B2];
  float* LULL_RESTRICT l2 = ((lull_planes*)pl)->plane[P_L2];
  float* LULL_RESTRICT v2 = ((lull_planes*)pl)->plane[P_V2];

  for (int b = 0; b < blocks; ++b) {
    const size_t i0 = row + (size_t)xa + (size_t)b * LANES;
    /* the centre's values, normal and geometry scaled (add_guide_terms) */
    float cgl[LANES], cinv_l[LANES], cr[LANES], cg[LANES], cb[LANES];
    float cnx[LANES], cny[LANES], cnz[LANES], cnm[LANES];
    float cig[LANES], cgx[LANES], cgy[LANES], cgz[LANES], car[LANES], cag[LANES], cab[LANES];
    float sw[LANES], sr[LANES], sg[LANES], sb[LANES], sv[LANES];
#pragma omp simd
    for (int l = 0; l < LANES; ++l) {
      const size_t i = i0 + (size_t)l;
      cgl[l] = pgl[i];
      cinv_l[l] = pinv_l[i];
      cr[l] = pr[i];
      cg[l] = pg[i];
      cb[l] = pb[i];
      cnx[l] = pnx[i] * minus_2k;
      cny[l] = pny[i] * minus_2k;
      cnz[l] = pnz[i] * minus_2k;
      cnm[l] = pnm[i] * minus_2k;
      cig[l] = pinv_g[i];
      cgx[l] = pgx[i];
      cgy[l] = position ? pgy[i] : 0.0f;
      cgz[l] = position ? pgz[i] : 0.0f;
      car[l] = par[i];
      cag[l] = pag[i];
      cab[l] = pab[i];
      sw[l] = sr[l] = sg[l] = sb[l] = sv[l] = 0.0f;
    }
#pragma GCC unroll 1
    for (int k = 0; k < 25; ++k) {
      const size_t q0 = (size_t)((ptrdiff_t)i0 + taps->offset[k]);
      const float c = taps->c[k], inv_d2 = taps->inv_d2[k];
#pragma omp simd
      for (int l = 0; l < LANES; ++l) {
        const size_t j = q0 + (size_t)l;
        const float e_color =
            fixed ? lull_edge_color_fixed(cr[l] - pr[j], cg[l] - pg[j], cb[l] - pb[j], k_color)
                  : lull_edge_luminance(cgl[l], pgl[j], cinv_l[l]);
        const float e = add_guide_terms(
            e_color + c, cnx[l], cny[l], cnz[l], cnm[l], pnx[j], pny[j], pnz[j],
            pnm[j], cig[l], cgx[l], cgy[l], cgz[l], pgx[j], pgy[j], pgz[j], inv_d2, car[l],
            cag[l], cab[l], par[j], pag[j], pab[j], k_albedo, position);
        const float wgt = lull_edge_weight(e);
        sw[l] += wgt;
        sr[l] += wgt * pr[j];
        sg[l] += wgt * pg[j];
        sb[l] += wgt * pb[j];
        if (!last)
          sv[l] += wgt * wgt * pv[j];
      }
    }
#pragma omp simd
    for (int l = 0; l < LANES; ++l) {
      const size_t i = i0 + (size_t)l;
      const lull_rgbv o = lull_normalise_sums(sw[l], sr[l], sg[l], sb[l], sv[l]);
      r2[i] = o.r;
      g2[i] = o.g;
      b2[i] = o.b;
      if (!last) {
        l2[i] = lull_luminance_of(channels, o.r, o.g, o.b);
        v2[i] = o.v;
      }
    }
  }
}

/* The eight interior kernels; each is compiled for AVX-512, AVX2 and SSE2. */
#define LULL_INTERIOR_KERNEL(name, fixed, position, last)                                  \
  LULL_TARGET_CLONES                                                                        \
  static void name(const lull_planes* pl, size_t row, int xa, int blocks,                   \
                   const level_taps* taps, float k_color, float minus_2k, float k_albedo,    \
                   int channels)                                                            \
  {                                                                                         \
    interior_body(pl, row, xa, blocks, taps, fixed, position, last, k_color, minus_2k,      \
                  k_albedo, channels);                                                      \
  }
LULL_INTERIOR_KERNEL(interior_variance_depth, 0, 0, 0)
LULL_INTERIOR_KERNEL(interior_variance_position, 0, 1, 0)
LULL_INTERIOR_KERNEL(interior_fixed_depth, 1, 0, 0)
LULL_INTERIOR_KERNEL(interior_fixed_position, 1, 1, 0)
LULL_INTERIOR_KERNEL(interior_variance_depth_last, 0, 0, 1)
LULL_INTERIOR_KERNEL(interior_variance_position_last, 0, 1, 1)
LULL_INTERIOR_KERNEL(interior_fixed_depth_last, 1, 0, 1)
LULL_INTERIOR_KERNEL(interior_fixed_position_last, 1, 1, 1)
#undef LULL_INTERIOR_KERNEL

typedef void (*interior_kernel)(const lull_planes* pl, size_t row, int xa, int blocks,
                                const level_taps* taps, float k_color, float minus_2k,
                                float k_albedo, int channels);

/* indexed [last][fixed][position] */
static const interior_kernel INTERIOR_KERNELS[2][2][2] = {
    {{interior_variance_depth, interior_variance_position},
     {interior_fixed_depth, interior_fixed_position}},
    {{interior_variance_depth_last, interior_variance_position_last},
     {interior_fixed_depth_last, interior_fixed_position_last}}};

/* The row a level computes at loop index i: rows of equal y mod step in
 * turn (y = r, r + step, r + 2 step, ... for r = 0, 1, ...).  Row y reads
 * rows y + dy step, dy in [-2, 2], so in this order each row shares four
 * of its five tap rows with the row before and one new tap row (13 planes)
 * enters the cache per row; in raster order the rows a tap row serves are
 * step rows apart and, from step 4 on, 4 step + 1 rows of 13 planes no
 * longer fit in the 1-2 MB L2 (levels 2-3 at 1080p: 29 -> 24 ms on 2
 * cores).  Each output row is still computed once, by one thread. */
static int level_row(int i, int h, int step)
{
  const int q = h / step, rem = h % step; /* residues < rem have q + 1 rows */
  const int head = rem * (q + 1);
  if (i < head)
    return i / (q + 1) + (i % (q + 1)) * step;
  return rem + (i - head) / q + ((i - head) % q) * step;
}

/* -- the output ------------------------------------------------------------ */

/* The output row loops, apart so that the ones without powf (sRGB)
 * vectorise: o = c a' (a' the demodulation albedo), then
 * lull_encode_output, in scale_row when there is no sRGB to encode. */
LULL_TARGET_CLONES
static void remodulate_row(float* LULL_RESTRICT o, const float* LULL_RESTRICT c,
                           const float* LULL_RESTRICT a, int w)
{
  for (int x = 0; x < w; ++x)
    o[x] = c[x] * lull_demodulation_albedo(a[x]);
}

LULL_TARGET_CLONES
static void scale_row(float* o, int w, float inv_scale, int clamp)
{
  for (int x = 0; x < w; ++x)
    o[x] = lull_encode_output(o[x], 0, inv_scale, clamp);
}

/* Output row y from the last level's rows of r, g, b (planes in[3]):
 * remodulates, applies sRGB, the inverse scale and the clamp, and writes
 * it through 3 scratch rows.  The last level calls it as each row is done,
 * while the row is in cache (separate output planes cost a write and a
 * read of 24 MB at 1080p). */
static void output_row(const lull_atrous_params* params, const lull_atrous_images* images,
                       const atrous_setup* s, const lull_planes* pl, const float* const in[3],
                       int y, float* out)
{
  const int w = s->width;
  const size_t row = (size_t)y * (size_t)w;
  const float* albedo[3] = {lull_plane_c(pl, P_AR), lull_plane_c(pl, P_AG),
                            lull_plane_c(pl, P_AB)};
  const float inv_scale = 1.0f / s->input_scale;
  for (int k = 0; k < 3; ++k) {
    float* o = out + (size_t)k * (size_t)w;
    if (s->demodulate)
      remodulate_row(o, in[k] + row, albedo[k] + row, w);
    else
      memcpy(o, in[k] + row, (size_t)w * sizeof(float));
    if (params->srgb)
      for (int x = 0; x < w; ++x)
        o[x] = lull_encode_output(o[x], 1, inv_scale, params->clamp_output);
    else
      scale_row(o, w, inv_scale, params->clamp_output);
  }
  const float* const planes[4] = {out, out + w, out + 2 * (size_t)w,
                                  lull_plane_c(pl, P_ALPHA) + row};
  lull_image_write_row(&images->output, y, planes, lull_format_channels(images->output.format));
}

/* One level into the second planes (then swapped in); the last level
 * (last != 0) writes each finished row to the output instead of
 * computing the next level's luminance and variance. */
static void run_level(const lull_atrous_params* params, const lull_atrous_images* images,
                      const atrous_setup* s, lull_planes* pl, int level, int last,
                      float* scratch_rows, size_t scratch_stride)
{
  const int w = s->width, h = s->height;
  const int step = 1 << level;
  const size_t ws = (size_t)w;
  /* Dammertz §2.2: sigma_rt of level i is sigma_0 2^-i */
  const float sigma_c = params->sigma_color * ldexpf(1.0f, -level);
  const float k_color = 1.0f / (sigma_c * sigma_c);
  const int fixed = params->color_mode == LULL_ATROUS_COLOR_FIXED;

  const float minus_2k = -2.0f * s->k_normal;
  level_taps taps;
  level_taps_init(&taps, step, ws, s->k_normal, 1);
  /* depth leaves the y and z geometry planes at zero: skip them */
  const int position = s->geometry_planes == 3;
  const interior_kernel interior = INTERIOR_KERNELS[last != 0][fixed][position];
  const float* const filtered[3] = {lull_plane_c(pl, P_R2), lull_plane_c(pl, P_G2),
                                    lull_plane_c(pl, P_B2)};
  const int reach = 2 * step; /* the farthest tap */

#pragma omp parallel for schedule(static) num_threads(s->threads)
  for (int i = 0; i < h; ++i) {
    const int y = level_row(i, h, step);
    const size_t row = (size_t)y * ws;
    /* pixels [xa, xb) of an interior row have all taps inside the image */
    int xa = w, xb = w;
    if (y >= reach && y + reach < h && 2 * reach + LANES <= w) {
      const int blocks = (w - 2 * reach) / LANES;
      xa = reach;
      xb = reach + blocks * LANES;
      interior(pl, row, xa, blocks, &taps, k_color, minus_2k, s->k_albedo, s->channels);
    }

    /* the border pixels [0, xa) and [xb, w): tap by tap over row segments,
     * skipping taps outside the image */
    tap_rows t;
    float* scaled =
        tap_rows_accumulators(&t, scratch_rows, scratch_stride, ws, (size_t)xa, (size_t)xb);
    tap_rows_center(&t, pl, row, minus_2k, scaled, ws, xa, xb);
    const int segments[2][2] = {{0, xa}, {xb, w}};
    for (int dy = -2; dy <= 2; ++dy) {
      const int yy = y + dy * step;
      if (yy < 0 || yy >= h)
        continue;
      for (int dx = -2; dx <= 2; ++dx) {
        const int off = dx * step;
        tap_rows_tap(&t, pl, (ptrdiff_t)((size_t)yy * ws) + off);
        const int tap = (dy + 2) * 5 + (dx + 2);
        for (int k = 0; k < 2; ++k) {
          /* x + off must be in [0, w) */
          const int x0 = LULL_MAX(segments[k][0], off < 0 ? -off : 0);
          const int x1 = LULL_MIN(segments[k][1], off > 0 ? w - off : w);
          if (x0 >= x1)
            continue;
          if (fixed)
            tap_row_fixed(&t, x0, x1, taps.c[tap], taps.inv_d2[tap], s->k_albedo,
                          k_color, lull_plane_c(pl, P_R) + row, lull_plane_c(pl, P_G) + row,
                          lull_plane_c(pl, P_B) + row);
          else
            tap_row_variance(&t, x0, x1, taps.c[tap], taps.inv_d2[tap], s->k_albedo);
        }
      }
    }

    /* normalise (the centre tap has weight h > 0, so sw > 0) */
    float* r2 = lull_plane(pl, P_R2) + row;
    float* g2 = lull_plane(pl, P_G2) + row;
    float* b2 = lull_plane(pl, P_B2) + row;
    float* l2 = lull_plane(pl, P_L2) + row;
    float* v2 = lull_plane(pl, P_V2) + row;
    for (int k = 0; k < 2; ++k)
      for (int x = segments[k][0]; x < segments[k][1]; ++x) {
        const lull_rgbv o = lull_normalise_sums(t.sw[x], t.sr[x], t.sg[x], t.sb[x], t.sv[x]);
        r2[x] = o.r;
        g2[x] = o.g;
        b2[x] = o.b;
        if (!last) {
          l2[x] = lull_luminance_of(s->channels, o.r, o.g, o.b);
          v2[x] = o.v;
        }
      }
    /* the accumulator rows are done with: they take the output rows */
    if (last)
      output_row(params, images, s, pl, filtered, y, t.sw);
  }
  lull_planes_swap(pl, P_R, P_R2);
  lull_planes_swap(pl, P_G, P_G2);
  lull_planes_swap(pl, P_B, P_B2);
  lull_planes_swap(pl, P_L, P_L2);
  lull_planes_swap(pl, P_V, P_V2);
}

lull_status lull_atrous_cpu(const lull_atrous_params* params, const lull_atrous_images* images,
                            int num_threads, const lull_progress* progress, lull_error* err)
{
  return lull_atrous_cpu_cached(params, images, num_threads, NULL, progress, err);
}

lull_status lull_atrous_cpu_cached(const lull_atrous_params* params,
                                   const lull_atrous_images* images, int num_threads,
                                   lull_planes_cache* cache, const lull_progress* progress,
                                   lull_error* err)
{
  lull_status status = lull_atrous_validate(params, images, err);
  if (status != LULL_OK)
    return status;

  atrous_setup s;
  memset(&s, 0, sizeof s);
  s.width = images->color.width;
  s.height = images->color.height;
  s.channels = LULL_MIN(lull_format_channels(images->color.format), 3);
  s.has_alpha = lull_format_channels(images->color.format) == 4;
  s.has_albedo = images->albedo.data != NULL;
  s.has_normal = images->normal.data != NULL;
  s.has_geometry = (images->depth.data || images->position.data) && params->sigma_depth > 0.0f;
  s.geometry_planes = s.has_geometry && !images->depth.data ? 3 : 1;
  s.demodulate = params->demodulate && s.has_albedo && s.channels == 3;
  s.k_normal = lull_edge_factor(params->sigma_normal, s.has_normal, LULL_NORMAL_SIGMA2_MIN);
  s.k_albedo = lull_edge_factor(params->sigma_albedo, s.has_albedo, LULL_ALBEDO_SIGMA2_MIN);

  const int threads = lull_thread_count(num_threads);
  s.threads = threads;
  status = lull_atrous_input_scale(params, &images->color, threads, &s.input_scale, err);
  if (status != LULL_OK)
    return status;

  lull_planes pl;
  if (!lull_planes_init_cached(&pl, (size_t)s.width, (size_t)s.height, P_COUNT, cache))
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  /* per thread: 5 accumulator and 4 centre rows (tap_rows_center); the
   * level guides' ring takes 6, the output rows 3 (in the accumulators) */
  const size_t scratch_stride = 9 * (size_t)s.width + 16;
  float* scratch = malloc((size_t)threads * scratch_stride * sizeof(float));
  if (!scratch) {
    lull_planes_release(&pl, cache);
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  }

  /* absent guides read the zero plane: their terms vanish with k = 0 */
  lull_plane_fill(&pl, P_ZERO, 0.0f);
  if (!s.has_alpha)
    lull_planes_alias(&pl, P_ALPHA, P_ZERO); /* a 4-channel output gets alpha 0 */
  if (!s.has_normal) {
    lull_planes_alias(&pl, P_NX, P_ZERO);
    lull_planes_alias(&pl, P_NY, P_ZERO);
    lull_planes_alias(&pl, P_NZ, P_ZERO);
    lull_planes_alias(&pl, P_NM, P_ZERO);
  }
  if (!s.has_albedo) {
    lull_planes_alias(&pl, P_AR, P_ZERO);
    lull_planes_alias(&pl, P_AG, P_ZERO);
    lull_planes_alias(&pl, P_AB, P_ZERO);
  }
  if (!s.has_geometry || images->depth.data) {
    lull_planes_alias(&pl, P_GY, P_ZERO);
    lull_planes_alias(&pl, P_GZ, P_ZERO);
  }
  if (!s.has_geometry) {
    lull_planes_alias(&pl, P_GX, P_ZERO);
    lull_planes_alias(&pl, P_INV_G, P_ZERO);
  }

  prepare_guides(images, &s, &pl);
  if (s.has_geometry)
    prepare_geometry(params, images, &s, &pl);
  prepare_color(params, images, &s, &pl);
  if (params->color_mode == LULL_ATROUS_COLOR_VARIANCE) {
    prepare_variance(params, images, &s, &pl, scratch, scratch_stride);
  } else {
    /* the fixed colour test reads no variance and no luminance guide; the
     * interior kernel multiplies them by 0, so they must be finite */
    lull_plane_fill(&pl, P_V, 0.0f);
    lull_planes_alias(&pl, P_GL, P_ZERO);
    lull_planes_alias(&pl, P_INV_L, P_ZERO);
  }

  /* a report after each level but the last, which writes the output: a
   * cancelled run leaves the output untouched */
  status = lull_progress_report(progress, 0.0, err);
  for (int level = 0; level < params->iterations && status == LULL_OK; ++level) {
    const int last = level + 1 == params->iterations;
    if (params->color_mode == LULL_ATROUS_COLOR_VARIANCE)
      prepare_level_guides(params, &s, &pl, scratch, scratch_stride);
    run_level(params, images, &s, &pl, level, last, scratch, scratch_stride);
    if (!last)
      status = lull_progress_report(progress, (double)(level + 1) / params->iterations, err);
  }
  if (status == LULL_OK) {
    /* the output is complete: a request to cancel now changes nothing */
    lull_error ignored;
    (void)lull_progress_report(progress, 1.0, &ignored);
  }
  free(scratch);
  lull_planes_release(&pl, cache);
  return status;
}
