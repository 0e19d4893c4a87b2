/* Moving image rows between an image view (any format and stride) and the
 * planar float rows the CPU backend computes on.  Float images with 4-byte
 * aligned pixels take a direct path the compiler vectorises; others go
 * through the per-pixel loads of image.h. */
#pragma once

#include "image.h"

/* Reads row y of image into planes[0..channels): planes[c][x] = channel c of
 * pixel x; channels beyond the format's read 0.  planes[c] may be NULL to
 * skip a channel. */
void lull_image_read_row(const lull_image* image, int y, float* const planes[4], int channels);

/* Reads row y of an auxiliary image into 3 planes as lull_expand_rgb reads
 * a pixel of it (1 channel: v, v, v; 2: x, y, y). */
void lull_image_read_row_rgb(const lull_image* image, int y, float* const planes[3]);

/* Writes the first `channels` planes into row y of image. */
void lull_image_write_row(const lull_image* image, int y, const float* const planes[4],
                          int channels);
