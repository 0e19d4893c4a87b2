// The C++ API (oidn.hpp) on the CPU device, written as OIDN's C++ users
// write it: OIDN's basic example flow, the Ref classes' ownership rules,
// typed parameter access, errors through getError and the error callback,
// cancellation through the progress monitor, lull's ATrous filter, physical
// devices and the flag sets.  Built as C++11 (the header's floor), C++17 and
// C++20 with pedantic warnings as errors; run under valgrind too, where
// leaks or invalid accesses show a Ref releasing too little or too much.
#include <OpenImageDenoise/oidn.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

int failures = 0;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
      ++failures;                                                                     \
    }                                                                                 \
  } while (0)

// Reads (and clears) an error slot through the C++ API and checks its code
// and, for an error, that the message is there and contains `fragment`.
void expectError(oidn::Error got, const char* message, oidn::Error want, const char* fragment,
                 int line)
{
  if (got != want) {
    std::fprintf(stderr, "%s:%d: error %d (%s), expected %d\n", __FILE__, line,
                 static_cast<int>(got), message ? message : "no message", static_cast<int>(want));
    ++failures;
    return;
  }
  if (want == oidn::Error::None)
    return;
  if (!message || !*message || (fragment && !std::strstr(message, fragment))) {
    std::fprintf(stderr, "%s:%d: error message '%s' lacks '%s'\n", __FILE__, line,
                 message ? message : "(null)", fragment ? fragment : "");
    ++failures;
  }
}

#define EXPECT_ERROR(device, code, fragment)                                          \
  do {                                                                                \
    const char* msg_ = nullptr;                                                       \
    const oidn::Error got_ = (device).getError(msg_);                                 \
    expectError(got_, msg_, code, fragment, __LINE__);                                \
  } while (0)
#define EXPECT_OK(device) EXPECT_ERROR(device, oidn::Error::None, nullptr)
// the calling thread's global slot (no device)
#define EXPECT_GLOBAL_ERROR(code, fragment)                                           \
  do {                                                                                \
    const char* msg_ = nullptr;                                                       \
    const oidn::Error got_ = oidn::getError(msg_);                                    \
    expectError(got_, msg_, code, fragment, __LINE__);                                \
  } while (0)

const size_t W = 32, H = 24, N = W * H;
const float level[3] = {0.8f, 0.5f, 0.3f};
const size_t bytes = 3 * N * sizeof(float);

// The constant image `level` plus uniform noise of +-0.25 (xorshift, so
// every run sees the same image); non-negative, as HDR inputs must be.
std::vector<float> noisyConstant(unsigned seed)
{
  std::vector<float> image(3 * N);
  unsigned state = seed;
  for (size_t i = 0; i < image.size(); ++i) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    const float u = static_cast<float>(state >> 8) / 16777216.0f; // [0, 1)
    image[i] = level[i % 3] + 0.5f * (u - 0.5f);
  }
  return image;
}

// RMS distance of a FLOAT3 image (pixels `stride` floats apart) from
// `level`; infinite when any value is not finite.
double rmsFromLevel(const float* image, size_t stride = 3)
{
  double sum = 0.0;
  for (size_t p = 0; p < N; ++p)
    for (size_t c = 0; c < 3; ++c) {
      const double v = image[p * stride + c];
      if (!std::isfinite(v))
        return HUGE_VAL;
      sum += (v - level[c]) * (v - level[c]);
    }
  return std::sqrt(sum / (3 * N));
}

// Denoised means finite and well closer to the constant than the input.
bool denoised(const float* output, const float* input, size_t stride = 3)
{
  const double out = rmsFromLevel(output, stride), in = rmsFromLevel(input, stride);
  if (!(out < 0.5 * in)) {
    std::fprintf(stderr, "not denoised: RMS from the constant %g, input %g\n", out, in);
    return false;
  }
  return true;
}

// -- OIDN's basic example, through OIDNBuffers ------------------------------------

void basicFlow(const oidn::DeviceRef& device)
{
  const std::vector<float> noisy = noisyConstant(1);

  oidn::BufferRef colorBuf = device.newBuffer(bytes);
  oidn::BufferRef outputBuf = device.newBuffer(bytes);
  CHECK(colorBuf && outputBuf);
  CHECK(colorBuf.getSize() == bytes);
  CHECK(colorBuf.getStorage() != oidn::Storage::Undefined);
  CHECK(colorBuf.getData() != nullptr); // host-accessible on the CPU device
  colorBuf.write(0, bytes, noisy.data());

  oidn::FilterRef filter = device.newFilter("RT");
  CHECK(filter);
  filter.setImage("color", colorBuf, oidn::Format::Float3, W, H);
  filter.setImage("output", outputBuf, oidn::Format::Float3, W, H);
  filter.set("hdr", true);
  filter.commit();
  filter.execute();
  EXPECT_OK(device);

  std::vector<float> output(3 * N, -1.0f);
  outputBuf.read(0, bytes, output.data());
  CHECK(denoised(output.data(), noisy.data()));
  // getData sees the same bytes read copies
  CHECK(std::memcmp(outputBuf.getData(), output.data(), bytes) == 0);

  // asynchronous: the same result once the device is synchronised
  std::vector<float> asyncOutput(3 * N, -1.0f);
  colorBuf.writeAsync(0, bytes, noisy.data());
  filter.executeAsync();
  outputBuf.readAsync(0, bytes, asyncOutput.data());
  device.sync();
  EXPECT_OK(device);
  CHECK(asyncOutput == output);

  // explicit storage
  oidn::BufferRef hostBuf = device.newBuffer(64, oidn::Storage::Host);
  CHECK(hostBuf && hostBuf.getStorage() == oidn::Storage::Host && hostBuf.getSize() == 64);
  EXPECT_OK(device);
}

// -- images from raw pointers, strides, shared buffers -----------------------------

void sharedImages(const oidn::DeviceRef& device)
{
  const std::vector<float> noisy = noisyConstant(2);

  // RGBA pixels: FLOAT3 with a 16-byte pixel stride, alpha untouched
  std::vector<float> rgba(4 * N), out(4 * N, 7.0f);
  for (size_t p = 0; p < N; ++p) {
    std::memcpy(&rgba[4 * p], &noisy[3 * p], 3 * sizeof(float));
    rgba[4 * p + 3] = 1.0f;
  }
  oidn::FilterRef filter = device.newFilter("RT");
  filter.setImage("color", rgba.data(), oidn::Format::Float3, W, H, 0, 4 * sizeof(float));
  filter.setImage("output", out.data(), oidn::Format::Float3, W, H, 0, 4 * sizeof(float),
                  4 * sizeof(float) * W);
  filter.set("hdr", true);
  filter.commit();
  filter.execute();
  EXPECT_OK(device);
  CHECK(denoised(out.data(), rgba.data(), 4));
  bool alphaKept = true;
  for (size_t p = 0; p < N; ++p)
    alphaKept = alphaKept && out[4 * p + 3] == 7.0f;
  CHECK(alphaKept);

  // a shared buffer wraps the caller's memory without a copy
  std::vector<float> memory(noisy);
  oidn::BufferRef shared = device.newBuffer(memory.data(), bytes);
  CHECK(shared && shared.getData() == memory.data() && shared.getSize() == bytes);
  std::vector<float> output(3 * N);
  filter.setImage("color", shared, oidn::Format::Float3, W, H);
  filter.setImage("output", output.data(), oidn::Format::Float3, W, H);
  filter.commit();
  filter.execute();
  EXPECT_OK(device);
  CHECK(denoised(output.data(), noisy.data()));
}

// -- Ref semantics --------------------------------------------------------------

// Runs `filter` and checks it succeeded and denoised (output zeroed first,
// so a run that did nothing fails).
void runsOn(const oidn::DeviceRef& device, const oidn::FilterRef& filter,
            std::vector<float>& output, const std::vector<float>& input, int line)
{
  std::fill(output.begin(), output.end(), 0.0f);
  filter.execute();
  const char* msg = nullptr;
  expectError(device.getError(msg), msg, oidn::Error::None, nullptr, line);
  if (!denoised(output.data(), input.data())) {
    std::fprintf(stderr, "%s:%d: filter did not run\n", __FILE__, line);
    ++failures;
  }
}

void refSemantics(const oidn::DeviceRef& device)
{
  std::vector<float> noisy = noisyConstant(3), output(3 * N);

  oidn::FilterRef none;
  CHECK(!none && none.getHandle() == nullptr);

  oidn::FilterRef original = device.newFilter("RT");
  original.setImage("color", noisy.data(), oidn::Format::Float3, W, H);
  original.setImage("output", output.data(), oidn::Format::Float3, W, H);
  original.commit();
  EXPECT_OK(device);

  // a copy holds a reference of its own: it outlives the original's
  oidn::FilterRef copy(original);
  CHECK(copy.getHandle() == original.getHandle());
  // release() hands the original's reference over without releasing it
  OIDNFilter raw = original.release();
  CHECK(!original && original.getHandle() == nullptr);
  CHECK(raw == copy.getHandle());
  oidnReleaseFilter(raw); // the original's reference, dropped in C
  runsOn(device, copy, output, noisy, __LINE__);

  // moving steals the reference: the source is null afterwards
  oidn::FilterRef moved(std::move(copy));
  CHECK(moved.getHandle() == raw);
  // (the moved-from state is what is checked here)
  CHECK(!copy.getHandle()); // NOLINT(clang-analyzer-cplusplus.Move,bugprone-use-after-move)
  oidn::FilterRef target = device.newFilter("Gaussian"); // released by the assignment
  target = std::move(moved);
  CHECK(target.getHandle() == raw);
  CHECK(!moved.getHandle()); // NOLINT(clang-analyzer-cplusplus.Move,bugprone-use-after-move)
  runsOn(device, target, output, noisy, __LINE__);

  // assignment from a raw handle shares it: the assigned Ref retains
  oidn::FilterRef sharer;
  sharer = target.getHandle();
  CHECK(sharer.getHandle() == raw);
  target = oidn::FilterRef(); // drops target's reference only
  CHECK(!target);
  runsOn(device, sharer, output, noisy, __LINE__);

  // copy assignment, also onto itself, keeps the object alive
  const oidn::FilterRef& alias = sharer;
  sharer = alias;
  oidn::FilterRef assigned;
  assigned = sharer;
  sharer = nullptr; // (a null raw handle: releases, retains nothing)
  CHECK(!sharer && assigned.getHandle() == raw);
  runsOn(device, assigned, output, noisy, __LINE__);

  // the constructor from a raw handle adopts the reference it is given:
  // the Ref's destructor is the only release (valgrind: no leak, no
  // double release)
  {
    oidn::FilterRef adopted(oidnNewFilter(device.getHandle(), "RT"));
    CHECK(adopted);
    oidn::BufferRef adoptedBuffer = oidnNewBuffer(device.getHandle(), 16);
    CHECK(adoptedBuffer && adoptedBuffer.getSize() == 16);
  }
  EXPECT_OK(device);

  // buffers: a copy keeps the memory when the original lets go
  oidn::BufferRef buffer = device.newBuffer(bytes);
  buffer.write(0, bytes, noisy.data());
  oidn::BufferRef keeper = buffer;
  buffer = nullptr;
  CHECK(!buffer && keeper.getSize() == bytes);
  std::vector<float> back(3 * N);
  keeper.read(0, bytes, back.data());
  CHECK(back == noisy);
  EXPECT_OK(device);

  // devices: a copy of a DeviceRef keeps working after the first is reset,
  // and filters keep their device alive
  oidn::DeviceRef first = oidn::newDevice(oidn::DeviceType::CPU);
  first.commit();
  oidn::FilterRef orphan = first.newFilter("RT");
  oidn::DeviceRef second = first;
  first = oidn::DeviceRef();
  CHECK(!first && second);
  CHECK(second.newBuffer(16));
  EXPECT_OK(second);
  second = oidn::DeviceRef();
  orphan.setImage("color", noisy.data(), oidn::Format::Float3, W, H);
  orphan.setImage("output", output.data(), oidn::Format::Float3, W, H);
  orphan.commit();
  // (its device has no Ref left to read its slot: the null DeviceRef reads
  // the global slot, and the output shows the run)
  runsOn(oidn::DeviceRef(), orphan, output, noisy, __LINE__);
}

// -- typed parameters ---------------------------------------------------------------

void parameters(const oidn::DeviceRef& device)
{
  CHECK(device.get<oidn::DeviceType>("type") == oidn::DeviceType::CPU);
  CHECK(device.get<int>("version") == OIDN_VERSION);
  CHECK(device.get<unsigned int>("versionMajor") == OIDN_VERSION_MAJOR);
  CHECK(device.get<bool>("systemMemorySupported"));
  CHECK(device.get<unsigned int>("numThreads") >= 1u);
  CHECK(!device.get<oidn::ExternalMemoryTypeFlags>("externalMemoryTypes"));
  EXPECT_OK(device);

  oidn::FilterRef filter = device.newFilter("RT");
  CHECK(!filter.get<bool>("hdr"));
  filter.set("hdr", true);
  CHECK(filter.get<bool>("hdr"));
  CHECK(filter.get<oidn::Quality>("quality") == oidn::Quality::High);
  filter.set("quality", oidn::Quality::Balanced);
  CHECK(filter.get<oidn::Quality>("quality") == oidn::Quality::Balanced);
  CHECK(filter.get<int>("quality") == OIDN_QUALITY_BALANCED);
  CHECK(std::isnan(filter.get<float>("inputScale"))); // NaN: automatic
  filter.set("inputScale", 2.0f);
  CHECK(filter.get<float>("inputScale") == 2.0f);
  filter.set("maxMemoryMB", 256);
  CHECK(filter.get<int>("maxMemoryMB") == 256);
  EXPECT_OK(device);
  CHECK(filter.get<int>("noSuchParameter") == 0);
  EXPECT_ERROR(device, oidn::Error::InvalidArgument, "noSuchParameter");

  // data parameters: lull's filters take none, so they only warn
  std::vector<unsigned char> blob(16);
  filter.setData("weights", blob.data(), blob.size());
  filter.updateData("weights");
  filter.unsetData("weights");
  EXPECT_OK(device);

  // removeImage/removeData still work, deprecated (as oidn.h's C names)
  std::vector<float> image(3 * N, 0.5f);
  filter.setImage("color", image.data(), oidn::Format::Float3, W, H);
  filter.setImage("output", image.data(), oidn::Format::Float3, W, H);
  filter.commit();
  EXPECT_OK(device);
#if defined(__GNUC__)
  #pragma GCC diagnostic push
  #pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
  filter.removeImage("color");
  filter.removeData("weights");
#if defined(__GNUC__)
  #pragma GCC diagnostic pop
#endif
  filter.commit();
  EXPECT_ERROR(device, oidn::Error::InvalidOperation, nullptr);
  filter.setImage("color", image.data(), oidn::Format::Float3, W, H);
  filter.unsetImage("color");
  filter.commit();
  EXPECT_ERROR(device, oidn::Error::InvalidOperation, nullptr);
}

// -- errors ----------------------------------------------------------------------------

struct ErrorLog
{
  int calls;
  oidn::Error last;
  std::string message;
};

void onError(void* userPtr, oidn::Error code, const char* message)
{
  ErrorLog* log = static_cast<ErrorLog*>(userPtr);
  ++log->calls;
  log->last = code;
  log->message = message ? message : "";
}

void errors(const oidn::DeviceRef& device)
{
  // an unknown filter type: a null Ref, InvalidArgument with a message
  oidn::FilterRef unknown = device.newFilter("NoSuchFilter");
  CHECK(!unknown);
  EXPECT_ERROR(device, oidn::Error::InvalidArgument, "NoSuchFilter");
  EXPECT_OK(device); // reading cleared it

  // the callback gets every error with the C++ code type; the slot too
  ErrorLog log = {0, oidn::Error::None, std::string()};
  device.setErrorFunction(onError, &log);
  CHECK(!device.newFilter("NoSuchFilter"));
  CHECK(log.calls == 1 && log.last == oidn::Error::InvalidArgument);
  CHECK(log.message.find("NoSuchFilter") != std::string::npos);
  CHECK(device.getError() == oidn::Error::InvalidArgument);
  device.setErrorFunction(nullptr);
  CHECK(!device.newFilter("NoSuchFilter"));
  CHECK(log.calls == 1);
  CHECK(device.getError() == oidn::Error::InvalidArgument);

  // a null Ref passes a null handle: the error lands in the global slot
  oidn::FilterRef null;
  null.commit();
  EXPECT_GLOBAL_ERROR(oidn::Error::InvalidArgument, "null");
  oidn::DeviceRef nullDevice;
  CHECK(!nullDevice.newBuffer(16));
  EXPECT_GLOBAL_ERROR(oidn::Error::InvalidArgument, "null");

  // devices that cannot be made
  CHECK(!oidn::newHIPDevice(0, nullptr));
  EXPECT_GLOBAL_ERROR(oidn::Error::UnsupportedHardware, "HIP");
  CHECK(!oidn::newMetalDevice(nullptr));
  EXPECT_GLOBAL_ERROR(oidn::Error::UnsupportedHardware, "Metal");
  CHECK(!oidn::newMetalDevice(std::vector<MTLCommandQueue_id>(1, nullptr)));
  EXPECT_GLOBAL_ERROR(oidn::Error::UnsupportedHardware, "Metal");
  CHECK(!oidn::isHIPDeviceSupported(0));
  CHECK(!oidn::isMetalDeviceSupported(nullptr));
  CHECK(oidn::isCPUDeviceSupported());
  // mismatched ID and stream lists are refused, never read past the end
  // (UnsupportedHardware first where no CUDA device exists)
  CHECK(!oidn::newCUDADevice(std::vector<int>(1, 0), std::vector<cudaStream_t>()));
  CHECK(oidn::getError() != oidn::Error::None);
  CHECK(!oidn::newDevice(1 << 20)); // physical device ID
  EXPECT_GLOBAL_ERROR(oidn::Error::InvalidArgument, nullptr);
  CHECK(!oidn::newDevice(-1, -1, -1, -1)); // PCI address
  EXPECT_GLOBAL_ERROR(oidn::Error::InvalidArgument, nullptr);
  oidn::UUID uuid;
  std::memset(uuid.bytes, 0xab, sizeof uuid.bytes);
  CHECK(!oidn::newDevice(uuid));
  EXPECT_GLOBAL_ERROR(oidn::Error::InvalidArgument, nullptr);
  oidn::LUID luid;
  luid.low = 0xabababab;
  luid.high = -1;
  CHECK(!oidn::newDevice(luid));
  EXPECT_GLOBAL_ERROR(oidn::Error::InvalidArgument, nullptr);

  // external memory: the CPU device imports none
  CHECK(!device.newBuffer(oidn::ExternalMemoryTypeFlag::OpaqueFD, -1, 64));
  EXPECT_ERROR(device, oidn::Error::InvalidArgument, "external memory");
  int handle = 0;
  CHECK(!device.newBuffer(oidn::ExternalMemoryTypeFlag::OpaqueWin32, &handle, nullptr, 64));
  EXPECT_ERROR(device, oidn::Error::InvalidArgument, "external memory");
}

// -- progress monitor and cancellation -----------------------------------------------

struct ProgressLog
{
  int calls;
  int cancelAt; // return false on this call (1-based); 0: never
  double last;
};

bool monitor(void* userPtr, double n)
{
  ProgressLog* log = static_cast<ProgressLog*>(userPtr);
  ++log->calls;
  log->last = n;
  return log->cancelAt == 0 || log->calls < log->cancelAt;
}

void progress(const oidn::DeviceRef& device)
{
  std::vector<float> noisy = noisyConstant(4), output(3 * N);
  oidn::FilterRef filter = device.newFilter("RT");
  filter.setImage("color", noisy.data(), oidn::Format::Float3, W, H);
  filter.setImage("output", output.data(), oidn::Format::Float3, W, H);
  ProgressLog log = {0, 0, -1.0};
  filter.setProgressMonitorFunction(monitor, &log);
  filter.commit();
  filter.execute();
  EXPECT_OK(device);
  CHECK(log.calls >= 1 && log.last == 1.0);

  log.calls = 0;
  log.cancelAt = 1;
  filter.execute();
  EXPECT_ERROR(device, oidn::Error::Cancelled, "cancel");
  CHECK(log.calls == 1);

  // no monitor: runs to the end, nothing called
  filter.setProgressMonitorFunction(nullptr);
  log.calls = 0;
  filter.execute();
  EXPECT_OK(device);
  CHECK(log.calls == 0);
  CHECK(denoised(output.data(), noisy.data()));
}

// -- lull's own filter through the same API ------------------------------------------

void atrous(const oidn::DeviceRef& device)
{
  std::vector<float> noisy = noisyConstant(5), output(3 * N);
  oidn::FilterRef filter = device.newFilter("ATrous");
  CHECK(filter);
  filter.setImage("color", noisy.data(), oidn::Format::Float3, W, H);
  filter.setImage("output", output.data(), oidn::Format::Float3, W, H);
  filter.set("iterations", 3);
  CHECK(filter.get<int>("iterations") == 3);
  filter.commit();
  filter.execute();
  EXPECT_OK(device);
  CHECK(denoised(output.data(), noisy.data()));
}

// -- physical devices ------------------------------------------------------------------

void physicalDevices()
{
  const int count = oidn::getNumPhysicalDevices();
  CHECK(count >= 1);
  bool foundCPU = false;
  for (int i = 0; i < count; ++i) {
    const oidn::PhysicalDeviceRef pd(i);
    CHECK(pd && pd.getID() == i);
    const std::string name = pd.get<std::string>("name");
    const char* cname = pd.get<const char*>("name");
    CHECK(!name.empty() && cname && name == cname);
    const oidn::DeviceType type = pd.get<oidn::DeviceType>("type");
    CHECK(pd.get<int>("type") == static_cast<int>(type));
    if (pd.get<bool>("uuidSupported")) {
      const oidn::UUID uuid = pd.get<oidn::UUID>("uuid");
      const std::pair<const void*, size_t> data = pd.getData("uuid");
      CHECK(data.second == OIDN_UUID_SIZE &&
            std::memcmp(data.first, uuid.bytes, OIDN_UUID_SIZE) == 0);
      CHECK(oidn::newDevice(uuid));
    } else {
      CHECK(pd.getData("uuid").first == nullptr);
      EXPECT_GLOBAL_ERROR(oidn::Error::InvalidArgument, "uuid");
    }
    if (pd.get<bool>("luidSupported")) {
      const oidn::LUID luid = pd.get<oidn::LUID>("luid");
      CHECK(oidn::newDevice(luid));
      (void)pd.get<unsigned int>("nodeMask");
    }
    if (type == oidn::DeviceType::CPU) {
      foundCPU = true;
      oidn::DeviceRef device = pd.newDevice();
      device.commit();
      CHECK(device.get<oidn::DeviceType>("type") == oidn::DeviceType::CPU);
      EXPECT_OK(device);
    }
  }
  CHECK(foundCPU);
  EXPECT_GLOBAL_ERROR(oidn::Error::None, nullptr);

  const oidn::PhysicalDeviceRef none;
  CHECK(!none && none.getID() < 0);
  CHECK(none.get<std::string>("name").empty());
  EXPECT_GLOBAL_ERROR(oidn::Error::InvalidArgument, nullptr);
  CHECK(oidn::PhysicalDeviceRef(0).get<int>("noSuchParameter") == 0);
  EXPECT_GLOBAL_ERROR(oidn::Error::InvalidArgument, "noSuchParameter");
}

// -- flag sets -------------------------------------------------------------------------

void flags()
{
  typedef oidn::ExternalMemoryTypeFlag F;
  static_assert(static_cast<int>(F::OpaqueFD | F::DMABuf) == 3, "constexpr flag sets");

  oidn::ExternalMemoryTypeFlags set = F::OpaqueFD | F::DMABuf;
  CHECK(static_cast<int>(set) == 3);
  CHECK(set & F::DMABuf);
  CHECK(!(set & F::OpaqueWin32));
  set ^= F::OpaqueFD;
  CHECK(set == F::DMABuf && F::DMABuf == set);
  set |= F::D3D12Heap;
  CHECK(static_cast<int>(set) == (OIDN_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF |
                                  OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D12_HEAP));
  CHECK((F::OpaqueFD ^ set) == (F::OpaqueFD | F::DMABuf | F::D3D12Heap));
  set &= F::D3D12Heap;
  CHECK(F::D3D12Heap == set && set != F::DMABuf);
  const oidn::ExternalMemoryTypeFlags empty;
  CHECK(!empty && empty == F::None);
}

} // namespace

int main()
{
  // OIDN's example starts from the default device; it must exist here
  {
    oidn::DeviceRef device = oidn::newDevice();
    CHECK(device);
    device.commit();
    EXPECT_OK(device);
  }

  oidn::DeviceRef device = oidn::newDevice(oidn::DeviceType::CPU);
  CHECK(device);
  device.set("verbose", 0);
  device.set("setAffinity", false);
  device.set("numThreads", 2u);
  device.commit();
  EXPECT_OK(device);
  if (!device)
    return 1;

  basicFlow(device);
  sharedImages(device);
  refSemantics(device);
  parameters(device);
  errors(device);
  progress(device);
  atrous(device);
  physicalDevices();
  flags();

  std::printf("api_cpp (C++ %ld): %d failure(s)\n", static_cast<long>(__cplusplus), failures);
  return failures == 0 ? 0 : 1;
}
