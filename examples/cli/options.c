/* Values of command-line options, the same for every command. */
#include <string.h>

#include "cli.h"

const char* cli_option_value(const char* flag, const char* inline_value, int argc, char** argv,
                             int* i)
{
  const char* v = inline_value ? inline_value : (*i + 1 < argc ? argv[++*i] : NULL);
  if (!v) {
    cli_error("%s needs a value", flag);
    return NULL;
  }
  if (!*v && strcmp(flag, "--layer") != 0) {
    cli_error("%s: empty value", flag);
    return NULL;
  }
  return v;
}

int cli_parse_args(int argc, char** argv, const cli_option* options, int num_options,
                   const char** files, int max_files, int* count, const char* command,
                   const char* usage_text)
{
  *count = 0;
  int options_done = 0; /* after "--", every argument is a file */
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const cli_option* option = NULL;
    if (!options_done) {
      if (strcmp(arg, "--") == 0) {
        options_done = 1;
        continue;
      }
      if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
        fputs(usage_text, stdout);
        return CLI_OK;
      }
      for (int k = 0; k < num_options && !option; ++k)
        if (strcmp(arg, options[k].name) == 0 ||
            (options[k].alias && strcmp(arg, options[k].alias) == 0))
          option = &options[k];
    }
    if (option) {
      if (!(*option->value = cli_option_value(arg, NULL, argc, argv, &i)))
        return CLI_USAGE;
    } else if (!options_done && arg[0] == '-' && arg[1]) {
      cli_error("unknown option %s (lull %s --help)", arg, command);
      return CLI_USAGE;
    } else if (*count < max_files) {
      files[(*count)++] = arg;
    } else {
      cli_error("%s takes %d file%s (lull %s --help)", command, max_files,
                max_files == 1 ? "" : "s", command);
      return CLI_USAGE;
    }
  }
  return -1;
}
