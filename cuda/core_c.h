/* The core's headers as seen from nvcc (which compiles .cu files as C++).
 *
 * The per-pixel formulas (LULL_HD inline functions) are included with C++
 * linkage so nvcc compiles them for host and device; the declarations of
 * the core's C functions and the backend interface get C linkage so they
 * link against the C objects of lull_core and the handle layer.  System
 * headers come first: their include guards keep them out of the extern "C"
 * block. */
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../core/platform.h"
#include "../core/half.h"
#include "../core/image.h"
#include "../core/atrous_math.h"
#include "../core/gradient_domain_planes.h"
#include "../core/temporal_math.h"
#include "../core/rdfc_math.h"
#include "../core/ddid_math.h"
#include "../core/rhf_math.h"

#if defined(__cplusplus)
extern "C" {
#endif
#include "../core/status.h"
#include "../core/atrous.h"
#include "../core/atrous_tiled.h"
#include "../core/gaussian.h"
#include "../core/backend.h"
#if defined(__cplusplus)
}
#endif
