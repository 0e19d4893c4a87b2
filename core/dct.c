/* Batched FFT and DCT of any length (see dct.h for the method).
 *
 * Stockham autosort FFT (Stockham 1966; the indexing of Govindaraju et al.
 * 2008, "High performance discrete Fourier transforms on graphics
 * processors"): pass s with radix R and Ns = product of the earlier radices
 * reads butterfly j's inputs at j + r n/R and writes its outputs at
 * (j / Ns) Ns R + (j mod Ns) + r Ns, so no bit reversal is needed and every
 * pass streams both buffers. */
#include "dct.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "threads.h"

enum { B = LULL_DCT_BATCH, MAX_DCT_LENGTH = 1 << 26 };

static const double PI = 3.14159265358979323846;

static float* alloc_floats(size_t count)
{
  /* 64-byte aligned so batch rows are whole vectors */
  const size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  return aligned_alloc(64, bytes ? bytes : 64);
}

/* Splits n into radices 4, 2, 3, 5, 7, ... up to LULL_FFT_MAX_RADIX; returns
 * 1 when nothing is left (n is smooth enough for a direct FFT). */
static int factorize(int n, int radix[LULL_FFT_MAX_PASSES], int* passes)
{
  int count = 0;
  while (n % 4 == 0) {
    radix[count++] = 4;
    n /= 4;
  }
  while (n % 2 == 0) {
    radix[count++] = 2;
    n /= 2;
  }
  for (int p = 3; p <= LULL_FFT_MAX_RADIX; p += 2)
    while (n % p == 0) {
      radix[count++] = p;
      n /= p;
    }
  *passes = count;
  return n == 1;
}

/* Smallest 2/3/5-smooth integer >= n. */
static int smooth_length(int n)
{
  for (int m = n;; ++m) {
    int r = m;
    while (r % 2 == 0)
      r /= 2;
    while (r % 3 == 0)
      r /= 3;
    while (r % 5 == 0)
      r /= 5;
    if (r == 1)
      return m;
  }
}

static void fft_plan_free(lull_fft_plan* plan)
{
  free(plan->tw_re);
  free(plan->tw_im);
  free(plan->unit_re);
  free(plan->unit_im);
  free(plan->chirp_re);
  free(plan->chirp_im);
  free(plan->kernel_re);
  free(plan->kernel_im);
  if (plan->inner) {
    fft_plan_free(plan->inner);
    free(plan->inner);
  }
  memset(plan, 0, sizeof *plan);
}

static lull_status fft_plan_init(lull_fft_plan* plan, int n, lull_error* err);

/* Bluestein: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}), w_j = exp(-i pi j^2 / n),
 * a linear convolution done as a circular one of length m >= 2n - 1. */
static lull_status bluestein_init(lull_fft_plan* plan, int n, lull_error* err)
{
  const int m = smooth_length(2 * n - 1);
  plan->inner = calloc(1, sizeof *plan->inner);
  if (!plan->inner)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  lull_status status = fft_plan_init(plan->inner, m, err);
  if (status != LULL_OK)
    return status;
  plan->chirp_re = alloc_floats((size_t)n);
  plan->chirp_im = alloc_floats((size_t)n);
  plan->kernel_re = alloc_floats((size_t)m);
  plan->kernel_im = alloc_floats((size_t)m);
  float* bre = alloc_floats((size_t)m * B);
  float* bim = alloc_floats((size_t)m * B);
  float* scratch = alloc_floats(lull_fft_scratch_floats(plan->inner));
  if (!plan->chirp_re || !plan->chirp_im || !plan->kernel_re || !plan->kernel_im || !bre ||
      !bim || !scratch) {
    free(bre);
    free(bim);
    free(scratch);
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  memset(bre, 0, (size_t)m * B * sizeof(float));
  memset(bim, 0, (size_t)m * B * sizeof(float));
  for (int j = 0; j < n; ++j) {
    /* j^2 mod 2n keeps the angle exact for long transforms */
    const long long q = (long long)j * j % (2LL * n);
    const double angle = PI * (double)q / (double)n;
    plan->chirp_re[j] = (float)cos(angle);
    plan->chirp_im[j] = (float)-sin(angle);
    /* kernel b_j = conj(w_j) at j and at m - j (lane 0 only) */
    bre[(size_t)j * B] = (float)cos(angle);
    bim[(size_t)j * B] = (float)sin(angle);
    if (j > 0) {
      bre[(size_t)(m - j) * B] = (float)cos(angle);
      bim[(size_t)(m - j) * B] = (float)sin(angle);
    }
  }
  lull_fft_batch(plan->inner, bre, bim, scratch);
  for (int k = 0; k < m; ++k) {
    plan->kernel_re[k] = bre[(size_t)k * B] / (float)m;
    plan->kernel_im[k] = bim[(size_t)k * B] / (float)m;
  }
  free(bre);
  free(bim);
  free(scratch);
  return LULL_OK;
}

static lull_status fft_plan_init(lull_fft_plan* plan, int n, lull_error* err)
{
  memset(plan, 0, sizeof *plan);
  plan->n = n;
  if (!factorize(n, plan->radix, &plan->passes)) {
    plan->passes = 0;
    return bluestein_init(plan, n, err);
  }
  size_t twiddles = 0, units = 0;
  int ns = 1;
  for (int s = 0; s < plan->passes; ++s) {
    const int r = plan->radix[s];
    plan->twiddle_offset[s] = twiddles;
    twiddles += (size_t)ns * (size_t)(r - 1);
    plan->unit_offset[s] = units;
    if (r > 5)
      units += (size_t)r;
    ns *= r;
  }
  plan->tw_re = alloc_floats(twiddles);
  plan->tw_im = alloc_floats(twiddles);
  plan->unit_re = alloc_floats(units);
  plan->unit_im = alloc_floats(units);
  if (!plan->tw_re || !plan->tw_im || !plan->unit_re || !plan->unit_im)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  ns = 1;
  for (int s = 0; s < plan->passes; ++s) {
    const int r = plan->radix[s];
    float* wr = plan->tw_re + plan->twiddle_offset[s];
    float* wi = plan->tw_im + plan->twiddle_offset[s];
    for (int k = 0; k < ns; ++k)
      for (int q = 1; q < r; ++q) {
        const double angle = -2.0 * PI * (double)q * (double)k / ((double)ns * (double)r);
        wr[k * (r - 1) + q - 1] = (float)cos(angle);
        wi[k * (r - 1) + q - 1] = (float)sin(angle);
      }
    if (r > 5)
      for (int j = 0; j < r; ++j) {
        plan->unit_re[plan->unit_offset[s] + (size_t)j] = (float)cos(2.0 * PI * j / r);
        plan->unit_im[plan->unit_offset[s] + (size_t)j] = (float)-sin(2.0 * PI * j / r);
      }
    ns *= r;
  }
  return LULL_OK;
}

size_t lull_fft_scratch_floats(const lull_fft_plan* plan)
{
  if (plan->inner)
    return 4 * (size_t)plan->inner->n * B;
  return 2 * (size_t)plan->n * B;
}

/* -- radix passes ------------------------------------------------------------ */

typedef struct fft_pass
{
  int n, ns;
  const float* tw_re;
  const float* tw_im;
  const float* unit_re;
  const float* unit_im;
  const float* sre;
  const float* sim;
  float* dre;
  float* dim;
} fft_pass;

/* Complex product (ar + i ai)(wr + i wi), written out so the batch loop
 * vectorises. */
#define CMUL_RE(ar, ai, wr, wi) ((ar) * (wr) - (ai) * (wi))
#define CMUL_IM(ar, ai, wr, wi) ((ar) * (wi) + (ai) * (wr))

LULL_TARGET_CLONES
static void pass2(const fft_pass* p)
{
  const int m = p->n / 2, ns = p->ns;
  for (int j = 0; j < m; ++j) {
    const int k = j % ns;
    const size_t o = (size_t)(j / ns) * (size_t)ns * 2 + (size_t)k;
    const float w1r = p->tw_re[k], w1i = p->tw_im[k];
    const float* LULL_RESTRICT x0r = p->sre + (size_t)j * B;
    const float* LULL_RESTRICT x0i = p->sim + (size_t)j * B;
    const float* LULL_RESTRICT x1r = p->sre + (size_t)(j + m) * B;
    const float* LULL_RESTRICT x1i = p->sim + (size_t)(j + m) * B;
    float* LULL_RESTRICT y0r = p->dre + o * B;
    float* LULL_RESTRICT y0i = p->dim + o * B;
    float* LULL_RESTRICT y1r = p->dre + (o + (size_t)ns) * B;
    float* LULL_RESTRICT y1i = p->dim + (o + (size_t)ns) * B;
    for (int b = 0; b < B; ++b) {
      const float a1r = CMUL_RE(x1r[b], x1i[b], w1r, w1i);
      const float a1i = CMUL_IM(x1r[b], x1i[b], w1r, w1i);
      y0r[b] = x0r[b] + a1r;
      y0i[b] = x0i[b] + a1i;
      y1r[b] = x0r[b] - a1r;
      y1i[b] = x0i[b] - a1i;
    }
  }
}

LULL_TARGET_CLONES
static void pass3(const fft_pass* p)
{
  const int m = p->n / 3, ns = p->ns;
  const float c = -0.5f, s = 0.86602540378443864676f; /* cos, sin of 2 pi / 3 */
  for (int j = 0; j < m; ++j) {
    const int k = j % ns;
    const size_t o = (size_t)(j / ns) * (size_t)ns * 3 + (size_t)k;
    const float w1r = p->tw_re[2 * k], w1i = p->tw_im[2 * k];
    const float w2r = p->tw_re[2 * k + 1], w2i = p->tw_im[2 * k + 1];
    const float* LULL_RESTRICT x0r = p->sre + (size_t)j * B;
    const float* LULL_RESTRICT x0i = p->sim + (size_t)j * B;
    const float* LULL_RESTRICT x1r = p->sre + (size_t)(j + m) * B;
    const float* LULL_RESTRICT x1i = p->sim + (size_t)(j + m) * B;
    const float* LULL_RESTRICT x2r = p->sre + (size_t)(j + 2 * m) * B;
    const float* LULL_RESTRICT x2i = p->sim + (size_t)(j + 2 * m) * B;
    float* LULL_RESTRICT y0r = p->dre + o * B;
    float* LULL_RESTRICT y0i = p->dim + o * B;
    float* LULL_RESTRICT y1r = p->dre + (o + (size_t)ns) * B;
    float* LULL_RESTRICT y1i = p->dim + (o + (size_t)ns) * B;
    float* LULL_RESTRICT y2r = p->dre + (o + 2 * (size_t)ns) * B;
    float* LULL_RESTRICT y2i = p->dim + (o + 2 * (size_t)ns) * B;
    for (int b = 0; b < B; ++b) {
      const float a1r = CMUL_RE(x1r[b], x1i[b], w1r, w1i), a1i = CMUL_IM(x1r[b], x1i[b], w1r, w1i);
      const float a2r = CMUL_RE(x2r[b], x2i[b], w2r, w2i), a2i = CMUL_IM(x2r[b], x2i[b], w2r, w2i);
      const float sr = a1r + a2r, si = a1i + a2i;
      const float dr = a1r - a2r, di = a1i - a2i;
      const float tr = x0r[b] + c * sr, ti = x0i[b] + c * si;
      y0r[b] = x0r[b] + sr;
      y0i[b] = x0i[b] + si;
      /* y1 = t - i s d, y2 = t + i s d */
      y1r[b] = tr + s * di;
      y1i[b] = ti - s * dr;
      y2r[b] = tr - s * di;
      y2i[b] = ti + s * dr;
    }
  }
}

LULL_TARGET_CLONES
static void pass4(const fft_pass* p)
{
  const int m = p->n / 4, ns = p->ns;
  for (int j = 0; j < m; ++j) {
    const int k = j % ns;
    const size_t o = (size_t)(j / ns) * (size_t)ns * 4 + (size_t)k;
    const float* wr = p->tw_re + 3 * k;
    const float* wi = p->tw_im + 3 * k;
    const float w1r = wr[0], w1i = wi[0], w2r = wr[1], w2i = wi[1], w3r = wr[2], w3i = wi[2];
    const float* LULL_RESTRICT x0r = p->sre + (size_t)j * B;
    const float* LULL_RESTRICT x0i = p->sim + (size_t)j * B;
    const float* LULL_RESTRICT x1r = p->sre + (size_t)(j + m) * B;
    const float* LULL_RESTRICT x1i = p->sim + (size_t)(j + m) * B;
    const float* LULL_RESTRICT x2r = p->sre + (size_t)(j + 2 * m) * B;
    const float* LULL_RESTRICT x2i = p->sim + (size_t)(j + 2 * m) * B;
    const float* LULL_RESTRICT x3r = p->sre + (size_t)(j + 3 * m) * B;
    const float* LULL_RESTRICT x3i = p->sim + (size_t)(j + 3 * m) * B;
    float* LULL_RESTRICT y0r = p->dre + o * B;
    float* LULL_RESTRICT y0i = p->dim + o * B;
    float* LULL_RESTRICT y1r = p->dre + (o + (size_t)ns) * B;
    float* LULL_RESTRICT y1i = p->dim + (o + (size_t)ns) * B;
    float* LULL_RESTRICT y2r = p->dre + (o + 2 * (size_t)ns) * B;
    float* LULL_RESTRICT y2i = p->dim + (o + 2 * (size_t)ns) * B;
    float* LULL_RESTRICT y3r = p->dre + (o + 3 * (size_t)ns) * B;
    float* LULL_RESTRICT y3i = p->dim + (o + 3 * (size_t)ns) * B;
    for (int b = 0; b < B; ++b) {
      const float a0r = x0r[b], a0i = x0i[b];
      const float a1r = CMUL_RE(x1r[b], x1i[b], w1r, w1i), a1i = CMUL_IM(x1r[b], x1i[b], w1r, w1i);
      const float a2r = CMUL_RE(x2r[b], x2i[b], w2r, w2i), a2i = CMUL_IM(x2r[b], x2i[b], w2r, w2i);
      const float a3r = CMUL_RE(x3r[b], x3i[b], w3r, w3i), a3i = CMUL_IM(x3r[b], x3i[b], w3r, w3i);
      const float t0r = a0r + a2r, t0i = a0i + a2i, t1r = a0r - a2r, t1i = a0i - a2i;
      const float t2r = a1r + a3r, t2i = a1i + a3i, t3r = a1r - a3r, t3i = a1i - a3i;
      y0r[b] = t0r + t2r;
      y0i[b] = t0i + t2i;
      y2r[b] = t0r - t2r;
      y2i[b] = t0i - t2i;
      /* forward: exp(-2 pi i / 4) = -i, so y1 = t1 - i t3, y3 = t1 + i t3 */
      y1r[b] = t1r + t3i;
      y1i[b] = t1i - t3r;
      y3r[b] = t1r - t3i;
      y3i[b] = t1i + t3r;
    }
  }
}

LULL_TARGET_CLONES
static void pass5(const fft_pass* p)
{
  const int m = p->n / 5, ns = p->ns;
  /* cos and sin of 2 pi / 5 and 4 pi / 5 */
  const float c1 = 0.30901699437494742410f, c2 = -0.80901699437494742410f;
  const float s1 = 0.95105651629515357212f, s2 = 0.58778525229247312917f;
  for (int j = 0; j < m; ++j) {
    const int k = j % ns;
    const size_t o = (size_t)(j / ns) * (size_t)ns * 5 + (size_t)k;
    const float* wr = p->tw_re + 4 * k;
    const float* wi = p->tw_im + 4 * k;
    const float* LULL_RESTRICT xr[5];
    const float* LULL_RESTRICT xi[5];
    float* LULL_RESTRICT yr[5];
    float* LULL_RESTRICT yi[5];
    for (int r = 0; r < 5; ++r) {
      xr[r] = p->sre + (size_t)(j + r * m) * B;
      xi[r] = p->sim + (size_t)(j + r * m) * B;
      yr[r] = p->dre + (o + (size_t)r * (size_t)ns) * B;
      yi[r] = p->dim + (o + (size_t)r * (size_t)ns) * B;
    }
    for (int b = 0; b < B; ++b) {
      const float a0r = xr[0][b], a0i = xi[0][b];
      const float a1r = CMUL_RE(xr[1][b], xi[1][b], wr[0], wi[0]);
      const float a1i = CMUL_IM(xr[1][b], xi[1][b], wr[0], wi[0]);
      const float a2r = CMUL_RE(xr[2][b], xi[2][b], wr[1], wi[1]);
      const float a2i = CMUL_IM(xr[2][b], xi[2][b], wr[1], wi[1]);
      const float a3r = CMUL_RE(xr[3][b], xi[3][b], wr[2], wi[2]);
      const float a3i = CMUL_IM(xr[3][b], xi[3][b], wr[2], wi[2]);
      const float a4r = CMUL_RE(xr[4][b], xi[4][b], wr[3], wi[3]);
      const float a4i = CMUL_IM(xr[4][b], xi[4][b], wr[3], wi[3]);
      const float b1r = a1r + a4r, b1i = a1i + a4i, d1r = a1r - a4r, d1i = a1i - a4i;
      const float b2r = a2r + a3r, b2i = a2i + a3i, d2r = a2r - a3r, d2i = a2i - a3i;
      const float p1r = a0r + c1 * b1r + c2 * b2r, p1i = a0i + c1 * b1i + c2 * b2i;
      const float p2r = a0r + c2 * b1r + c1 * b2r, p2i = a0i + c2 * b1i + c1 * b2i;
      const float q1r = s1 * d1r + s2 * d2r, q1i = s1 * d1i + s2 * d2i;
      const float q2r = s2 * d1r - s1 * d2r, q2i = s2 * d1i - s1 * d2i;
      yr[0][b] = a0r + b1r + b2r;
      yi[0][b] = a0i + b1i + b2i;
      /* y1 = p1 - i q1, y4 = p1 + i q1, y2 = p2 - i q2, y3 = p2 + i q2 */
      yr[1][b] = p1r + q1i;
      yi[1][b] = p1i - q1r;
      yr[4][b] = p1r - q1i;
      yi[4][b] = p1i + q1r;
      yr[2][b] = p2r + q2i;
      yi[2][b] = p2i - q2r;
      yr[3][b] = p2r - q2i;
      yi[3][b] = p2i + q2r;
    }
  }
}

/* Any prime radix up to LULL_FFT_MAX_RADIX: a direct O(R^2) DFT. */
static void pass_generic(const fft_pass* p, int r)
{
  const int m = p->n / r, ns = p->ns;
  float ar[LULL_FFT_MAX_RADIX][B], ai[LULL_FFT_MAX_RADIX][B];
  for (int j = 0; j < m; ++j) {
    const int k = j % ns;
    const size_t o = (size_t)(j / ns) * (size_t)ns * (size_t)r + (size_t)k;
    for (int q = 0; q < r; ++q) {
      const float* xr = p->sre + (size_t)(j + q * m) * B;
      const float* xi = p->sim + (size_t)(j + q * m) * B;
      const float wr = q ? p->tw_re[k * (r - 1) + q - 1] : 1.0f;
      const float wi = q ? p->tw_im[k * (r - 1) + q - 1] : 0.0f;
      for (int b = 0; b < B; ++b) {
        ar[q][b] = CMUL_RE(xr[b], xi[b], wr, wi);
        ai[q][b] = CMUL_IM(xr[b], xi[b], wr, wi);
      }
    }
    for (int q = 0; q < r; ++q) {
      float* yr = p->dre + (o + (size_t)q * (size_t)ns) * B;
      float* yi = p->dim + (o + (size_t)q * (size_t)ns) * B;
      float sr[B], si[B];
      for (int b = 0; b < B; ++b) {
        sr[b] = ar[0][b];
        si[b] = ai[0][b];
      }
      for (int t = 1; t < r; ++t) {
        const int e = (t * q) % r;
        const float ur = p->unit_re[e], ui = p->unit_im[e];
        for (int b = 0; b < B; ++b) {
          sr[b] += CMUL_RE(ar[t][b], ai[t][b], ur, ui);
          si[b] += CMUL_IM(ar[t][b], ai[t][b], ur, ui);
        }
      }
      memcpy(yr, sr, sizeof sr);
      memcpy(yi, si, sizeof si);
    }
  }
}

static void bluestein(const lull_fft_plan* plan, float* re, float* im, float* scratch)
{
  const int n = plan->n, m = plan->inner->n;
  float* ar = scratch;
  float* ai = scratch + (size_t)m * B;
  float* inner_scratch = scratch + 2 * (size_t)m * B;
  for (int j = 0; j < n; ++j) {
    const float wr = plan->chirp_re[j], wi = plan->chirp_im[j];
    float* LULL_RESTRICT yr = ar + (size_t)j * B;
    float* LULL_RESTRICT yi = ai + (size_t)j * B;
    const float* LULL_RESTRICT xr = re + (size_t)j * B;
    const float* LULL_RESTRICT xi = im + (size_t)j * B;
    for (int b = 0; b < B; ++b) {
      yr[b] = CMUL_RE(xr[b], xi[b], wr, wi);
      yi[b] = CMUL_IM(xr[b], xi[b], wr, wi);
    }
  }
  memset(ar + (size_t)n * B, 0, (size_t)(m - n) * B * sizeof(float));
  memset(ai + (size_t)n * B, 0, (size_t)(m - n) * B * sizeof(float));
  lull_fft_batch(plan->inner, ar, ai, inner_scratch);
  for (int k = 0; k < m; ++k) {
    const float wr = plan->kernel_re[k], wi = plan->kernel_im[k];
    float* LULL_RESTRICT yr = ar + (size_t)k * B;
    float* LULL_RESTRICT yi = ai + (size_t)k * B;
    for (int b = 0; b < B; ++b) {
      const float xr = yr[b], xi = yi[b];
      yr[b] = CMUL_RE(xr, xi, wr, wi);
      yi[b] = CMUL_IM(xr, xi, wr, wi);
    }
  }
  /* inverse FFT by the swap trick: FFT(swap(x)) swapped = n IFFT(x); the
   * kernel carries the 1/m */
  lull_fft_batch(plan->inner, ai, ar, inner_scratch);
  for (int k = 0; k < n; ++k) {
    const float wr = plan->chirp_re[k], wi = plan->chirp_im[k];
    const float* LULL_RESTRICT xr = ar + (size_t)k * B;
    const float* LULL_RESTRICT xi = ai + (size_t)k * B;
    float* LULL_RESTRICT yr = re + (size_t)k * B;
    float* LULL_RESTRICT yi = im + (size_t)k * B;
    for (int b = 0; b < B; ++b) {
      yr[b] = CMUL_RE(xr[b], xi[b], wr, wi);
      yi[b] = CMUL_IM(xr[b], xi[b], wr, wi);
    }
  }
}

void lull_fft_batch(const lull_fft_plan* plan, float* re, float* im, float* scratch)
{
  if (plan->inner) {
    bluestein(plan, re, im, scratch);
    return;
  }
  const size_t n = (size_t)plan->n;
  fft_pass p;
  p.n = plan->n;
  p.ns = 1;
  p.sre = re;
  p.sim = im;
  p.dre = scratch;
  p.dim = scratch + n * B;
  for (int s = 0; s < plan->passes; ++s) {
    const int r = plan->radix[s];
    p.tw_re = plan->tw_re + plan->twiddle_offset[s];
    p.tw_im = plan->tw_im + plan->twiddle_offset[s];
    p.unit_re = plan->unit_re + plan->unit_offset[s];
    p.unit_im = plan->unit_im + plan->unit_offset[s];
    switch (r) {
      case 2: pass2(&p); break;
      case 3: pass3(&p); break;
      case 4: pass4(&p); break;
      case 5: pass5(&p); break;
      default: pass_generic(&p, r); break;
    }
    /* ping-pong: this pass's output is the next pass's input */
    float* const out_re = p.dre;
    float* const out_im = p.dim;
    p.dre = (float*)p.sre;
    p.dim = (float*)p.sim;
    p.sre = out_re;
    p.sim = out_im;
    p.ns *= r;
  }
  if (p.sre != re) {
    memcpy(re, p.sre, n * B * sizeof(float));
    memcpy(im, p.sim, n * B * sizeof(float));
  }
}

/* -- DCT ----------------------------------------------------------------------- */

lull_status lull_dct_plan_init(lull_dct_plan* plan, int n, lull_error* err)
{
  memset(plan, 0, sizeof *plan);
  if (n < 1 || n > MAX_DCT_LENGTH)
    return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT, "DCT length %d out of range", n);
  plan->n = n;
  plan->cos_q = alloc_floats((size_t)n);
  plan->sin_q = alloc_floats((size_t)n);
  if (!plan->cos_q || !plan->sin_q)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  for (int k = 0; k < n; ++k) {
    plan->cos_q[k] = (float)cos(PI * k / (2.0 * n));
    plan->sin_q[k] = (float)sin(PI * k / (2.0 * n));
  }
  return fft_plan_init(&plan->fft, n, err);
}

void lull_dct_plan_free(lull_dct_plan* plan)
{
  free(plan->cos_q);
  free(plan->sin_q);
  fft_plan_free(&plan->fft);
  memset(plan, 0, sizeof *plan);
}

size_t lull_dct_scratch_floats(const lull_dct_plan* plan)
{
  return 2 * (size_t)plan->n * B + lull_fft_scratch_floats(&plan->fft);
}

LULL_TARGET_CLONES
static void dct_forward_twiddle(const lull_dct_plan* plan, const float* re, const float* im,
                                float* data)
{
  for (int k = 0; k < plan->n; ++k) {
    const float c = plan->cos_q[k], s = plan->sin_q[k];
    const float* LULL_RESTRICT vr = re + (size_t)k * B;
    const float* LULL_RESTRICT vi = im + (size_t)k * B;
    float* LULL_RESTRICT x = data + (size_t)k * B;
    /* X[k] = Re(exp(-i pi k / 2n) V[k]) */
    for (int b = 0; b < B; ++b)
      x[b] = c * vr[b] + s * vi[b];
  }
}

LULL_TARGET_CLONES
static void dct_inverse_twiddle(const lull_dct_plan* plan, const float* data, float* re, float* im)
{
  const int n = plan->n;
  for (int k = 0; k < n; ++k) {
    const float c = plan->cos_q[k], s = plan->sin_q[k];
    const float* LULL_RESTRICT xk = data + (size_t)k * B;
    const float* LULL_RESTRICT xn = data + (size_t)(k ? n - k : 0) * B;
    const float mirror = k ? 1.0f : 0.0f; /* X[n] = 0 */
    float* LULL_RESTRICT vr = re + (size_t)k * B;
    float* LULL_RESTRICT vi = im + (size_t)k * B;
    /* V[k] = exp(i pi k / 2n) (X[k] - i X[n - k]) */
    for (int b = 0; b < B; ++b) {
      const float a = xk[b], d = mirror * xn[b];
      vr[b] = c * a + s * d;
      vi[b] = s * a - c * d;
    }
  }
}

void lull_dct_batch(const lull_dct_plan* plan, float* data, int inverse, float* scratch)
{
  const int n = plan->n;
  const size_t row = B * sizeof(float);
  float* re = scratch;
  float* im = scratch + (size_t)n * B;
  float* fft_scratch = scratch + 2 * (size_t)n * B;
  if (!inverse) {
    /* Makhoul's reordering: v[i] = x[2i], v[n - 1 - i] = x[2i + 1] */
    for (int i = 0; 2 * i < n; ++i)
      memcpy(re + (size_t)i * B, data + (size_t)(2 * i) * B, row);
    for (int i = 0; 2 * i + 1 < n; ++i)
      memcpy(re + (size_t)(n - 1 - i) * B, data + (size_t)(2 * i + 1) * B, row);
    memset(im, 0, (size_t)n * row);
    lull_fft_batch(&plan->fft, re, im, fft_scratch);
    dct_forward_twiddle(plan, re, im, data);
  } else {
    dct_inverse_twiddle(plan, data, re, im);
    lull_fft_batch(&plan->fft, im, re, fft_scratch); /* unscaled inverse (swap trick) */
    const float scale = 1.0f / (float)n;
    for (int i = 0; 2 * i < n; ++i) {
      float* LULL_RESTRICT x = data + (size_t)(2 * i) * B;
      const float* LULL_RESTRICT v = re + (size_t)i * B;
      for (int b = 0; b < B; ++b)
        x[b] = v[b] * scale;
    }
    for (int i = 0; 2 * i + 1 < n; ++i) {
      float* LULL_RESTRICT x = data + (size_t)(2 * i + 1) * B;
      const float* LULL_RESTRICT v = re + (size_t)(n - 1 - i) * B;
      for (int b = 0; b < B; ++b)
        x[b] = v[b] * scale;
    }
  }
}

/* One axis of the 2D transform: signals of length plan->n whose elements
 * are element_stride floats apart, batch items item_stride floats apart. */
static void dct_axis(const lull_dct_plan* plan, float* image, size_t element_stride,
                     size_t item_stride, int items, int inverse, float* scratch, int threads)
{
  const int n = plan->n;
  const int chunks = (items + B - 1) / B;
  const size_t per_thread = (size_t)n * B + lull_dct_scratch_floats(plan);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int c = 0; c < chunks; ++c) {
    float* data = scratch + (size_t)lull_thread_index() * per_thread;
    float* work = data + (size_t)n * B;
    const int first = c * B;
    const int count = LULL_MIN(B, items - first);
    for (int k = 0; k < n; ++k) {
      const float* src = image + (size_t)k * element_stride + (size_t)first * item_stride;
      float* dst = data + (size_t)k * B;
      for (int b = 0; b < count; ++b)
        dst[b] = src[(size_t)b * item_stride];
      for (int b = count; b < B; ++b)
        dst[b] = 0.0f;
    }
    lull_dct_batch(plan, data, inverse, work);
    for (int k = 0; k < n; ++k) {
      float* dst = image + (size_t)k * element_stride + (size_t)first * item_stride;
      const float* src = data + (size_t)k * B;
      for (int b = 0; b < count; ++b)
        dst[(size_t)b * item_stride] = src[b];
    }
  }
}

size_t lull_dct_2d_scratch_floats(const lull_dct_plan* plan_x, const lull_dct_plan* plan_y,
                                  int num_threads)
{
  const size_t per_x = (size_t)plan_x->n * B + lull_dct_scratch_floats(plan_x);
  const size_t per_y = (size_t)plan_y->n * B + lull_dct_scratch_floats(plan_y);
  return (size_t)lull_thread_count(num_threads) * LULL_MAX(per_x, per_y);
}

void lull_dct_2d(const lull_dct_plan* plan_x, const lull_dct_plan* plan_y, float* image,
                 int inverse, int num_threads, float* scratch)
{
  const int w = plan_x->n, h = plan_y->n;
  const int threads = lull_thread_count(num_threads);
  if (!inverse) {
    dct_axis(plan_y, image, (size_t)w, 1, w, 0, scratch, threads); /* columns */
    dct_axis(plan_x, image, 1, (size_t)w, h, 0, scratch, threads); /* rows */
  } else {
    dct_axis(plan_x, image, 1, (size_t)w, h, 1, scratch, threads);
    dct_axis(plan_y, image, (size_t)w, 1, w, 1, scratch, threads);
  }
}
