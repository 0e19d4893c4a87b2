/* Temporal mode (docs/temporal.md) through the OIDN API, on small synthetic
 * sequences:
 *
 *  - the first frame, and a frame after resetHistory, equal the spatial
 *    filter alone (the accumulation hands it the frame unchanged and asks
 *    for its own variance estimate);
 *  - with zero motion the output is plain accumulation: the running mean of
 *    the frames (temporalAlpha 0), or the exponential moving average with
 *    weight max(alpha, 1 / n), computed here in double precision (the
 *    spatial filter made an identity: a fixed colour sigma of 1e-6);
 *  - motion vectors follow Blender's Vector convention: a pattern moving
 *    right and down accumulates exactly with (prev - cur) in pixels, y up,
 *    and not with the other signs;
 *  - NaN, infinite and out-of-range motion vectors are disocclusions: the
 *    frame comes out as after a reset, bit for bit;
 *  - a static noisy scene converges towards the noise-free image as frames
 *    accumulate;
 *  - a cut (resetHistory) and a size change start a new history; numbered
 *    frames out of order, or of another size, are INVALID_OPERATION errors
 *    that leave the history as it was; the same frame number again runs
 *    that frame anew from the history before it;
 *  - images a temporal filter cannot take are refused at commit.
 *
 * ATrous and RT BALANCED/FAST accumulate into the a-trous filter, RT HIGH
 * and Regression into the one-buffer Regression filter. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>
#include <lull.h>

#include "test_util.h"

enum { W = 41, H = 29, N = W * H };

static OIDNDevice device;

static float* image_new(int channels)
{
  return calloc((size_t)N * (size_t)channels, sizeof(float));
}

static OIDNError take_error(const char** message)
{
  const char* m = NULL;
  const OIDNError e = oidnGetDeviceError(device, &m);
  if (message)
    *message = m;
  return e;
}

static void check_no_error(const char* what)
{
  const char* message = NULL;
  const OIDNError e = take_error(&message);
  if (e != OIDN_ERROR_NONE) {
    fprintf(stderr, "%s: OIDN error %d: %s\n", what, (int)e, message ? message : "");
    ++lull_test_failures;
  }
}

/* One frame's images; NULL leaves an image unset. */
typedef struct frame_images
{
  const float* color;  /* RGB */
  const float* albedo; /* RGB */
  const float* normal; /* XYZ */
  const float* depth;
  const float* motion; /* XY */
  int width, height;
} frame_images;

static void set(OIDNFilter f, const char* name, const float* data, OIDNFormat format, int w,
                int h)
{
  if (data)
    oidnSetSharedFilterImage(f, name, (void*)data, format, (size_t)w, (size_t)h, 0, 0, 0);
  else
    oidnUnsetFilterImage(f, name);
}

/* Runs one frame; returns the error code of the commit and execution. */
static OIDNError run_frame(OIDNFilter f, const frame_images* im, float* out, int frame,
                           int reset)
{
  const int w = im->width ? im->width : W, h = im->height ? im->height : H;
  set(f, "color", im->color, OIDN_FORMAT_FLOAT3, w, h);
  set(f, "albedo", im->albedo, OIDN_FORMAT_FLOAT3, w, h);
  set(f, "normal", im->normal, OIDN_FORMAT_FLOAT3, w, h);
  set(f, "depth", im->depth, OIDN_FORMAT_FLOAT, w, h);
  set(f, "motion", im->motion, OIDN_FORMAT_FLOAT2, w, h);
  set(f, "output", out, OIDN_FORMAT_FLOAT3, w, h);
  oidnSetFilterBool(f, "temporal", true);
  oidnSetFilterInt(f, "frame", frame);
  oidnSetFilterBool(f, "resetHistory", reset);
  oidnCommitFilter(f);
  OIDNError e = take_error(NULL);
  if (e != OIDN_ERROR_NONE)
    return e;
  oidnExecuteFilter(f);
  return take_error(NULL);
}

/* An ATrous filter whose spatial part passes the colour through: the fixed
 * colour test with sigma 1e-6 weighs every neighbour that differs at all
 * by exp(-80) or less, against the centre's 3/8 (its output is the
 * accumulated colour to 1e-30 relative); no guides, no demodulation. */
static OIDNFilter identity_filter(float alpha)
{
  OIDNFilter f = oidnNewFilter(device, "ATrous");
  oidnSetFilterInt(f, "colorMode", 0);
  oidnSetFilterFloat(f, "sigmaColor", 1e-6f);
  oidnSetFilterFloat(f, "temporalAlpha", alpha);
  oidnSetFilterFloat(f, "momentsAlpha", alpha);
  oidnSetFilterInt(f, "maxHistory", 1000);
  oidnSetFilterFloat(f, "clipSigma", 0.0f);
  oidnSetFilterFloat(f, "rejectSigma", 0.0f);
  return f;
}

/* Colour with every pixel different (so the identity filter keeps it). */
static void noisy_frame(float* c, unsigned* seed, float base)
{
  for (int i = 0; i < N * 3; ++i)
    c[i] = base + 0.5f * lull_test_random(seed);
}

static double max_rel_diff(const float* a, const double* b, size_t n)
{
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = fabs((double)a[i] - b[i]) / (fabs(b[i]) + 1e-6);
    m = d > m || isnan(d) ? d : m;
  }
  return m;
}

/* Zero motion: the running mean (alpha 0) and the moving average (0.25). */
static void test_plain_accumulation(void)
{
  const float alphas[] = {0.0f, 0.25f};
  for (int k = 0; k < 2; ++k) {
    OIDNFilter f = identity_filter(alphas[k]);
    float* color = image_new(3);
    float* motion = image_new(2); /* zeros */
    float* out = image_new(3);
    double* expect = calloc((size_t)N * 3, sizeof(double));
    unsigned seed = 11u + (unsigned)k;
    for (int t = 1; t <= 8; ++t) {
      noisy_frame(color, &seed, 0.2f);
      const frame_images im = {color, NULL, NULL, NULL, k == 0 ? motion : NULL, 0, 0};
      CHECK_EQ_INT(run_frame(f, &im, out, t, 0), OIDN_ERROR_NONE);
      const double a = alphas[k] > 1.0 / t ? alphas[k] : 1.0 / t;
      for (int i = 0; i < N * 3; ++i)
        expect[i] = (1 - a) * expect[i] + a * color[i];
      const double d = max_rel_diff(out, expect, (size_t)N * 3);
      if (!(d < 1e-5))
        fprintf(stderr, "plain accumulation, alpha %g, frame %d: max rel diff %g\n",
                (double)alphas[k], t, d);
      CHECK(d < 1e-5);
    }
    oidnReleaseFilter(f);
    free(color);
    free(motion);
    free(out);
    free(expect);
  }
}

/* A pattern moving by (dx, dy) pixels per frame in image rows (x right, y
 * down); motion given as Blender writes it for that: (-dx, +dy). */
static float pattern(int x, int y)
{
  return 0.3f + 0.2f * sinf(0.7f * (float)x) * cosf(0.45f * (float)y) + 0.01f * (float)((x * 7 + y * 13) % 5);
}

static void test_motion_convention(void)
{
  const int dx = 2, dy = 1;
  const float signs[4][2] = {{-1, 1}, {1, 1}, {-1, -1}, {1, -1}}; /* the first is Blender's */
  double errors[4];
  for (int s = 0; s < 4; ++s) {
    OIDNFilter f = identity_filter(0.0f);
    float* c0 = image_new(3);
    float* c1 = image_new(3);
    float* motion = image_new(2);
    float* out = image_new(3);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        for (int c = 0; c < 3; ++c) {
          c0[(y * W + x) * 3 + c] = pattern(x, y) + 0.1f * (float)c;
          c1[(y * W + x) * 3 + c] = pattern(x - dx, y - dy) + 0.1f * (float)c;
        }
    for (int i = 0; i < N; ++i) {
      motion[2 * i] = signs[s][0] * (float)dx;
      motion[2 * i + 1] = signs[s][1] * (float)dy;
    }
    const frame_images f0 = {c0, NULL, NULL, NULL, motion, 0, 0};
    const frame_images f1 = {c1, NULL, NULL, NULL, motion, 0, 0};
    CHECK_EQ_INT(run_frame(f, &f0, out, 0, 0), OIDN_ERROR_NONE);
    CHECK_EQ_INT(run_frame(f, &f1, out, 1, 0), OIDN_ERROR_NONE);
    /* where the previous position lies in the image, the mean of the same
     * pattern value twice is that value */
    double e = 0;
    int count = 0;
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        if (x - dx < 0 || y - dy < 0)
          continue;
        for (int c = 0; c < 3; ++c) {
          const double d = out[(y * W + x) * 3 + c] - c1[(y * W + x) * 3 + c];
          e += d * d;
        }
        ++count;
      }
    errors[s] = e / count;
    oidnReleaseFilter(f);
    free(c0);
    free(c1);
    free(motion);
    free(out);
  }
  CHECK(errors[0] < 1e-10);
  for (int s = 1; s < 4; ++s)
    CHECK(errors[s] > 1e-4);
}

/* A scene for the RT tests: a disk on a background, its albedo and normal
 * telling them apart; noise of independent frames. */
typedef struct scene
{
  float *clean, *albedo, *normal, *depth;
} scene;

static scene scene_new(void)
{
  scene s = {image_new(3), image_new(3), image_new(3), image_new(1)};
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const int i = y * W + x;
      const float rx = (float)x - 20.0f, ry = (float)y - 14.0f;
      const int disk = rx * rx + ry * ry < 64.0f;
      const float light = 0.6f + 0.3f * (float)x / W;
      const float a[3] = {disk ? 0.8f : 0.5f, disk ? 0.3f : 0.5f, disk ? 0.2f : 0.5f};
      for (int c = 0; c < 3; ++c) {
        s.albedo[3 * i + c] = a[c];
        s.clean[3 * i + c] = a[c] * light;
      }
      s.normal[3 * i + 0] = disk ? rx / 8.0f : 0.0f;
      s.normal[3 * i + 1] = disk ? -ry / 8.0f : 0.0f;
      s.normal[3 * i + 2] = disk ? -0.5f : -1.0f;
      s.depth[i] = disk ? 4.0f : 6.0f;
    }
  return s;
}

static void scene_free(scene* s)
{
  free(s->clean);
  free(s->albedo);
  free(s->normal);
  free(s->depth);
}

static void noisy(const scene* s, float* c, unsigned* seed, float sigma)
{
  for (int i = 0; i < N * 3; ++i) {
    /* a sum of uniforms: roughly Gaussian, mean 0 */
    float u = 0;
    for (int k = 0; k < 4; ++k)
      u += lull_test_random(seed) - 0.5f;
    c[i] = s->clean[i] * (1.0f + sigma * 1.7f * u);
  }
}

static double rel_mse(const float* x, const float* ref)
{
  double e = 0;
  for (int i = 0; i < N * 3; ++i) {
    const double d = (double)x[i] - ref[i];
    e += d * d / ((double)ref[i] * ref[i] + 0.01);
  }
  return e / (N * 3);
}

/* A spatial-only run of the same images, for comparison.  ATrous's and
 * Regression's is the filter outside temporal mode.  RT's is the first
 * frame of a fresh temporal filter at the same quality (0: the default),
 * which is Regression to rounding at HIGH and the à-trous filter at the
 * quality's parameters otherwise (docs/temporal.md). */
static void spatial_only(const char* type, int quality, const frame_images* im, float* out)
{
  OIDNFilter f = oidnNewFilter(device, type);
  if (quality)
    oidnSetFilterInt(f, "quality", quality);
  set(f, "color", im->color, OIDN_FORMAT_FLOAT3, W, H);
  set(f, "albedo", im->albedo, OIDN_FORMAT_FLOAT3, W, H);
  set(f, "normal", im->normal, OIDN_FORMAT_FLOAT3, W, H);
  set(f, "depth", im->depth, OIDN_FORMAT_FLOAT, W, H);
  set(f, "output", out, OIDN_FORMAT_FLOAT3, W, H);
  if (strcmp(type, "RT") == 0) {
    set(f, "motion", im->motion, OIDN_FORMAT_FLOAT2, W, H);
    oidnSetFilterBool(f, "temporal", true);
  }
  oidnSetFilterBool(f, "hdr", true);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  check_no_error("spatial only");
  oidnReleaseFilter(f);
}

/* First frame and a frame after a reset: the spatial filter alone (for
 * Regression to rounding: the accumulation divides the colour by the
 * albedo and multiplies it back).  A static scene converges: with the
 * guards against ghosting off (pure accumulation; ATrous, Regression) the
 * error falls with every doubling of the frames to under 0.4 of the first
 * frame's.  The defaults' guards trade some of that for no ghosts in
 * moving scenes (docs/temporal.md): the history is clipped into 0.5
 * standard deviations of the current frame's 3x3 neighbourhood.  With them
 * RT BALANCED (the à-trous filter) still falls, frame 8 under 0.8 of frame
 * 1; RT HIGH (Regression) gains most by frame 2 (under 0.7) and keeps
 * frame 8 under 0.9 (measured 0.59, 0.87). */
static void test_first_frame_and_convergence(void)
{
  const char* types[] = {"RT", "ATrous", "Regression", "RT"};
  const int qualities[] = {0, 0, 0, OIDN_QUALITY_BALANCED};
  for (int k = 0; k < 4; ++k) {
    scene s = scene_new();
    float* color = image_new(3);
    float* out = image_new(3);
    float* spatial = image_new(3);
    float* motion = image_new(2);
    OIDNFilter f = oidnNewFilter(device, types[k]);
    oidnSetFilterBool(f, "hdr", true);
    if (qualities[k])
      oidnSetFilterInt(f, "quality", qualities[k]);
    if (k == 1 || k == 2) { /* the same blend for both: weight 0.2 (Regression's default 0.4) */
      oidnSetFilterFloat(f, "temporalAlpha", 0.2f);
      oidnSetFilterFloat(f, "clipSigma", 0.0f);
      oidnSetFilterFloat(f, "rejectSigma", 0.0f);
    }
    unsigned seed = 5u;
    double errors[9] = {0};
    for (int t = 1; t <= 8; ++t) {
      noisy(&s, color, &seed, 0.4f);
      const frame_images im = {color, s.albedo, s.normal, s.depth, motion, 0, 0};
      CHECK_EQ_INT(run_frame(f, &im, out, t, 0), OIDN_ERROR_NONE);
      errors[t] = rel_mse(out, s.clean);
      if (t == 1 || t == 5) {
        spatial_only(types[k], qualities[k], &im, spatial);
        const double d = lull_test_max_abs_diff(out, spatial, (size_t)N * 3);
        if (t == 1)
          CHECK(d < 1e-5);
        else
          CHECK(d > 1e-3); /* frame 5 is not the spatial result */
      }
    }
    fprintf(stderr, "%s%s: relMSE frames 1, 2, 4, 8: %.3g %.3g %.3g %.3g\n", types[k],
            qualities[k] ? " BALANCED" : "", errors[1], errors[2], errors[4], errors[8]);
    if (k == 1 || k == 2) {
      CHECK(errors[2] < errors[1] && errors[4] < errors[2] && errors[8] < errors[4]);
      CHECK(errors[8] < 0.4 * errors[1]);
    } else if (k == 0) {
      CHECK(errors[2] < 0.7 * errors[1] && errors[8] < 0.9 * errors[1]);
    } else {
      CHECK(errors[4] < errors[1] && errors[8] < errors[2]);
      CHECK(errors[8] < 0.8 * errors[1]);
    }
    /* a cut: the spatial result of the frame after it */
    noisy(&s, color, &seed, 0.4f);
    const frame_images im = {color, s.albedo, s.normal, s.depth, motion, 0, 0};
    CHECK_EQ_INT(run_frame(f, &im, out, 100, 1), OIDN_ERROR_NONE);
    spatial_only(types[k], qualities[k], &im, spatial);
    CHECK(lull_test_max_abs_diff(out, spatial, (size_t)N * 3) < 1e-5);
    oidnReleaseFilter(f);
    scene_free(&s);
    free(color);
    free(out);
    free(spatial);
    free(motion);
  }
}

/* NaN, infinite and out-of-range motion: as after a reset, bit for bit. */
static void test_invalid_motion(void)
{
  const float bad[] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 1e6f, (float)W, -2.0f * H};
  scene s = scene_new();
  float* motion = image_new(2);
  float* out = image_new(3);
  float* expect = image_new(3);
  unsigned seed = 9u;
  /* frame 1 with the bad vectors (in x, y or both) equals frame 1 alone */
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
    float* c0 = image_new(3);
    float* c1 = image_new(3);
    noisy(&s, c0, &seed, 0.3f);
    noisy(&s, c1, &seed, 0.3f);
    for (int i = 0; i < N; ++i) {
      motion[2 * i] = (i % 3 != 1) ? bad[b] : 0.0f;
      motion[2 * i + 1] = (i % 3 != 0) ? bad[b] : 0.0f;
    }
    OIDNFilter f = oidnNewFilter(device, "RT");
    oidnSetFilterBool(f, "hdr", true);
    const frame_images im0 = {c0, s.albedo, s.normal, s.depth, motion, 0, 0};
    const frame_images im1 = {c1, s.albedo, s.normal, s.depth, motion, 0, 0};
    CHECK_EQ_INT(run_frame(f, &im0, out, 0, 0), OIDN_ERROR_NONE);
    CHECK_EQ_INT(run_frame(f, &im1, out, 1, 0), OIDN_ERROR_NONE);
    OIDNFilter g = oidnNewFilter(device, "RT");
    oidnSetFilterBool(g, "hdr", true);
    CHECK_EQ_INT(run_frame(g, &im1, expect, 0, 0), OIDN_ERROR_NONE);
    const int same = memcmp(out, expect, sizeof(float) * N * 3) == 0;
    if (!same)
      fprintf(stderr, "motion %g: not a disocclusion (max diff %g)\n", (double)bad[b],
              lull_test_max_abs_diff(out, expect, (size_t)N * 3));
    CHECK(same);
    oidnReleaseFilter(f);
    oidnReleaseFilter(g);
    free(c0);
    free(c1);
  }
  scene_free(&s);
  free(motion);
  free(out);
  free(expect);
}

/* Frame order, sizes, re-runs and resets. */
static void test_history_rules(void)
{
  scene s = scene_new();
  float* c[4];
  for (int k = 0; k < 4; ++k)
    c[k] = image_new(3);
  float* out = image_new(3);
  float* again = image_new(3);
  float* fresh = image_new(3);
  unsigned seed = 21u;
  for (int k = 0; k < 4; ++k)
    noisy(&s, c[k], &seed, 0.3f);
  OIDNFilter f = oidnNewFilter(device, "RT");
  oidnSetFilterBool(f, "hdr", true);
  const frame_images im[4] = {{c[0], s.albedo, s.normal, s.depth, NULL, 0, 0},
                              {c[1], s.albedo, s.normal, s.depth, NULL, 0, 0},
                              {c[2], s.albedo, s.normal, s.depth, NULL, 0, 0},
                              {c[3], s.albedo, s.normal, s.depth, NULL, 0, 0}};
  CHECK_EQ_INT(run_frame(f, &im[0], out, 10, 0), OIDN_ERROR_NONE);
  CHECK_EQ_INT(run_frame(f, &im[1], out, 11, 0), OIDN_ERROR_NONE);
  /* 11 again (a parameter changed, say): the same result from 10's history */
  CHECK_EQ_INT(run_frame(f, &im[1], again, 11, 0), OIDN_ERROR_NONE);
  CHECK(memcmp(out, again, sizeof(float) * N * 3) == 0);
  /* out of order: 13 after 11, 9 after 11; the history stays at 11 */
  memset(again, 0, sizeof(float) * N * 3);
  const char* message = NULL;
  CHECK_EQ_INT(run_frame(f, &im[2], again, 13, 0), OIDN_ERROR_INVALID_OPERATION);
  CHECK_EQ_INT(run_frame(f, &im[2], again, 9, 0), OIDN_ERROR_INVALID_OPERATION);
  /* (the message names both frames) */
  set(f, "color", c[2], OIDN_FORMAT_FLOAT3, W, H);
  oidnSetFilterInt(f, "frame", 14);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  CHECK_EQ_INT(take_error(&message), OIDN_ERROR_INVALID_OPERATION);
  CHECK(message && strstr(message, "14") && strstr(message, "11") && strstr(message, "resetHistory"));
  for (int i = 0; i < N * 3; ++i)
    CHECK(again[i] == 0.0f); /* nothing was written */
  /* 12 follows: equals a filter that saw 10, 11, 12 without the errors */
  CHECK_EQ_INT(run_frame(f, &im[2], out, 12, 0), OIDN_ERROR_NONE);
  OIDNFilter g = oidnNewFilter(device, "RT");
  oidnSetFilterBool(g, "hdr", true);
  for (int k = 0; k < 3; ++k)
    CHECK_EQ_INT(run_frame(g, &im[k], fresh, 10 + k, 0), OIDN_ERROR_NONE);
  CHECK(memcmp(out, fresh, sizeof(float) * N * 3) == 0);
  oidnReleaseFilter(g);

  /* another size, numbered: an error naming the sizes; with resetHistory it
   * starts anew, as an unnumbered frame of another size does */
  enum { W2 = 23, H2 = 17 };
  float* small = calloc((size_t)W2 * H2 * 3, sizeof(float));
  float* small_out = calloc((size_t)W2 * H2 * 3, sizeof(float));
  float* small_fresh = calloc((size_t)W2 * H2 * 3, sizeof(float));
  for (int i = 0; i < W2 * H2 * 3; ++i)
    small[i] = 0.2f + 0.3f * lull_test_random(&seed);
  const frame_images sm = {small, NULL, NULL, NULL, NULL, W2, H2};
  CHECK_EQ_INT(run_frame(f, &sm, small_out, 13, 0), OIDN_ERROR_INVALID_OPERATION);
  oidnExecuteFilter(f);
  CHECK_EQ_INT(take_error(&message), OIDN_ERROR_INVALID_OPERATION);
  CHECK(message && strstr(message, "23x17") && strstr(message, "41x29"));
  CHECK_EQ_INT(run_frame(f, &sm, small_out, 13, 1), OIDN_ERROR_NONE);
  OIDNFilter h = oidnNewFilter(device, "RT");
  oidnSetFilterBool(h, "hdr", true);
  CHECK_EQ_INT(run_frame(h, &sm, small_fresh, -1, 0), OIDN_ERROR_NONE);
  CHECK(memcmp(small_out, small_fresh, sizeof(float) * W2 * H2 * 3) == 0);
  /* unnumbered: back to the large size is a new history */
  CHECK_EQ_INT(run_frame(h, &im[3], out, -1, 0), OIDN_ERROR_NONE);
  OIDNFilter k = oidnNewFilter(device, "RT");
  oidnSetFilterBool(k, "hdr", true);
  CHECK_EQ_INT(run_frame(k, &im[3], fresh, -1, 0), OIDN_ERROR_NONE);
  CHECK(memcmp(out, fresh, sizeof(float) * N * 3) == 0);
  oidnReleaseFilter(h);
  oidnReleaseFilter(k);
  oidnReleaseFilter(f);
  scene_free(&s);
  for (int j = 0; j < 4; ++j)
    free(c[j]);
  free(out);
  free(again);
  free(fresh);
  free(small);
  free(small_out);
  free(small_fresh);
}

/* Commit of f is refused: INVALID_OPERATION, with `word` in the message
 * (NULL: any message). */
static void commit_refused(OIDNFilter f, const char* word)
{
  const char* message = NULL;
  oidnCommitFilter(f);
  CHECK_EQ_INT(take_error(&message), OIDN_ERROR_INVALID_OPERATION);
  if (word)
    CHECK(message && strstr(message, word));
}

/* What commit refuses. */
static void test_commit_errors(void)
{
  float* color = image_new(4);
  float* out = image_new(4);
  float* motion = image_new(2);
  OIDNFilter f = oidnNewFilter(device, "RT");
  oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  /* motion without temporal */
  oidnSetSharedFilterImage(f, "motion", motion, OIDN_FORMAT_FLOAT2, W, H, 0, 0, 0);
  commit_refused(f, "temporal");
  oidnSetFilterBool(f, "temporal", true);
  oidnCommitFilter(f);
  check_no_error("temporal RT");
  /* one channel of motion */
  oidnSetSharedFilterImage(f, "motion", motion, OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
  commit_refused(f, "motion");
  /* motion of another size */
  oidnSetSharedFilterImage(f, "motion", motion, OIDN_FORMAT_FLOAT2, W - 1, H, 0, 0, 0);
  commit_refused(f, NULL);
  oidnUnsetFilterImage(f, "motion");
  /* prefiltering an auxiliary image has no temporal mode */
  oidnUnsetFilterImage(f, "color");
  oidnSetSharedFilterImage(f, "albedo", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  commit_refused(f, NULL);
  oidnReleaseFilter(f);
  /* Regression: motion without temporal; in temporal mode one buffer,
   * no variance (the history measures it), no position (it is tested by
   * depth) */
  OIDNFilter r = oidnNewFilter(device, "Regression");
  oidnSetSharedFilterImage(r, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(r, "output", out, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(r, "motion", motion, OIDN_FORMAT_FLOAT2, W, H, 0, 0, 0);
  commit_refused(r, "temporal");
  oidnSetFilterBool(r, "temporal", true);
  oidnCommitFilter(r);
  check_no_error("temporal Regression");
  oidnSetSharedFilterImage(r, "variance", motion, OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
  commit_refused(r, "variance");
  oidnUnsetFilterImage(r, "variance");
  oidnSetSharedFilterImage(r, "position", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  commit_refused(r, "position");
  oidnUnsetFilterImage(r, "position");
  oidnUnsetFilterImage(r, "color");
  oidnSetSharedFilterImage(r, "colorA", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(r, "colorB", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  commit_refused(r, "one buffer");
  oidnReleaseFilter(r);
  /* ATrous: one-channel colour */
  OIDNFilter a = oidnNewFilter(device, "ATrous");
  oidnSetSharedFilterImage(a, "color", color, OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(a, "output", out, OIDN_FORMAT_FLOAT, W, H, 0, 0, 0);
  oidnSetFilterBool(a, "temporal", true);
  commit_refused(a, "3 or 4 channels");
  /* 4 channels: the fourth passes through */
  for (int i = 0; i < N * 4; ++i)
    color[i] = (i % 4 == 3) ? 0.25f : 0.5f;
  oidnSetSharedFilterImage(a, "color", color, OIDN_FORMAT_FLOAT4, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(a, "output", out, OIDN_FORMAT_FLOAT4, W, H, 0, 0, 0);
  oidnCommitFilter(a);
  oidnExecuteFilter(a);
  oidnExecuteFilter(a);
  check_no_error("RGBA");
  for (int i = 0; i < N * 4; ++i)
    CHECK_NEAR(out[i], (i % 4 == 3) ? 0.25 : 0.5, 1e-6);
  oidnReleaseFilter(a);
  free(color);
  free(out);
  free(motion);
}

int main(void)
{
  device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  test_plain_accumulation();
  test_motion_convention();
  test_first_frame_and_convergence();
  test_invalid_motion();
  test_history_rules();
  test_commit_errors();
  oidnReleaseDevice(device);
  return lull_test_result("temporal_properties");
}
