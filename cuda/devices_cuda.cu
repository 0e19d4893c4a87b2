/* The CUDA GPUs lull can run on, for the physical-device queries.
 *
 * The runtime is linked statically (cudart_static) and loads the driver
 * lazily, so on a machine without an NVIDIA driver or GPU the first call
 * fails softly and lull simply sees no CUDA device.  Only GPUs this build
 * can run on are listed (as OIDN lists only supported ones), so that the
 * default device falls back to the CPU next to an older GPU. */
#include <stdio.h>

#include <atomic>

#include "backend_cuda.h"
#include "cuda_arch.h"

/* The oldest compute capability lull's kernels are written for. */
enum { MIN_MAJOR = 7, MIN_MINOR = 5 };

/* lull_cuda_enumerations: the calls of cudaGetDeviceCount, through which
 * every query here starts */
static std::atomic<int> enumerations{0};

extern "C" int lull_cuda_enumerations(void)
{
  return enumerations.load();
}

/* All CUDA devices, usable or not; 0 when the runtime cannot list them
 * (no driver or GPU: not an error for lull), with the runtime's error in
 * *error when error is not NULL, for the messages that say why CUDA is
 * unsupported. */
static int cuda_devices_or_error(cudaError_t* error)
{
  enumerations.fetch_add(1);
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (error)
    *error = code;
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count > 0 ? count : 0;
}

static int cuda_devices(void)
{
  return cuda_devices_or_error(NULL);
}

/* The compute capability of CUDA device `ordinal`; 0 when it cannot be read. */
static int compute_capability(int ordinal, int* major, int* minor)
{
  if (cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, ordinal) != cudaSuccess ||
      cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return 1;
}

extern "C" int lull_cuda_device_usable(int ordinal)
{
  if (ordinal < 0 || ordinal >= cuda_devices())
    return 0;
  int major = 0, minor = 0;
  if (!compute_capability(ordinal, &major, &minor))
    return 0;
  if (major < MIN_MAJOR || (major == MIN_MAJOR && minor < MIN_MINOR))
    return 0;
  /* a build for other GPUs (-DLULL_CUDA_ARCHITECTURES=90-real on an A100)
   * has no kernel the device can run */
  if (!lull_cuda_arch_list_runs(LULL_CUDA_ARCH_LIST, major, minor))
    return 0;
  cudaDeviceProp prop; /* the physical-device queries read these */
  if (cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return 1;
}

extern "C" int lull_cuda_device_count(void)
{
  const int n = cuda_devices();
  int usable = 0;
  for (int i = 0; i < n; ++i)
    usable += lull_cuda_device_usable(i);
  return usable;
}

extern "C" int lull_cuda_device_ordinal(int index)
{
  const int n = cuda_devices();
  for (int i = 0; i < n && index >= 0; ++i)
    if (lull_cuda_device_usable(i) && index-- == 0)
      return i;
  return -1;
}

lull_status lull_cuda_listing_reason(cudaError_t listing, int driver_version, int runtime_version,
                                     lull_error* err)
{
  const int dmajor = driver_version / 1000, dminor = driver_version % 1000 / 10;
  const int rmajor = runtime_version / 1000, rminor = runtime_version % 1000 / 10;
  /* cudaErrorInsufficientDriver is what the runtime says both without a
   * driver and with one too old for it: the driver version (0 when no
   * driver could be loaded) tells which */
  if (listing == cudaErrorInsufficientDriver && driver_version == 0)
    return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                     "no NVIDIA driver found: libcuda.so.1 could not be loaded");
  if (listing == cudaErrorInsufficientDriver && driver_version < runtime_version)
    return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                     "the NVIDIA driver supports CUDA %d.%d, older than the CUDA %d.%d runtime "
                     "lull is built with: update the driver",
                     dmajor, dminor, rmajor, rminor);
  if (listing == cudaErrorNoDevice)
    return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                     "the NVIDIA driver (CUDA %d.%d) finds no GPU", dmajor, dminor);
  return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                   "the CUDA runtime lists no device, %s: %s (driver: CUDA %d.%d, runtime %d.%d)",
                   cudaGetErrorName(listing), cudaGetErrorString(listing), dmajor, dminor, rmajor,
                   rminor);
}

extern "C" lull_status lull_cuda_device_unusable_reason(int ordinal, lull_error* err)
{
  cudaError_t listing = cudaSuccess;
  const int n = cuda_devices_or_error(&listing);
  if (listing != cudaSuccess) {
    /* the driver's version is 0 when no driver is installed */
    int driver = 0, runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess)
      driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess)
      runtime = CUDART_VERSION;
    (void)cudaGetLastError();
    return lull_cuda_listing_reason(listing, driver, runtime, err);
  }
  /* OIDN_ERROR_UNKNOWN, as OIDN reports the runtime's invalid ordinal */
  if (ordinal < 0 || ordinal >= n)
    return lull_fail(err, LULL_ERROR_UNKNOWN, "invalid CUDA device ID %d: the CUDA runtime lists %d",
                     ordinal, n);
  int major = 0, minor = 0;
  if (!compute_capability(ordinal, &major, &minor))
    return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                     "unsupported CUDA device %d: its compute capability cannot be read", ordinal);
  return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE,
                   "unsupported CUDA device %d (compute capability %d.%d): lull needs 7.5 or "
                   "newer and this build has GPU code for %s",
                   ordinal, major, minor, LULL_CUDA_ARCH_LIST);
}

extern "C" lull_status lull_cuda_device_info_get(int device_id, lull_cuda_device_info* info,
                                                 lull_error* err)
{
  memset(info, 0, sizeof *info);
  if (device_id < 0 || device_id >= cuda_devices())
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
