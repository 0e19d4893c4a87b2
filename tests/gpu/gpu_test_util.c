#include "gpu_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static OIDNFormat float_format(int channels)
{
  static const OIDNFormat formats[] = {OIDN_FORMAT_UNDEFINED, OIDN_FORMAT_FLOAT, OIDN_FORMAT_FLOAT2,
                                       OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT4};
  return formats[channels];
}

OIDNDevice gpu_new_device(OIDNDeviceType type)
{
  OIDNDevice d = oidnNewDevice(type);
  if (d)
    oidnCommitDevice(d);
  return d;
}

int gpu_run_filter(OIDNDevice device, const char* type, int width, int height,
                   const gpu_image* images, int num_images, int out_channels,
                   const gpu_param* params, int num_params, float* out)
{
  return gpu_run_filter_at(device, type, width, height, images, num_images, out_channels, params,
                           num_params, out, 0);
}

int gpu_run_filter_at(OIDNDevice device, const char* type, int width, int height,
                      const gpu_image* images, int num_images, int out_channels,
                      const gpu_param* params, int num_params, float* out, size_t input_offset)
{
  OIDNBuffer buffers[16] = {0};
  const size_t pixels = (size_t)width * (size_t)height;
  OIDNFilter f = oidnNewFilter(device, type);
  for (int i = 0; i < num_images && i < 16; ++i) {
    const size_t bytes = pixels * (size_t)images[i].channels * sizeof(float);
    buffers[i] = oidnNewBuffer(device, input_offset + bytes);
    oidnWriteBuffer(buffers[i], input_offset, bytes, images[i].data);
    const size_t pixel_stride = (size_t)images[i].channels * sizeof(float);
    oidnSetFilterImage(f, images[i].name, buffers[i], float_format(images[i].channels),
                       (size_t)width, (size_t)height, input_offset, pixel_stride,
                       pixel_stride * (size_t)width);
  }
  const size_t out_bytes = pixels * (size_t)out_channels * sizeof(float);
  OIDNBuffer ob = oidnNewBuffer(device, out_bytes);
  oidnSetFilterImage(f, "output", ob, float_format(out_channels), (size_t)width, (size_t)height,
                     0, 0, 0);
  for (int i = 0; i < num_params; ++i) {
    if (params[i].is_float)
      oidnSetFilterFloat(f, params[i].name, (float)params[i].value);
    else
      oidnSetFilterInt(f, params[i].name, (int)params[i].value);
  }
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  oidnReadBuffer(ob, 0, out_bytes, out);
  const int code = gpu_device_error(device, type);
  oidnReleaseFilter(f);
  oidnReleaseBuffer(ob);
  for (int i = 0; i < num_images && i < 16; ++i)
    oidnReleaseBuffer(buffers[i]);
  return code;
}

int gpu_device_error(OIDNDevice device, const char* what)
{
  const char* message = NULL;
  const int code = oidnGetDeviceError(device, &message);
  if (code != OIDN_ERROR_NONE)
    fprintf(stderr, "%s: error %d: %s\n", what, code, message ? message : "");
  return code;
}

double gpu_rel_l1(const float* a, const float* b, size_t n)
{
  double diff = 0, ref = 0;
  for (size_t i = 0; i < n; ++i) {
    diff += fabs((double)a[i] - (double)b[i]);
    ref += fabs((double)b[i]);
  }
  return ref > 0 ? diff / ref : diff;
}

double gpu_max_rel_diff(const float* a, const float* b, size_t n, double floor)
{
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = fabs((double)a[i] - (double)b[i]) / (fabs((double)b[i]) + floor);
    if (!(d <= m))
      m = isnan(d) ? INFINITY : d;
  }
  return m;
}

double gpu_interior_max_abs_diff(const float* a, const float* b, int width, int height,
                                 int channels, int margin)
{
  double m = -1;
  for (int y = margin; y < height - margin; ++y)
    for (int x = margin; x < width - margin; ++x)
      for (int c = 0; c < channels; ++c) {
        const size_t i = ((size_t)y * (size_t)width + (size_t)x) * (size_t)channels + (size_t)c;
        const double d = fabs((double)a[i] - (double)b[i]);
        if (m < 0)
          m = 0;
        if (!(d <= m))
          m = isnan(d) ? INFINITY : d;
      }
  return m;
}

double gpu_border_rel_l1(const float* a, const float* b, int width, int height, int channels,
                         int margin)
{
  double diff = 0, ref = 0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      if (x >= margin && x < width - margin && y >= margin && y < height - margin)
        continue;
      for (int c = 0; c < channels; ++c) {
        const size_t i = ((size_t)y * (size_t)width + (size_t)x) * (size_t)channels + (size_t)c;
        diff += fabs((double)a[i] - (double)b[i]);
        ref += fabs((double)b[i]);
      }
    }
  return ref > 0 ? diff / ref : diff;
}

int gpu_atrous_margin(int iterations)
{
  return 2 * ((1 << iterations) - 1) + iterations + 1;
}

void gpu_scene_make(gpu_scene* s, int width, int height, unsigned seed)
{
  const size_t n = (size_t)width * (size_t)height;
  s->width = width;
  s->height = height;
  s->color = malloc(n * 3 * sizeof(float));
  s->albedo = malloc(n * 3 * sizeof(float));
  s->normal = malloc(n * 3 * sizeof(float));
  s->depth = malloc(n * sizeof(float));
  s->position = malloc(n * 3 * sizeof(float));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const size_t i = (size_t)y * (size_t)width + (size_t)x;
      const int right = x * 3 > width + y; /* a slanted edge */
      const float shade = 0.2f + 0.6f * (float)y / (float)height;
      for (int c = 0; c < 3; ++c) {
        const float a = right ? 0.7f - 0.2f * (float)c : 0.3f + 0.1f * (float)c;
        s->albedo[3 * i + (size_t)c] = a;
        const float noise = 2.0f * lull_test_random(&seed) - 1.0f;
        s->color[3 * i + (size_t)c] = a * shade * (1.0f + 0.5f * noise) * (right ? 2.0f : 1.0f);
      }
      s->normal[3 * i + 0] = right ? 0.6f : 0.0f;
      s->normal[3 * i + 1] = 0.0f;
      s->normal[3 * i + 2] = right ? 0.8f : 1.0f;
      s->depth[i] = right ? 5.0f + 0.01f * (float)x : 3.0f + 0.02f * (float)y;
      s->position[3 * i + 0] = (float)x * 0.01f * s->depth[i];
      s->position[3 * i + 1] = (float)y * 0.01f * s->depth[i];
      s->position[3 * i + 2] = s->depth[i];
    }
}

void gpu_scene_atrous_inputs(gpu_scene* s, int channels, int ldr, int poison, float* color,
                             float* variance)
{
  const size_t n = (size_t)s->width * (size_t)s->height;
  for (size_t i = 0; i < n; ++i) {
    for (int k = 0; k < channels; ++k) {
      float v = s->color[3 * i + (size_t)(k < 3 ? k : 0)];
      if (k == 3)
        v = (float)(i % 7) / 7.0f; /* alpha */
      if (ldr)
        v = v > 1.0f ? 1.0f : v;
      color[(size_t)channels * i + (size_t)k] = v;
    }
    for (int k = 0; k < 3; ++k)
      variance[3 * i + (size_t)k] = 0.01f * s->color[3 * i + (size_t)k];
  }
  if (poison && n > 301) {
    color[channels * 17] = NAN;
    color[channels * 200 + 1] = INFINITY;
    color[(size_t)channels * (n / 2)] = -INFINITY;
    s->albedo[3 * 40] = NAN;
    s->normal[3 * 41 + 2] = INFINITY;
    s->depth[42] = NAN;
    s->position[3 * 43] = NAN;
    for (int k = 0; k < 3; ++k)
      s->normal[3 * 300 + (size_t)k] = 0.0f;
  }
}

void gpu_scene_free(gpu_scene* s)
{
  free(s->color);
  free(s->albedo);
  free(s->normal);
  free(s->depth);
  free(s->position);
}

/* v rounded to fp16 and back */
static float through_half(float v)
{
  return lull_half_to_float(lull_float_to_half(v));
}

void gpu_narrow_guides_make(const float* albedo, const float* normal, size_t n,
                            gpu_narrow_guides* g)
{
  g->albedo1 = malloc(n * sizeof(float));
  g->albedo3 = malloc(3 * n * sizeof(float));
  g->normal2 = malloc(2 * n * sizeof(float));
  g->normal3 = malloc(3 * n * sizeof(float));
  if (!g->albedo1 || !g->albedo3 || !g->normal2 || !g->normal3) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < n; ++i) {
    g->albedo1[i] = through_half(albedo[3 * i + 1]);
    g->normal2[2 * i] = through_half(normal[3 * i]);
    g->normal2[2 * i + 1] = through_half(normal[3 * i + 1]);
    /* written out, not by lull_expand_rgb: the tests check that rule */
    g->albedo3[3 * i] = g->albedo3[3 * i + 1] = g->albedo3[3 * i + 2] = g->albedo1[i];
    g->normal3[3 * i] = g->normal2[2 * i];
    g->normal3[3 * i + 1] = g->normal3[3 * i + 2] = g->normal2[2 * i + 1];
  }
}

void gpu_narrow_guides_free(gpu_narrow_guides* g)
{
  free(g->albedo1);
  free(g->albedo3);
  free(g->normal2);
  free(g->normal3);
}

float* gpu_read_pfm(const char* path, int* width, int* height, int* channels)
{
  FILE* f = fopen(path, "rb");
  if (!f)
    return NULL;
  char kind[3] = {0};
  float scale = 0;
  if (fscanf(f, "%2s %d %d %f", kind, width, height, &scale) != 4 || fgetc(f) == EOF ||
      *width <= 0 || *height <= 0 || scale >= 0 || (strcmp(kind, "PF") && strcmp(kind, "Pf"))) {
    fclose(f);
    return NULL;
  }
  *channels = strcmp(kind, "PF") == 0 ? 3 : 1;
  const size_t row = (size_t)*width * (size_t)*channels;
  float* data = malloc(row * (size_t)*height * sizeof(float));
  /* PFM stores the bottom row first */
  for (int y = *height - 1; y >= 0 && data; --y)
    if (fread(data + (size_t)y * row, sizeof(float), row, f) != row) {
      free(data);
      data = NULL;
    }
  fclose(f);
  return data;
}

void gpu_read_render(const char* scene, float* data[4], int* width, int* height, int* channels)
{
  static const char* const names[4] = {"color", "albedo", "normal", "depth"};
  *width = *height = *channels = 0;
  for (int k = 0; k < 4; ++k) {
    char path[512];
    int w = 0, h = 0, ch = 0;
    snprintf(path, sizeof path, "%s/%s_spp4_%s.pfm", LULL_GPU_TESTDATA_DIR, scene, names[k]);
    data[k] = gpu_read_pfm(path, &w, &h, &ch);
    if (k == 0) {
      *width = w;
      *height = h;
      *channels = ch;
    } else if (data[k] && (w != *width || h != *height)) {
      free(data[k]);
      data[k] = NULL;
    }
  }
}
