/* The command-line tool `lull`: shared types of its parts.
 *
 * The tool denoises through the public API only (OpenImageDenoise/oidn.h
 * and lull.h, as any program using lull would), reads and writes files
 * with lull_io, and computes image metrics with the core's metrics.h. */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include <lull.h>

#include "lull_io.h"

/* Exit statuses. */
enum
{
  CLI_OK = 0,
  CLI_FAILED = 1,       /* a file or a frame failed */
  CLI_USAGE = 2,        /* bad command line */
  CLI_INTERRUPTED = 130 /* Ctrl-C / SIGTERM: stopped between or inside frames */
};

enum
{
  CLI_PATH_SIZE = 4096,
  CLI_MAX_PARAMS = 64,
  CLI_MAX_SOURCES = 16,
  CLI_MAX_TARGETS = 64,
  CLI_ERROR_SIZE = 1024
};

/* -- launch.c ------------------------------------------------------------------- */

/* lull blender [--blender PATH] [ARGS...] and lull run COMMAND [ARGS...]:
 * the program with lull's libOpenImageDenoise.so.2 first on its library
 * path; they return its exit status. */
int cli_blender_main(int argc, char** argv);
int cli_run_main(int argc, char** argv);

/* -- signals.c ------------------------------------------------------------------ */

/* Blocks SIGINT, SIGTERM and SIGHUP for the whole process (call first, before
 * any thread exists): a signal then waits until cli_interrupted() sees it,
 * so a write is never cut in half and the progress monitor can cancel the
 * filter cleanly. */
void cli_block_signals(void);
/* 1 when SIGINT, SIGTERM or SIGHUP is pending. */
int cli_interrupted(void);
/* After a command stopped for a pending signal and cleaned up: lets that
 * signal end the process as it would have (a shell running lull in a
 * loop stops the loop only for a child that died of SIGINT, not for one
 * that exited with 130).  Returns only when no such signal is pending. */
void cli_end_by_signal(void);

/* -- progress.c ----------------------------------------------------------------- */

typedef struct cli_progress
{
  int tty;         /* a bar redrawn in place on stderr; else plain lines */
  int quiet;
  int total;       /* frames */
  int index;       /* frames started */
  char label[160]; /* what the current frame is */
  double fraction; /* progress inside the current frame */
  double last_draw;
  int drawn;       /* a bar is on the screen */
} cli_progress;

void cli_progress_init(cli_progress* progress, int quiet, int total);
/* Frame `position` (0-based, of the total) starts: the frames before it,
 * skipped and failed ones too, count as done. */
void cli_progress_frame(cli_progress* progress, long position, const char* label);
void cli_progress_update(cli_progress* progress, double fraction);
/* Prints a line (message + newline) above the bar; errors print even when quiet. */
void cli_progress_message(cli_progress* progress, int is_error, const char* format, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;
void cli_progress_finish(cli_progress* progress);

/* A one-line error on stderr, "lull: message". */
void cli_error(const char* format, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 1, 2)))
#endif
  ;

/* The value of option `flag`: inline_value (after '='), else the next
 * argument (advancing *i); NULL after an error message when there is none.
 * Empty values are refused (but for --layer, whose unnamed layer is ""):
 * an unset variable in a script ("--alb $ALB") would otherwise pick a
 * default silently, such as the colour image as its own guide. */
const char* cli_option_value(const char* flag, const char* inline_value, int argc, char** argv,
                             int* i);

/* An option that takes a value, for cli_parse_args. */
typedef struct cli_option
{
  const char* name;   /* "--pass" */
  const char* alias;  /* "-p", or NULL */
  const char** value; /* where the value goes */
} cli_option;

/* Parses a command's arguments (argv[0] is the command): the options
 * (each with its value, through cli_option_value), -h/--help (prints
 * usage_text), "--" (every later argument is a file), and up to max_files
 * files into files[], *count of them.  Returns -1 to go on, else the exit
 * status: CLI_OK after the help, CLI_USAGE after an error message. */
int cli_parse_args(int argc, char** argv, const cli_option* options, int num_options,
                   const char** files, int max_files, int* count, const char* command,
                   const char* usage_text);

/* s with its control characters (newlines, escape sequences) as '?', in
 * place: names and attributes read from a file reach the terminal. */
char* cli_printable(char* s);

/* -- params.c -------------------------------------------------------------------- */

/* A filter parameter from the command line, before typing. */
typedef struct cli_param_text
{
  char name[64];
  char value[64];
  char flag[48]; /* the option it came from, for messages ("--param", "--srgb") */
  int optional;  /* from an OIDN-style flag: ignored with a warning when the filter lacks it */
} cli_param_text;

/* A typed parameter, ready for oidnSetFilter{Bool,Int,Float}. */
typedef struct cli_param
{
  char name[64];
  LullParamType type;
  double value;
} cli_param;

/* Types every parameter through lullGetFilterParamInfo; returns 0, or
 * non-zero with a message in err (unknown name, not a number, out of
 * range, read-only).  Optional ones the filter lacks are dropped with a
 * warning on stderr unless quiet. */
int cli_params_resolve(const char* filter, const cli_param_text* text, int count, cli_param* out,
                       int* out_count, int quiet, char* err, size_t err_size);
/* The value of a parameter of the filter: the one given, or its default.
 * Returns 0 when the filter has no such parameter. */
int cli_param_value(const char* filter, const cli_param* params, int count, const char* name,
                    double* value);
/* "bool", "int" or "float". */
const char* cli_param_type_name(LullParamType type);
/* 1 when the filter type has a parameter of this name. */
int cli_filter_has_param(const char* filter, const char* name);
/* 1 when the filter type accepts an image of this name. */
int cli_filter_has_image(const char* filter, const char* name);

/* -- passes.c -------------------------------------------------------------------- */

/* What to denoise in a file: one layer (and view) and its colour pass. */
typedef struct cli_target
{
  char layer[LULL_IO_NAME_SIZE];
  char view[LULL_IO_NAME_SIZE];
  const lull_io_pass* color;   /* half A when color_b is set */
  const lull_io_pass* color_b; /* half B of the same file, or NULL (cli_color_halves) */
} cli_target;

/* The colour pass of a layer and view: "Noisy Image" when present, else
 * "Combined", else the unnamed pass; NULL when none. */
const lull_io_pass* cli_color_pass(const lull_io_image* image, const char* layer,
                                   const char* view);
/* Halves in one file: a pass named for half A or B of a colour or guide
 * pass is its name with " A" or " B" appended ("Combined A", "Combined B",
 * "Denoising Albedo A", ...), in the layer of the pass it stands for.
 * The name of half `half` (0: A, 1: B) of pass `name` into out; non-zero
 * when it does not fit. */
int cli_half_name(const char* name, int half, char* out, size_t size);
/* The two halves of a layer's and view's colour: the passes names[0] and
 * names[1] when they are non-empty ("Layer.Pass" accepted), else "Noisy
 * Image A" and "Noisy Image B", else "Combined A" and "Combined B".
 * Returns 1 (a, b set) when both exist, 0 when neither, -1 when one half
 * has no partner (*a or *b says which exists). */
int cli_color_halves(const lull_io_image* image, const char* layer, const char* view,
                     const char* const names[2], const lull_io_pass** a, const lull_io_pass** b);
/* The colour passes of a file (one per layer and view; only `layer` when
 * not NULL, "" being the unnamed layer, and only `view` when not NULL or
 * empty; `pass` overrides the name looked for).  halves: NULL, or the
 * names cli_color_halves looks for: a layer with both halves gets a target
 * of halves (color_b set), which wins over its single colour pass; a half
 * without its partner is an error.
 * Returns the number found (0 with err filled when none). */
int cli_find_targets(const lull_io_image* image, const char* path, const char* layer,
                     const char* view, const char* pass, const char* const* halves,
                     cli_target* targets, int max, char* err, size_t err_size);
/* The pass Blender writes for a filter image in a layer and view, or NULL:
 * "albedo": "Denoising Albedo" (else "DiffCol"), "normal": "Denoising
 * Normal" (else "Normal"), "depth": "Denoising Depth" (else "Depth"),
 * "position": "Position", "motion": "Vector". */
const lull_io_pass* cli_guide_pass(const lull_io_image* image, const char* image_name,
                                   const char* layer, const char* view);
/* Half `half` (0: A, 1: B) of a guide in one file: the first of Blender's
 * passes for the image (as cli_guide_pass) whose half exists ("Denoising
 * Albedo A"), or NULL. */
const lull_io_pass* cli_guide_half(const lull_io_image* image, const char* image_name,
                                   const char* layer, const char* view, int half);
/* The pass of a separate file that holds a filter image for a target's
 * layer and view: the guide pass by Blender's name, else the colour pass,
 * each of that layer and view where the file has them, else the only
 * pass; NULL when the file has several and none of these. */
const lull_io_pass* cli_file_pass(const lull_io_image* image, const char* image_name,
                                  const char* layer, const char* view);
/* A pass by name in a layer and view ("Layer.Pass" also accepted). */
const lull_io_pass* cli_named_pass(const lull_io_image* image, const char* name,
                                   const char* layer, const char* view);

/* Channels of a pass: the colour channels (up to 3, all but "A") and the
 * alpha channel (-1 when none).  Returns the number of colour channels. */
int cli_pass_channels(const lull_io_pass* pass, int color[3], int* alpha);

/* -- sequence.c ------------------------------------------------------------------ */

/* A file name with a frame number: "####" (as many digits as #, at least),
 * "%04d" or "%d"; at most one per name. */
typedef struct cli_pattern
{
  char prefix[CLI_PATH_SIZE];
  char suffix[CLI_PATH_SIZE];
  int width;      /* zero padding */
  int is_pattern; /* 0: a plain file name (prefix holds it) */
} cli_pattern;

/* Parses a name; returns non-zero (err filled) when it holds two frame
 * placeholders or the placeholder is in a directory name. */
int cli_pattern_parse(const char* name, cli_pattern* pattern, char* err, size_t err_size);
/* The file name of a frame (the name itself for a plain file). */
int cli_pattern_format(const cli_pattern* pattern, long frame, char* out, size_t size);
/* Frames for which a file matching the pattern exists, ascending; returns
 * the count (frames is malloc'ed) or -1 with err. */
long cli_pattern_scan(const cli_pattern* pattern, long** frames, char* err, size_t err_size);
/* Frames of a range list: "1-100", "7", "1-10,20,30-40"; returns the count
 * (malloc'ed, ascending, unique) or -1 with err. */
long cli_frames_parse(const char* text, long** frames, char* err, size_t err_size);
/* 1 when frame belongs to shard index of count (frame mod count). */
int cli_shard_has(long frame, int index, int count);
/* lull_io_write into folders made for path when missing, and removed
 * again when the write fails (a failed run leaves no trace); what every
 * file the tool writes goes through. */
int cli_write_file(const char* path, const lull_io_image* image, int srgb, char* err,
                   size_t err_size);
/* 1 when output exists and was modified after input (so resuming skips it). */
int cli_output_is_newer(const char* output, const char* input);
/* 1 when both names exist and are the same file (links included): writing
 * the one would replace the other. */
int cli_same_file(const char* a, const char* b);

/* -- images.c: colour, metrics and side-by-side PNGs --------------------------- */

/* The colour of a pass as packed RGB floats (grey replicated, alpha
 * dropped); malloc'ed, NULL when out of memory. */
float* cli_pass_rgb(const lull_io_pass* pass, int width, int height);
/* Writes RGB panels of width x height side by side as one PNG; encoded[i]
 * says panel i already holds display values in [0, 1] (else it is
 * tone-mapped: clamped and sRGB-encoded, the way the PSNR and SSIM of
 * metrics.h see it), through cli_write_file.  Returns 0 or non-zero with
 * err. */
int cli_write_panels(const char* path, const float* const* panels, const int* encoded, int count,
                     int width, int height, char* err, size_t err_size);
/* An error heat map (RGB, display-encoded) of image against reference:
 * per-pixel relative squared error (the relMSE of metrics.h, Rousselle et
 * al. 2011) on a log scale from 1e-4 (black) to 1 (white).  Returns
 * malloc'ed width * height * 3 floats, NULL when out of memory. */
float* cli_heat_map(const float* image, const float* reference, int width, int height);
/* Prints "label  relMSE x  PSNR y dB  SSIM z" for RGB image against
 * reference; 0, or 1 (printing nothing) when out of memory. */
int cli_print_metrics(FILE* out, const char* label, const float* image, const float* reference,
                      int width, int height);
/* Display-encoded values (8- and 16-bit files: lull_io_file_info.integer)
 * to linear, in place: the metrics take linear values (relMSE compares
 * them; PSNR and SSIM encode them), so encoded ones were measured as if
 * they were linear and encoded twice. */
void cli_decode_display(float* rgb, size_t count);

/* -- commands -------------------------------------------------------------------- */

int cli_denoise_main(int argc, char** argv);
int cli_compare_main(int argc, char** argv);
int cli_info_main(int argc, char** argv);
int cli_extract_main(int argc, char** argv);
int cli_filters_main(int argc, char** argv);
