/* Devices: creation (by type, by physical device, by UUID/LUID/PCI),
 * parameters and the commit rules, physical-device queries, hardware lull
 * does not drive, OIDN 2.5's semaphore stubs, external memory, the 1.x
 * names, and reference counting. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

/* C++-only in oidn.h (they take sycl:: types) but exported with C linkage. */
OIDN_API bool oidnIsSYCLDeviceSupported(const void* device);
OIDN_API OIDNDevice oidnNewSYCLDevice(const void* queues, int numQueues);

static void parameters(void)
{
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  CHECK(device != NULL);
  EXPECT_OK(NULL);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "type"), OIDN_DEVICE_TYPE_CPU);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "version"), OIDN_VERSION);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "version"), 20501);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "versionMajor"), 2);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "versionMinor"), 5);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "versionPatch"), 1);
  CHECK_EQ_INT(oidnGetDeviceUInt(device, "version"), 20501u);
  CHECK(oidnGetDeviceBool(device, "systemMemorySupported"));
  CHECK(oidnGetDeviceBool(device, "managedMemorySupported"));
  CHECK_EQ_INT(oidnGetDeviceInt(device, "externalMemoryTypes"), 0);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "externalSemaphoreTypes"), 0);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "verbose"), 0);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "numThreads"), 0);
  CHECK(oidnGetDeviceBool(device, "setAffinity"));
  EXPECT_OK(device);

  /* bool and int share storage */
  oidnSetDeviceInt(device, "setAffinity", 0);
  CHECK(!oidnGetDeviceBool(device, "setAffinity"));
  oidnSetDeviceBool(device, "setAffinity", true);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "setAffinity"), 1);
  oidnSetDeviceUInt(device, "numThreads", 2u);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "numThreads"), 2);
  EXPECT_OK(device);

  /* unknown names: setting warns only, getting is an error returning 0 */
  oidnSetDeviceInt(device, "noSuchParameter", 1);
  oidnSetDeviceBool(device, "noSuchParameter", true);
  EXPECT_OK(device);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "noSuchParameter"), 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "unknown device parameter or type mismatch: 'noSuchParameter'");
  CHECK(!oidnGetDeviceBool(device, "noSuchParameter"));
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  /* constant parameters cannot be set (a warning), their value stays */
  oidnSetDeviceInt(device, "version", 7);
  EXPECT_OK(device);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "version"), OIDN_VERSION);

  /* an uncommitted device creates nothing */
  CHECK(oidnNewBuffer(device, 16) == NULL);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  CHECK(oidnNewFilter(device, "RT") == NULL);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  char bytes[16];
  CHECK(oidnNewSharedBuffer(device, bytes, sizeof bytes) == NULL);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  oidnSyncDevice(device);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);

  /* the one commit; numThreads then reads the real count (one thread in a
   * build without OpenMP) */
  oidnCommitDevice(device);
  EXPECT_OK(device);
  CHECK_EQ_INT(oidnGetDeviceInt(device, "numThreads"), LULL_TEST_THREADED ? 2 : 1);
  oidnSyncDevice(device);
  EXPECT_OK(device);
  oidnCommitDevice(device);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "device can be committed only once");
  OIDNFilter filter = oidnNewFilter(device, "RT");
  CHECK(filter != NULL);
  EXPECT_OK(device);

  /* the error callback may be set at any time: it does not dirty */
  oidnSetDeviceErrorFunction(device, NULL, NULL);
  OIDNBuffer buffer = oidnNewBuffer(device, 16);
  CHECK(buffer != NULL);
  EXPECT_OK(device);
  oidnReleaseBuffer(buffer);

  /* any set after the commit (even of an unknown name) leaves the device
   * dirty, and a dirty device makes no buffers or filters and does not
   * sync; it reads and writes the buffers it has (OIDN checks only the
   * commit there) and commits and runs the filters it has (OIDN checks
   * nothing there: an application that sets "verbose" after its commit
   * keeps denoising; a review helper's finding) */
  OIDNBuffer kept = oidnNewBuffer(device, 16);
  OIDNFilter kept_filter = oidnNewFilter(device, "RT");
  oidnSetDeviceInt(device, "noSuchParameter", 0);
  EXPECT_OK(device);
  /* and giving a filter it has shared images (OIDN checks nothing there) */
  float pixels[12] = {0};
  oidnSetSharedFilterImage(kept_filter, "color", pixels, OIDN_FORMAT_FLOAT3, 2, 2, 0, 0, 0);
  EXPECT_OK(device);
  oidnReleaseFilter(kept_filter);
  const unsigned char in[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  unsigned char out[16] = {0};
  oidnWriteBuffer(kept, 0, sizeof in, in);
  oidnReadBufferAsync(kept, 0, sizeof out, out);
  EXPECT_OK(device);
  unsigned char probe = 0; /* a blocking copy waits for the queued one (a dirty device */
  oidnReadBuffer(kept, 15, 1, &probe); /* cannot sync) */
  EXPECT_OK(device);
  CHECK(memcmp(in, out, sizeof in) == 0 && probe == 16);
  oidnReleaseBuffer(kept);
  EXPECT_OK(device);
  CHECK(oidnNewFilter(device, "RT") == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "changes to the device are not committed");
  CHECK(oidnNewBuffer(device, 16) == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "changes to the device are not committed");
  oidnSyncDevice(device);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "changes to the device are not committed");
  float denoised[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  oidnSetSharedFilterImage(filter, "color", pixels, OIDN_FORMAT_FLOAT3, 2, 2, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", denoised, OIDN_FORMAT_FLOAT3, 2, 2, 0, 0, 0);
  oidnCommitFilter(filter);
  EXPECT_OK(device);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  CHECK(denoised[0] == 0.0f && denoised[11] == 0.0f); /* the black input, denoised */
  oidnCommitDevice(device); /* and cannot be committed again */
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  oidnReleaseFilter(filter);
  oidnReleaseDevice(device);
  EXPECT_OK(NULL);
}

static void creation(void)
{
  CHECK(oidnIsCPUDeviceSupported());
  CHECK(!oidnIsCUDADeviceSupported(-1));
  CHECK(!oidnIsHIPDeviceSupported(0));
  CHECK(!oidnIsMetalDeviceSupported(NULL));
  CHECK(!oidnIsSYCLDeviceSupported(NULL));
  EXPECT_OK(NULL);

  /* the default device is a device lull drives */
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_DEFAULT);
  CHECK(device != NULL);
  EXPECT_OK(NULL);
  const int type = oidnGetDeviceInt(device, "type");
  CHECK(type == OIDN_DEVICE_TYPE_CPU || type == OIDN_DEVICE_TYPE_CUDA);
  oidnReleaseDevice(device);

  /* hardware lull does not drive: NULL, UNSUPPORTED_HARDWARE, global slot */
  static const struct { OIDNDeviceType type; const char* name; } absent[] = {
      {OIDN_DEVICE_TYPE_SYCL, "SYCL"}, {OIDN_DEVICE_TYPE_HIP, "HIP"},
      {OIDN_DEVICE_TYPE_METAL, "Metal"}};
  for (size_t i = 0; i < sizeof absent / sizeof absent[0]; ++i) {
    char message[64];
    snprintf(message, sizeof message, "unsupported device type: %s", absent[i].name);
    CHECK(oidnNewDevice(absent[i].type) == NULL);
    EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, message);
  }
  CHECK(oidnNewDevice((OIDNDeviceType)42) == NULL);
  EXPECT_ERROR(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE);
  const int zero = 0;
  CHECK(oidnNewHIPDevice(&zero, NULL, 1) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: HIP");
  CHECK(oidnNewMetalDevice(NULL, 0) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: Metal");
  CHECK(oidnNewSYCLDevice(NULL, 0) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: SYCL");

  /* CUDA: without a usable GPU the type is unsupported, whatever is asked,
   * and OIDN's message is followed by why, in parentheses */
  if (!oidnIsCUDADeviceSupported(0)) {
    CHECK(oidnNewDevice(OIDN_DEVICE_TYPE_CUDA) == NULL);
    EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: CUDA (");
    CHECK(oidnNewCUDADevice(&zero, NULL, 1) == NULL);
    EXPECT_ERROR(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE);
    CHECK(oidnNewCUDADevice(NULL, NULL, 0) == NULL);
    EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: CUDA (");
  } else {
    /* with a GPU: exactly one (ID, stream) pair, both arrays given */
    const int ids[2] = {0, 0};
    cudaStream_t streams[2] = {NULL, NULL}; /* NULL: the default stream */
    CHECK(oidnNewCUDADevice(ids, streams, 2) == NULL);
    EXPECT_ERROR(NULL, OIDN_ERROR_INVALID_ARGUMENT);
    CHECK(oidnNewCUDADevice(NULL, streams, 1) == NULL);
    EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "array of CUDA devices is null");
    CHECK(oidnNewCUDADevice(ids, NULL, 1) == NULL);
    EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "array of CUDA streams is null");
    /* an ID the runtime does not list: created, fails at the commit (OIDN) */
    const int bad = -1;
    OIDNDevice d = oidnNewCUDADevice(&bad, streams, 1);
    CHECK(d != NULL);
    EXPECT_OK(NULL);
    oidnCommitDevice(d);
    EXPECT_ERROR_MSG(d, OIDN_ERROR_UNKNOWN, "invalid CUDA device ID -1");
    oidnReleaseDevice(d);
  }
  /* external memory: the CPU device imports none (the CUDA device's
   * imports: tests/gpu/cuda_api_test.c), and no device before its commit;
   * Win32 handles and Metal buffers: no lull device */
  device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  CHECK(oidnNewSharedBufferFromFD(device, OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD, 0, 16) == NULL);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  oidnReleaseDevice(device);
  device = api_cpu_device();
  CHECK(oidnNewSharedBufferFromFD(device, OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD, 0, 16) == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "external memory type not supported");
  CHECK(oidnNewSharedBufferFromWin32Handle(device, OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_WIN32,
                                           (void*)&zero, NULL, 16) == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "external memory type not supported");
  CHECK(oidnNewSharedBufferFromMetal(device, (void*)&zero) == NULL);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  EXPECT_OK(NULL);
  oidnReleaseDevice(device);
}

/* OIDN_DEFAULT_DEVICE, read by each creation; OIDN_DEVICE_CPU /
 * OIDN_DEVICE_CUDA, read once per process (api_test_no_cpu and
 * api_test_no_devices set them in processes of their own). */
static void environment(void)
{
  /* OIDN ignores an OIDN_DEFAULT_DEVICE it cannot honour and takes the
   * first physical device; it matches names whatever their case (the
   * first three name the CPU) */
  static const char* const values[] = {"cpu",   "CPU",      " Cpu ", "CUDA", " cuda ", "hip",
                                       "metal", "99",       "-1",    "0",    " 0 ",
                                       "nonsense", "cpux"};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; ++i) {
    setenv("OIDN_DEFAULT_DEVICE", values[i], 1);
    OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_DEFAULT);
    if (!device)
      fprintf(stderr, "OIDN_DEFAULT_DEVICE=%s gave no device\n", values[i]);
    CHECK(device != NULL);
    EXPECT_OK(NULL);
    if (i < 3)
      CHECK_EQ_INT(oidnGetDeviceInt(device, "type"), OIDN_DEVICE_TYPE_CPU);
    oidnReleaseDevice(device);
  }
  unsetenv("OIDN_DEFAULT_DEVICE");

  /* the switches were read at the first call: changing them later changes
   * nothing (as in OIDN, whose list is built once per process) */
  const int n = oidnGetNumPhysicalDevices();
  CHECK(n >= 1);
  setenv("OIDN_DEVICE_CPU", "0", 1);
  setenv("OIDN_DEVICE_CUDA", "0", 1);
  CHECK_EQ_INT(oidnGetNumPhysicalDevices(), n);
  CHECK(oidnIsCPUDeviceSupported());
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  CHECK(device != NULL);
  EXPECT_OK(NULL);
  oidnReleaseDevice(device);
  unsetenv("OIDN_DEVICE_CUDA");
  unsetenv("OIDN_DEVICE_CPU");
}

/* OIDN_DEVICE_CPU=0 from the start of the process: no CPU device. */
void api_test_no_cpu(void)
{
  setenv("OIDN_DEVICE_CPU", "0", 1);
  CHECK(!oidnIsCPUDeviceSupported());
  CHECK(oidnNewDevice(OIDN_DEVICE_TYPE_CPU) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: CPU");
  const int n = oidnGetNumPhysicalDevices();
  for (int id = 0; id < n; ++id)
    CHECK(oidnGetPhysicalDeviceInt(id, "type") != OIDN_DEVICE_TYPE_CPU);
  EXPECT_OK(NULL);
}

/* OIDN_DEVICE_CPU=0 and OIDN_DEVICE_CUDA=0 from the start: no devices. */
void api_test_no_devices(void)
{
  setenv("OIDN_DEVICE_CPU", "0", 1);
  setenv("OIDN_DEVICE_CUDA", "0", 1);
  CHECK_EQ_INT(oidnGetNumPhysicalDevices(), 0);
  CHECK(oidnNewDevice(OIDN_DEVICE_TYPE_DEFAULT) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "no supported devices found");
  setenv("OIDN_DEFAULT_DEVICE", "cpu", 1);
  CHECK(oidnNewDevice(OIDN_DEVICE_TYPE_DEFAULT) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "no supported devices found");
  CHECK(oidnNewDevice(OIDN_DEVICE_TYPE_CPU) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: CPU");
}

/* What one thread got from the string and data queries of every device. */
enum { POINTERS_MAX = 64 };
typedef struct returned_pointers
{
  int count;
  const char* name[POINTERS_MAX];
  char name_copy[POINTERS_MAX][256];
  const void* uuid[POINTERS_MAX]; /* NULL without a UUID */
  unsigned char uuid_copy[POINTERS_MAX][OIDN_UUID_SIZE];
} returned_pointers;

static void* query_pointers(void* arg)
{
  returned_pointers* r = arg;
  r->count = oidnGetNumPhysicalDevices();
  if (r->count > POINTERS_MAX)
    r->count = POINTERS_MAX;
  for (int id = 0; id < r->count; ++id) {
    r->name[id] = oidnGetPhysicalDeviceString(id, "name");
    snprintf(r->name_copy[id], sizeof r->name_copy[id], "%s", r->name[id] ? r->name[id] : "");
    r->uuid[id] = NULL;
    if (oidnGetPhysicalDeviceBool(id, "uuidSupported")) {
      r->uuid[id] = oidnGetPhysicalDeviceData(id, "uuid", NULL);
      if (r->uuid[id])
        memcpy(r->uuid_copy[id], r->uuid[id], OIDN_UUID_SIZE);
    }
  }
  return NULL;
}

/* As in OIDN, the strings and data of the physical-device queries are the
 * process's: valid after the thread that asked has ended and after queries
 * of other devices, the same pointer for every thread. */
static void physical_device_pointers(void)
{
  static returned_pointers first, second;
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, query_pointers, &first) == 0);
  pthread_join(thread, NULL);
  /* another thread (which may reuse the first one's stack and thread
   * storage) and this one query every device again */
  CHECK(pthread_create(&thread, NULL, query_pointers, &second) == 0);
  pthread_join(thread, NULL);
  query_pointers(&second);
  CHECK(first.count >= 1);
  CHECK_EQ_INT(second.count, first.count);
  for (int id = 0; id < first.count && id < second.count; ++id) {
    CHECK(first.name[id] != NULL);
    CHECK(first.name[id] == second.name[id]);
    CHECK(first.name[id] && strcmp(first.name[id], first.name_copy[id]) == 0);
    CHECK(first.uuid[id] == second.uuid[id]);
    if (first.uuid[id])
      CHECK(memcmp(first.uuid[id], first.uuid_copy[id], OIDN_UUID_SIZE) == 0);
  }
  EXPECT_OK(NULL);
}

static void physical_devices(void)
{
  const int n = oidnGetNumPhysicalDevices();
  CHECK(n >= 1);
  EXPECT_OK(NULL);
  int cpu = -1;
  for (int id = 0; id < n; ++id) {
    const int type = oidnGetPhysicalDeviceInt(id, "type");
    CHECK(type == OIDN_DEVICE_TYPE_CPU || type == OIDN_DEVICE_TYPE_CUDA);
    const char* name = oidnGetPhysicalDeviceString(id, "name");
    CHECK(name != NULL && name[0] != '\0');
    EXPECT_OK(NULL);
    if (type == OIDN_DEVICE_TYPE_CPU)
      cpu = id;
    /* a device with a UUID (CUDA) can be created by it */
    if (oidnGetPhysicalDeviceBool(id, "uuidSupported")) {
      size_t size = 0;
      const void* uuid = oidnGetPhysicalDeviceData(id, "uuid", &size);
      CHECK(uuid != NULL);
      CHECK_EQ_INT(size, OIDN_UUID_SIZE);
      OIDNDevice device = uuid ? oidnNewDeviceByUUID(uuid) : NULL;
      CHECK(device != NULL);
      if (device)
        CHECK_EQ_INT(oidnGetDeviceInt(device, "type"), type);
      oidnReleaseDevice(device);
      EXPECT_OK(NULL);
    }
    OIDNDevice device = oidnNewDeviceByID(id);
    CHECK(device != NULL);
    EXPECT_OK(NULL);
    if (device)
      CHECK_EQ_INT(oidnGetDeviceInt(device, "type"), type);
    oidnReleaseDevice(device);
  }
  CHECK(cpu >= 0); /* the CPU is always listed (OIDN_DEVICE_CPU unset) */
  if (cpu < 0)
    return;

  /* the CPU has no UUID, LUID or PCI address: asking for them is OIDN's
   * INVALID_ARGUMENT, and the message names the flag to check first */
  CHECK(!oidnGetPhysicalDeviceBool(cpu, "uuidSupported"));
  CHECK(!oidnGetPhysicalDeviceBool(cpu, "luidSupported"));
  CHECK(!oidnGetPhysicalDeviceBool(cpu, "pciAddressSupported"));
  EXPECT_OK(NULL);
  size_t size = 12345;
  CHECK(oidnGetPhysicalDeviceData(cpu, "uuid", &size) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT,
                   "'uuid' is not available, check 'uuidSupported'");
  CHECK(oidnGetPhysicalDeviceData(cpu, "luid", NULL) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT,
                   "'luid' is not available, check 'luidSupported'");
  static const char* const pci_names[] = {"pciDomain", "pciBus", "pciDevice", "pciFunction"};
  for (size_t i = 0; i < sizeof pci_names / sizeof pci_names[0]; ++i) {
    CHECK_EQ_INT(oidnGetPhysicalDeviceInt(cpu, pci_names[i]), 0);
    EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "check 'pciAddressSupported' first");
  }
  CHECK_EQ_INT(oidnGetPhysicalDeviceUInt(cpu, "nodeMask"), 0u);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT,
                   "'nodeMask' is not available, check 'luidSupported'");
  CHECK_EQ_INT(oidnGetPhysicalDeviceInt(cpu, "bogus"), 0);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "bogus");
  CHECK(oidnGetPhysicalDeviceString(cpu, "type") == NULL); /* type mismatch */
  EXPECT_ERROR(NULL, OIDN_ERROR_INVALID_ARGUMENT);

  /* invalid IDs */
  const int bad_ids[] = {-1, n, 1 << 30};
  for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; ++i) {
    CHECK_EQ_INT(oidnGetPhysicalDeviceInt(bad_ids[i], "type"), 0);
    EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid physical device ID");
    CHECK(oidnGetPhysicalDeviceString(bad_ids[i], "name") == NULL);
    EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid physical device ID");
    CHECK(oidnNewDeviceByID(bad_ids[i]) == NULL);
    EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid physical device ID");
  }

  /* creation by UUID / LUID / PCI address that nothing has */
  unsigned char key[OIDN_UUID_SIZE];
  memset(key, 0xa5, sizeof key);
  CHECK(oidnNewDeviceByUUID(NULL) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "UUID pointer is null");
  CHECK(oidnNewDeviceByUUID(key) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "no physical device found");
  CHECK(oidnNewDeviceByLUID(NULL) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "LUID pointer is null");
  CHECK(oidnNewDeviceByLUID(key) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "no physical device found");
  CHECK(oidnNewDeviceByPCIAddress(0x7fff, 0xff, 0x1f, 7) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "no physical device found");
}

/* OIDN 2.5's external semaphores on the CPU device, which imports none:
 * OIDN's codes and messages (OIDN 2.5.1's CPU device gives the same). */
static void semaphores(void)
{
  OIDNDevice device = api_cpu_device();
  CHECK_EQ_INT(oidnGetDeviceInt(device, "externalSemaphoreTypes"), 0);
  CHECK(oidnNewSharedSemaphoreFromFD(device, OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_FD, 3) ==
        NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "external semaphore type not supported");
  CHECK(oidnNewSharedSemaphoreFromFD(device, OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_TIMELINE_SEMAPHORE_FD,
                                     3) == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "external semaphore type not supported");
  /* no kind passes the kind check, and the device has no import */
  CHECK(oidnNewSharedSemaphoreFromFD(device, OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_NONE, 3) == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION,
                   "creating a shared semaphore from a POSIX file descriptor is not supported");
  CHECK(oidnNewSharedSemaphoreFromWin32Handle(
            device, OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_WIN32, (void*)device, NULL) == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "external semaphore type not supported");
  CHECK(oidnNewSharedSemaphoreFromWin32Handle(device, 0, NULL, NULL) == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "exactly one of");
  CHECK(oidnNewSharedSemaphoreFromWin32Handle(device, 0, (void*)device, NULL) == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION,
                   "creating a shared semaphore from a Win32 handle is not supported");
  /* signal and wait: not supported, whatever the arguments */
  OIDNSemaphore fake = (OIDNSemaphore)(void*)device;
  const uint64_t value = 1;
  oidnSignalSemaphoresAsync(device, NULL, NULL, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "signaling semaphores is not supported");
  oidnWaitSemaphoresAsync(device, NULL, NULL, NULL, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "waiting on semaphores is not supported");
  oidnSignalSemaphoresAsync(device, &fake, &value, 1);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  oidnWaitSemaphoresAsync(device, &fake, &value, NULL, -1);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  /* handles */
  oidnRetainSemaphore(fake);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid semaphore handle");
  oidnReleaseSemaphore(fake);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid semaphore handle");
  oidnSignalSemaphoresAsync(NULL, NULL, NULL, 0);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "handle is null");
  /* an uncommitted device */
  OIDNDevice fresh = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnSignalSemaphoresAsync(fresh, NULL, NULL, 0);
  EXPECT_ERROR(fresh, OIDN_ERROR_INVALID_OPERATION);
  CHECK(oidnNewSharedSemaphoreFromFD(fresh, OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_FD, 3) ==
        NULL);
  EXPECT_ERROR(fresh, OIDN_ERROR_INVALID_OPERATION);
  oidnReleaseDevice(fresh);
  oidnReleaseDevice(device);
}

/* The OIDN 1.x names are real symbols that behave like the 2.x ones. */
#if defined(__GNUC__)
  #pragma GCC diagnostic push
  #pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
static void deprecated_names(void)
{
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnSetDevice1i(device, "numThreads", 3);
  CHECK_EQ_INT(oidnGetDevice1i(device, "numThreads"), 3);
  oidnSetDevice1b(device, "setAffinity", false);
  CHECK(!oidnGetDevice1b(device, "setAffinity"));
  (void)oidnGetDevice1i(device, "bogus");
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  oidnCommitDevice(device);
  OIDNFilter filter = oidnNewFilter(device, "RT");
  oidnSetFilter1b(filter, "hdr", true);
  CHECK(oidnGetFilter1b(filter, "hdr"));
  oidnSetFilter1i(filter, "quality", OIDN_QUALITY_BALANCED);
  CHECK_EQ_INT(oidnGetFilter1i(filter, "quality"), OIDN_QUALITY_BALANCED);
  oidnSetFilter1f(filter, "inputScale", 0.5f);
  CHECK(oidnGetFilter1f(filter, "inputScale") == 0.5f);
  (void)oidnGetFilter1f(filter, "bogus");
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  float pixel[3] = {0.5f, 0.5f, 0.5f};
  oidnSetSharedFilterImage(filter, "color", pixel, OIDN_FORMAT_FLOAT3, 1, 1, 0, 0, 0);
  oidnRemoveFilterImage(filter, "color");
  oidnRemoveFilterData(filter, "weights");
  EXPECT_OK(device);
  oidnSetSharedFilterImage(filter, "output", pixel, OIDN_FORMAT_FLOAT3, 1, 1, 0, 0, 0);
  oidnCommitFilter(filter); /* the colour was removed */
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "input image not specified");
  oidnReleaseFilter(filter);
  oidnReleaseDevice(device);
}
#if defined(__GNUC__)
  #pragma GCC diagnostic pop
#endif

/* Retain/release: objects live while referenced; buffers and filters keep
 * their device alive, so the device may be released first. */
static void refcounts(void)
{
  enum { W = 9, H = 7 };
  OIDNDevice device = api_cpu_device();
  oidnRetainDevice(device);
  oidnReleaseDevice(device);
  OIDNFilter filter = oidnNewFilter(device, "Gaussian"); /* still alive */
  CHECK(filter != NULL);
  OIDNBuffer color = oidnNewBuffer(device, W * H * 3 * sizeof(float));
  OIDNBuffer output = oidnNewBuffer(device, W * H * 3 * sizeof(float));
  float* pixels = api_noisy_image(W, H, 3, 0.2f, 5);
  oidnWriteBuffer(color, 0, W * H * 3 * sizeof(float), pixels);
  oidnRetainFilter(filter);
  oidnRetainBuffer(color);
  oidnReleaseBuffer(color); /* still referenced by the caller */
  oidnSetFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  EXPECT_OK(device);

  /* the caller lets go of the device and the buffers first */
  oidnReleaseDevice(device);
  oidnReleaseBuffer(color);  /* the filter still holds it */
  oidnReleaseFilter(filter); /* one reference left */
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  float* result = api_filled(W * H * 3, -1.0f);
  oidnReadBuffer(output, 0, W * H * 3 * sizeof(float), result);
  EXPECT_OK(device);
  CHECK(lull_test_all_finite(result, W * H * 3));
  CHECK(result[0] >= 0.0f);
  oidnReleaseFilter(filter); /* the device lives on through the output buffer */
  oidnReadBuffer(output, 0, sizeof(float), result);
  EXPECT_OK(device);
  oidnReleaseBuffer(output); /* the last reference: everything is freed */
  free(result);
  free(pixels);
}

/* Devices come and go: each one's error slots are its own, and nothing is
 * left behind; more devices may live at once than a process has pthread
 * keys (1024 on glibc; error slots once used one key per device). */
static void many_devices(void)
{
  int failures = 0;
  for (int i = 0; i < 1500; ++i) {
    OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
    if (!device) {
      ++failures;
      (void)oidnGetDeviceError(NULL, NULL);
      continue;
    }
    oidnCommitDevice(device);
    (void)oidnGetDeviceInt(device, "bogus");
    failures += oidnGetDeviceError(device, NULL) != OIDN_ERROR_INVALID_ARGUMENT;
    oidnReleaseDevice(device);
  }
  CHECK_EQ_INT(failures, 0);
  /* several alive at once keep separate slots */
  enum { ALIVE = 1100 };
  OIDNDevice devices[ALIVE];
  int created = 0;
  for (int i = 0; i < ALIVE; ++i) {
    devices[i] = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
    created += devices[i] != NULL;
    if (i % 2)
      (void)oidnGetDeviceInt(devices[i], "bogus");
  }
  for (int i = 0; i < ALIVE; ++i) {
    CHECK_EQ_INT(oidnGetDeviceError(devices[i], NULL),
                 i % 2 ? OIDN_ERROR_INVALID_ARGUMENT : OIDN_ERROR_NONE);
    oidnReleaseDevice(devices[i]);
  }
  CHECK_EQ_INT(created, ALIVE);
  EXPECT_OK(NULL);
}

void api_test_devices(void)
{
  parameters();
  creation();
  environment();
  physical_devices();
  physical_device_pointers();
  semaphores();
  deprecated_names();
  refcounts();
  many_devices();
}
