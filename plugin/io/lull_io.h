/* Image files with named passes: Blender's multilayer EXR, single-layer EXR,
 * PFM, and whatever OpenImageIO reads (PNG, HDR, TIFF, JPEG, ...).
 *
 * Channels named "Layer.Pass.Channel" (Blender: "ViewLayer.Combined.R",
 * "ViewLayer.Denoising Albedo.G") are grouped into passes; "Pass.Channel"
 * gives a pass with an empty layer; bare "R", "G", "B", "A" (or "Y", "Z")
 * give one pass with an empty name.  Multiview files ("Layer.Pass.View.
 * Channel", the views listed in the file's "multiView" attribute) give one
 * pass per view, told apart by `view`.  Channel names that fit none of
 * these (empty components, a fifth channel of a pass) become one-channel
 * passes named after the whole channel, so every channel survives a read
 * and a write under its exact name.  Pixel data is float, interleaved;
 * files that stored integers (8/16-bit PNG, JPEG, TIFF) give their
 * display-encoded values scaled to [0, 1] (lull_io_get_file_info says so).
 *
 * Multi-part EXR: the parts (all of one size) are read together; channels
 * of a part named "P" that carry no layer read as "P.channel", and those of
 * a part with a "view" attribute (Blender's stereo renders: a part per pass
 * and view, "ViewLayer.Combined-left") belong to that view.  Writing an
 * image read from a multi-part file keeps each channel in its part under
 * its name; new passes go to new parts (of their view, if any).
 *
 * Writing is atomic: the file is written next to its destination under a
 * temporary name and renamed over it only when complete, so a failed write
 * never truncates or replaces an existing file.  Rewriting an image read
 * from a file keeps the file's attributes (EXR header, compression, data
 * window) and each pass's half/float storage, so adding a pass to a
 * Blender render leaves every original channel bit-identical.
 *
 * Sizes are validated: 1 to 65536 pixels per side, at most 1024 channels.
 * Corrupt and truncated files give an error message, never a crash.
 *
 * Used by the command-line tool, the Python module and the tests.  Without
 * OpenImageIO (LULL_IO_HAS_OIIO undefined) only PFM is read and written;
 * other formats give an error saying so. */
#pragma once

#include <stddef.h>

#if defined(__cplusplus)
extern "C" {
#endif

enum
{
  LULL_IO_NAME_SIZE = 128,
  LULL_IO_MAX_CHANNELS = 4,
  LULL_IO_MAX_SIZE = 65536,        /* pixels per side */
  LULL_IO_MAX_FILE_CHANNELS = 1024 /* channels in one file */
};

typedef struct lull_io_pass
{
  char layer[LULL_IO_NAME_SIZE];   /* "ViewLayer", or "" */
  char name[LULL_IO_NAME_SIZE];    /* "Combined", "Denoising Albedo", or "" */
  int channels;                    /* 1 to 4 */
  char channel_names[LULL_IO_MAX_CHANNELS][32]; /* "R", "G", "B", "A" / "X", "Y", "Z" */
  int half;                        /* stored as half in the file (kept on rewrite) */
  float* data;                     /* width * height * channels floats, owned */
  char view[LULL_IO_NAME_SIZE];    /* multiview files: "left", "right"; else "" */
  int display;                     /* read from an 8/16-bit file: display-encoded values */
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

/* What the values written are (lull_io_write's `srgb`): 8/16-bit formats
 * hold display-encoded values, float ones linear values. */
enum
{
  LULL_IO_VALUES_AS_READ = 0, /* as the image's own file had them: display-encoded when it
                                 stored 8/16-bit integers, else linear */
  LULL_IO_VALUES_LINEAR = 1,  /* linear: sRGB-encoded for 8/16-bit formats */
  LULL_IO_VALUES_DISPLAY = 2, /* display-encoded: decoded to linear for float formats */
};

/* Writes all passes (EXR: multilayer when any pass has a name or layer;
 * PFM: one pass of 1 or 3 channels, or the RGB of a 4-channel pass;
 * PNG/JPEG/other 8/16-bit formats: one pass, clamped to [0, 1]).  srgb
 * (LULL_IO_VALUES_*) says what the values are: linear ones are sRGB-encoded
 * for 8/16-bit formats, display-encoded ones decoded to linear for float
 * formats (EXR, PFM, HDR, float TIFF), never the alpha ("A").  Atomic (see
 * above).  The format comes from the path's extension. */
int lull_io_write(const char* path, const lull_io_image* image, int srgb, char* err,
                  size_t err_size);

/* A display-encoded value (what an 8/16-bit file holds), clamped to [0, 1]
 * (NaN: 0), as linear: what lull_io_write does for float formats. */
float lull_io_display_to_linear(float v);

/* The pass with this name (and layer, unless layer is NULL), or NULL.  In
 * multiview files the first view's pass (see lull_io_find_pass_view). */
lull_io_pass* lull_io_find_pass(const lull_io_image* image, const char* layer, const char* name);

/* The pass with this layer, name and view (NULL layer or view: any). */
lull_io_pass* lull_io_find_pass_view(const lull_io_image* image, const char* layer,
                                     const char* name, const char* view);

/* The image's layer names (views: its view names), each once in the order
 * of its passes, empty names left out, separated by ", " and in single
 * quotes when quoted, into out (the list ends at the last whole name that
 * fits); returns the bytes used (0: none, out is ""). */
size_t lull_io_list_names(const lull_io_image* image, int views, int quoted, char* out,
                          size_t size);

/* Adds a pass (copying data; NULL data gives zeros); returns the new pass or
 * NULL when out of memory, when the arguments are invalid (channels not in
 * 1..4, names too long, a pass name with a dot, no size set) or when a pass
 * of that layer and name (and no view) exists.  The image must have its width and height set. */
lull_io_pass* lull_io_add_pass(lull_io_image* image, const char* layer, const char* name,
                               int channels, const char* const* channel_names,
                               const float* data);

/* lull_io_add_pass for one view of a multiview image. */
lull_io_pass* lull_io_add_pass_view(lull_io_image* image, const char* layer, const char* name,
                                    const char* view, int channels,
                                    const char* const* channel_names, const float* data);

/* Frees the passes and the metadata and leaves *image empty (all zero). */
void lull_io_free(lull_io_image* image);

/* The full channel name a pass channel is written under
 * ("ViewLayer.Combined.R", "ViewLayer.Combined.left.R", "R"); returns 0,
 * or non-zero when it does not fit in size. */
int lull_io_channel_full_name(const lull_io_pass* pass, int channel, char* out, size_t size);

/* -- what the file was ------------------------------------------------------- */

typedef struct lull_io_file_info
{
  char format[32]; /* "openexr", "pfm", "png", ...; "" for an image made in memory */
  int parts;       /* EXR parts (subimages) read; 1 for most files */
  int integer;     /* pixels were stored as integers: display-encoded values in [0, 1] */
  int bits;        /* bits per channel of the widest channel */
  int attributes;  /* number of metadata attributes (lull_io_get_attribute) */
  int mip_levels;  /* resolution levels of the most in a part (1: none; only level 0 is read) */
} lull_io_file_info;

void lull_io_get_file_info(const lull_io_image* image, lull_io_file_info* info);

/* Metadata attribute `index` (0 .. info.attributes - 1) as text; returns 0,
 * or non-zero for an index out of range.  Long values are cut to size. */
int lull_io_get_attribute(const lull_io_image* image, int index, char* name, size_t name_size,
                          char* value, size_t value_size);

/* 1 when this build reads and writes formats other than PFM. */
int lull_io_has_oiio(void);

#if defined(__cplusplus)
}
#endif
