/* The gradient-domain path tracer.
 *
 * Base path (pixel p, jitter u): x1 is the camera ray's first hit; at every
 * vertex x_k next-event estimation samples a light point l_k (area
 * measure); the path continues by cosine sampling and Russian roulette.
 * Emitters hit after the first bounce add nothing (NEE covers them), and
 * emitters seen by the camera go to `direct`, without gradients (G-PT's
 * "very direct" light).  With T' the throughput from x2 on and S = sum over
 * k >= 2 of T'_k NEE_k, the base estimate is C_1 + rho(x1) S, where C_1 is
 * the NEE term at x1 and rho(x1) = f G / p for cosine sampling.
 *
 * Offset path for each neighbour p + d (gradient-domain.md §4):
 *   - primary shift: the camera ray through p + d + u hits y1; it fails
 *     when it misses or hits an emitter;
 *   - NEE at y1 with the same light point l_1 (Jacobian 1 in area measure);
 *   - reconnection y1 -> x2: from x2 on the offset shares the base path
 *     (Lambertian, so the BSDF at x2 ignores the incoming direction); its
 *     factor is T_y = f(y1) G(y1, x2) / p(x2 | x1), the offset contribution
 *     divided by the base pdf (area-measure Jacobian 1); it fails when
 *     y1 -> x2 is occluded, leaves y1's hemisphere or reaches x2 from its
 *     other side.
 * MIS (balance heuristic) between "sample at p, shift to p+d" and the
 * reverse: the NEE term at x1 has equal pdfs (w = 1/2); terms through x2
 * have w = 1 / (1 + r), r = p(x2 | y1) / p(x2 | x1); a failed shift has
 * w = 1 and offset 0.  The gradient sample is D = sum_k w_k (C_y,k - C_x,k)
 * (offset minus base); it is stored per direction at the base pixel and
 * merged as dx(p) = D_{+x}(p) - D_{-x}(p + (1,0)), so dx estimates
 * I(x+1, y) - I(x, y) as the sum of both strategies (Mitsuba's G-PT
 * convention). */
#include <stdlib.h>
#include <string.h>

#include "gdpt.h"
#include "rhf_math.h"

static const double PI = 3.14159265358979323846;

/* -- random numbers: splitmix64, one stream per pixel, sample and seed ----- */

typedef struct rng
{
  uint64_t state;
} rng;

static uint64_t splitmix(uint64_t* s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double uniform(rng* r)
{
  return (double)(splitmix(&r->state) >> 11) * (1.0 / 9007199254740992.0);
}

static rng rng_for(uint64_t seed, uint64_t pixel, uint64_t sample)
{
  rng r = {seed * 0x2545F4914F6CDD1Dull};
  r.state ^= splitmix(&r.state) + pixel * 0x9E3779B97F4A7C15ull;
  r.state ^= splitmix(&r.state) + sample * 0xD1B54A32D192ED03ull;
  splitmix(&r.state);
  return r;
}

/* -- sampling ------------------------------------------------------------------------- */

static vec3 camera_dir(const gdpt_scene* s, double px, double py)
{
  const gdpt_camera* c = &s->camera;
  const double sx = 2.0 * px / s->width - 1.0, sy = 1.0 - 2.0 * py / s->height;
  return vnorm(vadd(c->forward, vadd(vscale(c->right, sx), vscale(c->up, sy))));
}

typedef struct light_sample
{
  vec3 p, n;    /* point and emitting normal */
  vec3 le;
  double pdf;   /* area measure, with the selection probability */
} light_sample;

static light_sample sample_light(const gdpt_scene* s, rng* r)
{
  const double pick = uniform(r);
  int i = 0;
  double acc = s->lights[0].select;
  while (i + 1 < s->num_lights && pick >= acc)
    acc += s->lights[++i].select;
  const gdpt_light* l = &s->lights[i];
  const gdpt_shape* q = &s->shapes[l->shape];
  const double u = uniform(r), v = uniform(r);
  light_sample ls;
  ls.p = vadd(q->a, vadd(vscale(q->u, u), vscale(q->v, v)));
  ls.n = vnorm(vcross(q->u, q->v));
  ls.le = s->materials[q->material].emission;
  ls.pdf = l->select / l->area;
  return ls;
}

/* Next-event estimate at a diffuse point (p, shading normal ns, albedo a)
 * towards light sample ls: (a / pi) Le G V / pdf. */
static vec3 nee(const gdpt_scene* s, vec3 p, vec3 ns, vec3 a, const light_sample* ls)
{
  const vec3 d = vsub(ls->p, p);
  const double dist2 = vdot(d, d);
  const vec3 dir = vscale(d, 1.0 / sqrt(dist2));
  const double cos_p = vdot(ns, dir), cos_l = -vdot(ls->n, dir);
  if (cos_p <= 0.0 || cos_l <= 0.0 || vmax(a) <= 0.0)
    return v3(0, 0, 0);
  if (!gdpt_visible(s, vadd(p, vscale(ns, 1e-7)), ls->p))
    return v3(0, 0, 0);
  const double g = cos_p * cos_l / dist2;
  return vscale(vmul(a, ls->le), g / (PI * ls->pdf));
}

static vec3 cosine_direction(vec3 n, rng* r)
{
  const vec3 t = fabs(n.x) > 0.5 ? v3(0, 1, 0) : v3(1, 0, 0);
  const vec3 b1 = vnorm(vcross(t, n)), b2 = vcross(n, b1);
  const double phi = 2.0 * PI * uniform(r), r2 = uniform(r);
  const double sin_t = sqrt(r2), cos_t = sqrt(1.0 - r2);
  return vadd(vscale(n, cos_t), vadd(vscale(b1, cos(phi) * sin_t), vscale(b2, sin(phi) * sin_t)));
}

static int is_emitter(const gdpt_scene* s, const gdpt_hit* h)
{
  return vmax(s->materials[h->material].emission) > 0.0;
}

/* Shading normal: the geometric normal on the side the ray came from. */
static vec3 facing(vec3 n, vec3 dir)
{
  return vdot(n, dir) < 0.0 ? n : vscale(n, -1.0);
}

/* -- the base path -------------------------------------------------------------------- */

typedef struct base_path
{
  int kind;            /* 0 miss, 1 emitter seen by the camera, 2 surface */
  vec3 direct;
  gdpt_hit x1;
  vec3 n1, a1;         /* shading normal, albedo */
  light_sample l1;
  vec3 c1;             /* NEE term at x1 */
  int has_x2;
  gdpt_hit x2;
  double cos_out1;     /* at x1 towards x2 */
  double cos_in2;      /* |cos| at x2 from x1 */
  double dist2;        /* |x2 - x1|^2 */
  vec3 rest;           /* S */
} base_path;

static void trace_base(const gdpt_scene* s, vec3 dir, int direct_only, rng* r, base_path* b)
{
  memset(b, 0, sizeof *b);
  const vec3 eye = s->camera.eye;
  if (!gdpt_intersect(s, eye, dir, 1e-9, 1e30, &b->x1))
    return;
  if (is_emitter(s, &b->x1)) {
    b->kind = 1;
    if (vdot(b->x1.n, dir) < 0.0) /* the lit side of the quad (normal u x v) */
      b->direct = s->materials[b->x1.material].emission;
    return;
  }
  if (direct_only)
    return;
  b->kind = 2;
  b->n1 = facing(b->x1.n, dir);
  b->a1 = gdpt_albedo(s, &b->x1);
  b->l1 = sample_light(s, r);
  b->c1 = nee(s, b->x1.p, b->n1, b->a1, &b->l1);

  /* x2 by cosine sampling at x1 */
  const vec3 d1 = cosine_direction(b->n1, r);
  gdpt_hit h;
  if (!gdpt_intersect(s, vadd(b->x1.p, vscale(b->n1, 1e-7)), d1, 1e-9, 1e30, &h) ||
      is_emitter(s, &h))
    return;
  b->has_x2 = 1;
  b->x2 = h;
  b->cos_out1 = vdot(b->n1, d1);
  b->cos_in2 = fabs(vdot(h.n, d1));
  b->dist2 = h.t * h.t;

  /* from x2 on: T' starts at 1; Russian roulette uses T' only, so base and
   * offset share its decisions and probabilities */
  vec3 throughput = v3(1, 1, 1), rest = v3(0, 0, 0), dir_in = d1;
  for (int k = 1; k < s->max_depth; ++k) {
    const vec3 n = facing(h.n, dir_in);
    const vec3 a = gdpt_albedo(s, &h);
    const light_sample ls = sample_light(s, r);
    rest = vadd(rest, vmul(throughput, nee(s, h.p, n, a, &ls)));
    if (k + 1 == s->max_depth)
      break;
    double q = 1.0;
    if (k >= 3) {
      q = fmin(0.95, fmax(0.05, vmax(vmul(throughput, a))));
      if (uniform(r) >= q)
        break;
    }
    const vec3 d = cosine_direction(n, r);
    gdpt_hit next;
    if (!gdpt_intersect(s, vadd(h.p, vscale(n, 1e-7)), d, 1e-9, 1e30, &next) ||
        is_emitter(s, &next))
      break;
    throughput = vscale(vmul(throughput, a), 1.0 / q);
    h = next;
    dir_in = d;
  }
  b->rest = rest;
}

/* The MIS-weighted gradient sample (offset minus base) of base path b for
 * the camera ray dir_y through the neighbour pixel. */
static vec3 shift(const gdpt_scene* s, const base_path* b, vec3 dir_y)
{
  const vec3 base_total = vadd(b->c1, vmul(b->a1, b->rest));
  gdpt_hit y1;
  if (!gdpt_intersect(s, s->camera.eye, dir_y, 1e-9, 1e30, &y1) || is_emitter(s, &y1))
    return vscale(base_total, -1.0); /* failed: w = 1, offset 0 */
  const vec3 ny = facing(y1.n, dir_y);
  const vec3 ay = gdpt_albedo(s, &y1);
  const vec3 cy1 = nee(s, y1.p, ny, ay, &b->l1);
  vec3 delta = vscale(vsub(cy1, b->c1), 0.5);
  if (!b->has_x2)
    return delta;
  const vec3 to_x2 = vsub(b->x2.p, y1.p);
  const double dist2 = vdot(to_x2, to_x2);
  const vec3 dir = vscale(to_x2, 1.0 / sqrt(dist2));
  const double cos_out = vdot(ny, dir);
  const double cos_in = -vdot(b->x2.n, dir);
  /* x2 must be reached from the side the base path arrived on */
  const double base_side = vdot(b->x2.n, vsub(b->x1.p, b->x2.p));
  const int ok = cos_out > 0.0 && cos_in * base_side > 0.0 &&
                 gdpt_visible(s, vadd(y1.p, vscale(ny, 1e-7)), b->x2.p);
  if (!ok)
    return vsub(delta, vmul(b->a1, b->rest));
  const double p_offset = cos_out * fabs(cos_in) / dist2;   /* p(x2 | y1), times pi */
  const double p_base = b->cos_out1 * b->cos_in2 / b->dist2; /* p(x2 | x1), times pi */
  const vec3 ty = vscale(ay, p_offset / p_base);             /* (ay / pi) G(y1, x2) / p(x2 | x1) */
  const double w = 1.0 / (1.0 + p_offset / p_base);
  return vadd(delta, vscale(vmul(vsub(ty, b->a1), b->rest), w));
}

/* -- the render loop -------------------------------------------------------------------- */

static void add3(float* buf, size_t i, vec3 v)
{
  buf[3 * i] += (float)v.x;
  buf[3 * i + 1] += (float)v.y;
  buf[3 * i + 2] += (float)v.z;
}

/* One sample's value into pixel i's histograms (lull_rhf_bin per channel). */
static void add_to_histogram(float* histogram, size_t i, vec3 v, const gdpt_settings* settings)
{
  const int bins = settings->histogram_bins;
  const double value[3] = {v.x, v.y, v.z};
  float* h = histogram + i * (size_t)bins * 3;
  for (int c = 0; c < 3; ++c) {
    int k0;
    float w0;
    lull_rhf_bin((float)value[c], bins, settings->histogram_gamma, settings->histogram_max, &k0,
                 &w0);
    h[3 * k0 + c] += w0;
    if (k0 + 1 < bins)
      h[3 * (k0 + 1) + c] += 1.0f - w0;
  }
}

void gdpt_render(const gdpt_scene* s, const gdpt_settings* settings, gdpt_buffers* out,
                 void (*progress)(double done, void* user), void* user)
{
  const int w = s->width, h = s->height;
  const size_t n = (size_t)w * (size_t)h;
  /* per-direction gradient sums at the base pixel: +x, -x, +y, -y */
  float* dir_sum = calloc(4 * 3 * n, sizeof(float));
  double* feat = calloc(2 * 7 * n, sizeof(double)); /* sums and squares of 7 feature channels */
  float* primal = calloc(3 * n, sizeof(float));
  float* direct = calloc(3 * n, sizeof(float));
  if (!dir_sum || !feat || !primal || !direct) {
    free(dir_sum);
    free(feat);
    free(primal);
    free(direct);
    return;
  }
  if (out->histogram)
    memset(out->histogram, 0, n * (size_t)settings->histogram_bins * 3 * sizeof(float));
  const int offsets[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
  int rows_done = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(settings->threads)
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      for (int k = 0; k < settings->spp; ++k) {
        rng r = rng_for(settings->seed, i, settings->first_sample + (uint64_t)k);
        const double ux = uniform(&r), uy = uniform(&r);
        base_path b;
        trace_base(s, camera_dir(s, x + ux, y + uy), settings->direct_only, &r, &b);
        add3(direct, i, b.direct);
        const vec3 indirect = b.kind == 2 && !settings->direct_only
                                  ? vadd(b.c1, vmul(b.a1, b.rest))
                                  : v3(0.0, 0.0, 0.0);
        if (b.kind == 2 && !settings->direct_only)
          add3(primal, i, indirect);
        if (out->histogram)
          add_to_histogram(out->histogram, i, vadd(indirect, b.direct), settings);
        /* first-hit features */
        double f[7] = {0, 0, 0, 0, 0, 0, 0};
        if (b.kind == 2) {
          f[0] = b.a1.x;
          f[1] = b.a1.y;
          f[2] = b.a1.z;
        } else if (b.kind == 1) {
          f[0] = f[1] = f[2] = 1.0;
        }
        if (b.kind != 0) {
          const vec3 nf = facing(b.x1.n, camera_dir(s, x + ux, y + uy));
          f[3] = nf.x;
          f[4] = nf.y;
          f[5] = nf.z;
          f[6] = b.x1.t;
        }
        for (int c = 0; c < 7; ++c) {
          feat[7 * i + c] += f[c];
          feat[7 * (n + i) + c] += f[c] * f[c];
        }
        if (!settings->gradients || settings->direct_only || b.kind != 2)
          continue;
        for (int d = 0; d < 4; ++d) {
          const int qx = x + offsets[d][0], qy = y + offsets[d][1];
          if (qx < 0 || qy < 0 || qx >= w || qy >= h)
            continue;
          add3(dir_sum + 3 * n * (size_t)d, i, shift(s, &b, camera_dir(s, qx + ux, qy + uy)));
        }
      }
    }
    if (progress) {
#pragma omp critical(gdpt_progress)
      progress((double)++rows_done / h, user);
    }
  }

  const float inv = 1.0f / (float)settings->spp;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      for (int c = 0; c < 3; ++c) {
        if (out->primal)
          out->primal[3 * i + c] = primal[3 * i + c] * inv;
        if (out->direct)
          out->direct[3 * i + c] = direct[3 * i + c] * inv;
        if (settings->gradients && out->dx) {
          const float neg = x + 1 < w ? dir_sum[3 * n + 3 * (i + 1) + c] : 0.0f;
          out->dx[3 * i + c] = (dir_sum[3 * i + c] - neg) * inv;
        }
        if (settings->gradients && out->dy) {
          const float neg = y + 1 < h ? dir_sum[9 * n + 3 * (i + (size_t)w) + c] : 0.0f;
          out->dy[3 * i + c] = (dir_sum[6 * n + 3 * i + c] - neg) * inv;
        }
      }
      float mean[7], var[7];
      for (int c = 0; c < 7; ++c) {
        const double m = feat[7 * i + c] / settings->spp;
        const double m2 = feat[7 * (n + i) + c] / settings->spp;
        mean[c] = (float)m;
        /* variance of the pixel mean */
        var[c] = settings->spp > 1 ? (float)(fmax(0.0, m2 - m * m) / (settings->spp - 1)) : 0.0f;
      }
      for (int c = 0; c < 3; ++c) {
        if (out->albedo)
          out->albedo[3 * i + c] = mean[c];
        if (out->normal)
          out->normal[3 * i + c] = mean[3 + c];
        if (out->albedo_var)
          out->albedo_var[3 * i + c] = var[c];
        if (out->normal_var)
          out->normal_var[3 * i + c] = var[3 + c];
      }
      if (out->depth)
        out->depth[i] = mean[6];
      if (out->depth_var)
        out->depth_var[i] = var[6];
    }
  free(dir_sum);
  free(feat);
  free(primal);
  free(direct);
}
