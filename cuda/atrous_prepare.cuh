/* Step 1 of core/atrous.h on the GPU as one kernel body (kernel_body.cuh):
 * read the user's images (any format and stride), clean and normalise them,
 * and build level 0's input, with the formulas of atrous_math.h in the
 * order of atrous_cpu.c's prepare_* functions.
 *
 * A block of 32 x 12 pixels works on shared-memory tiles, because three of
 * the steps read neighbours of the previous step's result (12 rows rather
 * than 8: a tile then loads 2.1 instead of 2.5 raw colours per pixel of
 * the block, 1.5 instead of 1.7 guides; 16 would exceed 48 KB):
 *   phase 0: raw colour (sanitised, scaled, linearised, with a finite flag)
 *            of the block and 4 pixels around it (inpainting radius 2 plus
 *            the variance estimate's radius 2), and the guides (albedo,
 *            unit normal, depth or position) of the block and 2 around;
 *   phase 1: the colour of the block and 2 around: non-finite pixels
 *            replaced by the mean of the finite ones in their 5x5
 *            neighbourhood, demodulated, and its luminance;
 *   phase 2: per pixel the geometry footprint, the luminance variance
 *            (given, or the guide-weighted 5x5 moments of SVGF §4.2), and
 *            the working buffers, fp32 or packed (atrous_packing.cuh).
 * Out-of-image tile entries are skipped exactly where the CPU skips them. */
#pragma once

#include "atrous_common.cuh"

enum
{
  PREP_BW = 32,
  PREP_BH = 12,
  PREP_THREADS = PREP_BW * PREP_BH,
  PREP_R_RAW = LULL_INPAINT_RADIUS + 2, /* + the 5x5 variance estimate */
  PREP_R = 2,
  PREP_RAW_W = PREP_BW + 2 * PREP_R_RAW,
  PREP_RAW_H = PREP_BH + 2 * PREP_R_RAW,
  PREP_W = PREP_BW + 2 * PREP_R,
  PREP_H = PREP_BH + 2 * PREP_R,
  PREP_PHASES = 3,
  /* tile entries per thread in phase 0 */
  PREP_RAW_LOADS = (PREP_RAW_W * PREP_RAW_H + PREP_THREADS - 1) / PREP_THREADS,
  PREP_GUIDE_LOADS = (PREP_W * PREP_H + PREP_THREADS - 1) / PREP_THREADS,
};

typedef struct prepare_tile
{
  float4 raw[PREP_RAW_H][PREP_RAW_W]; /* r, g, b, finite flag (0 outside) */
  float4 n[PREP_H][PREP_W];           /* nx, ny, nz, missing flag */
  float4 a[PREP_H][PREP_W];           /* ar, ag, ab, gx */
  float2 p[PREP_H][PREP_W];           /* gy, gz */
  float4 c[PREP_H][PREP_W];           /* inpainted, demodulated r, g, b (w unused) */
  /* their luminance, apart: as the w of c, a float at a 16-byte stride,
   * the 5x5 estimate took 4 shared-memory wavefronts per warp instead of
   * 1, 38% more wavefronts than it needs (Nsight Compute) */
  float l[PREP_H][PREP_W];
} prepare_tile;

LULL_BODY float prepare_finite_or_zero(float v)
{
  return (v - v) == 0.0f ? v : 0.0f;
}

LULL_BODY int prepare_inside(const lull_atrous_prepare_args* a, int x, int y)
{
  return x >= 0 && y >= 0 && x < a->width && y < a->height;
}

/* A pixel of one of the user's images: `floats` (a compile-time constant
 * of the kernel, prepare_inputs_float) says every image is float and
 * aligned, so the loads need no format dispatch. */
LULL_BODY void prepare_fetch(const lull_image* im, int x, int y, const int floats, float out[4])
{
  if (floats) {
    lull_cuda_image_load_float(im, x, y, out);
    return;
  }
  /* through a local array of its own: the unaligned fallback copies bytes
   * to run-time offsets, which would put the caller's arrays of several
   * pixels (phase 0) in local memory */
  float v[4];
  lull_cuda_image_load(im, x, y, v);
  out[0] = v[0];
  out[1] = v[1];
  out[2] = v[2];
  out[3] = v[3];
}

/* An albedo or normal image the kernel variant without format dispatch
 * can read: float, aligned, and of 3 or more channels.  Guides of 1 or 2
 * channels (read as OIDN reads them, lull_expand_rgb) take the generic
 * variant, so that the common one does not carry the expansion: it cost
 * prepare 3% at 1080p (H100, 0.1537 against 0.1486 ms). */
LULL_BODY int prepare_guide_is_float(int has, const lull_image* im)
{
  return !has || (lull_cuda_image_is_float(im) && lull_format_channels(im->format) >= 3);
}

/* Whether the kernel variant without format dispatch can read the inputs
 * (the launcher and the CPU emulation pick the variant with it). */
LULL_BODY int prepare_inputs_float(const lull_atrous_prepare_args* a)
{
  /* only the images the kernel reads count */
  return lull_cuda_image_is_float(&a->color) && prepare_guide_is_float(a->has_albedo, &a->albedo) &&
         prepare_guide_is_float(a->has_normal, &a->normal) &&
         (a->geometry_kind == LULL_ATROUS_GEOMETRY_NONE ||
          lull_cuda_image_is_float(&a->geometry)) &&
         (!a->variance_mode || lull_cuda_image_is_float(&a->variance));
}

/* Entry k of thread t in phase 0's tile of tile_w x tile_h pixels around
 * the block (ring r): its tile and image coordinates, whether the tile has
 * it, and whether its pixel is in the image. */
typedef struct prepare_entry
{
  int tx, ty, x, y, used, inside;
} prepare_entry;

LULL_BODY prepare_entry prepare_entry_of(const lull_atrous_prepare_args* a, lull_thread t, int k,
                                         int tile_w, int tile_h, int r)
{
  const int e = t.ty * PREP_BW + t.tx + k * PREP_THREADS;
  prepare_entry q;
  q.ty = e / tile_w;
  q.tx = e - q.ty * tile_w;
  q.x = t.bx * PREP_BW + q.tx - r;
  q.y = t.by * PREP_BH + q.ty - r;
  q.used = e < tile_w * tile_h;
  q.inside = q.used && prepare_inside(a, q.x, q.y);
  return q;
}

/* The input scale: the explicit one, or the automatic one that the colour
 * pass has found. */
LULL_BODY float prepare_input_scale(const lull_atrous_prepare_args* a)
{
  return a->auto_scale ? LULL_LDG(&a->stats->scale) : a->input_scale;
}

/* Phase 0: the raw colour and the guides of the tiles.  Each thread issues
 * the loads of all its tile entries before it uses the first: loading and
 * converting one entry after the other, the threads waited on every load
 * in turn (55% of the kernel's stall samples were in this phase). */
LULL_BODY void prepare_stage(const lull_atrous_prepare_args* a, prepare_tile* s, lull_thread t,
                             const int floats)
{
  const float scale = prepare_input_scale(a);
  float c[PREP_RAW_LOADS][4];
LULL_UNROLL
  for (int k = 0; k < PREP_RAW_LOADS; ++k) {
    const prepare_entry q = prepare_entry_of(a, t, k, PREP_RAW_W, PREP_RAW_H, PREP_R_RAW);
    c[k][0] = c[k][1] = c[k][2] = c[k][3] = 0.0f;
    if (q.inside)
      prepare_fetch(&a->color, q.x, q.y, floats, c[k]);
  }
LULL_UNROLL
  for (int k = 0; k < PREP_RAW_LOADS; ++k) {
    const prepare_entry q = prepare_entry_of(a, t, k, PREP_RAW_W, PREP_RAW_H, PREP_R_RAW);
    if (!q.used)
      break;
    float4 raw = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (q.inside) { /* (the alpha channel, c[k][3], is read again by phase 2) */
      const int ok = lull_isfinite3(c[k][0], c[k][1], c[k][2]);
      if (!ok)
        c[k][0] = c[k][1] = c[k][2] = 0.0f;
      raw.x = lull_prepare_color_channel(c[k][0], scale, a->srgb, a->nonnegative);
      raw.y = lull_prepare_color_channel(c[k][1], scale, a->srgb, a->nonnegative);
      raw.z = lull_prepare_color_channel(c[k][2], scale, a->srgb, a->nonnegative);
      raw.w = ok ? 1.0f : 0.0f;
    }
    s->raw[q.ty][q.tx] = raw;
  }
  float al[PREP_GUIDE_LOADS][4], nv[PREP_GUIDE_LOADS][4], gv[PREP_GUIDE_LOADS][4];
LULL_UNROLL
  for (int k = 0; k < PREP_GUIDE_LOADS; ++k) {
    const prepare_entry q = prepare_entry_of(a, t, k, PREP_W, PREP_H, PREP_R);
    for (int i = 0; i < 4; ++i)
      al[k][i] = nv[k][i] = gv[k][i] = 0.0f;
    if (q.inside) {
      if (a->has_albedo)
        prepare_fetch(&a->albedo, q.x, q.y, floats, al[k]);
      if (a->has_normal)
        prepare_fetch(&a->normal, q.x, q.y, floats, nv[k]);
      if (a->geometry_kind != LULL_ATROUS_GEOMETRY_NONE)
        prepare_fetch(&a->geometry, q.x, q.y, floats, gv[k]);
    }
  }
LULL_UNROLL
  for (int k = 0; k < PREP_GUIDE_LOADS; ++k) {
    const prepare_entry q = prepare_entry_of(a, t, k, PREP_W, PREP_H, PREP_R);
    if (!q.used)
      break;
    float4 n = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 g1 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float2 p = make_float2(0.0f, 0.0f);
    if (q.inside) {
      if (a->has_albedo) {
        if (!floats) /* prepare_guide_is_float */
          lull_expand_rgb(al[k], lull_format_channels(a->albedo.format));
        g1.x = prepare_finite_or_zero(al[k][0]);
        g1.y = prepare_finite_or_zero(al[k][1]);
        g1.z = prepare_finite_or_zero(al[k][2]);
      }
      if (a->has_normal) {
        if (!floats)
          lull_expand_rgb(nv[k], lull_format_channels(a->normal.format));
        float u[3] = {prepare_finite_or_zero(nv[k][0]), prepare_finite_or_zero(nv[k][1]),
                      prepare_finite_or_zero(nv[k][2])};
        n.w = lull_normalize_normal(u); /* the "missing" flag */
        n.x = u[0];
        n.y = u[1];
        n.z = u[2];
      }
      if (a->geometry_kind != LULL_ATROUS_GEOMETRY_NONE) {
        g1.w = prepare_finite_or_zero(gv[k][0]);
        if (a->geometry_kind == LULL_ATROUS_GEOMETRY_POSITION)
          p = make_float2(prepare_finite_or_zero(gv[k][1]), prepare_finite_or_zero(gv[k][2]));
      }
    }
    s->n[q.ty][q.tx] = n;
    s->a[q.ty][q.tx] = g1;
    s->p[q.ty][q.tx] = p;
  }
}

/* Phase 1: inpainted, demodulated colour and its luminance. */
LULL_BODY void prepare_color(const lull_atrous_prepare_args* a, prepare_tile* s, lull_thread t)
{
  const int tid = t.ty * PREP_BW + t.tx;
  const int x0 = t.bx * PREP_BW, y0 = t.by * PREP_BH;
  const int shift = PREP_R_RAW - PREP_R;
  for (int e = tid; e < PREP_W * PREP_H; e += PREP_THREADS) {
    const int ty = e / PREP_W, tx = e - ty * PREP_W;
    if (!prepare_inside(a, x0 + tx - PREP_R, y0 + ty - PREP_R)) {
      s->c[ty][tx] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      s->l[ty][tx] = 0.0f;
      continue;
    }
    const float4 raw = s->raw[ty + shift][tx + shift];
    float r = raw.x, g = raw.y, b = raw.z;
    if (raw.w == 0.0f) {
      /* mean of the finite pixels around (outside the image: flag 0) */
      float sum[3] = {0, 0, 0}, n = 0;
      for (int dy = -LULL_INPAINT_RADIUS; dy <= LULL_INPAINT_RADIUS; ++dy)
        for (int dx = -LULL_INPAINT_RADIUS; dx <= LULL_INPAINT_RADIUS; ++dx) {
          const float4 q = s->raw[ty + shift + dy][tx + shift + dx];
          if (q.w == 0.0f)
            continue;
          sum[0] += q.x;
          sum[1] += q.y;
          sum[2] += q.z;
          n += 1;
        }
      const float inv = n > 0 ? 1.0f / n : 0.0f;
      r = sum[0] * inv;
      g = sum[1] * inv;
      b = sum[2] * inv;
    }
    if (a->demodulate) {
      const float4 al = s->a[ty][tx];
      /* reciprocals by the multifunction unit (the divisor is >= 0.02) */
      r *= LULL_RCP(lull_demodulation_albedo(al.x));
      g *= LULL_RCP(lull_demodulation_albedo(al.y));
      b *= LULL_RCP(lull_demodulation_albedo(al.z));
    }
    s->c[ty][tx] = make_float4(r, g, b, 0.0f);
    s->l[ty][tx] = lull_luminance_of(a->channels, r, g, b);
  }
}

/* The geometry footprint term ig = 1 / (sigma_g s_p)^2 of tile pixel
 * (tx, ty) = image pixel (x, y) (atrous_cpu.c, prepare_geometry). */
LULL_BODY float prepare_inv_geometry(const lull_atrous_prepare_args* a, const prepare_tile* s,
                                     int x, int y, int tx, int ty)
{
  if (a->geometry_kind == LULL_ATROUS_GEOMETRY_NONE)
    return 0.0f;
  const int pos = a->geometry_kind == LULL_ATROUS_GEOMETRY_POSITION;
  const float gx = s->a[ty][tx].w;
  const float2 gyz = s->p[ty][tx];
  int xs[4], ys[4];
  lull_footprint_neighbours(x, y, a->width, a->height, xs, ys);
  float d[4];
  for (int k = 0; k < 4; ++k) {
    if (xs[k] < 0 || xs[k] >= a->width || ys[k] < 0 || ys[k] >= a->height) {
      d[k] = 0.0f; /* 1-pixel-wide image: no neighbour on this axis */
      continue;
    }
    const int qx = tx + xs[k] - x, qy = ty + ys[k] - y;
    const float q = s->a[qy][qx].w;
    float dd = (q - gx) * (q - gx);
    if (pos) {
      const float2 qp = s->p[qy][qx];
      dd += (qp.x - gyz.x) * (qp.x - gyz.x) + (qp.y - gyz.y) * (qp.y - gyz.y);
    }
    d[k] = LULL_SQRT(dd);
  }
  const float magnitude = pos ? LULL_SQRT(gx * gx + gyz.x * gyz.x + gyz.y * gyz.y) : fabsf(gx);
  return lull_geometry_inv_scale2(a->sigma_depth,
                                  lull_geometry_footprint(d[0], d[1], d[2], d[3], magnitude));
}

/* Variance of the luminance at level 0 (atrous_cpu.c, prepare_variance):
 * guide-weighted moments of the 5x5 neighbourhood, no colour term.  The
 * weight's exponent is carried as n = -log2(e) E, as in the level kernels
 * (atrous_common.cuh): the centre's normal and flag carry
 * ns = 2 k_n log2(e), so the normal term is dot - ns; the
 * geometry and albedo factors carry -log2(e); 2^n by the multifunction
 * unit (lull_edge_weight_log2).  all_inside, a compile-time constant: the
 * 5x5 neighbourhood lies in the image, so no tap needs the test. */
LULL_BODY float prepare_variance_estimate(const lull_atrous_prepare_args* a,
                                          const prepare_tile* s, int x, int y, int tx, int ty,
                                          float ig, const int position, const int all_inside)
{
  const float ns = lull_normal_scale_log2(a->k_normal);
  const float ka = -a->k_albedo * LULL_LOG2E;
  const float ign = -LULL_LOG2E * ig;
  const float4 n0 = s->n[ty][tx];
  const float4 cn = make_float4(n0.x * ns, n0.y * ns, n0.z * ns, n0.w * ns);
  const float4 ca = s->a[ty][tx];
  const float2 cp = position ? s->p[ty][tx] : make_float2(0.0f, 0.0f);
  const float cl = s->l[ty][tx];
  float sw = 0, sd = 0, sd2 = 0;
  /* unrolled: the pixel distances are constants; a tap outside the image
   * (whose tile entries are zeros) gets weight 0, which adds exactly
   * nothing, as skipping it does on the CPU */
  LULL_UNROLL
  for (int dy = -2; dy <= 2; ++dy) {
    const int row_inside = all_inside || (y + dy >= 0 && y + dy < a->height);
    LULL_UNROLL
    for (int dx = -2; dx <= 2; ++dx) {
      const int inside = all_inside || (row_inside && x + dx >= 0 && x + dx < a->width);
      const float4 qn = s->n[ty + dy][tx + dx];
      const float4 qa = s->a[ty + dy][tx + dx];
      const float2 qp = position ? s->p[ty + dy][tx + dx] : make_float2(0.0f, 0.0f);
      const int d2 = dx * dx + dy * dy;
      const float inv_d2 = d2 ? 1.0f / (float)d2 : 0.0f;
      float n = atrous_add_normal_dot(-ns, cn.x, cn.y, cn.z, cn.w, qn.x, qn.y, qn.z, qn.w);
      const float dgx = ca.w - qa.w;
      float dist2 = dgx * dgx;
      if (position) {
        const float dgy = cp.x - qp.x, dgz = cp.y - qp.y;
        dist2 = dgx * dgx + dgy * dgy + dgz * dgz;
      }
      n += lull_edge_geometry(dist2, ign, inv_d2);
      n += lull_edge_albedo(ca.x - qa.x, ca.y - qa.y, ca.z - qa.z, ka);
      const float wgt = inside ? lull_edge_weight_log2(n) : 0.0f;
      const float d = s->l[ty + dy][tx + dx] - cl;
      sw += wgt;
      sd += wgt * d;
      sd2 += wgt * d * d;
    }
  }
  return lull_moments_variance(sw, sd, sd2);
}

/* Phase 2: footprint, variance, and the working buffers of pixel (x, y). */
LULL_BODY void prepare_finish(const lull_atrous_prepare_args* a, const prepare_tile* s,
                              lull_thread t, const int position, const int floats)
{
  const int x = t.bx * PREP_BW + t.tx, y = t.by * PREP_BH + t.ty;
  if (!prepare_inside(a, x, y))
    return;
  const int tx = t.tx + PREP_R, ty = t.ty + PREP_R;
  const size_t i = (size_t)y * (size_t)a->width + (size_t)x;
  const float ig = prepare_inv_geometry(a, s, x, y, tx, ty);
  const float4 c = s->c[ty][tx];
  const float4 g1 = s->a[ty][tx];
  float var = 0.0f;
  int estimate = a->variance_mode && !a->variance.data;
  if (a->variance_mode && a->variance.data) {
    float v[4];
    prepare_fetch(&a->variance, x, y, floats, v);
    const float dr = a->demodulate ? lull_demodulation_albedo(g1.x) : 1.0f;
    const float dg = a->demodulate ? lull_demodulation_albedo(g1.y) : 1.0f;
    const float db = a->demodulate ? lull_demodulation_albedo(g1.z) : 1.0f;
    /* a negative value asks for the estimate (core/atrous.h) */
    estimate = a->variance_fallback && v[0] < 0.0f;
    var = lull_variance_luminance(v, lull_format_channels(a->variance.format), dr, dg, db,
                                  prepare_input_scale(a));
  }
  if (estimate) {
    const int all_inside = x >= 2 && y >= 2 && x + 2 < a->width && y + 2 < a->height;
    var = all_inside ? prepare_variance_estimate(a, s, x, y, tx, ty, ig, position, 1)
                     : prepare_variance_estimate(a, s, x, y, tx, ty, ig, position, 0);
  }
  const float4 g0 = s->n[ty][tx];
  if (a->packed) {
    /* times the packing scale, which the bound kernel has found */
    const float ps = lull_pack_scale(LULL_LDG(&a->stats->bound));
    a->out.cp[i] = lull_pack_color_sd(c.x * ps, c.y * ps, c.z * ps,
                                      LULL_SQRT(var > 0.0f ? var : 0.0f) * ps);
    a->out.gp[i] = lull_pack_guides(g0, g1);
  } else {
    a->out.c[i] = make_float4(c.x, c.y, c.z, var);
    a->out.g0[i] = g0;
    a->out.g1[i] = g1;
  }
  if (a->geometry_kind == LULL_ATROUS_GEOMETRY_POSITION)
    a->out.g2[i] = s->p[ty][tx];
  a->out.ig[i] = ig;
  if (a->has_alpha) { /* copied through as given (phase 0 read it too) */
    float v[4];
    prepare_fetch(&a->color, x, y, floats, v);
    a->alpha[i] = v[3];
  }
}

/* position, floats: compile-time constants of the kernel: 1 for position
 * input (the 5x5 estimate then reads the y and z of the tile); 1 when
 * prepare_inputs_float holds */
LULL_BODY void prepare_body(const lull_atrous_prepare_args* a, prepare_tile* s, int phase,
                            lull_thread t, const int position, const int floats)
{
  if (phase == 0)
    prepare_stage(a, s, t, floats);
  else if (phase == 1)
    prepare_color(a, s, t);
  else
    prepare_finish(a, s, t, position, floats);
}

/* -- the packing bound ------------------------------------------------------
 *
 * packedGuides: before prepare, a reduction over the image finds the bound
 * b of atrous_packing.cuh's packing scale: the largest magnitude a packed
 * word of level 0 can hold, i.e. of the prepared colour (sanitised,
 * scaled, linearised, as phase 0 computes it), times 1 / 0.02 when the
 * colour is demodulated (the smallest albedo demodulation divides by), and
 * of the square root of a given variance in the same units.  What prepare
 * derives from the colour stays within it: the inpainting mean, the
 * luminance, and the square root of the variance estimate (a weighted
 * variance of luminances within [-b, b]).
 *
 * What keeps this pass short (one read of the colour image):
 *   - the albedo is bounded, not read (the bound is then up to 50 times,
 *     5.6 binades, too large, which costs range at the dark end only: 22
 *     binades at full precision stay below the brightest value);
 *   - the colour conversion is monotonic, so only the largest and the
 *     smallest finite raw value are kept, and converted once per thread;
 *   - finite values of a pixel whose other channels are not finite count
 *     too (prepare inpaints that pixel from its neighbours): a bound that
 *     is at most larger, and no per-pixel test;
 *   - a compact, 16-byte aligned float colour image (every image the
 *     library's own buffers give) is read as a flat array of float4, all
 *     of it colour except the alpha of four-channel images.
 * Blocks of 256 threads take the data at a grid stride, four loads in
 * flight at a time, and reduce their bounds through shared memory in three
 * phases; one atomic maximum a block (as unsigned bits: non-negative floats
 * order as their bits) into the bound, which the launch zeroes first. */
enum
{
  BOUND_THREADS = 256,
  BOUND_BATCH = 4,
  BOUND_MAX_BLOCKS = 1024,
  BOUND_PHASES = 3,
};

typedef struct bound_tile
{
  float m[BOUND_THREADS], mv[BOUND_THREADS];
  unsigned long long sum[BOUND_THREADS], count[BOUND_THREADS];
} bound_tile;

/* The blocks of the bound kernel for w x h pixels. */
LULL_BODY int prepare_bound_blocks(int w, int h)
{
  const size_t per_block = (size_t)BOUND_THREADS * BOUND_BATCH;
  const size_t blocks = ((size_t)w * (size_t)h + per_block - 1) / per_block;
  return blocks < BOUND_MAX_BLOCKS ? (int)blocks : BOUND_MAX_BLOCKS;
}

/* Whether the colour is a compact float image at a 16-byte aligned
 * address: its values are then one flat array (the launcher and the CPU
 * emulation pick the kernel's path with it). */
LULL_BODY int prepare_bound_flat(const lull_image* c)
{
  const int n = lull_format_channels(c->format);
  return !lull_format_is_half(c->format) && ((size_t)c->data & 15u) == 0 &&
         c->pixel_stride == (size_t)n * sizeof(float) &&
         c->row_stride == c->pixel_stride * (size_t)c->width;
}

/* Pixel i (row-major) of the image: its coordinates. */
LULL_BODY void bound_pixel(const lull_atrous_prepare_args* a, size_t i, int* x, int* y)
{
  *y = (int)(i / (size_t)a->width);
  *x = (int)(i - (size_t)*y * (size_t)a->width);
}

/* A thread's (then a block's) part of the pass: the running extremes of
 * the finite raw colour values, then the bound m of the prepared colour
 * they give (before demodulation) and mv of the square root of a given
 * variance; the automatic scale's counts. */
typedef struct bound_part
{
  float hi, lo, m, mv;
  unsigned long long sum, count;
} bound_part;

/* counts: a->auto_scale (the counts cost an add or two per value) */
LULL_BODY void bound_add(bound_part* r, float v, int counts)
{
  if ((v - v) == 0.0f) { /* finite */
    r->hi = fmaxf(r->hi, v);
    r->lo = fminf(r->lo, v);
  }
  if (counts)
    lull_auto_scale_add(v, &r->sum, &r->count);
}

/* sqrt of the largest luminance variance pixel v of a given variance image
 * can give (prepare_finish, with the smallest demodulation albedo), in the
 * units of the bound (see prepare_bound_thread). */
LULL_BODY float prepare_bound_of_variance(const lull_atrous_prepare_args* a, const float v[4])
{
  const float e = a->demodulate ? LULL_DEMODULATION_EPS : 1.0f;
  return sqrtf(lull_variance_luminance(v, lull_format_channels(a->variance.format), e, e, e,
                                       a->auto_scale ? 1.0f : a->input_scale));
}

/* Phase 0 of a thread: the extremes of its part of the colour, as the
 * bound of the prepared colour, and of the variance image; with the
 * automatic scale, the counts of its colour values and the bound in the
 * colour's own units (the last block multiplies it by the scale: the
 * conversion is then the product alone, as sRGB colour is never scaled
 * automatically). */
LULL_BODY bound_part prepare_bound_thread(const lull_atrous_prepare_args* a, lull_thread t,
                                          int blocks, const int floats)
{
  const size_t first = (size_t)t.bx * BOUND_THREADS + (size_t)t.tx;
  const size_t stride = (size_t)blocks * BOUND_THREADS;
  const size_t pixels = (size_t)a->width * (size_t)a->height;
  const int counts = a->auto_scale;
  bound_part r = {0.0f, 0.0f, 0.0f, 0.0f, 0u, 0u};
  if (prepare_bound_flat(&a->color)) {
    const int channels = lull_format_channels(a->color.format);
    const size_t count = pixels * (size_t)channels, vectors = count / 4;
    const float4* v = (const float4*)a->color.data;
    for (size_t i0 = first; i0 < vectors; i0 += BOUND_BATCH * stride) {
      float4 q[BOUND_BATCH];
      LULL_UNROLL
      for (int k = 0; k < BOUND_BATCH; ++k) {
        const size_t i = i0 + (size_t)k * stride;
        q[k] = i < vectors ? LULL_LDG(v + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
      LULL_UNROLL
      for (int k = 0; k < BOUND_BATCH; ++k) {
        bound_add(&r, q[k].x, counts);
        bound_add(&r, q[k].y, counts);
        bound_add(&r, q[k].z, counts);
        if (channels != 4) /* the alpha channel is not packed, nor counted */
          bound_add(&r, q[k].w, counts);
      }
    }
    /* the last count % 4 values (three-channel images) */
    for (size_t i = vectors * 4 + first; i < count; i += stride)
      bound_add(&r, LULL_LDG((const float*)a->color.data + i), counts);
  } else {
    for (size_t i0 = first; i0 < pixels; i0 += BOUND_BATCH * stride) {
      float c[BOUND_BATCH][4];
      LULL_UNROLL
      for (int k = 0; k < BOUND_BATCH; ++k) {
        const size_t i = i0 + (size_t)k * stride;
        c[k][0] = c[k][1] = c[k][2] = c[k][3] = 0.0f;
        if (i < pixels) {
          int x, y;
          bound_pixel(a, i, &x, &y);
          prepare_fetch(&a->color, x, y, floats, c[k]);
        }
      }
      /* the colour channels the CPU counts too (channels beyond the
       * format's read 0, which neither extreme nor count takes) */
      LULL_UNROLL
      for (int k = 0; k < BOUND_BATCH; ++k) {
        bound_add(&r, c[k][0], counts);
        bound_add(&r, a->channels > 1 ? c[k][1] : 0.0f, counts);
        bound_add(&r, a->channels > 2 ? c[k][2] : 0.0f, counts);
      }
    }
  }
  /* prepare's conversion is non-decreasing, so its largest magnitude comes
   * from one of the extremes (with the automatic scale, converted by the
   * last block) */
  if (counts)
    r.m = fmaxf(fabsf(r.hi), fabsf(r.lo));
  else
    r.m = fmaxf(fabsf(lull_prepare_color_channel(r.hi, a->input_scale, a->srgb, a->nonnegative)),
                fabsf(lull_prepare_color_channel(r.lo, a->input_scale, a->srgb, a->nonnegative)));
  if (a->variance_mode && a->variance.data)
    for (size_t i = first; i < pixels; i += stride) {
      int x, y;
      bound_pixel(a, i, &x, &y);
      float v[4];
      prepare_fetch(&a->variance, x, y, floats, v);
      r.mv = fmaxf(r.mv, prepare_bound_of_variance(a, v));
    }
  return r;
}

/* The last block: the automatic scale from the counts, and the packing
 * bound from the colour's (m) and the variance's (mv) part, in the units
 * prepare packs in.  With the automatic scale both are still in the
 * colour's own units, and what prepare packs is clamp(v s) (the clamp at
 * 1e15 comes after the scale) and sqrt(Var s s), held at sqrt(FLT_MAX):
 * so m s is clamped as prepare clamps, and mv s at sqrt(FLT_MAX), before
 * the demodulation's factor (multiplied last, so it cannot overflow). */
LULL_BODY void prepare_bound_finish(const lull_atrous_prepare_args* a, unsigned long long sum,
                                    unsigned long long count, float m, float mv)
{
  lull_atrous_color_stats* st = a->stats;
  /* with the automatic scale, m is the colour's largest finite magnitude */
  const float s = a->auto_scale ? lull_auto_scale(sum, count, m) : a->input_scale;
  st->scale = s;
  st->inv_scale = 1.0f / s; /* exact for the automatic scale, a power of two */
  if (a->auto_scale) {
    m = fminf(m * s, LULL_COLOR_MAX);
    mv = fminf(mv * s, 1.8446743e19f); /* sqrt(FLT_MAX) */
  }
  if (a->demodulate)
    m *= 1.0f / LULL_DEMODULATION_EPS;
  st->bound = lull_float_bits(fmaxf(m, mv));
}

LULL_BODY void prepare_bound_body(const lull_atrous_prepare_args* a, bound_tile* s, int phase,
                                  lull_thread t, int blocks, const int floats)
{
  const int tid = t.tx;
  if (phase == 0) {
    const bound_part r = prepare_bound_thread(a, t, blocks, floats);
    s->m[tid] = r.m;
    s->mv[tid] = r.mv;
    s->sum[tid] = r.sum;
    s->count[tid] = r.count;
  } else if (phase == 1) {
    if (tid < 32) {
      float m = s->m[tid], mv = s->mv[tid];
      unsigned long long sum = s->sum[tid], count = s->count[tid];
      for (int k = 1; k < BOUND_THREADS / 32; ++k) {
        m = fmaxf(m, s->m[tid + 32 * k]);
        mv = fmaxf(mv, s->mv[tid + 32 * k]);
        sum += s->sum[tid + 32 * k];
        count += s->count[tid + 32 * k];
      }
      s->m[tid] = m;
      s->mv[tid] = mv;
      s->sum[tid] = sum;
      s->count[tid] = count;
    }
  } else if (tid == 0) {
    float m = s->m[0], mv = s->mv[0];
    unsigned long long sum = s->sum[0], count = s->count[0];
    for (int k = 1; k < 32; ++k) {
      m = fmaxf(m, s->m[k]);
      mv = fmaxf(mv, s->mv[k]);
      sum += s->sum[k];
      count += s->count[k];
    }
    unsigned bits = lull_float_bits(m), vbits = lull_float_bits(mv);
    lull_atrous_color_stats* st = a->stats;
#if defined(__CUDA_ARCH__)
    /* non-negative floats order as their bits */
    atomicMax(&st->bound, bits);
    atomicMax(&st->vbound, vbits);
    if (a->auto_scale) {
      atomicAdd(&st->sum, sum);
      atomicAdd(&st->count, count);
    }
    /* the last block to finish sees every block's part (CUDA samples,
     * threadFenceReduction) */
    __threadfence();
    if (atomicAdd(&st->blocks_done, 1u) + 1u != (unsigned)blocks)
      return;
    __threadfence();
    sum = atomicAdd(&st->sum, 0ull);
    count = atomicAdd(&st->count, 0ull);
    bits = atomicMax(&st->bound, 0u);
    vbits = atomicMax(&st->vbound, 0u);
#else
    /* the CPU emulation runs one block at a time */
    st->bound = st->bound < bits ? bits : st->bound;
    st->vbound = st->vbound < vbits ? vbits : st->vbound;
    st->sum += sum;
    st->count += count;
    if (++st->blocks_done != (unsigned)blocks)
      return;
    sum = st->sum;
    count = st->count;
    bits = st->bound;
    vbits = st->vbound;
#endif
    prepare_bound_finish(a, sum, count, lull_bits_float(bits), lull_bits_float(vbits));
  }
}
