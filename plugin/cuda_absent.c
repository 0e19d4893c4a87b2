/* The CUDA backend's entry points in a build without CUDA: no CUDA device
 * exists, so the CUDA device type reports unsupported hardware. */
#include <stdatomic.h>

#include "../core/backend.h"

/* lull_cuda_enumerations: the calls that would ask CUDA for its devices */
static atomic_int enumerations;

int lull_cuda_enumerations(void)
{
  return atomic_load(&enumerations);
}

int lull_cuda_device_count(void)
{
  atomic_fetch_add(&enumerations, 1);
  return 0;
}

int lull_cuda_device_ordinal(int index)
{
  (void)index;
  atomic_fetch_add(&enumerations, 1);
  return -1;
}

int lull_cuda_device_usable(int ordinal)
{
  (void)ordinal;
  atomic_fetch_add(&enumerations, 1);
  return 0;
}

lull_status lull_cuda_device_unusable_reason(int ordinal, lull_error* err)
{
  (void)ordinal;
  return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE, "lull was built without CUDA");
}

lull_status lull_cuda_device_info_get(int device_id, lull_cuda_device_info* info, lull_error* err)
{
  (void)device_id;
  (void)info;
  atomic_fetch_add(&enumerations, 1);
  return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE, "lull was built without CUDA");
}

lull_status lull_cuda_backend_create(int device_id, void* stream, lull_backend** out,
                                     lull_error* err)
{
  (void)device_id;
  (void)stream;
  (void)out;
  return lull_fail(err, LULL_ERROR_UNSUPPORTED_HARDWARE, "lull was built without CUDA");
}
