// lull's own text of Open Image Denoise's C++ API (the 2.4 surface; OIDN 2.5's
// external semaphores are in the C API, oidn.h).
//
// Header-only, C++11, no exceptions: thin RAII wrappers over the C functions
// of oidn.h, so C++ programs written against OIDN compile against lull
// unchanged and link only the C symbols.  Errors are read with getError()
// or an error callback, as in C.  Written from the API's description, not
// from OIDN's source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oidn.h"

OIDN_NAMESPACE_BEGIN

// ---------------------------------------------------------------------------
// Enums: the C values, so a static_cast converts either way.
// ---------------------------------------------------------------------------

enum class DeviceType
{
  Default = OIDN_DEVICE_TYPE_DEFAULT,
  CPU = OIDN_DEVICE_TYPE_CPU,
  SYCL = OIDN_DEVICE_TYPE_SYCL,
  CUDA = OIDN_DEVICE_TYPE_CUDA,
  HIP = OIDN_DEVICE_TYPE_HIP,
  Metal = OIDN_DEVICE_TYPE_METAL,
};

enum class Error
{
  None = OIDN_ERROR_NONE,
  Unknown = OIDN_ERROR_UNKNOWN,
  InvalidArgument = OIDN_ERROR_INVALID_ARGUMENT,
  InvalidOperation = OIDN_ERROR_INVALID_OPERATION,
  OutOfMemory = OIDN_ERROR_OUT_OF_MEMORY,
  UnsupportedHardware = OIDN_ERROR_UNSUPPORTED_HARDWARE,
  Cancelled = OIDN_ERROR_CANCELLED,
};

enum class Format
{
  Undefined = OIDN_FORMAT_UNDEFINED,
  Float = OIDN_FORMAT_FLOAT,
  Float2 = OIDN_FORMAT_FLOAT2,
  Float3 = OIDN_FORMAT_FLOAT3,
  Float4 = OIDN_FORMAT_FLOAT4,
  Half = OIDN_FORMAT_HALF,
  Half2 = OIDN_FORMAT_HALF2,
  Half3 = OIDN_FORMAT_HALF3,
  Half4 = OIDN_FORMAT_HALF4,
};

enum class Storage
{
  Undefined = OIDN_STORAGE_UNDEFINED,
  Host = OIDN_STORAGE_HOST,
  Device = OIDN_STORAGE_DEVICE,
  Managed = OIDN_STORAGE_MANAGED,
};

enum class Quality
{
  Default = OIDN_QUALITY_DEFAULT,
  Fast = OIDN_QUALITY_FAST,
  Balanced = OIDN_QUALITY_BALANCED,
  High = OIDN_QUALITY_HIGH,
};

enum class ExternalMemoryTypeFlag
{
  None = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_NONE,
  OpaqueFD = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD,
  DMABuf = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF,
  OpaqueWin32 = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_WIN32,
  OpaqueWin32KMT = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_WIN32_KMT,
  D3D11Texture = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D11_TEXTURE,
  D3D11TextureKMT = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D11_TEXTURE_KMT,
  D3D11Resource = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D11_RESOURCE,
  D3D11ResourceKMT = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D11_RESOURCE_KMT,
  D3D12Heap = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D12_HEAP,
  D3D12Resource = OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D12_RESOURCE,
};

static_assert(static_cast<int>(DeviceType::Metal) == OIDN_DEVICE_TYPE_METAL, "DeviceType");
static_assert(static_cast<int>(Error::Cancelled) == OIDN_ERROR_CANCELLED, "Error");
static_assert(static_cast<int>(Format::Half4) == OIDN_FORMAT_HALF4, "Format");
static_assert(static_cast<int>(Storage::Managed) == OIDN_STORAGE_MANAGED, "Storage");
static_assert(static_cast<int>(Quality::Fast) == OIDN_QUALITY_FAST, "Quality");
static_assert(static_cast<int>(ExternalMemoryTypeFlag::D3D12Resource) ==
                OIDN_EXTERNAL_MEMORY_TYPE_FLAG_D3D12_RESOURCE,
              "ExternalMemoryTypeFlag");

// ---------------------------------------------------------------------------
// Flags: a set of bits of a flag enum class, which has no operators itself.
// ---------------------------------------------------------------------------

// Flag enums opt in, so the free operators below touch no other enum.
template<typename FlagT>
struct IsFlag
{
  static constexpr bool value = false;
};

template<>
struct IsFlag<ExternalMemoryTypeFlag>
{
  static constexpr bool value = true;
};

template<typename FlagT>
class Flags
{
public:
  using MaskType = typename std::underlying_type<FlagT>::type;

  constexpr Flags() noexcept : mask(0) {}
  // implicit: one flag is a set of one bit, usable wherever Flags are
  // NOLINTNEXTLINE(google-explicit-constructor)
  constexpr Flags(FlagT flag) noexcept : mask(static_cast<MaskType>(flag)) {}
  constexpr explicit Flags(MaskType bits) noexcept : mask(bits) {}

  constexpr bool operator!() const noexcept { return mask == 0; }
  constexpr explicit operator bool() const noexcept { return mask != 0; }
  constexpr explicit operator MaskType() const noexcept { return mask; }

  constexpr Flags operator&(const Flags& other) const noexcept
  {
    return Flags(static_cast<MaskType>(mask & other.mask));
  }
  constexpr Flags operator|(const Flags& other) const noexcept
  {
    return Flags(static_cast<MaskType>(mask | other.mask));
  }
  constexpr Flags operator^(const Flags& other) const noexcept
  {
    return Flags(static_cast<MaskType>(mask ^ other.mask));
  }

  // (not constexpr: C++11 constexpr functions cannot assign)
  Flags& operator&=(const Flags& other) noexcept { mask &= other.mask; return *this; }
  Flags& operator|=(const Flags& other) noexcept { mask |= other.mask; return *this; }
  Flags& operator^=(const Flags& other) noexcept { mask ^= other.mask; return *this; }

  constexpr bool operator==(const Flags& other) const noexcept { return mask == other.mask; }
  constexpr bool operator!=(const Flags& other) const noexcept { return mask != other.mask; }

private:
  MaskType mask;
};

// flag op flag gives Flags, so `OpaqueFD | DMABuf` reads as in C.
template<typename FlagT>
constexpr typename std::enable_if<IsFlag<FlagT>::value, Flags<FlagT>>::type
operator&(FlagT a, FlagT b) noexcept
{
  return Flags<FlagT>(a) & b;
}

template<typename FlagT>
constexpr typename std::enable_if<IsFlag<FlagT>::value, Flags<FlagT>>::type
operator|(FlagT a, FlagT b) noexcept
{
  return Flags<FlagT>(a) | b;
}

template<typename FlagT>
constexpr typename std::enable_if<IsFlag<FlagT>::value, Flags<FlagT>>::type
operator^(FlagT a, FlagT b) noexcept
{
  return Flags<FlagT>(a) ^ b;
}

// flag op Flags (the member operators only take the Flags on the left).
template<typename FlagT>
constexpr typename std::enable_if<IsFlag<FlagT>::value, Flags<FlagT>>::type
operator&(FlagT a, const Flags<FlagT>& b) noexcept
{
  return Flags<FlagT>(a) & b;
}

template<typename FlagT>
constexpr typename std::enable_if<IsFlag<FlagT>::value, Flags<FlagT>>::type
operator|(FlagT a, const Flags<FlagT>& b) noexcept
{
  return Flags<FlagT>(a) | b;
}

template<typename FlagT>
constexpr typename std::enable_if<IsFlag<FlagT>::value, Flags<FlagT>>::type
operator^(FlagT a, const Flags<FlagT>& b) noexcept
{
  return Flags<FlagT>(a) ^ b;
}

// (Flags<FlagT>(a) spelt out: with `b == a`, C++20's reversed operators
// would pick this function again)
template<typename FlagT>
constexpr typename std::enable_if<IsFlag<FlagT>::value, bool>::type
operator==(FlagT a, const Flags<FlagT>& b) noexcept
{
  return Flags<FlagT>(a) == b;
}

template<typename FlagT>
constexpr typename std::enable_if<IsFlag<FlagT>::value, bool>::type
operator!=(FlagT a, const Flags<FlagT>& b) noexcept
{
  return Flags<FlagT>(a) != b;
}

using ExternalMemoryTypeFlags = Flags<ExternalMemoryTypeFlag>;

// ---------------------------------------------------------------------------
// Callbacks, identifiers
// ---------------------------------------------------------------------------

// The C callback with the code as oidn::Error.  setErrorFunction passes it
// to C as an OIDNErrorFunction: Error has the C values and an int-sized
// underlying type, so the two are called alike on every ABI OIDN supports.
typedef void (*ErrorFunction)(void* userPtr, Error code, const char* message);

// Identical to the C type: returning false cancels the execution.
typedef bool (*ProgressMonitorFunction)(void* userPtr, double n);

static_assert(sizeof(Error) == sizeof(OIDNError), "Error must be passed like OIDNError");

struct UUID
{
  uint8_t bytes[OIDN_UUID_SIZE];
};

// A Windows LUID: its two halves, or its bytes.  The named halves need an
// anonymous struct, a common extension (GCC, Clang, MSVC) that ISO C++
// lacks: its pedantic warning is silenced for this declaration only.
#if defined(_MSC_VER) && !defined(__clang__)
  #pragma warning(push)
  #pragma warning(disable : 4201) // nameless struct/union
#elif defined(__GNUC__)
  #pragma GCC diagnostic push
  #pragma GCC diagnostic ignored "-Wpedantic"
#endif
struct LUID
{
  union
  {
    struct
    {
      uint32_t low;
      int32_t high;
    };
    uint8_t bytes[OIDN_LUID_SIZE];
  };
};
#if defined(_MSC_VER) && !defined(__clang__)
  #pragma warning(pop)
#elif defined(__GNUC__)
  #pragma GCC diagnostic pop
#endif

static_assert(sizeof(UUID) == OIDN_UUID_SIZE, "UUID layout");
static_assert(sizeof(LUID) == OIDN_LUID_SIZE, "LUID layout");

// ---------------------------------------------------------------------------
// Reference-counted handles
// ---------------------------------------------------------------------------

namespace detail {

// The retain/release pair of each C handle type.
template<typename HandleT>
struct HandleTraits;

template<>
struct HandleTraits<OIDNDevice>
{
  static void retain(OIDNDevice h) { oidnRetainDevice(h); }
  static void release(OIDNDevice h) { oidnReleaseDevice(h); }
};

template<>
struct HandleTraits<OIDNBuffer>
{
  static void retain(OIDNBuffer h) { oidnRetainBuffer(h); }
  static void release(OIDNBuffer h) { oidnReleaseBuffer(h); }
};

template<>
struct HandleTraits<OIDNFilter>
{
  static void retain(OIDNFilter h) { oidnRetainFilter(h); }
  static void release(OIDNFilter h) { oidnReleaseFilter(h); }
};

// One owned reference to a C object; DerivedT (CRTP) lets assignment return
// the derived Ref.  A null handle is never retained or released: the C API
// would report that as an error.
template<typename HandleT, typename DerivedT>
class Ref
{
public:
  Ref() noexcept : handle(nullptr) {}

  // Adopts the reference the caller holds (e.g. fresh from oidnNew*);
  // implicit as in OIDN, so `DeviceRef d = oidnNewDevice(...)` works.
  Ref(HandleT adopted) noexcept : handle(adopted) {} // NOLINT(google-explicit-constructor)

  Ref(const Ref& other) : handle(other.handle)
  {
    if (handle)
      HandleTraits<HandleT>::retain(handle);
  }

  Ref(Ref&& other) noexcept : handle(other.handle) { other.handle = nullptr; }

  // Retain first, so assigning a Ref to itself keeps the object alive.
  DerivedT& operator=(const Ref& other)
  {
    if (other.handle)
      HandleTraits<HandleT>::retain(other.handle);
    reset(other.handle);
    return static_cast<DerivedT&>(*this);
  }

  DerivedT& operator=(Ref&& other) noexcept
  {
    if (this != &other) {
      reset(other.handle);
      other.handle = nullptr;
    }
    return static_cast<DerivedT&>(*this);
  }

  // Unlike the constructor, assignment shares the handle: the caller keeps
  // its own reference.
  DerivedT& operator=(HandleT other)
  {
    if (other)
      HandleTraits<HandleT>::retain(other);
    reset(other);
    return static_cast<DerivedT&>(*this);
  }

  HandleT getHandle() const noexcept { return handle; }

  explicit operator bool() const noexcept { return handle != nullptr; }

  // Gives up ownership without releasing: the caller now holds the
  // reference (and must release it).
  HandleT release() noexcept
  {
    HandleT old = handle;
    handle = nullptr;
    return old;
  }

protected:
  // (protected: a Ref is destroyed as the derived Ref, never through a
  // pointer to this base, so it needs no virtual destructor)
  ~Ref()
  {
    if (handle)
      HandleTraits<HandleT>::release(handle);
  }

private:
  void reset(HandleT next)
  {
    HandleT old = handle;
    handle = next;
    if (old)
      HandleTraits<HandleT>::release(old);
  }

  HandleT handle;
};

// get<T>'s primary template: only the specialisations exist.
template<typename T>
struct Unsupported : std::false_type
{
};

} // namespace detail

// ---------------------------------------------------------------------------
// BufferRef
// ---------------------------------------------------------------------------

class BufferRef : public detail::Ref<OIDNBuffer, BufferRef>
{
public:
  using Ref::Ref;
  using Ref::operator=;

  size_t getSize() const { return oidnGetBufferSize(getHandle()); }

  Storage getStorage() const { return static_cast<Storage>(oidnGetBufferStorage(getHandle())); }

  // Host-accessible storage only (Host, Managed; any on the CPU device).
  void* getData() const { return oidnGetBufferData(getHandle()); }

  void read(size_t byteOffset, size_t byteSize, void* dstHostPtr) const
  {
    oidnReadBuffer(getHandle(), byteOffset, byteSize, dstHostPtr);
  }

  // Touch dstHostPtr only after DeviceRef::sync().
  void readAsync(size_t byteOffset, size_t byteSize, void* dstHostPtr) const
  {
    oidnReadBufferAsync(getHandle(), byteOffset, byteSize, dstHostPtr);
  }

  void write(size_t byteOffset, size_t byteSize, const void* srcHostPtr) const
  {
    oidnWriteBuffer(getHandle(), byteOffset, byteSize, srcHostPtr);
  }

  // Keep srcHostPtr unchanged until DeviceRef::sync().
  void writeAsync(size_t byteOffset, size_t byteSize, const void* srcHostPtr) const
  {
    oidnWriteBufferAsync(getHandle(), byteOffset, byteSize, srcHostPtr);
  }
};

// ---------------------------------------------------------------------------
// FilterRef
// ---------------------------------------------------------------------------

class FilterRef : public detail::Ref<OIDNFilter, FilterRef>
{
public:
  using Ref::Ref;
  using Ref::operator=;

  // Strides of 0 mean tightly packed.
  void setImage(const char* name, const BufferRef& buffer, Format format, size_t width,
                size_t height, size_t byteOffset = 0, size_t pixelByteStride = 0,
                size_t rowByteStride = 0) const
  {
    oidnSetFilterImage(getHandle(), name, buffer.getHandle(), static_cast<OIDNFormat>(format),
                       width, height, byteOffset, pixelByteStride, rowByteStride);
  }

  // Memory the device can access (host memory on the CPU device); no copy.
  void setImage(const char* name, void* devPtr, Format format, size_t width, size_t height,
                size_t byteOffset = 0, size_t pixelByteStride = 0,
                size_t rowByteStride = 0) const
  {
    oidnSetSharedFilterImage(getHandle(), name, devPtr, static_cast<OIDNFormat>(format), width,
                             height, byteOffset, pixelByteStride, rowByteStride);
  }

  void unsetImage(const char* name) const { oidnUnsetFilterImage(getHandle(), name); }

  OIDN_DEPRECATED("oidn::FilterRef::removeImage is deprecated. Use unsetImage instead.")
  void removeImage(const char* name) const { unsetImage(name); }

  // Host memory, read at commit; call updateData after changing it.
  void setData(const char* name, void* hostPtr, size_t byteSize) const
  {
    oidnSetSharedFilterData(getHandle(), name, hostPtr, byteSize);
  }

  void updateData(const char* name) const { oidnUpdateFilterData(getHandle(), name); }

  void unsetData(const char* name) const { oidnUnsetFilterData(getHandle(), name); }

  OIDN_DEPRECATED("oidn::FilterRef::removeData is deprecated. Use unsetData instead.")
  void removeData(const char* name) const { unsetData(name); }

  void set(const char* name, bool value) const { oidnSetFilterBool(getHandle(), name, value); }

  void set(const char* name, int value) const { oidnSetFilterInt(getHandle(), name, value); }

  void set(const char* name, Quality value) const
  {
    oidnSetFilterInt(getHandle(), name, static_cast<int>(value));
  }

  void set(const char* name, float value) const { oidnSetFilterFloat(getHandle(), name, value); }

  // T: bool, int, Quality, float.
  template<typename T>
  T get(const char* name) const
  {
    static_assert(detail::Unsupported<T>::value, "FilterRef::get: unsupported parameter type");
    return T(name);
  }

  void setProgressMonitorFunction(ProgressMonitorFunction func, void* userPtr = nullptr) const
  {
    oidnSetFilterProgressMonitorFunction(getHandle(), func, userPtr);
  }

  void commit() const { oidnCommitFilter(getHandle()); }

  void execute() const { oidnExecuteFilter(getHandle()); }

  // Read the output only after DeviceRef::sync().
  void executeAsync() const { oidnExecuteFilterAsync(getHandle()); }

#if defined(SYCL_LANGUAGE_VERSION)
  // After the events in depEvents; the returned event completes with it.
  sycl::event executeAsync(const std::vector<sycl::event>& depEvents) const
  {
    sycl::event doneEvent;
    oidnExecuteSYCLFilterAsync(getHandle(), depEvents.data(),
                               static_cast<int>(depEvents.size()), &doneEvent);
    return doneEvent;
  }
#endif
};

template<>
inline bool FilterRef::get<bool>(const char* name) const
{
  return oidnGetFilterBool(getHandle(), name);
}

template<>
inline int FilterRef::get<int>(const char* name) const
{
  return oidnGetFilterInt(getHandle(), name);
}

template<>
inline Quality FilterRef::get<Quality>(const char* name) const
{
  return static_cast<Quality>(oidnGetFilterInt(getHandle(), name));
}

template<>
inline float FilterRef::get<float>(const char* name) const
{
  return oidnGetFilterFloat(getHandle(), name);
}

// ---------------------------------------------------------------------------
// DeviceRef
// ---------------------------------------------------------------------------

class DeviceRef : public detail::Ref<OIDNDevice, DeviceRef>
{
public:
  using Ref::Ref;
  using Ref::operator=;

  void set(const char* name, bool value) const { oidnSetDeviceBool(getHandle(), name, value); }

  void set(const char* name, int value) const { oidnSetDeviceInt(getHandle(), name, value); }

  void set(const char* name, unsigned int value) const
  {
    oidnSetDeviceUInt(getHandle(), name, value);
  }

  // T: bool, int, unsigned int, DeviceType, ExternalMemoryTypeFlags.
  template<typename T>
  T get(const char* name) const
  {
    static_assert(detail::Unsupported<T>::value, "DeviceRef::get: unsupported parameter type");
    return T(name);
  }

  void setErrorFunction(ErrorFunction func, void* userPtr = nullptr) const
  {
    // The same signature but for the enum type of the code (see
    // ErrorFunction); the detour through void (*)() is the conversion
    // compilers accept without -Wcast-function-type warnings.
    typedef void (*AnyFunction)();
    oidnSetDeviceErrorFunction(
      getHandle(), reinterpret_cast<OIDNErrorFunction>(reinterpret_cast<AnyFunction>(func)),
      userPtr);
  }

  // Returns and clears this thread's first error on the device (the global
  // slot when the Ref is null).
  Error getError() const { return static_cast<Error>(oidnGetDeviceError(getHandle(), nullptr)); }

  // As getError(); outMessage is valid until the next API call of this
  // thread, nullptr when there was no error.
  Error getError(const char*& outMessage) const
  {
    return static_cast<Error>(oidnGetDeviceError(getHandle(), &outMessage));
  }

  void commit() const { oidnCommitDevice(getHandle()); }

  void sync() const { oidnSyncDevice(getHandle()); }

  BufferRef newBuffer(size_t byteSize) const { return oidnNewBuffer(getHandle(), byteSize); }

  BufferRef newBuffer(size_t byteSize, Storage storage) const
  {
    return oidnNewBufferWithStorage(getHandle(), byteSize, static_cast<OIDNStorage>(storage));
  }

  // Wraps memory the caller owns and keeps alive; no copy.
  BufferRef newBuffer(void* ptr, size_t byteSize) const
  {
    return oidnNewSharedBuffer(getHandle(), ptr, byteSize);
  }

  // Imports a POSIX file descriptor (see "externalMemoryTypes").
  BufferRef newBuffer(ExternalMemoryTypeFlag fdType, int fd, size_t byteSize) const
  {
    return oidnNewSharedBufferFromFD(
      getHandle(), static_cast<OIDNExternalMemoryTypeFlag>(fdType), fd, byteSize);
  }

  // Imports a Win32 handle or named object (exactly one of them non-null).
  BufferRef newBuffer(ExternalMemoryTypeFlag handleType, void* win32Handle, const void* name,
                      size_t byteSize) const
  {
    return oidnNewSharedBufferFromWin32Handle(getHandle(),
                                              static_cast<OIDNExternalMemoryTypeFlag>(handleType),
                                              win32Handle, name, byteSize);
  }

#if defined(__OBJC__)
  // (Objective-C only: elsewhere MTLBuffer_id is a void*, which the shared
  // buffer overload above already takes with a size)
  BufferRef newBuffer(MTLBuffer_id buffer) const
  {
    return oidnNewSharedBufferFromMetal(getHandle(), buffer);
  }
#endif

  FilterRef newFilter(const char* type) const { return oidnNewFilter(getHandle(), type); }
};

template<>
inline bool DeviceRef::get<bool>(const char* name) const
{
  return oidnGetDeviceBool(getHandle(), name);
}

template<>
inline int DeviceRef::get<int>(const char* name) const
{
  return oidnGetDeviceInt(getHandle(), name);
}

template<>
inline unsigned int DeviceRef::get<unsigned int>(const char* name) const
{
  return oidnGetDeviceUInt(getHandle(), name);
}

template<>
inline DeviceType DeviceRef::get<DeviceType>(const char* name) const
{
  return static_cast<DeviceType>(oidnGetDeviceInt(getHandle(), name));
}

template<>
inline ExternalMemoryTypeFlags DeviceRef::get<ExternalMemoryTypeFlags>(const char* name) const
{
  return ExternalMemoryTypeFlags(
    static_cast<ExternalMemoryTypeFlags::MaskType>(oidnGetDeviceInt(getHandle(), name)));
}

// The calling thread's global error slot: errors with no device to carry
// them (failed device creation, physical device queries, null handles).
inline Error getError()
{
  return static_cast<Error>(oidnGetDeviceError(nullptr, nullptr));
}

inline Error getError(const char*& outMessage)
{
  return static_cast<Error>(oidnGetDeviceError(nullptr, &outMessage));
}

// ---------------------------------------------------------------------------
// Device support and creation
// ---------------------------------------------------------------------------

inline bool isCPUDeviceSupported() { return oidnIsCPUDeviceSupported(); }

// (sycl::device is only declared outside SYCL compilers; a reference needs
// no more)
inline bool isSYCLDeviceSupported(const sycl::device& device)
{
  return oidnIsSYCLDeviceSupported(&device);
}

inline bool isCUDADeviceSupported(int deviceID) { return oidnIsCUDADeviceSupported(deviceID); }

inline bool isHIPDeviceSupported(int deviceID) { return oidnIsHIPDeviceSupported(deviceID); }

inline bool isMetalDeviceSupported(MTLDevice_id device)
{
  return oidnIsMetalDeviceSupported(device);
}

inline DeviceRef newDevice(DeviceType type = DeviceType::Default)
{
  return oidnNewDevice(static_cast<OIDNDeviceType>(type));
}

inline DeviceRef newDevice(int physicalDeviceID) { return oidnNewDeviceByID(physicalDeviceID); }

inline DeviceRef newDevice(const UUID& uuid) { return oidnNewDeviceByUUID(uuid.bytes); }

inline DeviceRef newDevice(const LUID& luid) { return oidnNewDeviceByLUID(luid.bytes); }

inline DeviceRef newDevice(int pciDomain, int pciBus, int pciDevice, int pciFunction)
{
  return oidnNewDeviceByPCIAddress(pciDomain, pciBus, pciDevice, pciFunction);
}

inline DeviceRef newSYCLDevice(const sycl::queue& queue) { return oidnNewSYCLDevice(&queue, 1); }

#if defined(SYCL_LANGUAGE_VERSION)
// (a vector needs the complete sycl::queue, which only SYCL compilers have)
inline DeviceRef newSYCLDevice(const std::vector<sycl::queue>& queues)
{
  return oidnNewSYCLDevice(queues.data(), static_cast<int>(queues.size()));
}
#endif

// A null stream is the device's default stream.
inline DeviceRef newCUDADevice(int deviceID, cudaStream_t stream)
{
  return oidnNewCUDADevice(&deviceID, &stream, 1);
}

namespace detail {

// The pair count for vectors of IDs and streams; a mismatch is passed on
// as an invalid count (the C API reports it) rather than read past the
// shorter vector.
template<typename A, typename B>
inline int pairCount(const std::vector<A>& a, const std::vector<B>& b)
{
  return a.size() == b.size() ? static_cast<int>(a.size()) : -1;
}

} // namespace detail

inline DeviceRef newCUDADevice(const std::vector<int>& deviceIDs,
                               const std::vector<cudaStream_t>& streams)
{
  return oidnNewCUDADevice(deviceIDs.data(), streams.data(),
                           detail::pairCount(deviceIDs, streams));
}

inline DeviceRef newHIPDevice(int deviceID, hipStream_t stream)
{
  return oidnNewHIPDevice(&deviceID, &stream, 1);
}

inline DeviceRef newHIPDevice(const std::vector<int>& deviceIDs,
                              const std::vector<hipStream_t>& streams)
{
  return oidnNewHIPDevice(deviceIDs.data(), streams.data(),
                          detail::pairCount(deviceIDs, streams));
}

inline DeviceRef newMetalDevice(MTLCommandQueue_id commandQueue)
{
  return oidnNewMetalDevice(&commandQueue, 1);
}

inline DeviceRef newMetalDevice(const std::vector<MTLCommandQueue_id>& commandQueues)
{
  return oidnNewMetalDevice(commandQueues.data(), static_cast<int>(commandQueues.size()));
}

// ---------------------------------------------------------------------------
// Physical devices
// ---------------------------------------------------------------------------

inline int getNumPhysicalDevices() { return oidnGetNumPhysicalDevices(); }

// A physical device by ID (0 .. getNumPhysicalDevices()-1): a plain value,
// nothing to retain.  Errors go to the global slot (oidn::getError()).
class PhysicalDeviceRef
{
public:
  PhysicalDeviceRef() noexcept : id(-1) {}
  PhysicalDeviceRef(int physicalDeviceID) noexcept // NOLINT(google-explicit-constructor)
    : id(physicalDeviceID)
  {
  }

  int getID() const noexcept { return id; }

  explicit operator bool() const noexcept { return id >= 0; }

  // T: bool, int, unsigned int, DeviceType, const char*, std::string, UUID,
  // LUID.
  template<typename T>
  T get(const char* name) const
  {
    static_assert(detail::Unsupported<T>::value,
                  "PhysicalDeviceRef::get: unsupported parameter type");
    return T(name);
  }

  // A data parameter ("uuid", "luid"): pointer and size, {nullptr, 0} on
  // error.  The pointer stays valid for the life of the process.
  std::pair<const void*, size_t> getData(const char* name) const
  {
    size_t byteSize = 0;
    const void* ptr = oidnGetPhysicalDeviceData(id, name, &byteSize);
    return std::make_pair(ptr, ptr ? byteSize : size_t(0));
  }

  DeviceRef newDevice() const { return oidnNewDeviceByID(id); }

private:
  // Copies a data parameter of exactly N bytes; zeros when it is missing
  // or of another size.
  template<size_t N>
  void copyData(const char* name, uint8_t (&out)[N]) const
  {
    const std::pair<const void*, size_t> data = getData(name);
    const uint8_t* src = static_cast<const uint8_t*>(data.first);
    for (size_t i = 0; i < N; ++i)
      out[i] = (src && data.second == N) ? src[i] : uint8_t(0);
  }

  int id;
};

template<>
inline bool PhysicalDeviceRef::get<bool>(const char* name) const
{
  return oidnGetPhysicalDeviceBool(id, name);
}

template<>
inline int PhysicalDeviceRef::get<int>(const char* name) const
{
  return oidnGetPhysicalDeviceInt(id, name);
}

template<>
inline unsigned int PhysicalDeviceRef::get<unsigned int>(const char* name) const
{
  return oidnGetPhysicalDeviceUInt(id, name);
}

template<>
inline DeviceType PhysicalDeviceRef::get<DeviceType>(const char* name) const
{
  return static_cast<DeviceType>(oidnGetPhysicalDeviceInt(id, name));
}

template<>
inline const char* PhysicalDeviceRef::get<const char*>(const char* name) const
{
  return oidnGetPhysicalDeviceString(id, name);
}

// (empty on error: std::string cannot hold a null pointer)
template<>
inline std::string PhysicalDeviceRef::get<std::string>(const char* name) const
{
  const char* str = oidnGetPhysicalDeviceString(id, name);
  return str ? std::string(str) : std::string();
}

template<>
inline UUID PhysicalDeviceRef::get<UUID>(const char* name) const
{
  UUID uuid;
  copyData(name, uuid.bytes);
  return uuid;
}

template<>
inline LUID PhysicalDeviceRef::get<LUID>(const char* name) const
{
  LUID luid;
  copyData(name, luid.bytes);
  return luid;
}

OIDN_NAMESPACE_END
