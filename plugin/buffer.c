/* Buffers: device memory owned by lull, or user memory wrapped without a
 * copy (shared buffers); reads and writes are bounds-checked. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "handles.h"

static void buffer_init(OIDNBuffer buffer, OIDNDevice device, void* data, size_t size,
                        int storage, int shared)
{
  buffer->magic = LULL_MAGIC_BUFFER;
  atomic_init(&buffer->refs, 1);
  buffer->device = device;
  buffer->data = data;
  buffer->size = size;
  buffer->storage = storage;
  buffer->shared = shared;
  atomic_fetch_add(&device->refs, 1);
}

static OIDNBuffer buffer_new(OIDNDevice device, void* data, size_t size, int storage, int shared)
{
  OIDNBuffer buffer = calloc(1, sizeof *buffer);
  if (buffer)
    buffer_init(buffer, device, data, size, storage, shared);
  return buffer;
}

OIDN_API OIDNBuffer oidnNewBufferWithStorage(OIDNDevice device, size_t byteSize,
                                             OIDNStorage storage)
{
  if (!lull_check_device(device))
    return NULL;
  if (storage < OIDN_STORAGE_UNDEFINED || storage > OIDN_STORAGE_MANAGED) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "invalid storage mode");
    return NULL;
  }
  lull_device_lock(device);
  if (!lull_device_ready(device)) {
    lull_device_unlock(device);
    return NULL;
  }
  /* no object can be larger than PTRDIFF_MAX bytes: such a request is out
   * of memory without asking the allocator (which may warn or abort) */
  if (byteSize > PTRDIFF_MAX) {
    lull_device_unlock(device);
    lull_api_error(device, OIDN_ERROR_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  if (storage == OIDN_STORAGE_MANAGED && !device->backend->managed_memory) {
    lull_device_unlock(device);
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "managed storage is not supported by the device");
    return NULL;
  }
  /* OIDN's rule for "let the library pick": managed memory where the device
   * supports it (the CPU does), else host memory */
  if (storage == OIDN_STORAGE_UNDEFINED)
    storage = device->backend->managed_memory ? OIDN_STORAGE_MANAGED : OIDN_STORAGE_HOST;
  lull_error err = {LULL_OK, ""};
  void* data = NULL;
  int actual = storage;
  const lull_status status =
      device->backend->ops->alloc(device->backend, byteSize, storage, &data, &actual, &err);
  OIDNBuffer buffer = NULL;
  if (status == LULL_OK) {
    buffer = buffer_new(device, data, byteSize, actual, 0);
    if (!buffer) {
      device->backend->ops->free(device->backend, data, actual);
      lull_fail(&err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
    }
  }
  lull_device_unlock(device);
  if (!buffer)
    lull_api_error_status(device, &err);
  return buffer;
}

OIDN_API OIDNBuffer oidnNewBuffer(OIDNDevice device, size_t byteSize)
{
  return oidnNewBufferWithStorage(device, byteSize, OIDN_STORAGE_UNDEFINED);
}

OIDN_API OIDNBuffer oidnNewSharedBuffer(OIDNDevice device, void* devPtr, size_t byteSize)
{
  if (!lull_check_device(device))
    return NULL;
  if (!devPtr) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "buffer pointer is null");
    return NULL;
  }
  lull_device_lock(device);
  if (!lull_device_ready(device)) {
    lull_device_unlock(device);
    return NULL;
  }
  const int storage = device->backend->ops->classify(device->backend, devPtr);
  OIDNBuffer buffer = buffer_new(device, devPtr, byteSize, storage, 1);
  lull_device_unlock(device);
  if (!buffer)
    lull_api_error(device, OIDN_ERROR_OUT_OF_MEMORY, "out of memory");
  return buffer;
}

/* Memory another API exported as a file descriptor (Vulkan's opaque FD),
 * imported by the backend (the CUDA device on Linux: the device parameter
 * externalMemoryTypes says which kinds).  As in OIDN, the device must be
 * committed, fdType must be one kind the device imports, and a successful
 * import takes over fd (the buffer's release frees the memory object); a
 * failed one leaves fd to the caller. */
OIDN_API OIDNBuffer oidnNewSharedBufferFromFD(OIDNDevice device,
                                              OIDNExternalMemoryTypeFlag fdType, int fd,
                                              size_t byteSize)
{
  if (!lull_check_device(device))
    return NULL;
  lull_device_lock(device);
  if (!lull_device_ready(device)) {
    lull_device_unlock(device);
    return NULL;
  }
  lull_backend* backend = device->backend;
  const unsigned type = (unsigned)fdType;
  lull_error err = {LULL_OK, ""};
  /* exactly one kind, and one the device imports */
  lull_status (*const import)(lull_backend*, int, size_t, void**, void**, lull_error*) =
      type != 0 && (type & (type - 1)) == 0 &&
              (type & (unsigned)backend->external_memory_types) != 0
          ? backend->ops->import_fd
          : NULL;
  if (!import)
    lull_fail(&err, LULL_ERROR_INVALID_ARGUMENT, "external memory type not supported by the device");
  else if (byteSize == 0)
    lull_fail(&err, LULL_ERROR_INVALID_ARGUMENT, "external memory of zero bytes");
  else if (byteSize > PTRDIFF_MAX)
    lull_fail(&err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  /* the handle before the import: a successful import has taken fd, so
   * nothing may fail after it */
  OIDNBuffer buffer = NULL;
  if (err.code == LULL_OK && !(buffer = calloc(1, sizeof *buffer)))
    lull_fail(&err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  void *data = NULL, *handle = NULL;
  if (buffer && import && import(backend, fd, byteSize, &data, &handle, &err) == LULL_OK) {
    buffer_init(buffer, device, data, byteSize, OIDN_STORAGE_DEVICE, 0);
    buffer->external = handle;
  } else {
    free(buffer);
    buffer = NULL;
  }
  lull_device_unlock(device);
  if (!buffer)
    lull_api_error_status(device, &err);
  return buffer;
}

OIDN_API OIDNBuffer oidnNewSharedBufferFromWin32Handle(OIDNDevice device,
                                                       OIDNExternalMemoryTypeFlag handleType,
                                                       void* handle, const void* name,
                                                       size_t byteSize)
{
  (void)handleType;
  (void)handle;
  (void)name;
  (void)byteSize;
  if (lull_check_device(device))
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "external memory type not supported by the device");
  return NULL;
}

OIDN_API OIDNBuffer oidnNewSharedBufferFromMetal(OIDNDevice device, MTLBuffer_id buffer)
{
  (void)buffer;
  if (lull_check_device(device))
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "Metal buffers are not supported by the device");
  return NULL;
}

OIDN_API size_t oidnGetBufferSize(OIDNBuffer buffer)
{
  return lull_check_buffer(buffer) ? buffer->size : 0;
}

OIDN_API OIDNStorage oidnGetBufferStorage(OIDNBuffer buffer)
{
  return lull_check_buffer(buffer) ? (OIDNStorage)buffer->storage : OIDN_STORAGE_UNDEFINED;
}

OIDN_API void* oidnGetBufferData(OIDNBuffer buffer)
{
  return lull_check_buffer(buffer) ? buffer->data : NULL;
}

/* An asynchronous copy on a device with a worker thread: it holds a
 * reference to the buffer until it has run. */
typedef struct copy_job
{
  lull_job base;
  OIDNBuffer buffer;
  void* dst;
  const void* src;
  size_t size;
} copy_job;

static lull_status copy_run(lull_job* job, lull_error* err)
{
  copy_job* c = (copy_job*)job;
  lull_backend* backend = c->buffer->device->backend;
  return backend->ops->copy(backend, c->dst, c->src, c->size, 0, err);
}

static void copy_finish(lull_job* job)
{
  copy_job* c = (copy_job*)job;
  lull_buffer_release(c->buffer);
  free(c);
}

/* Checks a region and copies between the buffer and host memory. */
static void buffer_copy(OIDNBuffer buffer, size_t offset, size_t size, void* host, int to_host,
                        int async)
{
  if (!lull_check_buffer(buffer))
    return;
  OIDNDevice device = buffer->device;
  if (offset > buffer->size || size > buffer->size - offset) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "buffer region is out of bounds");
    return;
  }
  if (!host && size > 0) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "host pointer is null");
    return;
  }
  if (size == 0)
    return;
  /* no check of the device's state: a buffer exists only on a committed
   * device, and OIDN copies on a dirty one too */
  lull_device_lock(device);
  lull_error err = {LULL_OK, ""};
  unsigned char* data = (unsigned char*)buffer->data + offset;
  void* dst = to_host ? host : (void*)data;
  const void* src = to_host ? (const void*)data : host;
  lull_status status = LULL_OK;
  if (async && device->queue) {
    copy_job* job = calloc(1, sizeof *job);
    if (!job) {
      status = lull_fail(&err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
    } else {
      job->base.run = copy_run;
      job->base.finish = copy_finish;
      job->buffer = buffer;
      atomic_fetch_add(&buffer->refs, 1);
      job->dst = dst;
      job->src = src;
      job->size = size;
      lull_work_queue_push(device->queue, &job->base);
    }
  } else {
    if (!async && device->queue) /* after the work queued on the worker before it */
      lull_device_wait(device);
    status = device->backend->ops->copy(device->backend, dst, src, size, async, &err);
    if (status == LULL_OK && !async) /* a blocking copy synchronises */
      status = lull_device_take_parked(device, &err);
  }
  lull_device_unlock(device);
  if (status != LULL_OK)
    lull_api_error_status(device, &err);
}

OIDN_API void oidnReadBuffer(OIDNBuffer buffer, size_t byteOffset, size_t byteSize,
                             void* dstHostPtr)
{
  buffer_copy(buffer, byteOffset, byteSize, dstHostPtr, 1, 0);
}

OIDN_API void oidnReadBufferAsync(OIDNBuffer buffer, size_t byteOffset, size_t byteSize,
                                  void* dstHostPtr)
{
  buffer_copy(buffer, byteOffset, byteSize, dstHostPtr, 1, 1);
}

OIDN_API void oidnWriteBuffer(OIDNBuffer buffer, size_t byteOffset, size_t byteSize,
                              const void* srcHostPtr)
{
  buffer_copy(buffer, byteOffset, byteSize, (void*)(uintptr_t)srcHostPtr, 0, 0);
}

OIDN_API void oidnWriteBufferAsync(OIDNBuffer buffer, size_t byteOffset, size_t byteSize,
                                   const void* srcHostPtr)
{
  buffer_copy(buffer, byteOffset, byteSize, (void*)(uintptr_t)srcHostPtr, 0, 1);
}

OIDN_API void oidnRetainBuffer(OIDNBuffer buffer)
{
  if (lull_check_buffer(buffer))
    atomic_fetch_add(&buffer->refs, 1);
}

/* Drops one reference; filters call this for the buffers of their images. */
void lull_buffer_release(OIDNBuffer buffer)
{
  if (atomic_fetch_sub(&buffer->refs, 1) != 1)
    return;
  OIDNDevice device = buffer->device;
  /* pending asynchronous work may still use the memory (its errors stay
   * parked: releases do not raise them); on the worker, no job that uses
   * the buffer is left (each holds a reference) */
  const int worker = lull_device_on_worker(device);
  if (!worker) {
    lull_device_lock(device);
    lull_device_wait(device);
  }
  if (buffer->external)
    device->backend->ops->release_import(device->backend, buffer->data, buffer->external);
  else if (!buffer->shared)
    device->backend->ops->free(device->backend, buffer->data, buffer->storage);
  if (!worker)
    lull_device_unlock(device);
  buffer->magic = LULL_MAGIC_DEAD;
  free(buffer);
  lull_device_release(device);
}

OIDN_API void oidnReleaseBuffer(OIDNBuffer buffer)
{
  if (lull_check_buffer(buffer))
    lull_buffer_release(buffer);
}
