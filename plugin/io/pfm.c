/* Portable float maps, without dependencies.
 *
 * Header: "PF" (RGB) or "Pf" (grey), white space, width, height, white
 * space, a scale whose sign gives the byte order (negative: little endian;
 * its magnitude is informational and ignored, as OIDN's tools do), one
 * white-space byte, then width * height * channels 32-bit floats, rows from
 * the bottom of the image to the top. */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io_internal.h"

int lull_io_is_pfm_file(const char* path)
{
  FILE* f = fopen(path, "rb");
  if (!f)
    return -1;
  unsigned char magic[3] = {0, 0, 0};
  const size_t n = fread(magic, 1, sizeof magic, f);
  fclose(f);
  return n == 3 && magic[0] == 'P' && (magic[1] == 'F' || magic[1] == 'f') && isspace(magic[2]);
}

static int host_is_little_endian(void)
{
  const uint32_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

static void swap_bytes(float* values, size_t count)
{
  for (size_t i = 0; i < count; ++i) {
    uint32_t u;
    memcpy(&u, &values[i], sizeof u);
    u = (u >> 24) | ((u >> 8) & 0xff00u) | ((u << 8) & 0xff0000u) | (u << 24);
    memcpy(&values[i], &u, sizeof u);
  }
}

/* Reads one white-space separated token of at most size - 1 characters;
 * returns non-zero at end of file or when the token is too long. */
static int read_token(FILE* f, char* token, size_t size)
{
  int c;
  do
    c = fgetc(f);
  while (c != EOF && isspace(c));
  size_t n = 0;
  while (c != EOF && !isspace(c)) {
    if (n + 1 >= size)
      return 1;
    token[n++] = (char)c;
    c = fgetc(f);
  }
  token[n] = '\0';
  /* the one white-space byte after the token is consumed (the header's end) */
  return n == 0;
}

static int parse_int(const char* s, long* out)
{
  char* end;
  errno = 0;
  *out = strtol(s, &end, 10);
  return errno != 0 || end == s || *end != '\0';
}

int lull_io_pfm_read(const char* path, lull_io_image* image, char* err, size_t err_size)
{
  FILE* f = fopen(path, "rb");
  if (!f)
    return lull_io_fail(err, err_size, path, "%s", strerror(errno));
  int status = 0;
  char magic[8], width_s[32], height_s[32], scale_s[64];
  long width = 0, height = 0;
  if (read_token(f, magic, sizeof magic) || read_token(f, width_s, sizeof width_s) ||
      read_token(f, height_s, sizeof height_s) || read_token(f, scale_s, sizeof scale_s)) {
    status = lull_io_fail(err, err_size, path, "corrupt PFM header");
    goto done;
  }
  const int channels = strcmp(magic, "PF") == 0 ? 3 : strcmp(magic, "Pf") == 0 ? 1 : 0;
  char* end;
  const double scale = strtod(scale_s, &end);
  if (!channels || parse_int(width_s, &width) || parse_int(height_s, &height) || *end != '\0' ||
      !isfinite(scale) || scale == 0.0) {
    status = lull_io_fail(err, err_size, path, "corrupt PFM header");
    goto done;
  }
  if (!lull_io_size_ok(width, height, channels)) {
    status = lull_io_fail(err, err_size, path, "invalid PFM size %ldx%ld (1 to %d per side)",
                          width, height, (int)LULL_IO_MAX_SIZE);
    goto done;
  }

  /* Check the file holds every pixel before allocating, so a corrupt header
   * never makes us allocate gigabytes. */
  const size_t row_floats = (size_t)width * (size_t)channels;
  const size_t pixel_bytes = row_floats * (size_t)height * sizeof(float);
  struct stat st;
  const long header_end = ftell(f);
  if (fstat(fileno(f), &st) != 0 || header_end < 0) {
    status = lull_io_fail(err, err_size, path, "%s", strerror(errno));
    goto done;
  }
  const size_t available = st.st_size > header_end ? (size_t)(st.st_size - header_end) : 0;
  if (available < pixel_bytes) {
    status = lull_io_fail(err, err_size, path,
                          "truncated PFM: %zu bytes of pixels expected, %zu found", pixel_bytes,
                          available);
    goto done;
  }

  image->width = (int)width;
  image->height = (int)height;
  static const char* const rgb[] = {"R", "G", "B"};
  static const char* const grey[] = {"Y"};
  image->metadata = lull_io_metadata_new("pfm");
  if (!image->metadata ||
      !lull_io_add_pass(image, "", "", channels, channels == 3 ? rgb : grey, NULL)) {
    status = lull_io_fail(err, err_size, path, "out of memory");
    goto done;
  }
  lull_io_metadata* meta = image->metadata;
  meta->info.bits = 32;
  float* data = image->passes[0].data;
  const int swap = (scale < 0) != host_is_little_endian();
  for (long y = height - 1; y >= 0; --y) { /* bottom row first */
    float* row = data + (size_t)y * row_floats;
    if (fread(row, sizeof(float), row_floats, f) != row_floats) {
      status = lull_io_fail(err, err_size, path, "truncated PFM (read error)");
      goto done;
    }
    if (swap)
      swap_bytes(row, row_floats);
  }
done:
  fclose(f);
  return status;
}

int lull_io_pfm_write(const char* path, const lull_io_image* image, int srgb, char* err,
                      size_t err_size)
{
  if (image->num_passes != 1)
    return lull_io_fail(err, err_size, path,
                        "a PFM file holds one image, this one has %d passes (pick one)",
                        image->num_passes);
  const lull_io_pass* pass = &image->passes[0];
  if (pass->channels == 2)
    return lull_io_fail(err, err_size, path, "PFM stores 1 or 3 channels, not 2");
  const int channels = pass->channels == 1 ? 1 : 3; /* RGBA: the alpha is dropped */
  int decode[3];
  for (int c = 0; c < channels; ++c)
    decode[c] = lull_io_decodes_display(srgb, pass, c);

  lull_io_temp_file temp;
  if (lull_io_temp_create(&temp, path, err, err_size))
    return 1;
  FILE* f = fdopen(temp.fd, "wb");
  if (!f) {
    lull_io_temp_discard(&temp);
    return lull_io_fail(err, err_size, path, "%s", strerror(errno));
  }
  temp.fd = -1; /* the FILE owns it now */
  /* little endian, as OIDN writes them */
  const int swap = !host_is_little_endian();
  int ok = fprintf(f, "%s\n%d %d\n-1.0\n", channels == 3 ? "PF" : "Pf", image->width,
                   image->height) > 0;
  float* row = malloc((size_t)image->width * (size_t)channels * sizeof(float));
  ok = ok && row;
  for (int y = image->height - 1; ok && y >= 0; --y) {
    const float* src = pass->data + (size_t)y * (size_t)image->width * (size_t)pass->channels;
    for (int x = 0; x < image->width; ++x)
      for (int c = 0; c < channels; ++c)
      {
        const float v = src[(size_t)x * (size_t)pass->channels + (size_t)c];
        row[(size_t)x * (size_t)channels + (size_t)c] =
            decode[c] ? lull_io_display_to_linear(v) : v;
      }
    if (swap)
      swap_bytes(row, (size_t)image->width * (size_t)channels);
    ok = fwrite(row, sizeof(float), (size_t)image->width * (size_t)channels, f) ==
         (size_t)image->width * (size_t)channels;
  }
  free(row);
  const int e = errno;
  ok = (fflush(f) == 0) && ok;
  ok = (fclose(f) == 0) && ok;
  if (!ok) {
    lull_io_temp_discard(&temp);
    return lull_io_fail(err, err_size, path, "cannot write: %s", strerror(e ? e : EIO));
  }
  return lull_io_temp_commit(&temp, err, err_size);
}
