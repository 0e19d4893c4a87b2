/* EXR files written and inspected with OpenImageIO directly (not through
 * lull_io), so the tests check lull_io against an independent writer:
 * Blender-style multilayer files, multi-part files, multiview files. */
#pragma once

#include <stddef.h>

#if defined(__cplusplus)
extern "C" {
#endif

typedef struct fixture_channel
{
  const char* name;   /* full channel name, "ViewLayer.Combined.R" */
  int half;           /* stored as half */
  int part;           /* part index (multi-part files) */
  const float* plane; /* width * height values */
} fixture_channel;

/* Writes an EXR; part_names has num_parts names (num_parts 1: a single-part
 * file, its name unused); attributes are name, value pairs (strings), NULL
 * terminated; views (NULL terminated, or NULL) become the "multiView"
 * attribute.  Returns 0 or non-zero. */
int fixture_write_exr(const char* path, int width, int height, const fixture_channel* channels,
                      int count, const char* const* part_names, int num_parts,
                      const char* const* attributes, const char* const* views);

/* fixture_write_exr with a "view" attribute per part (part_views[p], NULL
 * for none), as Blender writes stereo renders: a part per pass and view. */
int fixture_write_exr_part_views(const char* path, int width, int height,
                                 const fixture_channel* channels, int count,
                                 const char* const* part_names, const char* const* part_views,
                                 int num_parts, const char* const* attributes,
                                 const char* const* views);

/* The name of the part whose "view" attribute is `view` ("" for none) and
 * that holds `channel` (exact name): 0 and the name, non-zero when none. */
int fixture_part_of(const char* path, const char* channel, const char* view, char* name,
                    size_t size);

/* 'h' (half), 'f' (float) or another letter for the stored type of a
 * channel, 0 when the file or channel is missing. */
int fixture_channel_type(const char* path, const char* name);
/* A string attribute of part 0: 0 and the value, or non-zero when absent. */
int fixture_attribute(const char* path, const char* name, char* value, size_t size);
/* Writes a two-part EXR of one size: "ViewLayer.Combined" RGB at the
 * origin and "ViewLayer.Denoising Albedo" RGB at (dx, dy): 0 or non-zero. */
int fixture_write_shifted_parts(const char* path, int width, int height, int dx, int dy);
/* Writes a tiled, MIP-mapped EXR (a texture) with "ViewLayer.Combined"
 * RGB, a grey ramp, at every level down to 1 x 1: 0 or non-zero. */
int fixture_write_mipmapped(const char* path, int width, int height);
/* Writes a 16-bit PNG of `channels` interleaved values in [0, 1]: 0 or
 * non-zero. */
int fixture_write_png16(const char* path, int width, int height, int channels,
                        const float* data);
/* Number of parts, 0 when unreadable. */
int fixture_part_count(const char* path);

#if defined(__cplusplus)
}
#endif
