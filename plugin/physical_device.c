/* Physical devices and their queries (oidnGetPhysicalDevice*).  Errors of
 * these calls go to the calling thread's global slot: there is no device. */
#include "physical_device.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "handles.h"

/* Process-wide state, as OIDN's semantics require: OIDN reads the
 * OIDN_DEVICE_* switches and lists the physical devices once per process,
 * and the strings and data its queries return stay valid for the process
 * lifetime, so callers keep them and share them between threads.  Both are
 * built at first use and never change or get freed. */
static struct
{
  int cpu, cuda;
} enabled;
static pthread_once_t enabled_once = PTHREAD_ONCE_INIT;

static void read_enabled(void)
{
  enabled.cpu = lull_env_int("OIDN_DEVICE_CPU", 1) != 0;
  enabled.cuda = lull_env_int("OIDN_DEVICE_CUDA", 1) != 0;
}

int lull_cpu_device_enabled(void)
{
  pthread_once(&enabled_once, read_enabled);
  return enabled.cpu;
}

int lull_cuda_devices_enabled(void)
{
  pthread_once(&enabled_once, read_enabled);
  return enabled.cuda;
}

/* The CPU's model name from /proc/cpuinfo, or a generic name. */
static void cpu_name(char* out, size_t size)
{
  snprintf(out, size, "CPU");
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0) {
      const char* colon = strchr(line, ':');
      if (colon) {
        colon += 1;
        while (*colon == ' ' || *colon == '\t')
          ++colon;
        snprintf(out, size, "%s", colon);
        out[strcspn(out, "\n")] = '\0';
      }
      break;
    }
  }
  fclose(f);
}

/* Usable GPU `index` (lull_cuda_device_count's order); 0 when its
 * properties cannot be read. */
static int cuda_entry(int index, lull_physical_device* out)
{
  const int ordinal = lull_cuda_device_ordinal(index);
  lull_cuda_device_info info;
  lull_error err;
  if (ordinal < 0 || lull_cuda_device_info_get(ordinal, &info, &err) != LULL_OK)
    return 0;
  out->type = OIDN_DEVICE_TYPE_CUDA;
  out->cuda_id = ordinal;
  snprintf(out->name, sizeof out->name, "%s", info.name);
  out->uuid_supported = info.uuid_supported;
  memcpy(out->uuid, info.uuid, sizeof out->uuid);
  out->luid_supported = info.luid_supported;
  memcpy(out->luid, info.luid, sizeof out->luid);
  out->node_mask = info.node_mask;
  out->pci_supported = info.pci_supported;
  out->pci_domain = info.pci_domain;
  out->pci_bus = info.pci_bus;
  out->pci_device = info.pci_device;
  out->pci_function = info.pci_function;
  return 1;
}

/* Static storage: nothing to allocate (so nothing to fail) for a list
 * that lives as long as the process.  More GPUs than this are not listed;
 * CUDA machines have up to 16. */
enum { MAX_GPUS = 64 };
static struct
{
  lull_physical_device devices[MAX_GPUS + 1];
  int count;
} list;
static pthread_once_t list_once = PTHREAD_ONCE_INIT;

/* The GPUs fastest first (CUDA's order), then the CPU. */
static void build_list(void)
{
  int gpus = lull_cuda_devices_enabled() ? lull_cuda_device_count() : 0;
  if (gpus > MAX_GPUS)
    gpus = MAX_GPUS;
  int n = 0;
  for (int i = 0; i < gpus; ++i)
    n += cuda_entry(i, &list.devices[n]);
  if (lull_cpu_device_enabled()) {
    list.devices[n].type = OIDN_DEVICE_TYPE_CPU;
    list.devices[n].cuda_id = -1;
    cpu_name(list.devices[n].name, sizeof list.devices[n].name);
    ++n;
  }
  list.count = n;
}

int lull_physical_device_count(void)
{
  pthread_once(&list_once, build_list);
  return list.count;
}

const lull_physical_device* lull_physical_device_find(int id)
{
  pthread_once(&list_once, build_list);
  return id >= 0 && id < list.count ? &list.devices[id] : NULL;
}

OIDN_API int oidnGetNumPhysicalDevices(void)
{
  return lull_physical_device_count();
}

/* The entry of physical device id, or NULL with the error recorded. */
static const lull_physical_device* get_device(int id, const char* name)
{
  if (!lull_check_string(NULL, name))
    return NULL;
  const lull_physical_device* pd = lull_physical_device_find(id);
  if (!pd)
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid physical device ID");
  return pd;
}

static void unknown(const char* name)
{
  char message[160];
  snprintf(message, sizeof message,
           "unknown physical device parameter or type mismatch: '%.100s'", name);
  lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, message);
}

/* A parameter the device does not have (a CPU's UUID, LUID or PCI
 * address): OIDN's code, and the flag to check before asking. */
static void unavailable(const char* name, const char* flag)
{
  char message[160];
  snprintf(message, sizeof message,
           "physical device parameter '%s' is not available, check '%s' first", name, flag);
  lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, message);
}

OIDN_API int oidnGetPhysicalDeviceInt(int physicalDeviceID, const char* name)
{
  const lull_physical_device* pd = get_device(physicalDeviceID, name);
  if (!pd)
    return 0;
  if (strcmp(name, "type") == 0)
    return pd->type;
  if (strcmp(name, "uuidSupported") == 0)
    return pd->uuid_supported;
  if (strcmp(name, "luidSupported") == 0)
    return pd->luid_supported;
  if (strcmp(name, "pciAddressSupported") == 0)
    return pd->pci_supported;
  if (strcmp(name, "nodeMask") == 0) {
    if (pd->luid_supported)
      return (int)pd->node_mask;
    unavailable("nodeMask", "luidSupported");
    return 0;
  }
  const int* pci = strcmp(name, "pciDomain") == 0     ? &pd->pci_domain
                   : strcmp(name, "pciBus") == 0      ? &pd->pci_bus
                   : strcmp(name, "pciDevice") == 0   ? &pd->pci_device
                   : strcmp(name, "pciFunction") == 0 ? &pd->pci_function
                                                      : NULL;
  if (pci) {
    if (pd->pci_supported)
      return *pci;
    unavailable(name, "pciAddressSupported");
    return 0;
  }
  unknown(name);
  return 0;
}

OIDN_API bool oidnGetPhysicalDeviceBool(int physicalDeviceID, const char* name)
{
  return oidnGetPhysicalDeviceInt(physicalDeviceID, name) != 0;
}

/* Strings and data point into the process-wide list: valid for the
 * process lifetime, as OIDN's. */
OIDN_API const char* oidnGetPhysicalDeviceString(int physicalDeviceID, const char* name)
{
  const lull_physical_device* pd = get_device(physicalDeviceID, name);
  if (!pd)
    return NULL;
  if (strcmp(name, "name") == 0)
    return pd->name;
  unknown(name);
  return NULL;
}

OIDN_API const void* oidnGetPhysicalDeviceData(int physicalDeviceID, const char* name,
                                               size_t* byteSize)
{
  const lull_physical_device* pd = get_device(physicalDeviceID, name);
  if (!pd)
    return NULL;
  if (strcmp(name, "uuid") == 0) {
    if (!pd->uuid_supported) {
      unavailable("uuid", "uuidSupported");
      return NULL;
    }
    if (byteSize)
      *byteSize = OIDN_UUID_SIZE;
    return pd->uuid;
  }
  if (strcmp(name, "luid") == 0) {
    if (!pd->luid_supported) {
      unavailable("luid", "luidSupported");
      return NULL;
    }
    if (byteSize)
      *byteSize = OIDN_LUID_SIZE;
    return pd->luid;
  }
  unknown(name);
  return NULL;
}
