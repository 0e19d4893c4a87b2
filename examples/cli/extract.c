/* `lull extract IN -o OUT`: one pass of a render as an image of its own,
 * e.g. a Blender render's albedo as the PFM that programs written for
 * Open Image Denoise read (examples/denoise_oidn.c, OIDN's oidnDenoise). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "usage: lull extract IN -o OUT [--pass NAME] [--layer NAME] [--view NAME]\n"
    "\n"
    "Writes one pass of IN as the RGB colour of OUT (PFM, EXR, PNG, ...: OUT's\n"
    "extension picks the format; a grey pass is replicated, alpha dropped).  The\n"
    "pass is NAME ('Denoising Albedo', 'ViewLayer.Denoising Normal'; lull info lists\n"
    "them), else the colour lull denoise would take ('Noisy Image', 'Combined', or\n"
    "the only pass).  --layer and --view pick the view layer and the view of a\n"
    "stereo render (default: the first).  OUT is replaced atomically.\n";

int cli_extract_main(int argc, char** argv)
{
  const char* input = NULL;
  const char* output = NULL;
  const char* pass_name = NULL;
  const char* layer = NULL;
  const char* view = NULL;
  const cli_option options[] = {{"-o", "--output", &output},
                                {"--pass", NULL, &pass_name},
                                {"--layer", NULL, &layer},
                                {"--view", NULL, &view}};
  int count = 0;
  const int parsed = cli_parse_args(argc, argv, options, 4, &input, 1, &count, "extract",
                                    usage_text);
  if (parsed >= 0)
    return parsed;
  if (!input || !output) {
    cli_error("extract needs IN and -o OUT (lull extract --help)");
    return CLI_USAGE;
  }
  if (strcmp(input, output) == 0 || cli_same_file(input, output)) {
    cli_error("-o %s is the input: the pass would replace the render", output);
    return CLI_USAGE;
  }

  char err[CLI_ERROR_SIZE];
  lull_io_image image, out;
  memset(&out, 0, sizeof out);
  if (lull_io_read(input, &image, err, sizeof err)) {
    cli_error("%s", err);
    return CLI_FAILED;
  }
  int status = CLI_FAILED;
  float* rgb = NULL;
  const char* want_view = view && *view ? view : NULL;
  const lull_io_pass* pass = pass_name ? cli_named_pass(&image, pass_name, layer, want_view)
                                       : cli_color_pass(&image, layer, want_view);
  if (!pass && !pass_name && !layer && !want_view && image.num_passes == 1)
    pass = &image.passes[0];
  if (!pass) {
    char name[LULL_IO_NAME_SIZE];
    snprintf(name, sizeof name, "%s", pass_name ? pass_name : "Noisy Image/Combined");
    cli_error("%s: no pass '%s'%s%s%s (lull info %s lists them)", input, cli_printable(name),
              layer ? " in layer '" : "", layer ? layer : "", layer ? "'" : "", input);
    goto done;
  }
  if (cli_interrupted()) {
    status = CLI_INTERRUPTED;
    cli_error("interrupted: %s was not written", output);
    goto done;
  }
  if (!(rgb = cli_pass_rgb(pass, image.width, image.height))) {
    cli_error("out of memory");
    goto done;
  }
  static const char* const rgb_names[3] = {"R", "G", "B"};
  out.width = image.width;
  out.height = image.height;
  lull_io_pass* written = lull_io_add_pass(&out, "", "", 3, rgb_names, rgb);
  if (!written) {
    cli_error("out of memory");
    goto done;
  }
  written->half = pass->half;
  /* an 8/16-bit file's values are display-encoded: linear in a float file */
  const int values = pass->display ? LULL_IO_VALUES_DISPLAY : LULL_IO_VALUES_LINEAR;
  if (cli_write_file(output, &out, values, err, sizeof err)) {
    cli_error("%s", err);
    goto done;
  }
  status = CLI_OK;
done:
  free(rgb);
  lull_io_free(&out);
  lull_io_free(&image);
  return status;
}
