/* The reconstructions on the path-traced test scenes (tests/data/gradient):
 * relMSE against the 75776-spp reference of each method's reconstruction of
 * the primal (the indirect light) plus the reference's direct light
 * (scene_data.h says why), with bounds per scene:
 *
 *                       L1 / L2   GradientDomain / L1
 *   cornell             <= 1      <= 0.45
 *   window              <= 1.1    <= 0.25
 *   textured            <= 1      <= 0.5  (the 2x; measured 0.47)
 *
 * and L2 better than the noisy primal everywhere.  ATrous (the primal with
 * albedo, normal and depth) runs on the same data and is reported.
 * Measured (32 spp, 256x192):
 *
 *   scene     noisy    L2       L1       GradientDomain  ATrous
 *   cornell   0.00953  0.00032  0.00027  0.00010         0.00053
 *   window    0.09855  0.00287  0.00309  0.00048         0.00212
 *   textured  0.00735  0.00053  0.00040  0.00019         0.00086
 *
 * Notes:
 *  - window: L1 with the thesis' regulariser (0.05, 7 steps) is 8% worse
 *    than L2; the primal's fireflies under hard indirect light make L1's
 *    darkening bias cost more than it gains (a weaker L1 wins: with the
 *    8192-spp references irlsRegularization 0.1 gave 0.00320 against
 *    0.00341, 0.2 gave 0.00294);
 *  - GradientDomain is 2.6x better than L1 on cornell, 6.4x on window and
 *    2.1x on textured (the thesis: 2-4x), with the post-filter
 *    (gradient_domain_planes.h; not in the thesis).  Without it the chosen
 *    candidate gave 2.0x, 6.1x and 1.6x: on textured the candidates are
 *    the limit (a guide equal to the reference did not help, a choice that
 *    knew the reference per pixel would give 2.7x; gd_selection_oracle.c).
 *
 * The references had 8192 samples until their noise turned out to add a
 * quarter of GradientDomain's error on cornell (tests/data/gradient/
 * README.md); the ratios then read 1.8x, 3.9x and 1.6x.
 *
 * LULL_GRADIENT_DATA overrides the data folder; without EXR support or data
 * the test skips. */
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
  /* per scene: the bound on L1 / L2 and on GradientDomain / L1 (above) */
  const struct
  {
    const char* name;
    double l1_over_l2, gd_over_l1;
  } scenes[] = {{"cornell", 1.0, 0.45}, {"window", 1.1, 0.25}, {"textured", 1.0, 0.5}};
  OIDNDevice device = oidn_cpu_device();
  int ran = 0;
  printf("%-9s %10s %10s %10s %10s %10s\n", "scene", "noisy", "L2", "L1", "GradDomain", "ATrous");
  for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; ++k) {
    scene_data s;
    if (!scene_data_load(&s, dir, scenes[k].name))
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
    printf("%-9s %10.5f %10.5f %10.5f %10.5f %10.5f\n", scenes[k].name, e_noisy, e[0], e[1], e[2],
           e[3]);
    CHECK(e[0] < e_noisy);
    CHECK(e[1] <= scenes[k].l1_over_l2 * e[0]);
    CHECK(e[2] <= scenes[k].gd_over_l1 * e[1]);
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
