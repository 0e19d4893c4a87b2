/* The physical devices lull can create devices on: the CUDA GPUs (fastest
 * first, when the CUDA backend is built and a driver and GPU are present),
 * then the CPU.  OIDN_DEVICE_CPU=0 / OIDN_DEVICE_CUDA=0 hide a kind. */
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

int lull_physical_device_count(void);
/* Returns 0 for an invalid index. */
int lull_physical_device_get(int id, lull_physical_device* out);
