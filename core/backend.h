/* The interface between the handle layer (devices, buffers, filters) and a
 * compute backend (the CPU backend in backend_cpu.c, the CUDA backend in
 * cuda/).  A backend owns memory management, execution order and the filter
 * implementations; the handle layer owns validation, parameters and errors.
 *
 * All functions return a lull_status and describe failures in err.
 * Pointers handed to a backend's filter functions are always accessible by
 * that backend (the handle layer checks with classify before accepting an
 * image). */
#pragma once

#include <stddef.h>

#include "atrous.h"
#include "gaussian.h"
#include "gradient_domain.h"
#include "poisson.h"
#include "ddid.h"
#include "rdfc.h"
#include "rhf.h"
#include "regression.h"
#include "status.h"
#include "temporal.h"

/* Values of OIDNStorage. */
enum
{
  LULL_STORAGE_UNDEFINED = 0,
  LULL_STORAGE_HOST = 1,
  LULL_STORAGE_DEVICE = 2,
  LULL_STORAGE_MANAGED = 3,
};

typedef struct lull_backend lull_backend;

typedef struct lull_backend_ops
{
  void (*destroy)(lull_backend* backend);

  /* Memory.  alloc with storage UNDEFINED picks the backend's default. */
  lull_status (*alloc)(lull_backend* backend, size_t bytes, int storage, void** ptr,
                       int* actual_storage, lull_error* err);
  void (*free)(lull_backend* backend, void* ptr, int storage);
  /* Storage class of memory the caller owns: HOST, DEVICE or MANAGED when
   * the backend can read and write it, UNDEFINED when it cannot. */
  int (*classify)(lull_backend* backend, const void* ptr);
  /* Copies bytes between any two pointers the backend can reach or host
   * memory; ordered after all earlier work; async returns before the copy
   * completes (the host memory must stay valid until sync). */
  lull_status (*copy)(lull_backend* backend, void* dst, const void* src, size_t bytes, int async,
                      lull_error* err);
  /* External memory (OIDN's oidnNewSharedBufferFromFD): maps `bytes` of
   * the memory object that file descriptor fd refers to (exported by
   * another API, e.g. Vulkan's opaque FD) at *ptr; *handle is what
   * release_import needs.  On success the backend owns fd and closes it
   * with the import (the CUDA driver's rule, which OIDN passes on); on
   * failure fd stays the caller's.  NULL where the backend imports
   * nothing (external_memory_types 0). */
  lull_status (*import_fd)(lull_backend* backend, int fd, size_t bytes, void** ptr,
                           void** handle, lull_error* err);
  void (*release_import)(lull_backend* backend, void* ptr, void* handle);
  /* External semaphores (OIDN 2.5's oidnNewSharedSemaphoreFromFD): imports
   * the semaphore that file descriptor fd refers to as `type`, one
   * OIDNExternalSemaphoreTypeFlag bit of external_semaphore_types; *handle
   * is what the other semaphore functions take.  fd ownership as in
   * import_fd (the backend's on success, the caller's on failure).  NULL
   * where the backend imports none (external_semaphore_types 0). */
  lull_status (*import_semaphore_fd)(lull_backend* backend, int type, int fd, void** handle,
                                     lull_error* err);
  void (*release_semaphore)(lull_backend* backend, void* handle);
  /* Queue a signal of n semaphores after the work queued so far, or a wait
   * for them before the work queued later.  types[i] is the kind each was
   * imported as; values[i] the value a timeline semaphore is set to or
   * waited for (values may be NULL when no semaphore is a timeline one). */
  lull_status (*signal_semaphores)(lull_backend* backend, void* const* handles, const int* types,
                                   const unsigned long long* values, int n, lull_error* err);
  lull_status (*wait_semaphores)(lull_backend* backend, void* const* handles, const int* types,
                                 const unsigned long long* values, int n, lull_error* err);
  /* Waits for all queued work; returns an error the queued work met (the
   * handle layer keeps it, and errors of asynchronous calls, for OIDN's
   * next synchronising call). */
  lull_status (*sync)(lull_backend* backend, lull_error* err);

  /* Filters.  Run in order after earlier work; return when done unless
   * async is set, in which case errors of the queued work may surface at
   * the next sync; an error returned by the call itself (invalid input,
   * memory, cancellation) is the call's. */
  lull_status (*atrous)(lull_backend* backend, const lull_atrous_params* params,
                        const lull_atrous_images* images, int schedule,
                        const lull_progress* progress, int async, lull_error* err);
  lull_status (*gaussian)(lull_backend* backend, const lull_gaussian_params* params,
                          const lull_gaussian_images* images, const lull_progress* progress,
                          int async, lull_error* err);
  /* Gradient-domain reconstruction (NULL where a backend lacks it: the
   * filter then reports OIDN_ERROR_UNSUPPORTED_HARDWARE). */
  lull_status (*poisson)(lull_backend* backend, const lull_poisson_params* params,
                         const lull_poisson_images* images, const lull_progress* progress,
                         int async, lull_error* err);
  lull_status (*gradient_domain)(lull_backend* backend, const lull_gradient_domain_params* params,
                                 const lull_gradient_domain_images* images,
                                 const lull_progress* progress, int async, lull_error* err);
  /* Temporal accumulation, step 1 of a frame (temporal.h): reads the
   * images and planes->in, writes planes->out, cur, acc and variance
   * (memory of the history block, which the backend allocated). */
  lull_status (*temporal)(lull_backend* backend, const lull_temporal_params* params,
                          const lull_temporal_images* images, const lull_temporal_planes* planes,
                          int async, lull_error* err);
  /* NL-means-weighted regression (NULL: OIDN_ERROR_UNSUPPORTED_HARDWARE). */
  lull_status (*regression)(lull_backend* backend, const lull_regression_params* params,
                            const lull_regression_images* images, const lull_progress* progress,
                            int async, lull_error* err);
  /* RDFC (NULL: OIDN_ERROR_UNSUPPORTED_HARDWARE). */
  lull_status (*rdfc)(lull_backend* backend, const lull_rdfc_params* params,
                      const lull_rdfc_images* images, const lull_progress* progress, int async,
                      lull_error* err);
  /* Dual-domain image denoising (NULL: OIDN_ERROR_UNSUPPORTED_HARDWARE). */
  lull_status (*ddid)(lull_backend* backend, const lull_ddid_params* params,
                      const lull_ddid_images* images, const lull_progress* progress, int async,
                      lull_error* err);
  /* Ray histogram fusion (NULL: OIDN_ERROR_UNSUPPORTED_HARDWARE). */
  lull_status (*rhf)(lull_backend* backend, const lull_rhf_params* params,
                     const lull_rhf_images* images, const lull_progress* progress, int async,
                     lull_error* err);
} lull_backend_ops;

struct lull_backend
{
  const lull_backend_ops* ops;
  int device_type;     /* OIDNDeviceType */
  int num_threads;     /* CPU: worker threads (0 = all cores) */
  int system_memory;   /* can read malloc'd host memory */
  int managed_memory;  /* supports managed storage */
  int external_memory_types; /* OIDNExternalMemoryTypeFlag bits import_fd takes */
  int external_semaphore_types; /* OIDNExternalSemaphoreTypeFlag bits import_semaphore_fd takes */
};

/* -- backends ------------------------------------------------------------ */

lull_status lull_cpu_backend_create(int num_threads, lull_backend** out, lull_error* err);
/* Threads the CPU backend's loops use. */
int lull_cpu_threads(const lull_backend* backend);

/* Facts about a CUDA device for the physical-device queries. */
typedef struct lull_cuda_device_info
{
  char name[256];
  unsigned char uuid[16];
  int uuid_supported;
  unsigned char luid[8];
  unsigned int node_mask;
  int luid_supported;
  int pci_domain, pci_bus, pci_device, pci_function;
  int pci_supported;
} lull_cuda_device_info;

/* How many times lull has asked the CUDA runtime which devices exist (the
 * first ask starts the driver: 0.1 s and its library mapped); a test hook,
 * for the check that creating a CPU device starts no CUDA.  Without CUDA,
 * the calls of the functions below. */
int lull_cuda_enumerations(void);
/* Number of usable CUDA devices (compute capability 7.5 or newer, GPU code
 * in this build for it, properties readable); 0 without driver, GPU or
 * CUDA build.  Never fails and never aborts: a machine without NVIDIA
 * software sees 0. */
int lull_cuda_device_count(void);
/* The CUDA device ordinal of usable device `index` (0 .. count - 1), or -1. */
int lull_cuda_device_ordinal(int index);
/* 1 when CUDA device `ordinal` is usable (as above). */
int lull_cuda_device_usable(int ordinal);
/* Why device `ordinal` is not usable: UNSUPPORTED_HARDWARE with the CUDA
 * runtime's error when it lists no device (an old driver, no driver, no
 * GPU) or for an unsupported GPU; UNKNOWN for an ordinal out of range (as
 * OIDN reports the runtime's invalid ordinal). */
lull_status lull_cuda_device_unusable_reason(int ordinal, lull_error* err);
/* Facts about CUDA device `device_id` (an ordinal). */
lull_status lull_cuda_device_info_get(int device_id, lull_cuda_device_info* info,
                                      lull_error* err);
/* stream may be NULL (the default stream). */
lull_status lull_cuda_backend_create(int device_id, void* stream, lull_backend** out,
                                     lull_error* err);
