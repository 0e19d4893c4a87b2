/* Image views: a pointer, a pixel format, a size and two byte strides.
 *
 * Views never own memory.  The format values equal OIDN's OIDNFormat so the
 * API layer passes them through unchanged. */
#pragma once

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "half.h"
#include "platform.h"

typedef enum lull_format
{
  LULL_FORMAT_UNDEFINED = 0,
  LULL_FORMAT_FLOAT = 1,
  LULL_FORMAT_FLOAT2 = 2,
  LULL_FORMAT_FLOAT3 = 3,
  LULL_FORMAT_FLOAT4 = 4,
  LULL_FORMAT_HALF = 257,
  LULL_FORMAT_HALF2 = 258,
  LULL_FORMAT_HALF3 = 259,
  LULL_FORMAT_HALF4 = 260,
} lull_format;

typedef struct lull_image
{
  unsigned char* data; /* address of pixel (0, 0); NULL means "no image" */
  lull_format format;
  int width;
  int height;
  size_t pixel_stride; /* bytes from one pixel to the next in a row */
  size_t row_stride;   /* bytes from one row to the next */
} lull_image;

/* Number of channels of a format, 0 for UNDEFINED or unknown values. */
LULL_HD int lull_format_channels(lull_format format)
{
  switch (format) {
    case LULL_FORMAT_FLOAT: case LULL_FORMAT_HALF: return 1;
    case LULL_FORMAT_FLOAT2: case LULL_FORMAT_HALF2: return 2;
    case LULL_FORMAT_FLOAT3: case LULL_FORMAT_HALF3: return 3;
    case LULL_FORMAT_FLOAT4: case LULL_FORMAT_HALF4: return 4;
    default: return 0;
  }
}

LULL_HD int lull_format_is_half(lull_format format)
{
  return format >= LULL_FORMAT_HALF && format <= LULL_FORMAT_HALF4;
}

/* Bytes of one tightly packed pixel. */
LULL_HD size_t lull_format_size(lull_format format)
{
  return (size_t)lull_format_channels(format) * (lull_format_is_half(format) ? 2u : 4u);
}

LULL_HD int lull_image_valid(const lull_image* image)
{
  return image->data != NULL && image->width > 0 && image->height > 0;
}

/* A view of the part [x0, x0 + w) x [y0, y0 + h) of an image (an absent
 * image stays absent): a tile of a tiled run. */
LULL_HD lull_image lull_image_region(const lull_image* image, int x0, int y0, int w, int h)
{
  lull_image sub = *image;
  if (!image->data)
    return sub;
  sub.data = image->data + (size_t)y0 * image->row_stride + (size_t)x0 * image->pixel_stride;
  sub.width = w;
  sub.height = h;
  return sub;
}

LULL_HD const unsigned char* lull_image_pixel(const lull_image* image, int x, int y)
{
  return image->data + (size_t)y * image->row_stride + (size_t)x * image->pixel_stride;
}

/* Loads up to 4 channels of pixel (x, y) as float; absent channels read 0. */
LULL_HD void lull_image_load(const lull_image* image, int x, int y, float out[4])
{
  const unsigned char* p = lull_image_pixel(image, x, y);
  const int n = lull_format_channels(image->format);
  out[0] = out[1] = out[2] = out[3] = 0.0f;
  if (lull_format_is_half(image->format)) {
    for (int c = 0; c < n; ++c) {
      uint16_t h;
      memcpy(&h, p + 2 * c, sizeof h);
      out[c] = lull_half_to_float(h);
    }
  } else {
    for (int c = 0; c < n; ++c)
      memcpy(&out[c], p + 4 * c, sizeof(float));
  }
}

/* An output value held within the float range.  A filter's output is a
 * weighted mean of its inputs, so it lies within their range, but the
 * rounding of the mean (and of a scale undone after it) can take a value
 * at +-FLT_MAX one ulp beyond, to +-inf: a constant FLT_MAX image came out
 * mostly inf.  NaN stays NaN. */
LULL_HD float lull_hold_in_range(float v)
{
  return v > FLT_MAX ? FLT_MAX : (v < -FLT_MAX ? -FLT_MAX : v);
}

/* An auxiliary image (albedo, normal) of fewer than 3 channels as RGB, the
 * way OIDN reads one (1- and 2-channel images since OIDN 2.1): one
 * channel v is (v, v, v), two (x, y) are (x, y, y).  v holds the loaded
 * channels; `channels` is the image's count. */
LULL_HD void lull_expand_rgb(float v[3], int channels)
{
  if (channels == 1)
    v[1] = v[2] = v[0];
  else if (channels == 2)
    v[2] = v[1];
}

/* Stores the first n channels of value into pixel (x, y), n <= channels. */
LULL_HD void lull_image_store_n(const lull_image* image, int x, int y, const float value[4], int n)
{
  unsigned char* p = image->data + (size_t)y * image->row_stride + (size_t)x * image->pixel_stride;
  if (lull_format_is_half(image->format)) {
    for (int c = 0; c < n; ++c) {
      const uint16_t h = lull_float_to_half(value[c]);
      memcpy(p + 2 * c, &h, sizeof h);
    }
  } else {
    for (int c = 0; c < n; ++c)
      memcpy(p + 4 * c, &value[c], sizeof(float));
  }
}

LULL_HD void lull_image_store(const lull_image* image, int x, int y, const float value[4])
{
  lull_image_store_n(image, x, y, value, lull_format_channels(image->format));
}

/* Lowest and one-past-highest byte addresses the view can touch. */
LULL_HD void lull_image_extent(const lull_image* image, const unsigned char** begin,
                               const unsigned char** end)
{
  *begin = image->data;
  *end = image->data + (size_t)(image->height - 1) * image->row_stride +
         (size_t)(image->width - 1) * image->pixel_stride + lull_format_size(image->format);
}
