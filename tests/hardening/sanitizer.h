/* LULL_ASAN is defined when this file is compiled with AddressSanitizer
 * (GCC or clang): tests then skip what ASan cannot run (address-space
 * limits) and shorten what it makes slow. */
#pragma once

#if defined(__SANITIZE_ADDRESS__)
  #define LULL_ASAN 1
#elif defined(__has_feature)
  #if __has_feature(address_sanitizer)
    #define LULL_ASAN 1
  #endif
#endif
