/* The CUDA backend: memory of every OIDN storage kind, copies, the stream,
 * synchronisation and asynchronous errors; the filters live in their own
 * files and run on the backend's stream.
 *
 * OIDN's rules implemented here (oidn-api-and-users.md §2.6): storage
 * UNDEFINED means managed memory when the GPU supports it, else pinned host
 * memory; HOST is pinned host memory mapped into the device's address
 * space; a user pointer is usable when CUDA reports it as device, managed
 * or pinned memory of this GPU, or any host memory when the GPU reads
 * pageable memory (HMM/ATS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#endif

#include "atrous_graph.h"
#include "backend_cuda.h"
#include "gradient_domain_cuda.h"
#include "poisson_cuda.h"
#include "regression_cuda.h"

lull_status lull_cuda_status(cudaError_t code)
{
  /* OIDN's CUDA device maps the same three codes to unsupported hardware:
   * no device, a launch this GPU cannot run (e.g. more shared memory or
   * registers a block than it has), a feature it lacks */
  switch (code) {
    case cudaSuccess: return LULL_OK;
    case cudaErrorMemoryAllocation: return LULL_ERROR_OUT_OF_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInvalidConfiguration:
    case cudaErrorNotSupported: return LULL_ERROR_UNSUPPORTED_HARDWARE;
    default: return LULL_ERROR_UNKNOWN;
  }
}

lull_status lull_cuda_fail(lull_error* err, cudaError_t code, const char* what)
{
  const lull_status status = lull_cuda_status(code);
  return lull_fail(err, status == LULL_OK ? LULL_ERROR_UNKNOWN : status, "%s: %s", what,
                   cudaGetErrorString(code));
}

lull_status lull_cuda_enter(const lull_cuda_backend* cuda, lull_cuda_scope* scope,
                            lull_error* err)
{
  scope->changed = 0;
  scope->previous = 0;
  cudaError_t code = cudaGetDevice(&scope->previous);
  if (code == cudaSuccess && scope->previous != cuda->device_id) {
    code = cudaSetDevice(cuda->device_id);
    scope->changed = code == cudaSuccess;
  }
  return code == cudaSuccess ? LULL_OK : lull_cuda_fail(err, code, "cannot select the CUDA device");
}

void lull_cuda_leave(const lull_cuda_scope* scope)
{
  if (scope->changed)
    (void)cudaSetDevice(scope->previous);
}

lull_status lull_cuda_max_shared_memory(const lull_cuda_backend* cuda, size_t* bytes,
                                        lull_error* err)
{
  int max_smem = 0;
  const cudaError_t code =
      cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, cuda->device_id);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return lull_cuda_fail(err, code, "cannot query the CUDA device");
  }
  *bytes = (size_t)max_smem;
  return LULL_OK;
}

void* lull_cuda_scratch(lull_cuda_backend* cuda, size_t bytes, lull_error* err)
{
  if (bytes <= cuda->scratch_bytes && cuda->scratch)
    return cuda->scratch;
  /* queued work may still use the old block */
  cudaError_t code = cudaStreamSynchronize(cuda->stream);
  if (code != cudaSuccess) {
    lull_cuda_fail(err, code, "CUDA error in earlier work");
    return NULL;
  }
  if (cuda->scratch)
    (void)cudaFree(cuda->scratch);
  cuda->scratch = NULL;
  cuda->scratch_bytes = 0;
  code = cudaMalloc(&cuda->scratch, bytes);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    cuda->scratch = NULL;
    lull_cuda_fail(err, code, "cannot allocate filter memory");
    return NULL;
  }
  cuda->scratch_bytes = bytes;
  return cuda->scratch;
}

static lull_cuda_backend* as_cuda(lull_backend* backend)
{
  return (lull_cuda_backend*)backend;
}

static void cuda_destroy(lull_backend* backend)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  lull_cuda_scope scope;
  lull_error ignored;
  if (lull_cuda_enter(cuda, &scope, &ignored) == LULL_OK) {
    (void)cudaStreamSynchronize(cuda->stream);
    lull_cuda_atrous_graphs_release(cuda->atrous_graphs);
    if (cuda->scratch)
      (void)cudaFree(cuda->scratch);
    lull_cuda_leave(&scope);
  }
  free(cuda);
}

static lull_status cuda_alloc(lull_backend* backend, size_t bytes, int storage, void** ptr,
                              int* actual_storage, lull_error* err)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  lull_cuda_scope scope;
  lull_status status = lull_cuda_enter(cuda, &scope, err);
  if (status != LULL_OK)
    return status;
  if (storage == LULL_STORAGE_UNDEFINED)
    storage = backend->managed_memory ? LULL_STORAGE_MANAGED : LULL_STORAGE_HOST;
  /* at least one byte, so an empty buffer still has a unique address */
  const size_t n = bytes ? bytes : 1;
  cudaError_t code = cudaSuccess;
  *ptr = NULL;
  if (storage == LULL_STORAGE_DEVICE) {
    code = cudaMalloc(ptr, n);
  } else if (storage == LULL_STORAGE_HOST) {
    code = cudaHostAlloc(ptr, n, cudaHostAllocMapped | cudaHostAllocPortable);
  } else {
    /* Managed memory can be oversubscribed, and a program that touches far
     * more than the GPU holds can stall it: refuse what cannot fit. */
    size_t free_bytes = 0, total_bytes = 0;
    code = cudaMemGetInfo(&free_bytes, &total_bytes);
    if (code == cudaSuccess && n > total_bytes)
      code = cudaErrorMemoryAllocation;
    if (code == cudaSuccess)
      code = cudaMallocManaged(ptr, n, cudaMemAttachGlobal);
  }
  lull_cuda_leave(&scope);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    *ptr = NULL;
    return lull_cuda_fail(err, code, "cannot allocate the buffer");
  }
  *actual_storage = storage;
  return LULL_OK;
}

static void cuda_free(lull_backend* backend, void* ptr, int storage)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  lull_cuda_scope scope;
  lull_error ignored;
  if (!ptr || lull_cuda_enter(cuda, &scope, &ignored) != LULL_OK)
    return;
  if (storage == LULL_STORAGE_HOST)
    (void)cudaFreeHost(ptr);
  else
    (void)cudaFree(ptr);
  lull_cuda_leave(&scope);
}

#if defined(__linux__)
/* OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD: the only kind the CUDA driver
 * imports from a file descriptor on Linux (Vulkan's
 * VK_KHR_external_memory_fd, CUDA's own cuMemExportToShareableHandle) */
enum { CUDA_EXTERNAL_MEMORY_TYPES = 1 };

/* Imports the memory object fd refers to and maps `bytes` of it from its
 * start, as OIDN's CUDA device does.  CUDA takes over the descriptor it
 * imports, and a failure after the import (the mapping) would already have
 * consumed it, so a duplicate is imported: on any failure the caller's fd
 * is untouched, on success it is closed here, which is what the caller
 * sees of CUDA's rule (the import owns the memory object from then on).
 * Errors the driver gives for the descriptor or the size are the
 * caller's: INVALID_ARGUMENT with CUDA's message (other errors keep
 * their codes).  Vulkan's dedicated allocations (which CUDA imports only
 * with cudaExternalMemoryDedicated) are not told apart, as OIDN's API
 * (2.5) has no flag for them. */
/* The duplicate of fd an import hands to CUDA (what: "memory",
 * "semaphore", for the messages): a descriptor that is not open is the
 * caller's error, running out of descriptors (EMFILE) is out of memory. */
static lull_status import_duplicate(int fd, const char* what, int* copy, lull_error* err)
{
  *copy = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (*copy < 0 && fd >= 0 && errno != EBADF) /* EMFILE: the process's descriptor limit */
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY,
                     "cannot import the external %s: no file descriptor left (%s)", what,
                     strerror(errno));
  if (*copy < 0)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT,
                     "cannot import the external %s: file descriptor %d is not open", what, fd);
  return LULL_OK;
}

/* A failed import: what the driver says of a descriptor or size it cannot
 * import (a size past the object: invalid value; a descriptor of no such
 * object, such as /dev/null: unknown) is the caller's error; anything else
 * (a sticky error of earlier work) keeps lull_cuda_status's code. */
static lull_status import_failure(cudaError_t code, const char* what, lull_error* err)
{
  (void)cudaGetLastError();
  const int callers = code == cudaErrorInvalidValue || code == cudaErrorInvalidResourceHandle ||
                      code == cudaErrorOperatingSystem || code == cudaErrorUnknown;
  return lull_fail(err, callers ? LULL_ERROR_INVALID_ARGUMENT : lull_cuda_status(code),
                   "cannot import the external %s: %s", what, cudaGetErrorString(code));
}

static lull_status cuda_import_fd(lull_backend* backend, int fd, size_t bytes, void** ptr,
                                  void** handle, lull_error* err)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  *ptr = NULL;
  *handle = NULL;
  int copy = -1;
  lull_status status = import_duplicate(fd, "memory", &copy, err);
  if (status != LULL_OK)
    return status;
  lull_cuda_scope scope;
  status = lull_cuda_enter(cuda, &scope, err);
  if (status != LULL_OK) {
    (void)close(copy);
    return status;
  }
  cudaExternalMemoryHandleDesc desc;
  memset(&desc, 0, sizeof desc);
  desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
  desc.handle.fd = copy;
  desc.size = bytes;
  cudaExternalMemory_t memory = NULL;
  cudaError_t code = cudaImportExternalMemory(&memory, &desc);
  void* mapped = NULL;
  if (code != cudaSuccess) {
    (void)close(copy); /* not taken: CUDA owns a descriptor only once imported */
  } else {
    cudaExternalMemoryBufferDesc buffer;
    memset(&buffer, 0, sizeof buffer);
    buffer.offset = 0;
    buffer.size = bytes;
    code = cudaExternalMemoryGetMappedBuffer(&mapped, memory, &buffer);
    if (code != cudaSuccess)
      (void)cudaDestroyExternalMemory(memory); /* closes the duplicate */
  }
  lull_cuda_leave(&scope);
  if (code != cudaSuccess)
    return import_failure(code, "memory", err);
  (void)close(fd);
  *ptr = mapped;
  *handle = memory;
  return LULL_OK;
}

/* The mapping first, then the memory object (CUDA's order). */
static void cuda_release_import(lull_backend* backend, void* ptr, void* handle)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  lull_cuda_scope scope;
  lull_error ignored;
  if (lull_cuda_enter(cuda, &scope, &ignored) != LULL_OK)
    return; /* the GPU is gone: nothing left to free it with (as cuda_free) */
  if (ptr)
    (void)cudaFree(ptr);
  if (handle)
    (void)cudaDestroyExternalMemory((cudaExternalMemory_t)handle);
  lull_cuda_leave(&scope);
}

/* OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_FD and _TIMELINE_SEMAPHORE_FD
 * (oidn.h): the kinds the CUDA driver imports from a file descriptor on
 * Linux (Vulkan's VK_KHR_external_semaphore_fd, binary and timeline) */
enum
{
  SEMAPHORE_OPAQUE_FD = 1 << 0,
  SEMAPHORE_TIMELINE_FD = 1 << 7,
  CUDA_EXTERNAL_SEMAPHORE_TYPES = SEMAPHORE_OPAQUE_FD | SEMAPHORE_TIMELINE_FD,
};

/* Imports the semaphore fd refers to, with cuda_import_fd's ownership rule
 * (a duplicate is imported; the caller's fd is closed on success only) and
 * errors. */
static lull_status cuda_import_semaphore_fd(lull_backend* backend, int type, int fd,
                                            void** handle, lull_error* err)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  *handle = NULL;
  int copy = -1;
  lull_status status = import_duplicate(fd, "semaphore", &copy, err);
  if (status != LULL_OK)
    return status;
  lull_cuda_scope scope;
  status = lull_cuda_enter(cuda, &scope, err);
  if (status != LULL_OK) {
    (void)close(copy);
    return status;
  }
  cudaExternalSemaphoreHandleDesc desc;
  memset(&desc, 0, sizeof desc);
  desc.type = type == SEMAPHORE_TIMELINE_FD ? cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd
                                            : cudaExternalSemaphoreHandleTypeOpaqueFd;
  desc.handle.fd = copy;
  cudaExternalSemaphore_t semaphore = NULL;
  const cudaError_t code = cudaImportExternalSemaphore(&semaphore, &desc);
  lull_cuda_leave(&scope);
  if (code != cudaSuccess) {
    (void)close(copy); /* not taken: CUDA owns a descriptor only once imported */
    return import_failure(code, "semaphore", err);
  }
  (void)close(fd);
  *handle = semaphore;
  return LULL_OK;
}

static void cuda_release_semaphore(lull_backend* backend, void* handle)
{
  lull_cuda_scope scope;
  lull_error ignored;
  if (!handle || lull_cuda_enter(as_cuda(backend), &scope, &ignored) != LULL_OK)
    return;
  (void)cudaDestroyExternalSemaphore((cudaExternalSemaphore_t)handle);
  lull_cuda_leave(&scope);
}

/* Queues a signal or a wait of n semaphores on the device's stream (a
 * timeline semaphore is set to, or waited for until it reaches, its
 * value; a binary one ignores it). */
static lull_status cuda_semaphores(lull_backend* backend, void* const* handles, const int* types,
                                   const unsigned long long* values, int n, int wait,
                                   lull_error* err)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  if (n <= 0)
    return LULL_OK;
  cudaExternalSemaphore_t* list = (cudaExternalSemaphore_t*)malloc((size_t)n * sizeof *list);
  cudaExternalSemaphoreSignalParams* signals =
      wait ? NULL
           : (cudaExternalSemaphoreSignalParams*)calloc((size_t)n, sizeof *signals);
  cudaExternalSemaphoreWaitParams* waits =
      wait ? (cudaExternalSemaphoreWaitParams*)calloc((size_t)n, sizeof *waits) : NULL;
  lull_status status = LULL_OK;
  if (!list || (!signals && !waits)) {
    status = lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  } else {
    for (int i = 0; i < n; ++i) {
      list[i] = (cudaExternalSemaphore_t)handles[i];
      const unsigned long long value = types[i] == SEMAPHORE_TIMELINE_FD ? values[i] : 0;
      if (wait)
        waits[i].params.fence.value = value;
      else
        signals[i].params.fence.value = value;
    }
    lull_cuda_scope scope;
    status = lull_cuda_enter(cuda, &scope, err);
    if (status == LULL_OK) {
      const cudaError_t code =
          wait ? cudaWaitExternalSemaphoresAsync(list, waits, (unsigned)n, cuda->stream)
               : cudaSignalExternalSemaphoresAsync(list, signals, (unsigned)n, cuda->stream);
      lull_cuda_leave(&scope);
      if (code != cudaSuccess) {
        (void)cudaGetLastError();
        status = lull_cuda_fail(err, code, wait ? "cannot wait on the external semaphores"
                                                : "cannot signal the external semaphores");
      }
    }
  }
  free(list);
  free(signals);
  free(waits);
  return status;
}

static lull_status cuda_signal_semaphores(lull_backend* backend, void* const* handles,
                                          const int* types, const unsigned long long* values,
                                          int n, lull_error* err)
{
  return cuda_semaphores(backend, handles, types, values, n, 0, err);
}

static lull_status cuda_wait_semaphores(lull_backend* backend, void* const* handles,
                                        const int* types, const unsigned long long* values,
                                        int n, lull_error* err)
{
  return cuda_semaphores(backend, handles, types, values, n, 1, err);
}
#else
enum { CUDA_EXTERNAL_MEMORY_TYPES = 0, CUDA_EXTERNAL_SEMAPHORE_TYPES = 0 };
#endif

static int cuda_classify(lull_backend* backend, const void* ptr)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return LULL_STORAGE_UNDEFINED;
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice:
      return attr.device == cuda->device_id ? LULL_STORAGE_DEVICE : LULL_STORAGE_UNDEFINED;
    case cudaMemoryTypeManaged:
      return LULL_STORAGE_MANAGED;
    case cudaMemoryTypeHost:
      /* pinned memory: reachable when mapped into the device's space */
      return attr.devicePointer == ptr ? LULL_STORAGE_HOST : LULL_STORAGE_UNDEFINED;
    default:
      /* ordinary pageable memory: only with HMM/ATS */
      return backend->system_memory ? LULL_STORAGE_MANAGED : LULL_STORAGE_UNDEFINED;
  }
}

static lull_status cuda_copy(lull_backend* backend, void* dst, const void* src, size_t bytes,
                             int async, lull_error* err)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  if (bytes == 0)
    return LULL_OK;
  lull_cuda_scope scope;
  lull_status status = lull_cuda_enter(cuda, &scope, err);
  if (status != LULL_OK)
    return status;
  cudaError_t code = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cuda->stream);
  if (code == cudaSuccess && !async)
    code = cudaStreamSynchronize(cuda->stream);
  lull_cuda_leave(&scope);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return lull_cuda_fail(err, code, "CUDA copy failed");
  }
  return LULL_OK;
}

static lull_status cuda_sync(lull_backend* backend, lull_error* err)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  lull_cuda_scope scope;
  lull_status status = lull_cuda_enter(cuda, &scope, err);
  if (status != LULL_OK)
    return status;
  const cudaError_t code = cudaStreamSynchronize(cuda->stream);
  lull_cuda_leave(&scope);
  if (code != cudaSuccess)
    return lull_cuda_fail(err, code, "CUDA error in asynchronous work");
  return LULL_OK;
}

/* Runs one filter on the stream; synchronous calls wait for the GPU (the
 * handle layer decides which errors of asynchronous calls wait for a sync). */
typedef struct filter_call
{
  const lull_atrous_params* atrous_params; /* one of the filters */
  const lull_atrous_images* atrous_images;
  int schedule;
  const lull_gaussian_params* gaussian_params;
  const lull_gaussian_images* gaussian_images;
  const lull_poisson_params* poisson_params;
  const lull_poisson_images* poisson_images;
  const lull_gradient_domain_params* gd_params;
  const lull_gradient_domain_images* gd_images;
  const lull_temporal_params* temporal_params;
  const lull_temporal_images* temporal_images;
  const lull_temporal_planes* temporal_planes;
  const lull_regression_params* regression_params;
  const lull_regression_images* regression_images;
} filter_call;

static lull_status run_filter(lull_backend* backend, const filter_call* call,
                              const lull_progress* progress, int async, lull_error* err)
{
  lull_cuda_backend* cuda = as_cuda(backend);
  lull_cuda_scope scope;
  lull_status status = lull_cuda_enter(cuda, &scope, err);
  if (status != LULL_OK)
    return status;
  /* A run started from the progress monitor of another run of this device
   * (the README lets a monitor call the API) must not carve the outer
   * run's scratch, which the outer run's remaining levels still use, nor
   * free it by growing it: the nested run gets a block of its own, freed
   * when it ends, and the outer one is put back. */
  void* outer_scratch = cuda->scratch;
  const size_t outer_bytes = cuda->scratch_bytes;
  const int nested = cuda->runs > 0;
  if (nested) {
    cuda->scratch = NULL;
    cuda->scratch_bytes = 0;
  }
  ++cuda->runs;
  if (call->atrous_params)
    status = lull_cuda_atrous(cuda, call->atrous_params, call->atrous_images, call->schedule,
                              progress, err);
  else if (call->poisson_params)
    status = lull_cuda_poisson(cuda, call->poisson_params, call->poisson_images, progress, err);
  else if (call->gd_params)
    status = lull_cuda_gradient_domain(cuda, call->gd_params, call->gd_images, progress, err);
  else if (call->temporal_params)
    status = lull_cuda_temporal(cuda, call->temporal_params, call->temporal_images,
                                call->temporal_planes, err);
  else if (call->regression_params)
    status = lull_cuda_regression(cuda, call->regression_params, call->regression_images,
                                  progress, err);
  else
    status = lull_cuda_gaussian(cuda, call->gaussian_params, call->gaussian_images, progress, err);
  /* A blocking call returns with nothing of it left on the stream, also
   * when it failed or was cancelled (a tile's copy into the output, or
   * kernels reading the inputs, had still been queued: the output changed
   * after the call had said CANCELLED); a nested run's block is freed
   * below, so its kernels are waited for even when asynchronous.  The
   * wait's error is the run's unless the run already has its own. */
  if (!async || nested) {
    const cudaError_t code = cudaStreamSynchronize(cuda->stream);
    if (code != cudaSuccess && status == LULL_OK)
      status = lull_cuda_fail(err, code, "CUDA error in the filter");
    else if (code != cudaSuccess)
      (void)cudaGetLastError();
  }
  --cuda->runs;
  if (nested) {
    if (cuda->scratch)
      (void)cudaFree(cuda->scratch);
    cuda->scratch = outer_scratch;
    cuda->scratch_bytes = outer_bytes;
  }
  lull_cuda_leave(&scope);
  return status;
}

static lull_status cuda_atrous(lull_backend* backend, const lull_atrous_params* params,
                               const lull_atrous_images* images, int schedule,
                               const lull_progress* progress, int async, lull_error* err)
{
  const filter_call call = {params, images, schedule, NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL, NULL, NULL, NULL, NULL};
  return run_filter(backend, &call, progress, async, err);
}

static lull_status cuda_gaussian(lull_backend* backend, const lull_gaussian_params* params,
                                 const lull_gaussian_images* images,
                                 const lull_progress* progress, int async, lull_error* err)
{
  const filter_call call = {NULL, NULL, 0, params, images, NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL, NULL, NULL};
  return run_filter(backend, &call, progress, async, err);
}

static lull_status cuda_poisson(lull_backend* backend, const lull_poisson_params* params,
                                const lull_poisson_images* images, const lull_progress* progress,
                                int async, lull_error* err)
{
  const filter_call call = {NULL, NULL, 0, NULL, NULL, params, images, NULL, NULL, NULL, NULL,
                            NULL, NULL, NULL};
  return run_filter(backend, &call, progress, async, err);
}

static lull_status cuda_gradient_domain(lull_backend* backend,
                                        const lull_gradient_domain_params* params,
                                        const lull_gradient_domain_images* images,
                                        const lull_progress* progress, int async, lull_error* err)
{
  const filter_call call = {NULL, NULL, 0, NULL, NULL, NULL, NULL, params, images, NULL, NULL,
                            NULL, NULL, NULL};
  return run_filter(backend, &call, progress, async, err);
}

static lull_status cuda_temporal(lull_backend* backend, const lull_temporal_params* params,
                                 const lull_temporal_images* images,
                                 const lull_temporal_planes* planes, int async, lull_error* err)
{
  const filter_call call = {NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL,
                            params, images, planes, NULL, NULL};
  return run_filter(backend, &call, NULL, async, err);
}

static lull_status cuda_regression(lull_backend* backend, const lull_regression_params* params,
                                   const lull_regression_images* images,
                                   const lull_progress* progress, int async, lull_error* err)
{
  const filter_call call = {NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL, NULL, NULL, params, images};
  return run_filter(backend, &call, progress, async, err);
}

extern "C" lull_status lull_cuda_backend_create(int device_id, void* stream, lull_backend** out,
                                                lull_error* err)
{
  if (!lull_cuda_device_usable(device_id))
    return lull_cuda_device_unusable_reason(device_id, err);
  lull_cuda_backend* cuda = (lull_cuda_backend*)calloc(1, sizeof *cuda);
  if (!cuda)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  cuda->device_id = device_id;
  cuda->stream = (cudaStream_t)stream;
  int managed = 0, pageable = 0, sms = 0;
  cudaError_t code = cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, device_id);
  if (code == cudaSuccess)
    code = cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device_id);
  if (code == cudaSuccess)
    code = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_id);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    free(cuda);
    return lull_cuda_fail(err, code, "cannot query the CUDA device");
  }
  cuda->num_sms = sms;
  /* operations this backend lacks stay NULL (calloc) */
  cuda->ops.destroy = cuda_destroy;
  cuda->ops.alloc = cuda_alloc;
  cuda->ops.free = cuda_free;
  cuda->ops.classify = cuda_classify;
  cuda->ops.copy = cuda_copy;
#if defined(__linux__)
  cuda->ops.import_fd = cuda_import_fd;
  cuda->ops.release_import = cuda_release_import;
  cuda->ops.import_semaphore_fd = cuda_import_semaphore_fd;
  cuda->ops.release_semaphore = cuda_release_semaphore;
  cuda->ops.signal_semaphores = cuda_signal_semaphores;
  cuda->ops.wait_semaphores = cuda_wait_semaphores;
#endif
  cuda->ops.sync = cuda_sync;
  cuda->ops.atrous = cuda_atrous;
  cuda->ops.gaussian = cuda_gaussian;
  cuda->ops.poisson = cuda_poisson;
  cuda->ops.gradient_domain = cuda_gradient_domain;
  cuda->ops.temporal = cuda_temporal;
  cuda->ops.regression = cuda_regression;
  cuda->base.ops = &cuda->ops;
  cuda->base.device_type = 3; /* OIDN_DEVICE_TYPE_CUDA */
  cuda->base.num_threads = 0;
  cuda->base.system_memory = pageable != 0;
  cuda->base.managed_memory = managed != 0;
  cuda->base.external_memory_types = CUDA_EXTERNAL_MEMORY_TYPES;
  cuda->base.external_semaphore_types = CUDA_EXTERNAL_SEMAPHORE_TYPES;
  *out = &cuda->base;
  return LULL_OK;
}
