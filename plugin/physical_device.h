/* The physical devices lull can create devices on: the CUDA GPUs (fastest
 * first, when the CUDA backend is built and a driver and GPU are present),
 * then the CPU.  OIDN_DEVICE_CPU=0 / OIDN_DEVICE_CUDA=0 hide a kind.  As in
 * OIDN, the switches are read and the list is built once per process, at
 * first use. */
#pragma once

#include <OpenImageDenoise/oidn.h>

typedef struct lull_physical_device
{
  OIDNDeviceType type;
  int cuda_id;
  char name[256];
  int uuid_supported, luid_supported, pci_supported;
  unsigned char uuid[16];
  unsigned char luid[8];
  unsigned int node_mask;
  int pci_domain, pci_bus, pci_device, pci_function;
} lull_physical_device;

/* The OIDN_DEVICE_CPU / OIDN_DEVICE_CUDA switches (1 unless set to 0);
 * reading them enumerates nothing. */
int lull_cpu_device_enabled(void);
int lull_cuda_devices_enabled(void);
int lull_physical_device_count(void);
/* Physical device id's entry, valid for the process lifetime; NULL for an
 * invalid id. */
const lull_physical_device* lull_physical_device_find(int id);
