/* Image files with named passes: Blender's multilayer EXR, single-layer EXR,
 * PFM, and whatever OpenImageIO reads (PNG, HDR, TIFF, ...).
 *
 * Channels named "Layer.Pass.Channel" (Blender: "ViewLayer.Combined.R",
 * "ViewLayer.Denoising Albedo.G") are grouped into passes; "Pass.Channel"
 * gives a pass with an empty layer; bare "R", "G", "B", "A" (or "Y", "Z")
 * give one pass with an empty name.  Pixel data is float, interleaved.
 *
 * Writing is atomic: the file is written next to its destination under a
 * temporary name and renamed over it only when complete, so a failed write
 * never truncates or replaces an existing file.
 *
 * Used by the command-line tool, the Python module and the tests.  Built
 * when OpenImageIO is found (PFM works without it). */
#pragma once

#include <stddef.h>

#if defined(__cplusplus)
extern "C" {
#endif

enum { LULL_IO_NAME_SIZE = 128, LULL_IO_MAX_CHANNELS = 4 };

typedef struct lull_io_pass
{
  char layer[LULL_IO_NAME_SIZE];   /* "ViewLayer", or "" */
  char name[LULL_IO_NAME_SIZE];    /* "Combined", "Denoising Albedo", or "" */
  int channels;                    /* 1 to 4 */
  char channel_names[LULL_IO_MAX_CHANNELS][32]; /* "R", "G", "B", "A" / "X", "Y", "Z" */
  int half;                        /* stored as half in the file (kept on rewrite) */
  float* data;                     /* width * height * channels floats, owned */
} lull_io_pass;

typedef struct lull_io_image
{
  int width, height;
  int num_passes;
  lull_io_pass* passes;            /* owned */
  void* metadata;                  /* file attributes kept on rewrite (opaque, owned) */
} lull_io_image;

/* Returns 0 on success; otherwise fills err with a one-line message naming
 * the file and returns non-zero, leaving *image empty. */
int lull_io_read(const char* path, lull_io_image* image, char* err, size_t err_size);

/* Writes all passes (EXR: multilayer when any pass has a name or layer;
 * PFM: one pass of 1 or 3 channels; PNG/JPEG: one pass, clamped 8-bit sRGB
 * when srgb is non-zero, else linear).  Atomic (see above). */
int lull_io_write(const char* path, const lull_io_image* image, int srgb, char* err,
                  size_t err_size);

/* The pass with this name (and layer, unless layer is NULL), or NULL. */
lull_io_pass* lull_io_find_pass(const lull_io_image* image, const char* layer, const char* name);

/* Adds a pass (copying data); returns the new pass or NULL when out of
 * memory or when a pass of that layer and name exists. */
lull_io_pass* lull_io_add_pass(lull_io_image* image, const char* layer, const char* name,
                               int channels, const char* const* channel_names,
                               const float* data);

void lull_io_free(lull_io_image* image);

#if defined(__cplusplus)
}
#endif
