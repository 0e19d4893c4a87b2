/* Conjugate gradients on the weighted screened Poisson system, and the
 * IRLS loop of L1 reconstruction (Vicini 2015 §5.2 SOLVEL1 and §5.3.4
 * CGSOLVE; formulas in poisson_math.h).
 *
 * Scheduling: each CG iteration is three row-parallel sweeps, as in Karras'
 * CUDA solver (gradient-domain.md §2.2): A p with the p.Ap reduction; the
 * x and r updates with the preconditioner and the r.z and r.r reductions;
 * the p update.  The colour channels are independent systems that share
 * the operator, each with its own step sizes.  Reductions are in double;
 * vectors are float. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poisson_math.h"
#include "poisson_solver.h"
#include "threads.h"

/* -- progress ------------------------------------------------------------------ */

lull_status lull_progress_span_report(const lull_progress_span* span, double done,
                                      lull_error* err)
{
  if (!span)
    return LULL_OK;
  return lull_progress_report(span->progress, span->begin + done * (span->end - span->begin), err);
}

lull_progress_span lull_progress_subspan(const lull_progress_span* span, double begin, double end)
{
  lull_progress_span sub = {NULL, 0.0, 1.0};
  if (span) {
    sub.progress = span->progress;
    sub.begin = span->begin + begin * (span->end - span->begin);
    sub.end = span->begin + end * (span->end - span->begin);
  }
  return sub;
}

/* -- operator -------------------------------------------------------------------- */

void lull_poisson_weights_reset(const lull_poisson_system* sys)
{
  const int w = sys->width, h = sys->height;
#pragma omp parallel for schedule(static) num_threads(sys->threads)
  for (int y = 0; y < h; ++y) {
    const size_t o = (size_t)y * (size_t)w;
    for (int x = 0; x < w; ++x) {
      sys->wa[o + (size_t)x] = 1.0f;
      sys->wx[o + (size_t)x] = x + 1 < w ? 1.0f : 0.0f;
      sys->wy[o + (size_t)x] = y + 1 < h ? 1.0f : 0.0f;
    }
  }
}

/* Row pointers of one pixel row: weights, and the rows above and below
 * (the row itself with weight 0 at the image border). */
typedef struct row_view
{
  int w;
  const float* wa;
  const float* wx;
  const float* wy;
  const float* wy_up;
  size_t offset;      /* of the row */
  ptrdiff_t up, down; /* offsets of the neighbour rows, 0 at the border */
} row_view;

static row_view row_at(const lull_poisson_system* sys, int y)
{
  row_view r;
  r.w = sys->width;
  r.offset = (size_t)y * (size_t)sys->width;
  r.wa = sys->wa + r.offset;
  r.wx = sys->wx + r.offset;
  r.wy = sys->wy + r.offset;
  r.wy_up = y > 0 ? r.wy - sys->width : sys->zero;
  r.up = y > 0 ? -(ptrdiff_t)sys->width : 0;
  r.down = y + 1 < sys->height ? (ptrdiff_t)sys->width : 0;
  return r;
}

/* out = A^T W^2 A in for one row and channel (5-point part). */
LULL_TARGET_CLONES
static void apply_row(const row_view* r, float alpha2, const float* LULL_RESTRICT in,
                      float* LULL_RESTRICT out)
{
  const int w = r->w;
  const float* up = in + r->up;
  const float* down = in + r->down;
  const float* LULL_RESTRICT wa = r->wa;
  const float* LULL_RESTRICT wx = r->wx;
  const float* LULL_RESTRICT wy = r->wy;
  const float* LULL_RESTRICT wu = r->wy_up;
  out[0] = lull_poisson_apply(alpha2, wa[0], in[0], 0.0f, in[0], wx[0], in[w > 1 ? 1 : 0], wu[0],
                              up[0], wy[0], down[0]);
  for (int x = 1; x < w - 1; ++x)
    out[x] = lull_poisson_apply(alpha2, wa[x], in[x], wx[x - 1], in[x - 1], wx[x], in[x + 1],
                                wu[x], up[x], wy[x], down[x]);
  if (w > 1)
    out[w - 1] = lull_poisson_apply(alpha2, wa[w - 1], in[w - 1], wx[w - 2], in[w - 2], wx[w - 1],
                                    in[w - 1], wu[w - 1], up[w - 1], wy[w - 1], down[w - 1]);
}

/* out += K in for one row and channel, K the symmetric patch stencil. */
LULL_TARGET_CLONES
static void stencil_row(const lull_poisson_system* sys, int y, const float* in, float* out)
{
  const int w = sys->width, h = sys->height;
  const lull_stencil* k = sys->patch;
  const size_t row = (size_t)y * (size_t)w;
  {
    const float* LULL_RESTRICT c0 = k->coef + row;
    const float* LULL_RESTRICT x0 = in + row;
    float* LULL_RESTRICT o = out;
    for (int x = 0; x < w; ++x)
      o[x] += c0[x] * x0[x];
  }
  for (int t = 1; t < LULL_STENCIL_TAPS; ++t) {
    int dx, dy;
    lull_stencil_offset(t, &dx, &dy);
    const float* plane = k->coef + (size_t)t * k->stride;
    /* forward: c_t[i] x[i + o] */
    if (y + dy < h) {
      const int x0 = LULL_MAX(0, -dx), x1 = LULL_MIN(w, w - dx);
      const float* LULL_RESTRICT c = plane + row;
      const float* LULL_RESTRICT xs = in + row + (size_t)dy * (size_t)w + dx;
      float* LULL_RESTRICT o = out;
      for (int x = x0; x < x1; ++x)
        o[x] += c[x] * xs[x];
    }
    /* mirrored: c_t[i - o] x[i - o] */
    if (y - dy >= 0) {
      const int x0 = LULL_MAX(0, dx), x1 = LULL_MIN(w, w + dx);
      const size_t back = row - (size_t)dy * (size_t)w;
      const float* LULL_RESTRICT c = plane + back - dx;
      const float* LULL_RESTRICT xs = in + back - dx;
      float* LULL_RESTRICT o = out;
      for (int x = x0; x < x1; ++x)
        o[x] += c[x] * xs[x];
    }
  }
}

/* out = A^T W^2 A in for every channel; dot[c] = in_c . out_c. */
static void apply(const lull_poisson_system* sys, float* const in[3], float* const out[3],
                  double dot[3])
{
  double d0 = 0.0, d1 = 0.0, d2 = 0.0;
  const int w = sys->width;
#pragma omp parallel for schedule(static) reduction(+ : d0, d1, d2) num_threads(sys->threads)
  for (int y = 0; y < sys->height; ++y) {
    const row_view r = row_at(sys, y);
    for (int c = 0; c < sys->channels; ++c) {
      const float* x = in[c] + r.offset;
      float* o = out[c] + r.offset;
      apply_row(&r, sys->alpha2, x, o);
      if (sys->patch)
        stencil_row(sys, y, in[c], o);
      double d = 0.0;
      for (int i = 0; i < w; ++i)
        d += (double)x[i] * (double)o[i];
      if (c == 0)
        d0 += d;
      else if (c == 1)
        d1 += d;
      else
        d2 += d;
    }
  }
  dot[0] = d0;
  dot[1] = d1;
  dot[2] = d2;
}

/* out = A^T W^2 b. */
static void right_hand_side(const lull_poisson_system* sys, float* const out[3])
{
  const int w = sys->width;
#pragma omp parallel for schedule(static) num_threads(sys->threads)
  for (int y = 0; y < sys->height; ++y) {
    const row_view r = row_at(sys, y);
    for (int c = 0; c < sys->channels; ++c) {
      const float* b = sys->primal[c] + r.offset;
      const float* gx = sys->gx[c] + r.offset;
      const float* gy = sys->gy[c] + r.offset;
      const float* gy_up = gy + r.up;
      float* o = out[c] + r.offset;
      for (int x = 0; x < w; ++x) {
        const float wx_left = x > 0 ? r.wx[x - 1] : 0.0f;
        const float gx_left = x > 0 ? gx[x - 1] : 0.0f;
        o[x] = lull_poisson_rhs(sys->alpha2, r.wa[x], b[x], wx_left, gx_left, r.wx[x], gx[x],
                                r.wy_up[x], gy_up[x], r.wy[x], gy[x]);
      }
    }
  }
}

/* -- residuals and IRLS weights ---------------------------------------------------- */

/* RGB lengths of the three residuals of pixel (x, y): data, x-edge, y-edge
 * (an absent edge has length 0 and valid 0). */
typedef struct pixel_residuals
{
  float data, ex, ey;
  int has_ex, has_ey;
} pixel_residuals;

static pixel_residuals residuals_at(const lull_poisson_system* sys, const float* const x[3],
                                    int px, int py)
{
  const int w = sys->width;
  const size_t i = (size_t)py * (size_t)w + (size_t)px;
  pixel_residuals r = {0.0f, 0.0f, 0.0f, px + 1 < w, py + 1 < sys->height};
  const float alpha = sqrtf(sys->alpha2);
  float d2 = 0.0f, x2 = 0.0f, y2 = 0.0f;
  for (int c = 0; c < sys->channels; ++c) {
    const float d = alpha * (x[c][i] - sys->primal[c][i]);
    d2 += d * d;
    if (r.has_ex) {
      const float e = x[c][i + 1] - x[c][i] - sys->gx[c][i];
      x2 += e * e;
    }
    if (r.has_ey) {
      const float e = x[c][i + (size_t)w] - x[c][i] - sys->gy[c][i];
      y2 += e * e;
    }
  }
  r.data = sqrtf(d2);
  r.ex = sqrtf(x2);
  r.ey = sqrtf(y2);
  return r;
}

double lull_poisson_objective(const lull_poisson_system* sys, const float* const x[3], int power)
{
  double sum = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum) num_threads(sys->threads)
  for (int y = 0; y < sys->height; ++y)
    for (int px = 0; px < sys->width; ++px) {
      const pixel_residuals r = residuals_at(sys, x, px, y);
      if (power == 2)
        sum += (double)r.data * r.data + (double)r.ex * r.ex + (double)r.ey * r.ey;
      else
        sum += (double)r.data + r.ex + r.ey;
    }
  return sum;
}

/* New IRLS weights of the Poisson rows from the residuals of x
 * (unnormalised); returns their sum in *sum and the number of rows. */
double lull_poisson_reweight(const lull_poisson_system* sys, const float* const x[3], float eps,
                             int power, double* sum)
{
  const int w = sys->width, h = sys->height;
  const int use_data = sys->alpha2 > 0.0f;
  double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total) num_threads(sys->threads)
  for (int y = 0; y < h; ++y)
    for (int px = 0; px < w; ++px) {
      const size_t i = (size_t)y * (size_t)w + (size_t)px;
      const pixel_residuals r = residuals_at(sys, x, px, y);
      const float wa = use_data ? lull_irls_weight(r.data, eps, power) : 1.0f;
      const float wx = r.has_ex ? lull_irls_weight(r.ex, eps, power) : 0.0f;
      const float wy = r.has_ey ? lull_irls_weight(r.ey, eps, power) : 0.0f;
      sys->wa[i] = wa;
      sys->wx[i] = wx;
      sys->wy[i] = wy;
      total += (use_data ? (double)wa : 0.0) + wx + wy;
    }
  *sum = total;
  return (use_data ? (double)w * h : 0.0) + (double)(w - 1) * h + (double)w * (h - 1);
}

void lull_poisson_scale_weights(const lull_poisson_system* sys, float scale)
{
  const size_t n = (size_t)sys->width * (size_t)sys->height;
  const int use_data = sys->alpha2 > 0.0f;
#pragma omp parallel for schedule(static) num_threads(sys->threads)
  for (ptrdiff_t i = 0; i < (ptrdiff_t)n; ++i) {
    if (use_data)
      sys->wa[i] *= scale;
    sys->wx[i] *= scale;
    sys->wy[i] *= scale;
  }
}

/* New IRLS weights normalised to mean 1 over the rows (§5.2 SOLVEL1, line
 * 9: W = W rows / |W|_1; it leaves the minimiser unchanged and keeps the
 * system's scale, and so CG's, steady). */
static void reweight(const lull_poisson_system* sys, const float* const x[3], float eps, int power)
{
  double sum = 0.0;
  const double rows = lull_poisson_reweight(sys, x, eps, power, &sum);
  if (sum > 0.0 && rows > 0.0)
    lull_poisson_scale_weights(sys, (float)(rows / sum));
}

/* -- conjugate gradients ------------------------------------------------------------ */

typedef struct cg_work
{
  float* block;
  float* r[3];
  float* p[3];
  float* ap[3];
  float* z[3];    /* aliases r without a preconditioner */
  float* inv_diag;
} cg_work;

static int cg_work_init(cg_work* work, size_t n, int channels, int precond)
{
  const size_t planes = (size_t)LULL_MAX(channels, 1) * (precond ? 4 : 3) + 1;
  if (n > ((size_t)-1) / sizeof(float) / planes)
    return 0;
  work->block = malloc(planes * n * sizeof(float));
  if (!work->block)
    return 0;
  float* next = work->block;
  for (int c = 0; c < 3; ++c) {
    if (c > 0 && c >= channels) {
      /* unused channels: never touched, aliased to channel 0 (not NULL) */
      work->r[c] = work->r[0];
      work->p[c] = work->p[0];
      work->ap[c] = work->ap[0];
      work->z[c] = work->z[0];
      continue;
    }
    work->r[c] = next;
    next += n;
    work->p[c] = next;
    next += n;
    work->ap[c] = next;
    next += n;
    if (precond) {
      work->z[c] = next;
      next += n;
    } else {
      work->z[c] = work->r[c];
    }
  }
  work->inv_diag = next;
  return 1;
}

/* 1 / diagonal of the operator (Jacobi). */
static void jacobi_setup(const lull_poisson_system* sys, float* inv_diag)
{
  const int w = sys->width;
#pragma omp parallel for schedule(static) num_threads(sys->threads)
  for (int y = 0; y < sys->height; ++y) {
    const row_view r = row_at(sys, y);
    for (int x = 0; x < w; ++x) {
      float d = lull_poisson_diagonal(sys->alpha2, r.wa[x], x > 0 ? r.wx[x - 1] : 0.0f, r.wx[x],
                                      r.wy_up[x], r.wy[x]);
      if (sys->patch)
        d += sys->patch->coef[r.offset + (size_t)x];
      inv_diag[r.offset + (size_t)x] = d > 0.0f ? 1.0f / d : 0.0f;
    }
  }
}

/* Mean data weight times alpha^2 and mean edge weight: the constant-weight
 * operator that approximates the weighted one (the DCT preconditioner). */
static void mean_weights(const lull_poisson_system* sys, float* a, float* c)
{
  const size_t n = (size_t)sys->width * (size_t)sys->height;
  double sa = 0.0, se = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sa, se) num_threads(sys->threads)
  for (ptrdiff_t i = 0; i < (ptrdiff_t)n; ++i) {
    sa += sys->wa[i];
    se += (double)sys->wx[i] + sys->wy[i];
  }
  const double edges = (double)(sys->width - 1) * sys->height + (double)sys->width * (sys->height - 1);
  *a = (float)(sys->alpha2 * sa / (double)n);
  *c = edges > 0.0 ? (float)(se / edges) : 0.0f;
}

typedef struct cg_setup
{
  int iterations;
  float tolerance;
  int precond;
  int deflate; /* lull_cg_deflates */
  float dct_a, dct_c;
  const lull_poisson_dct* dct;
} cg_setup;

/* z = M^-1 r; returns r.z, r.r, and for the deflation (cg_solve; 0
 * without it) the data-weighted sum of z and the sum of r, per channel.
 * Deflated, the DCT preconditioner gives z no constant: the deflated r has
 * none, and dividing the float rounding of its sum by a tiny alpha^2 had
 * made one (L1 at alpha 1e-6: means off by 54). */
static void precondition(const lull_poisson_system* sys, const cg_setup* s, cg_work* work,
                         double rz[3], double rr[3], double wz[3], double rs[3])
{
  const size_t n = (size_t)sys->width * (size_t)sys->height;
  if (s->precond == LULL_POISSON_PRECOND_DCT)
    for (int c = 0; c < sys->channels; ++c) {
      memcpy(work->z[c], work->r[c], n * sizeof(float));
      lull_poisson_dct_solve(s->dct, work->z[c], s->dct_a, s->dct_c, s->deflate, 0.0f);
    }
  for (int c = 0; c < sys->channels; ++c) {
    const float* r = work->r[c];
    float* z = work->z[c];
    const float* inv = work->inv_diag;
    const float* wa = s->deflate ? sys->wa : NULL; /* undeflated: no more reads */
    double a = 0.0, b = 0.0, q = 0.0, t = 0.0;
    const int jacobi = s->precond == LULL_POISSON_PRECOND_JACOBI;
#pragma omp parallel for schedule(static) reduction(+ : a, b, q, t) num_threads(sys->threads)
    for (ptrdiff_t i = 0; i < (ptrdiff_t)n; ++i) {
      if (jacobi)
        z[i] = r[i] * inv[i];
      a += (double)r[i] * z[i];
      b += (double)r[i] * r[i];
      if (wa) {
        q += (double)wa[i] * z[i];
        t += r[i];
      }
    }
    rz[c] = a;
    rr[c] = b;
    wz[c] = q;
    rs[c] = t;
  }
}

/* p = z - mu + beta p, or z - mu for the first direction (fresh), mu the
 * deflation's constant. */
static void new_direction(const lull_poisson_system* sys, float* p, const float* z, float mu,
                          float beta, int fresh)
{
  const size_t n = (size_t)sys->width * (size_t)sys->height;
#pragma omp parallel for schedule(static) num_threads(sys->threads)
  for (ptrdiff_t i = 0; i < (ptrdiff_t)n; ++i)
    p[i] = lull_cg_direction(z[i], mu, beta, fresh ? 0.0f : p[i]);
}

/* Preconditioned CG from x, deflated by the constant where it is a weak
 * direction (lull_cg_deflates); adds its iterations to stats.
 *
 * The constant is the operator's weakest direction: A 1 = alpha^2 wa (the
 * edge rows and the patch term sum to 0), so its eigenvalue is alpha^2
 * times the data weights, 0 at alpha 0.  Along it CG's residual is
 * smaller than float rounding of the residual's sum long before the
 * error is, so CG stopped there (1x5 at alpha 1e-4: 0.14 from the exact
 * solution whatever the iterations) or, at alpha 0 on gradients that are
 * not integrable, fed that rounding into its steps.  Deflation (Nicolaides
 * 1987; Saad, Yeung, Erhel and Guyomarc'h 2000, "A deflated version of the
 * conjugate gradient algorithm", with Z = the constant) solves the
 * constant exactly, from sums that need no cancellation:
 *  - the start moves x by the data-weighted mean of b - x (the c with
 *    1^T (b - A (x + c)) = alpha^2 sum wa (b - x - c) = 0);
 *  - every direction is made A-orthogonal to the constant,
 *    p = z + beta p - mu with mu = sum wa z / sum wa, so no step moves
 *    along it again.
 * Taking the residual's float sum out as well (to its exact value) was
 * tried and made things worse: with IRLS weights spanning many orders a
 * few heavy rows hold most of that rounding, and spreading it evenly fed
 * it to the light ones (L1 with power-2 weights: objective 658 -> 1771).
 * At alpha 0 the constant is free; x keeps its mean, and the solve shifts
 * it to the primal's (shift_to_primal_mean). */
static lull_status cg_solve(const lull_poisson_system* sys, const cg_setup* s, cg_work* work,
                            float* const x[3], const lull_progress_span* progress,
                            lull_poisson_stats* stats, lull_error* err)
{
  const size_t n = (size_t)sys->width * (size_t)sys->height;
  const int nc = sys->channels;
  double rhs2[3] = {0, 0, 0}, dot[3], rz[3] = {0, 0, 0}, rr[3] = {0, 0, 0}, wz[3], rs[3];
  float mu[3] = {0, 0, 0};
  int active[3] = {0, 0, 0};

  if (s->precond == LULL_POISSON_PRECOND_JACOBI)
    jacobi_setup(sys, work->inv_diag);
  double wsum = 0.0; /* 0: nothing deflated (lull_cg_deflation) */
  if (s->deflate) {
#pragma omp parallel for schedule(static) reduction(+ : wsum) num_threads(sys->threads)
    for (ptrdiff_t i = 0; i < (ptrdiff_t)n; ++i)
      wsum += sys->wa[i];
  }
  /* r = b - A x: the right-hand side goes through p */
  right_hand_side(sys, work->p);
  apply(sys, x, work->ap, dot);
  for (int c = 0; c < nc; ++c) {
    const float* b = work->p[c];
    const float* ax = work->ap[c];
    const float* primal = sys->primal[c];
    const float* wa = sys->wa;
    float* xc = x[c];
    float* r = work->r[c];
    double b2 = 0.0, ws = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : b2, ws) num_threads(sys->threads)
    for (ptrdiff_t i = 0; i < (ptrdiff_t)n; ++i) {
      r[i] = b[i] - ax[i];
      b2 += (double)b[i] * b[i];
      if (s->deflate)
        ws += (double)wa[i] * ((double)primal[i] - xc[i]);
    }
    rhs2[c] = b2;
    /* the constant's exact solve: x += c, r -= c A 1 */
    const float shift = lull_cg_constant(ws, wsum, sys->alpha2);
    const float g = shift * sys->alpha2;
    if (shift != 0.0f) {
#pragma omp parallel for schedule(static) num_threads(sys->threads)
      for (ptrdiff_t i = 0; i < (ptrdiff_t)n; ++i) {
        xc[i] += shift;
        r[i] -= g * wa[i];
      }
    }
  }
  precondition(sys, s, work, rz, rr, wz, rs);
  for (int c = 0; c < nc; ++c) {
    mu[c] = lull_cg_deflation(wz[c], wsum);
    rz[c] = lull_cg_deflated_rz(rz[c], mu[c], rs[c]);
    new_direction(sys, work->p[c], work->z[c], mu[c], 0.0f, 1);
    active[c] = lull_cg_continues(rr[c], rz[c], rhs2[c], s->tolerance);
  }

  int it = 0;
  for (; it < s->iterations && (active[0] || active[1] || active[2]); ++it) {
    if (it % 8 == 0) {
      const lull_status status =
          lull_progress_span_report(progress, (double)it / s->iterations, err);
      if (status != LULL_OK)
        return status;
    }
    apply(sys, work->p, work->ap, dot);
    float step[3] = {0, 0, 0};
    for (int c = 0; c < nc; ++c) {
      if (active[c] && dot[c] > 0.0 && isfinite(dot[c]))
        step[c] = (float)(rz[c] / dot[c]);
      else
        active[c] = 0;
    }
    for (int c = 0; c < nc; ++c) {
      if (!active[c])
        continue;
      float* xc = x[c];
      float* r = work->r[c];
      const float* p = work->p[c];
      const float* ap = work->ap[c];
      const float a = step[c];
#pragma omp parallel for schedule(static) num_threads(sys->threads)
      for (ptrdiff_t i = 0; i < (ptrdiff_t)n; ++i) {
        xc[i] += a * p[i];
        r[i] -= a * ap[i];
      }
    }
    double rz_new[3];
    precondition(sys, s, work, rz_new, rr, wz, rs);
    for (int c = 0; c < nc; ++c) {
      if (!active[c])
        continue;
      mu[c] = lull_cg_deflation(wz[c], wsum);
      rz_new[c] = lull_cg_deflated_rz(rz_new[c], mu[c], rs[c]);
      if (!lull_cg_continues(rr[c], rz_new[c], rhs2[c], s->tolerance)) {
        active[c] = 0;
        continue;
      }
      const float beta = (float)(rz_new[c] / rz[c]);
      rz[c] = rz_new[c];
      new_direction(sys, work->p[c], work->z[c], mu[c], beta, 0);
    }
  }
  if (stats) {
    stats->cg_iterations += it;
    for (int c = 0; c < 3; ++c) {
      stats->residual[c] = c < nc ? sqrt(rr[c]) : 0.0;
      stats->rhs[c] = c < nc ? sqrt(rhs2[c]) : 0.0;
    }
  }
  return LULL_OK;
}

/* -- the solve -------------------------------------------------------------------- */

/* alpha = 0 leaves the solution's constant free: the DCT solve takes the
 * primal's mean, and CG (whose deflated steps keep the start's mean) is
 * shifted to it afterwards, so both solvers give the same image.  CUDA:
 * LULL_PK_MEAN_OFFSET and LULL_PK_SHIFT. */
static void shift_to_primal_mean(const lull_poisson_system* sys, float* const x[3])
{
  const size_t n = (size_t)sys->width * (size_t)sys->height;
  for (int c = 0; c < sys->channels; ++c) {
    double offset = 0.0;
    for (size_t i = 0; i < n; ++i)
      offset += (double)sys->primal[c][i] - (double)x[c][i];
    const float f = (float)(offset / (double)n);
    for (size_t i = 0; i < n; ++i)
      x[c][i] += f;
  }
}

/* Exact L2 solve of the constant-weight system (weights reset) by DCT. */
static void dct_solve(const lull_poisson_system* sys, const lull_poisson_dct* dct,
                      float* const x[3], lull_poisson_stats* stats)
{
  const size_t n = (size_t)sys->width * (size_t)sys->height;
  right_hand_side(sys, x);
  for (int c = 0; c < sys->channels; ++c) {
    double mean = 0.0;
    for (size_t i = 0; i < n; ++i)
      mean += sys->primal[c][i];
    mean /= (double)n;
    lull_poisson_dct_solve(dct, x[c], sys->alpha2, 1.0f, 1, (float)mean);
  }
  if (stats)
    for (int c = 0; c < 3; ++c)
      stats->residual[c] = stats->rhs[c] = 0.0; /* exact up to rounding */
}

/* Threads for the sweeps of an n-pixel system: a CG iteration is several
 * short parallel loops, and below ~64k pixels per thread the fork/join
 * costs more than the work it shares. */
static int sweep_threads(int threads, size_t n)
{
  const size_t useful = 1 + n / 65536;
  return useful < (size_t)threads ? (int)useful : threads;
}

static cg_setup setup_for(const lull_poisson_params* params, const lull_poisson_system* sys,
                          const lull_poisson_dct* dct)
{
  cg_setup setup;
  setup.iterations = params->cg_iterations;
  setup.tolerance = params->cg_tolerance;
  setup.precond = params->preconditioner;
  if (setup.precond == LULL_POISSON_PRECOND_DCT && (!dct || sys->patch))
    setup.precond = LULL_POISSON_PRECOND_JACOBI; /* no constant-weight model of a patch term */
  setup.deflate = lull_cg_deflates(sys->alpha2, sys->width, sys->height);
  setup.dct = dct;
  setup.dct_a = sys->alpha2;
  setup.dct_c = 1.0f;
  if (setup.precond == LULL_POISSON_PRECOND_DCT)
    mean_weights(sys, &setup.dct_a, &setup.dct_c);
  return setup;
}

/* A copy of the caller's system for one solve (its thread count for the
 * image size), and cleared statistics. */
static lull_poisson_system solve_copy(const lull_poisson_system* system, lull_poisson_stats* stats)
{
  if (stats)
    memset(stats, 0, sizeof *stats);
  lull_poisson_system local = *system;
  local.threads = sweep_threads(system->threads, (size_t)system->width * (size_t)system->height);
  return local;
}

lull_status lull_poisson_cg(const lull_poisson_params* params, const lull_poisson_system* system,
                            float* const x[3], const lull_poisson_dct* dct,
                            const lull_progress_span* progress, lull_poisson_stats* stats,
                            lull_error* err)
{
  const size_t n = (size_t)system->width * (size_t)system->height;
  lull_poisson_system local = solve_copy(system, stats);
  const cg_setup setup = setup_for(params, &local, dct);
  cg_work work;
  if (!cg_work_init(&work, n, local.channels, setup.precond != LULL_POISSON_PRECOND_NONE))
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  lull_status status = cg_solve(&local, &setup, &work, x, progress, stats, err);
  free(work.block);
  if (status == LULL_OK)
    status = lull_progress_span_report(progress, 1.0, err);
  return status;
}

lull_status lull_poisson_solve(const lull_poisson_params* params, lull_poisson_system* system,
                               float* const x[3], const lull_poisson_dct* dct,
                               const lull_progress_span* progress, lull_poisson_stats* stats,
                               lull_error* err)
{
  const size_t n = (size_t)system->width * (size_t)system->height;
  lull_poisson_system local = solve_copy(system, stats);
  lull_poisson_system* sys = &local;
  const int use_dct = params->solver == LULL_POISSON_SOLVER_DCT && !sys->patch && dct;
  const int solves = params->norm == LULL_POISSON_NORM_L1 ? LULL_MAX(params->irls_iterations, 1) : 1;
  lull_poisson_weights_reset(sys);
  cg_setup setup = setup_for(params, sys, dct);

  cg_work work;
  const int need_cg = !use_dct || solves > 1;
  if (need_cg && !cg_work_init(&work, n, sys->channels, setup.precond != LULL_POISSON_PRECOND_NONE))
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");

  lull_status status = LULL_OK;
  float eps = params->irls_reg_init;
  for (int k = 0; k < solves && status == LULL_OK; ++k) {
    const lull_progress_span sub = lull_progress_subspan(progress, (double)k / solves,
                                                         (double)(k + 1) / solves);
    if (k > 0) {
      /* §5.2 SOLVEL1: the k-th reweighting uses regInit regIter^(k-1) */
      reweight(sys, (const float* const*)x, eps, params->irls_weight_power);
      eps *= params->irls_reg_factor;
      if (setup.precond == LULL_POISSON_PRECOND_DCT)
        mean_weights(sys, &setup.dct_a, &setup.dct_c);
    }
    if (k == 0 && use_dct)
      dct_solve(sys, dct, x, stats);
    else
      status = cg_solve(sys, &setup, &work, x, &sub, stats, err);
  }
  if (need_cg)
    free(work.block);
  if (status == LULL_OK && !(sys->alpha2 > 0.0f) && need_cg)
    shift_to_primal_mean(sys, x);
  if (status == LULL_OK)
    status = lull_progress_span_report(progress, 1.0, err);
  return status;
}
