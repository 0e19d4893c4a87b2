/* Denoises a small noisy ramp with "RT" through an OIDNBuffer and checks
 * that every call succeeded and the noise went down. */
#include <stdio.h>

#include <OpenImageDenoise/oidn.h>

/* OIDN's config.h defines OIDN_DEVICE_<TYPE> for the device types the
 * library was built with; the test that builds this project may say which
 * to expect for CUDA. */
#if defined(EXPECT_OIDN_DEVICE_CUDA)
  #if EXPECT_OIDN_DEVICE_CUDA && !defined(OIDN_DEVICE_CUDA)
    #error "config.h lacks OIDN_DEVICE_CUDA, but the library has the CUDA device"
  #elif !EXPECT_OIDN_DEVICE_CUDA && defined(OIDN_DEVICE_CUDA)
    #error "config.h defines OIDN_DEVICE_CUDA, but the library has no CUDA device"
  #endif
#endif

int version_from_cxx(void);

enum { W = 32, H = 24, N = W * H * 3 };

static float signal(int i)
{
  return 0.25f + 0.5f * (float)(i % (W * 3)) / (W * 3);
}

int main(void)
{
  static float noisy[N], result[N];
  unsigned state = 12345u;
  for (int i = 0; i < N; ++i) {
    state = state * 1664525u + 1013904223u;
    noisy[i] = signal(i) + 0.2f * ((float)(state >> 8) / 16777216.0f - 0.5f);
  }
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  OIDNBuffer color = oidnNewBuffer(device, sizeof noisy);
  OIDNBuffer output = oidnNewBuffer(device, sizeof result);
  oidnWriteBuffer(color, 0, sizeof noisy, noisy);
  OIDNFilter filter = oidnNewFilter(device, "RT");
  oidnSetFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  oidnReadBuffer(output, 0, sizeof result, result);
  const char* message = NULL;
  if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE) {
    fprintf(stderr, "error: %s\n", message);
    return 1;
  }
  double before = 0, after = 0;
  for (int i = 0; i < N; ++i) {
    before += (noisy[i] - signal(i)) * (noisy[i] - signal(i));
    after += (result[i] - signal(i)) * (result[i] - signal(i));
  }
  oidnReleaseFilter(filter);
  oidnReleaseBuffer(color);
  oidnReleaseBuffer(output);
  oidnReleaseDevice(device);
  printf("OIDN %d (C++ sees %d): squared error %.4f -> %.4f\n", OIDN_VERSION,
         version_from_cxx(), before, after);
  return after < before && version_from_cxx() == OIDN_VERSION ? 0 : 1;
}
