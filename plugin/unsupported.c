/* Entry points for hardware lull does not drive (SYCL, HIP, Metal) and for
 * OIDN 2.5's external semaphores: they exist so every OIDN program links,
 * and they fail cleanly with OIDN's error codes. */
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

/* -- OIDN 2.5 semaphores: no device of lull imports any ------------------------ */

static void no_semaphores(OIDNDevice device)
{
  if (lull_check_device(device))
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "external semaphore type not supported by the device");
}

/* Signal and wait: the device is checked even for an empty list; a
 * non-empty one names semaphores that cannot exist. */
static void semaphore_list(OIDNDevice device, int numSemaphores)
{
  if (!lull_check_device(device))
    return;
  if (numSemaphores < 0)
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "invalid number of semaphores");
  else if (numSemaphores > 0)
    no_semaphores(device);
}

OIDN_API OIDNSemaphore oidnNewSharedSemaphoreFromFD(OIDNDevice device,
                                                    OIDNExternalSemaphoreTypeFlags fdType, int fd)
{
  (void)fdType;
  (void)fd;
  no_semaphores(device);
  return NULL;
}

OIDN_API OIDNSemaphore oidnNewSharedSemaphoreFromWin32Handle(
    OIDNDevice device, OIDNExternalSemaphoreTypeFlags handleType, void* handle, const void* name)
{
  (void)handleType;
  (void)handle;
  (void)name;
  no_semaphores(device);
  return NULL;
}

OIDN_API void oidnSignalSemaphoresAsync(OIDNDevice device, const OIDNSemaphore* semaphores,
                                        const uint64_t* values, int numSemaphores)
{
  (void)semaphores;
  (void)values;
  semaphore_list(device, numSemaphores);
}

OIDN_API void oidnWaitSemaphoresAsync(OIDNDevice device, const OIDNSemaphore* semaphores,
                                      const uint64_t* values, const uint32_t* timeoutsMs,
                                      int numSemaphores)
{
  (void)semaphores;
  (void)values;
  (void)timeoutsMs;
  semaphore_list(device, numSemaphores);
}

/* No semaphore handle can exist, so any handle passed here is invalid. */
OIDN_API void oidnRetainSemaphore(OIDNSemaphore semaphore)
{
  lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT,
                 semaphore ? "invalid semaphore handle" : "handle is null");
}

OIDN_API void oidnReleaseSemaphore(OIDNSemaphore semaphore)
{
  lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT,
                 semaphore ? "invalid semaphore handle" : "handle is null");
}
