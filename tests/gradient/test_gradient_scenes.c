/* The reconstructions on the path-traced test scenes (tests/data/gradient):
 *
 *   relMSE(L2 Poisson) < relMSE(noisy primal)
 *   relMSE(L1 Poisson) <= relMSE(L2 Poisson)
 *   relMSE(GradientDomain) <= relMSE(L1) / 2   (the thesis reports 2-4x)
 *
 * against the high-spp reference, with the direct light added back to each
 * reconstruction.  ATrous (the primal plus direct with albedo, normal and
 * depth) is run on the same data and reported.  LULL_GRADIENT_DATA
 * overrides the data folder; without EXR support or data the test skips. */
#include <stdlib.h>
#include <string.h>

#include "oidn_check.h"
#include "scene_data.h"
#include "test_util.h"

int main(void)
{
  const char* dir = getenv("LULL_GRADIENT_DATA");
  if (!dir)
    dir = LULL_TEST_DATA_DIR "/gradient";
  const char* scenes[] = {"cornell", "window", "textured"};
  OIDNDevice device = oidn_cpu_device();
  int ran = 0;
  printf("%-9s %10s %10s %10s %10s %10s\n", "scene", "noisy", "L2", "L1", "GradDomain", "ATrous");
  for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; ++k) {
    scene_data s;
    if (!scene_data_load(&s, dir, scenes[k]))
      continue;
    ++ran;
    const scene_filter l2 = {"Poisson", 2, -1, 0}, l1 = {"Poisson", 1, -1, 0};
    const scene_filter gd = {"GradientDomain", 1, -1, 0}, atrous = {"ATrous", 0, -1, 0};
    float* noisy = scene_data_noisy(&s);
    float* out[4] = {scene_data_run(device, &s, &l2), scene_data_run(device, &s, &l1),
                     scene_data_run(device, &s, &gd), scene_data_run(device, &s, &atrous)};
    double e[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; ++i) {
      CHECK(out[i] != NULL);
      if (out[i]) {
        CHECK(lull_test_all_finite(out[i], 3 * (size_t)s.width * s.height));
        e[i] = scene_data_rel_mse(&s, out[i]);
      }
    }
    const double e_noisy = scene_data_rel_mse(&s, noisy);
    printf("%-9s %10.5f %10.5f %10.5f %10.5f %10.5f\n", scenes[k], e_noisy, e[0], e[1], e[2], e[3]);
    CHECK(e[0] < e_noisy);
    CHECK(e[1] <= e[0]);
    CHECK(e[2] <= 0.5 * e[1]);
    free(noisy);
    for (int i = 0; i < 4; ++i)
      free(out[i]);
    scene_data_free(&s);
  }
  oidnReleaseDevice(device);
  if (!ran) {
    fprintf(stderr, "no gradient test data in %s (or no EXR support): skipped\n", dir);
    return 77;
  }
  return lull_test_result("gradient_scenes");
}
