// The header from C++: extern "C" linkage, the SYCL declarations, the
// inline helpers.
#include <OpenImageDenoise/oidn.h>

extern "C" int version_from_cxx(void);

extern "C" int version_from_cxx(void)
{
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  const unsigned int version = oidnGetDeviceUInt(device, "version");
  const bool sycl = oidnIsSYCLDeviceSupported(nullptr);
  oidnReleaseDevice(device);
  return sycl ? -1 : static_cast<int>(version);
}
