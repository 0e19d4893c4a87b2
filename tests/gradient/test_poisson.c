/* The screened-Poisson solvers on synthetic data (core level):
 *
 *  - the DCT solve equals a plain dense least-squares solve in double of
 *    eq. 5.2 built row by row (tiny images, every border case);
 *  - exact primal and gradients: L2 (DCT and CG) and L1 return the image;
 *  - DCT and CG agree to 1e-5 on noisy data;
 *  - alpha -> infinity returns the primal; alpha = 0 keeps its mean;
 *  - lengths that need every FFT path (2/3/5, generic radix, Bluestein);
 *  - L1 (IRLS) beats L2 against gradient outliers and lowers the L1
 *    objective; the IRLS weight power 1 minimises the L1 objective better
 *    than the thesis' squared weights (power 2), which is why it is the
 *    default (poisson_math.h, lull_irls_weight). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poisson.h"
#include "poisson_math.h"
#include "poisson_solver.h"
#include "synthetic.h"
#include "test_util.h"

static lull_poisson_params params_l2(int solver)
{
  lull_poisson_params p = lull_poisson_default_params();
  p.norm = LULL_POISSON_NORM_L2;
  p.solver = solver;
  p.cg_iterations = 4000;
  p.cg_tolerance = 1e-7f;
  return p;
}

/* Solves from x = primal + a uniform perturbation of the given size. */
static void solve_from(synthetic* s, const lull_poisson_params* p, lull_poisson_stats* stats,
                       float perturbation)
{
  lull_poisson_system sys = synthetic_system(s, p->alpha);
  lull_error err = {LULL_OK, ""};
  synthetic_start(s);
  unsigned rng = 17u;
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < s->w * s->h; ++i)
      s->x[c][i] += perturbation * (lull_test_random(&rng) - 0.5f);
  const lull_status status = lull_poisson_solve(p, &sys, s->x, &s->dct, NULL, stats, &err);
  CHECK_EQ_INT(status, LULL_OK);
}

static void solve(synthetic* s, const lull_poisson_params* p, lull_poisson_stats* stats)
{
  solve_from(s, p, stats, 0.0f);
}

/* Dense reference: rows of eq. 5.2 (alpha e_i = alpha b_i; e_{i+1} - e_i =
 * dx_i; e_{i+W} - e_i = dy_i), normal equations by Gaussian elimination with
 * partial pivoting, in double. */
static void dense_reference(const synthetic* s, float alpha, int channel, double* out)
{
  const int w = s->w, h = s->h, n = w * h;
  double* m = calloc((size_t)n * (size_t)(n + 1), sizeof(double));
#define M(r, c) m[(size_t)(r) * (size_t)(n + 1) + (size_t)(c)]
  for (int i = 0; i < n; ++i) {
    M(i, i) += (double)alpha * alpha;
    M(i, n) += (double)alpha * alpha * s->b[channel][i];
  }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int i = y * w + x;
      const int nb[2] = {x + 1 < w ? i + 1 : -1, y + 1 < h ? i + w : -1};
      const float g[2] = {s->gx[channel][i], s->gy[channel][i]};
      for (int e = 0; e < 2; ++e) {
        const int j = nb[e];
        if (j < 0)
          continue;
        /* row r = e_j - e_i, value g: r^T r and r^T g */
        M(i, i) += 1;
        M(j, j) += 1;
        M(i, j) -= 1;
        M(j, i) -= 1;
        M(j, n) += g[e];
        M(i, n) -= g[e];
      }
    }
  for (int col = 0; col < n; ++col) {
    int pivot = col;
    for (int r = col + 1; r < n; ++r)
      if (fabs(M(r, col)) > fabs(M(pivot, col)))
        pivot = r;
    for (int c = 0; c <= n; ++c) {
      const double t = M(col, c);
      M(col, c) = M(pivot, c);
      M(pivot, c) = t;
    }
    for (int r = 0; r < n; ++r) {
      if (r == col)
        continue;
      const double f = M(r, col) / M(col, col);
      for (int c = col; c <= n; ++c)
        M(r, c) -= f * M(col, c);
    }
  }
  for (int i = 0; i < n; ++i)
    out[i] = M(i, n) / M(i, i);
#undef M
  free(m);
}

static void test_dense_reference(int w, int h)
{
  synthetic s;
  synthetic_init(&s, w, h, 0.2f, 0.05f, 7u + (unsigned)(w * 31 + h));
  const lull_poisson_params p = params_l2(LULL_POISSON_SOLVER_DCT);
  solve(&s, &p, NULL);
  double* ref = calloc((size_t)w * h, sizeof(double));
  double worst = 0.0;
  for (int c = 0; c < 3; ++c) {
    dense_reference(&s, p.alpha, c, ref);
    for (int i = 0; i < w * h; ++i)
      worst = fmax(worst, fabs(ref[i] - s.x[c][i]));
  }
  if (!(worst < 2e-5))
    fprintf(stderr, "dense reference %dx%d: max difference %g\n", w, h, worst);
  CHECK(worst < 2e-5);
  free(ref);
  synthetic_free(&s);
}

/* Exact data is reproduced by every solver. */
static void test_exact_recovery(void)
{
  synthetic s;
  synthetic_init(&s, 61, 47, 0.0f, 0.0f, 1u);

  lull_poisson_params p = params_l2(LULL_POISSON_SOLVER_DCT);
  solve(&s, &p, NULL);
  CHECK(synthetic_max_diff(&s, s.x, s.truth) < 1e-5);

  /* the iterative paths start away from the answer */
  p = params_l2(LULL_POISSON_SOLVER_CG);
  solve_from(&s, &p, NULL, 0.5f);
  CHECK(synthetic_max_diff(&s, s.x, s.truth) < 1e-5);

  for (int precond = 0; precond <= 2; ++precond) {
    p = lull_poisson_default_params();
    p.solver = LULL_POISSON_SOLVER_CG;
    p.preconditioner = precond;
    p.cg_iterations = 300;
    p.cg_tolerance = 1e-6f;
    solve_from(&s, &p, NULL, 0.5f);
    const double d = synthetic_max_diff(&s, s.x, s.truth);
    if (!(d < 1e-4))
      fprintf(stderr, "L1 exact data, preconditioner %d: max difference %g\n", precond, d);
    CHECK(d < 1e-4);
  }
  synthetic_free(&s);
}

/* DCT and CG agree on noisy data, for every preconditioner. */
static void test_dct_equals_cg(void)
{
  synthetic s;
  synthetic_init(&s, 64, 48, 0.3f, 0.05f, 2u);
  lull_poisson_params p = params_l2(LULL_POISSON_SOLVER_DCT);
  solve(&s, &p, NULL);
  float* reference[3];
  synthetic_keep(&s, reference);
  for (int precond = 0; precond <= 2; ++precond) {
    p = params_l2(LULL_POISSON_SOLVER_CG);
    p.preconditioner = precond;
    lull_poisson_stats stats;
    solve(&s, &p, &stats);
    const double d = synthetic_max_diff(&s, s.x, reference);
    if (!(d < 1e-5))
      fprintf(stderr, "CG (preconditioner %d, %d iterations) vs DCT: max difference %g\n",
              precond, stats.cg_iterations, d);
    CHECK(d < 1e-5);
    CHECK(stats.cg_iterations < p.cg_iterations); /* it converged */
  }
  /* the solution beats the noisy primal */
  CHECK(synthetic_rmse(&s, reference) < 0.5 * synthetic_rmse(&s, s.b));
  synthetic_drop(reference);
  synthetic_free(&s);
}

/* alpha -> infinity: the primal; alpha = 0: the gradients' integral with
 * the primal's mean. */
static void test_alpha_limits(void)
{
  synthetic s;
  synthetic_init(&s, 40, 30, 0.3f, 0.0f, 3u);
  for (int solver = 0; solver <= 1; ++solver) {
    lull_poisson_params p = params_l2(solver);
    p.alpha = 1e4f;
    solve(&s, &p, NULL);
    CHECK(synthetic_max_diff(&s, s.x, s.b) < 1e-5);
  }
  /* exact gradients: the truth shifted to the primal's mean, at alpha 0 and
   * (to within alpha^2 over the lowest eigenvalue, ~1e-4 here) just above
   * it, where the DCT solve had divided a constant of float rounding by
   * alpha^2 (alpha 1e-5: means off by 0.5 on a 256x192 image) */
  static const float small[] = {0.0f, 1e-6f, 1e-5f, 1e-4f};
  for (size_t k = 0; k < sizeof small / sizeof small[0]; ++k) {
    lull_poisson_params p = params_l2(LULL_POISSON_SOLVER_DCT);
    p.alpha = small[k];
    solve(&s, &p, NULL);
    for (int c = 0; c < 3; ++c) {
      double mb = 0.0, mt = 0.0;
      for (int i = 0; i < s.w * s.h; ++i) {
        mb += s.b[c][i];
        mt += s.truth[c][i];
      }
      const float shift = (float)((mb - mt) / (s.w * s.h));
      double worst = 0.0;
      for (int i = 0; i < s.w * s.h; ++i)
        worst = fmax(worst, fabs(s.x[c][i] - (s.truth[c][i] + shift)));
      if (!(worst < 1e-4))
        fprintf(stderr, "alpha %g channel %d: %g from the truth\n", (double)small[k], c, worst);
      CHECK(worst < 1e-4);
    }
  }
  synthetic_free(&s);
}

/* CG at the default cgTolerance 0 (run every iteration) far past
 * convergence: the solution stays put.  It ran on into rounding noise,
 * where its steps grew without bound: alpha 0 (a singular system) drifted
 * to 6e7 on a 3x1 image within the default 20 iterations, and L1 reached
 * 1e38 after 1000 (a review helper's finding; lull_cg_continues). */
static void test_cg_past_convergence(void)
{
  const int sizes[][2] = {{3, 1}, {5, 5}, {64, 48}};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
    for (int alpha0 = 0; alpha0 <= 1; ++alpha0) {
      synthetic s;
      synthetic_init(&s, sizes[k][0], sizes[k][1], 0.2f, 0.05f, 40u + (unsigned)k);
      lull_poisson_params p = params_l2(LULL_POISSON_SOLVER_DCT);
      p.alpha = alpha0 ? 0.0f : 0.2f;
      solve(&s, &p, NULL);
      float* exact[3];
      synthetic_keep(&s, exact);
      p.solver = LULL_POISSON_SOLVER_CG;
      p.cg_iterations = 1000;
      p.cg_tolerance = 0.0f;
      solve(&s, &p, NULL);
      const double d = synthetic_max_diff(&s, s.x, exact);
      if (!(d < 1e-4))
        fprintf(stderr, "%dx%d alpha %g: CG (1000 iterations) vs DCT %g\n", s.w, s.h, p.alpha, d);
      CHECK(d < 1e-4);
      /* L1: every IRLS solve runs its 1000 iterations too; it stays near
       * the truth (noise 0.2 and 0.05 around values in [0, 1]) */
      p.norm = LULL_POISSON_NORM_L1;
      solve(&s, &p, NULL);
      const double e = synthetic_max_diff(&s, s.x, s.truth);
      if (!(e < 0.5))
        fprintf(stderr, "%dx%d alpha %g: L1 after 1000 iterations, %g from the truth\n", s.w,
                s.h, p.alpha, e);
      CHECK(e < 0.5);
      synthetic_drop(exact);
      synthetic_free(&s);
    }
}

/* The constant mode at alpha 0 and just above it.  The system's constant
 * direction has eigenvalue alpha^2 sum(wa) (0: singular), and the float
 * sum of a residual b - A x carries rounding that CG cannot remove along
 * it; with gradients that are not integrable that rounding fed the steps:
 * CG at alpha 0 ended 3.6 from the DCT solution on 1x5 after 20
 * iterations and 257 away on 2x4 after 1000, and the DCT preconditioner at
 * alpha 1e-6 moved L1's mean by 54 (a review helper's finding).  The
 * residual's sum is known exactly, alpha^2 sum wa (b - x) (the edge rows
 * and the patch term sum to 0), and the solver keeps it so. */
static void test_constant_mode(void)
{
  /* deflated where alpha^2 is below 16 times the Laplacian's lowest
   * eigenvalue, 4 sin^2(pi / 2N): at 1080p alpha ~0.0065 */
  CHECK(!lull_cg_deflates(0.04f, 1920, 1080));
  CHECK(!lull_cg_deflates(0.0070f * 0.0070f, 1080, 1920));
  CHECK(lull_cg_deflates(0.0060f * 0.0060f, 1920, 1080));
  CHECK(lull_cg_deflates(0.0f, 1920, 1080));
  CHECK(lull_cg_deflates(0.03f, 64, 48));
  CHECK(lull_cg_deflates(100.0f, 1, 1));
  /* 2x1 to 1x3: r.z counted r's rounding along the constant, which no
   * deflated direction removes, and CG's steps grew without bound (2x1 at
   * alpha 0.2 and gradient noise 0.01: 108 for values of 1; 128x96 at
   * alpha 1e-4: 1e9 after 2000 iterations; a review helper's finding) */
  const int sizes[][2] = {{1, 5}, {5, 1}, {2, 4}, {4, 2}, {3, 3},  {2, 1},
                          {1, 2}, {1, 3}, {3, 1}, {64, 48}, {128, 96}};
  static const float alphas[] = {0.0f, 1e-6f, 1e-4f, 0.01f, 0.2f, 1.0f};
  static const float noises[] = {0.5f, 0.01f}; /* 0.5: far from integrable */
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
    for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; ++a)
      for (size_t g = 0; g < sizeof noises / sizeof noises[0]; ++g) {
      if (!lull_cg_deflates(alphas[a] * alphas[a], sizes[k][0], sizes[k][1]))
        continue; /* CG as before: test_dct_equals_cg */
      synthetic s;
      synthetic_init(&s, sizes[k][0], sizes[k][1], 0.2f, noises[g], 60u + (unsigned)(k + 7 * g));
      lull_poisson_params p = params_l2(LULL_POISSON_SOLVER_DCT);
      p.alpha = alphas[a];
      solve(&s, &p, NULL);
      float* exact[3];
      synthetic_keep(&s, exact);
      for (int precond = 0; precond <= 2; ++precond)
        for (int iterations = 20; iterations <= 1000; iterations += 980) {
          /* 20 iterations do not converge on 64x48 without the DCT
           * preconditioner (about one per pixel of the diagonal) */
          if (s.w * s.h > 100 && iterations == 20 && precond != 2)
            continue;
          p.solver = LULL_POISSON_SOLVER_CG;
          p.preconditioner = precond;
          p.cg_iterations = iterations;
          p.cg_tolerance = 0.0f;
          solve(&s, &p, NULL);
          const double d = synthetic_max_diff(&s, s.x, exact);
          if (!(d < 1e-4))
            fprintf(stderr, "%dx%d alpha %g noise %g, preconditioner %d, %d iterations: CG vs DCT %g\n",
                    s.w, s.h, (double)p.alpha, (double)noises[g], precond, iterations, d);
          CHECK(d < 1e-4);
        }
      /* L1 with each preconditioner: its constant stays near the primal's
       * (the data rows' weighted median: 0.24 away on 3x1 at gradient noise
       * 0.5; the failures had been 10 to 1e6) */
      for (int precond = 1; precond <= 2; ++precond) {
        p = lull_poisson_default_params();
        p.alpha = alphas[a];
        p.preconditioner = precond;
        solve(&s, &p, NULL);
        for (int c = 0; c < 3; ++c) {
          double mx = 0.0, mb = 0.0;
          for (int i = 0; i < s.w * s.h; ++i) {
            mx += s.x[c][i];
            mb += s.b[c][i];
          }
          const double off = fabs(mx - mb) / (s.w * s.h);
          if (!(off < 0.5))
            fprintf(stderr, "%dx%d alpha %g L1, preconditioner %d: mean off by %g\n", s.w, s.h,
                    (double)p.alpha, precond, off);
          CHECK(off < 0.5);
        }
      }
      synthetic_drop(exact);
      synthetic_free(&s);
    }
}

/* Every FFT path through the solver: sizes 1, primes, Bluestein lengths. */
static void test_sizes(void)
{
  const int sizes[][2] = {{1, 1}, {1, 9}, {13, 1}, {2, 2}, {37, 29}, {67, 45}, {97, 7}};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    synthetic s;
    synthetic_init(&s, sizes[k][0], sizes[k][1], 0.1f, 0.02f, 4u + (unsigned)k);
    lull_poisson_params p = params_l2(LULL_POISSON_SOLVER_DCT);
    solve(&s, &p, NULL);
    float* ref[3];
    synthetic_keep(&s, ref);
    p = params_l2(LULL_POISSON_SOLVER_CG);
    solve(&s, &p, NULL);
    const double d = synthetic_max_diff(&s, s.x, ref);
    if (!(d < 1e-5))
      fprintf(stderr, "%dx%d: CG vs DCT %g\n", s.w, s.h, d);
    CHECK(d < 1e-5);
    synthetic_drop(ref);
      synthetic_free(&s);
  }
  test_dense_reference(1, 1);
  test_dense_reference(1, 6);
  test_dense_reference(5, 1);
  test_dense_reference(7, 5);
  test_dense_reference(11, 13);
}

/* Gradient outliers: L1 beats L2; power 1 weights minimise the L1
 * objective better than power 2. */
static void test_l1(void)
{
  synthetic s;
  synthetic_init(&s, 96, 64, 0.15f, 0.01f, 5u);
  unsigned rng = 99u;
  for (int i = 0; i < s.w * s.h; ++i)
    if (lull_test_random(&rng) < 0.02f) { /* 2% of the x-gradients are wild */
      const float v = 4.0f * (lull_test_random(&rng) - 0.5f);
      for (int c = 0; c < 3; ++c)
        s.gx[c][i] += v;
    }
  lull_poisson_system sys = synthetic_system(&s, 0.2f);

  lull_poisson_params p = params_l2(LULL_POISSON_SOLVER_DCT);
  solve(&s, &p, NULL);
  const double rmse_l2 = synthetic_rmse(&s, s.x);
  const double obj_l2 = lull_poisson_objective(&sys, (const float* const*)s.x, 1);

  double objective[3] = {0, 0, 0}, rmse[3] = {0, 0, 0};
  for (int power = 1; power <= 2; ++power) {
    p = lull_poisson_default_params();
    p.irls_weight_power = power;
    p.irls_iterations = 20; /* Karras' L1D preset: 20 x 50 */
    p.cg_iterations = 50;
    solve(&s, &p, NULL);
    objective[power] = lull_poisson_objective(&sys, (const float* const*)s.x, 1);
    rmse[power] = synthetic_rmse(&s, s.x);
  }
  fprintf(stderr, "L1 objective: L2 solution %.6g, power 1 %.6g, power 2 %.6g; RMSE L2 %.4g, "
          "L1 %.4g, power 2 %.4g\n", obj_l2, objective[1], objective[2], rmse_l2, rmse[1], rmse[2]);
  CHECK(objective[1] < obj_l2);
  CHECK(objective[1] < objective[2]);
  CHECK(rmse[1] < 0.7 * rmse_l2);
  synthetic_free(&s);
}

static int cancel_after(void* user, double done)
{
  (void)done;
  int* calls = user;
  return ++*calls < 3;
}

/* Progress is monotone and reaches 1; cancellation stops the solve. */
static void test_progress(void)
{
  synthetic s;
  synthetic_init(&s, 32, 32, 0.1f, 0.01f, 6u);
  lull_poisson_system sys = synthetic_system(&s, 0.2f);
  lull_poisson_params p = lull_poisson_default_params();
  int calls = 0;
  const lull_progress progress = {cancel_after, &calls};
  const lull_progress_span span = {&progress, 0.0, 1.0};
  lull_error err = {LULL_OK, ""};
  synthetic_start(&s);
  CHECK_EQ_INT(lull_poisson_solve(&p, &sys, s.x, NULL, &span, NULL, &err), LULL_ERROR_CANCELLED);
  CHECK_EQ_INT(calls, 3);
  synthetic_free(&s);
}

int main(void)
{
  test_sizes();
  test_exact_recovery();
  test_dct_equals_cg();
  test_alpha_limits();
  test_cg_past_convergence();
  test_constant_mode();
  test_l1();
  test_progress();
  return lull_test_result("poisson");
}
