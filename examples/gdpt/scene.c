/* gdpt's scenes and ray queries (brute force: the scenes have a few dozen
 * shapes). */
#include <string.h>

#include "gdpt.h"

/* -- intersection --------------------------------------------------------------------- */

static int hit_quad(const gdpt_shape* s, vec3 o, vec3 d, double tmin, double tmax, gdpt_hit* h)
{
  const vec3 n = vcross(s->u, s->v);
  const double denom = vdot(d, n);
  if (fabs(denom) < 1e-300)
    return 0;
  const double t = vdot(vsub(s->a, o), n) / denom;
  if (!(t > tmin && t < tmax))
    return 0;
  const vec3 w = vsub(vadd(o, vscale(d, t)), s->a);
  const double nn = vdot(n, n);
  const double alpha = vdot(vcross(w, s->v), n) / nn;
  const double beta = vdot(vcross(s->u, w), n) / nn;
  if (alpha < 0.0 || alpha > 1.0 || beta < 0.0 || beta > 1.0)
    return 0;
  h->t = t;
  h->n = vscale(n, 1.0 / sqrt(nn));
  return 1;
}

static int hit_box(const gdpt_shape* s, vec3 o, vec3 d, double tmin, double tmax, gdpt_hit* h)
{
  const double oo[3] = {o.x, o.y, o.z}, dd[3] = {d.x, d.y, d.z};
  const double lo[3] = {s->lo.x, s->lo.y, s->lo.z}, hi[3] = {s->hi.x, s->hi.y, s->hi.z};
  double t0 = tmin, t1 = tmax;
  int axis0 = -1, axis1 = -1;
  for (int a = 0; a < 3; ++a) {
    const double inv = 1.0 / dd[a];
    double ta = (lo[a] - oo[a]) * inv, tb = (hi[a] - oo[a]) * inv;
    if (ta > tb) {
      const double t = ta;
      ta = tb;
      tb = t;
    }
    if (ta > t0) {
      t0 = ta;
      axis0 = a;
    }
    if (tb < t1) {
      t1 = tb;
      axis1 = a;
    }
    if (t0 > t1)
      return 0;
  }
  /* entering hit, or the exit hit for a ray starting inside */
  const double t = axis0 >= 0 ? t0 : t1;
  const int axis = axis0 >= 0 ? axis0 : axis1;
  if (axis < 0 || !(t > tmin && t < tmax))
    return 0;
  const vec3 p = vadd(o, vscale(d, t));
  const double pp[3] = {p.x, p.y, p.z};
  const double mid = 0.5 * (lo[axis] + hi[axis]);
  double n[3] = {0, 0, 0};
  n[axis] = pp[axis] > mid ? 1.0 : -1.0;
  h->t = t;
  h->n = v3(n[0], n[1], n[2]);
  return 1;
}

static int hit_sphere(const gdpt_shape* s, vec3 o, vec3 d, double tmin, double tmax, gdpt_hit* h)
{
  const vec3 oc = vsub(o, s->center);
  const double b = vdot(oc, d), c = vdot(oc, oc) - s->radius * s->radius;
  const double disc = b * b - c; /* d is unit length */
  if (disc < 0.0)
    return 0;
  const double root = sqrt(disc);
  double t = -b - root;
  if (!(t > tmin && t < tmax))
    t = -b + root;
  if (!(t > tmin && t < tmax))
    return 0;
  h->t = t;
  h->n = vscale(vsub(vadd(o, vscale(d, t)), s->center), 1.0 / s->radius);
  return 1;
}

int gdpt_intersect(const gdpt_scene* scene, vec3 origin, vec3 dir, double tmin, double tmax,
                   gdpt_hit* hit)
{
  int found = 0;
  gdpt_hit h;
  for (int i = 0; i < scene->num_shapes; ++i) {
    const gdpt_shape* s = &scene->shapes[i];
    int ok = 0;
    switch (s->type) {
      case SHAPE_QUAD: ok = hit_quad(s, origin, dir, tmin, tmax, &h); break;
      case SHAPE_BOX: ok = hit_box(s, origin, dir, tmin, tmax, &h); break;
      case SHAPE_SPHERE: ok = hit_sphere(s, origin, dir, tmin, tmax, &h); break;
    }
    if (ok) {
      tmax = h.t;
      h.shape = i;
      h.material = s->material;
      *hit = h;
      found = 1;
    }
  }
  if (found)
    hit->p = vadd(origin, vscale(dir, hit->t));
  return found;
}

int gdpt_visible(const gdpt_scene* scene, vec3 a, vec3 b)
{
  const vec3 d = vsub(b, a);
  const double len = vlen(d);
  gdpt_hit h;
  /* relative epsilons: scenes are about one unit across */
  return !gdpt_intersect(scene, a, vscale(d, 1.0 / len), 1e-7, len * (1.0 - 1e-7), &h);
}

vec3 gdpt_albedo(const gdpt_scene* scene, const gdpt_hit* hit)
{
  const gdpt_material* m = &scene->materials[hit->material];
  const vec3 p = hit->p;
  int second = 0;
  switch (m->texture) {
    case 1: second = ((int)floor(p.x * m->scale) + (int)floor(p.z * m->scale)) & 1; break;
    case 2: second = (int)floor(p.x * m->scale) & 1; break;
    case 3: second = ((int)floor(p.x * m->scale) + (int)floor(p.y * m->scale)) & 1; break;
    default: break;
  }
  return second ? m->albedo2 : m->albedo;
}

/* -- building ------------------------------------------------------------------------- */

static int material(gdpt_scene* s, vec3 albedo)
{
  gdpt_material* m = &s->materials[s->num_materials];
  memset(m, 0, sizeof *m);
  m->albedo = albedo;
  m->albedo2 = albedo;
  return s->num_materials++;
}

static int textured(gdpt_scene* s, vec3 a, vec3 b, int texture, double scale)
{
  const int id = material(s, a);
  s->materials[id].albedo2 = b;
  s->materials[id].texture = texture;
  s->materials[id].scale = scale;
  return id;
}

static void quad(gdpt_scene* s, vec3 a, vec3 u, vec3 v, int mat)
{
  gdpt_shape* q = &s->shapes[s->num_shapes++];
  memset(q, 0, sizeof *q);
  q->type = SHAPE_QUAD;
  q->a = a;
  q->u = u;
  q->v = v;
  q->material = mat;
}

static void box(gdpt_scene* s, vec3 lo, vec3 hi, int mat)
{
  gdpt_shape* b = &s->shapes[s->num_shapes++];
  memset(b, 0, sizeof *b);
  b->type = SHAPE_BOX;
  b->lo = lo;
  b->hi = hi;
  b->material = mat;
}

static void sphere(gdpt_scene* s, vec3 c, double r, int mat)
{
  gdpt_shape* b = &s->shapes[s->num_shapes++];
  memset(b, 0, sizeof *b);
  b->type = SHAPE_SPHERE;
  b->center = c;
  b->radius = r;
  b->material = mat;
}

/* A quad light emitting `le` on the side of u x v. */
static void light(gdpt_scene* s, vec3 a, vec3 u, vec3 v, vec3 le)
{
  const int mat = material(s, v3(0, 0, 0));
  s->materials[mat].emission = le;
  s->lights[s->num_lights].shape = s->num_shapes;
  s->lights[s->num_lights].area = vlen(vcross(u, v));
  s->num_lights++;
  quad(s, a, u, v, mat);
}

static void camera(gdpt_scene* s, vec3 eye, vec3 target, double vfov_degrees)
{
  gdpt_camera* c = &s->camera;
  c->eye = eye;
  c->forward = vnorm(vsub(target, eye));
  const vec3 right = vnorm(vcross(v3(0, 1, 0), c->forward));
  const vec3 up = vcross(c->forward, right);
  const double t = tan(0.5 * vfov_degrees * 3.14159265358979323846 / 180.0);
  c->up = vscale(up, t);
  c->right = vscale(right, t * (double)s->width / (double)s->height);
}

/* Light selection proportional to power. */
static void finish(gdpt_scene* s)
{
  double total = 0.0;
  for (int i = 0; i < s->num_lights; ++i) {
    const gdpt_light* l = &s->lights[i];
    total += l->area * vmax(s->materials[s->shapes[l->shape].material].emission);
  }
  for (int i = 0; i < s->num_lights; ++i) {
    gdpt_light* l = &s->lights[i];
    l->select = l->area * vmax(s->materials[s->shapes[l->shape].material].emission) / total;
  }
}

/* The walls of the room [0,1]^3 without the front (z = 0); quads face in. */
static void room(gdpt_scene* s, int floor_mat, int ceiling_mat, int back_mat, int left_mat,
                 int right_mat)
{
  quad(s, v3(0, 0, 0), v3(0, 0, 1), v3(1, 0, 0), floor_mat);
  if (ceiling_mat >= 0)
    quad(s, v3(0, 1, 0), v3(1, 0, 0), v3(0, 0, 1), ceiling_mat);
  quad(s, v3(0, 0, 1), v3(0, 1, 0), v3(1, 0, 0), back_mat);
  quad(s, v3(0, 0, 0), v3(0, 1, 0), v3(0, 0, 1), left_mat);
  quad(s, v3(1, 0, 0), v3(0, 0, 1), v3(0, 1, 0), right_mat);
}

/* Diffuse Cornell-style box with an area light and two blocks. */
static void build_cornell(gdpt_scene* s)
{
  const int white = material(s, v3(0.73, 0.73, 0.73));
  const int red = material(s, v3(0.63, 0.065, 0.05));
  const int green = material(s, v3(0.14, 0.45, 0.09));
  room(s, white, white, white, red, green);
  box(s, v3(0.53, 0.0, 0.18), v3(0.83, 0.3, 0.48), white);  /* short block */
  box(s, v3(0.16, 0.0, 0.45), v3(0.46, 0.62, 0.75), white); /* tall block */
  light(s, v3(0.38, 0.999, 0.38), v3(0.24, 0, 0), v3(0, 0, 0.24), v3(22, 17, 8));
  camera(s, v3(0.5, 0.5, -1.12), v3(0.5, 0.5, 0.5), 38.0);
  s->max_depth = 8;
}

/* Hard indirect light: the room is lit only through a ceiling opening
 * under a small, bright light in a dark shaft; a patch on the floor with a
 * pillar's shadow lights the rest of the room by interreflection. */
static void build_window(gdpt_scene* s)
{
  const int white = material(s, v3(0.75, 0.75, 0.75));
  const int warm = material(s, v3(0.8, 0.6, 0.4));
  const int blue = material(s, v3(0.25, 0.35, 0.7));
  room(s, white, -1, white, blue, warm);
  /* ceiling with an opening x in [0.55, 0.8], z in [0.35, 0.6] */
  const double x0 = 0.55, x1 = 0.8, z0 = 0.35, z1 = 0.6;
  quad(s, v3(0, 1, 0), v3(x0, 0, 0), v3(0, 0, 1), white);
  quad(s, v3(x1, 1, 0), v3(1 - x1, 0, 0), v3(0, 0, 1), white);
  quad(s, v3(x0, 1, 0), v3(x1 - x0, 0, 0), v3(0, 0, z0), white);
  quad(s, v3(x0, 1, z1), v3(x1 - x0, 0, 0), v3(0, 0, 1 - z1), white);
  /* the shaft above the opening, 0.8 high and dark, light at its top */
  const double top = 1.8;
  const int shaft = material(s, v3(0.3, 0.3, 0.3));
  quad(s, v3(x0, 1, z0), v3(0, top - 1, 0), v3(x1 - x0, 0, 0), shaft);
  quad(s, v3(x0, 1, z1), v3(x1 - x0, 0, 0), v3(0, top - 1, 0), shaft);
  quad(s, v3(x0, 1, z0), v3(0, 0, z1 - z0), v3(0, top - 1, 0), shaft);
  quad(s, v3(x1, 1, z0), v3(0, top - 1, 0), v3(0, 0, z1 - z0), shaft);
  quad(s, v3(x0, top, z0), v3(0, 0, z1 - z0), v3(x1 - x0, 0, 0), shaft);
  light(s, v3(0.625, top - 0.001, 0.425), v3(0.1, 0, 0), v3(0, 0, 0.1), v3(900, 870, 780));
  box(s, v3(0.42, 0.0, 0.42), v3(0.52, 0.85, 0.52), white); /* pillar casting a hard shadow */
  box(s, v3(0.1, 0.0, 0.6), v3(0.35, 0.2, 0.9), warm);
  camera(s, v3(0.5, 0.5, -0.9), v3(0.5, 0.47, 0.5), 45.0);
  s->max_depth = 10;
}

/* Textured albedo and thin geometry: a checker floor, a striped wall,
 * thin poles and a thin bar (about a pixel wide), a checkered sphere. */
static void build_textured(gdpt_scene* s)
{
  const int white = material(s, v3(0.75, 0.75, 0.75));
  const int checker = textured(s, v3(0.85, 0.85, 0.8), v3(0.1, 0.1, 0.12), 1, 8.0);
  const int stripes = textured(s, v3(0.8, 0.3, 0.2), v3(0.9, 0.85, 0.7), 2, 12.0);
  const int grey = material(s, v3(0.45, 0.5, 0.55));
  const int ball = textured(s, v3(0.2, 0.5, 0.8), v3(0.9, 0.9, 0.3), 3, 10.0);
  room(s, checker, white, stripes, grey, white);
  for (int i = 0; i < 7; ++i) {
    const double x = 0.18 + 0.1 * i, w = 0.003 + 0.001 * i;
    box(s, v3(x, 0.0, 0.7), v3(x + w, 0.75, 0.7 + w), white);
  }
  box(s, v3(0.1, 0.6, 0.55), v3(0.9, 0.604, 0.554), grey);
  sphere(s, v3(0.3, 0.16, 0.35), 0.16, ball);
  box(s, v3(0.6, 0.0, 0.25), v3(0.85, 0.25, 0.5), stripes);
  light(s, v3(0.3, 0.999, 0.3), v3(0.4, 0, 0), v3(0, 0, 0.25), v3(9, 9, 8.5));
  camera(s, v3(0.5, 0.5, -1.12), v3(0.5, 0.45, 0.5), 38.0);
  s->max_depth = 8;
}

const char* const* gdpt_scene_names(void)
{
  static const char* const names[] = {"cornell", "window", "textured", NULL};
  return names;
}

int gdpt_scene_build(gdpt_scene* scene, const char* name, int width, int height)
{
  memset(scene, 0, sizeof *scene);
  scene->width = width;
  scene->height = height;
  if (strcmp(name, "cornell") == 0)
    build_cornell(scene);
  else if (strcmp(name, "window") == 0)
    build_window(scene);
  else if (strcmp(name, "textured") == 0)
    build_textured(scene);
  else
    return 0;
  scene->name = name;
  finish(scene);
  return 1;
}
