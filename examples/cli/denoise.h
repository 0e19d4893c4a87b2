/* `lull denoise`: its options, and denoising one frame. */
#pragma once

#include <limits.h>

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
  char input[CLI_PATH_SIZE];   /* file or pattern; half A when half_b is given */
  char half_b[CLI_PATH_SIZE];  /* --half-b: file or pattern of half B, or "" */
  char output[CLI_PATH_SIZE];  /* file or pattern; "" = default */
  char filter[64];
  int filter_given;            /* -f named it (else the default: RT, or Regression for halves) */
  cli_param params[CLI_MAX_PARAMS];
  int num_params;
  /* The filter of targets that come in halves (the same as `filter` unless
   * halves found in a file pick Regression: the filter was not named and
   * the halves were not known from the command line), its parameters, and
   * why they do not fit it ("" when they do). */
  char halves_filter[64];
  cli_param halves_params[CLI_MAX_PARAMS];
  int num_halves_params;
  char halves_params_error[CLI_ERROR_SIZE];
  char half_pass[2][LULL_IO_NAME_SIZE]; /* --pass colorA=/colorB=: the halves' passes, or "" */
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
  int temporal;  /* --temporal: frames in order, with history (temporal.c) */
  int warmup;    /* --warmup: frames run before the first one denoised, in its shot */
} cli_denoise_options;

/* The files of one frame (patterns expanded). */
typedef struct cli_frame_files
{
  char input[CLI_PATH_SIZE];
  char half_b[CLI_PATH_SIZE]; /* "" unless --half-b */
  char output[CLI_PATH_SIZE];
  char reference[CLI_PATH_SIZE];
  char side_by_side[CLI_PATH_SIZE];
  char sources[CLI_MAX_SOURCES][CLI_PATH_SIZE]; /* options->sources[i].file expanded */
} cli_frame_files;

/* -- temporal.c: --temporal ------------------------------------------------------ */

/* What a run does with a frame of a temporal sequence. */
enum { CLI_ROLE_SKIP, CLI_ROLE_WARMUP, CLI_ROLE_DENOISE };
#define CLI_NO_FRAME LONG_MIN

/* The state a temporal run keeps from frame to frame. */
typedef struct cli_temporal
{
  OIDNFilter filters[CLI_MAX_TARGETS]; /* one per layer and view */
  char layers[CLI_MAX_TARGETS][LULL_IO_NAME_SIZE];
  char views[CLI_MAX_TARGETS][LULL_IO_NAME_SIZE];
  int count;
  long frame;       /* the frame being run */
  int reset;        /* it starts a new history */
  int warmup;       /* it only feeds the history: nothing is written */
  long last_frame;  /* the last frame run (CLI_NO_FRAME: none yet) */
  int broken;       /* a frame failed or was skipped since */
  int width, height; /* the last frame's size */
  char camera[256]; /* the last frame's "Camera" metadata ("" none) */
} cli_temporal;

void cli_temporal_init(cli_temporal* t);
void cli_temporal_release(cli_temporal* t);
/* roles[i] for frames[i] (ascending, count of them): the I-th of N
 * contiguous chunks (shard_count 0: all) keeps the frames that are
 * needed[i] to DENOISE, and up to `warmup` frames before each of those in
 * its shot (no gap, no --cut in between) become WARMUP. */
void cli_temporal_roles(const long* frames, long count, const int* needed, const long* cuts,
                        long num_cuts, int shard_index, int shard_count, int warmup,
                        unsigned char* roles);
/* 1 when frame must start a new history: the first, after a gap, a
 * failure or a skipped frame, or a --cut. */
int cli_temporal_starts_shot(const cli_temporal* t, long frame, const long* cuts, long num_cuts);
/* 1 when the file names another camera than the last frame, both naming
 * one (and records this one's). */
int cli_temporal_camera_changed(cli_temporal* t, const lull_io_image* image);
/* The filter of a layer and view (created on first use, kept), or NULL. */
OIDNFilter cli_temporal_filter(cli_temporal* t, OIDNDevice device, const char* type,
                               const char* layer, const char* view);

/* Denoises every target layer of one input file and writes the output
 * (temporal: NULL, or the state of --temporal, whose warm-up frames write
 * nothing).  Returns CLI_OK, CLI_FAILED (err filled; the output is
 * untouched) or CLI_INTERRUPTED. */
int cli_denoise_frame(const cli_denoise_options* options, const cli_frame_files* files,
                      OIDNDevice device, cli_temporal* temporal, cli_progress* progress,
                      char* err, size_t err_size);
