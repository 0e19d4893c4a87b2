/* How good GradientDomain's per-pixel choice of candidate is (a program,
 * not a test: build/bin/gd_selection_oracle [DATA_DIR]).
 *
 * On each path-traced scene of tests/data/gradient it runs L1 (Poisson)
 * and GradientDomain with each candidate alone and with the automatic
 * choice, and reports the relMSE of each (the reconstruction plus the
 * reference's direct light, as test_gradient_scenes), and of an oracle
 * that takes, per pixel, the candidate closest to the reference: how much
 * a perfect error estimate could gain.  The README's figures for the
 * choice come from this program. */
#include <stdio.h>
#include <stdlib.h>

#include "scene_data.h"
#include "test_util.h"

/* Per-pixel relative squared error (lull_metric_rel_mse's terms, eps 0.01). */
static double pixel_error(const float* image, const float* reference, size_t p)
{
  double e = 0.0;
  for (int c = 0; c < 3; ++c) {
    const double r = reference[3 * p + (size_t)c], d = image[3 * p + (size_t)c] - r;
    e += d * d / (r * r + 0.01);
  }
  return e;
}

int main(int argc, char** argv)
{
  const char* dir = argc > 1 ? argv[1] : LULL_TEST_DATA_DIR "/gradient";
  const char* scenes[] = {"cornell", "window", "textured"};
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(device);
  printf("%-9s %8s %8s %8s %8s %8s %8s  %s\n", "scene", "L1", "cand 0", "cand 1", "cand 2",
         "chosen", "oracle", "L1/chosen L1/oracle");
  int ran = 0;
  for (size_t s = 0; s < sizeof scenes / sizeof scenes[0]; ++s) {
    scene_data d;
    if (!scene_data_load(&d, dir, scenes[s]))
      continue;
    const size_t pixels = (size_t)d.width * (size_t)d.height;
    const scene_filter l1 = {"Poisson", 1, -1, 0};
    float* out[5] = {scene_data_run(device, &d, &l1), NULL, NULL, NULL, NULL};
    for (int k = 0; k < 4; ++k) {
      const scene_filter gd = {"GradientDomain", 1, k == 3 ? -1 : k, 0};
      out[k + 1] = scene_data_run(device, &d, &gd);
    }
    int ok = 1;
    for (int k = 0; k < 5; ++k)
      ok = ok && out[k] != NULL;
    if (ok) {
      double e[5] = {0.0}, oracle = 0.0;
      for (size_t p = 0; p < pixels; ++p) {
        double best = 1e300;
        for (int k = 0; k < 5; ++k) {
          const double pe = pixel_error(out[k], d.reference, p);
          e[k] += pe;
          if (k >= 1 && k <= 3 && pe < best)
            best = pe;
        }
        oracle += best;
      }
      const double n = 3.0 * (double)pixels;
      printf("%-9s %8.5f %8.5f %8.5f %8.5f %8.5f %8.5f  %.2f %.2f\n", scenes[s], e[0] / n,
             e[1] / n, e[2] / n, e[3] / n, e[4] / n, oracle / n, e[0] / e[4], e[0] / oracle);
      ++ran;
    }
    for (int k = 0; k < 5; ++k)
      free(out[k]);
    scene_data_free(&d);
  }
  oidnReleaseDevice(device);
  return ran ? 0 : 1;
}
