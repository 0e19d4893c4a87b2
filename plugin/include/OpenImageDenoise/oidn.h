/* lull's own text of the Open Image Denoise 2.5 C API.
 *
 * Same function names, signatures, enum names and numeric values as OIDN,
 * so a program written against OIDN compiles and links against lull
 * unchanged.  lull adds filter types and parameters (see lull.h), never
 * functions here.  Where lull's behaviour differs from OIDN's it says so in
 * docs/oidn-compatibility.md. */
#pragma once

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#if defined(__cplusplus)
  #if defined(SYCL_LANGUAGE_VERSION)
    #include <sycl/sycl.hpp>
  #else
    namespace sycl { class device; class queue; class event; }
  #endif
#endif

/* Interop types, declared here so users need no vendor headers. */
typedef struct CUstream_st* cudaStream_t;
typedef struct ihipStream_t* hipStream_t;

#if defined(__OBJC__)
  #import <Metal/Metal.h>
  typedef id<MTLDevice> MTLDevice_id;
  typedef id<MTLCommandQueue> MTLCommandQueue_id;
  typedef id<MTLBuffer> MTLBuffer_id;
#else
  typedef void* MTLDevice_id;
  typedef void* MTLCommandQueue_id;
  typedef void* MTLBuffer_id;
#endif

#if defined(__cplusplus)
extern "C" {
#endif

#define OIDN_UUID_SIZE 16u
#define OIDN_LUID_SIZE 8u

/* ---------------------------------------------------------------------------
 * Physical devices
 * ------------------------------------------------------------------------- */

/* Number of supported physical devices (CPU first when no GPU, fastest first). */
OIDN_API int oidnGetNumPhysicalDevices(void);

/* Physical device parameters: "type", "name", "uuidSupported", "uuid",
 * "luidSupported", "luid", "nodeMask", "pciAddressSupported", "pciDomain",
 * "pciBus", "pciDevice", "pciFunction". */
OIDN_API bool oidnGetPhysicalDeviceBool(int physicalDeviceID, const char* name);
OIDN_API int oidnGetPhysicalDeviceInt(int physicalDeviceID, const char* name);

static inline unsigned int oidnGetPhysicalDeviceUInt(int physicalDeviceID, const char* name)
{
  return (unsigned int)oidnGetPhysicalDeviceInt(physicalDeviceID, name);
}

OIDN_API const char* oidnGetPhysicalDeviceString(int physicalDeviceID, const char* name);
OIDN_API const void* oidnGetPhysicalDeviceData(int physicalDeviceID, const char* name,
                                               size_t* byteSize);

/* ---------------------------------------------------------------------------
 * Devices
 * ------------------------------------------------------------------------- */

typedef enum
{
  OIDN_DEVICE_TYPE_DEFAULT = 0, /* the fastest supported device */
  OIDN_DEVICE_TYPE_CPU = 1,
  OIDN_DEVICE_TYPE_SYCL = 2,
  OIDN_DEVICE_TYPE_CUDA = 3,
  OIDN_DEVICE_TYPE_HIP = 4,
  OIDN_DEVICE_TYPE_METAL = 5,
} OIDNDeviceType;

typedef enum
{
  OIDN_ERROR_NONE = 0,
  OIDN_ERROR_UNKNOWN = 1,
  OIDN_ERROR_INVALID_ARGUMENT = 2,
  OIDN_ERROR_INVALID_OPERATION = 3,
  OIDN_ERROR_OUT_OF_MEMORY = 4,
  OIDN_ERROR_UNSUPPORTED_HARDWARE = 5,
  OIDN_ERROR_CANCELLED = 6,
} OIDNError;

typedef void (*OIDNErrorFunction)(void* userPtr, OIDNError code, const char* message);

typedef struct OIDNDeviceImpl* OIDNDevice;

OIDN_API bool oidnIsCPUDeviceSupported(void);
#if defined(__cplusplus)
OIDN_API bool oidnIsSYCLDeviceSupported(const sycl::device* device);
#endif
OIDN_API bool oidnIsCUDADeviceSupported(int deviceID);
OIDN_API bool oidnIsHIPDeviceSupported(int deviceID);
OIDN_API bool oidnIsMetalDeviceSupported(MTLDevice_id device);

OIDN_API OIDNDevice oidnNewDevice(OIDNDeviceType type);
OIDN_API OIDNDevice oidnNewDeviceByID(int physicalDeviceID);
OIDN_API OIDNDevice oidnNewDeviceByUUID(const void* uuid);
OIDN_API OIDNDevice oidnNewDeviceByLUID(const void* luid);
OIDN_API OIDNDevice oidnNewDeviceByPCIAddress(int pciDomain, int pciBus, int pciDevice,
                                              int pciFunction);
#if defined(__cplusplus)
OIDN_API OIDNDevice oidnNewSYCLDevice(const sycl::queue* queues, int numQueues);
#endif
/* One (device ID, stream) pair; a NULL stream means the default stream. */
OIDN_API OIDNDevice oidnNewCUDADevice(const int* deviceIDs, const cudaStream_t* streams,
                                      int numPairs);
OIDN_API OIDNDevice oidnNewHIPDevice(const int* deviceIDs, const hipStream_t* streams,
                                     int numPairs);
OIDN_API OIDNDevice oidnNewMetalDevice(const MTLCommandQueue_id* commandQueues, int numQueues);

OIDN_API void oidnRetainDevice(OIDNDevice device);
OIDN_API void oidnReleaseDevice(OIDNDevice device);

/* Device parameters: "type", "version", "versionMajor", "versionMinor",
 * "versionPatch", "systemMemorySupported", "managedMemorySupported",
 * "externalMemoryTypes", "verbose", "numThreads", "setAffinity". */
OIDN_API void oidnSetDeviceBool(OIDNDevice device, const char* name, bool value);
OIDN_API void oidnSetDeviceInt(OIDNDevice device, const char* name, int value);

static inline void oidnSetDeviceUInt(OIDNDevice device, const char* name, unsigned int value)
{
  oidnSetDeviceInt(device, name, (int)value);
}

OIDN_API bool oidnGetDeviceBool(OIDNDevice device, const char* name);
OIDN_API int oidnGetDeviceInt(OIDNDevice device, const char* name);

static inline unsigned int oidnGetDeviceUInt(OIDNDevice device, const char* name)
{
  return (unsigned int)oidnGetDeviceInt(device, name);
}

/* The callback runs for every error, on the thread that caused it. */
OIDN_API void oidnSetDeviceErrorFunction(OIDNDevice device, OIDNErrorFunction func,
                                         void* userPtr);

/* Returns and clears the first error of this thread on the device (or of the
 * thread's global slot when device is NULL). */
OIDN_API OIDNError oidnGetDeviceError(OIDNDevice device, const char** outMessage);

/* A device is committed exactly once, before it creates buffers or filters. */
OIDN_API void oidnCommitDevice(OIDNDevice device);

/* Waits for all asynchronous work of the device and raises parked errors. */
OIDN_API void oidnSyncDevice(OIDNDevice device);

/* ---------------------------------------------------------------------------
 * Buffers
 * ------------------------------------------------------------------------- */

typedef enum
{
  OIDN_FORMAT_UNDEFINED = 0,
  OIDN_FORMAT_FLOAT = 1,
  OIDN_FORMAT_FLOAT2,
  OIDN_FORMAT_FLOAT3,
  OIDN_FORMAT_FLOAT4,
  OIDN_FORMAT_HALF = 257,
  OIDN_FORMAT_HALF2,
  OIDN_FORMAT_HALF3,
  OIDN_FORMAT_HALF4,
} OIDNFormat;

typedef enum
{
  OIDN_STORAGE_UNDEFINED = 0, /* let the device choose */
  OIDN_STORAGE_HOST = 1,      /* host memory the device can reach */
  OIDN_STORAGE_DEVICE = 2,    /* device memory, not host-accessible */
  OIDN_STORAGE_MANAGED = 3,   /* migrated between host and device */
} OIDNStorage;

typedef enum
{
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_NONE = 0,
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD = 1 << 0,
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF = 1 << 1,
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_WIN32 = 1 << 2,
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_WIN32_KMT = 1 << 3,
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D11_TEXTURE = 1 << 4,
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D11_TEXTURE_KMT = 1 << 5,
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D11_RESOURCE = 1 << 6,
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D11_RESOURCE_KMT = 1 << 7,
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D12_HEAP = 1 << 8,
  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D12_RESOURCE = 1 << 9,
} OIDNExternalMemoryTypeFlag;

typedef struct OIDNBufferImpl* OIDNBuffer;

OIDN_API OIDNBuffer oidnNewBuffer(OIDNDevice device, size_t byteSize);
OIDN_API OIDNBuffer oidnNewBufferWithStorage(OIDNDevice device, size_t byteSize,
                                             OIDNStorage storage);
/* Wraps memory the caller owns; no copy is made. */
OIDN_API OIDNBuffer oidnNewSharedBuffer(OIDNDevice device, void* devPtr, size_t byteSize);
OIDN_API OIDNBuffer oidnNewSharedBufferFromFD(OIDNDevice device,
                                              OIDNExternalMemoryTypeFlag fdType, int fd,
                                              size_t byteSize);
OIDN_API OIDNBuffer oidnNewSharedBufferFromWin32Handle(OIDNDevice device,
                                                       OIDNExternalMemoryTypeFlag handleType,
                                                       void* handle, const void* name,
                                                       size_t byteSize);
OIDN_API OIDNBuffer oidnNewSharedBufferFromMetal(OIDNDevice device, MTLBuffer_id buffer);

OIDN_API size_t oidnGetBufferSize(OIDNBuffer buffer);
OIDN_API OIDNStorage oidnGetBufferStorage(OIDNBuffer buffer);
OIDN_API void* oidnGetBufferData(OIDNBuffer buffer);

OIDN_API void oidnReadBuffer(OIDNBuffer buffer, size_t byteOffset, size_t byteSize,
                             void* dstHostPtr);
OIDN_API void oidnReadBufferAsync(OIDNBuffer buffer, size_t byteOffset, size_t byteSize,
                                  void* dstHostPtr);
OIDN_API void oidnWriteBuffer(OIDNBuffer buffer, size_t byteOffset, size_t byteSize,
                              const void* srcHostPtr);
OIDN_API void oidnWriteBufferAsync(OIDNBuffer buffer, size_t byteOffset, size_t byteSize,
                                   const void* srcHostPtr);

OIDN_API void oidnRetainBuffer(OIDNBuffer buffer);
OIDN_API void oidnReleaseBuffer(OIDNBuffer buffer);

/* ---------------------------------------------------------------------------
 * Filters
 * ------------------------------------------------------------------------- */

typedef enum
{
  OIDN_QUALITY_DEFAULT = 0,
  OIDN_QUALITY_FAST = 4,
  OIDN_QUALITY_BALANCED = 5,
  OIDN_QUALITY_HIGH = 6,
} OIDNQuality;

/* Called with progress n in [0,1]; returning false cancels the execution. */
typedef bool (*OIDNProgressMonitorFunction)(void* userPtr, double n);

typedef struct OIDNFilterImpl* OIDNFilter;

/* Filter types: "RT", "RTLightmap", and lull's "ATrous", "Gaussian",
 * "Poisson", "GradientDomain" (see lull.h for their parameters). */
OIDN_API OIDNFilter oidnNewFilter(OIDNDevice device, const char* type);

OIDN_API void oidnRetainFilter(OIDNFilter filter);
OIDN_API void oidnReleaseFilter(OIDNFilter filter);

OIDN_API void oidnSetFilterImage(OIDNFilter filter, const char* name, OIDNBuffer buffer,
                                 OIDNFormat format, size_t width, size_t height,
                                 size_t byteOffset, size_t pixelByteStride,
                                 size_t rowByteStride);
OIDN_API void oidnSetSharedFilterImage(OIDNFilter filter, const char* name, void* devPtr,
                                       OIDNFormat format, size_t width, size_t height,
                                       size_t byteOffset, size_t pixelByteStride,
                                       size_t rowByteStride);
OIDN_API void oidnUnsetFilterImage(OIDNFilter filter, const char* name);

OIDN_API void oidnSetSharedFilterData(OIDNFilter filter, const char* name, void* hostPtr,
                                      size_t byteSize);
OIDN_API void oidnUpdateFilterData(OIDNFilter filter, const char* name);
OIDN_API void oidnUnsetFilterData(OIDNFilter filter, const char* name);

OIDN_API void oidnSetFilterBool(OIDNFilter filter, const char* name, bool value);
OIDN_API bool oidnGetFilterBool(OIDNFilter filter, const char* name);
OIDN_API void oidnSetFilterInt(OIDNFilter filter, const char* name, int value);
OIDN_API int oidnGetFilterInt(OIDNFilter filter, const char* name);
OIDN_API void oidnSetFilterFloat(OIDNFilter filter, const char* name, float value);
OIDN_API float oidnGetFilterFloat(OIDNFilter filter, const char* name);

OIDN_API void oidnSetFilterProgressMonitorFunction(OIDNFilter filter,
                                                   OIDNProgressMonitorFunction func,
                                                   void* userPtr);

OIDN_API void oidnCommitFilter(OIDNFilter filter);
OIDN_API void oidnExecuteFilter(OIDNFilter filter);
OIDN_API void oidnExecuteFilterAsync(OIDNFilter filter);
#if defined(__cplusplus)
OIDN_API void oidnExecuteSYCLFilterAsync(OIDNFilter filter, const sycl::event* depEvents,
                                         int numDepEvents, sycl::event* doneEvent);
#endif

/* ---------------------------------------------------------------------------
 * External semaphores (OIDN 2.5): synchronisation with another API that
 * shares memory with the device.  The device parameter
 * "externalSemaphoreTypes" says which kinds it imports: the CUDA device on
 * Linux OPAQUE_FD and TIMELINE_SEMAPHORE_FD, the CPU device none.  A file
 * descriptor is taken over by a successful import.  The names and their
 * order are OIDN's; the values follow OIDN's pattern (one bit each, in
 * order), see docs/oidn-compatibility.md.
 * ------------------------------------------------------------------------- */

typedef enum
{
  OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_NONE = 0,
  OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_FD = 1 << 0,
  OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_WIN32 = 1 << 1,
  OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_WIN32_KMT = 1 << 2,
  OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_D3D11_FENCE = 1 << 3,
  OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_D3D12_FENCE = 1 << 4,
  OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_KEYED_MUTEX = 1 << 5,
  OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_KEYED_MUTEX_KMT = 1 << 6,
  OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_TIMELINE_SEMAPHORE_FD = 1 << 7,
  OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_TIMELINE_SEMAPHORE_WIN32 = 1 << 8,
} OIDNExternalSemaphoreTypeFlag;

typedef int OIDNExternalSemaphoreTypeFlags;
typedef struct OIDNSemaphoreImpl* OIDNSemaphore;

OIDN_API OIDNSemaphore oidnNewSharedSemaphoreFromFD(OIDNDevice device,
                                                    OIDNExternalSemaphoreTypeFlags fdType,
                                                    int fd);
OIDN_API OIDNSemaphore oidnNewSharedSemaphoreFromWin32Handle(
    OIDNDevice device, OIDNExternalSemaphoreTypeFlags handleType, void* handle,
    const void* name);
OIDN_API void oidnSignalSemaphoresAsync(OIDNDevice device, const OIDNSemaphore* semaphores,
                                        const uint64_t* values, int numSemaphores);
OIDN_API void oidnWaitSemaphoresAsync(OIDNDevice device, const OIDNSemaphore* semaphores,
                                      const uint64_t* values, const uint32_t* timeoutsMs,
                                      int numSemaphores);
OIDN_API void oidnRetainSemaphore(OIDNSemaphore semaphore);
OIDN_API void oidnReleaseSemaphore(OIDNSemaphore semaphore);

/* ---------------------------------------------------------------------------
 * OIDN 1.x spellings.  Deprecated in OIDN 2 (a compile-time warning says the
 * new name) but, unlike OIDN 2, exported as real symbols so binaries built
 * against the old names still link.
 * ------------------------------------------------------------------------- */

OIDN_API OIDN_DEPRECATED("oidnSetDevice1b is deprecated. Use oidnSetDeviceBool instead.")
void oidnSetDevice1b(OIDNDevice device, const char* name, bool value);
OIDN_API OIDN_DEPRECATED("oidnSetDevice1i is deprecated. Use oidnSetDeviceInt instead.")
void oidnSetDevice1i(OIDNDevice device, const char* name, int value);
OIDN_API OIDN_DEPRECATED("oidnGetDevice1b is deprecated. Use oidnGetDeviceBool instead.")
bool oidnGetDevice1b(OIDNDevice device, const char* name);
OIDN_API OIDN_DEPRECATED("oidnGetDevice1i is deprecated. Use oidnGetDeviceInt instead.")
int oidnGetDevice1i(OIDNDevice device, const char* name);
OIDN_API OIDN_DEPRECATED("oidnRemoveFilterImage is deprecated. Use oidnUnsetFilterImage instead.")
void oidnRemoveFilterImage(OIDNFilter filter, const char* name);
OIDN_API OIDN_DEPRECATED("oidnRemoveFilterData is deprecated. Use oidnUnsetFilterData instead.")
void oidnRemoveFilterData(OIDNFilter filter, const char* name);
OIDN_API OIDN_DEPRECATED("oidnSetFilter1b is deprecated. Use oidnSetFilterBool instead.")
void oidnSetFilter1b(OIDNFilter filter, const char* name, bool value);
OIDN_API OIDN_DEPRECATED("oidnGetFilter1b is deprecated. Use oidnGetFilterBool instead.")
bool oidnGetFilter1b(OIDNFilter filter, const char* name);
OIDN_API OIDN_DEPRECATED("oidnSetFilter1i is deprecated. Use oidnSetFilterInt instead.")
void oidnSetFilter1i(OIDNFilter filter, const char* name, int value);
OIDN_API OIDN_DEPRECATED("oidnGetFilter1i is deprecated. Use oidnGetFilterInt instead.")
int oidnGetFilter1i(OIDNFilter filter, const char* name);
OIDN_API OIDN_DEPRECATED("oidnSetFilter1f is deprecated. Use oidnSetFilterFloat instead.")
void oidnSetFilter1f(OIDNFilter filter, const char* name, float value);
OIDN_API OIDN_DEPRECATED("oidnGetFilter1f is deprecated. Use oidnGetFilterFloat instead.")
float oidnGetFilter1f(OIDNFilter filter, const char* name);

#if defined(__cplusplus)
}
#endif
