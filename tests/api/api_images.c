/* Image arguments: formats (FLOAT4/HALF4 with alpha passed through; 1- and
 * 2-channel albedo and normal read as OIDN reads them), strides
 * (default, explicit, too small, padded rows), buffer offsets and bounds,
 * the size limits and their overflow, unsetting with NULL, buffers of
 * another device, in-place filtering, half precision, and that nothing is
 * written outside the output image. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

enum { W = 23, H = 17, N = W * H };

/* Runs a Gaussian or RT filter on prepared images, returning the device's
 * error code (and clearing it). */
static OIDNError commit_execute(OIDNDevice device, OIDNFilter filter)
{
  oidnCommitFilter(filter);
  OIDNError code = oidnGetDeviceError(device, NULL);
  if (code != OIDN_ERROR_NONE)
    return code;
  oidnExecuteFilter(filter);
  return oidnGetDeviceError(device, NULL);
}

static void argument_errors(OIDNDevice device)
{
  OIDNFilter filter = oidnNewFilter(device, "RT");
  float* pixels = api_filled(4 * N, 0.5f);

  /* formats */
  static const int bad_formats[] = {OIDN_FORMAT_UNDEFINED, 5, 256, 261, 999, -1};
  for (size_t i = 0; i < sizeof bad_formats / sizeof bad_formats[0]; ++i) {
    oidnSetSharedFilterImage(filter, "color", pixels, (OIDNFormat)bad_formats[i], W, H, 0, 0, 0);
    EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "format");
  }
  static const OIDNFormat formats[] = {OIDN_FORMAT_FLOAT,  OIDN_FORMAT_FLOAT2, OIDN_FORMAT_FLOAT3,
                                       OIDN_FORMAT_FLOAT4, OIDN_FORMAT_HALF,   OIDN_FORMAT_HALF2,
                                       OIDN_FORMAT_HALF3,  OIDN_FORMAT_HALF4};
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; ++i) {
    oidnSetSharedFilterImage(filter, "color", pixels, formats[i], W, H, 0, 0, 0);
    EXPECT_OK(device);
  }

  /* strides: explicit values at the minimum are fine, smaller ones not */
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, 12, 12 * W);
  EXPECT_OK(device);
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, 8, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "pixel stride is smaller than pixel size");
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_HALF3, W, H, 0, 5, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "pixel stride is smaller than pixel size");
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 12 * W - 1);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "row stride is smaller than width * pixel stride");
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, 16, 12 * W);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  /* strides so large that the image's extent overflows */
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, SIZE_MAX / 2, 0);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, 0, SIZE_MAX - 7);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, 2, 2, 0,
                           SIZE_MAX / 4, SIZE_MAX / 2);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  /* an offset that wraps the address space */
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, SIZE_MAX - 16, 0, 0);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, SIZE_MAX, 0, 0);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);

  /* sizes: 65536 per side at most, and w * h * channels must fit in int */
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT, 65537, 1, 0, 0, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "image size is too large");
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT, 1, 65537, 0, 0, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "image size is too large");
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, 65536, 65536, 0, 0, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "image size is too large");
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT, (size_t)1 << 32, 1, 0, 0,
                           0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "image size is too large");
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT, SIZE_MAX, SIZE_MAX, 0, 0,
                           0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "image size is too large");
  /* the largest side is fine (as long as nothing executes on it) */
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT, 65536, 1, 0, 0, 0);
  EXPECT_OK(device);

  /* NULL data: an error unless the image is empty (which unsets it) */
  oidnSetSharedFilterImage(filter, "color", NULL, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  EXPECT_OK(device);
  oidnSetSharedFilterImage(filter, "color", NULL, OIDN_FORMAT_UNDEFINED, 0, 0, 0, 0, 0);
  EXPECT_OK(device);
  oidnCommitFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "input image not specified");
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", NULL, OIDN_FORMAT_FLOAT3, W, 0, 0, 0, 0);
  EXPECT_OK(device);
  oidnCommitFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "output image not specified");
  /* neither: OIDN names the input first */
  static const char* const oidn_types[] = {"RT", "RTLightmap"};
  for (int k = 0; k < 2; ++k) {
    OIDNFilter empty = oidnNewFilter(device, oidn_types[k]);
    oidnCommitFilter(empty);
    EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "input image not specified");
    oidnReleaseFilter(empty);
  }

  /* buffer-backed images: the region must lie inside the buffer */
  const size_t bytes = 12 * N;
  OIDNBuffer buffer = oidnNewBuffer(device, bytes + 64);
  oidnSetFilterImage(filter, "color", buffer, OIDN_FORMAT_FLOAT3, W, H, 64, 0, 0);
  EXPECT_OK(device);
  oidnSetFilterImage(filter, "color", buffer, OIDN_FORMAT_FLOAT3, W, H, 65, 0, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "buffer region is out of bounds");
  oidnSetFilterImage(filter, "color", buffer, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 12 * W + 8);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "buffer region is out of bounds");
  oidnSetFilterImage(filter, "color", buffer, OIDN_FORMAT_FLOAT3, W, H, SIZE_MAX - 8, 0, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "buffer region is out of bounds");
  oidnSetFilterImage(filter, "color", buffer, OIDN_FORMAT_FLOAT3, W, H, bytes + 65, 0, 0);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  oidnSetFilterImage(filter, "color", buffer, OIDN_FORMAT_FLOAT3, 65537, 1, 0, 0, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "image size is too large");
  oidnSetFilterImage(filter, "color", buffer, OIDN_FORMAT_FLOAT3, 65536, 2, 0, 0, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "buffer region is out of bounds");
  /* the last row needs no padding: a region ending exactly at the end fits */
  oidnSetFilterImage(filter, "color", buffer, OIDN_FORMAT_FLOAT3, W, 2, 0, 0,
                     bytes + 64 - 12 * W);
  EXPECT_OK(device);

  /* replacing or unsetting an image drops its buffer (valgrind sees a leak
   * or a use after free otherwise) */
  OIDNBuffer first = oidnNewBuffer(device, bytes);
  OIDNBuffer second = oidnNewBuffer(device, bytes);
  oidnSetFilterImage(filter, "albedo", first, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetFilterImage(filter, "normal", second, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnReleaseBuffer(first);
  oidnReleaseBuffer(second);
  oidnSetSharedFilterImage(filter, "albedo", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnUnsetFilterImage(filter, "normal");
  EXPECT_OK(device);

  /* a buffer of another device */
  OIDNDevice other = api_cpu_device();
  OIDNBuffer foreign = oidnNewBuffer(other, bytes);
  oidnSetFilterImage(filter, "color", foreign, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "bound to different devices");
  EXPECT_OK(other);
  oidnReleaseBuffer(foreign);
  oidnReleaseDevice(other);
  EXPECT_OK(NULL);

  oidnReleaseBuffer(buffer);
  oidnReleaseFilter(filter);
  free(pixels);
}

/* Zero-sized images are accepted and execution does nothing (OIDN). */
static void empty_images(OIDNDevice device)
{
  OIDNBuffer buffer = oidnNewBuffer(device, 0);
  OIDNFilter filter = oidnNewFilter(device, "RT");
  oidnSetFilterImage(filter, "color", buffer, OIDN_FORMAT_FLOAT3, 0, 0, 0, 0, 0);
  oidnSetFilterImage(filter, "output", buffer, OIDN_FORMAT_FLOAT3, 0, 0, 0, 0, 0);
  EXPECT_OK(device);
  oidnCommitFilter(filter);
  EXPECT_OK(device);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  /* but a non-empty input with an empty output is a size mismatch */
  float* pixels = api_filled(3 * N, 0.5f);
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "image size mismatch");
  free(pixels);
  oidnReleaseFilter(filter);
  oidnReleaseBuffer(buffer);
}

/* The same filter through different layouts gives the same pixels, and the
 * bytes of a layout that are not the output's stay as they were. */
static void layouts(OIDNDevice device, const char* type)
{
  float* color = api_noisy_image(W, H, 3, 0.4f, 21);
  float* reference = api_run_color(device, type, color, W, H);
  EXPECT_OK(device);
  CHECK(reference && lull_test_all_finite(reference, 3 * N));
  if (!reference) {
    free(color);
    return;
  }

  /* RGBA-style memory read as FLOAT3 with a 16-byte pixel stride: the 4th
   * float of each output pixel is not touched */
  float* color4 = api_filled(4 * N, 0.0f);
  float* out4 = api_filled(4 * N, -7.0f);
  for (int i = 0; i < N; ++i)
    memcpy(color4 + 4 * i, color + 3 * i, 3 * sizeof(float));
  OIDNFilter filter = oidnNewFilter(device, type);
  oidnSetSharedFilterImage(filter, "color", color4, OIDN_FORMAT_FLOAT3, W, H, 0, 16, 0);
  oidnSetSharedFilterImage(filter, "output", out4, OIDN_FORMAT_FLOAT3, W, H, 0, 16, 16 * W);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  double diff = 0;
  int untouched = 1;
  for (int i = 0; i < N; ++i) {
    diff += lull_test_max_abs_diff(out4 + 4 * i, reference + 3 * i, 3);
    untouched &= out4[4 * i + 3] == -7.0f;
  }
  CHECK(diff == 0.0);
  CHECK(untouched);

  /* padded rows, in a buffer at an offset: padding and the bytes around the
   * image keep their values */
  const size_t row = 12 * W + 20, offset = 32, total = offset + row * H + 48;
  OIDNBuffer in = oidnNewBuffer(device, total);
  OIDNBuffer out = oidnNewBuffer(device, total);
  unsigned char* staging = malloc(total);
  memset(staging, 0x5a, total);
  oidnWriteBuffer(out, 0, total, staging);
  for (int y = 0; y < H; ++y)
    memcpy(staging + offset + (size_t)y * row, color + 3 * (size_t)y * W, 12 * W);
  oidnWriteBuffer(in, 0, total, staging);
  oidnSetFilterImage(filter, "color", in, OIDN_FORMAT_FLOAT3, W, H, offset, 0, row);
  oidnSetFilterImage(filter, "output", out, OIDN_FORMAT_FLOAT3, W, H, offset, 12, row);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  oidnReadBuffer(out, 0, total, staging);
  diff = 0;
  untouched = 1;
  for (size_t b = 0; b < total; ++b) {
    const int inside = b >= offset && b < offset + row * H && (b - offset) % row < 12 * W;
    if (!inside)
      untouched &= staging[b] == 0x5a;
  }
  for (int y = 0; y < H; ++y) {
    float line[3 * W];
    memcpy(line, staging + offset + (size_t)y * row, sizeof line);
    diff += lull_test_max_abs_diff(line, reference + 3 * (size_t)y * W, 3 * W);
  }
  CHECK(diff == 0.0);
  CHECK(untouched);
  oidnReleaseBuffer(in);
  oidnReleaseBuffer(out);
  free(staging);

  /* unaligned: images at odd byte offsets with odd row strides (pixels are
   * read and written bytewise; UBSan checks) */
  const size_t odd_row = 12 * W + 3, odd_total = 1 + odd_row * H;
  unsigned char* odd_in = malloc(odd_total);
  unsigned char* odd_out = malloc(odd_total + 2);
  memset(odd_in, 0, odd_total);
  for (int y = 0; y < H; ++y)
    memcpy(odd_in + 1 + (size_t)y * odd_row, color + 3 * (size_t)y * W, 12 * W);
  oidnSetSharedFilterImage(filter, "color", odd_in, OIDN_FORMAT_FLOAT3, W, H, 1, 0, odd_row);
  oidnSetSharedFilterImage(filter, "output", odd_out, OIDN_FORMAT_FLOAT3, W, H, 3, 0, odd_row);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  diff = 0;
  for (int y = 0; y < H; ++y) {
    float line[3 * W];
    memcpy(line, odd_out + 3 + (size_t)y * odd_row, sizeof line);
    diff += lull_test_max_abs_diff(line, reference + 3 * (size_t)y * W, 3 * W);
  }
  CHECK(diff == 0.0);
  free(odd_in);
  free(odd_out);

  /* in place: the output aliases the colour */
  float* inplace = malloc(3 * N * sizeof(float));
  memcpy(inplace, color, 3 * N * sizeof(float));
  oidnSetSharedFilterImage(filter, "color", inplace, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", inplace, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  CHECK(lull_test_max_abs_diff(inplace, reference, 3 * N) == 0.0);
  /* and through one buffer used for both */
  OIDNBuffer both = oidnNewBuffer(device, 12 * N);
  oidnWriteBuffer(both, 0, 12 * N, color);
  oidnSetFilterImage(filter, "color", both, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetFilterImage(filter, "output", both, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  oidnReadBuffer(both, 0, 12 * N, inplace);
  CHECK(lull_test_max_abs_diff(inplace, reference, 3 * N) == 0.0);
  oidnReleaseBuffer(both);
  /* partly overlapping: the output starts one row and one pixel into the
   * colour (OIDN 2.3.1 fixed corruption in exactly this case) */
  const size_t shift = 3 * (W + 1);
  float* shared = api_filled(3 * N + shift, 0.0f);
  memcpy(shared, color, 3 * N * sizeof(float));
  oidnSetSharedFilterImage(filter, "color", shared, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", shared + shift, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  CHECK(lull_test_max_abs_diff(shared + shift, reference, 3 * N) == 0.0);
  free(shared);

  oidnReleaseFilter(filter);
  free(inplace);
  free(color4);
  free(out4);
  free(reference);
  free(color);
}

/* Four-channel images: the colour is filtered like three channels and the
 * alpha channel is copied through unchanged (float and half). */
static void alpha(OIDNDevice device, const char* type)
{
  float* color = api_noisy_image(W, H, 3, 0.4f, 33);
  float* reference = api_run_color(device, type, color, W, H);
  float* rgba = api_filled(4 * N, 0.0f);
  float* out = api_filled(4 * N, -1.0f);
  unsigned state = 77;
  for (int i = 0; i < N; ++i) {
    memcpy(rgba + 4 * i, color + 3 * i, 3 * sizeof(float));
    rgba[4 * i + 3] = lull_test_random(&state); /* noisy alpha */
  }
  OIDNFilter filter = oidnNewFilter(device, type);
  oidnSetSharedFilterImage(filter, "color", rgba, OIDN_FORMAT_FLOAT4, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", out, OIDN_FORMAT_FLOAT4, W, H, 0, 0, 0);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  double diff = 0;
  int same_alpha = 1;
  for (int i = 0; i < N; ++i) {
    diff += reference ? lull_test_max_abs_diff(out + 4 * i, reference + 3 * i, 3) : 1.0;
    same_alpha &= memcmp(&out[4 * i + 3], &rgba[4 * i + 3], sizeof(float)) == 0;
  }
  CHECK(diff == 0.0);
  CHECK(same_alpha);

  /* HALF4 in and out: alpha bits identical */
  unsigned short* h_in = malloc(4 * N * sizeof *h_in);
  unsigned short* h_out = malloc(4 * N * sizeof *h_out);
  api_to_half(rgba, h_in, 4 * N);
  memset(h_out, 0, 4 * N * sizeof *h_out);
  oidnSetSharedFilterImage(filter, "color", h_in, OIDN_FORMAT_HALF4, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", h_out, OIDN_FORMAT_HALF4, W, H, 0, 0, 0);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  same_alpha = 1;
  for (int i = 0; i < N; ++i)
    same_alpha &= h_out[4 * i + 3] == h_in[4 * i + 3];
  CHECK(same_alpha);

  /* FLOAT4 colour into a FLOAT3 output: a channel count mismatch */
  oidnSetSharedFilterImage(filter, "color", rgba, OIDN_FORMAT_FLOAT4, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", out, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_INVALID_OPERATION);
  oidnReleaseFilter(filter);
  free(h_in);
  free(h_out);
  free(rgba);
  free(out);
  free(reference);
  free(color);
}

/* HALF3 in and out against FLOAT3 on the same (half-representable) input:
 * equal within the rounding of the output to half; mixed formats exact. */
static void half_precision(OIDNDevice device, const char* type)
{
  float* color = api_noisy_image(W, H, 3, 0.4f, 45);
  unsigned short* h_color = malloc(3 * N * sizeof *h_color);
  api_to_half(color, h_color, 3 * N);
  api_from_half(h_color, color, 3 * N); /* both runs see the same values */
  float* reference = api_run_color(device, type, color, W, H);
  CHECK(reference != NULL);

  unsigned short* h_out = malloc(3 * N * sizeof *h_out);
  OIDNFilter filter = oidnNewFilter(device, type);
  oidnSetSharedFilterImage(filter, "color", h_color, OIDN_FORMAT_HALF3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", h_out, OIDN_FORMAT_HALF3, W, H, 0, 0, 0);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  float* out = malloc(3 * N * sizeof *out);
  api_from_half(h_out, out, 3 * N);
  double worst = 0;
  for (int i = 0; reference && i < 3 * N; ++i) {
    /* half has an 11-bit significand: rounding errs by at most 2^-11 relative */
    const double err = (double)out[i] - (double)reference[i];
    const double allowed = 4.9e-4 * (double)(reference[i] < 0 ? -reference[i] : reference[i]) + 1e-7;
    const double ratio = (err < 0 ? -err : err) / allowed;
    if (ratio > worst)
      worst = ratio;
  }
  CHECK(worst <= 1.0);

  /* half colour into a float output: the same numbers as float to float */
  float* mixed = api_filled(3 * N, -1.0f);
  oidnSetSharedFilterImage(filter, "output", mixed, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  CHECK(reference && lull_test_max_abs_diff(mixed, reference, 3 * N) == 0.0);
  oidnReleaseFilter(filter);
  free(mixed);
  free(out);
  free(h_out);
  free(reference);
  free(h_color);
  free(color);
}

/* Filtered with the given albedo and normal views; a new output array. */
static float* run_guided(OIDNDevice device, const char* type, float* color, const void* albedo,
                         OIDNFormat albedo_format, const void* normal, OIDNFormat normal_format)
{
  float* out = api_filled(3 * N, -1.0f);
  OIDNFilter filter = oidnNewFilter(device, type);
  oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "albedo", (void*)albedo, albedo_format, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "normal", (void*)normal, normal_format, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", out, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
  oidnReleaseFilter(filter);
  return out;
}

/* Albedo and normal of 1 and 2 channels, float and half, as OIDN 2.1+
 * reads them: one channel v as (v, v, v), two (x, y) as (x, y, y).  The
 * results must equal those of the expanded 3-channel images bit for bit,
 * and differ from those of the images padded with zeros (what a reader
 * without the rule would see). */
static void aux_channels(OIDNDevice device, const char* type)
{
  float* color = api_noisy_image(W, H, 3, 0.4f, 61);
  float* albedo1 = api_noisy_image(W, H, 1, 0.0f, 62);
  float* normal2 = api_noisy_image(W, H, 2, 0.0f, 63);
  /* a step in both guides, so that they shape the result */
  for (int i = 0; i < N; ++i)
    if (i % W > W / 2) {
      albedo1[i] *= 0.25f;
      normal2[2 * i] = -normal2[2 * i];
    }
  unsigned short* albedo1_half = malloc(N * sizeof *albedo1_half);
  unsigned short* normal2_half = malloc(2 * N * sizeof *normal2_half);
  api_to_half(albedo1, albedo1_half, N);
  api_to_half(normal2, normal2_half, 2 * N);
  api_from_half(albedo1_half, albedo1, N); /* the float runs see the same values */
  api_from_half(normal2_half, normal2, 2 * N);
  float* albedo3 = malloc(3 * N * sizeof *albedo3);
  float* normal3 = malloc(3 * N * sizeof *normal3);
  float* albedo0 = api_filled(3 * N, 0.0f);
  float* normal0 = api_filled(3 * N, 0.0f);
  for (int i = 0; i < N; ++i) {
    albedo3[3 * i] = albedo3[3 * i + 1] = albedo3[3 * i + 2] = albedo0[3 * i] = albedo1[i];
    normal3[3 * i] = normal0[3 * i] = normal2[2 * i];
    normal3[3 * i + 1] = normal3[3 * i + 2] = normal0[3 * i + 1] = normal2[2 * i + 1];
  }
  float* expanded = run_guided(device, type, color, albedo3, OIDN_FORMAT_FLOAT3, normal3,
                               OIDN_FORMAT_FLOAT3);
  float* padded = run_guided(device, type, color, albedo0, OIDN_FORMAT_FLOAT3, normal0,
                             OIDN_FORMAT_FLOAT3);
  float* narrow = run_guided(device, type, color, albedo1, OIDN_FORMAT_FLOAT, normal2,
                             OIDN_FORMAT_FLOAT2);
  float* narrow_half = run_guided(device, type, color, albedo1_half, OIDN_FORMAT_HALF,
                                  normal2_half, OIDN_FORMAT_HALF2);
  CHECK(lull_test_max_abs_diff(narrow, expanded, 3 * N) == 0.0);
  CHECK(lull_test_max_abs_diff(narrow_half, expanded, 3 * N) == 0.0);
  CHECK(lull_test_max_abs_diff(padded, expanded, 3 * N) > 1e-3);

  /* prefiltering a 1-channel albedo (no colour): filtered as given */
  float* out1 = api_filled(N, -1.0f);
  OIDNFilter filter = oidnNewFilter(device, type);
  oidnSetSharedFilterImage(filter, "albedo", albedo1, OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", out1, OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
  if (strcmp(type, "RT") == 0) {
    CHECK_EQ_INT(commit_execute(device, filter), OIDN_ERROR_NONE);
    CHECK(lull_test_all_finite(out1, N));
  }
  oidnReleaseFilter(filter);
  free(out1);
  free(narrow_half);
  free(narrow);
  free(padded);
  free(expanded);
  free(normal0);
  free(albedo0);
  free(normal3);
  free(albedo3);
  free(normal2_half);
  free(albedo1_half);
  free(normal2);
  free(albedo1);
  free(color);
}

void api_test_images(void)
{
  OIDNDevice device = api_cpu_device();
  argument_errors(device);
  empty_images(device);
  static const char* const types[] = {"RT", "ATrous", "Gaussian"};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    layouts(device, types[i]);
    half_precision(device, types[i]);
  }
  aux_channels(device, "RT");
  aux_channels(device, "ATrous");
  /* the à-trous filters pass alpha through; the Gaussian blurs it */
  alpha(device, "RT");
  alpha(device, "ATrous");
  oidnReleaseDevice(device);
  EXPECT_OK(NULL);
}
