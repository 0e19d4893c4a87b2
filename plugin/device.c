/* Devices: creation by type or physical device, parameters, the one commit,
 * synchronisation and lifetime.  The commit creates the backend. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handles.h"
#include "physical_device.h"

int lull_env_int(const char* name, int fallback)
{
  const char* v = getenv(name);
  if (!v || !*v)
    return fallback;
  char* end = NULL;
  const long x = strtol(v, &end, 10);
  if (*end != '\0' || x < -1000000 || x > 1000000)
    return fallback;
  return (int)x;
}

void lull_device_lock(OIDNDevice device)
{
  pthread_mutex_lock(&device->mutex);
  lull_errors_hold(device);
}

void lull_device_unlock(OIDNDevice device)
{
  /* the errors raised under the lock reach the callback after it */
  lull_held_errors errors;
  lull_errors_unhold(device, &errors);
  pthread_mutex_unlock(&device->mutex);
  lull_errors_deliver(&errors);
}

int lull_device_ready(OIDNDevice device)
{
  if (!device->committed) {
    lull_api_error(device, OIDN_ERROR_INVALID_OPERATION, "device is not committed");
    return 0;
  }
  if (device->dirty) {
    lull_api_error(device, OIDN_ERROR_INVALID_OPERATION, "changes to the device are not committed");
    return 0;
  }
  return 1;
}

static OIDNDevice device_new(OIDNDeviceType type, int cuda_id, void* stream)
{
  OIDNDevice device = calloc(1, sizeof *device);
  if (!device) {
    lull_api_error(NULL, OIDN_ERROR_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  /* recursive: a progress monitor runs during an execution, which holds
   * the lock, and may call the API on this device */
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  const int failed = pthread_mutex_init(&device->mutex, &attr) != 0;
  pthread_mutexattr_destroy(&attr);
  if (failed) {
    free(device);
    lull_api_error(NULL, OIDN_ERROR_UNKNOWN, "cannot create a mutex");
    return NULL;
  }
  if (!lull_device_errors_init(device)) {
    pthread_mutex_destroy(&device->mutex);
    free(device);
    lull_api_error(NULL, OIDN_ERROR_UNKNOWN, "cannot create the device's error slots");
    return NULL;
  }
  device->magic = LULL_MAGIC_DEVICE;
  atomic_init(&device->refs, 1);
  device->type = type;
  device->cuda_device_id = cuda_id;
  device->cuda_stream = stream;
  device->verbose = lull_env_int("OIDN_VERBOSE", 0);
  device->num_threads = 0;
  device->set_affinity = 1;
  return device;
}

/* Creates a device for a physical device index. */
static OIDNDevice device_for_physical(int id)
{
  const lull_physical_device* pd = lull_physical_device_find(id);
  if (!pd) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid physical device ID");
    return NULL;
  }
  return device_new(pd->type, pd->cuda_id, NULL);
}

static const char* type_name(OIDNDeviceType type)
{
  switch (type) {
    case OIDN_DEVICE_TYPE_DEFAULT: return "default";
    case OIDN_DEVICE_TYPE_CPU: return "CPU";
    case OIDN_DEVICE_TYPE_SYCL: return "SYCL";
    case OIDN_DEVICE_TYPE_CUDA: return "CUDA";
    case OIDN_DEVICE_TYPE_HIP: return "HIP";
    case OIDN_DEVICE_TYPE_METAL: return "Metal";
  }
  return "unknown";
}

/* The first physical device of a type, or -1. */
static int physical_of_type(OIDNDeviceType type)
{
  const int n = lull_physical_device_count();
  for (int i = 0; i < n; ++i)
    if (lull_physical_device_find(i)->type == type)
      return i;
  return -1;
}

/* A device of a type, or NULL when none is available (no error recorded).
 * The CPU needs no list of physical devices: building it enumerates the
 * CUDA devices, which starts the CUDA driver, and OIDN initialises only the
 * type asked for (a CPU device records no physical-device ID; the CPU is
 * the last one listed). */
static OIDNDevice device_of_type(OIDNDeviceType type)
{
  if (type == OIDN_DEVICE_TYPE_CPU)
    return lull_cpu_device_enabled() ? device_new(OIDN_DEVICE_TYPE_CPU, -1, NULL) : NULL;
  if (type != OIDN_DEVICE_TYPE_CUDA)
    return NULL;
  const int id = physical_of_type(type);
  return id >= 0 ? device_for_physical(id) : NULL;
}

/* OIDN_DEFAULT_DEVICE's value without the blanks around it and in lower
 * case (OIDN lowercases it: "CPU" names the CPU); "" when unset or too long
 * to name anything. */
static void default_device_value(char* out, size_t size)
{
  out[0] = '\0';
  const char* env = getenv("OIDN_DEFAULT_DEVICE");
  if (!env)
    return;
  while (isspace((unsigned char)*env))
    ++env;
  size_t length = strlen(env);
  while (length > 0 && isspace((unsigned char)env[length - 1]))
    --length;
  if (length >= size)
    return;
  for (size_t i = 0; i < length; ++i)
    out[i] = (char)tolower((unsigned char)env[i]);
  out[length] = '\0';
}

/* OIDN_DEFAULT_DEVICE names a type ("cpu", "cuda", ...) or a physical device
 * ID.  As in OIDN, a value that cannot be honoured (unknown, unsupported or
 * out of range) is ignored: the default is then physical device 0, the
 * fastest. */
static OIDNDevice default_device(void)
{
  char value[32];
  default_device_value(value, sizeof value);
  const int numeric = value[0] >= '0' && value[0] <= '9';
  if (value[0] && !numeric) {
    static const struct { const char* name; OIDNDeviceType type; } names[] = {
        {"cpu", OIDN_DEVICE_TYPE_CPU},   {"sycl", OIDN_DEVICE_TYPE_SYCL},
        {"cuda", OIDN_DEVICE_TYPE_CUDA}, {"hip", OIDN_DEVICE_TYPE_HIP},
        {"metal", OIDN_DEVICE_TYPE_METAL}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
      if (strcmp(value, names[i].name) == 0) {
        OIDNDevice device = device_of_type(names[i].type);
        if (device)
          return device;
      }
    }
  }
  const int n = lull_physical_device_count();
  if (n == 0) {
    lull_api_error(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "no supported devices found");
    return NULL;
  }
  int id = 0;
  if (numeric) {
    char* end = NULL;
    const long chosen = strtol(value, &end, 10);
    if (*end == '\0' && chosen < n)
      id = (int)chosen;
  }
  return device_for_physical(id);
}

/* Records OIDN's "unsupported device type: CUDA" with why no CUDA device
 * is usable (a driver older than lull's CUDA runtime, no GPU, an old GPU,
 * a build without CUDA), which the message alone leaves users to guess. */
static void cuda_unsupported(void)
{
  lull_error why = {LULL_OK, ""};
  if (!lull_cuda_devices_enabled())
    (void)lull_fail(&why, LULL_ERROR_UNSUPPORTED_HARDWARE, "disabled by OIDN_DEVICE_CUDA=0");
  else
    (void)lull_cuda_device_unusable_reason(0, &why);
  lull_error err;
  (void)lull_fail(&err, LULL_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: CUDA (%s)",
                  why.message);
  lull_api_error_status(NULL, &err);
}

OIDN_API OIDNDevice oidnNewDevice(OIDNDeviceType type)
{
  if (type == OIDN_DEVICE_TYPE_DEFAULT)
    return default_device();
  OIDNDevice device = device_of_type(type);
  if (device)
    return device;
  if (type == OIDN_DEVICE_TYPE_CUDA) {
    cuda_unsupported();
    return NULL;
  }
  char message[96];
  snprintf(message, sizeof message, "unsupported device type: %s", type_name(type));
  lull_api_error(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, message);
  return NULL;
}

OIDN_API OIDNDevice oidnNewDeviceByID(int physicalDeviceID)
{
  return device_for_physical(physicalDeviceID);
}

static OIDNDevice device_by_bytes(const void* key, size_t size, int luid)
{
  if (!key) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, luid ? "LUID pointer is null"
                                                           : "UUID pointer is null");
    return NULL;
  }
  const int n = lull_physical_device_count();
  for (int i = 0; i < n; ++i) {
    const lull_physical_device* pd = lull_physical_device_find(i);
    const int supported = luid ? pd->luid_supported : pd->uuid_supported;
    const void* bytes = luid ? (const void*)pd->luid : (const void*)pd->uuid;
    if (supported && memcmp(bytes, key, size) == 0)
      return device_new(pd->type, pd->cuda_id, NULL);
  }
  lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT,
                 luid ? "no physical device found with specified LUID"
                      : "no physical device found with specified UUID");
  return NULL;
}

OIDN_API OIDNDevice oidnNewDeviceByUUID(const void* uuid)
{
  return device_by_bytes(uuid, OIDN_UUID_SIZE, 0);
}

OIDN_API OIDNDevice oidnNewDeviceByLUID(const void* luid)
{
  return device_by_bytes(luid, OIDN_LUID_SIZE, 1);
}

OIDN_API OIDNDevice oidnNewDeviceByPCIAddress(int pciDomain, int pciBus, int pciDevice,
                                              int pciFunction)
{
  const int n = lull_physical_device_count();
  for (int i = 0; i < n; ++i) {
    const lull_physical_device* pd = lull_physical_device_find(i);
    if (pd->pci_supported && pd->pci_domain == pciDomain && pd->pci_bus == pciBus &&
        pd->pci_device == pciDevice && pd->pci_function == pciFunction)
      return device_new(pd->type, pd->cuda_id, NULL);
  }
  lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT,
                 "no physical device found with specified PCI address");
  return NULL;
}

OIDN_API OIDNDevice oidnNewCUDADevice(const int* deviceIDs, const cudaStream_t* streams,
                                      int numPairs)
{
  /* as in OIDN, a missing CUDA device type is reported before the arguments */
  if (physical_of_type(OIDN_DEVICE_TYPE_CUDA) < 0) {
    cuda_unsupported();
    return NULL;
  }
  /* OIDN's checks and messages; a NULL stream in the array is the default
   * stream, a NULL array an error */
  if (numPairs != 1) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT,
                   "invalid number of CUDA devices/streams (only one pair is supported)");
    return NULL;
  }
  if (!deviceIDs) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "array of CUDA devices is null");
    return NULL;
  }
  if (!streams) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "array of CUDA streams is null");
    return NULL;
  }
  /* as in OIDN, the ID is checked by the commit (on the device's own error
   * slot and callback): an ID the runtime does not list gives
   * OIDN_ERROR_UNKNOWN, a GPU lull cannot run on UNSUPPORTED_HARDWARE */
  return device_new(OIDN_DEVICE_TYPE_CUDA, deviceIDs[0], (void*)streams[0]);
}

OIDN_API bool oidnIsCPUDeviceSupported(void)
{
  return lull_cpu_device_enabled() != 0;
}

OIDN_API bool oidnIsCUDADeviceSupported(int deviceID)
{
  if (!lull_cuda_devices_enabled())
    return false;
  return lull_cuda_device_usable(deviceID) != 0;
}

OIDN_API void oidnRetainDevice(OIDNDevice device)
{
  if (lull_check_device(device))
    atomic_fetch_add(&device->refs, 1);
}

static void device_destroy(OIDNDevice device)
{
  /* the queued work first (on the worker, whose finishing job dropped the
   * last reference, there is none left) */
  lull_work_queue_destroy(device->queue);
  if (device->backend) {
    lull_error ignored;
    device->backend->ops->sync(device->backend, &ignored);
    device->backend->ops->destroy(device->backend);
  }
  lull_device_errors_destroy(device);
  pthread_mutex_destroy(&device->mutex);
  device->magic = LULL_MAGIC_DEAD;
  free(device);
}

/* Also called by buffers and filters when they drop their reference. */
void lull_device_release(OIDNDevice device)
{
  if (atomic_fetch_sub(&device->refs, 1) == 1)
    device_destroy(device);
}

OIDN_API void oidnReleaseDevice(OIDNDevice device)
{
  if (!lull_check_device(device))
    return;
  /* queued work first (its errors stay parked: releases raise none): the
   * filters and buffers it holds go back, and a last release then destroys
   * the device here, not on its worker thread */
  lull_device_lock(device);
  if (device->queue)
    lull_device_wait(device);
  lull_device_unlock(device);
  lull_device_release(device);
}

/* -- parameters ------------------------------------------------------------ */

OIDN_API void oidnSetDeviceInt(OIDNDevice device, const char* name, int value)
{
  if (!lull_check_device(device) || !lull_check_string(device, name))
    return;
  lull_device_lock(device);
  if (strcmp(name, "verbose") == 0) {
    device->verbose = value;
  } else if (strcmp(name, "numThreads") == 0 && device->type == OIDN_DEVICE_TYPE_CPU) {
    device->num_threads = value;
  } else if (strcmp(name, "setAffinity") == 0 && device->type == OIDN_DEVICE_TYPE_CPU) {
    device->set_affinity = value != 0;
  } else {
    lull_api_warning(device, "unknown device parameter or type mismatch: '%s'", name);
  }
  /* as in OIDN, any set after the commit leaves the device needing one */
  if (device->committed)
    device->dirty = 1;
  lull_device_unlock(device);
}

OIDN_API void oidnSetDeviceBool(OIDNDevice device, const char* name, bool value)
{
  oidnSetDeviceInt(device, name, value ? 1 : 0);
}

OIDN_API int oidnGetDeviceInt(OIDNDevice device, const char* name)
{
  if (!lull_check_device(device) || !lull_check_string(device, name))
    return 0;
  lull_device_lock(device);
  int value = 0, found = 1;
  const int is_cpu = device->type == OIDN_DEVICE_TYPE_CPU;
  if (strcmp(name, "type") == 0)
    value = device->type;
  else if (strcmp(name, "version") == 0)
    value = OIDN_VERSION;
  else if (strcmp(name, "versionMajor") == 0)
    value = OIDN_VERSION_MAJOR;
  else if (strcmp(name, "versionMinor") == 0)
    value = OIDN_VERSION_MINOR;
  else if (strcmp(name, "versionPatch") == 0)
    value = OIDN_VERSION_PATCH;
  else if (strcmp(name, "systemMemorySupported") == 0)
    value = device->backend ? device->backend->system_memory : is_cpu;
  else if (strcmp(name, "managedMemorySupported") == 0)
    value = device->backend ? device->backend->managed_memory : is_cpu;
  else if (strcmp(name, "externalMemoryTypes") == 0)
    value = device->backend ? device->backend->external_memory_types : 0;
  else if (strcmp(name, "externalSemaphoreTypes") == 0)
    value = device->backend ? device->backend->external_semaphore_types : 0;
  else if (strcmp(name, "verbose") == 0)
    value = device->verbose;
  else if (strcmp(name, "numThreads") == 0 && is_cpu)
    value = device->backend ? lull_cpu_threads(device->backend) : device->num_threads;
  else if (strcmp(name, "setAffinity") == 0 && is_cpu)
    value = device->set_affinity;
  else
    found = 0;
  lull_device_unlock(device);
  if (!found) {
    char message[160];
    snprintf(message, sizeof message, "unknown device parameter or type mismatch: '%.100s'", name);
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, message);
  }
  return value;
}

OIDN_API bool oidnGetDeviceBool(OIDNDevice device, const char* name)
{
  return oidnGetDeviceInt(device, name) != 0;
}

/* -- asynchronous errors ------------------------------------------------------ */

void lull_device_park(OIDNDevice device, const lull_error* err)
{
  if (err->code != LULL_OK && device->parked.code == LULL_OK)
    device->parked = *err;
}

lull_status lull_device_take_parked(OIDNDevice device, lull_error* err)
{
  const lull_status code = device->parked.code;
  if (code != LULL_OK) {
    *err = device->parked;
    device->parked.code = LULL_OK;
    device->parked.message[0] = '\0';
  }
  return code;
}

int lull_device_on_worker(OIDNDevice device)
{
  return device->queue && lull_work_queue_on_worker(device->queue);
}

void lull_device_wait(OIDNDevice device)
{
  if (!device->backend)
    return;
  lull_error err = {LULL_OK, ""};
  if (device->queue) {
    /* A thread that holds the device's lock once lets it go while it
     * waits for the worker, and takes it again once the queue is idle:
     * a progress monitor of a queued run may then call the device (in
     * OIDN such a call waits for the lock, for ever).  Held more deeply
     * (a monitor of a blocking run that synchronises), the lock stays. */
    if (!lull_device_on_worker(device) && lull_errors_depth(device) == 1) {
      while (!lull_work_queue_idle(device->queue)) {
        pthread_mutex_unlock(&device->mutex);
        lull_work_queue_wait(device->queue);
        pthread_mutex_lock(&device->mutex);
      }
    }
    lull_work_queue_wait(device->queue);
    if (lull_work_queue_take_error(device->queue, &err) != LULL_OK)
      lull_device_park(device, &err);
  }
  if (device->backend->ops->sync(device->backend, &err) != LULL_OK)
    lull_device_park(device, &err);
}

/* -- commit and sync --------------------------------------------------------- */

OIDN_API void oidnCommitDevice(OIDNDevice device)
{
  if (!lull_check_device(device))
    return;
  lull_device_lock(device);
  if (device->committed) {
    lull_device_unlock(device);
    lull_api_error(device, OIDN_ERROR_INVALID_OPERATION, "device can be committed only once");
    return;
  }
  /* environment variables override what the application set, as in OIDN */
  device->verbose = lull_env_int("OIDN_VERBOSE", device->verbose);
  device->num_threads = lull_env_int("OIDN_NUM_THREADS", device->num_threads);
  device->set_affinity = lull_env_int("OIDN_SET_AFFINITY", device->set_affinity);
  if (device->num_threads < 0)
    device->num_threads = 0;

  lull_error err = {LULL_OK, ""};
  lull_status status;
  if (device->type == OIDN_DEVICE_TYPE_CUDA)
    status = lull_cuda_backend_create(device->cuda_device_id, device->cuda_stream,
                                      &device->backend, &err);
  else
    status = lull_cpu_backend_create(device->num_threads, &device->backend, &err);
  /* the CPU backend runs work where it is called: asynchronous calls go to
   * the device's worker thread */
  if (status == LULL_OK && device->type == OIDN_DEVICE_TYPE_CPU &&
      !(device->queue = lull_work_queue_new())) {
    device->backend->ops->destroy(device->backend);
    device->backend = NULL;
    status = lull_fail(&err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  if (status == LULL_OK) {
    device->committed = 1;
    device->dirty = 0;
  }
  lull_device_unlock(device);
  if (status != LULL_OK)
    lull_api_error_status(device, &err);
}

OIDN_API void oidnSyncDevice(OIDNDevice device)
{
  if (!lull_check_device(device))
    return;
  lull_device_lock(device);
  if (!lull_device_ready(device)) {
    /* OIDN refuses the sync of a changed device, but the queued work still
     * reads and writes the caller's memory: wait for it all the same, so
     * that memory may go once this call returns; its errors stay parked
     * for a sync on the committed device */
    lull_device_wait(device);
    lull_device_unlock(device);
    return;
  }
  /* the first error of asynchronous work: one parked earlier, else what
   * the wait finds */
  lull_device_wait(device);
  lull_error err = {LULL_OK, ""};
  const lull_status status = lull_device_take_parked(device, &err);
  lull_device_unlock(device);
  if (status != LULL_OK)
    lull_api_error_status(device, &err);
}
