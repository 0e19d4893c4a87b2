/* The baseline schedule (Dammertz et al. 2010, §2.2 and their GLSL
 * listing) as a kernel body (kernel_body.cuh): one thread per pixel, 25
 * taps 2^level pixels apart read straight from global memory (through the
 * L1/L2 caches); taps outside the image are skipped.  The taps are visited
 * in the permuted layout's memory order (atrous_common.cuh), so the two
 * schedules agree bit for bit away from the border.  Works on the fp32
 * buffers only. */
#pragma once

#include "atrous_common.cuh"

enum { BASE_BW = 32, BASE_BH = 8 };

LULL_BODY void baseline_body(const lull_atrous_level_args* a, lull_thread t,
                             const int variance_mode, const int geometry_kind)
{
  const int x = t.bx * BASE_BW + t.tx;
  const int y = t.by * BASE_BH + t.ty;
  if (x >= a->width || y >= a->height)
    return;
  const int w = a->width, h = a->height;
  const int step = 1 << a->level;
  /* one memory step of the permuted layout, in the image */
  const int sx = step * lull_layout_direction(x, a->level);
  const int sy = step * lull_layout_direction(y, a->level);
  const size_t i = (size_t)y * (size_t)w + (size_t)x;
  const atrous_tap self = atrous_tap_load(a, i, variance_mode, geometry_kind, 0);
  const float il = variance_mode ? LULL_LDG(&a->lg[i].y) : 0.0f;
  const atrous_center c = atrous_center_make(&self, LULL_LDG(a->in.ig + i), il, a);

  atrous_sums s;
  atrous_sums_zero(&s);
LULL_UNROLL
  for (int dy = -2; dy <= 2; ++dy) {
    const int yy = y + dy * sy;
    if (yy < 0 || yy >= h)
      continue;
LULL_UNROLL
    for (int dx = -2; dx <= 2; ++dx) {
      const int xx = x + dx * sx;
      if (xx < 0 || xx >= w)
        continue;
      const atrous_tap q =
          atrous_tap_load(a, (size_t)yy * (size_t)w + (size_t)xx, variance_mode, geometry_kind, 0);
      atrous_accumulate(&s, &c, &q, dx * dx + dy * dy, a, a->color_scale, variance_mode,
                        geometry_kind);
    }
  }
  const float4 out = atrous_normalise(&s);
  if (a->last) {
    const float4 g1 = LULL_LDG(a->in.g1 + i);
    atrous_encode_store(a, x, y, atrous_remodulate(a, out, g1.x, g1.y, g1.z));
  } else {
    a->out.c[i] = out;
  }
}
