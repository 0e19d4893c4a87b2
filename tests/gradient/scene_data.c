#include "scene_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lull_io.h"
#include "metrics.h"

/* Reads DIR/NAME-WHAT.exr: one pass of `channels`; returns packed floats. */
static float* load(const char* dir, const char* name, const char* what, int channels, int* w,
                   int* h)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s-%s.exr", dir, name, what);
  lull_io_image image;
  char err[512];
  if (lull_io_read(path, &image, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return NULL;
  }
  float* out = NULL;
  if (image.num_passes < 1 || image.passes[0].channels < channels ||
      (*w && (image.width != *w || image.height != *h))) {
    fprintf(stderr, "%s: unexpected layout\n", path);
  } else {
    *w = image.width;
    *h = image.height;
    const size_t n = (size_t)image.width * (size_t)image.height;
    out = malloc(n * (size_t)channels * sizeof(float));
    const lull_io_pass* p = &image.passes[0];
    for (size_t i = 0; out && i < n; ++i)
      for (int c = 0; c < channels; ++c)
        out[i * (size_t)channels + (size_t)c] = p->data[i * (size_t)p->channels + (size_t)c];
  }
  lull_io_free(&image);
  return out;
}

static float* mean_of(const float* a, const float* b, size_t count)
{
  float* out = malloc(count * sizeof(float));
  for (size_t i = 0; out && i < count; ++i)
    out[i] = 0.5f * (a[i] + b[i]);
  return out;
}

int scene_data_load(scene_data* s, const char* dir, const char* name)
{
  memset(s, 0, sizeof *s);
  int w = 0, h = 0;
  s->primal_a = load(dir, name, "A-primal", 3, &w, &h);
  if (!s->primal_a)
    return 0;
  s->primal_b = load(dir, name, "B-primal", 3, &w, &h);
  s->dx_a = load(dir, name, "A-dx", 3, &w, &h);
  s->dx_b = load(dir, name, "B-dx", 3, &w, &h);
  s->dy_a = load(dir, name, "A-dy", 3, &w, &h);
  s->dy_b = load(dir, name, "B-dy", 3, &w, &h);
  s->direct = load(dir, name, "reference-direct", 3, &w, &h);
  s->albedo = load(dir, name, "albedo", 3, &w, &h);
  s->normal = load(dir, name, "normal", 3, &w, &h);
  s->depth = load(dir, name, "depth", 1, &w, &h);
  float* va = load(dir, name, "var-albedo", 3, &w, &h);
  float* vn = load(dir, name, "var-normal", 3, &w, &h);
  float* vd = load(dir, name, "var-depth", 1, &w, &h);
  s->reference = load(dir, name, "reference", 3, &w, &h);
  s->width = w;
  s->height = h;
  const size_t n = (size_t)w * (size_t)h;
  int ok = s->primal_b && s->dx_a && s->dx_b && s->dy_a && s->dy_b && s->direct && s->albedo && s->normal && s->depth && va && vn && vd && s->reference;
  if (ok) {
    s->primal = mean_of(s->primal_a, s->primal_b, 3 * n);
    s->dx = mean_of(s->dx_a, s->dx_b, 3 * n);
    s->dy = mean_of(s->dy_a, s->dy_b, 3 * n);
    s->variance = malloc(3 * n * sizeof(float));
    ok = s->primal && s->dx && s->dy && s->variance;
    for (size_t i = 0; ok && i < n; ++i) {
      s->variance[3 * i] = (va[3 * i] + va[3 * i + 1] + va[3 * i + 2]) / 3.0f;
      s->variance[3 * i + 1] = (vn[3 * i] + vn[3 * i + 1] + vn[3 * i + 2]) / 3.0f;
      s->variance[3 * i + 2] = vd[i];
    }
  }
  free(va);
  free(vn);
  free(vd);
  if (!ok)
    scene_data_free(s);
  return ok;
}

void scene_data_free(scene_data* s)
{
  float* all[] = {s->primal_a, s->primal_b, s->dx_a,   s->dx_b,   s->dy_a,     s->dy_b,
                  s->direct,   s->primal,   s->dx,     s->dy,     s->albedo,   s->normal,
                  s->depth,    s->variance, s->reference};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    free(all[i]);
  memset(s, 0, sizeof *s);
}

static void share(OIDNFilter f, const char* name, const float* data, int channels, int w, int h)
{
  oidnSetSharedFilterImage(f, name, (void*)data, (OIDNFormat)(OIDN_FORMAT_FLOAT + channels - 1),
                           (size_t)w, (size_t)h, 0, 0, 0);
}

float* scene_data_noisy(const scene_data* s)
{
  const size_t n = 3 * (size_t)s->width * (size_t)s->height;
  float* out = malloc(n * sizeof(float));
  for (size_t i = 0; out && i < n; ++i)
    out[i] = s->primal[i] + s->direct[i];
  return out;
}

float* scene_data_run(OIDNDevice device, const scene_data* s, const scene_filter* filter)
{
  const int w = s->width, h = s->height;
  const size_t n = 3 * (size_t)w * (size_t)h;
  float* out = calloc(n, sizeof(float));
  OIDNFilter f = oidnNewFilter(device, filter->type);
  if (!f || !out) {
    free(out);
    return NULL;
  }
  share(f, "output", out, 3, w, h);
  if (strcmp(filter->type, "ATrous") == 0) {
    share(f, "color", s->primal, 3, w, h);
    share(f, "albedo", s->albedo, 3, w, h);
    share(f, "normal", s->normal, 3, w, h);
    share(f, "depth", s->depth, 1, w, h);
  } else {
    share(f, "color", s->primal, 3, w, h);
    share(f, "gradientX", s->dx, 3, w, h);
    share(f, "gradientY", s->dy, 3, w, h);
    if (strcmp(filter->type, "Poisson") == 0)
      oidnSetFilterInt(f, "norm", filter->norm);
    if (strcmp(filter->type, "GradientDomain") == 0) {
      share(f, "colorA", s->primal_a, 3, w, h);
      share(f, "colorB", s->primal_b, 3, w, h);
      share(f, "gradientXA", s->dx_a, 3, w, h);
      share(f, "gradientXB", s->dx_b, 3, w, h);
      share(f, "gradientYA", s->dy_a, 3, w, h);
      share(f, "gradientYB", s->dy_b, 3, w, h);
      share(f, "albedo", s->albedo, 3, w, h);
      share(f, "normal", s->normal, 3, w, h);
      share(f, "depth", s->depth, 1, w, h);
      share(f, "featureVariance", s->variance, 3, w, h);
      oidnSetFilterInt(f, "candidate", filter->candidate);
    }
    if (filter->cg_iterations > 0)
      oidnSetFilterInt(f, "cgIterations", filter->cg_iterations);
  }
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  const char* message = NULL;
  if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE) {
    fprintf(stderr, "%s: %s\n", filter->type, message ? message : "");
    free(out);
    out = NULL;
  } else {
    for (size_t i = 0; i < n; ++i)
      out[i] += s->direct[i];
  }
  oidnReleaseFilter(f);
  return out;
}

double scene_data_rel_mse(const scene_data* s, const float* image)
{
  return lull_metric_rel_mse(image, s->reference, (size_t)s->width, (size_t)s->height, 3);
}
