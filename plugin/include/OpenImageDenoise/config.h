/* lull's text of Open Image Denoise's config.h: version and feature macros.
 * lull implements the OIDN 2.5 C API, so programs written against OIDN see
 * version 2.5.1 here and at run time (device parameter "version"); OIDN
 * 2.5.1's own test program (oidnTest) is the yardstick
 * (docs/oidn-compatibility.md). */
#pragma once

#define OIDN_VERSION_MAJOR 2
#define OIDN_VERSION_MINOR 5
#define OIDN_VERSION_PATCH 1
#define OIDN_VERSION 20501
#define OIDN_VERSION_STRING "2.5.1 (lull)"
#define OIDN_VERSION_STRING_SHORT "2.5.1"

/* lull's own version, independent of the API level it implements. */
#define LULL_VERSION_MAJOR 0
#define LULL_VERSION_MINOR 1
#define LULL_VERSION_PATCH 0
#define LULL_VERSION_STRING "0.1.0"

/* lull exports a C API only; OIDN's optional C++ API namespace is not used. */
#define OIDN_API_NAMESPACE_BEGIN
#define OIDN_API_NAMESPACE_END
#define OIDN_API_NAMESPACE_USING

#define OIDN_NAMESPACE oidn
#define OIDN_NAMESPACE_BEGIN namespace oidn {
#define OIDN_NAMESPACE_END }
#define OIDN_NAMESPACE_USING using namespace oidn;

/* The device types built, as in OIDN: OIDN_DEVICE_CUDA only with the CUDA
 * backend.  This file is the header of a CUDA build; the copy programs see
 * (build tree and install) drops the line in builds without CUDA
 * (plugin/CMakeLists.txt). */
#define OIDN_DEVICE_CPU
#define OIDN_DEVICE_CUDA
#define OIDN_FILTER_RT
#define OIDN_FILTER_RTLIGHTMAP

#if defined(OIDN_STATIC_LIB)
  #define OIDN_API_IMPORT
  #define OIDN_API_EXPORT
#elif defined(_WIN32)
  #define OIDN_API_IMPORT __declspec(dllimport)
  #define OIDN_API_EXPORT __declspec(dllexport)
#else
  #define OIDN_API_IMPORT
  #define OIDN_API_EXPORT __attribute__((visibility("default")))
#endif

#if defined(OpenImageDenoise_EXPORTS) || defined(LULL_BUILDING_LIBRARY)
  #define OIDN_API OIDN_API_EXPORT
#else
  #define OIDN_API OIDN_API_IMPORT
#endif

#if defined(_MSC_VER)
  #define OIDN_DEPRECATED(msg) __declspec(deprecated(msg))
#else
  #define OIDN_DEPRECATED(msg) __attribute__((deprecated(msg)))
#endif
