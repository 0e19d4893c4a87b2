/* Whether the GPU code of a build runs on a device, from the build's CUDA
 * architectures and the device's compute capability, without touching the
 * device (no context is created to find out).
 *
 * The list is CMake's CUDA_ARCHITECTURES with commas for semicolons, e.g.
 * "75-real,80-real,90-real,90-virtual" (cuda/CMakeLists.txt passes it as
 * LULL_CUDA_ARCH_LIST).  CUDA's compatibility rules:
 *   - machine code for architecture A ("A-real", or a plain "A") runs on
 *     devices of A's major version whose minor version is at least A's
 *     (sm_80 code runs on 8.6 and 8.9, not on 9.0);
 *   - PTX for A ("A-virtual", or a plain "A") is compiled by the driver for
 *     any device of compute capability A or newer;
 *   - arch-specific code ("90a", "100a-real": features of one chip) runs
 *     on that compute capability exactly, machine code and PTX alike;
 *   - family code ("100f", "120f") runs on the same major version with a
 *     minor version at least its own, machine code and PTX alike.
 * Entries CMake resolves when it configures ("native", "all", "all-major")
 * cannot be judged here and count as running anywhere, which leaves the
 * check to the first launch. */
#pragma once

#include <string.h>

static inline int lull_cuda_arch_list_runs(const char* list, int major, int minor)
{
  const int cc = major * 10 + minor;
  const char* p = list;
  while (*p) {
    int arch = 0, digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 5) {
      arch = arch * 10 + (*p - '0');
      ++p;
      ++digits;
    }
    char suffix = 0; /* 'a' or 'f' */
    if ((*p == 'a' || *p == 'f') && digits > 0)
      suffix = *p++;
    int real = 1, ptx = 1;
    if (strncmp(p, "-real", 5) == 0) {
      ptx = 0;
      p += 5;
    } else if (strncmp(p, "-virtual", 8) == 0) {
      real = 0;
      p += 8;
    }
    if (digits == 0 || (*p != ',' && *p != '\0'))
      return 1; /* an entry of another form: not judged here */
    if (suffix == 'a' && arch == cc)
      return 1;
    if (suffix == 'f' && arch / 10 == major && arch % 10 <= minor)
      return 1;
    if (!suffix && real && arch / 10 == major && arch % 10 <= minor)
      return 1;
    if (!suffix && ptx && arch <= cc)
      return 1;
    if (*p == ',')
      ++p;
  }
  return 0;
}
