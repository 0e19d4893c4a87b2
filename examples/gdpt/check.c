/* The gradient self-check (gdpt.h). */
#include "gdpt.h"

/* One axis: step = 1 (x) or width (y). */
static void axis(int width, int height, int step, const float* pa, const float* pb,
                 const float* ga, const float* gb, double* ratio, double* noise)
{
  double sum_d2 = 0.0, sum_var = 0.0, var_g = 0.0, var_p = 0.0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      if ((step == 1 && x + 1 >= width) || (step != 1 && y + 1 >= height))
        continue;
      const size_t i = (size_t)y * (size_t)width + (size_t)x;
      const size_t j = i + (size_t)step;
      for (int c = 0; c < 3; ++c) {
        const double da = ga[3 * i + c] - (pa[3 * j + c] - pa[3 * i + c]);
        const double db = gb[3 * i + c] - (pb[3 * j + c] - pb[3 * i + c]);
        const double d = 0.5 * (da + db);
        sum_d2 += d * d;
        sum_var += 0.25 * (da - db) * (da - db);
        const double g = ga[3 * i + c] - gb[3 * i + c];
        const double p = (pa[3 * j + c] - pa[3 * i + c]) - (pb[3 * j + c] - pb[3 * i + c]);
        var_g += g * g;
        var_p += p * p;
      }
    }
  *ratio = sum_var > 0.0 ? sum_d2 / sum_var : 0.0;
  *noise = var_p > 0.0 ? var_g / var_p : 0.0;
}

gdpt_check gdpt_gradient_check(int width, int height, const float* primal_a,
                               const float* primal_b, const float* dx_a, const float* dx_b,
                               const float* dy_a, const float* dy_b)
{
  gdpt_check c;
  axis(width, height, 1, primal_a, primal_b, dx_a, dx_b, &c.ratio_x, &c.noise_x);
  axis(width, height, width, primal_a, primal_b, dy_a, dy_b, &c.ratio_y, &c.noise_y);
  return c;
}
