#include "regression_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { ANDE = REG_ALBEDO | REG_NORMAL | REG_DEPTH };

/* name, w, h, halves, features, channels, poison, variance, out_variance, ldr, radius,
 * second_radius (-1: none), max_memory_mb */
const reg_case reg_cases[] = {
    {"halves, albedo normal depth", 48, 40, 1, ANDE, 3, 0, 0, 0, 0, 0, 0, -1},
    {"halves, feature halves", 44, 36, 1, ANDE | REG_FEATURE_HALVES, 3, 0, 0, 1, 0, 0, 0, -1},
    {"halves, albedo once, normal depth halves", 44, 36, 1,
     ANDE | REG_FEATURE_HALVES | REG_ALBEDO_ONCE, 3, 0, 0, 0, 0, 0, 0, -1},
    {"halves, flat left half", 120, 40, 1, ANDE | REG_FLAT_LEFT, 3, 0, 0, 1, 0, 0, 0, -1},
    {"one buffer, flat left half", 120, 40, 0, ANDE | REG_FLAT_LEFT, 3, 0, 0, 0, 0, 0, 0, -1},
    {"halves, position halves, rgba", 40, 33, 1, REG_NORMAL | REG_POSITION | REG_FEATURE_HALVES, 4,
     0, 0, 1, 0, 0, 0, -1},
    {"halves, no features, 1 channel", 33, 29, 1, 0, 1, 0, 0, 0, 0, 0, 0, -1},
    {"halves, no second pass, ldr", 36, 30, 1, REG_ALBEDO | REG_NORMAL, 3, 0, 0, 0, 1, 0, -1, -1},
    {"halves, albedo depth, small window", 52, 44, 1, REG_ALBEDO | REG_DEPTH, 3, 0, 0, 0, 0, 3, 5, -1},
    {"one buffer, albedo normal depth", 48, 40, 0, ANDE, 3, 0, 0, 0, 0, 0, 0, -1},
    {"one buffer, variance, 2 channels", 37, 31, 0, REG_ALBEDO, 2, 0, 1, 0, 0, 0, 0, -1},
    {"one buffer, position, rgba", 40, 32, 0, REG_NORMAL | REG_POSITION, 4, 0, 0, 0, 0, 0, 0, -1},
    {"one buffer, no features", 35, 27, 0, 0, 3, 0, 0, 0, 0, 0, 0, -1},
    {"halves, non-finite inputs", 40, 30, 1, ANDE | REG_FEATURE_HALVES, 3, 1, 0, 1, 0, 0, 0, -1},
    {"one buffer, non-finite inputs", 40, 30, 0, ANDE, 3, 1, 1, 0, 0, 0, 0, -1},
    {"halves 1x1", 1, 1, 1, ANDE, 3, 0, 0, 1, 0, 0, 0, -1},
    {"one buffer 1x1", 1, 1, 0, ANDE, 3, 0, 0, 0, 0, 0, 0, -1},
    {"halves 3x2", 3, 2, 1, ANDE | REG_FEATURE_HALVES, 3, 0, 0, 0, 0, 0, 0, -1},
    {"one buffer 3x2", 3, 2, 0, ANDE, 3, 0, 0, 0, 0, 0, 0, -1},
    {"one buffer 2x9", 2, 9, 0, REG_ALBEDO | REG_NORMAL, 3, 0, 0, 0, 0, 0, 0, -1},
    {"halves, tiled (maxMemoryMB 1)", 160, 128, 1, ANDE, 3, 0, 0, 1, 0, 2, 2, 1},
    {"one buffer, tiled (maxMemoryMB 1)", 160, 128, 0, ANDE, 4, 0, 0, 0, 0, 2, 0, 1},
};
const int reg_case_count = (int)(sizeof reg_cases / sizeof reg_cases[0]);

static float* alloc_floats(size_t n)
{
  float* p = malloc(n * sizeof(float));
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

/* A noisy estimate of v: mostly within +-60%, now and then a firefly. */
static float noisy(float v, unsigned* seed)
{
  const float n = 2.0f * lull_test_random(seed) - 1.0f;
  float s = v * (1.0f + 0.6f * n);
  if (lull_test_random(seed) < 0.004f)
    s *= 30.0f;
  return s;
}

void reg_data_make(reg_data* d, const reg_case* c, unsigned seed)
{
  memset(d, 0, sizeof *d);
  const int w = c->width, h = c->height, ch = c->channels;
  const size_t n = (size_t)w * (size_t)h;
  d->width = w;
  d->height = h;
  d->channels = ch;
  float* clean = alloc_floats(3 * n);
  float* albedo = alloc_floats(3 * n);
  float* normal = alloc_floats(3 * n);
  float* depth = alloc_floats(n);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      const int right = x * 3 > w + y; /* a slanted edge between two materials */
      const float checker = ((x / 4 + y / 4) % 2) ? 1.0f : 0.75f;
      const float shade = 0.2f + 0.6f * (float)y / (float)h + (right ? 0.3f * (float)x / (float)w : 0.0f);
      depth[i] = right ? 5.0f + 0.01f * (float)x : 3.0f + 0.02f * (float)y;
      normal[3 * i + 0] = right ? 0.6f : 0.0f;
      normal[3 * i + 1] = 0.0f;
      normal[3 * i + 2] = right ? 0.8f : 1.0f;
      for (int k = 0; k < 3; ++k) {
        albedo[3 * i + (size_t)k] = (right ? 0.7f - 0.2f * (float)k : 0.3f + 0.1f * (float)k) * checker;
        clean[3 * i + (size_t)k] = albedo[3 * i + (size_t)k] * shade * (right ? 2.0f : 1.0f);
      }
    }
  /* colour: the halves' noise independent, the buffer their mean */
  float* half[2];
  for (int k = 0; k < 2; ++k) {
    half[k] = alloc_floats((size_t)ch * n);
    for (size_t i = 0; i < n; ++i)
      for (int j = 0; j < ch; ++j) {
        float v = j < 3 ? noisy(clean[3 * i + (size_t)j], &seed) : (float)(i % 7) / 7.0f;
        if (c->ldr)
          v = v > 1.0f ? 1.0f : v;
        if ((c->features & REG_FLAT_LEFT) && (int)(i % (size_t)w) < w / 2)
          v = 0.3f; /* a constant background: the CPU skips its flat tiles */
        half[k][(size_t)ch * i + (size_t)j] = v;
      }
  }
  if (c->halves) {
    d->color_a = half[0];
    d->color_b = half[1];
  } else {
    d->color = half[0];
    for (size_t i = 0; i < (size_t)ch * n; ++i)
      d->color[i] = 0.5f * (half[0][i] + half[1][i]);
    free(half[1]);
  }
  /* features: once, or as halves with a little noise each */
  const int nsets = (c->features & REG_FEATURE_HALVES) ? 2 : 1;
  for (int k = 0; k < nsets; ++k) {
    float *al = NULL, *no = NULL, *de = NULL, *po = NULL;
    const float amount = nsets == 2 ? 0.03f : 0.0f;
    if (c->features & REG_ALBEDO) {
      al = alloc_floats(3 * n);
      for (size_t i = 0; i < 3 * n; ++i)
        al[i] = albedo[i] * (1.0f + amount * (2.0f * lull_test_random(&seed) - 1.0f));
    }
    if (c->features & REG_NORMAL) {
      no = alloc_floats(3 * n);
      for (size_t i = 0; i < 3 * n; ++i)
        no[i] = normal[i] + amount * (2.0f * lull_test_random(&seed) - 1.0f);
    }
    if (c->features & REG_DEPTH) {
      de = alloc_floats(n);
      for (size_t i = 0; i < n; ++i)
        de[i] = depth[i] * (1.0f + 0.3f * amount * (2.0f * lull_test_random(&seed) - 1.0f));
    }
    if (c->features & REG_POSITION) {
      po = alloc_floats(3 * n);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const size_t i = (size_t)y * (size_t)w + (size_t)x;
          const float z = depth[i] * (1.0f + 0.3f * amount * (2.0f * lull_test_random(&seed) - 1.0f));
          po[3 * i + 0] = 0.01f * (float)x * z;
          po[3 * i + 1] = 0.01f * (float)y * z;
          po[3 * i + 2] = z;
        }
    }
    if (nsets == 2 && (c->features & REG_ALBEDO_ONCE)) {
      /* the albedo given once guides both halves (not cross-prefiltered) */
      if (k == 0)
        d->albedo = al;
      else
        free(al);
      al = NULL;
    }
    if (nsets == 1) {
      d->albedo = al, d->normal = no, d->depth = de, d->position = po;
    } else if (k == 0) {
      d->albedo_a = al, d->normal_a = no, d->depth_a = de, d->position_a = po;
    } else {
      d->albedo_b = al, d->normal_b = no, d->depth_b = de, d->position_b = po;
    }
  }
  if (c->variance) {
    d->variance = alloc_floats(3 * n);
    for (size_t i = 0; i < 3 * n; ++i)
      d->variance[i] = 0.05f * clean[i] * clean[i];
  }
  if (c->poison && n > 300) {
    float* col = c->halves ? d->color_a : d->color;
    col[(size_t)ch * 17] = NAN;
    col[(size_t)ch * 200 + 1] = INFINITY;
    col[(size_t)ch * (n / 2)] = -INFINITY;
    if (c->halves)
      d->color_b[(size_t)ch * 77] = NAN;
    float* al = d->albedo ? d->albedo : d->albedo_a;
    float* no = d->normal ? d->normal : d->normal_b;
    float* de = d->depth ? d->depth : d->depth_a;
    if (al)
      al[3 * 40] = NAN;
    if (no)
      no[3 * 41 + 2] = INFINITY;
    if (de)
      de[42] = NAN;
    if (d->variance) {
      d->variance[3 * 50] = NAN;
      d->variance[3 * 51 + 1] = -1.0f;
    }
  }
  free(clean);
  free(albedo);
  free(normal);
  free(depth);
}

void reg_data_free(reg_data* d)
{
  float* all[] = {d->color,    d->color_a,  d->color_b,  d->albedo,     d->albedo_a,   d->albedo_b,
                  d->normal,   d->normal_a, d->normal_b, d->depth,      d->depth_a,    d->depth_b,
                  d->position, d->position_a, d->position_b, d->variance};
  for (size_t k = 0; k < sizeof all / sizeof *all; ++k)
    free(all[k]);
  memset(d, 0, sizeof *d);
}

lull_regression_params reg_case_params(const reg_case* c)
{
  lull_regression_params p = lull_regression_default_params();
  if (c->radius > 0)
    p.radius = c->radius;
  if (c->second_radius > 0)
    p.second_radius = c->second_radius;
  else if (c->second_radius < 0)
    p.second_radius = 0;
  if (c->ldr)
    p.hdr = 0;
  if (c->max_memory_mb >= 0)
    p.memory_cap = c->max_memory_mb > 0 ? (size_t)c->max_memory_mb * 1048576u : 1u;
  return p;
}

lull_regression_images reg_case_images(const reg_data* d, const reg_case* c, float* output,
                                       float* output_variance)
{
  const int w = d->width, h = d->height, ch = d->channels;
  lull_regression_images im;
  memset(&im, 0, sizeof im);
  im.color = lull_test_float_view(d->color, ch, w, h);
  im.color_a = lull_test_float_view(d->color_a, ch, w, h);
  im.color_b = lull_test_float_view(d->color_b, ch, w, h);
  im.albedo = lull_test_float_view(d->albedo, 3, w, h);
  im.albedo_a = lull_test_float_view(d->albedo_a, 3, w, h);
  im.albedo_b = lull_test_float_view(d->albedo_b, 3, w, h);
  im.normal = lull_test_float_view(d->normal, 3, w, h);
  im.normal_a = lull_test_float_view(d->normal_a, 3, w, h);
  im.normal_b = lull_test_float_view(d->normal_b, 3, w, h);
  im.depth = lull_test_float_view(d->depth, 1, w, h);
  im.depth_a = lull_test_float_view(d->depth_a, 1, w, h);
  im.depth_b = lull_test_float_view(d->depth_b, 1, w, h);
  im.position = lull_test_float_view(d->position, 3, w, h);
  im.position_a = lull_test_float_view(d->position_a, 3, w, h);
  im.position_b = lull_test_float_view(d->position_b, 3, w, h);
  im.variance = lull_test_float_view(d->variance, 3, w, h);
  im.output = lull_test_float_view(output, ch, w, h);
  if (c->halves && c->out_variance)
    im.output_variance = lull_test_float_view(output_variance, 3, w, h);
  return im;
}

reg_agreement reg_agreement_of(const float* test, const float* ref, size_t n)
{
  reg_agreement a = {0.0, 0.0, 0.0};
  double largest = 0.0, sum_ref = 0.0, sum_diff = 0.0;
  for (size_t i = 0; i < n; ++i) {
    largest = fmax(largest, fabs((double)ref[i]));
    sum_ref += fabs((double)ref[i]);
  }
  size_t outliers = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = fabs((double)test[i] - (double)ref[i]);
    if (!(d <= 1e-3 * largest))
      ++outliers;
    if (!(d <= a.max_rel * largest))
      a.max_rel = isnan(d) ? INFINITY : (largest > 0.0 ? d / largest : d);
    sum_diff += isnan(d) ? INFINITY : d;
  }
  a.mean_rel = sum_ref > 0.0 ? sum_diff / sum_ref : sum_diff;
  a.outliers = n ? (double)outliers / (double)n : 0.0;
  return a;
}
