/* `lull filters [NAME]`: the filter types, their images and parameters, as
 * lull.h's introspection reports them. */
#include <math.h>
#include <string.h>

#include "cli.h"

static void print_images(const char* filter)
{
  printf("  images:");
  for (int i = 0; i < lullGetFilterImageCount(filter); ++i)
    printf(" %s", lullGetFilterImageName(filter, i));
  printf("\n");
}

/* A value as its type reads: integers in full ("-2147483648", not
 * "-2.14748e+09", which looked like a float limit), other numbers %g. */
static void number(char* out, size_t size, double v, LullParamType type)
{
  if (type == LULL_PARAM_TYPE_INT && v >= -2147483648.0 && v <= 2147483647.0)
    snprintf(out, size, "%.0f", v);
  else
    snprintf(out, size, "%g", v);
}

static void print_filter(const char* filter)
{
  printf("%s\n", filter);
  print_images(filter);
  for (int i = 0; i < lullGetFilterParamCount(filter); ++i) {
    LullParamInfo info;
    if (!lullGetFilterParamInfo(filter, i, &info))
      continue;
    char value[48], lo[48], hi[48];
    if (isnan(info.defaultValue))
      snprintf(value, sizeof value, "auto");
    else
      number(value, sizeof value, info.defaultValue, info.type);
    number(lo, sizeof lo, info.minValue, info.type);
    number(hi, sizeof hi, info.maxValue, info.type);
    if (info.readOnly)
      printf("  %-16s %-5s (read-only)  %s\n", info.name, cli_param_type_name(info.type),
             info.description ? info.description : "");
    else
      printf("  %-16s %-5s %-6s [%s, %s]  %s\n", info.name, cli_param_type_name(info.type), value,
             lo, hi, info.description ? info.description : "");
  }
}

int cli_filters_main(int argc, char** argv)
{
  if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    printf("usage: lull filters [NAME]\n\nLists the filter types (with NAME: its images and "
           "parameters: type, default, range).\n");
    return CLI_OK;
  }
  if (argc > 2) {
    cli_error("filters takes at most one name");
    return CLI_USAGE;
  }
  if (argc == 2) {
    if (lullGetFilterParamCount(argv[1]) < 0) {
      cli_error("unknown filter '%s' (lull filters lists them)", argv[1]);
      return CLI_USAGE;
    }
    print_filter(argv[1]);
    return CLI_OK;
  }
  for (int i = 0; i < lullGetFilterTypeCount(); ++i) {
    printf("%s\n", lullGetFilterTypeName(i));
    print_images(lullGetFilterTypeName(i));
  }
  return CLI_OK;
}
