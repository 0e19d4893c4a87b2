/* Physical devices and their queries (oidnGetPhysicalDevice*).  Errors of
 * these calls go to the calling thread's global slot: there is no device. */
#include "physical_device.h"

#include <stdio.h>
#include <string.h>

#include "handles.h"

static int cuda_count(void)
{
  return lull_env_int("OIDN_DEVICE_CUDA", 1) != 0 ? lull_cuda_device_count() : 0;
}

static int cpu_count(void)
{
  return lull_env_int("OIDN_DEVICE_CPU", 1) != 0 ? 1 : 0;
}

int lull_physical_device_count(void)
{
  return cuda_count() + cpu_count();
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

int lull_physical_device_get(int id, lull_physical_device* out)
{
  memset(out, 0, sizeof *out);
  const int gpus = cuda_count();
  if (id < 0 || id >= gpus + cpu_count())
    return 0;
  if (id < gpus) {
    /* the usable GPUs only, in CUDA's order (lull_cuda_device_count) */
    const int ordinal = lull_cuda_device_ordinal(id);
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
  out->type = OIDN_DEVICE_TYPE_CPU;
  out->cuda_id = -1;
  cpu_name(out->name, sizeof out->name);
  return 1;
}

OIDN_API int oidnGetNumPhysicalDevices(void)
{
  return lull_physical_device_count();
}

static int get_device(int id, const char* name, lull_physical_device* pd)
{
  if (!lull_check_string(NULL, name))
    return 0;
  if (!lull_physical_device_get(id, pd)) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid physical device ID");
    return 0;
  }
  return 1;
}

static void unknown(const char* name)
{
  char message[160];
  snprintf(message, sizeof message,
           "unknown physical device parameter or type mismatch: '%.100s'", name);
  lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, message);
}

OIDN_API int oidnGetPhysicalDeviceInt(int physicalDeviceID, const char* name)
{
  lull_physical_device pd;
  if (!get_device(physicalDeviceID, name, &pd))
    return 0;
  if (strcmp(name, "type") == 0)
    return pd.type;
  if (strcmp(name, "uuidSupported") == 0)
    return pd.uuid_supported;
  if (strcmp(name, "luidSupported") == 0)
    return pd.luid_supported;
  if (strcmp(name, "pciAddressSupported") == 0)
    return pd.pci_supported;
  if (strcmp(name, "nodeMask") == 0 && pd.luid_supported)
    return (int)pd.node_mask;
  if (pd.pci_supported) {
    if (strcmp(name, "pciDomain") == 0)
      return pd.pci_domain;
    if (strcmp(name, "pciBus") == 0)
      return pd.pci_bus;
    if (strcmp(name, "pciDevice") == 0)
      return pd.pci_device;
    if (strcmp(name, "pciFunction") == 0)
      return pd.pci_function;
  }
  unknown(name);
  return 0;
}

OIDN_API bool oidnGetPhysicalDeviceBool(int physicalDeviceID, const char* name)
{
  return oidnGetPhysicalDeviceInt(physicalDeviceID, name) != 0;
}

/* Strings and data are returned from per-thread storage, one entry per
 * device ID, valid until the thread ends (or the same ID is queried again). */
enum { RETURNED_MAX = 16 };
static _Thread_local lull_physical_device returned_table[RETURNED_MAX];

static lull_physical_device* returned_entry(int id, const lull_physical_device* pd)
{
  lull_physical_device* entry = &returned_table[id % RETURNED_MAX];
  *entry = *pd;
  return entry;
}

OIDN_API const char* oidnGetPhysicalDeviceString(int physicalDeviceID, const char* name)
{
  lull_physical_device pd;
  if (!get_device(physicalDeviceID, name, &pd))
    return NULL;
  if (strcmp(name, "name") == 0)
    return returned_entry(physicalDeviceID, &pd)->name;
  unknown(name);
  return NULL;
}

OIDN_API const void* oidnGetPhysicalDeviceData(int physicalDeviceID, const char* name,
                                               size_t* byteSize)
{
  lull_physical_device pd;
  if (!get_device(physicalDeviceID, name, &pd))
    return NULL;
  if (strcmp(name, "uuid") == 0 && pd.uuid_supported) {
    if (byteSize)
      *byteSize = OIDN_UUID_SIZE;
    return returned_entry(physicalDeviceID, &pd)->uuid;
  }
  if (strcmp(name, "luid") == 0 && pd.luid_supported) {
    if (byteSize)
      *byteSize = OIDN_LUID_SIZE;
    return returned_entry(physicalDeviceID, &pd)->luid;
  }
  unknown(name);
  return NULL;
}
