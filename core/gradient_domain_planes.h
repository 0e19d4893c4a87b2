/* The working planes of a GradientDomain run (gradient_domain.h), shared by
 * the CPU backend (gradient_domain_cpu.c) and the CUDA one
 * (cuda/gradient_domain_cuda.cu): plane k of a run is k times the plane
 * stride into one block of floats.  Colour sets have 3 planes (unused
 * channels stay zero); the 41 planes of the patch stencil follow the
 * last one. */
#pragma once

#include "gradient_domain_math.h"

enum
{
  LULL_GD_W_B = 0, LULL_GD_W_GX = 3, LULL_GD_W_GY = 6,     /* full data */
  LULL_GD_W_BA = 9, LULL_GD_W_GXA = 12, LULL_GD_W_GYA = 15, /* half A */
  LULL_GD_W_BB = 18, LULL_GD_W_GXB = 21, LULL_GD_W_GYB = 24, /* half B */
  LULL_GD_W_DB = 27, LULL_GD_W_DGX = 30, LULL_GD_W_DGY = 33, /* A - B, then the second pass's gradients */
  LULL_GD_W_ALPHA = 36,
  LULL_GD_W_WA = 37, LULL_GD_W_WX = 38, LULL_GD_W_WY = 39, LULL_GD_W_ZERO = 40,
  LULL_GD_W_U = 41, LULL_GD_W_VAR = 44, LULL_GD_W_UD = 47, /* guide, its variance, u_A - u_B */
  LULL_GD_W_RA = 50, LULL_GD_W_RB = 53,                    /* unbiased L2 references of the halves */
  LULL_GD_W_F = 56,                                        /* features: value, variance, scale */
  LULL_GD_W_FVAR = LULL_GD_W_F + LULL_GD_MAX_CHANNELS,
  LULL_GD_W_FSCALE = LULL_GD_W_FVAR + LULL_GD_MAX_CHANNELS,
  LULL_GD_W_PATCH = LULL_GD_W_FSCALE + LULL_GD_MAX_CHANNELS, /* 25 patch weights */
  LULL_GD_W_X = LULL_GD_W_PATCH + LULL_GD_PATCH, /* candidate solution and half difference */
  LULL_GD_W_D = LULL_GD_W_X + 3,
  LULL_GD_W_FINAL = LULL_GD_W_D + 3, LULL_GD_W_FA = LULL_GD_W_FINAL + 3, LULL_GD_W_FB = LULL_GD_W_FA + 3,
  LULL_GD_W_SCORE = LULL_GD_W_FB + 3, LULL_GD_W_BEST_SCORE = LULL_GD_W_SCORE + 1,
  LULL_GD_W_BEST = LULL_GD_W_BEST_SCORE + 1,
  LULL_GD_W_BEST_VAR = LULL_GD_W_BEST + 3, /* the chosen candidate's variance, (x_A - x_B)^2 / 4 */
  LULL_GD_W_SCRATCH = LULL_GD_W_BEST_VAR + 3, /* 4 planes */
  LULL_GD_W_RAW0 = LULL_GD_W_SCRATCH + 4,  /* the first candidate's error estimate */
  LULL_GD_W_COUNT = LULL_GD_W_RAW0 + 1,
  LULL_GD_W_STENCIL = LULL_GD_W_COUNT,    /* LULL_STENCIL_TAPS planes */
  LULL_GD_W_PLANES = LULL_GD_W_STENCIL + LULL_STENCIL_TAPS,
  /* the post-filter's sums (CPU), in the stencil's planes once the
   * candidates are done: one lull_gd_llr (16 floats) per pixel, then one
   * offset's weights */
  LULL_GD_W_POST_SUMS = LULL_GD_W_STENCIL,
  LULL_GD_W_POST_WEIGHT = LULL_GD_W_POST_SUMS + 16
};

/* Step 1 of a run, the guide and the references: the Poisson solves of
 * data planes (primal, gradient x, gradient y; 3 each), each by its norm
 * (poisson.h) into planes: L1 of the full data (the guide) and of both
 * halves (into FA, FB as scratch: their difference gives the guide's
 * variance), L2 of the halves (the unbiased references). */
#define LULL_GD_GUIDE_STEPS                                                                \
  {{LULL_GD_W_B, LULL_GD_W_GX, LULL_GD_W_GY, LULL_POISSON_NORM_L1, LULL_GD_W_U},           \
   {LULL_GD_W_BA, LULL_GD_W_GXA, LULL_GD_W_GYA, LULL_POISSON_NORM_L1, LULL_GD_W_FA},       \
   {LULL_GD_W_BB, LULL_GD_W_GXB, LULL_GD_W_GYB, LULL_POISSON_NORM_L1, LULL_GD_W_FB},       \
   {LULL_GD_W_BA, LULL_GD_W_GXA, LULL_GD_W_GYA, LULL_POISSON_NORM_L2, LULL_GD_W_RA},       \
   {LULL_GD_W_BB, LULL_GD_W_GXB, LULL_GD_W_GYB, LULL_POISSON_NORM_L2, LULL_GD_W_RB}}
enum { LULL_GD_GUIDE_STEP_COUNT = 5 };

/* The candidates (k_c, k_f, beta), the weight threshold delta (eq. 5.15),
 * the NL-means patch radius (eq. 5.10), the radii of the guide variance's
 * blur and of the error estimate's window, the alpha of the second, L2 pass
 * (§5.3.1) and of the guide and the references (plain Poisson
 * reconstructions with the Poisson filter's alpha).
 *
 * The thesis' candidates are (0.5, 2, 0.5), (4, 8, 1), (8, 8, 2) (§5.4).
 * On the test scenes (256x192, 32 spp; relMSE against their first,
 * 8192-spp references, whose noise added 0.00004, 0.0004 and 0.00003 to
 * every figure) the weakest of them is the best
 * alone and a slightly stronger first candidate is better still: relMSE
 * alone 0.00020 -> 0.00016 (cornell), 0.00094 -> 0.00090 (window),
 * 0.00034 -> 0.00027 (textured) with (1, 4, 1); with the per-pixel choice
 * 0.00020 -> 0.00017, 0.00090 -> 0.00087, 0.00035 -> 0.00031 together with
 * the wider error window (radius 8 instead of 4: the estimate from two
 * half-buffers is noisy, and a noisy choice picks the strong candidates
 * where they flatten shading).  Even so the plain smallest estimate was
 * worse than the first candidate alone on two scenes; the choice now
 * leaves the first candidate only where the window's evidence is
 * significant (lull_gd_choice_score, z = LULL_GD_CHOICE_Z): 0.00017 ->
 * 0.00016, 0.00086 -> 0.00087, 0.00031 -> 0.00027 (z = 2: 0.00016,
 * 0.00087, 0.00028; z = 5: as z = 3 to five digits).  The first candidate
 * alone, swept over kc 0.5 (kf 2-16, beta 0.5-4) and kc 1 (kf 2, beta
 * 0.5-4): none better than (1, 4, 1) on any scene to five digits. */
#define LULL_GD_CANDIDATE_TABLE {{1.0f, 4.0f, 1.0f}, {4.0f, 8.0f, 1.0f}, {8.0f, 8.0f, 2.0f}}
#define LULL_GD_WEIGHT_THRESHOLD 1e-11f
#define LULL_GD_SECOND_PASS_ALPHA 0.05f
#define LULL_GD_CHOICE_Z 3.0f
#define LULL_GD_GUIDE_ALPHA 0.2f

/* The post-filter (gradient_domain_math.h): two passes of the regression
 * over a (2 R + 1)^2 window, NL-means radius 1, feature k_f 1, ridge 1e-3.
 * Pass 1 is guided by the chosen result and its two-buffer variance
 * (blurred as the guide's), k_c 2; pass 2 regresses the chosen result
 * again, guided by pass 1's output and its variance, k_c 6.  Measured on
 * the test scenes (relMSE against the 75776-spp references, chosen result
 * -> post-filtered): cornell 0.000129 -> 0.000101, window 0.000520 ->
 * 0.000484, textured 0.000245 -> 0.000188.  On textured, NL-means radius
 * 0 gave 0.000209, colour weights alone 0.000455, the thesis' feature
 * scale (with |grad f|^2) 0.000426.  The settings were tuned on these same
 * scenes; on three other noise realisations of them (gdpt --seed 2, 3, 4)
 * GradientDomain / L1 is 2.44-2.64x, 5.47-5.90x and 2.06-2.16x. */
#define LULL_GD_POST_KC1 2.0f
#define LULL_GD_POST_KC2 6.0f
#define LULL_GD_POST_KF 1.0f
#define LULL_GD_POST_RIDGE 1e-3f
enum { LULL_GD_POST_RADIUS = 7, LULL_GD_POST_NLM = 1 };
enum { LULL_GD_NLM_RADIUS = 2, LULL_GD_VARIANCE_BLUR = 1, LULL_GD_ERROR_RADIUS = 8 };

/* The per-pixel error estimate of a candidate, relative to the guide (as
 * relMSE): lull_two_buffer_error summed over the channels.  sets: the
 * candidate on half A and on half B, the references of halves A and B;
 * guide: the guide's planes. */
LULL_HD float lull_gd_pixel_error(const float* const sets[4][3], const float* const guide[3],
                                  int channels, size_t i)
{
  float s = 0.0f;
  for (int c = 0; c < channels && c < 3; ++c) { /* (3 planes: channels is 1 to 3) */
    const float u = guide[c][i];
    s += lull_two_buffer_error(sets[0][c][i], sets[1][c][i], sets[2][c][i], sets[3][c][i]) /
         (u * u + 0.01f);
  }
  return s;
}

/* The score of a candidate at pixel (x, y) against the best so far: 0 for
 * the first candidate, else lull_gd_choice_score of the error window's
 * means of D and D^2. */
LULL_HD float lull_gd_choice_at(int first, float mean_d, float mean_d2, int x, int y, int width,
                                int height)
{
  if (first)
    return 0.0f;
  return lull_gd_choice_score(mean_d, mean_d2,
                              lull_gd_window_count(x, y, width, height, LULL_GD_ERROR_RADIUS),
                              LULL_GD_CHOICE_Z);
}
