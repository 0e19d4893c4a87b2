/* Pieces shared by the image-file readers and writers (not installed). */
#pragma once

#include <stdarg.h>
#include <stddef.h>

#include "lull_io.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* What lull_io_image.metadata points to.  The OpenImageIO side keeps its
 * own state (EXR headers, parts, channel types) behind `oiio`. */
typedef struct lull_io_metadata
{
  lull_io_file_info info;
  void* oiio; /* freed by lull_io_oiio_free_state */
} lull_io_metadata;

/* Formats err as "path: message" (err may be NULL); returns 1 so callers
 * can write `return lull_io_fail(...)`. */
int lull_io_fail(char* err, size_t err_size, const char* path, const char* format, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 4, 5)))
#endif
  ;

/* 1 when width and height are in 1..LULL_IO_MAX_SIZE and channels in
 * 1..LULL_IO_MAX_FILE_CHANNELS (so width * height * channels * 4 bytes
 * cannot overflow size_t on 64-bit hosts). */
int lull_io_size_ok(long long width, long long height, long long channels);

/* Allocates metadata for an image read from a file (zeroed info with this
 * format name), or NULL when out of memory. */
lull_io_metadata* lull_io_metadata_new(const char* format);

/* -- channel names (channel_names.c) ------------------------------------------ */

/* Where one channel of the file goes: pass index and channel inside it. */
typedef struct lull_io_channel_slot
{
  int pass;
  int channel;
} lull_io_channel_slot;

/* Groups the channels `names[0 .. count-1]` into passes (see lull_io.h).
 * `views` lists the multiview view names (may be NULL), which channel
 * names carry second to last; `channel_views` (may be NULL) gives channel
 * i's view where it is known apart from its name (a multi-part file's part
 * of a view: its channels are then not searched for a view, and channels
 * of one name in different views are different channels).  On success sets
 * image->passes/num_passes (data left NULL) and slots[i] for every channel
 * and returns 0; otherwise fills err and returns non-zero. */
int lull_io_group_channels(const char* const* names, const char* const* channel_views, int count,
                           const char* const* views, int num_views, lull_io_image* image,
                           lull_io_channel_slot* slots, const char* path, char* err,
                           size_t err_size);

/* Allocates every pass's data (zeroed); returns 0 or non-zero when out of memory. */
int lull_io_allocate_passes(lull_io_image* image);

/* -- atomic files (atomic_file.c) --------------------------------------------- */

typedef struct lull_io_temp_file
{
  char final_path[4096]; /* the destination, symlinks resolved */
  char temp_path[4096];  /* a new file in the same directory */
  int fd;                /* open for writing, or -1 */
} lull_io_temp_file;

/* Creates a new empty temporary file next to `path` (0 or non-zero with err). */
int lull_io_temp_create(lull_io_temp_file* file, const char* path, char* err, size_t err_size);
/* Makes the written temporary file durable and renames it over the
 * destination; on failure removes it.  Returns 0 or non-zero with err. */
int lull_io_temp_commit(lull_io_temp_file* file, char* err, size_t err_size);
/* Removes the temporary file (after a failed write). */
void lull_io_temp_discard(lull_io_temp_file* file);

/* -- formats -------------------------------------------------------------------- */

/* 1 when the first bytes of the file are a PFM header ("PF" or "Pf" and
 * white space). */
int lull_io_is_pfm_file(const char* path);
int lull_io_pfm_read(const char* path, lull_io_image* image, char* err, size_t err_size);
int lull_io_pfm_write(const char* path, const lull_io_image* image, int srgb, char* err,
                      size_t err_size);

/* Whether lull_io_write(..., srgb) to a file of floats turns channel c of
 * pass p to linear values: the values are display-encoded (srgb
 * LULL_IO_VALUES_DISPLAY, or AS_READ of a pass read from 8/16-bit integers;
 * passes added since hold the caller's values) and the channel is a colour
 * one (not "A"). */
int lull_io_decodes_display(int srgb, const lull_io_pass* p, int c);

/* EXR files (exr_check.c): 1 when the file starts with OpenEXR's magic
 * number (0 when not, -1 when unreadable); lull_io_exr_check walks the
 * headers and refuses what would crash OpenImageIO or what lull cannot use
 * (0, or non-zero with err); lull_io_exr_check_bytes does it on the first
 * `size` bytes of a file of file_size bytes (0, or non-zero with *why). */
int lull_io_is_exr_file(const char* path);
int lull_io_exr_check(const char* path, char* err, size_t err_size);
int lull_io_exr_check_bytes(const unsigned char* data, size_t size, unsigned long long file_size,
                            const char** why);

/* OpenImageIO (oiio.cpp), or stubs that report its absence (oiio_absent.c). */
int lull_io_oiio_available(void);
int lull_io_oiio_read(const char* path, lull_io_image* image, char* err, size_t err_size);
int lull_io_oiio_write(const char* path, const lull_io_image* image, int srgb, char* err,
                       size_t err_size);
void lull_io_oiio_free_state(void* state);
/* Attribute `index` of the OpenImageIO state as text (0 or non-zero). */
int lull_io_oiio_attribute(const void* state, int index, char* name, size_t name_size,
                           char* value, size_t value_size);

#if defined(__cplusplus)
}
#endif
