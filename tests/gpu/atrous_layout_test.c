/* The permuted layouts of cuda/atrous_layout.h (Dolp et al. 2024, §3),
 * checked on the CPU (no GPU needed): every layout is a bijection; inside a
 * sub-image of layout l, memory neighbours are 2^l apart in the image, in
 * the direction lull_layout_direction says; the first split mirrors the odd
 * half (Fig. 6(a) for n = 16); and the warp mapping of the permuted kernel
 * follows the GCD test of §3.5. */
#include <stdlib.h>
#include <string.h>

#include "../../cuda/atrous_layout.h"
#include "test_util.h"

static void check_axis(int n, int levels)
{
  int* orig = malloc((size_t)n * sizeof(int));
  int* seen = malloc((size_t)n * sizeof(int));
  for (int l = 0; l <= levels; ++l) {
    memset(seen, 0, (size_t)n * sizeof(int));
    for (int x = 0; x < n; ++x) {
      const int p = lull_layout_position(x, n, l);
      CHECK(p >= 0 && p < n);
      if (p < 0 || p >= n)
        continue;
      seen[p] += 1;
      orig[p] = x;
    }
    for (int p = 0; p < n; ++p)
      CHECK_EQ_INT(seen[p], 1);
    /* neighbours in memory with the same residue mod 2^l are 2^l apart,
     * in the sub-image's direction; sub-images are contiguous runs */
    const int s = 1 << l;
    for (int p = 0; p + 1 < n; ++p) {
      const int a = orig[p], b = orig[p + 1];
      if ((a & (s - 1)) == (b & (s - 1)))
        CHECK_EQ_INT(b - a, s * lull_layout_direction(a, l));
    }
    int runs = 1;
    for (int p = 0; p + 1 < n; ++p)
      runs += (orig[p] & (s - 1)) != (orig[p + 1] & (s - 1));
    CHECK_EQ_INT(runs, s < n ? s : n);
  }
  free(orig);
  free(seen);
}

int main(void)
{
  for (int n = 1; n <= 70; ++n)
    check_axis(n, 7);
  check_axis(1080, 10);
  check_axis(1920, 10);

  /* Fig. 6(a) of the paper: ascending order with mirroring, n = 16 */
  static const int fig6[4][16] = {
      {0, 2, 4, 6, 8, 10, 12, 14, 15, 13, 11, 9, 7, 5, 3, 1},
      {0, 4, 8, 12, 15, 11, 7, 3, 2, 6, 10, 14, 13, 9, 5, 1},
      {0, 8, 15, 7, 2, 10, 13, 5, 4, 12, 11, 3, 6, 14, 9, 1},
      {0, 15, 2, 13, 4, 11, 6, 9, 8, 7, 10, 5, 12, 3, 14, 1},
  };
  for (int l = 0; l < 4; ++l)
    for (int x = 0; x < 16; ++x)
      CHECK_EQ_INT(lull_layout_position(fig6[l][x], 16, l + 1), x);

  /* mirroring at the embedding's edges */
  CHECK_EQ_INT(lull_layout_reflect(-2, 10), 2);
  CHECK_EQ_INT(lull_layout_reflect(11, 10), 7);
  CHECK_EQ_INT(lull_layout_reflect(-1, 1), 0);
  /* n = 2 reflects with period 2 (p mod 2), n = 1 onto its one pixel */
  static const int reflect2[6] = {0, 1, 0, 1, 0, 1}; /* p = -2 .. 3 */
  for (int p = -2; p <= 3; ++p) {
    CHECK_EQ_INT(lull_layout_reflect(p, 2), reflect2[p + 2]);
    CHECK_EQ_INT(lull_layout_reflect(p, 1), 0);
  }
  CHECK_EQ_INT(lull_layout_reflect(2, 2), 0);
  CHECK_EQ_INT(lull_layout_reflect(3, 2), 1);
  CHECK_EQ_INT(lull_layout_reflect(-2, 2), 0);
  /* every n: the mirroring of period 2 n - 2 (-1 -> 1, -2 -> 2, n -> n - 2,
   * n + 1 -> n - 3), inside unchanged */
  for (int n = 1; n <= 9; ++n)
    for (int p = -2; p <= n + 1; ++p) {
      const int period = n > 1 ? 2 * n - 2 : 1;
      const int m = ((p % period) + period) % period;
      CHECK_EQ_INT(lull_layout_reflect(p, n), m < n ? m : period - m);
    }
  /* far outside (a tile reaching past a small image): still inside */
  for (int n = 1; n <= 5; ++n)
    for (int p = -2; p <= 40; ++p) {
      const int r = lull_layout_reflect(p, n);
      CHECK_EQ_INT(r >= 0 && r < n, 1);
    }

  /* §3.5: the paper's example (W_s = 10, 128-bit components) has d x n =
   * 2 x 4; the permuted kernel's warps (strips of 2 rows of a 36-wide tile
   * of 16-byte elements: stride PERM_STRIP x PERM_TW of
   * cuda/atrous_permuted.cuh, which this C test cannot include) get 8 x 1,
   * i.e. one row of consecutive columns. */
  int d = 0, nn = 0;
  lull_bank_pattern_tile(10, 4, &d, &nn);
  CHECK_EQ_INT(d, 2);
  CHECK_EQ_INT(nn, 4);
  lull_bank_pattern_tile(2 * 36, 4, &d, &nn);
  CHECK_EQ_INT(d, 8);
  CHECK_EQ_INT(nn, 1);
  return lull_test_result("atrous_layout");
}
