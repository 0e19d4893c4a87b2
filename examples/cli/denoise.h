/* `lull denoise`: its options, and denoising one frame. */
#pragma once

#include "cli.h"

/* Where a filter image comes from, when not from Blender's pass names. */
typedef struct cli_source
{
  char image[32];                /* filter image: "albedo", "gradientX", ... */
  char file[CLI_PATH_SIZE];      /* a file (or pattern) holding it, or "" */
  char pass[LULL_IO_NAME_SIZE];  /* else a pass of the input; "none": leave unset */
} cli_source;

typedef struct cli_denoise_options
{
  char input[CLI_PATH_SIZE];   /* file or pattern */
  char output[CLI_PATH_SIZE];  /* file or pattern; "" = default */
  char filter[64];
  cli_param params[CLI_MAX_PARAMS];
  int num_params;
  cli_source sources[CLI_MAX_SOURCES];
  int num_sources;
  char layer[LULL_IO_NAME_SIZE];       /* only this layer, when layer_given */
  int layer_given;                     /* --layer given ("" is the unnamed layer) */
  char view[LULL_IO_NAME_SIZE];        /* only this view of a stereo file ("" = all) */
  char color_pass[LULL_IO_NAME_SIZE];  /* overrides Noisy Image / Combined */
  char output_pass[LULL_IO_NAME_SIZE]; /* "Denoised" */
  char reference[CLI_PATH_SIZE];       /* file or pattern, for metrics */
  char side_by_side[CLI_PATH_SIZE];    /* PNG (or pattern) */
  int hdr_mode;                        /* -1: from the file, 0: --ldr, 1: --hdr */
  int half;                            /* -t half: half-float buffers */
  int inplace;                         /* output buffer = colour buffer */
  int repeat;                          /* -n: run the filter this many times (timing) */
  int quiet;
  int overwrite; /* re-denoise up-to-date frames; replace an input pass named output_pass */
} cli_denoise_options;

/* The files of one frame (patterns expanded). */
typedef struct cli_frame_files
{
  char input[CLI_PATH_SIZE];
  char output[CLI_PATH_SIZE];
  char reference[CLI_PATH_SIZE];
  char side_by_side[CLI_PATH_SIZE];
  char sources[CLI_MAX_SOURCES][CLI_PATH_SIZE]; /* options->sources[i].file expanded */
} cli_frame_files;

/* Denoises every target layer of one input file and writes the output.
 * Returns CLI_OK, CLI_FAILED (err filled; the output is untouched) or
 * CLI_INTERRUPTED. */
int cli_denoise_frame(const cli_denoise_options* options, const cli_frame_files* files,
                      OIDNDevice device, cli_progress* progress, char* err, size_t err_size);
