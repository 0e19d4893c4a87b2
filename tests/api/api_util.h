/* Helpers for the OIDN API contract tests: checking the error slots with
 * exact codes (and message fragments), creating committed devices, and
 * deterministic test images. */
#pragma once

#include <stddef.h>

#include <OpenImageDenoise/oidn.h>

#include "test_util.h"

/* Reads (and so clears) the error slot of device (NULL: the calling thread's
 * global slot) and checks its code; when fragment is not NULL the message
 * must contain it.  Reports the caller's file and line. */
void api_expect_error(OIDNDevice device, OIDNError code, const char* fragment, const char* file,
                      int line);

#define EXPECT_ERROR(device, code) api_expect_error(device, code, NULL, __FILE__, __LINE__)
#define EXPECT_ERROR_MSG(device, code, fragment) \
  api_expect_error(device, code, fragment, __FILE__, __LINE__)
#define EXPECT_OK(device) api_expect_error(device, OIDN_ERROR_NONE, NULL, __FILE__, __LINE__)

/* A committed CPU device (the test fails and exits when none can be made). */
OIDNDevice api_cpu_device(void);

/* width * height * channels floats: a smooth colour ramp plus uniform noise
 * of the given amplitude, values in about [0, 1]; malloc'd. */
float* api_noisy_image(int width, int height, int channels, float noise, unsigned seed);
/* Normals of a tilted plane (unit length) and a constant albedo; malloc'd. */
float* api_normal_image(int width, int height);
float* api_albedo_image(int width, int height);

/* n floats set to value (for sentinels in outputs); malloc'd. */
float* api_filled(size_t n, float value);

/* Runs a filter of `type` with default parameters on colour (FLOAT3,
 * packed, shared images) into a new output and returns the output
 * (malloc'd), or NULL when the filter cannot be created; errors are left in
 * the device's slot. */
float* api_run_color(OIDNDevice device, const char* type, float* color, int width,
                     int height);

/* `count` half floats (as their bits) from floats, and back. */
void api_to_half(const float* in, unsigned short* out, size_t count);
void api_from_half(const unsigned short* in, float* out, size_t count);

/* The groups of contract tests (one per source file); each returns nothing
 * and counts failures through the CHECK macros. */
void api_test_errors(void);
void api_test_devices(void);
void api_test_buffers(void);
void api_test_params(void);
void api_test_images(void);
void api_test_execute(void);
void api_test_random(void);
/* Groups that need a process of their own (they set OIDN_DEVICE_* before
 * the first call, which reads them once): run only when named. */
void api_test_no_cpu(void);
void api_test_no_devices(void);
