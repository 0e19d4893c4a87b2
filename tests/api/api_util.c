#include "api_util.h"

#include <stdlib.h>
#include <string.h>

#include "half.h"

static const char* code_name(OIDNError code)
{
  static const char* const names[] = {"NONE",          "UNKNOWN",
                                      "INVALID_ARGUMENT", "INVALID_OPERATION",
                                      "OUT_OF_MEMORY", "UNSUPPORTED_HARDWARE",
                                      "CANCELLED"};
  return (unsigned)code < sizeof names / sizeof names[0] ? names[code] : "?";
}

void api_expect_error(OIDNDevice device, OIDNError code, const char* fragment, const char* file,
                      int line)
{
  const char* message = NULL;
  const OIDNError got = oidnGetDeviceError(device, &message);
  if (got != code) {
    fprintf(stderr, "%s:%d: expected error %s, got %s (%s)\n", file, line, code_name(code),
            code_name(got), message ? message : "no message");
    ++lull_test_failures;
    return;
  }
  if (code == OIDN_ERROR_NONE && message != NULL) {
    fprintf(stderr, "%s:%d: no error but a message: %s\n", file, line, message);
    ++lull_test_failures;
  }
  if (code != OIDN_ERROR_NONE && (!message || !*message)) {
    fprintf(stderr, "%s:%d: error %s without a message\n", file, line, code_name(code));
    ++lull_test_failures;
  }
  if (fragment && (!message || !strstr(message, fragment))) {
    fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", file, line, message ? message : "(null)",
            fragment);
    ++lull_test_failures;
  }
}

OIDNDevice api_cpu_device(void)
{
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  if (!device) {
    const char* message = NULL;
    oidnGetDeviceError(NULL, &message);
    fprintf(stderr, "cannot create a CPU device: %s\n", message ? message : "?");
    exit(1);
  }
  oidnCommitDevice(device);
  EXPECT_OK(device);
  return device;
}

float* api_noisy_image(int width, int height, int channels, float noise, unsigned seed)
{
  const size_t n = (size_t)width * (size_t)height * (size_t)channels;
  float* image = malloc(n * sizeof *image);
  if (!image)
    exit(1);
  unsigned state = seed;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c) {
        const float base = 0.2f + 0.5f * (float)(x + c * 3) / (float)(width + 6) +
                           0.2f * (float)y / (float)height;
        const float r = lull_test_random(&state) - 0.5f;
        image[((size_t)y * (size_t)width + (size_t)x) * (size_t)channels + (size_t)c] =
            base + noise * r;
      }
  return image;
}

/* width * height pixels of one RGB value. */
static float* constant_image(int width, int height, float r, float g, float b)
{
  const size_t n = (size_t)width * (size_t)height;
  float* image = malloc(3 * n * sizeof *image);
  if (!image)
    exit(1);
  for (size_t i = 0; i < n; ++i) {
    image[3 * i + 0] = r;
    image[3 * i + 1] = g;
    image[3 * i + 2] = b;
  }
  return image;
}

float* api_normal_image(int width, int height)
{
  return constant_image(width, height, 0.0f, 0.6f, 0.8f);
}

float* api_albedo_image(int width, int height)
{
  return constant_image(width, height, 0.7f, 0.5f, 0.3f);
}

float* api_filled(size_t n, float value)
{
  float* a = malloc((n ? n : 1) * sizeof *a);
  if (!a)
    exit(1);
  for (size_t i = 0; i < n; ++i)
    a[i] = value;
  return a;
}

float* api_run_color(OIDNDevice device, const char* type, float* color, int width,
                     int height)
{
  const size_t n = (size_t)width * (size_t)height * 3;
  float* output = api_filled(n, -1.0f);
  OIDNFilter filter = oidnNewFilter(device, type);
  if (!filter) {
    free(output);
    return NULL;
  }
  oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3,
                           (size_t)width, (size_t)height, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, (size_t)width,
                           (size_t)height, 0, 0, 0);
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  oidnReleaseFilter(filter);
  return output;
}

void api_to_half(const float* in, unsigned short* out, size_t count)
{
  for (size_t i = 0; i < count; ++i)
    out[i] = lull_float_to_half(in[i]);
}

void api_from_half(const unsigned short* in, float* out, size_t count)
{
  for (size_t i = 0; i < count; ++i)
    out[i] = lull_half_to_float(in[i]);
}
