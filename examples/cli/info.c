/* `lull info FILE`: what a file holds, the way lull sees it. */
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "usage: lull info FILE...\n"
    "\n"
    "Lists each file's format, size, layers, passes (with channels and storage) and\n"
    "attributes.  The passes are the names `lull denoise --pass` and `--layer` take.\n";

static int same_group(const lull_io_pass* a, const lull_io_pass* b)
{
  return strcmp(a->layer, b->layer) == 0 && strcmp(a->view, b->view) == 0;
}

/* Whether pass i is the first of its layer and view. */
static int first_of_group(const lull_io_image* image, int i)
{
  for (int j = 0; j < i; ++j)
    if (same_group(&image->passes[j], &image->passes[i]))
      return 0;
  return 1;
}

/* storage: "half", "float", or for an 8/16-bit file "8-bit" ("16-bit") */
static void print_pass(const lull_io_pass* p, const char* integer_storage)
{
  char names[64] = "";
  for (int c = 0; c < p->channels; ++c) {
    const size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s%s", c ? " " : "",
             p->channel_names[c][0] ? p->channel_names[c] : "-");
  }
  const char* storage = p->display ? integer_storage : p->half ? "half" : "float";
  char name[LULL_IO_NAME_SIZE];
  snprintf(name, sizeof name, "%s", p->name[0] ? p->name : "(colour)");
  printf("    %-24s %-10s %s\n", cli_printable(name), cli_printable(names), storage);
}

static int print_file(const char* path)
{
  lull_io_image image;
  char err[CLI_ERROR_SIZE];
  if (lull_io_read(path, &image, err, sizeof err)) {
    cli_error("%s", err);
    return CLI_FAILED;
  }
  lull_io_file_info info;
  lull_io_get_file_info(&image, &info);
  /* the storage of the channels: passes of one file may differ (Blender
   * writes colour passes as half and geometry as float), as each pass's
   * line below says */
  int channels = 0, half = 0;
  for (int i = 0; i < image.num_passes; ++i) {
    channels += image.passes[i].channels;
    if (image.passes[i].half)
      half += image.passes[i].channels;
  }
  printf("%s: %s, %d x %d, %d part%s, %d channel%s", path, info.format, image.width, image.height,
         info.parts, info.parts == 1 ? "" : "s", channels, channels == 1 ? "" : "s");
  if (info.integer)
    printf(", %d-bit integer (display-encoded)", info.bits);
  else if (half == channels)
    printf(", 16-bit half float");
  else if (half == 0)
    printf(", 32-bit float");
  else
    printf(": %d half (16-bit), %d float (32-bit)", half, channels - half);
  if (info.mip_levels > 1) /* only the first is read */
    printf(", %d resolution levels (the first read)", info.mip_levels);
  printf("\n");
  /* one heading per layer and view, in the order they first appear, with
   * all their passes under it: in a multi-part file the parts of layers
   * may interleave (A's colour, B's colour, A's normal) */
  for (int i = 0; i < image.num_passes; ++i) {
    if (!first_of_group(&image, i))
      continue;
    const lull_io_pass* head = &image.passes[i];
    char layer[LULL_IO_NAME_SIZE], view[LULL_IO_NAME_SIZE];
    snprintf(layer, sizeof layer, "%s", head->layer);
    snprintf(view, sizeof view, "%s", head->view);
    printf("  layer '%s'%s%s%s\n", cli_printable(layer), view[0] ? " view '" : "",
           cli_printable(view), view[0] ? "'" : "");
    for (int k = i; k < image.num_passes; ++k)
      if (same_group(head, &image.passes[k]))
        print_pass(&image.passes[k], info.bits > 8 ? "16-bit" : "8-bit");
  }
  for (int i = 0; i < info.attributes; ++i) {
    char name[128], value[256];
    if (lull_io_get_attribute(&image, i, name, sizeof name, value, sizeof value) == 0)
      printf("  %s = %s\n", cli_printable(name), cli_printable(value));
  }
  lull_io_free(&image);
  return CLI_OK;
}

int cli_info_main(int argc, char** argv)
{
  int status = CLI_OK, files = 0;
  int first_file = 1; /* after "--", every argument is a file */
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--") == 0) {
      first_file = i + 1;
      break;
    }
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      fputs(usage_text, stdout);
      return CLI_OK;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      cli_error("unknown option %s (lull info --help)", argv[i]);
      return CLI_USAGE;
    }
  }
  for (int i = 1; i < argc; ++i) {
    if (i < first_file && strcmp(argv[i], "--") == 0)
      continue;
    ++files;
    if (print_file(argv[i]) != CLI_OK)
      status = CLI_FAILED;
  }
  if (files == 0) {
    cli_error("info needs a file (lull info --help)");
    return CLI_USAGE;
  }
  return status;
}
