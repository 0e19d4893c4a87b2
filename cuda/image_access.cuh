/* Reads and writes of the user's images on the GPU, with the semantics of
 * core/image.h's lull_image_load / lull_image_store_n.  image.h copies
 * channels with memcpy because a view may be unaligned; on the GPU that
 * becomes byte-wise accesses, so when the pointer and both strides are
 * multiples of the channel size (every image OIDN's rules produce), the
 * channels are read and written as whole floats or halves, with constant
 * indices so nothing goes to local memory.  The CPU emulation of the
 * kernels (kernel_body.cuh) runs them on the host. */
#pragma once

#include "core_c.h"
#include "kernel_body.cuh"

LULL_BODY int lull_cuda_image_aligned(const lull_image* im)
{
  const size_t size = lull_format_is_half(im->format) ? 2u : 4u;
  return (((size_t)im->data | im->pixel_stride | im->row_stride) & (size - 1)) == 0;
}

/* Pixel (x, y) of an image of a float format (FLOAT..FLOAT4) that is
 * aligned (lull_cuda_image_aligned): whole-float loads, no format dispatch. */
LULL_BODY void lull_cuda_image_load_float(const lull_image* im, int x, int y, float out[4])
{
  /* x, y >= 0: unsigned, the 64-bit offsets need no sign extension */
  const float* f = (const float*)(im->data + (size_t)(unsigned)y * im->row_stride +
                                  (size_t)(unsigned)x * im->pixel_stride);
  /* FLOAT..FLOAT4 are 1..4, their channel counts (lull_format_channels'
   * switch compiled to an indexed branch per load) */
  static_assert(LULL_FORMAT_FLOAT == 1 && LULL_FORMAT_FLOAT4 == 4, "float formats are 1..4");
  const int n = (int)im->format;
  out[0] = f[0];
  out[1] = n > 1 ? f[1] : 0.0f;
  out[2] = n > 2 ? f[2] : 0.0f;
  out[3] = n > 3 ? f[3] : 0.0f;
}

/* An image lull_cuda_image_load_float can read: absent (NULL data, never
 * read), or of a float format and aligned. */
LULL_BODY int lull_cuda_image_is_float(const lull_image* im)
{
  return !im->data || (!lull_format_is_half(im->format) && lull_cuda_image_aligned(im));
}

LULL_BODY void lull_cuda_image_load(const lull_image* im, int x, int y, float out[4])
{
  if (!lull_cuda_image_aligned(im)) {
    lull_image_load(im, x, y, out);
    return;
  }
  if (!lull_format_is_half(im->format)) {
    lull_cuda_image_load_float(im, x, y, out);
    return;
  }
  const uint16_t* h = (const uint16_t*)lull_image_pixel(im, x, y);
  const int n = lull_format_channels(im->format);
  out[0] = lull_half_to_float(h[0]);
  out[1] = n > 1 ? lull_half_to_float(h[1]) : 0.0f;
  out[2] = n > 2 ? lull_half_to_float(h[2]) : 0.0f;
  out[3] = n > 3 ? lull_half_to_float(h[3]) : 0.0f;
}

LULL_BODY void lull_cuda_image_store_n(const lull_image* im, int x, int y,
                                                               const float v[4], int n)
{
  if (!lull_cuda_image_aligned(im)) {
    lull_image_store_n(im, x, y, v, n);
    return;
  }
  unsigned char* p = im->data + (size_t)y * im->row_stride + (size_t)x * im->pixel_stride;
  if (lull_format_is_half(im->format)) {
    uint16_t* h = (uint16_t*)p;
    h[0] = lull_float_to_half(v[0]);
    if (n > 1)
      h[1] = lull_float_to_half(v[1]);
    if (n > 2)
      h[2] = lull_float_to_half(v[2]);
    if (n > 3)
      h[3] = lull_float_to_half(v[3]);
  } else {
    float* f = (float*)p;
    f[0] = v[0];
    if (n > 1)
      f[1] = v[1];
    if (n > 2)
      f[2] = v[2];
    if (n > 3)
      f[3] = v[3];
  }
}
