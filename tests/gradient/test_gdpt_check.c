/* The gradient-domain path tracer (examples/gdpt) samples what it claims:
 * at a sample count where the statistics are clear, dx and dy equal the
 * forward differences of the primal within noise (the self-check of
 * gdpt.h: sum d^2 / sum Var[d] about 1), the check notices a gradient of
 * the wrong scale or the wrong direction, and the sampled gradients are
 * much less noisy than differences of primal pixels (the point of G-PT). */
#include <stdlib.h>

#include "gdpt.h"
#include "test_util.h"

enum { W = 64, H = 48, SPP = 128 };

static void render(const gdpt_scene* scene, uint64_t seed, float* primal, float* dx, float* dy)
{
  gdpt_settings settings = {.spp = SPP, .seed = seed, .gradients = 1, .threads = 2};
  gdpt_buffers out = {primal, dx, dy, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  gdpt_render(scene, &settings, &out, NULL, NULL);
}

int main(void)
{
  const size_t n = 3 * (size_t)W * H;
  float* buf[6];
  for (int i = 0; i < 6; ++i)
    buf[i] = calloc(n, sizeof(float));
  for (const char* const* name = gdpt_scene_names(); *name; ++name) {
    gdpt_scene scene;
    CHECK(gdpt_scene_build(&scene, *name, W, H));
    render(&scene, 101, buf[0], buf[1], buf[2]);
    render(&scene, 202, buf[3], buf[4], buf[5]);
    const gdpt_check c = gdpt_gradient_check(W, H, buf[0], buf[3], buf[1], buf[4], buf[2], buf[5]);
    printf("%s: ratio dx %.3f dy %.3f, noise dx %.3f dy %.3f\n", *name, c.ratio_x, c.ratio_y,
           c.noise_x, c.noise_y);
    CHECK(c.ratio_x > 0.75 && c.ratio_x < 1.33);
    CHECK(c.ratio_y > 0.75 && c.ratio_y < 1.33);
    CHECK(c.noise_x < 0.3 && c.noise_y < 0.3);
    /* the check notices twice the gradient, and backward differences */
    float* twice[2] = {malloc(n * sizeof(float)), malloc(n * sizeof(float))};
    for (size_t i = 0; i < n; ++i) {
      twice[0][i] = 2.0f * buf[1][i];
      twice[1][i] = 2.0f * buf[4][i];
    }
    const gdpt_check wrong = gdpt_gradient_check(W, H, buf[0], buf[3], twice[0], twice[1], buf[2], buf[5]);
    const gdpt_check flipped = gdpt_gradient_check(W, H, buf[0], buf[3], buf[1], buf[4],
                                                   buf[2] + 3 * W, buf[5] + 3 * W); /* next row */
    printf("  doubled dx: %.3f, shifted dy: %.3f\n", wrong.ratio_x, flipped.ratio_y);
    CHECK(wrong.ratio_x > 2.0);
    CHECK(flipped.ratio_y > 2.0);
    free(twice[0]);
    free(twice[1]);
  }
  gdpt_scene scene;
  CHECK(!gdpt_scene_build(&scene, "no such scene", W, H));
  for (int i = 0; i < 6; ++i)
    free(buf[i]);
  return lull_test_result("gdpt_check");
}
