/* The CUDA backend's state, shared by its source files (backend_cuda.cu
 * owns it; the filter files enqueue work on its stream).
 *
 * Every entry point makes the backend's GPU current for the duration of
 * the call and restores the caller's device afterwards, as OIDN does, so
 * an application's own CUDA state is left as it was. */
#pragma once

#include <cuda_runtime.h>

#include "core_c.h"

typedef struct lull_cuda_backend
{
  lull_backend base;
  lull_backend_ops ops; /* base.ops points here */
  int device_id;
  cudaStream_t stream;  /* the application's stream, or 0 (default stream) */
  int num_sms;          /* multiprocessors, for grid sizing */
  /* Scratch memory reused by consecutive filter runs.  Work is ordered on
   * the stream, so a run may reuse it while an earlier asynchronous run is
   * still queued; growing it synchronises first. */
  void* scratch;
  size_t scratch_bytes;
  /* Runs in progress: more than one when a progress monitor runs a filter
   * of the same device (the device's lock is recursive), which then gets
   * scratch of its own (backend_cuda.cu, run_filter). */
  int runs;
  int kernels_configured; /* lull_atrous_kernels_configure ran (first ATrous run) */
  struct lull_atrous_graphs* atrous_graphs; /* atrous_graph.h; NULL until used */
} lull_cuda_backend;

/* The caller's current device, saved by lull_cuda_enter and restored by
 * lull_cuda_leave. */
typedef struct lull_cuda_scope
{
  int previous;
  int changed;
} lull_cuda_scope;

lull_status lull_cuda_enter(const lull_cuda_backend* cuda, lull_cuda_scope* scope,
                            lull_error* err);
void lull_cuda_leave(const lull_cuda_scope* scope);

/* The status of a CUDA error, as OIDN's CUDA device maps them: out of
 * memory; no device, an invalid launch configuration and an unsupported
 * feature are unsupported hardware; everything else unknown. */
lull_status lull_cuda_status(cudaError_t code);

/* Why no CUDA device is usable when the runtime's listing failed with
 * `listing`, in words: no NVIDIA driver (driver_version 0, as
 * cudaDriverGetVersion reads it without one), a driver older than the
 * runtime, no GPU, or the runtime's own message.  Driver and runtime
 * versions as CUDA gives them (12080: 12.8).  Returns
 * UNSUPPORTED_HARDWARE with err filled. */
lull_status lull_cuda_listing_reason(cudaError_t listing, int driver_version,
                                     int runtime_version, lull_error* err);

/* Turns a CUDA error into a lull status (lull_cuda_status) with
 * "what: CUDA's message". */
lull_status lull_cuda_fail(lull_error* err, cudaError_t code, const char* what);

/* Device pointer to at least `bytes` of scratch memory, or NULL with err
 * filled.  The memory stays valid until the next call. */
void* lull_cuda_scratch(lull_cuda_backend* cuda, size_t bytes, lull_error* err);

/* The shared memory one block may use on the device (its opt-in limit). */
lull_status lull_cuda_max_shared_memory(const lull_cuda_backend* cuda, size_t* bytes,
                                        lull_error* err);

/* The filters (atrous_cuda.cu, gaussian_cuda.cu).  Called with the device
 * current; they enqueue on cuda->stream and synchronise only when asked
 * (progress reporting synchronises per level). */
lull_status lull_cuda_atrous(lull_cuda_backend* cuda, const lull_atrous_params* params,
                             const lull_atrous_images* images, int schedule,
                             const lull_progress* progress, lull_error* err);
/* The à-trous filter in tiles (atrous_tiles.cu): the grid for
 * params->memory_cap (lull_cuda_atrous_tiling), and a run of a grid of
 * more than one tile, one tile at a time on the stream (a grid of one tile
 * is the caller's to run untiled: that takes the least memory). */
lull_atrous_tiling lull_cuda_atrous_tiling(const lull_atrous_params* params,
                                           const lull_atrous_images* images, int schedule);
lull_status lull_cuda_atrous_tiles(lull_cuda_backend* cuda, const lull_atrous_params* params,
                                   const lull_atrous_images* images, int schedule,
                                   const lull_atrous_tiling* tiling,
                                   const lull_progress* progress, lull_error* err);
/* The memory cap a run that needs `needed` bytes of scratch gets from the
 * device's free memory: 0 (none) when they fit it with room to spare,
 * else three quarters of what is free (then the run tiles; SIZE_MAX asks
 * for that).  The tiles take up to 1 KB more than the cap, for alignment. */
size_t lull_cuda_atrous_default_cap(lull_cuda_backend* cuda, size_t needed);
/* Temporal accumulation (temporal_cuda.cu), step 1 of core/temporal.h. */
lull_status lull_cuda_temporal(lull_cuda_backend* cuda, const lull_temporal_params* params,
                               const lull_temporal_images* images,
                               const lull_temporal_planes* planes, lull_error* err);
lull_status lull_cuda_gaussian(lull_cuda_backend* cuda, const lull_gaussian_params* params,
                               const lull_gaussian_images* images,
                               const lull_progress* progress, lull_error* err);
