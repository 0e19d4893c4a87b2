/* The CUDA GPUs lull can run on, for the physical-device queries.
 *
 * The runtime is linked statically (cudart_static) and loads the driver
 * lazily, so on a machine without an NVIDIA driver or GPU the first call
 * fails softly and lull simply sees no CUDA device. */
#include <stdio.h>

#include "backend_cuda.h"

/* The oldest architecture lull is compiled for (cuda/CMakeLists.txt). */
enum { MIN_MAJOR = 7, MIN_MINOR = 5 };

extern "C" int lull_cuda_device_count(void)
{
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError(); /* no driver or no GPU: not an error for lull */
    return 0;
  }
  return count > 0 ? count : 0;
}

extern "C" lull_status lull_cuda_device_info_get(int device_id, lull_cuda_device_info* info,
                                                 lull_error* err)
{
  memset(info, 0, sizeof *info);
  if (device_id < 0 || device_id >= lull_cuda_device_count())
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "invalid CUDA device ID %d", device_id);
  cudaDeviceProp prop;
  const cudaError_t code = cudaGetDeviceProperties(&prop, device_id);
  if (code != cudaSuccess)
    return lull_cuda_fail(err, code, "cannot query the CUDA device");
  snprintf(info->name, sizeof info->name, "%s", prop.name);
  memcpy(info->uuid, prop.uuid.bytes, sizeof info->uuid);
  info->uuid_supported = 1;
  /* LUIDs exist on Windows only (WDDM); CUDA reports zeros elsewhere */
  memcpy(info->luid, prop.luid, sizeof info->luid);
  info->node_mask = prop.luidDeviceNodeMask;
  int luid_nonzero = 0;
  for (size_t i = 0; i < sizeof info->luid; ++i)
    luid_nonzero |= info->luid[i];
  info->luid_supported = luid_nonzero != 0;
  info->pci_domain = prop.pciDomainID;
  info->pci_bus = prop.pciBusID;
  info->pci_device = prop.pciDeviceID;
  info->pci_function = 0; /* CUDA devices are PCI function 0 */
  info->pci_supported = 1;
  return LULL_OK;
}

/* 1 when lull has machine code or PTX for the device's architecture. */
extern "C" int lull_cuda_device_supported(int device_id)
{
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_id) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_id) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return major > MIN_MAJOR || (major == MIN_MAJOR && minor >= MIN_MINOR);
}
