/* libFuzzer harness: image files through lull_io_read (EXR, multilayer and
 * multi-part EXR, PFM, and whatever else OpenImageIO recognises in a file
 * named .exr).
 *
 * Input: one selector byte, then the file's bytes.  The selector picks the
 * file name's extension (.exr or .pfm: the PFM reader is chosen by content,
 * OpenImageIO by extension and then by content) and whether a successful
 * read is written back and read again.
 *
 * Properties checked on every input (abort() = a finding):
 *   - a failed read leaves the image empty and gives a one-line message
 *     naming the file;
 *   - a successful read gives a size in 1..65536 per side, 1..4 channels per
 *     pass, terminated names, and width * height * channels readable floats
 *     (AddressSanitizer checks the allocation);
 *   - the attributes and file information can be listed;
 *   - written back (EXR, atomically) and read again, every pass comes back
 *     with its name and every channel under its name with bit-identical
 *     values (lull_io.h: "every channel survives a read and a write under
 *     its exact name"; lossy compressions excepted). */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lull_io.h"

/* Scratch files in memory (tmpfs) when available: a run does millions. */
static const char* scratch_dir(void)
{
  return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

static int terminated(const char* s, size_t size)
{
  return memchr(s, 0, size) != NULL;
}

/* Touches every value and checks the structure; returns a checksum so the
 * reads cannot be optimised away. */
static uint32_t check_image(const lull_io_image* image)
{
  if (image->width < 1 || image->width > LULL_IO_MAX_SIZE || image->height < 1 ||
      image->height > LULL_IO_MAX_SIZE || image->num_passes < 1 || !image->passes)
    abort();
  const size_t pixels = (size_t)image->width * (size_t)image->height;
  uint32_t sum = 0;
  for (int p = 0; p < image->num_passes; ++p) {
    const lull_io_pass* pass = &image->passes[p];
    if (pass->channels < 1 || pass->channels > LULL_IO_MAX_CHANNELS || !pass->data)
      abort();
    if (!terminated(pass->layer, sizeof pass->layer) ||
        !terminated(pass->name, sizeof pass->name) || !terminated(pass->view, sizeof pass->view))
      abort();
    for (int c = 0; c < pass->channels; ++c) {
      if (!terminated(pass->channel_names[c], sizeof pass->channel_names[c]))
        abort();
      char full[512];
      if (lull_io_channel_full_name(pass, c, full, sizeof full) == 0 &&
          !terminated(full, sizeof full))
        abort();
    }
    const size_t n = pixels * (size_t)pass->channels;
    for (size_t i = 0; i < n; ++i) {
      uint32_t u;
      memcpy(&u, &pass->data[i], sizeof u);
      sum += u;
    }
    /* lookups by name find a pass with that name */
    const lull_io_pass* found = lull_io_find_pass_view(image, pass->layer, pass->name, pass->view);
    if (!found || strcmp(found->name, pass->name) != 0 || strcmp(found->layer, pass->layer) != 0)
      abort();
  }
  lull_io_file_info info;
  lull_io_get_file_info(image, &info);
  if (!terminated(info.format, sizeof info.format) || info.attributes < 0)
    abort();
  for (int a = 0; a < info.attributes; ++a) {
    char name[64], value[256];
    if (lull_io_get_attribute(image, a, name, sizeof name, value, sizeof value) != 0)
      abort();
    if (!terminated(name, sizeof name) || !terminated(value, sizeof value))
      abort();
  }
  char name[8], value[8];
  if (lull_io_get_attribute(image, info.attributes, name, sizeof name, value, sizeof value) == 0)
    abort();
  return sum;
}

static int same_bits(const float* a, const float* b, size_t n)
{
  return memcmp(a, b, n * sizeof(float)) == 0;
}

/* 1 when the file's EXR compression loses information (DWA, B44, and
 * PXR24 for 32-bit floats): a rewrite keeps it, so values may change. */
static int lossy_compression(const lull_io_image* image)
{
  lull_io_file_info info;
  lull_io_get_file_info(image, &info);
  for (int a = 0; a < info.attributes; ++a) {
    char name[64], value[64];
    if (lull_io_get_attribute(image, a, name, sizeof name, value, sizeof value) == 0 &&
        strcmp(name, "compression") == 0) {
      const char* v = value[0] == '"' ? value + 1 : value; /* strings come quoted */
      return strncmp(v, "dwa", 3) == 0 || strncmp(v, "b44", 3) == 0 || strncmp(v, "pxr24", 5) == 0;
    }
  }
  return 0;
}

/* Write as EXR and read back: the passes must survive unchanged (their
 * values bit for bit unless the compression is lossy). */
static void check_round_trip(const lull_io_image* image, const char* path)
{
  const int exact = !lossy_compression(image);
  char err[512];
  if (lull_io_write(path, image, 0, err, sizeof err) != 0)
    return; /* refusing to write is allowed (e.g. a name EXR cannot hold) */
  lull_io_image back;
  if (lull_io_read(path, &back, err, sizeof err) != 0) {
    fprintf(stderr, "fuzz_io: lull_io wrote a file it cannot read: %s\n", err);
    abort();
  }
  (void)check_image(&back);
  const size_t pixels = (size_t)image->width * (size_t)image->height;
  if (back.width != image->width || back.height != image->height)
    abort();
  for (int p = 0; p < image->num_passes; ++p) {
    const lull_io_pass* a = &image->passes[p];
    const lull_io_pass* b = lull_io_find_pass_view(&back, a->layer, a->name, a->view);
    if (!b || b->channels != a->channels) {
      fprintf(stderr, "fuzz_io: pass '%s'.'%s' lost or changed in a round trip\n", a->layer,
              a->name);
      abort();
    }
    /* each channel by name: EXR stores a part's channels sorted by name,
     * so channels whose names have no known order (not RGBA, XYZ, ...)
     * may come back in another order, with their values */
    for (int c = 0; c < a->channels; ++c) {
      int k = 0;
      while (k < b->channels && strcmp(a->channel_names[c], b->channel_names[k]) != 0)
        ++k;
      if (k == b->channels) {
        fprintf(stderr, "fuzz_io: channel '%s' of '%s'.'%s' lost in a round trip\n",
                a->channel_names[c], a->layer, a->name);
        abort();
      }
      /* a half pass is written as half: its values were halves already */
      for (size_t i = 0; exact && i < pixels; ++i)
        if (!same_bits(&a->data[i * (size_t)a->channels + (size_t)c],
                       &b->data[i * (size_t)b->channels + (size_t)k], 1)) {
          fprintf(stderr, "fuzz_io: channel '%s' of '%s'.'%s' changed in a round trip\n",
                  a->channel_names[c], a->layer, a->name);
          abort();
        }
    }
  }
  lull_io_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size < 1)
    return 0;
  const uint8_t selector = data[0];
  data += 1;
  size -= 1;

  char path[256], copy[256];
  const int pid = (int)getpid();
  snprintf(path, sizeof path, "%s/lull_fuzz_io_%d.%s", scratch_dir(), pid,
           (selector & 1) ? "pfm" : "exr");
  snprintf(copy, sizeof copy, "%s/lull_fuzz_io_%d_copy.exr", scratch_dir(), pid);
  FILE* f = fopen(path, "wb");
  if (!f)
    return 0;
  const size_t written = fwrite(data, 1, size, f);
  if (fclose(f) != 0 || written != size) {
    unlink(path);
    return 0;
  }

  lull_io_image image;
  char err[512];
  err[0] = '\0';
  if (lull_io_read(path, &image, err, sizeof err) != 0) {
    /* failed: empty image, a message that names the file, one line */
    if (image.passes || image.num_passes || image.metadata || image.width || image.height)
      abort();
    if (strncmp(err, path, strlen(path)) != 0 || strchr(err, '\n'))
      abort();
  } else {
    (void)check_image(&image);
    /* round trips cost a write and a read: small images, half the time */
    if ((selector & 2) && (size_t)image.width * (size_t)image.height <= 4096)
      check_round_trip(&image, copy);
    lull_io_free(&image);
    if (image.passes || image.metadata)
      abort();
  }
  unlink(path);
  unlink(copy);
  return 0;
}
