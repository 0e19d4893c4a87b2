/* CPU benchmark of the gradient-domain reconstructions (not a test: it
 * reports, it asserts nothing about time).
 *
 *   bench_poisson [--repeats N] [--gd-repeats N] [--threads N] [--no-gd]
 *
 * For 1280x720 and 1024x1024 synthetic data (smooth shading, edges, primal
 * noise, gradient noise with 1% outliers):
 *
 *   - L2 by DCT: the median time of the exact solve;
 *   - L1: Karras' default preset (20 IRLS x 50 CG iterations, no
 *     preconditioner, the first solve by CG; gradient-domain.md §1.1) sets
 *     the L1 objective to reach; then lull's configurations (the first
 *     solve by DCT, Jacobi or DCT-preconditioned CG, fewer iterations) are
 *     timed with the objective they reach, and the fastest one at or below
 *     the target is named;
 *   - one weighted CG iteration: median time, and GB/s under the traffic
 *     model below;
 *   - GradientDomain: seconds per megapixel (1280x720 only).
 *
 * Traffic model of one Jacobi-PCG iteration (poisson_cg.c, RGB float):
 * A p reads p and three weight planes and writes A p (36 B/px); the update
 * reads x, r, p, A p and writes x, r (72 B/px); the preconditioner reads r
 * and 1/diag and writes z, and the dot products read r and z again (40
 * B/px); the p update reads z, p and writes p (36 B/px): 184 B/px.  For
 * the DCT solve: 3 channels x (forward + inverse) x 2 axes x (read + write)
 * x 4 B = 48 B/px, plus the right-hand side (reads 3 x 3 planes and 3
 * weights, writes 3: 60 B/px). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gradient_domain.h"
#include "poisson.h"
#include "poisson_solver.h"
#include "synthetic.h"
#include "test_util.h"
#include "threads.h"

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare(const void* a, const void* b)
{
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n)
{
  qsort(v, (size_t)n, sizeof *v, compare);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct options
{
  int repeats, gd_repeats, threads, gd;
} options;

/* Gradient outliers: 1% of the x and y gradients get a wild value. */
static void add_outliers(synthetic* s)
{
  unsigned rng = 1234u;
  for (int i = 0; i < s->w * s->h; ++i) {
    if (lull_test_random(&rng) < 0.01f) {
      const float v = 2.0f * (lull_test_random(&rng) - 0.5f);
      for (int c = 0; c < 3; ++c)
        s->gx[c][i] += v;
    }
    if (lull_test_random(&rng) < 0.01f) {
      const float v = 2.0f * (lull_test_random(&rng) - 0.5f);
      for (int c = 0; c < 3; ++c)
        s->gy[c][i] += v;
    }
  }
}

typedef struct run_result
{
  double seconds;   /* median */
  double objective; /* L1 objective reached */
  int iterations;   /* CG iterations of one run */
  double residual;  /* the last CG solve: max over channels of |A^T W^2 (b - A x)| / |A^T W^2 b| */
} run_result;

static run_result time_solve(synthetic* s, const lull_poisson_params* p, int repeats, int threads)
{
  run_result r = {0.0, 0.0, 0, 0.0};
  double* t = calloc((size_t)repeats, sizeof(double));
  lull_poisson_system sys = synthetic_system(s, p->alpha);
  sys.threads = threads;
  for (int k = 0; k < repeats; ++k) {
    synthetic_start(s);
    lull_poisson_stats stats;
    lull_error err = {LULL_OK, ""};
    const double t0 = now();
    if (lull_poisson_solve(p, &sys, s->x, &s->dct, NULL, &stats, &err) != LULL_OK)
      fprintf(stderr, "solve failed: %s\n", err.message);
    t[k] = now() - t0;
    r.iterations = stats.cg_iterations;
    r.residual = 0.0;
    for (int c = 0; c < 3; ++c)
      if (stats.rhs[c] > 0.0)
        r.residual = fmax(r.residual, stats.residual[c] / stats.rhs[c]);
  }
  r.seconds = median(t, repeats);
  r.objective = lull_poisson_objective(&sys, (const float* const*)s->x, 1);
  free(t);
  return r;
}

static void bench_size(int w, int h, const options* o)
{
  const double mp = (double)w * h / 1e6;
  printf("\n== %dx%d (%.2f MP), %d threads ==\n", w, h, mp, o->threads);
  synthetic s;
  synthetic_init(&s, w, h, 0.1f, 0.01f, 99u);
  add_outliers(&s);
  /* the DCT solver with the benchmark's thread count */
  lull_poisson_dct_free(&s.dct);
  lull_error err = {LULL_OK, ""};
  lull_poisson_dct_init(&s.dct, w, h, o->threads, &err);

  lull_poisson_params p = lull_poisson_default_params();
  p.norm = LULL_POISSON_NORM_L2;
  const run_result l2 = time_solve(&s, &p, o->repeats, o->threads);
  printf("L2 by DCT: %.1f ms (median of %d), %.1f GB/s (108 B/px model)\n", 1e3 * l2.seconds,
         o->repeats, 108.0 * w * h / l2.seconds / 1e9);

  /* one weighted CG iteration: 100 iterations of a Jacobi solve / 100 */
  p = lull_poisson_default_params();
  p.norm = LULL_POISSON_NORM_L2;
  p.solver = LULL_POISSON_SOLVER_CG;
  p.cg_iterations = 100;
  const run_result cg = time_solve(&s, &p, o->repeats, o->threads);
  const double per = cg.seconds / cg.iterations;
  printf("Jacobi PCG: %.2f ms per iteration (median of %d runs of %d), %.1f GB/s (184 B/px model)\n",
         1e3 * per, o->repeats, cg.iterations, 184.0 * w * h / per / 1e9);

  /* L1: Karras' L1D preset sets the target */
  p = lull_poisson_default_params();
  p.solver = LULL_POISSON_SOLVER_CG;
  p.preconditioner = LULL_POISSON_PRECOND_NONE;
  p.irls_iterations = 20;
  p.cg_iterations = 50;
  const run_result karras = time_solve(&s, &p, o->repeats, o->threads);
  printf("L1, Karras L1D (20 IRLS x 50 CG, no preconditioner): %.0f ms, objective %.6g\n",
         1e3 * karras.seconds, karras.objective);
  const struct
  {
    int irls, cg, precond;
  } configs[] = {{7, 50, LULL_POISSON_PRECOND_JACOBI}, {7, 20, LULL_POISSON_PRECOND_JACOBI},
                 {7, 10, LULL_POISSON_PRECOND_JACOBI}, {10, 20, LULL_POISSON_PRECOND_JACOBI},
                 {10, 10, LULL_POISSON_PRECOND_JACOBI}, {20, 10, LULL_POISSON_PRECOND_JACOBI},
                 {20, 20, LULL_POISSON_PRECOND_JACOBI}, {7, 10, LULL_POISSON_PRECOND_DCT},
                 {10, 5, LULL_POISSON_PRECOND_DCT},     {10, 10, LULL_POISSON_PRECOND_DCT},
                 {20, 5, LULL_POISSON_PRECOND_DCT},     {20, 50, LULL_POISSON_PRECOND_NONE}};
  static const char* const names[] = {"none", "Jacobi", "DCT"};
  double best = INFINITY;
  int best_k = -1;
  for (size_t k = 0; k < sizeof configs / sizeof configs[0]; ++k) {
    p = lull_poisson_default_params();
    p.irls_iterations = configs[k].irls;
    p.cg_iterations = configs[k].cg;
    p.preconditioner = configs[k].precond;
    const run_result r = time_solve(&s, &p, o->repeats, o->threads);
    const int reached = r.objective <= karras.objective;
    printf("L1, DCT start, %2d IRLS x %2d CG, %-6s: %6.0f ms, objective %.6g (%s), %.2f ms per CG "
           "iteration, last solve's relative residual %.1e\n",
           configs[k].irls, configs[k].cg, names[configs[k].precond], 1e3 * r.seconds, r.objective,
           reached ? "reaches L1D" : "above L1D", 1e3 * r.seconds / LULL_MAX(r.iterations, 1),
           r.residual);
    if (reached && r.seconds < best) {
      best = r.seconds;
      best_k = (int)k;
    }
  }
  if (best_k >= 0)
    printf("fastest to L1D's objective: %d IRLS x %d CG, %s preconditioner: %.0f ms (%.1fx faster "
           "than L1D measured in the same run)\n",
           configs[best_k].irls, configs[best_k].cg, names[configs[best_k].precond], 1e3 * best,
           karras.seconds / best);

  if (o->gd && w == 1280) {
    /* GradientDomain: halves from two draws, features of the truth */
    synthetic b;
    synthetic_init(&b, w, h, 0.1f, 0.01f, 98u);
    const size_t n = (size_t)w * h;
    float* planes[12];
    for (int i = 0; i < 12; ++i)
      planes[i] = calloc(3 * n, sizeof(float));
    for (size_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        planes[0][3 * i + c] = s.b[c][i];
        planes[1][3 * i + c] = b.b[c][i];
        planes[2][3 * i + c] = s.gx[c][i];
        planes[3][3 * i + c] = b.gx[c][i];
        planes[4][3 * i + c] = s.gy[c][i];
        planes[5][3 * i + c] = b.gy[c][i];
        planes[6][3 * i + c] = s.truth[c][i] / 4.0f; /* albedo */
        planes[7][3 * i + c] = c == 2 ? 1.0f : 0.0f;  /* normal */
      }
    for (size_t i = 0; i < n; ++i)
      planes[8][i] = 1.0f + 0.001f * (float)(i / (size_t)w); /* depth */
    lull_gradient_domain_images im;
    memset(&im, 0, sizeof im);
    const lull_image rgb = {NULL, LULL_FORMAT_FLOAT3, w, h, 12, 12 * (size_t)w};
    const lull_image one = {NULL, LULL_FORMAT_FLOAT, w, h, 4, 4 * (size_t)w};
    lull_image* slots[] = {&im.color_a, &im.color_b, &im.gradient_x_a, &im.gradient_x_b,
                           &im.gradient_y_a, &im.gradient_y_b, &im.albedo, &im.normal, &im.depth,
                           &im.output};
    const int plane_of[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    for (int i = 0; i < 10; ++i) {
      *slots[i] = i == 8 ? one : rgb;
      slots[i]->data = (unsigned char*)planes[plane_of[i]];
    }
    const lull_gradient_domain_params gp = lull_gradient_domain_default_params();
    double* t = calloc((size_t)o->gd_repeats, sizeof(double));
    for (int k = 0; k < o->gd_repeats; ++k) {
      const double t0 = now();
      if (lull_gradient_domain_cpu(&gp, &im, o->threads, NULL, &err) != LULL_OK)
        fprintf(stderr, "GradientDomain failed: %s\n", err.message);
      t[k] = now() - t0;
    }
    const double g = median(t, o->gd_repeats);
    printf("GradientDomain (3 candidates, selection): %.1f s (median of %d) = %.1f s per MP; "
           "memory %.0f MB\n",
           g, o->gd_repeats, g / mp, (double)lull_gradient_domain_cpu_memory(w, h) / 1048576.0);
    free(t);
    for (int i = 0; i < 12; ++i)
      free(planes[i]);
    synthetic_free(&b);
  }
  synthetic_free(&s);
}

int main(int argc, char** argv)
{
  setvbuf(stdout, NULL, _IOLBF, 0); /* each result as it is measured */
  options o = {5, 3, 0, 1};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
      o.repeats = atoi(argv[++i]);
    else if (strcmp(argv[i], "--gd-repeats") == 0 && i + 1 < argc)
      o.gd_repeats = atoi(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      o.threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--no-gd") == 0)
      o.gd = 0;
    else {
      fprintf(stderr, "usage: bench_poisson [--repeats N] [--gd-repeats N] [--threads N] [--no-gd]\n");
      return 2;
    }
  }
  if (o.repeats < 1 || o.gd_repeats < 1) {
    fprintf(stderr, "bench_poisson: repeats must be >= 1\n");
    return 2;
  }
  o.threads = lull_thread_count(o.threads);
  bench_size(1280, 720, &o);
  bench_size(1024, 1024, &o);
  return 0;
}
