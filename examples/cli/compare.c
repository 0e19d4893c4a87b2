/* `lull compare OUT REF`: relMSE, PSNR and SSIM of an image against a
 * reference (core/metrics.h), and a side-by-side PNG with a heat map of the
 * error. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "usage: lull compare IMAGE REFERENCE [--pass NAME] [--layer NAME] [--view NAME]\n"
    "                    [--png SIDE.png]\n"
    "\n"
    "Prints relMSE (mean of (x - y)^2 / (y^2 + 0.01), linear values), PSNR and SSIM\n"
    "(of the images clamped to [0, 1] and sRGB-encoded) of IMAGE against REFERENCE.\n"
    "IMAGE's pass: NAME, else 'Denoised', else 'Noisy Image' / 'Combined' / the plain\n"
    "colour; REFERENCE's: NAME when it has one, else its colour.  In stereo files the\n"
    "first view's, or --view's (a file without views ignores --view).  --png writes\n"
    "IMAGE | REFERENCE | error heat map (log relative squared error, black 1e-4,\n"
    "white 1).  The first line names the passes measured: [Layer.Pass].\n";

/* Whether any pass of the image has a view. */
static int has_views(const lull_io_image* image)
{
  for (int i = 0; i < image->num_passes; ++i)
    if (image->passes[i].view[0])
      return 1;
  return 0;
}

/* " [Layer.Pass]", " [Pass]" or, for a file's only, unnamed pass, "";
 * printable (names come from the file). */
static void pass_label(const lull_io_pass* pass, char* out, size_t size)
{
  if (!pass->name[0] && !pass->layer[0]) {
    out[0] = '\0';
    return;
  }
  snprintf(out, size, " [%s%s%s]", pass->layer, pass->layer[0] ? "." : "",
           pass->name[0] ? pass->name : "(colour)");
  cli_printable(out);
}

/* The pass to measure (v: the view; NULL for any, the first view's;
 * layer: NULL for any, "" the unnamed one, as denoise's --layer). */
static const lull_io_pass* pick(const lull_io_image* image, const char* pass, const char* layer,
                                const char* v, int prefer_denoised)
{
  const char* l = layer;
  const lull_io_pass* p = pass && *pass ? cli_named_pass(image, pass, l, v) : NULL;
  if (!p && prefer_denoised && !(pass && *pass))
    p = lull_io_find_pass_view(image, l, "Denoised", v);
  if (!p && !(prefer_denoised && pass && *pass))
    p = cli_color_pass(image, l, v);
  if (!p && !(prefer_denoised && pass && *pass) && image->num_passes == 1)
    p = &image->passes[0];
  return p;
}

int cli_compare_main(int argc, char** argv)
{
  const char* files[2] = {NULL, NULL};
  const char* pass = NULL;
  const char* layer = NULL;
  const char* view = NULL;
  const char* png = NULL;
  const cli_option options[] = {{"--pass", NULL, &pass},
                                {"--layer", NULL, &layer},
                                {"--view", NULL, &view},
                                {"--png", NULL, &png}};
  int count = 0;
  const int parsed = cli_parse_args(argc, argv, options, 4, files, 2, &count, "compare",
                                    usage_text);
  if (parsed >= 0)
    return parsed;
  if (count != 2) {
    cli_error("compare needs IMAGE and REFERENCE (lull compare --help)");
    return CLI_USAGE;
  }

  if (png && (cli_same_file(png, files[0]) || cli_same_file(png, files[1]) ||
              strcmp(png, files[0]) == 0 || strcmp(png, files[1]) == 0)) {
    cli_error("--png %s is an input: the panels would replace it", png);
    return CLI_USAGE;
  }
  char err[CLI_ERROR_SIZE];
  lull_io_image images[2];
  memset(images, 0, sizeof images);
  int status = CLI_FAILED;
  float* rgb[2] = {NULL, NULL};
  float* heat = NULL;
  const lull_io_pass* passes[2] = {NULL, NULL};
  for (int k = 0; k < 2; ++k) {
    if (lull_io_read(files[k], &images[k], err, sizeof err)) {
      cli_error("%s", err);
      goto done;
    }
    /* the reference's view is the image's (two stereo files may list
     * their views in other orders: left had been measured against right) */
    const char* want = view ? view : (k == 1 && passes[0]->view[0] ? passes[0]->view : NULL);
    if (!has_views(&images[k])) /* a file without views: any pass */
      want = NULL;
    passes[k] = pick(&images[k], pass, layer, want, k == 0);
    if (!passes[k]) {
      cli_error("%s: no pass '%s'%s%s%s", files[k], pass ? pass : "Denoised/Combined/colour",
                want ? " in view '" : "", want ? want : "", want ? "'" : "");
      goto done;
    }
  }
  if (cli_interrupted()) { /* reading takes the time: stop before measuring */
    status = CLI_INTERRUPTED;
    goto done;
  }
  const int width = images[0].width, height = images[0].height;
  if (images[1].width != width || images[1].height != height) {
    cli_error("%s is %dx%d, %s is %dx%d", files[0], width, height, files[1], images[1].width,
              images[1].height);
    goto done;
  }
  for (int k = 0; k < 2; ++k) {
    if (!(rgb[k] = cli_pass_rgb(passes[k], width, height))) {
      cli_error("out of memory");
      goto done;
    }
    lull_io_file_info info;
    lull_io_get_file_info(&images[k], &info);
    if (info.integer) /* 8/16-bit files: display-encoded values */
      cli_decode_display(rgb[k], (size_t)width * (size_t)height * 3);
  }
  /* which passes were measured (a file may hold Combined and Denoised),
   * and which view of a stereo file (the first, unless --view) */
  char names[2][2 * LULL_IO_NAME_SIZE + 8];
  for (int k = 0; k < 2; ++k)
    pass_label(passes[k], names[k], sizeof names[k]);
  const char* measured = passes[0]->view[0] ? passes[0]->view : passes[1]->view;
  printf("%s%s against %s%s%s%s%s\n", files[0], names[0], files[1], names[1],
         measured[0] ? " (view " : "", measured, measured[0] ? ")" : "");
  if (cli_print_metrics(stdout, "  image", rgb[0], rgb[1], width, height)) {
    cli_error("out of memory");
    goto done;
  }
  fflush(stdout);
  if (png && cli_interrupted()) {
    status = CLI_INTERRUPTED;
    goto done;
  }
  if (png) {
    if (!(heat = cli_heat_map(rgb[0], rgb[1], width, height))) {
      cli_error("out of memory");
      goto done;
    }
    const float* panels[3] = {rgb[0], rgb[1], heat};
    const int encoded[3] = {0, 0, 1}; /* both linear now */
    if (cli_write_panels(png, panels, encoded, 3, width, height, err, sizeof err)) {
      cli_error("%s", err);
      goto done;
    }
  }
  status = CLI_OK;
done:
  if (status == CLI_INTERRUPTED)
    cli_error("interrupted%s", png ? ": the picture was not written" : "");
  free(rgb[0]);
  free(rgb[1]);
  free(heat);
  lull_io_free(&images[0]);
  lull_io_free(&images[1]);
  return status;
}
