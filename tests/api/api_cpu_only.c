/* CPU devices start no CUDA: OIDN initialises only the device type asked
 * for, and listing the CUDA devices starts the CUDA driver (0.1 s, its
 * library mapped) in programs that asked for the CPU.  Built from lull's
 * objects, not the shared library, to read the internal count of CUDA
 * enumerations; each check needs the calls before it to have enumerated
 * nothing, so the test is a process of its own. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include <OpenImageDenoise/oidn.h>

#include "backend.h"
#include "test_util.h"

/* A default device under OIDN_DEFAULT_DEVICE=value is a committed CPU
 * device with a filter. */
static void default_is_cpu(const char* value)
{
  setenv("OIDN_DEFAULT_DEVICE", value, 1);
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_DEFAULT);
  if (!device)
    fprintf(stderr, "OIDN_DEFAULT_DEVICE='%s' gave no device\n", value);
  CHECK(device != NULL);
  oidnCommitDevice(device);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "type"), OIDN_DEVICE_TYPE_CPU);
  oidnReleaseDevice(device);
  unsetenv("OIDN_DEFAULT_DEVICE");
}

int main(void)
{
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  CHECK(device != NULL);
  oidnCommitDevice(device);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "type"), OIDN_DEVICE_TYPE_CPU);
  OIDNFilter filter = oidnNewFilter(device, "RT");
  CHECK(filter != NULL);
  oidnReleaseFilter(filter);
  CHECK_EQ_INT(oidnGetDeviceError(device, NULL), OIDN_ERROR_NONE);
  oidnReleaseDevice(device);
  CHECK(oidnIsCPUDeviceSupported());
  CHECK_EQ_INT(lull_cuda_enumerations(), 0);

  /* OIDN lowercases the value */
  static const char* const cpu_values[] = {"cpu", "CPU", " Cpu ", "\tcpU\n"};
  for (size_t i = 0; i < sizeof cpu_values / sizeof cpu_values[0]; ++i)
    default_is_cpu(cpu_values[i]);
  CHECK_EQ_INT(lull_cuda_enumerations(), 0);
  CHECK_EQ_INT(oidnGetDeviceError(NULL, NULL), OIDN_ERROR_NONE);

  /* the count sees enumerations: the list of physical devices makes one,
   * and the CPU is last in it */
  const int n = oidnGetNumPhysicalDevices();
  CHECK(lull_cuda_enumerations() > 0);
  CHECK(n >= 1);
  CHECK_EQ_INT(oidnGetPhysicalDeviceInt(n - 1, "type"), OIDN_DEVICE_TYPE_CPU);
  return lull_test_result("api_cpu_only");
}
