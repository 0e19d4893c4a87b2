/* The CUDA backend's entry points in a build without CUDA: no CUDA device
 * exists, so the CUDA device type reports unsupported hardware. */
#include "../core/backend.h"

int lull_cuda_device_count(void)
{
  return 0;
}

int lull_cuda_device_ordinal(int index)
{
  (void)index;
  return -1;
}

int lull_cuda_device_usable(int ordinal)
{
  (void)ordinal;
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
