/* Helpers of the image-file and command-line tests: scratch folders,
 * running the tool, a synthetic render with a known clean image, and
 * file checks. */
#pragma once

#include <stddef.h>

#include "lull_io.h"

/* A fresh (emptied) folder LULL_TEST_BINARY_DIR/cli_scratch/<name>. */
int cli_scratch(const char* name, char* out, size_t size);

/* 0 when the tool was built (tool non-empty); else prints why the test is
 * skipped and returns 77, ctest's "skipped". */
int cli_tool_built(const char* tool);
/* A file read with lull_io (an empty image, and the error printed, when it
 * cannot be read). */
lull_io_image cli_read(const char* path);

/* Runs the tool with args (NULL-terminated, without argv[0]); its stdout and
 * stderr go to <dir>/stdout.txt and <dir>/stderr.txt.  Returns the exit
 * status, 128 + signal when killed, -1 when it could not start. */
int cli_run(const char* tool, const char* dir, const char* const* args);
/* Starts the tool without waiting; returns its pid or -1. */
int cli_start(const char* tool, const char* dir, const char* const* args);
/* Waits for a started tool; returns as cli_run. */
int cli_wait(int pid);
/* cli_wait, with *signal the signal that ended the tool (0: it exited). */
int cli_wait_signal(int pid, int* signal);
/* Runs the tool and checks its exit status: on a mismatch a failed check
 * naming file:line, with the tool's stderr.  Returns the status. */
int cli_expect(const char* tool, const char* dir, int status, const char* const* args,
               const char* file, int line);
/* 1 when <dir>/<stream> contains text (else prints what it holds). */
int cli_said(const char* dir, const char* stream, const char* text);
/* dir/name into out. */
void cli_path(char* out, size_t size, const char* dir, const char* name);
/* The contents of <dir>/<name> (malloc'ed, "" when missing). */
char* cli_slurp(const char* dir, const char* name);
/* Lines in text. */
int cli_count_lines(const char* text);

/* A synthetic render: two walls and a box, smooth lighting, known clean
 * colour and noisy colour, noise-free guides. */
typedef struct cli_scene
{
  int width, height;
  float* clean;    /* RGB */
  float* noisy;    /* RGB */
  float* alpha;    /* 1, with a few 0.5 */
  float* albedo;   /* RGB */
  float* normal;   /* XYZ */
  float* depth;    /* Z */
  float* position; /* XYZ */
} cli_scene;

int cli_scene_make(cli_scene* scene, int width, int height, unsigned seed, float noise);
void cli_scene_free(cli_scene* scene);

/* The scene as one plain-image file through lull_io (PFM, PNG, EXR): the
 * noisy colour (what = "noisy"), or "clean", "albedo", "normal". */
int cli_scene_write_plain(const cli_scene* scene, const char* what, const char* path);

/* A Blender-style multilayer EXR written with OpenImageIO directly:
 * layers[i].Combined RGBA (half), Denoising Albedo (half), Denoising Normal,
 * Denoising Depth, Position (float), Emit (half), and "Noisy Image" when
 * noisy_image_pass (then Combined holds the clean colour).  Returns 0 or
 * non-zero (also when lull was built without OpenImageIO). */
int cli_scene_write_blender(const cli_scene* scene, const char* path, const char* const* layers,
                            int num_layers, int noisy_image_pass);

/* relMSE (core/metrics.h) of the RGB of a pass against packed RGB. */
double cli_pass_rel_mse(const lull_io_pass* pass, const float* reference, int width, int height);

int cli_file_exists(const char* path);
/* 1 when both files have the same bytes. */
int cli_same_bytes(const char* a, const char* b);
int cli_copy_file(const char* from, const char* to);
/* Files in dir whose name looks like lull_io's temporaries (".*.lull-*.tmp"). */
int cli_temp_files(const char* dir);
/* Sets a file's modification time to now + offset seconds. */
int cli_touch(const char* path, double offset);
/* Modification time in nanoseconds, -1 when missing. */
long long cli_mtime(const char* path);
