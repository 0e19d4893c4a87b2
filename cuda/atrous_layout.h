/* The permuted image layouts of the fast à-trous schedule (Dolp, Hanika and
 * Dachsbacher 2024, §3), one image axis at a time: both axes are permuted
 * independently (the paper's "rectangular schedules", §3.1).
 *
 * Level l of the filter reads its input in layout l and writes its output
 * in layout l + 1; layout 0 is the original image.  Layout l + 1 is layout
 * l with the even positions packed to the front and the odd positions
 * behind them (the decomposition σ2↓ of §3.1, applied to the embedded
 * positions so that all sub-images of a level are split in one pass: the
 * "ascending order" τ_I of §3.2, whose Euclidean division packs sub-images
 * without padding).  In the first step the odd half is also reversed: the
 * boundary bijection σ_b of §3.4, which for the ascending order needs to be
 * applied in the first iteration only (Fig. 4, line 14).
 *
 * What this buys (§3.1): in layout l, the pixels x and x + 2^l of the same
 * residue class mod 2^l are neighbours, so level l's taps, 2^l apart in the
 * image, are 1 apart in memory.  A tap that leaves its sub-image lands in
 * the neighbouring, mirrored sub-image, i.e. near the image border (§4.1).
 * Every sub-image of an odd coordinate runs backwards from layout 1 on.
 *
 * These are LULL_HD functions so that the CUDA kernels, the host that
 * builds the lookup tables, and the CPU tests share them. */
#pragma once

#include "../core/platform.h"

/* Position in layout level + 1 of the pixel at position p of layout level
 * (0 <= p < n, n = image width or height): σ2↓, with σ_b at level 0. */
LULL_HD int lull_layout_step(int p, int n, int level)
{
  const int half = p >> 1;
  if ((p & 1) == 0)
    return half;
  const int evens = (n + 1) >> 1;
  /* σ_b: the odd half of the first split runs backwards, so its first
   * element sits next to the even half's last one (n - 1 - p/2 for odd p) */
  return level == 0 ? n - 1 - half : evens + half;
}

/* Position in layout `level` of original coordinate x (applies the steps). */
LULL_HD int lull_layout_position(int x, int n, int level)
{
  int p = x;
  for (int l = 0; l < level; ++l)
    p = lull_layout_step(p, n, l);
  return p;
}

/* +1 when increasing positions of x's sub-image in layout `level` mean
 * increasing x, -1 when the sub-image runs backwards (odd x, level >= 1). */
LULL_HD int lull_layout_direction(int x, int level)
{
  return (level >= 1 && (x & 1)) ? -1 : 1;
}

/* Reflects a coordinate that lies up to 2 outside [0, n) back inside:
 * the mirroring of period 2 n - 2 that keeps the edge pixel once (-1 -> 1,
 * n -> n - 2).  Used where a tap leaves the whole embedded image: the
 * permuted schedule mirrors there as well.  n = 2 has period 2, which one
 * fold at each end does not reach from n + 1 (3 -> -1): the second |p|
 * takes it to 1, where a clamp at 0 gave 0 and made the taps of 2-pixel
 * images asymmetric; it costs what that clamp did (this runs for every
 * pixel the level kernel stages).  The final minimum only keeps inside
 * the loads of a tile that reaches far past a small image (no output
 * pixel reads those), and maps everything to 0 for n = 1. */
LULL_HD int lull_layout_reflect(int p, int n)
{
  if (p < 0)
    p = -p;
  if (p >= n)
    p = 2 * n - 2 - p;
  if (p < 0)
    p = -p;
  return p >= n ? n - 1 : p;
}

/* -- shared-memory thread mapping (§3.5) ---------------------------------
 *
 * The GCD test: a warp's accesses of `elem_words` 4-byte words each go
 * through the 32 banks in wavefronts of 32 / elem_words threads; columns of
 * a row-major tile of row stride `stride` elements conflict after
 * n = banks / gcd(stride, banks) rows, banks = 32 / elem_words.  The bank
 * pattern tile d x n, d = gcd(stride, banks), is conflict-free for any
 * shift inside the tile (§3.5, "Construction" and "Properties"). */
LULL_HD int lull_gcd(int a, int b)
{
  while (b) {
    const int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

LULL_HD void lull_bank_pattern_tile(int stride_elems, int elem_words, int* d, int* n)
{
  const int banks = 32 / elem_words;
  *d = lull_gcd(stride_elems, banks);
  *n = banks / *d;
}
