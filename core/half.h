/* IEEE 754 binary16 <-> binary32 conversion, exact and branch-light, usable
 * on host and device.  Rounding to half is round-to-nearest-even; overflow
 * gives infinity and NaN stays NaN, like the hardware conversions. */
#pragma once

#include <stdint.h>
#include <string.h>

#include "platform.h"

LULL_HD uint32_t lull_float_bits(float f)
{
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

LULL_HD float lull_bits_float(uint32_t u)
{
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* 2^k for |k| <= 126, built from its bits (exact). */
LULL_HD float lull_pow2(int k)
{
  return lull_bits_float((uint32_t)(127 + k) << 23);
}

LULL_HD float lull_half_to_float(uint16_t h)
{
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) /* infinity or NaN */
    return lull_bits_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) /* normal */
    return lull_bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  /* zero or subnormal: mantissa * 2^-24 is exact in float */
  const float magnitude = (float)mantissa * 5.9604644775390625e-8f;
  return sign ? -magnitude : magnitude;
}

LULL_HD uint16_t lull_float_to_half(float f)
{
  const uint32_t u = lull_float_bits(f);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) /* infinity or NaN (keep NaN quiet and non-zero) */
    return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) /* rounds to >= 65520: overflow */
    return (uint16_t)(sign | 0x7c00u);
  if (abs < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
    if (abs < 0x33000000u) /* below half of the smallest subnormal */
      return sign;
    const uint32_t shift = 126u - (abs >> 23);     /* 14..24 */
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    uint32_t h = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (h & 1u)))
      ++h;
    return (uint16_t)(sign | h);
  }
  /* normal: rebias the exponent and round the mantissa to 10 bits */
  uint32_t h = ((abs - 0x38000000u) >> 13);
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h;
  return (uint16_t)(sign | h);
}
