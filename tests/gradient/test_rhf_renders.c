/* The RHF filter on real renders: lull's path tracer (examples/gdpt)
 * renders each of its scenes at 96 x 72 pixels with 32 samples a pixel
 * and the samples' histograms (8 bins, as docs/rhf.md says), and a
 * plain path-traced reference of 1024 samples.  RHF's relMSE against it
 * must be at most 0.35x the noisy image's (measured 0.30x, 0.05x, 0.29x
 * on cornell, window, textured), and well below the error of averaging
 * every patch of the window (threshold unbounded: what the histograms'
 * distances add is the edges they keep). */
#include <stdio.h>
#include <stdlib.h>

#include <OpenImageDenoise/oidn.h>

#include "gdpt.h"
#include "rhf_math.h"
#include "test_util.h"

enum { W = 96, H = 72, SPP = 32, REF_SPP = 1024, BINS = 8 };

static double relmse(const float* x, const float* ref, size_t n)
{
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = (double)x[i] - ref[i];
    s += d * d / ((double)ref[i] * ref[i] + 0.01);
  }
  return s / (double)n;
}

/* RHF through the API; the histograms as views of one (H, W, BINS, 3) array. */
static void rhf(OIDNDevice dev, const float* color, const float* hist, float threshold, float* out)
{
  OIDNFilter f = oidnNewFilter(dev, "RHF");
  oidnSetSharedFilterImage(f, "color", (void*)color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  for (int k = 0; k < BINS; ++k) {
    char name[32];
    snprintf(name, sizeof name, "histogram%d", k);
    oidnSetSharedFilterImage(f, name, (void*)hist, OIDN_FORMAT_FLOAT3, W, H, 12 * (size_t)k,
                             12 * BINS, 0);
  }
  oidnSetSharedFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  if (threshold >= 0.0f)
    oidnSetFilterFloat(f, "threshold", threshold);
  oidnCommitFilter(f);
  oidnExecuteFilter(f);
  oidnReleaseFilter(f);
  const char* message = NULL;
  CHECK_EQ_INT(oidnGetDeviceError(dev, &message), OIDN_ERROR_NONE);
}

int main(void)
{
  const size_t n = 3 * (size_t)W * H;
  float* primal = calloc(n, sizeof(float));
  float* direct = calloc(n, sizeof(float));
  float* hist = calloc(n * BINS, sizeof(float));
  float* ref = calloc(n, sizeof(float));
  float* ref_direct = calloc(n, sizeof(float));
  float* color = calloc(n, sizeof(float));
  float* out = calloc(n, sizeof(float));
  float* all = calloc(n, sizeof(float));
  OIDNDevice dev = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(dev);
  for (const char* const* name = gdpt_scene_names(); *name; ++name) {
    gdpt_scene scene;
    CHECK(gdpt_scene_build(&scene, *name, W, H));
    gdpt_settings s = {.spp = SPP, .seed = 101, .threads = 2, .histogram_bins = BINS,
                       .histogram_gamma = 2.2f, .histogram_max = 2.5f};
    gdpt_buffers b = {.primal = primal, .direct = direct, .histogram = hist};
    gdpt_render(&scene, &s, &b, NULL, NULL);
    gdpt_settings rs = {.spp = REF_SPP, .seed = 303, .threads = 2};
    gdpt_buffers rb = {.primal = ref, .direct = ref_direct};
    gdpt_render(&scene, &rs, &rb, NULL, NULL);
    double samples = 0.0;
    for (size_t i = 0; i < n; ++i) {
      color[i] = primal[i] + direct[i];
      ref[i] += ref_direct[i];
    }
    for (size_t i = 0; i < n * BINS; i += 3)
      samples += hist[i];
    rhf(dev, color, hist, -1.0f, out);
    rhf(dev, color, hist, 1e6f, all);
    const double e_noisy = relmse(color, ref, n), e_rhf = relmse(out, ref, n),
                 e_all = relmse(all, ref, n);
    printf("%s: relMSE noisy %.4f, RHF %.4f, every patch averaged %.4f (samples a pixel "
           "in the histograms: %.1f)\n",
           *name, e_noisy, e_rhf, e_all, samples / ((double)W * H));
    CHECK(samples / ((double)W * H) > SPP - 0.01 && samples / ((double)W * H) < SPP + 0.01);
    CHECK(e_rhf < 0.35 * e_noisy);
    CHECK(e_rhf < 0.6 * e_all);
  }
  oidnReleaseDevice(dev);
  free(primal);
  free(direct);
  free(hist);
  free(ref);
  free(ref_direct);
  free(color);
  free(out);
  free(all);
  return lull_test_result("rhf_renders");
}
