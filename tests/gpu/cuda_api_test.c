/* OIDN's API behaviours on the CUDA device (oidn-api-and-users.md §2):
 * physical-device queries, device creation by type, ID, UUID and PCI
 * address and with a user stream, buffer storage kinds, shared buffers and
 * images from cudaMalloc pointers, host pointers the GPU cannot reach,
 * commit rules, in-place filtering, asynchronous execution and copies,
 * cancellation (nothing left queued after a cancelled blocking call), a
 * progress monitor running another filter of the device, memory imported
 * from a file descriptor (externalMemoryTypes), external semaphores'
 * kinds and errors (externalSemaphoreTypes), and out-of-memory errors. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h> /* types of the driver's memory API, reached through the runtime */
#include <cuda_runtime_api.h>

#include "gpu_test_util.h"
#include "test_util.h"

enum { W = 64, H = 48 };

static int cuda_physical_id(void)
{
  for (int i = 0; i < oidnGetNumPhysicalDevices(); ++i)
    if (oidnGetPhysicalDeviceInt(i, "type") == OIDN_DEVICE_TYPE_CUDA)
      return i;
  return -1;
}

static void check_physical(void)
{
  const int id = cuda_physical_id();
  CHECK_EQ_INT(id, 0); /* the GPU is listed first */
  if (id < 0)
    return; /* no GPU: a failure, not a crash on the queries' NULLs */
  const char* name = oidnGetPhysicalDeviceString(id, "name");
  CHECK(name && strlen(name) > 0);
  CHECK(oidnGetPhysicalDeviceBool(id, "uuidSupported"));
  size_t size = 0;
  const void* uuid = oidnGetPhysicalDeviceData(id, "uuid", &size);
  CHECK(uuid != NULL);
  CHECK_EQ_INT(size, OIDN_UUID_SIZE);
  if (uuid) {
    unsigned char copy[OIDN_UUID_SIZE];
    memcpy(copy, uuid, sizeof copy);
    OIDNDevice by_uuid = oidnNewDeviceByUUID(copy);
    CHECK(by_uuid != NULL);
    oidnCommitDevice(by_uuid);
    CHECK_EQ_INT(oidnGetDeviceInt(by_uuid, "type"), OIDN_DEVICE_TYPE_CUDA);
    oidnReleaseDevice(by_uuid);
  }
  CHECK(oidnGetPhysicalDeviceBool(id, "pciAddressSupported"));
  OIDNDevice by_pci = oidnNewDeviceByPCIAddress(
      oidnGetPhysicalDeviceInt(id, "pciDomain"), oidnGetPhysicalDeviceInt(id, "pciBus"),
      oidnGetPhysicalDeviceInt(id, "pciDevice"), oidnGetPhysicalDeviceInt(id, "pciFunction"));
  CHECK(by_pci != NULL);
  oidnReleaseDevice(by_pci);
  CHECK_EQ_INT(oidnGetDeviceError(NULL, NULL), OIDN_ERROR_NONE);
  /* bad creations, with OIDN's codes and messages */
  const int ids[2] = {0, 0};
  cudaStream_t streams[2] = {NULL, NULL}; /* NULL: the default stream */
  const char* message = NULL;
  CHECK(oidnNewCUDADevice(ids, streams, 2) == NULL);
  CHECK_EQ_INT(oidnGetDeviceError(NULL, NULL), OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(oidnNewCUDADevice(NULL, streams, 1) == NULL);
  CHECK_EQ_INT(oidnGetDeviceError(NULL, &message), OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(message && strstr(message, "array of CUDA devices is null"));
  CHECK(oidnNewCUDADevice(ids, NULL, 1) == NULL);
  CHECK_EQ_INT(oidnGetDeviceError(NULL, &message), OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(message && strstr(message, "array of CUDA streams is null"));
  /* as in OIDN, an ID the runtime does not list is created and fails at
   * the commit, on the device's own error slot, with OIDN_ERROR_UNKNOWN */
  const int bad[2] = {999, -1};
  for (int i = 0; i < 2; ++i) {
    OIDNDevice d = oidnNewCUDADevice(&bad[i], streams, 1);
    CHECK(d != NULL);
    CHECK_EQ_INT(oidnGetDeviceError(NULL, NULL), OIDN_ERROR_NONE);
    oidnCommitDevice(d);
    CHECK_EQ_INT(oidnGetDeviceError(d, &message), OIDN_ERROR_UNKNOWN);
    CHECK(message && strstr(message, "invalid CUDA device ID"));
    CHECK(oidnNewFilter(d, "RT") == NULL); /* not committed */
    CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_INVALID_OPERATION);
    oidnReleaseDevice(d);
    CHECK(!oidnIsCUDADeviceSupported(bad[i]));
  }
  OIDNDevice by_stream = oidnNewCUDADevice(ids, streams, 1);
  CHECK(by_stream != NULL);
  oidnReleaseDevice(by_stream);
  CHECK(oidnIsCUDADeviceSupported(0)); /* the H100: listed, and this build runs on it */
}

static void check_buffers(OIDNDevice d)
{
  const OIDNStorage kinds[3] = {OIDN_STORAGE_HOST, OIDN_STORAGE_DEVICE, OIDN_STORAGE_MANAGED};
  float in[256], out[256];
  for (int i = 0; i < 256; ++i)
    in[i] = (float)i * 0.5f;
  for (int k = 0; k < 3; ++k) {
    if (kinds[k] == OIDN_STORAGE_MANAGED && !oidnGetDeviceBool(d, "managedMemorySupported"))
      continue;
    OIDNBuffer b = oidnNewBufferWithStorage(d, sizeof in, kinds[k]);
    CHECK(b != NULL);
    CHECK_EQ_INT(oidnGetBufferStorage(b), kinds[k]);
    memset(out, 0, sizeof out);
    oidnWriteBuffer(b, 0, sizeof in, in);
    oidnReadBuffer(b, 0, sizeof out, out);
    CHECK_EQ_INT(memcmp(in, out, sizeof in), 0);
    /* asynchronous copies complete at sync */
    memset(out, 0, sizeof out);
    oidnWriteBufferAsync(b, 0, sizeof in / 2, in + 128);
    oidnReadBufferAsync(b, 0, sizeof out / 2, out);
    oidnSyncDevice(d);
    CHECK_EQ_INT(memcmp(in + 128, out, sizeof in / 2), 0);
    oidnReadBuffer(b, 1000, 100, out);
    CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_INVALID_ARGUMENT);
    oidnReleaseBuffer(b);
  }
  OIDNBuffer def = oidnNewBuffer(d, 64);
  CHECK_EQ_INT(oidnGetBufferStorage(def), oidnGetDeviceBool(d, "managedMemorySupported")
                                              ? OIDN_STORAGE_MANAGED : OIDN_STORAGE_HOST);
  oidnReleaseBuffer(def);
  /* far more than any GPU holds */
  CHECK(oidnNewBufferWithStorage(d, (size_t)1 << 50, OIDN_STORAGE_DEVICE) == NULL);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_OUT_OF_MEMORY);
  CHECK(oidnNewBufferWithStorage(d, (size_t)1 << 50, OIDN_STORAGE_MANAGED) == NULL);
  CHECK(oidnGetDeviceError(d, NULL) != OIDN_ERROR_NONE);
  /* shared buffer from cudaMalloc */
  void* p = NULL;
  CHECK_EQ_INT(cudaMalloc(&p, 1024), cudaSuccess);
  OIDNBuffer shared = oidnNewSharedBuffer(d, p, 1024);
  CHECK_EQ_INT(oidnGetBufferStorage(shared), OIDN_STORAGE_DEVICE);
  CHECK(oidnGetBufferData(shared) == p);
  oidnReleaseBuffer(shared);
  cudaFree(p);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
}

/* ATrous on shared images in cudaMalloc memory, in place (output = color),
 * asynchronously, equals the same filter run out of place from buffers. */
static void check_shared_inplace_async(OIDNDevice d)
{
  gpu_scene s;
  gpu_scene_make(&s, W, H, 7u);
  const size_t bytes = (size_t)W * H * 3 * sizeof(float);
  float* expect = malloc(bytes);
  gpu_image images[4] = {{"color", s.color, 3}, {"albedo", s.albedo, 3},
                         {"normal", s.normal, 3}, {"depth", s.depth, 1}};
  gpu_param params[1] = {{"schedule", 0, 1}};
  CHECK_EQ_INT(gpu_run_filter(d, "ATrous", W, H, images, 4, 3, params, 1, expect), OIDN_ERROR_NONE);

  void *dc = NULL, *da = NULL, *dn = NULL, *dz = NULL;
  cudaMalloc(&dc, bytes);
  cudaMalloc(&da, bytes);
  cudaMalloc(&dn, bytes);
  cudaMalloc(&dz, bytes / 3);
  cudaMemcpy(dc, s.color, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(da, s.albedo, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dn, s.normal, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dz, s.depth, bytes / 3, cudaMemcpyHostToDevice);
  OIDNFilter f = oidnNewFilter(d, "ATrous");
  oidnSetSharedFilterImage(f, "color", dc, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "albedo", da, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "normal", dn, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "depth", dz, OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", dc, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0); /* in place */
  oidnExecuteFilter(f); /* not committed yet */
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_INVALID_OPERATION);
  oidnCommitFilter(f);
  oidnSetFilterInt(f, "iterations", 4);
  oidnExecuteFilter(f); /* changed after the commit */
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_INVALID_OPERATION);
  oidnSetFilterInt(f, "iterations", 5);
  oidnCommitFilter(f);
  oidnExecuteFilterAsync(f);
  oidnSyncDevice(d);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  float* got = malloc(bytes);
  cudaMemcpy(got, dc, bytes, cudaMemcpyDeviceToHost);
  CHECK_EQ_INT(memcmp(got, expect, bytes), 0);

  /* a host pointer the GPU cannot reach */
  if (!oidnGetDeviceBool(d, "systemMemorySupported")) {
    oidnSetSharedFilterImage(f, "color", s.color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_INVALID_ARGUMENT);
  }
  oidnReleaseFilter(f);
  cudaFree(dc);
  cudaFree(da);
  cudaFree(dn);
  cudaFree(dz);
  free(got);
  free(expect);
  gpu_scene_free(&s);
}

static bool cancel_after_first(void* user, double done)
{
  int* calls = user;
  ++*calls;
  return done <= 0.0;
}

/* Half formats, strides, a user stream, and cancellation that leaves the
 * output untouched. */
static void check_formats_stream_cancel(void)
{
  cudaStream_t stream = NULL;
  CHECK_EQ_INT(cudaStreamCreate(&stream), cudaSuccess);
  const int id = 0;
  OIDNDevice d = oidnNewCUDADevice(&id, &stream, 1);
  CHECK(d != NULL);
  oidnCommitDevice(d);
  /* RGBA half colour with a padded pixel stride (8 halves per pixel) */
  const size_t pixel = 16, bytes = (size_t)W * H * pixel;
  unsigned short* host = calloc(1, bytes);
  for (size_t i = 0; i < (size_t)W * H; ++i)
    for (int c = 0; c < 4; ++c)
      host[i * 8 + (size_t)c] = 0x3800; /* 0.5 */
  OIDNBuffer b = oidnNewBufferWithStorage(d, bytes, OIDN_STORAGE_DEVICE);
  OIDNBuffer o = oidnNewBufferWithStorage(d, bytes, OIDN_STORAGE_DEVICE);
  oidnWriteBuffer(b, 0, bytes, host);
  oidnWriteBuffer(o, 0, bytes, host);
  OIDNFilter f = oidnNewFilter(d, "ATrous");
  oidnSetFilterImage(f, "color", b, OIDN_FORMAT_HALF4, W, H, 0, pixel, 0);
  oidnSetFilterImage(f, "output", o, OIDN_FORMAT_HALF4, W, H, 0, pixel, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  unsigned short* back = malloc(bytes);
  oidnReadBuffer(o, 0, bytes, back);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  int same = 1;
  for (size_t i = 0; i < (size_t)W * H; ++i)
    for (int c = 0; c < 4; ++c)
      same &= back[i * 8 + (size_t)c] == 0x3800; /* a constant image stays constant */
  CHECK(same);
  /* cancellation after the first report: error, output not written */
  for (size_t i = 0; i < (size_t)W * H; ++i)
    host[i * 8] = 0x3c00; /* 1.0 in the input's red */
  oidnWriteBuffer(b, 0, bytes, host);
  int calls = 0;
  oidnSetFilterProgressMonitorFunction(f, cancel_after_first, &calls);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_CANCELLED);
  CHECK(calls >= 2);
  oidnReadBuffer(o, 0, bytes, back);
  CHECK_EQ_INT(back[0], 0x3800);
  /* cancelled asynchronously: parked, not raised by the call or by a
   * release, raised by the next synchronising call (a blocking copy here,
   * then oidnSyncDevice) */
  calls = 0;
  oidnExecuteFilterAsync(f);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  oidnReadBuffer(o, 0, bytes, back);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_CANCELLED);
  CHECK_EQ_INT(back[0], 0x3800);
  calls = 0;
  oidnExecuteFilterAsync(f);
  OIDNBuffer gone = oidnNewBuffer(d, 64);
  oidnReleaseBuffer(gone);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  oidnSyncDevice(d);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_CANCELLED);
  oidnSyncDevice(d); /* raised once */
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  oidnReleaseFilter(f);
  oidnReleaseBuffer(b);
  oidnReleaseBuffer(o);
  oidnReleaseDevice(d);
  cudaStreamDestroy(stream);
  free(host);
  free(back);
}

/* An ATrous filter of a scene's colour in device buffers (*color, *out). */
static OIDNFilter atrous_on_buffers(OIDNDevice d, const gpu_scene* s, OIDNBuffer* color,
                                    OIDNBuffer* out)
{
  const size_t bytes = (size_t)s->width * (size_t)s->height * 3 * sizeof(float);
  *color = oidnNewBufferWithStorage(d, bytes, OIDN_STORAGE_DEVICE);
  *out = oidnNewBufferWithStorage(d, bytes, OIDN_STORAGE_DEVICE);
  oidnWriteBuffer(*color, 0, bytes, s->color);
  OIDNFilter f = oidnNewFilter(d, "ATrous");
  oidnSetFilterImage(f, "color", *color, OIDN_FORMAT_FLOAT3, (size_t)s->width,
                     (size_t)s->height, 0, 0, 0);
  oidnSetFilterImage(f, "output", *out, OIDN_FORMAT_FLOAT3, (size_t)s->width,
                     (size_t)s->height, 0, 0, 0);
  oidnCommitFilter(f);
  return f;
}

/* The output buffer's floats (new memory). */
static float* read_floats(OIDNBuffer b)
{
  const size_t bytes = oidnGetBufferSize(b);
  float* v = malloc(bytes);
  oidnReadBuffer(b, 0, bytes, v);
  return v;
}

/* -- external memory --------------------------------------------------------
 *
 * What a Vulkan renderer hands OIDN: device memory exported as an opaque
 * file descriptor.  The CUDA driver's own memory API exports the same kind
 * (cuMemCreate with a POSIX file descriptor handle type,
 * cuMemExportToShareableHandle), so the test needs no Vulkan.  The driver
 * functions come through the runtime (cudaGetDriverEntryPointByVersion),
 * so the test links no libcuda.  The test maps the memory only through
 * lull's imports (compute-sanitizer's initcheck breaks the context on a
 * copy from a mapping of the driver's memory API). */
typedef struct exported_memory
{
  CUmemGenericAllocationHandle handle;
  size_t size; /* a multiple of the allocation granularity */
  int fd;
} exported_memory;

typedef struct vmm_api
{
  CUresult (*granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags);
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                     unsigned long long);
  CUresult (*export_handle)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                            unsigned long long);
  CUresult (*release)(CUmemGenericAllocationHandle);
} vmm_api;

static int vmm_get(const char* name, void** fn)
{
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  return cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &found) ==
             cudaSuccess &&
         found == cudaDriverEntryPointSuccess;
}

static int vmm_load(vmm_api* api)
{
  return vmm_get("cuMemGetAllocationGranularity", (void**)&api->granularity) &&
         vmm_get("cuMemCreate", (void**)&api->create) &&
         vmm_get("cuMemExportToShareableHandle", (void**)&api->export_handle) &&
         vmm_get("cuMemRelease", (void**)&api->release);
}

/* A new descriptor of the memory object (-1 on failure). */
static int export_fd(const vmm_api* api, const exported_memory* m)
{
  int fd = -1;
  if (api->export_handle(&fd, m->handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) !=
      CUDA_SUCCESS)
    return -1;
  return fd;
}

/* GPU 0 memory of at least `bytes`, exported as a file descriptor; 0 on
 * failure. */
static int export_memory(const vmm_api* api, size_t bytes, exported_memory* m)
{
  memset(m, 0, sizeof *m);
  m->fd = -1;
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t granularity = 0;
  if (api->granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS)
    return 0;
  m->size = (bytes + granularity - 1) / granularity * granularity;
  if (api->create(&m->handle, m->size, &prop, 0) != CUDA_SUCCESS)
    return 0;
  m->fd = export_fd(api, m);
  return m->fd >= 0;
}

static int fd_open(int fd)
{
  return fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

/* The process's open descriptors (the entries of /proc/self/fd; -1 when
 * it cannot be read): a failed import that leaked the duplicate it made
 * would leave one more. */
static int open_fds(void)
{
  DIR* dir = opendir("/proc/self/fd");
  if (!dir)
    return -1;
  int n = 0;
  while (readdir(dir))
    ++n;
  closedir(dir);
  return n;
}

/* A filter's images in memory imported from a file descriptor: the
 * filter reads and writes the exporter's memory (a second import of the
 * same object sees the output), with the result of ordinary device
 * buffers, bit for bit; bad descriptors, kinds and sizes give OIDN's
 * errors and leave the descriptor to the caller, a good one is taken
 * over. */
static void check_external_memory(OIDNDevice d)
{
  CHECK_EQ_INT(oidnGetDeviceInt(d, "externalMemoryTypes"), OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD);
  vmm_api api;
  const int loaded = vmm_load(&api);
  CHECK(loaded); /* the driver's memory API */
  if (!loaded)
    return;
  gpu_scene s;
  gpu_scene_make(&s, W, H, 31u);
  const size_t image = (size_t)W * H * 3 * sizeof(float);
  OIDNBuffer color, out;
  OIDNFilter plain = atrous_on_buffers(d, &s, &color, &out);
  oidnExecuteFilter(plain);
  float* expect = read_floats(out);

  exported_memory m;
  CHECK(export_memory(&api, 2 * image, &m));
  const char* message = NULL;
  const int fds_before = open_fds();
  /* kinds the device does not import, or more than one */
  const OIDNExternalMemoryTypeFlag bad_kinds[3] = {
      OIDN_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF, OIDN_EXTERNAL_MEMORY_TYPE_FLAG_NONE,
      (OIDNExternalMemoryTypeFlag)(OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD |
                                   OIDN_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF)};
  for (int k = 0; k < 3; ++k) {
    CHECK(oidnNewSharedBufferFromFD(d, bad_kinds[k], m.fd, m.size) == NULL);
    CHECK_EQ_INT(oidnGetDeviceError(d, &message), OIDN_ERROR_INVALID_ARGUMENT);
    CHECK(message && strstr(message, "external memory type not supported"));
  }
  const OIDNExternalMemoryTypeFlag fd_kind = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD;
  CHECK(oidnNewSharedBufferFromFD(d, fd_kind, m.fd, 0) == NULL);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(oidnNewSharedBufferFromFD(d, fd_kind, -1, m.size) == NULL);
  CHECK_EQ_INT(oidnGetDeviceError(d, &message), OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(message && strstr(message, "not open"));
  /* more than the memory object holds, and a descriptor of no memory */
  CHECK(oidnNewSharedBufferFromFD(d, fd_kind, m.fd, m.size + ((size_t)1 << 21)) == NULL);
  const int too_large = oidnGetDeviceError(d, &message);
  printf("external memory: an import past the object's end: %d (%s)\n", too_large,
         message ? message : "");
  CHECK_EQ_INT(too_large, OIDN_ERROR_INVALID_ARGUMENT);
  const int null_fd = open("/dev/null", O_RDWR);
  CHECK(null_fd >= 0);
  CHECK(oidnNewSharedBufferFromFD(d, fd_kind, null_fd, m.size) == NULL);
  const int not_memory = oidnGetDeviceError(d, &message);
  printf("external memory: /dev/null: %d (%s)\n", not_memory, message ? message : "");
  CHECK_EQ_INT(not_memory, OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(fd_open(null_fd)); /* a failed import leaves the descriptor alone */
  close(null_fd);
  CHECK(fd_open(m.fd));
  CHECK_EQ_INT(open_fds(), fds_before); /* no duplicate left behind */
  /* not on a device before its commit */
  OIDNDevice uncommitted = oidnNewDevice(OIDN_DEVICE_TYPE_CUDA);
  CHECK(oidnNewSharedBufferFromFD(uncommitted, fd_kind, m.fd, m.size) == NULL);
  CHECK_EQ_INT(oidnGetDeviceError(uncommitted, NULL), OIDN_ERROR_INVALID_OPERATION);
  oidnReleaseDevice(uncommitted);

  /* the import: colour and output in one imported buffer, the output after
   * a gap (byteOffset) */
  OIDNBuffer imported = oidnNewSharedBufferFromFD(d, fd_kind, m.fd, m.size);
  CHECK(imported != NULL);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  if (imported) {
    CHECK(!fd_open(m.fd)); /* taken over, as CUDA's import takes it */
    m.fd = -1;
    CHECK_EQ_INT(oidnGetBufferStorage(imported), OIDN_STORAGE_DEVICE);
    CHECK_EQ_INT(oidnGetBufferSize(imported), m.size);
    CHECK(oidnGetBufferData(imported) != NULL);
    const size_t out_offset = m.size - image;
    oidnWriteBuffer(imported, 0, image, s.color);
    OIDNFilter f = oidnNewFilter(d, "ATrous");
    oidnSetFilterImage(f, "color", imported, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetFilterImage(f, "output", imported, OIDN_FORMAT_FLOAT3, W, H, out_offset, 0, 0);
    oidnCommitFilter(f);
    oidnExecuteFilter(f);
    CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
    float* got = malloc(image);
    float* seen = malloc(image);
    oidnReadBuffer(imported, out_offset, image, got);
    const int same = memcmp(got, expect, image) == 0;
    CHECK(same);
    printf("external memory: ATrous in imported memory %s\n",
           same ? "as in device buffers" : "DIFFERS");
    /* the filter wrote the exporter's memory object, not a copy: another
     * import of it holds the output */
    const int fd2 = export_fd(&api, &m);
    OIDNBuffer again = oidnNewSharedBufferFromFD(d, fd_kind, fd2, m.size);
    CHECK(again != NULL);
    if (again) {
      memset(seen, 0, image);
      oidnReadBuffer(again, out_offset, image, seen);
      CHECK_EQ_INT(memcmp(seen, expect, image), 0);
      oidnReleaseBuffer(again);
    } else if (fd2 >= 0) {
      close(fd2);
    }
    oidnReleaseFilter(f);        /* the filter's reference to the buffer ... */
    oidnReleaseBuffer(imported); /* ... and the last one: the import goes */
    free(got);
    free(seen);
  }
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  if (m.fd >= 0)
    close(m.fd);
  if (m.handle)
    api.release(m.handle);
  oidnReleaseFilter(plain);
  oidnReleaseBuffer(color);
  oidnReleaseBuffer(out);
  free(expect);
  gpu_scene_free(&s);
}

typedef struct nested_call
{
  OIDNFilter inner;
  int calls;
} nested_call;

static bool run_inner_once(void* user, double done)
{
  nested_call* n = user;
  (void)done;
  if (n->calls++ == 1) /* within the outer run, between its levels */
    oidnExecuteFilter(n->inner);
  return true;
}

/* A progress monitor that runs another filter of the same device (which
 * the README allows): both results as from runs of their own.  All runs
 * of a device had carved one scratch block, so the inner run overwrote the
 * outer one's levels, and an inner run needing more freed the block the
 * outer run went on using. */
static void check_nested_runs(OIDNDevice d)
{
  gpu_scene small, large;
  gpu_scene_make(&small, 160, 120, 21u);
  gpu_scene_make(&large, 512, 384, 22u); /* more scratch than the outer run holds */
  OIDNBuffer sc, so, lc, lo;
  OIDNFilter outer = atrous_on_buffers(d, &small, &sc, &so);
  OIDNFilter inner = atrous_on_buffers(d, &large, &lc, &lo);
  oidnExecuteFilter(inner);
  float* inner_alone = read_floats(lo);
  oidnExecuteFilter(outer);
  float* outer_alone = read_floats(so);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  /* a fresh device, so that the outer run holds the smaller block */
  const size_t small_bytes = (size_t)small.width * (size_t)small.height * 3 * sizeof(float);
  const size_t large_bytes = (size_t)large.width * (size_t)large.height * 3 * sizeof(float);
  OIDNDevice fresh = oidnNewDevice(OIDN_DEVICE_TYPE_CUDA);
  oidnCommitDevice(fresh);
  OIDNBuffer fsc, fso, flc, flo;
  OIDNFilter f_outer = atrous_on_buffers(fresh, &small, &fsc, &fso);
  OIDNFilter f_inner = atrous_on_buffers(fresh, &large, &flc, &flo);
  nested_call n = {f_inner, 0};
  oidnSetFilterProgressMonitorFunction(f_outer, run_inner_once, &n);
  oidnExecuteFilter(f_outer);
  CHECK_EQ_INT(oidnGetDeviceError(fresh, NULL), OIDN_ERROR_NONE);
  CHECK(n.calls > 2);
  float* outer_nested = read_floats(fso);
  float* inner_nested = read_floats(flo);
  const int outer_same = memcmp(outer_nested, outer_alone, small_bytes) == 0;
  const int inner_same = memcmp(inner_nested, inner_alone, large_bytes) == 0;
  printf("nested runs: outer %s, inner %s\n", outer_same ? "as alone" : "DIFFERS",
         inner_same ? "as alone" : "DIFFERS");
  CHECK(outer_same);
  CHECK(inner_same);
  free(outer_nested);
  free(inner_nested);
  free(outer_alone);
  free(inner_alone);
  OIDNBuffer buffers[] = {sc, so, lc, lo, fsc, fso, flc, flo};
  for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; ++i)
    oidnReleaseBuffer(buffers[i]);
  oidnReleaseFilter(outer);
  oidnReleaseFilter(inner);
  oidnReleaseFilter(f_outer);
  oidnReleaseFilter(f_inner);
  oidnReleaseDevice(fresh);
  gpu_scene_free(&small);
  gpu_scene_free(&large);
}

typedef struct cancel_at
{
  int at, calls;
  double done; /* the report that cancelled */
} cancel_at;

static bool cancel_at_call(void* user, double done)
{
  cancel_at* c = user;
  if (++c->calls < c->at)
    return true;
  c->done = done;
  return false;
}

/* A blocking execution that is cancelled returns with none of its work
 * left on the stream (a tile's copy into the output and the next tile's
 * kernels had still been queued, so the output changed after the call). */
static void check_cancel_leaves_nothing_queued(void)
{
  cudaStream_t stream = NULL;
  CHECK_EQ_INT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const int id = 0;
  OIDNDevice d = oidnNewCUDADevice(&id, &stream, 1);
  oidnCommitDevice(d);
  gpu_scene s;
  gpu_scene_make(&s, 1024, 768, 23u);
  OIDNBuffer c, o;
  OIDNFilter f = atrous_on_buffers(d, &s, &c, &o);
  for (int tiled = 0; tiled < 2; ++tiled) {
    oidnSetFilterInt(f, "maxMemoryMB", tiled ? 12 : -1);
    for (int at = 1; at <= 6; ++at) {
      cancel_at cancel = {at, 0, -1.0};
      oidnSetFilterProgressMonitorFunction(f, cancel_at_call, &cancel);
      oidnCommitFilter(f);
      oidnExecuteFilter(f);
      const int queued = cudaStreamQuery(stream) != cudaSuccess;
      const OIDNError e = oidnGetDeviceError(d, NULL);
      /* a cancel at the last report (1) or none (fewer reports) is too
       * late: the run completed, as OIDN's does */
      const OIDNError want = cancel.done >= 0.0 && cancel.done < 1.0 ? OIDN_ERROR_CANCELLED
                                                                     : OIDN_ERROR_NONE;
      if (queued || e != want)
        printf("cancel at report %d (%s): %s, error %d\n", at, tiled ? "tiled" : "untiled",
               queued ? "work still queued" : "stream idle", (int)e);
      CHECK(!queued);
      CHECK_EQ_INT(e, want);
    }
  }
  oidnReleaseFilter(f);
  oidnReleaseBuffer(c);
  oidnReleaseBuffer(o);
  oidnReleaseDevice(d);
  cudaStreamDestroy(stream);
  gpu_scene_free(&s);
}

/* An application capturing its stream into a graph of its own gets the
 * filter's kernels in it (the library then launches them one by one
 * instead of its cached graph, cuda/atrous_graph.cu): replaying that graph
 * on new input gives what a plain execution gives. */
static void check_application_capture(void)
{
  cudaStream_t stream = NULL;
  CHECK_EQ_INT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const int id = 0;
  OIDNDevice d = oidnNewCUDADevice(&id, &stream, 1);
  oidnCommitDevice(d);
  const size_t bytes = (size_t)W * H * 3 * sizeof(float);
  float* host = malloc(bytes);
  float* want = malloc(bytes);
  float* got = malloc(bytes);
  unsigned seed = 5;
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    host[i] = lull_test_random(&seed);
  OIDNBuffer b = oidnNewBufferWithStorage(d, bytes, OIDN_STORAGE_DEVICE);
  OIDNBuffer o = oidnNewBufferWithStorage(d, bytes, OIDN_STORAGE_DEVICE);
  OIDNFilter f = oidnNewFilter(d, "ATrous");
  oidnSetFilterImage(f, "color", b, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetFilterImage(f, "output", o, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(f);
  oidnWriteBuffer(b, 0, bytes, host);
  oidnExecuteFilter(f); /* plain: also sizes the scratch memory first */
  oidnReadBuffer(o, 0, bytes, want);
  /* capture an asynchronous execution, then replay it on other input */
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  CHECK_EQ_INT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  oidnExecuteFilterAsync(f);
  CHECK_EQ_INT(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  CHECK_EQ_INT(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (size_t i = 0; i < (size_t)W * H * 3; ++i)
    host[i] = 1.0f - host[i];
  oidnWriteBuffer(b, 0, bytes, host);
  oidnExecuteFilter(f);
  oidnReadBuffer(o, 0, bytes, want);
  memset(got, 0, bytes);
  oidnWriteBuffer(o, 0, bytes, got);
  CHECK_EQ_INT(cudaGraphLaunch(exec, stream), cudaSuccess);
  CHECK_EQ_INT(cudaStreamSynchronize(stream), cudaSuccess);
  oidnReadBuffer(o, 0, bytes, got);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  CHECK_EQ_INT(memcmp(got, want, bytes), 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  oidnReleaseFilter(f);
  oidnReleaseBuffer(b);
  oidnReleaseBuffer(o);
  oidnReleaseDevice(d);
  cudaStreamDestroy(stream);
  free(host);
  free(want);
  free(got);
}

/* External semaphores (OIDN 2.5): the kinds CUDA imports from a file
 * descriptor on Linux, OIDN's errors for what cannot be imported, with the
 * descriptor left to the caller and no duplicate leaked.  (A semaphore to
 * import needs Vulkan, which the test machine lacks: the import itself,
 * and signalling and waiting on it, are not run here.) */
static void check_external_semaphores(OIDNDevice d)
{
  const int kinds = OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_FD |
                    OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_TIMELINE_SEMAPHORE_FD;
  CHECK_EQ_INT(oidnGetDeviceInt(d, "externalSemaphoreTypes"), kinds);
  const char* message = NULL;
  const int fds_before = open_fds();
  /* kinds it does not import, or two at once */
  const int bad_kinds[3] = {OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_WIN32,
                            OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_NONE, kinds};
  for (int k = 0; k < 3; ++k) {
    CHECK(oidnNewSharedSemaphoreFromFD(d, bad_kinds[k], 0) == NULL);
    CHECK_EQ_INT(oidnGetDeviceError(d, &message), OIDN_ERROR_INVALID_ARGUMENT);
    CHECK(message && strstr(message, "external semaphore type not supported"));
  }
  /* a closed descriptor; one of no semaphore */
  for (int k = 0; k < 2; ++k) {
    const int kind = k ? OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_TIMELINE_SEMAPHORE_FD
                       : OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_FD;
    CHECK(oidnNewSharedSemaphoreFromFD(d, kind, -1) == NULL);
    CHECK_EQ_INT(oidnGetDeviceError(d, &message), OIDN_ERROR_INVALID_ARGUMENT);
    CHECK(message && strstr(message, "not open"));
    const int null_fd = open("/dev/null", O_RDWR);
    CHECK(null_fd >= 0);
    CHECK(oidnNewSharedSemaphoreFromFD(d, kind, null_fd) == NULL);
    const int code = oidnGetDeviceError(d, &message);
    printf("external semaphore (kind %d): /dev/null: %d (%s)\n", kind, code,
           message ? message : "");
    CHECK_EQ_INT(code, OIDN_ERROR_INVALID_ARGUMENT);
    CHECK(fd_open(null_fd)); /* a failed import leaves the descriptor alone */
    close(null_fd);
  }
  CHECK_EQ_INT(open_fds(), fds_before); /* no duplicate left behind */
  CHECK(oidnNewSharedSemaphoreFromWin32Handle(d, OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_WIN32,
                                              (void*)d, NULL) == NULL);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_INVALID_ARGUMENT);
  /* signal and wait: nothing to do is fine; the list's errors */
  oidnSignalSemaphoresAsync(d, NULL, NULL, 0);
  oidnWaitSemaphoresAsync(d, NULL, NULL, NULL, 0);
  CHECK_EQ_INT(oidnGetDeviceError(d, NULL), OIDN_ERROR_NONE);
  oidnSignalSemaphoresAsync(d, NULL, NULL, -1);
  CHECK_EQ_INT(oidnGetDeviceError(d, &message), OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(message && strstr(message, "negative"));
  oidnWaitSemaphoresAsync(d, NULL, NULL, NULL, 1);
  CHECK_EQ_INT(oidnGetDeviceError(d, &message), OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(message && strstr(message, "semaphores pointer is null"));
  OIDNSemaphore list[1] = {NULL};
  const uint64_t value = 1;
  oidnSignalSemaphoresAsync(d, list, &value, 1);
  CHECK_EQ_INT(oidnGetDeviceError(d, &message), OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(message && strstr(message, "semaphore is null"));
  list[0] = (OIDNSemaphore)(void*)d; /* not a semaphore */
  oidnWaitSemaphoresAsync(d, list, &value, NULL, 1);
  CHECK_EQ_INT(oidnGetDeviceError(d, &message), OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(message && strstr(message, "invalid semaphore handle"));
}

int main(void)
{
  check_physical();
  OIDNDevice d = oidnNewDevice(OIDN_DEVICE_TYPE_CUDA);
  CHECK(d != NULL);
  if (!d)
    return lull_test_result("cuda_api");
  oidnCommitDevice(d);
  CHECK_EQ_INT(oidnGetDeviceInt(d, "type"), OIDN_DEVICE_TYPE_CUDA);
  check_buffers(d);
  check_shared_inplace_async(d);
  check_formats_stream_cancel();
  check_application_capture();
  check_nested_runs(d);
  check_external_memory(d);
  check_external_semaphores(d);
  check_cancel_leaves_nothing_queued();
  oidnReleaseDevice(d);
  return lull_test_result("cuda_api");
}
