/* How CUDA errors become OIDN errors (lull_cuda_status, lull_cuda_fail):
 * the codes OIDN's CUDA device maps, and the message; why no CUDA device is
 * usable (lull_cuda_listing_reason).  No GPU needed: the functions only
 * read cudaGetErrorString. */
#include <stdio.h>
#include <string.h>

#include "backend_cuda.h"

extern "C" {
#include "test_util.h"
}

int main(void)
{
  static const struct
  {
    cudaError_t code;
    lull_status status;
  } cases[] = {
      {cudaSuccess, LULL_OK},
      {cudaErrorMemoryAllocation, LULL_ERROR_OUT_OF_MEMORY},
      {cudaErrorNoDevice, LULL_ERROR_UNSUPPORTED_HARDWARE},
      {cudaErrorInvalidConfiguration, LULL_ERROR_UNSUPPORTED_HARDWARE},
      {cudaErrorNotSupported, LULL_ERROR_UNSUPPORTED_HARDWARE},
      {cudaErrorIllegalAddress, LULL_ERROR_UNKNOWN},
      {cudaErrorLaunchFailure, LULL_ERROR_UNKNOWN},
      {cudaErrorInvalidValue, LULL_ERROR_UNKNOWN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const lull_status status = lull_cuda_status(cases[i].code);
    if (status != cases[i].status)
      printf("%s: status %d, expected %d\n", cudaGetErrorName(cases[i].code), (int)status,
             (int)cases[i].status);
    CHECK_EQ_INT((int)status, (int)cases[i].status);
  }
  lull_error err = {LULL_OK, ""};
  CHECK_EQ_INT((int)lull_cuda_fail(&err, cudaErrorNoDevice, "cannot select the CUDA device"),
               (int)LULL_ERROR_UNSUPPORTED_HARDWARE);
  CHECK_EQ_INT((int)err.code, (int)LULL_ERROR_UNSUPPORTED_HARDWARE);
  CHECK(strstr(err.message, "cannot select the CUDA device: ") == err.message);
  CHECK(strstr(err.message, cudaGetErrorString(cudaErrorNoDevice)) != NULL);
  /* why the runtime lists no device: cudaErrorInsufficientDriver is said
   * without a driver (version 0) and with one too old; they read apart */
  CHECK_EQ_INT((int)lull_cuda_listing_reason(cudaErrorInsufficientDriver, 0, 13000, &err),
               (int)LULL_ERROR_UNSUPPORTED_HARDWARE);
  printf("no driver: %s\n", err.message);
  CHECK(strstr(err.message, "no NVIDIA driver found") != NULL);
  CHECK(strstr(err.message, "older") == NULL);
  (void)lull_cuda_listing_reason(cudaErrorInsufficientDriver, 12080, 13000, &err);
  printf("old driver: %s\n", err.message);
  CHECK(strstr(err.message, "supports CUDA 12.8, older than the CUDA 13.0 runtime") != NULL);
  CHECK(strstr(err.message, "no NVIDIA driver") == NULL);
  (void)lull_cuda_listing_reason(cudaErrorNoDevice, 13000, 13000, &err);
  printf("no GPU: %s\n", err.message);
  CHECK(strstr(err.message, "finds no GPU") != NULL);
  (void)lull_cuda_listing_reason(cudaErrorInitializationError, 13000, 13000, &err);
  printf("other: %s\n", err.message);
  CHECK(strstr(err.message, cudaGetErrorName(cudaErrorInitializationError)) != NULL);
  /* a failure is never reported as success, whatever the code */
  CHECK_EQ_INT((int)lull_cuda_fail(&err, cudaSuccess, "x"), (int)LULL_ERROR_UNKNOWN);
  return lull_test_result("cuda_status");
}
