/* The exact solve of the constant-weight screened Poisson system
 * (alpha^2 I + L) x = rhs by the DCT-II, which diagonalises the
 * free-boundary Laplacian L (gradient-domain.md §3.1): x = IDCT(DCT(rhs) /
 * lambda).  Used for L2 reconstruction, the first IRLS step of L1, the
 * second pass of GradientDomain (§5.3.1), and as a preconditioner. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poisson_math.h"
#include "poisson_solver.h"
#include "threads.h"

lull_status lull_poisson_dct_init(lull_poisson_dct* dct, int width, int height, int threads,
                                  lull_error* err)
{
  /* lull_poisson_dct_free is called after a failure too: every pointer
   * must be valid (both plans empty) before the first allocation */
  memset(dct, 0, sizeof *dct);
  /* below ~64k pixels per thread the fork/join costs more than it shares */
  const long useful = 1 + (long)width * height / 65536;
  dct->threads = useful < threads ? (int)useful : threads;
  lull_status status = lull_dct_plan_init(&dct->px, width, err);
  if (status == LULL_OK)
    status = lull_dct_plan_init(&dct->py, height, err);
  if (status != LULL_OK)
    return status;
  dct->lx = malloc((size_t)width * sizeof(float));
  dct->ly = malloc((size_t)height * sizeof(float));
  const size_t scratch = lull_dct_2d_scratch_floats(&dct->px, &dct->py, dct->threads);
  dct->scratch = aligned_alloc(64, (scratch * sizeof(float) + 63) / 64 * 64);
  if (!dct->lx || !dct->ly || !dct->scratch)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  for (int k = 0; k < width; ++k)
    dct->lx[k] = lull_poisson_axis_eigenvalue(k, width);
  for (int l = 0; l < height; ++l)
    dct->ly[l] = lull_poisson_axis_eigenvalue(l, height);
  return LULL_OK;
}

void lull_poisson_dct_free(lull_poisson_dct* dct)
{
  lull_dct_plan_free(&dct->px);
  lull_dct_plan_free(&dct->py);
  free(dct->lx);
  free(dct->ly);
  free(dct->scratch);
  /* lull_poisson_dct_free is called after a failure too: every pointer
   * must be valid (both plans empty) before the first allocation */
  memset(dct, 0, sizeof *dct);
}

void lull_poisson_dct_solve(const lull_poisson_dct* dct, float* x, float a, float c, int pin_mean,
                            float mean)
{
  const int w = dct->px.n, h = dct->py.n;
  lull_dct_2d(&dct->px, &dct->py, x, 0, dct->threads, dct->scratch);
  const float* lx = dct->lx;
#pragma omp parallel for schedule(static) num_threads(dct->threads)
  for (int l = 0; l < h; ++l) {
    float* row = x + (size_t)l * (size_t)w;
    const float base = a + c * dct->ly[l];
    for (int k = 0; k < w; ++k)
      row[k] /= base + c * lx[k];
  }
  if (pin_mean)
    x[0] = mean * (float)w * (float)h; /* the unnormalised DC coefficient is the sum */
  else if (!(a > 0.0f))
    x[0] = 0.0f;
  lull_dct_2d(&dct->px, &dct->py, x, 1, dct->threads, dct->scratch);
}
