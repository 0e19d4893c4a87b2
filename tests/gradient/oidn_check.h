/* Helpers of the gradient-domain API tests: a CPU device and exact checks
 * of the device's error slot. */
#pragma once

#include <stdlib.h>

#include <OpenImageDenoise/oidn.h>

#include "test_util.h"

/* Reads (and clears) the device's error and checks its code; reports the
 * caller's line and the message when it differs. */
static inline void oidn_check_error(OIDNDevice device, OIDNError want, const char* what, int line)
{
  const char* message = NULL;
  const OIDNError got = oidnGetDeviceError(device, &message);
  if (got != want) {
    fprintf(stderr, "line %d (%s): OIDN error %d (\"%s\"), expected %d\n", line, what, (int)got,
            message ? message : "", (int)want);
    ++lull_test_failures;
  }
}

#define EXPECT_OIDN(device, code, what) oidn_check_error(device, code, what, __LINE__)

static inline OIDNDevice oidn_cpu_device(void)
{
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  if (!device) {
    fprintf(stderr, "no CPU device\n");
    exit(1);
  }
  oidnCommitDevice(device);
  return device;
}

/* Shares a packed FLOAT<channels> image. */
static inline void oidn_share(OIDNFilter filter, const char* name, float* data, int channels,
                              int width, int height)
{
  oidnSetSharedFilterImage(filter, name, data, (OIDNFormat)(OIDN_FORMAT_FLOAT + channels - 1),
                           (size_t)width, (size_t)height, 0, 0, 0);
}
