/* `lull denoise`: the command line, the device, and the loop over frames. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "denoise.h"

static const char usage_text[] =
    "usage: lull denoise [options] INPUT [-o OUTPUT]\n"
    "       lull denoise [options] HALF_A --half-b HALF_B [-o OUTPUT]\n"
    "       lull denoise [options] --hdr COLOR [--alb ALBEDO] [--nrm NORMAL] -o OUTPUT\n"
    "\n"
    "Denoises a render.  INPUT is an EXR (Blender multilayer: every view layer with a\n"
    "'Noisy Image' or 'Combined' pass, with the guides 'Denoising Albedo', 'Denoising\n"
    "Normal', 'Denoising Depth' (else 'DiffCol', 'Normal', 'Depth') and, without a\n"
    "depth, 'Position', when the filter takes them), a PFM, or an image OpenImageIO\n"
    "reads (PNG, HDR, TIFF, JPEG; 8/16-bit files are LDR sRGB).\n"
    "An EXR OUTPUT gets every pass of INPUT plus '<Layer>.Denoised' (a plain image gets\n"
    "its colour replaced); other formats get the denoised colour only.  The default\n"
    "OUTPUT is INPUT with '_denoised' before the extension.  Files are replaced\n"
    "atomically: a failed run leaves an existing OUTPUT as it was.\n"
    "\n"
    "Two halves: two renders of half the samples each with different seeds (the\n"
    "same scene, size, layers and passes): INPUT is half A and --half-b names half\n"
    "B; or both in one EXR, each pass of a half named as the pass with ' A' or ' B'\n"
    "appended ('Combined A', 'Combined B', 'Denoising Albedo A', ...).  Halves are\n"
    "denoised by Regression unless -f names another filter (one without halves gets\n"
    "their mean); the output is INPUT's passes plus 'Denoised', and --reference\n"
    "measures the mean of the halves as the noisy image.\n"
    "\n"
    "Sequences: INPUT 'frames/####.exr' or 'frames/%04d.exr' (OUTPUT likewise) denoises\n"
    "every frame that exists (or --frames); a frame whose output is newer than its\n"
    "input is skipped (resume) unless --overwrite.  Exit status 1 if any frame failed.\n"
    "\n"
    "Filter:\n"
    "  -f, --filter NAME       RT (default; halves: Regression), ATrous, ... (lull filters)\n"
    "  -p, --param NAME=VALUE  set a filter parameter (lull filters NAME lists them)\n"
    "      --pass IMAGE=PASS   filter image IMAGE from pass PASS of INPUT, or 'none':\n"
    "                          --pass color='Noisy Image', --pass albedo=none\n"
    "      --image IMAGE=FILE  filter image IMAGE from another file (pattern in sequences);\n"
    "                          -f RHF: --image histogram=FILE, its passes histogram0 ...\n"
    "      --half-b FILE       half B of the render (pattern in sequences); INPUT is half A\n"
    "      --pass colorA=PASS --pass colorB=PASS   the halves' passes in INPUT, by name\n"
    "      --layer NAME        only this view layer\n"
    "      --view NAME         only this view of a stereo render (left, right, ...)\n"
    "      --output-pass NAME  name of the added pass (default Denoised)\n"
    "Device:\n"
    "  -d, --device NAME       default, cpu, cuda, or a physical device number\n"
    "      --threads N         CPU threads (0: all)\n"
    "Sequences:\n"
    "      --frames LIST       e.g. 1-100 or 1,5,10-20 (default: the frames that exist)\n"
    "      --shard I/N         only frames k with k mod N = I (split over N machines);\n"
    "                          with --temporal the I-th of N contiguous chunks\n"
    "      --overwrite         also denoise frames whose output is up to date, and\n"
    "                          replace an input pass named as --output-pass\n"
    "      --temporal          frames in order, each with the history of those before\n"
    "                          it, reprojected by the 'Vector' pass: less flicker (RT,\n"
    "                          ATrous, Regression; docs/temporal.md).  A new history at\n"
    "                          a --cut, at a change of the EXR's Camera, after a gap in\n"
    "                          the frames\n"
    "      --cut LIST          frames that start a new shot (e.g. 1,241,388)\n"
    "      --warmup N          --temporal: frames run (not written) before the first one\n"
    "                          denoised, so a shard or a resumed run starts with the\n"
    "                          history it would have had (default 16)\n"
    "Checking:\n"
    "      --reference FILE    print relMSE, PSNR and SSIM of noisy and denoised vs FILE\n"
    "      --side-by-side PNG  write noisy | denoised | reference side by side\n"
    "Other:\n"
    "      --quiet             print errors only\n"
    "  -h, --help              this text\n"
    "\n"
    "Flags of Open Image Denoise's oidnDenoise, for its scripts:\n"
    "  --hdr FILE, --ldr FILE  colour input (HDR / LDR)   --srgb       LDR colour is sRGB\n"
    "  --alb FILE, --nrm FILE  albedo, normal inputs      --clean_aux  they are noise-free\n"
    "  --dir FILE              directional lightmap (-f RTLightmap)\n"
    "  -q, --quality Q         default, high, balanced, fast\n"
    "  --is, --input_scale X   colour scale               --maxmem MB  memory limit\n"
    "  -r, --ref FILE          as --reference             -t, --type float|half  buffers\n"
    "  -n N                    run the filter N times, print the median time\n"
    "  --inplace               denoise into the colour buffer\n"
    "  -v, --verbose N         device verbosity           --affinity 0|1\n"
    "  --ll, --list_devices    list the devices and exit\n";

typedef struct parsed_args
{
  cli_denoise_options options;
  cli_param_text params[CLI_MAX_PARAMS];
  int num_params;
  char device[32];
  int threads;  /* -1: unset */
  int affinity; /* -1: unset */
  int verbose;  /* -1: unset */
  char frames[256];
  char cuts[256];               /* --cut */
  int shard_index, shard_count; /* count 0: no shards */
  int list_devices;
  int help;
} parsed_args;

/* -- parsing ------------------------------------------------------------------------ */

static int copy(char* dst, size_t size, const char* src, const char* what)
{
  if (strlen(src) >= size) {
    cli_error("%s: too long", what);
    return 1;
  }
  memcpy(dst, src, strlen(src) + 1);
  return 0;
}

static int add_param(parsed_args* a, const char* name, const char* value, const char* flag,
                     int optional)
{
  if (a->num_params == CLI_MAX_PARAMS) {
    cli_error("too many parameters");
    return 1;
  }
  cli_param_text* p = &a->params[a->num_params];
  if (strlen(name) >= sizeof p->name || strlen(value) >= sizeof p->value) {
    cli_error("%s %s=%s: too long", flag, name, value);
    return 1;
  }
  memset(p, 0, sizeof *p);
  memcpy(p->name, name, strlen(name) + 1);
  memcpy(p->value, value, strlen(value) + 1);
  snprintf(p->flag, sizeof p->flag, "%s", flag);
  p->optional = optional;
  ++a->num_params;
  return 0;
}

/* "NAME=VALUE" into its halves (name at most name_size - 1 characters). */
static int split_assignment(const char* text, const char* flag, char* name, size_t name_size,
                            const char** value)
{
  const char* eq = strchr(text, '=');
  if (!eq || eq == text || (size_t)(eq - text) >= name_size) {
    cli_error("%s %s: expected NAME=VALUE", flag, text);
    return 1;
  }
  memcpy(name, text, (size_t)(eq - text));
  name[eq - text] = '\0';
  *value = eq + 1;
  return 0;
}

static int add_source(parsed_args* a, const char* image, const char* file, const char* pass,
                      const char* flag)
{
  cli_denoise_options* o = &a->options;
  if (o->num_sources == CLI_MAX_SOURCES) {
    cli_error("%s: too many images", flag);
    return 1;
  }
  if (!file[0] && !pass[0]) { /* --image albedo= or --pass albedo= */
    cli_error("%s %s=: empty value", flag, image);
    return 1;
  }
  cli_source* s = &o->sources[o->num_sources];
  memset(s, 0, sizeof *s);
  if (copy(s->image, sizeof s->image, image, flag) || copy(s->file, sizeof s->file, file, flag) ||
      copy(s->pass, sizeof s->pass, pass, flag))
    return 1;
  ++o->num_sources;
  return 0;
}

static int set_input(parsed_args* a, const char* path, const char* flag)
{
  if (a->options.input[0]) {
    cli_error("%s %s: an input was already given (%s)", flag, path, a->options.input);
    return 1;
  }
  return copy(a->options.input, sizeof a->options.input, path, flag);
}

static int set_half_b(parsed_args* a, const char* path, const char* flag)
{
  if (a->options.half_b[0]) {
    cli_error("%s %s: half B was already given (%s)", flag, path, a->options.half_b);
    return 1;
  }
  return copy(a->options.half_b, sizeof a->options.half_b, path, flag);
}

static int parse_int(const char* text, const char* flag, long lo, long hi, int* out)
{
  char* end;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno || end == text || *end || v < lo || v > hi) {
    cli_error("%s %s: expected an integer from %ld to %ld", flag, text, lo, hi);
    return 1;
  }
  *out = (int)v;
  return 0;
}

static int quality_value(const char* text, const char** value)
{
  static const char* const names[][2] = {{"default", "0"}, {"h", "6"},        {"high", "6"},
                                         {"b", "5"},       {"balanced", "5"}, {"f", "4"},
                                         {"fast", "4"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (strcasecmp(text, names[i][0]) == 0) {
      *value = names[i][1];
      return 0;
    }
  cli_error("-q %s: expected default, high, balanced or fast", text);
  return 1;
}

/* The device type a name means (also OIDN's sycl, hip, metal: lull reports
 * them unsupported); 0 for an unknown name.  Numbers are physical devices. */
static int device_type(const char* name, OIDNDeviceType* type)
{
  static const struct
  {
    const char* name;
    OIDNDeviceType type;
  } types[] = {{"default", OIDN_DEVICE_TYPE_DEFAULT}, {"cpu", OIDN_DEVICE_TYPE_CPU},
               {"sycl", OIDN_DEVICE_TYPE_SYCL},       {"cuda", OIDN_DEVICE_TYPE_CUDA},
               {"hip", OIDN_DEVICE_TYPE_HIP},         {"metal", OIDN_DEVICE_TYPE_METAL}};
  char* end;
  errno = 0;
  const long id = strtol(name, &end, 10);
  if (end != name && *end == '\0')
    return errno == 0 && id >= 0 && id < 1000;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
    if (strcasecmp(types[i].name, name) == 0) {
      if (type)
        *type = types[i].type;
      return 1;
    }
  return 0;
}

/* One option (argv[*i], value maybe in argv[*i + 1] or after '='). */
static int parse_option(parsed_args* a, int argc, char** argv, int* i)
{
  cli_denoise_options* o = &a->options;
  char flag[64];
  const char* arg = argv[*i];
  const char* inline_value = NULL;
  const char* eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
  if (eq && (size_t)(eq - arg) < sizeof flag) {
    memcpy(flag, arg, (size_t)(eq - arg));
    flag[eq - arg] = '\0';
    inline_value = eq + 1;
  } else {
    snprintf(flag, sizeof flag, "%s", arg);
  }
  static const char* const no_value[] = {"--help",      "--inplace", "--overwrite",
                                         "--quiet",     "--list_devices", "--ll",
                                         "--srgb",      "--clean_aux", "--temporal"};
  for (size_t k = 0; inline_value && k < sizeof no_value / sizeof no_value[0]; ++k)
    if (strcmp(flag, no_value[k]) == 0) {
      cli_error("%s takes no value", flag);
      return 1;
    }
#define IS(x) (strcmp(flag, x) == 0)
#define VALUE() cli_option_value(flag, inline_value, argc, argv, i)
  const char* v;
  char name[64];
  const char* value;
  if (IS("-h") || IS("--help")) {
    a->help = 1;
  } else if (IS("-o") || IS("--output")) {
    if (!(v = VALUE()) || copy(o->output, sizeof o->output, v, flag))
      return 1;
  } else if (IS("-f") || IS("--filter")) {
    if (!(v = VALUE()) || copy(o->filter, sizeof o->filter, v, flag))
      return 1;
    o->filter_given = 1;
  } else if (IS("-p") || IS("--param")) {
    if (!(v = VALUE()) || split_assignment(v, flag, name, sizeof name, &value) ||
        add_param(a, name, value, flag, 0))
      return 1;
  } else if (IS("--pass")) {
    if (!(v = VALUE()) || split_assignment(v, flag, name, sizeof name, &value))
      return 1;
    if (strcmp(name, "color") == 0)
      return copy(o->color_pass, sizeof o->color_pass, value, flag);
    if (strcmp(name, "colorA") == 0 || strcmp(name, "colorB") == 0) {
      char* half = o->half_pass[name[5] == 'B'];
      if (!value[0] || strcmp(value, "none") == 0) {
        cli_error("%s %s=%s: expected the name of a pass", flag, name, value);
        return 1;
      }
      return copy(half, LULL_IO_NAME_SIZE, value, flag);
    }
    return add_source(a, name, "", value, flag);
  } else if (IS("--image")) {
    if (!(v = VALUE()) || split_assignment(v, flag, name, sizeof name, &value))
      return 1;
    if (strcmp(name, "color") == 0 || strcmp(name, "colorA") == 0)
      return set_input(a, value, flag);
    if (strcmp(name, "colorB") == 0)
      return set_half_b(a, value, flag);
    return add_source(a, name, value, "", flag);
  } else if (IS("--half-b")) {
    return !(v = VALUE()) || set_half_b(a, v, flag);
  } else if (IS("--alb") || IS("--albedo")) {
    return !(v = VALUE()) || add_source(a, "albedo", v, "", flag);
  } else if (IS("--nrm") || IS("--normal")) {
    return !(v = VALUE()) || add_source(a, "normal", v, "", flag);
  } else if (IS("--hdr") || IS("--ldr")) {
    o->hdr_mode = IS("--hdr");
    return !(v = VALUE()) || set_input(a, v, flag);
  } else if (IS("--dir")) {
    return !(v = VALUE()) || set_input(a, v, flag) || add_param(a, "directional", "1", flag, 1);
  } else if (IS("--srgb")) {
    return add_param(a, "srgb", "1", flag, 1);
  } else if (IS("--clean_aux")) {
    return add_param(a, "cleanAux", "1", flag, 1);
  } else if (IS("-q") || IS("--quality")) {
    return !(v = VALUE()) || quality_value(v, &value) || add_param(a, "quality", value, flag, 1);
  } else if (IS("--is") || IS("--input_scale")) {
    return !(v = VALUE()) || add_param(a, "inputScale", v, flag, 1);
  } else if (IS("--maxmem")) {
    return !(v = VALUE()) || add_param(a, "maxMemoryMB", v, flag, 1);
  } else if (IS("-d") || IS("--device")) {
    if (!(v = VALUE()) || copy(a->device, sizeof a->device, v, flag))
      return 1;
    if (!device_type(v, NULL)) {
      cli_error("%s %s: expected default, cpu, cuda or a device number", flag, v);
      return 1;
    }
  } else if (IS("--threads")) {
    return !(v = VALUE()) || parse_int(v, flag, 0, 4096, &a->threads);
  } else if (IS("--affinity")) {
    return !(v = VALUE()) || parse_int(v, flag, 0, 1, &a->affinity);
  } else if (IS("-v") || IS("--verbose")) {
    return !(v = VALUE()) || parse_int(v, flag, 0, 4, &a->verbose);
  } else if (IS("-t") || IS("--type")) {
    if (!(v = VALUE()))
      return 1;
    if (strcmp(v, "half") != 0 && strcmp(v, "float") != 0 && strcmp(v, "f") != 0 &&
        strcmp(v, "h") != 0) {
      cli_error("%s %s: expected float or half", flag, v);
      return 1;
    }
    o->half = v[0] == 'h';
  } else if (IS("--inplace")) {
    o->inplace = 1;
  } else if (IS("-n")) {
    return !(v = VALUE()) || parse_int(v, flag, 1, 64, &o->repeat);
  } else if (IS("-w") || IS("--weights")) {
    cli_error("%s: lull has no neural network, so no weights to load", flag);
    return 1;
  } else if (IS("-r") || IS("--ref") || IS("--reference")) {
    return !(v = VALUE()) || copy(o->reference, sizeof o->reference, v, flag);
  } else if (IS("--side-by-side")) {
    return !(v = VALUE()) || copy(o->side_by_side, sizeof o->side_by_side, v, flag);
  } else if (IS("--layer")) {
    o->layer_given = 1;
    return !(v = VALUE()) || copy(o->layer, sizeof o->layer, v, flag);
  } else if (IS("--view")) {
    return !(v = VALUE()) || copy(o->view, sizeof o->view, v, flag);
  } else if (IS("--output-pass")) {
    if (!(v = VALUE()))
      return 1;
    if (strchr(v, '.')) { /* it would read back as part of the layer's name */
      cli_error("%s %s: a pass name cannot hold a dot", flag, v);
      return 1;
    }
    return copy(o->output_pass, sizeof o->output_pass, v, flag);
  } else if (IS("--frames")) {
    return !(v = VALUE()) || copy(a->frames, sizeof a->frames, v, flag);
  } else if (IS("--shard")) {
    if (!(v = VALUE()))
      return 1;
    char* end;
    errno = 0;
    const long index = strtol(v, &end, 10);
    const long count = *end == '/' ? strtol(end + 1, &end, 10) : 0;
    if (errno || *end || count < 1 || count > 1000000 || index < 0 || index >= count) {
      cli_error("--shard %s: expected I/N with 0 <= I < N", v);
      return 1;
    }
    a->shard_index = (int)index;
    a->shard_count = (int)count;
  } else if (IS("--overwrite")) {
    o->overwrite = 1;
  } else if (IS("--temporal")) {
    o->temporal = 1;
  } else if (IS("--warmup")) {
    return !(v = VALUE()) || parse_int(v, flag, 0, 100000, &o->warmup);
  } else if (IS("--cut")) {
    return !(v = VALUE()) || copy(a->cuts, sizeof a->cuts, v, flag);
  } else if (IS("--quiet")) {
    o->quiet = 1;
  } else if (IS("--ll") || IS("--list_devices")) {
    a->list_devices = 1;
  } else if (arg[0] == '-' && arg[1] != '\0') {
    cli_error("unknown option %s (lull denoise --help lists them)", arg);
    return 1;
  } else {
    return set_input(a, arg, "input");
  }
#undef IS
#undef VALUE
  return 0;
}

static int parse(parsed_args* a, int argc, char** argv)
{
  memset(a, 0, sizeof *a);
  snprintf(a->options.filter, sizeof a->options.filter, "RT");
  snprintf(a->options.output_pass, sizeof a->options.output_pass, "Denoised");
  snprintf(a->device, sizeof a->device, "default");
  a->options.hdr_mode = -1;
  a->options.repeat = 1;
  a->options.warmup = 16;
  a->threads = a->affinity = a->verbose = -1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--") == 0) {
      /* the end of the options: a file named "-x.exr" follows */
      for (++i; i < argc; ++i)
        if (set_input(a, argv[i], "input"))
          return 1;
      break;
    }
    if (parse_option(a, argc, argv, &i))
      return 1;
  }
  return 0;
}

/* Halves given on the command line: their options agree, and the filter is
 * Regression unless -f named one. */
static int check_halves(parsed_args* a)
{
  cli_denoise_options* o = &a->options;
  const int named = o->half_pass[0][0] || o->half_pass[1][0];
  if (named && !(o->half_pass[0][0] && o->half_pass[1][0])) {
    const int given = o->half_pass[0][0] ? 0 : 1;
    cli_error("--pass color%c=%s needs --pass color%c=PASS too (the other half)", 'A' + given,
              o->half_pass[given], 'B' - given);
    return 1;
  }
  if (named && o->half_b[0]) {
    cli_error("--half-b and --pass colorA/colorB: give the halves one way");
    return 1;
  }
  if (!named && !o->half_b[0])
    return 0;
  if (o->color_pass[0]) {
    cli_error("--pass color=%s: with halves the colour is the two halves (leave it out)",
              o->color_pass);
    return 1;
  }
  if (o->inplace) {
    cli_error("--inplace: two halves are two colour buffers; the output needs its own");
    return 1;
  }
  if (!o->filter_given && lullGetFilterParamCount("Regression") >= 0)
    snprintf(o->filter, sizeof o->filter, "Regression");
  return 0;
}

/* The filter of halves found in a file (Regression when no filter was
 * named, not in temporal mode) and its parameters: an error in them is
 * reported by the frames that have halves. */
static void halves_filter(parsed_args* a)
{
  cli_denoise_options* o = &a->options;
  snprintf(o->halves_filter, sizeof o->halves_filter, "%s", o->filter);
  memcpy(o->halves_params, o->params, sizeof o->params);
  o->num_halves_params = o->num_params;
  o->halves_params_error[0] = '\0';
  const int halves_known = o->half_b[0] || o->half_pass[0][0];
  if (o->filter_given || o->temporal || halves_known || o->color_pass[0] ||
      lullGetFilterParamCount("Regression") < 0)
    return;
  snprintf(o->halves_filter, sizeof o->halves_filter, "Regression");
  char err[CLI_ERROR_SIZE];
  if (cli_params_resolve(o->halves_filter, a->params, a->num_params, o->halves_params,
                         &o->num_halves_params, 1, err, sizeof err))
    snprintf(o->halves_params_error, sizeof o->halves_params_error,
             "%.900s (halves are denoised by Regression: -f names another filter)", err);
}

/* Checks the filter name, types the parameters, checks image names. */
static int check_filter(parsed_args* a)
{
  cli_denoise_options* o = &a->options;
  if (check_halves(a))
    return 1;
  if (lullGetFilterParamCount(o->filter) < 0) {
    char names[256] = "";
    for (int i = 0; i < lullGetFilterTypeCount(); ++i) {
      const size_t used = strlen(names);
      snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", lullGetFilterTypeName(i));
    }
    cli_error("unknown filter '%s' (filters: %s)", o->filter, names);
    return 1;
  }
  char err[CLI_ERROR_SIZE];
  if (cli_params_resolve(o->filter, a->params, a->num_params, o->params, &o->num_params,
                         o->quiet, err, sizeof err)) {
    cli_error("%s", err);
    return 1;
  }
  for (int i = 0; i < o->num_sources; ++i)
    if (!cli_filter_has_image(o->filter, o->sources[i].image) &&
        !(strcmp(o->sources[i].image, "histogram") == 0 &&
          cli_filter_has_image(o->filter, "histogram0"))) { /* RHF's bins, all from one file */
      cli_error("filter %s takes no '%s' image", o->filter, o->sources[i].image);
      return 1;
    }
  if (o->temporal && !cli_filter_has_param(o->filter, "temporal")) {
    cli_error("--temporal: filter %s has no temporal mode (RT, ATrous and Regression have)", o->filter);
    return 1;
  }
  if (!o->temporal && a->cuts[0]) {
    cli_error("--cut needs --temporal");
    return 1;
  }
  halves_filter(a);
  return 0;
}

/* INPUT with "_denoised" before its extension. */
static int default_output(const char* input, char* out, size_t size)
{
  const char* slash = strrchr(input, '/');
  const char* dot = strrchr(input, '.');
  if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : input))
    return snprintf(out, size, "%s_denoised.exr", input) >= (int)size;
  return snprintf(out, size, "%.*s_denoised%s", (int)(dot - input), input, dot) >= (int)size;
}

/* -- the device ------------------------------------------------------------------------ */

static void list_devices(void)
{
  const int n = oidnGetNumPhysicalDevices();
  printf("%d device%s\n", n, n == 1 ? "" : "s");
  for (int i = 0; i < n; ++i) {
    const char* name = oidnGetPhysicalDeviceString(i, "name");
    const int type = oidnGetPhysicalDeviceInt(i, "type");
    printf("  %d: %s (%s)\n", i, name ? name : "?",
           type == OIDN_DEVICE_TYPE_CPU ? "cpu" : type == OIDN_DEVICE_TYPE_CUDA ? "cuda" : "other");
  }
}

static OIDNDevice make_device(const parsed_args* a)
{
  OIDNDeviceType type = OIDN_DEVICE_TYPE_DEFAULT;
  char* end;
  const long id = strtol(a->device, &end, 10);
  OIDNDevice device = NULL;
  if (end != a->device && *end == '\0')
    device = oidnNewDeviceByID((int)id);
  else if (device_type(a->device, &type))
    device = oidnNewDevice(type);
  const char* message = NULL;
  if (!device || oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE) {
    if (!device)
      oidnGetDeviceError(NULL, &message);
    cli_error("device %s: %s", a->device, message && *message ? message : "cannot create it");
    if (device)
      oidnReleaseDevice(device);
    return NULL;
  }
  if (a->threads >= 0)
    oidnSetDeviceInt(device, "numThreads", a->threads);
  if (a->affinity >= 0)
    oidnSetDeviceBool(device, "setAffinity", a->affinity);
  if (a->verbose >= 0)
    oidnSetDeviceInt(device, "verbose", a->verbose);
  oidnCommitDevice(device);
  if (oidnGetDeviceError(device, &message) != OIDN_ERROR_NONE) {
    cli_error("device %s: %s", a->device, message && *message ? message : "error");
    oidnReleaseDevice(device);
    return NULL;
  }
  return device;
}

/* -- frames ------------------------------------------------------------------------------ */

typedef struct plan
{
  cli_pattern input, half_b, output, reference, side_by_side;
  cli_pattern sources[CLI_MAX_SOURCES];
  int sequence;
  long* frames;
  long num_frames;
} plan;

/* name as a plain file name, whatever '#' or '%' it holds */
static void plain_name(const char* name, cli_pattern* pattern)
{
  memset(pattern, 0, sizeof *pattern);
  snprintf(pattern->prefix, sizeof pattern->prefix, "%s", name); /* parsed: it fits */
}

/* 0, 1 for a usage error, 2 when no frames exist. */
static int make_plan(parsed_args* a, plan* p)
{
  cli_denoise_options* o = &a->options;
  char err[CLI_ERROR_SIZE];
  memset(p, 0, sizeof *p);
  if (cli_pattern_parse(o->input, &p->input, err, sizeof err) ||
      cli_pattern_parse(o->half_b, &p->half_b, err, sizeof err) ||
      cli_pattern_parse(o->output, &p->output, err, sizeof err) ||
      cli_pattern_parse(o->reference, &p->reference, err, sizeof err) ||
      cli_pattern_parse(o->side_by_side, &p->side_by_side, err, sizeof err)) {
    cli_error("%s", err);
    return 1;
  }
  for (int i = 0; i < o->num_sources; ++i)
    if (cli_pattern_parse(o->sources[i].file, &p->sources[i], err, sizeof err)) {
      cli_error("%s", err);
      return 1;
    }
  struct stat st;
  if (p->input.is_pattern && stat(o->input, &st) == 0 && S_ISREG(st.st_mode)) {
    /* an existing file named with '#' ("take#2.exr") is that file: every
     * name is then taken as it is */
    plain_name(o->input, &p->input);
    plain_name(o->half_b, &p->half_b);
    plain_name(o->output, &p->output);
    plain_name(o->reference, &p->reference);
    plain_name(o->side_by_side, &p->side_by_side);
    for (int i = 0; i < o->num_sources; ++i)
      plain_name(o->sources[i].file, &p->sources[i]);
  }
  p->sequence = p->input.is_pattern;
  if (!p->sequence) {
    const char* patterned = p->half_b.is_pattern         ? o->half_b
                            : p->output.is_pattern       ? o->output
                            : p->reference.is_pattern    ? o->reference
                            : p->side_by_side.is_pattern ? o->side_by_side
                                                         : NULL;
    for (int i = 0; i < o->num_sources && !patterned; ++i)
      if (p->sources[i].is_pattern)
        patterned = o->sources[i].file;
    if (patterned) {
      cli_error("%s has a frame number but %s has none", patterned, o->input);
      return 1;
    }
    if (a->frames[0] || a->shard_count) {
      cli_error("--frames and --shard need a sequence (an input with #### or %%04d)");
      return 1;
    }
    p->num_frames = 1;
    p->frames = calloc(1, sizeof *p->frames);
    return p->frames == NULL;
  }
  if (!p->output.is_pattern) {
    cli_error("%s is a sequence: the output needs a frame number too (#### or %%04d)", o->input);
    return 1;
  }
  if (o->half_b[0] && !p->half_b.is_pattern) {
    cli_error("--half-b %s: a sequence needs a frame number in it (#### or %%04d)", o->half_b);
    return 1;
  }
  if (o->side_by_side[0] && !p->side_by_side.is_pattern) {
    cli_error("--side-by-side %s: a sequence needs a frame number in it", o->side_by_side);
    return 1;
  }
  p->num_frames = a->frames[0] ? cli_frames_parse(a->frames, &p->frames, err, sizeof err)
                               : cli_pattern_scan(&p->input, &p->frames, err, sizeof err);
  if (p->num_frames < 0) {
    cli_error("%s", err);
    /* a bad --frames is a usage error; a folder that cannot be read (an
     * unmounted share on a farm node) is a failure, as no frames are */
    return a->frames[0] ? 1 : 2;
  }
  if (p->num_frames == 0) {
    cli_error("%s: no frames found", o->input);
    return 2; /* not a usage error: nothing to do is a failure for a farm */
  }
  if (a->shard_count && !o->temporal) { /* (temporal: contiguous chunks, temporal.c) */
    long kept = 0;
    for (long i = 0; i < p->num_frames; ++i)
      if (cli_shard_has(p->frames[i], a->shard_index, a->shard_count))
        p->frames[kept++] = p->frames[i];
    p->num_frames = kept;
  }
  return 0;
}

static int frame_files(const cli_denoise_options* o, const plan* p, long frame,
                       cli_frame_files* files)
{
  int bad = cli_pattern_format(&p->input, frame, files->input, sizeof files->input) ||
            cli_pattern_format(&p->half_b, frame, files->half_b, sizeof files->half_b) ||
            cli_pattern_format(&p->output, frame, files->output, sizeof files->output) ||
            cli_pattern_format(&p->reference, frame, files->reference, sizeof files->reference) ||
            cli_pattern_format(&p->side_by_side, frame, files->side_by_side,
                               sizeof files->side_by_side);
  for (int i = 0; i < o->num_sources; ++i)
    bad |= cli_pattern_format(&p->sources[i], frame, files->sources[i], sizeof files->sources[i]);
  return bad;
}

/* The input a frame's output or side-by-side image would replace (NULL:
 * none): the tool never replaces an input, whose loss a denoised copy could
 * not undo (a sequence rerun would filter its own output again).  The
 * output may be the input file itself when it only gains a pass
 * (cli_denoise_frame checks that once the file is read). */
static const char* overwritten_input(const cli_denoise_options* o, const cli_frame_files* f,
                                     const char** by)
{
  const char* inputs[CLI_MAX_SOURCES + 3] = {f->input, f->reference, f->half_b};
  int count = 3;
  for (int i = 0; i < o->num_sources; ++i)
    inputs[count++] = f->sources[i];
  for (int i = 0; i < count; ++i) {
    const int output = i > 0 && cli_same_file(f->output, inputs[i]);
    *by = output ? "-o" : "--side-by-side";
    if (output || cli_same_file(f->side_by_side, inputs[i]))
      return inputs[i];
  }
  /* the picture and the output: by name too, as neither need exist yet
   * (the picture was written over a fresh output, exit 0) */
  *by = "--side-by-side";
  const int same = f->side_by_side[0] && (strcmp(f->side_by_side, f->output) == 0 ||
                                          cli_same_file(f->side_by_side, f->output));
  return same ? f->output : NULL;
}

static const char* base_name(const char* path)
{
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* 1 when a frame's output (and side-by-side picture, when asked for) is
 * newer than its input: a resumed run skips it. */
static int up_to_date(const cli_denoise_options* o, const plan* p, const cli_frame_files* files)
{
  /* (a picture that failed to be written after its output had been left
   * missing for good) */
  return p->sequence && !o->overwrite && cli_output_is_newer(files->output, files->input) &&
         (!files->half_b[0] || cli_output_is_newer(files->output, files->half_b)) &&
         (!files->side_by_side[0] || cli_output_is_newer(files->side_by_side, files->input));
}

/* --temporal: what to do with each frame (temporal.c), or NULL with a
 * message. */
static unsigned char* temporal_roles(const parsed_args* a, const plan* p, long** cuts,
                                     long* num_cuts)
{
  const cli_denoise_options* o = &a->options;
  char err[CLI_ERROR_SIZE];
  *cuts = NULL;
  *num_cuts = 0;
  if (a->cuts[0] && (*num_cuts = cli_frames_parse(a->cuts, cuts, err, sizeof err)) < 0) {
    cli_error("%s", err); /* (the message names --frames: the same syntax) */
    return NULL;
  }
  unsigned char* roles = malloc((size_t)p->num_frames);
  int* needed = malloc((size_t)p->num_frames * sizeof *needed);
  cli_frame_files* files = malloc(sizeof *files);
  if (!roles || !needed || !files) {
    cli_error("out of memory");
    free(roles);
    roles = NULL;
  }
  for (long i = 0; roles && i < p->num_frames; ++i) {
    memset(files, 0, sizeof *files);
    needed[i] = frame_files(o, p, p->frames[i], files) || !up_to_date(o, p, files);
  }
  if (roles)
    cli_temporal_roles(p->frames, p->num_frames, needed, *cuts, *num_cuts, a->shard_index,
                       a->shard_count, o->warmup, roles);
  free(needed);
  free(files);
  return roles;
}

static int run(parsed_args* a)
{
  cli_denoise_options* o = &a->options;
  plan p;
  const int planned = make_plan(a, &p);
  if (planned) {
    free(p.frames);
    return planned == 2 ? CLI_FAILED : CLI_USAGE;
  }
  long* cuts = NULL;
  long num_cuts = 0;
  unsigned char* roles = NULL;
  cli_temporal* temporal = NULL;
  long to_run = p.num_frames; /* frames the progress counts */
  if (o->temporal && p.num_frames > 0) {
    roles = temporal_roles(a, &p, &cuts, &num_cuts);
    temporal = malloc(sizeof *temporal);
    if (!roles || !temporal) {
      if (roles && !temporal)
        cli_error("out of memory");
      free(roles);
      free(temporal);
      free(cuts);
      free(p.frames);
      return roles ? CLI_FAILED : CLI_USAGE;
    }
    cli_temporal_init(temporal);
    to_run = 0;
    for (long i = 0; i < p.num_frames; ++i)
      to_run += roles[i] != CLI_ROLE_SKIP;
  }
  if (p.num_frames == 0) {
    if (!o->quiet)
      cli_error("shard %d/%d: no frames to denoise", a->shard_index, a->shard_count);
    free(p.frames);
    return CLI_OK;
  }
  OIDNDevice device = make_device(a);
  if (!device) {
    free(p.frames);
    free(roles);
    free(temporal);
    free(cuts);
    return CLI_FAILED;
  }
  cli_frame_files* files = malloc(sizeof *files);
  cli_progress progress;
  cli_progress_init(&progress, o->quiet, (int)to_run);
  long done = 0, skipped = 0, failed = 0, warmed = 0, outside = 0, position = 0;
  int interrupted = 0;
  for (long i = 0; files && i < p.num_frames && !interrupted; ++i) {
    if (cli_interrupted()) {
      interrupted = 1;
      break;
    }
    memset(files, 0, sizeof *files);
    if (temporal && roles[i] == CLI_ROLE_SKIP) {
      /* the history breaks here: the next frame run starts a new one */
      temporal->broken = 1;
      long first = 0, end = p.num_frames;
      if (a->shard_count) {
        first = (long)((long long)p.num_frames * a->shard_index / a->shard_count);
        end = (long)((long long)p.num_frames * (a->shard_index + 1) / a->shard_count);
      }
      if (i < first || i >= end) {
        ++outside; /* another shard's */
        continue;
      }
      ++skipped;
      if (!progress.tty && !frame_files(o, &p, p.frames[i], files))
        cli_progress_message(&progress, 0, "%s: up to date, skipped", files->output);
      continue;
    }
    if (frame_files(o, &p, p.frames[i], files)) {
      cli_progress_message(&progress, 1, "frame %ld: file name too long", p.frames[i]);
      ++failed;
      continue;
    }
    if (cli_same_file(files->input, files->half_b)) {
      cli_progress_message(&progress, 1,
                           "%s: --half-b names the input itself: the halves are two renders "
                           "with different seeds",
                           files->input);
      ++failed;
      continue;
    }
    const char* by = NULL;
    const char* overwritten = overwritten_input(o, files, &by);
    if (overwritten) {
      cli_progress_message(&progress, 1, "%s: %s would replace it: choose another file",
                           overwritten, by);
      ++failed;
      continue;
    }
    /* up to date: the output, and the side-by-side picture when one is
     * asked for (temporal: roles say it) */
    if (!temporal && up_to_date(o, &p, files)) {
      ++skipped;
      if (!progress.tty)
        cli_progress_message(&progress, 0, "%s: up to date, skipped", files->output);
      continue;
    }
    if (temporal) {
      temporal->frame = p.frames[i];
      temporal->warmup = roles[i] == CLI_ROLE_WARMUP;
      temporal->reset = cli_temporal_starts_shot(temporal, p.frames[i], cuts, num_cuts);
    }
    cli_progress_frame(&progress, temporal ? position++ : i, base_name(files->input));
    char err[CLI_ERROR_SIZE];
    const int status = cli_denoise_frame(o, files, device, temporal, &progress, err, sizeof err);
    if (status == CLI_OK) {
      if (temporal && temporal->warmup)
        ++warmed;
      else
        ++done;
      if (temporal) {
        temporal->last_frame = p.frames[i];
        temporal->broken = 0;
      }
    } else if (status == CLI_INTERRUPTED) {
      interrupted = 1;
    } else {
      ++failed;
      if (temporal)
        temporal->broken = 1;
      cli_progress_message(&progress, 1, "%s", err);
    }
  }
  cli_progress_finish(&progress);
  if (!files) {
    cli_error("out of memory");
    ++failed;
  }
  if (interrupted)
    cli_error("interrupted: no file was left half-written");
  if (p.sequence && (!o->quiet || failed || interrupted)) {
    const long frames = p.num_frames - outside;
    const long left = frames - done - skipped - failed - warmed;
    char rest[64] = "", warm[64] = "";
    if (left > 0)
      snprintf(rest, sizeof rest, ", %ld not done", left);
    if (temporal)
      snprintf(warm, sizeof warm, ", %ld run for the history only", warmed);
    cli_error("%ld frame%s: %ld denoised, %ld up to date (skipped)%s, %ld failed%s", frames,
              frames == 1 ? "" : "s", done, skipped, warm, failed, rest);
  }
  if (temporal)
    cli_temporal_release(temporal);
  free(temporal);
  free(roles);
  free(cuts);
  free(files);
  free(p.frames);
  oidnReleaseDevice(device);
  return interrupted ? CLI_INTERRUPTED : failed ? CLI_FAILED : CLI_OK;
}

int cli_denoise_main(int argc, char** argv)
{
  parsed_args* a = malloc(sizeof *a);
  if (!a) {
    cli_error("out of memory");
    return CLI_FAILED;
  }
  int status = CLI_OK;
  if (parse(a, argc, argv)) {
    status = CLI_USAGE;
  } else if (a->help) {
    fputs(usage_text, stdout);
  } else if (a->list_devices) {
    list_devices();
  } else if (!a->options.input[0]) {
    cli_error("no input (lull denoise --help)");
    status = CLI_USAGE;
  } else if (check_filter(a)) {
    status = CLI_USAGE;
  } else if (!a->options.output[0] &&
             default_output(a->options.input, a->options.output, sizeof a->options.output)) {
    cli_error("%s: name too long", a->options.input);
    status = CLI_USAGE;
  } else {
    status = run(a);
  }
  free(a);
  return status;
}
