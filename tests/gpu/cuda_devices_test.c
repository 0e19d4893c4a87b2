#define _POSIX_C_SOURCE 200809L
/* The CUDA device's presence rules, on any machine (no "gpu" label): in a
 * CUDA-enabled build on a machine without an NVIDIA driver or GPU, lull
 * loads, lists only the CPU, refuses CUDA devices with
 * UNSUPPORTED_HARDWARE and runs filters on the CPU; with a GPU, the CUDA
 * device is listed first and is the default, and OIDN_DEVICE_CUDA=0 /
 * OIDN_DEFAULT_DEVICE=cpu hide it or pick the CPU.  `test_cuda_devices
 * cuda_off` checks OIDN_DEVICE_CUDA=0, which OIDN reads once per process. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

#include "test_util.h"

static int count_cuda(void)
{
  int n = 0;
  for (int i = 0; i < oidnGetNumPhysicalDevices(); ++i)
    n += oidnGetPhysicalDeviceInt(i, "type") == OIDN_DEVICE_TYPE_CUDA;
  return n;
}

/* The global error slot holds UNSUPPORTED_HARDWARE with OIDN's "unsupported
 * device type: CUDA" and, in parentheses, why (containing `why` when not
 * NULL). */
static void expect_cuda_unsupported(const char* why)
{
  static const char prefix[] = "unsupported device type: CUDA (";
  const char* message = NULL;
  CHECK_EQ_INT(oidnGetDeviceError(NULL, &message), OIDN_ERROR_UNSUPPORTED_HARDWARE);
  if (message)
    printf("CUDA unsupported: %s\n", message);
  CHECK(message && strncmp(message, prefix, sizeof prefix - 1) == 0);
  CHECK(message && strlen(message) > sizeof prefix);
  if (why)
    CHECK(message && strstr(message, why));
}

/* A 4x3 ATrous run on the given device gives finite output close to input
 * for a constant image. */
static void run_constant(OIDNDevice device)
{
  float img[4 * 3 * 3], out[4 * 3 * 3];
  for (int i = 0; i < 36; ++i)
    img[i] = 0.5f;
  OIDNBuffer in = oidnNewBuffer(device, sizeof img);
  OIDNBuffer ob = oidnNewBuffer(device, sizeof out);
  oidnWriteBuffer(in, 0, sizeof img, img);
  OIDNFilter f = oidnNewFilter(device, "ATrous");
  oidnSetFilterImage(f, "color", in, OIDN_FORMAT_FLOAT3, 4, 3, 0, 0, 0);
  oidnSetFilterImage(f, "output", ob, OIDN_FORMAT_FLOAT3, 4, 3, 0, 0, 0);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  oidnReadBuffer(ob, 0, sizeof out, out);
  CHECK_EQ_INT(oidnGetDeviceError(device, NULL), OIDN_ERROR_NONE);
  for (int i = 0; i < 36; ++i)
    CHECK_NEAR(out[i], 0.5f, 1e-5);
  oidnReleaseFilter(f);
  oidnReleaseBuffer(in);
  oidnReleaseBuffer(ob);
}

/* OIDN_DEVICE_CUDA=0 from the start of the process: the CPU only, with or
 * without a GPU. */
static int cuda_off(void)
{
  setenv("OIDN_DEVICE_CUDA", "0", 1);
  CHECK_EQ_INT(oidnGetNumPhysicalDevices(), 1);
  CHECK_EQ_INT(oidnGetPhysicalDeviceInt(0, "type"), OIDN_DEVICE_TYPE_CPU);
  CHECK(!oidnIsCUDADeviceSupported(0));
  CHECK(oidnNewDevice(OIDN_DEVICE_TYPE_CUDA) == NULL);
  expect_cuda_unsupported("OIDN_DEVICE_CUDA=0");
  const int id = 0;
  cudaStream_t stream = NULL;
  CHECK(oidnNewCUDADevice(&id, &stream, 1) == NULL);
  expect_cuda_unsupported("OIDN_DEVICE_CUDA=0");
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_DEFAULT);
  CHECK(device != NULL);
  oidnCommitDevice(device);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "type"), OIDN_DEVICE_TYPE_CPU);
  run_constant(device);
  oidnReleaseDevice(device);
  return lull_test_result("cuda_devices cuda_off");
}

int main(int argc, char** argv)
{
  if (argc > 1 && strcmp(argv[1], "cuda_off") == 0)
    return cuda_off();
  const int n = oidnGetNumPhysicalDevices();
  const int gpus = count_cuda();
  CHECK_EQ_INT(n, gpus + 1);
  CHECK_EQ_INT(oidnGetPhysicalDeviceInt(n - 1, "type"), OIDN_DEVICE_TYPE_CPU);

  OIDNDevice def = oidnNewDevice(OIDN_DEVICE_TYPE_DEFAULT);
  CHECK(def != NULL);
  oidnCommitDevice(def);
  CHECK_EQ_INT(oidnGetDeviceInt(def, "type"), gpus ? OIDN_DEVICE_TYPE_CUDA : OIDN_DEVICE_TYPE_CPU);
  run_constant(def);
  oidnReleaseDevice(def);

  if (gpus == 0) {
    /* no driver or GPU: CUDA is unsupported, never a crash, and the message
     * says why: a build without CUDA; no NVIDIA driver (the runtime's own
     * message, "CUDA driver version is insufficient for CUDA runtime
     * version", had read as an old driver); an old driver; no GPU */
    CHECK(!oidnIsCUDADeviceSupported(0));
    CHECK(oidnNewDevice(OIDN_DEVICE_TYPE_CUDA) == NULL);
#if defined(OIDN_DEVICE_CUDA)
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    expect_cuda_unsupported(driver ? NULL : "no NVIDIA driver found");
    if (driver)
      dlclose(driver);
#else
    expect_cuda_unsupported("lull was built without CUDA");
#endif
    const int id = 0;
    cudaStream_t stream = NULL;
    CHECK(oidnNewCUDADevice(&id, &stream, 1) == NULL);
    expect_cuda_unsupported(NULL);
  } else {
    CHECK_EQ_INT(oidnGetPhysicalDeviceInt(0, "type"), OIDN_DEVICE_TYPE_CUDA);
    CHECK(oidnIsCUDADeviceSupported(0));
    /* OIDN matches the name whatever its case and blanks */
    static const char* const cpu_values[] = {"cpu", "CPU", " Cpu "};
    for (size_t i = 0; i < sizeof cpu_values / sizeof cpu_values[0]; ++i) {
      setenv("OIDN_DEFAULT_DEVICE", cpu_values[i], 1);
      OIDNDevice cpu = oidnNewDevice(OIDN_DEVICE_TYPE_DEFAULT);
      oidnCommitDevice(cpu);
      CHECK_EQ_INT(oidnGetDeviceInt(cpu, "type"), OIDN_DEVICE_TYPE_CPU);
      oidnReleaseDevice(cpu);
    }
    setenv("OIDN_DEFAULT_DEVICE", "CUDA", 1);
    OIDNDevice gpu = oidnNewDevice(OIDN_DEVICE_TYPE_DEFAULT);
    CHECK_EQ_INT(oidnGetDeviceInt(gpu, "type"), OIDN_DEVICE_TYPE_CUDA);
    oidnReleaseDevice(gpu);
    unsetenv("OIDN_DEFAULT_DEVICE");
    /* OIDN_DEVICE_CUDA was read at the first call: setting it now hides
     * nothing (cuda_off sets it from the start) */
    setenv("OIDN_DEVICE_CUDA", "0", 1);
    CHECK_EQ_INT(oidnGetNumPhysicalDevices(), n);
    CHECK(oidnIsCUDADeviceSupported(0));
    unsetenv("OIDN_DEVICE_CUDA");
  }
  return lull_test_result("cuda_devices");
}
