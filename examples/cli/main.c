/* lull: denoise renders from the command line.
 *
 *   lull denoise IN [-o OUT]      (and sequences, OIDN-style flags)
 *   lull compare OUT REF          relMSE, PSNR, SSIM, side-by-side PNG
 *   lull info FILE                layers, passes, channels
 *   lull extract IN -o OUT        one pass as an image of its own
 *   lull filters [NAME]           filter types and parameters
 *   lull blender [ARGS]           Blender with lull as its OIDN
 *   lull run COMMAND [ARGS]       any program with lull as its OIDN */
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "usage: lull COMMAND [options]\n"
    "\n"
    "Removes Monte Carlo noise from renders without a neural network (edge-avoiding\n"
    "a-trous wavelets and gradient-domain reconstruction, behind Open Image\n"
    "Denoise's API).\n"
    "\n"
    "commands:\n"
    "  denoise IN [-o OUT]   denoise a render or a sequence (EXR, PFM, PNG, ...)\n"
    "  compare OUT REF       relMSE, PSNR and SSIM against a reference, side-by-side PNG\n"
    "  info FILE             layers, passes and channels of a file\n"
    "  extract IN -o OUT     one pass of a file as an image of its own (e.g. PFM)\n"
    "  filters [NAME]        filter types, their images and parameters\n"
    "  blender [ARGS]        start Blender with lull as its Open Image Denoise\n"
    "  run COMMAND [ARGS]    run a program (a bpy script, ...) with lull as its OIDN\n"
    "\n"
    "lull COMMAND --help says more.  lull --version prints the version.\n";

/* A command that writes files, run with the stop signals blocked and
 * polled (signals.c); a stop signal still pending when it returns ends the
 * process by that signal: also one that came after the last poll, while
 * the last output was being written (it had exited 0, and a script or a
 * farm manager took the stopped run for a finished one). */
static int run_writing(int (*command)(int, char**), int argc, char** argv)
{
  const int status = command(argc, argv);
  cli_end_by_signal();
  return status;
}

int main(int argc, char** argv)
{
  /* before any thread exists (signals.c); info and filters only read, so
   * Ctrl-C ends them at once */
  if (argc >= 2 && (strcmp(argv[1], "denoise") == 0 || strcmp(argv[1], "compare") == 0 ||
                    strcmp(argv[1], "extract") == 0))
    cli_block_signals();
  if (argc < 2) {
    fputs(usage_text, stderr);
    return CLI_USAGE;
  }
  const char* command = argv[1];
  if (strcmp(command, "-h") == 0 || strcmp(command, "--help") == 0 ||
      strcmp(command, "help") == 0) {
    fputs(usage_text, stdout);
    return CLI_OK;
  }
  if (strcmp(command, "--version") == 0 || strcmp(command, "version") == 0) {
    printf("lull %s (Open Image Denoise API %d.%d.%d, image files: %s)\n", lullGetVersionString(),
           OIDN_VERSION_MAJOR, OIDN_VERSION_MINOR, OIDN_VERSION_PATCH,
           lull_io_has_oiio() ? "OpenImageIO and PFM" : "PFM only");
    return CLI_OK;
  }
  if (strcmp(command, "denoise") == 0)
    return run_writing(cli_denoise_main, argc - 1, argv + 1);
  if (strcmp(command, "compare") == 0)
    return run_writing(cli_compare_main, argc - 1, argv + 1);
  if (strcmp(command, "extract") == 0)
    return run_writing(cli_extract_main, argc - 1, argv + 1);
  if (strcmp(command, "info") == 0)
    return cli_info_main(argc - 1, argv + 1);
  if (strcmp(command, "filters") == 0)
    return cli_filters_main(argc - 1, argv + 1);
  if (strcmp(command, "blender") == 0)
    return cli_blender_main(argc - 1, argv + 1);
  if (strcmp(command, "run") == 0)
    return cli_run_main(argc - 1, argv + 1);
  cli_error("unknown command '%s' (lull --help lists them)", command);
  return CLI_USAGE;
}
