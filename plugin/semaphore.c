/* OIDN 2.5's external semaphores: a semaphore another API (Vulkan's
 * VK_KHR_external_semaphore_fd) exported as a file descriptor, imported
 * by the device, then signalled and waited for in the device's order of
 * work, so that an application hands images to the denoiser and back
 * without waiting on the host.  The CUDA device imports OPAQUE_FD and
 * TIMELINE_SEMAPHORE_FD on Linux (the kinds CUDA imports from a
 * descriptor); the CPU device none.  Rules and messages follow OIDN's:
 * the device must be committed; a kind the device does not list is
 * INVALID_ARGUMENT; signalling, waiting and importing on a device without
 * semaphores are INVALID_OPERATION ("... is not supported by the
 * device"); a semaphore belongs to the device that imported it. */
#include <stdlib.h>
#include <string.h>

#include "handles.h"

/* (type & supported) != type, as OIDN checks a kind against the device's
 * externalSemaphoreTypes; 0 passes that check and is refused later. */
static int type_listed(const OIDNDevice device, unsigned type)
{
  return (type & (unsigned)device->backend->external_semaphore_types) == type;
}

OIDN_API OIDNSemaphore oidnNewSharedSemaphoreFromFD(OIDNDevice device,
                                                    OIDNExternalSemaphoreTypeFlags fdType, int fd)
{
  if (!lull_check_device(device))
    return NULL;
  lull_device_lock(device);
  if (!lull_device_ready(device)) {
    lull_device_unlock(device);
    return NULL;
  }
  lull_backend* backend = device->backend;
  const unsigned type = (unsigned)fdType;
  lull_error err = {LULL_OK, ""};
  OIDNSemaphore semaphore = NULL;
  if (!type_listed(device, type))
    lull_fail(&err, LULL_ERROR_INVALID_ARGUMENT,
              "external semaphore type not supported by the device");
  else if (!backend->ops->import_semaphore_fd)
    lull_fail(&err, LULL_ERROR_INVALID_OPERATION,
              "creating a shared semaphore from a POSIX file descriptor is not supported by the "
              "device");
  else if (type == 0 || (type & (type - 1)) != 0) /* exactly one kind */
    lull_fail(&err, LULL_ERROR_INVALID_ARGUMENT,
              "external semaphore type not supported by the device");
  /* the handle before the import: a successful import has taken fd, so
   * nothing may fail after it */
  else if (!(semaphore = calloc(1, sizeof *semaphore)))
    lull_fail(&err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  void* handle = NULL;
  if (semaphore &&
      backend->ops->import_semaphore_fd(backend, (int)type, fd, &handle, &err) == LULL_OK) {
    semaphore->magic = LULL_MAGIC_SEMAPHORE;
    atomic_init(&semaphore->refs, 1);
    semaphore->device = device;
    semaphore->type = (int)type;
    semaphore->handle = handle;
    atomic_fetch_add(&device->refs, 1);
  } else {
    free(semaphore);
    semaphore = NULL;
  }
  lull_device_unlock(device);
  if (!semaphore)
    lull_api_error_status(device, &err);
  return semaphore;
}

/* No device of lull imports Win32 handles (lull runs on Linux): the
 * checks OIDN makes first, then its "not supported". */
OIDN_API OIDNSemaphore oidnNewSharedSemaphoreFromWin32Handle(
    OIDNDevice device, OIDNExternalSemaphoreTypeFlags handleType, void* handle, const void* name)
{
  if (!lull_check_device(device))
    return NULL;
  lull_device_lock(device);
  if (!lull_device_ready(device)) {
    lull_device_unlock(device);
    return NULL;
  }
  const int listed = type_listed(device, (unsigned)handleType);
  lull_device_unlock(device);
  if (!listed)
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "external semaphore type not supported by the device");
  else if ((handle == NULL) == (name == NULL))
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "exactly one of the external semaphore handle and name must be non-null");
  else
    lull_api_error(device, OIDN_ERROR_INVALID_OPERATION,
                   "creating a shared semaphore from a Win32 handle is not supported by the "
                   "device");
  return NULL;
}

/* Signal (wait != 0: wait): the checks, then the backend queues it. */
static void signal_or_wait(OIDNDevice device, const OIDNSemaphore* semaphores,
                           const uint64_t* values, int n, int wait)
{
  if (!lull_check_device(device))
    return;
  lull_device_lock(device);
  if (!lull_device_ready(device)) {
    lull_device_unlock(device);
    return;
  }
  lull_backend* backend = device->backend;
  lull_status (*const queue)(lull_backend*, void* const*, const int*, const unsigned long long*,
                             int, lull_error*) =
      wait ? backend->ops->wait_semaphores : backend->ops->signal_semaphores;
  lull_error err = {LULL_OK, ""};
  void** handles = NULL;
  int* types = NULL;
  if (!queue) {
    lull_fail(&err, LULL_ERROR_INVALID_OPERATION,
              wait ? "waiting on semaphores is not supported by the device"
                   : "signaling semaphores is not supported by the device");
  } else if (n < 0) {
    lull_fail(&err, LULL_ERROR_INVALID_ARGUMENT, "number of semaphores is negative");
  } else if (n > 0 && !semaphores) {
    lull_fail(&err, LULL_ERROR_INVALID_ARGUMENT, "semaphores pointer is null");
  } else if (n > 0) {
    handles = malloc((size_t)n * sizeof *handles);
    types = malloc((size_t)n * sizeof *types);
    if (!handles || !types) {
      lull_fail(&err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
      n = 0;
    }
    for (int i = 0; i < n && err.code == LULL_OK; ++i) {
      const OIDNSemaphore s = semaphores[i];
      if (!s)
        lull_fail(&err, LULL_ERROR_INVALID_ARGUMENT, "semaphore is null");
      else if (s->magic != LULL_MAGIC_SEMAPHORE)
        lull_fail(&err, LULL_ERROR_INVALID_ARGUMENT, "invalid semaphore handle");
      else if (s->device != device)
        lull_fail(&err, LULL_ERROR_INVALID_ARGUMENT,
                  "semaphore was created on a different device");
      else if (!values && s->type != OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_FD &&
               s->type != OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_WIN32 &&
               s->type != OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_WIN32_KMT)
        lull_fail(&err, LULL_ERROR_INVALID_ARGUMENT,
                  "semaphore values pointer is null (a timeline semaphore needs a value)");
      else {
        handles[i] = s->handle;
        types[i] = s->type;
      }
    }
    if (err.code == LULL_OK && n > 0)
      (void)queue(backend, handles, types, (const unsigned long long*)values, n, &err);
  }
  lull_device_unlock(device);
  free(handles);
  free(types);
  if (err.code != LULL_OK)
    lull_api_error_status(device, &err);
}

OIDN_API void oidnSignalSemaphoresAsync(OIDNDevice device, const OIDNSemaphore* semaphores,
                                        const uint64_t* values, int numSemaphores)
{
  signal_or_wait(device, semaphores, values, numSemaphores, 0);
}

/* CUDA's waits on descriptor-imported semaphores take no timeout (only
 * keyed mutexes, a Windows kind, do): timeoutsMs is not read. */
OIDN_API void oidnWaitSemaphoresAsync(OIDNDevice device, const OIDNSemaphore* semaphores,
                                      const uint64_t* values, const uint32_t* timeoutsMs,
                                      int numSemaphores)
{
  (void)timeoutsMs;
  signal_or_wait(device, semaphores, values, numSemaphores, 1);
}

OIDN_API void oidnRetainSemaphore(OIDNSemaphore semaphore)
{
  if (lull_check_semaphore(semaphore))
    atomic_fetch_add(&semaphore->refs, 1);
}

OIDN_API void oidnReleaseSemaphore(OIDNSemaphore semaphore)
{
  if (!lull_check_semaphore(semaphore) || atomic_fetch_sub(&semaphore->refs, 1) != 1)
    return;
  OIDNDevice device = semaphore->device;
  /* a queued signal or wait may still use it (its errors stay parked) */
  lull_device_lock(device);
  lull_device_wait(device);
  device->backend->ops->release_semaphore(device->backend, semaphore->handle);
  lull_device_unlock(device);
  semaphore->magic = LULL_MAGIC_DEAD;
  free(semaphore);
  lull_device_release(device);
}
