/* The tool on a CUDA device (label gpu): the same denoised image as on the
 * CPU (the backends share their per-pixel formulas), through device buffers
 * with strides, half buffers and in place.  Skipped without a CUDA device. */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_test_util.h"
#include "metrics.h"
#include "test_util.h"

#define ARGS(...) ((const char* const[]){__VA_ARGS__, NULL})
#define EXPECT(status, ...) \
  cli_expect(tool, dir, status, ARGS(__VA_ARGS__), __FILE__, __LINE__)

static const char* tool = LULL_CLI_TOOL;

int main(void)
{
  if (cli_tool_built(tool))
    return 77;
  char dir[1024];
  if (cli_scratch("gpu", dir, sizeof dir))
    return 1;
  const char* const list[] = {"denoise", "--ll", NULL};
  char* devices = cli_run(tool, dir, list) == 0 ? cli_slurp(dir, "stdout.txt") : NULL;
  const int have_cuda = devices && strstr(devices, "(cuda)") != NULL;
  free(devices);
  if (!have_cuda) {
    printf("no CUDA device: skipped\n");
    return 77;
  }
  cli_scene scene;
  if (cli_scene_make(&scene, 320, 200, 21, 0.6f))
    return 1;
  char c[1200], alb[1200], nrm[1200], cpu[1200], cuda[1200], half[1200], inplace[1200];
  cli_path(c, sizeof c, dir, "color.pfm");
  cli_path(alb, sizeof alb, dir, "albedo.pfm");
  cli_path(nrm, sizeof nrm, dir, "normal.pfm");
  cli_path(cpu, sizeof cpu, dir, "cpu.pfm");
  cli_path(cuda, sizeof cuda, dir, "cuda.pfm");
  cli_path(half, sizeof half, dir, "cuda_half.pfm");
  cli_path(inplace, sizeof inplace, dir, "cuda_inplace.pfm");
  CHECK_EQ_INT(cli_scene_write_plain(&scene, "noisy", c), 0);
  CHECK_EQ_INT(cli_scene_write_plain(&scene, "albedo", alb), 0);
  CHECK_EQ_INT(cli_scene_write_plain(&scene, "normal", nrm), 0);
  EXPECT(0, "denoise", "-d", "cpu", "--hdr", c, "--alb", alb, "--nrm", nrm, "-o", cpu);
  EXPECT(0, "denoise", "-d", "cuda", "--hdr", c, "--alb", alb, "--nrm", nrm, "-o", cuda);
  EXPECT(0, "denoise", "-d", "cuda", "--hdr", c, "--alb", alb, "--nrm", nrm, "-t", "half", "-o",
         half);
  EXPECT(0, "denoise", "-d", "cuda", "--hdr", c, "--alb", alb, "--nrm", nrm, "--inplace", "-o",
         inplace);
  lull_io_image a = cli_read(cpu), b = cli_read(cuda), h = cli_read(half),
                i = cli_read(inplace);
  const size_t pixels = (size_t)scene.width * (size_t)scene.height;
  CHECK(a.num_passes == 1 && b.num_passes == 1 && h.num_passes == 1 && i.num_passes == 1);
  if (a.num_passes == 1 && b.num_passes == 1 && h.num_passes == 1 && i.num_passes == 1) {
    const float* x = a.passes[0].data;
    const double noisy = lull_metric_rel_mse(scene.noisy, scene.clean, (size_t)scene.width,
                                             (size_t)scene.height, 3);
    const double on_cpu = cli_pass_rel_mse(&a.passes[0], scene.clean, scene.width, scene.height);
    const double on_gpu = cli_pass_rel_mse(&b.passes[0], scene.clean, scene.width, scene.height);
    const double apart = cli_pass_rel_mse(&b.passes[0], x, scene.width, scene.height);
    printf("relMSE vs clean: noisy %.5f, CPU %.5f, CUDA %.5f; CUDA vs CPU %.2e\n", noisy, on_cpu,
           on_gpu, apart);
    CHECK(on_gpu < 0.5 * noisy);
    CHECK(apart < 1e-3);
    CHECK(lull_test_max_abs_diff(i.passes[0].data, b.passes[0].data, pixels * 3) == 0.0);
    CHECK(cli_pass_rel_mse(&h.passes[0], b.passes[0].data, scene.width, scene.height) < 1e-4);
  }
  lull_io_free(&a);
  lull_io_free(&b);
  lull_io_free(&h);
  lull_io_free(&i);
  cli_scene_free(&scene);
  return lull_test_result("cli_gpu");
}
