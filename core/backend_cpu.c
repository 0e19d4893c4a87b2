/* The CPU backend: host memory and the OpenMP filters.  Every call runs
 * its work on the calling thread before it returns, so there is nothing to
 * wait for at a sync; OIDN's asynchronous calls are the handle layer's:
 * it runs them on the device's worker thread (plugin/work_queue.c) and
 * keeps their errors for the next synchronising call, as OIDN does. */
#include <stdlib.h>
#include <string.h>

#include "atrous_tiled.h"
#include "backend.h"
#include "planes.h"
#include "threads.h"

typedef struct cpu_backend
{
  lull_backend base;
  lull_planes_cache planes; /* the last ATrous run's working planes (planes.h) */
} cpu_backend;

static void cpu_destroy(lull_backend* backend)
{
  lull_planes_cache_clear(&((cpu_backend*)backend)->planes);
  free(backend);
}

static lull_status cpu_alloc(lull_backend* backend, size_t bytes, int storage, void** ptr,
                             int* actual_storage, lull_error* err)
{
  (void)backend;
  /* every storage kind is ordinary host memory on the CPU; at least one
   * byte so an empty buffer still has a unique address */
  *ptr = malloc(bytes ? bytes : 1);
  if (!*ptr)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  *actual_storage = storage == LULL_STORAGE_UNDEFINED ? LULL_STORAGE_HOST : storage;
  return LULL_OK;
}

static void cpu_free(lull_backend* backend, void* ptr, int storage)
{
  (void)backend;
  (void)storage;
  free(ptr);
}

static int cpu_classify(lull_backend* backend, const void* ptr)
{
  (void)backend;
  (void)ptr;
  return LULL_STORAGE_HOST;
}

static lull_status cpu_copy(lull_backend* backend, void* dst, const void* src, size_t bytes,
                            int async, lull_error* err)
{
  (void)backend;
  (void)async;
  (void)err;
  if (bytes)
    memmove(dst, src, bytes);
  return LULL_OK;
}

static lull_status cpu_sync(lull_backend* backend, lull_error* err)
{
  (void)backend;
  (void)err;
  return LULL_OK; /* the work ran when it was queued */
}

static lull_status cpu_atrous(lull_backend* backend, const lull_atrous_params* params,
                              const lull_atrous_images* images, int schedule,
                              const lull_progress* progress, int async, lull_error* err)
{
  (void)schedule; /* the GPU schedules have no CPU counterpart */
  (void)async;    /* (runs now either way) */
  /* in tiles when params->memory_cap asks for it */
  return lull_atrous_cpu_tiled(params, images, backend->num_threads,
                               &((cpu_backend*)backend)->planes, progress, err);
}

static lull_status cpu_gaussian(lull_backend* backend, const lull_gaussian_params* params,
                                const lull_gaussian_images* images, const lull_progress* progress,
                                int async, lull_error* err)
{
  (void)async;
  return lull_gaussian_cpu(params, images, backend->num_threads, progress, err);
}

static lull_status cpu_poisson(lull_backend* backend, const lull_poisson_params* params,
                               const lull_poisson_images* images, const lull_progress* progress,
                               int async, lull_error* err)
{
  (void)async;
  return lull_poisson_cpu(params, images, backend->num_threads, progress, err);
}

static lull_status cpu_gradient_domain(lull_backend* backend,
                                       const lull_gradient_domain_params* params,
                                       const lull_gradient_domain_images* images,
                                       const lull_progress* progress, int async, lull_error* err)
{
  (void)async;
  return lull_gradient_domain_cpu(params, images, backend->num_threads, progress, err);
}

static lull_status cpu_temporal(lull_backend* backend, const lull_temporal_params* params,
                                const lull_temporal_images* images,
                                const lull_temporal_planes* planes, int async, lull_error* err)
{
  (void)async;
  return lull_temporal_cpu(params, images, planes, backend->num_threads, err);
}

static lull_status cpu_regression(lull_backend* backend, const lull_regression_params* params,
                                  const lull_regression_images* images,
                                  const lull_progress* progress, int async, lull_error* err)
{
  (void)async;
  return lull_regression_cpu(params, images, backend->num_threads, progress, err);
}

static lull_status cpu_rdfc(lull_backend* backend, const lull_rdfc_params* params,
                            const lull_rdfc_images* images, const lull_progress* progress,
                            int async, lull_error* err)
{
  (void)async;
  return lull_rdfc_cpu(params, images, backend->num_threads, progress, err);
}

static lull_status cpu_ddid(lull_backend* backend, const lull_ddid_params* params,
                            const lull_ddid_images* images, const lull_progress* progress,
                            int async, lull_error* err)
{
  (void)async;
  return lull_ddid_cpu(params, images, backend->num_threads, progress, err);
}

static lull_status cpu_rhf(lull_backend* backend, const lull_rhf_params* params,
                           const lull_rhf_images* images, const lull_progress* progress, int async,
                           lull_error* err)
{
  (void)async;
  return lull_rhf_cpu(params, images, backend->num_threads, progress, err);
}

static const lull_backend_ops cpu_ops = {
    .destroy = cpu_destroy,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .classify = cpu_classify,
    .copy = cpu_copy,
    .sync = cpu_sync,
    .atrous = cpu_atrous,
    .gaussian = cpu_gaussian,
    .poisson = cpu_poisson,
    .gradient_domain = cpu_gradient_domain,
    .temporal = cpu_temporal,
    .regression = cpu_regression,
    .rdfc = cpu_rdfc,
    .ddid = cpu_ddid,
    .rhf = cpu_rhf,
};

lull_status lull_cpu_backend_create(int num_threads, lull_backend** out, lull_error* err)
{
  cpu_backend* cpu = calloc(1, sizeof *cpu);
  if (!cpu)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  cpu->base.ops = &cpu_ops;
  cpu->base.device_type = 1; /* OIDN_DEVICE_TYPE_CPU */
  cpu->base.num_threads = num_threads;
  cpu->base.system_memory = 1;
  cpu->base.managed_memory = 1;
  *out = &cpu->base;
  return LULL_OK;
}

int lull_cpu_threads(const lull_backend* backend)
{
  return lull_thread_count(backend->num_threads);
}
