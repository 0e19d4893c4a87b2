/* Entry points for hardware lull does not drive (SYCL, HIP, Metal): they
 * exist so every OIDN program links, and they fail cleanly with OIDN's
 * error codes. */
#include "handles.h"

/* The SYCL functions are C++-only in the header (they take sycl:: types);
 * the exported symbols have C linkage, so they are defined here with
 * pointer parameters of the same ABI. */
OIDN_API bool oidnIsSYCLDeviceSupported(const void* device);
OIDN_API OIDNDevice oidnNewSYCLDevice(const void* queues, int numQueues);
OIDN_API void oidnExecuteSYCLFilterAsync(OIDNFilter filter, const void* depEvents,
                                         int numDepEvents, void* doneEvent);

OIDN_API bool oidnIsSYCLDeviceSupported(const void* device)
{
  (void)device;
  return false;
}

OIDN_API bool oidnIsHIPDeviceSupported(int deviceID)
{
  (void)deviceID;
  return false;
}

OIDN_API bool oidnIsMetalDeviceSupported(MTLDevice_id device)
{
  (void)device;
  return false;
}

OIDN_API OIDNDevice oidnNewSYCLDevice(const void* queues, int numQueues)
{
  (void)queues;
  (void)numQueues;
  lull_api_error(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: SYCL");
  return NULL;
}

OIDN_API OIDNDevice oidnNewHIPDevice(const int* deviceIDs, const hipStream_t* streams,
                                     int numPairs)
{
  (void)deviceIDs;
  (void)streams;
  (void)numPairs;
  lull_api_error(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: HIP");
  return NULL;
}

OIDN_API OIDNDevice oidnNewMetalDevice(const MTLCommandQueue_id* commandQueues, int numQueues)
{
  (void)commandQueues;
  (void)numQueues;
  lull_api_error(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: Metal");
  return NULL;
}

OIDN_API void oidnExecuteSYCLFilterAsync(OIDNFilter filter, const void* depEvents,
                                         int numDepEvents, void* doneEvent)
{
  (void)depEvents;
  (void)numDepEvents;
  (void)doneEvent;
  if (lull_check_filter(filter))
    lull_api_error(filter->device, OIDN_ERROR_INVALID_OPERATION,
                   "oidnExecuteSYCLFilterAsync needs a SYCL device");
}
