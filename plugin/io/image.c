/* lull_io's entry points: choosing the reader or writer, and the passes of
 * an image in memory. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "atrous_math.h"
#include "io_internal.h"

int lull_io_fail(char* err, size_t err_size, const char* path, const char* format, ...)
{
  va_list args;
  va_start(args, format);
  if (err && err_size > 0) {
    char message[1024];
    vsnprintf(message, sizeof message, format, args);
    snprintf(err, err_size, "%s: %s", path ? path : "(no file)", message);
    /* one printable line: names read from a corrupt file may hold control
     * characters and newlines (found by fuzz_io) */
    for (char* c = err; *c; ++c)
      if ((unsigned char)*c < 0x20 || *c == 0x7f)
        *c = '?';
  }
  va_end(args);
  return 1;
}

int lull_io_size_ok(long long width, long long height, long long channels)
{
  return width >= 1 && width <= LULL_IO_MAX_SIZE && height >= 1 && height <= LULL_IO_MAX_SIZE &&
         channels >= 1 && channels <= LULL_IO_MAX_FILE_CHANNELS;
}

lull_io_metadata* lull_io_metadata_new(const char* format)
{
  lull_io_metadata* meta = calloc(1, sizeof *meta);
  if (meta) {
    snprintf(meta->info.format, sizeof meta->info.format, "%s", format);
    meta->info.parts = 1;
    meta->info.mip_levels = 1;
  }
  return meta;
}

int lull_io_allocate_passes(lull_io_image* image)
{
  const size_t pixels = (size_t)image->width * (size_t)image->height;
  for (int i = 0; i < image->num_passes; ++i) {
    lull_io_pass* pass = &image->passes[i];
    pass->data = calloc(pixels * (size_t)pass->channels, sizeof(float));
    if (!pass->data)
      return 1;
  }
  return 0;
}

/* -- reading and writing ---------------------------------------------------------- */

static const char* extension(const char* path)
{
  const char* slash = strrchr(path, '/');
  const char* dot = strrchr(path, '.');
  return dot && (!slash || dot > slash) ? dot + 1 : "";
}

int lull_io_read(const char* path, lull_io_image* image, char* err, size_t err_size)
{
  if (!image)
    return lull_io_fail(err, err_size, path, "no image to read into");
  memset(image, 0, sizeof *image);
  if (!path || !*path)
    return lull_io_fail(err, err_size, path, "no file name");
  struct stat st;
  if (stat(path, &st) != 0)
    return lull_io_fail(err, err_size, path, "%s", strerror(errno));
  if (!S_ISREG(st.st_mode))
    return lull_io_fail(err, err_size, path, "not a regular file");

  const int pfm = lull_io_is_pfm_file(path);
  if (pfm < 0)
    return lull_io_fail(err, err_size, path, "%s", strerror(errno));
  const int exr = pfm ? 0 : lull_io_is_exr_file(path);
  if (exr < 0)
    return lull_io_fail(err, err_size, path, "%s", strerror(errno));
  /* a .exr or .pfm name is a promise: other content is not handed to
   * OpenImageIO's format guessing (every reader it has, on a corrupt file) */
  int status;
  if (pfm)
    status = lull_io_pfm_read(path, image, err, err_size);
  else if (strcasecmp(extension(path), "pfm") == 0)
    status = lull_io_fail(err, err_size, path, "not a PFM file");
  else if (!exr && strcasecmp(extension(path), "exr") == 0)
    status = lull_io_fail(err, err_size, path, "not an OpenEXR file");
  else if (lull_io_oiio_available())
    /* OpenImageIO aborts on some corrupt EXR files: check them first */
    status = (exr ? lull_io_exr_check(path, err, err_size) : 0) ||
             lull_io_oiio_read(path, image, err, err_size);
  else
    status = lull_io_fail(err, err_size, path,
                          "not a PFM file, and lull was built without OpenImageIO "
                          "(only PFM can be read)");
  if (status)
    lull_io_free(image);
  return status;
}

static int check_image(const char* path, const lull_io_image* image, char* err, size_t err_size)
{
  if (!image)
    return lull_io_fail(err, err_size, path, "no image to write");
  if (!lull_io_size_ok(image->width, image->height, 1))
    return lull_io_fail(err, err_size, path, "invalid image size %dx%d (1 to %d per side)",
                        image->width, image->height, (int)LULL_IO_MAX_SIZE);
  if (image->num_passes < 1 || !image->passes)
    return lull_io_fail(err, err_size, path, "the image has no passes");
  for (int i = 0; i < image->num_passes; ++i) {
    const lull_io_pass* pass = &image->passes[i];
    if (pass->channels < 1 || pass->channels > LULL_IO_MAX_CHANNELS || !pass->data)
      return lull_io_fail(err, err_size, path, "pass %d ('%.64s') has %d channels or no data", i,
                          pass->name, pass->channels);
    if (!memchr(pass->layer, 0, sizeof pass->layer) || !memchr(pass->name, 0, sizeof pass->name) ||
        !memchr(pass->view, 0, sizeof pass->view))
      return lull_io_fail(err, err_size, path, "pass %d has an unterminated name", i);
  }
  return 0;
}

int lull_io_write(const char* path, const lull_io_image* image, int srgb, char* err,
                  size_t err_size)
{
  if (!path || !*path)
    return lull_io_fail(err, err_size, path, "no file name");
  if (check_image(path, image, err, err_size))
    return 1;
  if (strcasecmp(extension(path), "pfm") == 0)
    return lull_io_pfm_write(path, image, srgb, err, err_size);
  if (!lull_io_oiio_available())
    return lull_io_fail(err, err_size, path,
                        "lull was built without OpenImageIO: only .pfm files can be written");
  return lull_io_oiio_write(path, image, srgb, err, err_size);
}

int lull_io_decodes_display(int srgb, const lull_io_pass* p, int c)
{
  const int display =
      srgb == LULL_IO_VALUES_DISPLAY || (srgb == LULL_IO_VALUES_AS_READ && p->display);
  return display && strcmp(p->channel_names[c], "A") != 0;
}

float lull_io_display_to_linear(float v)
{
  return lull_srgb_to_linear(v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f);
}

int lull_io_has_oiio(void)
{
  return lull_io_oiio_available();
}

/* -- passes ----------------------------------------------------------------------- */

static int same(const char* a, const char* b)
{
  return !a || strcmp(a, b) == 0;
}

size_t lull_io_list_names(const lull_io_image* image, int views, int quoted, char* out,
                          size_t size)
{
  size_t used = 0;
  if (!size)
    return 0;
  out[0] = '\0';
  for (int i = 0; i < image->num_passes; ++i) {
    const char* name = views ? image->passes[i].view : image->passes[i].layer;
    int seen = 0;
    for (int j = 0; j < i && !seen; ++j)
      seen = strcmp(views ? image->passes[j].view : image->passes[j].layer, name) == 0;
    if (seen || !*name)
      continue;
    const char* q = quoted ? "'" : "";
    const int n = snprintf(out + used, size - used, "%s%s%s%s", used ? ", " : "", q, name, q);
    if (n < 0 || (size_t)n >= size - used) {
      out[used] = '\0'; /* no cut name */
      break;
    }
    used += (size_t)n;
  }
  return used;
}

lull_io_pass* lull_io_find_pass_view(const lull_io_image* image, const char* layer,
                                     const char* name, const char* view)
{
  if (!image || !name)
    return NULL;
  for (int i = 0; i < image->num_passes; ++i) {
    lull_io_pass* pass = &image->passes[i];
    if (strcmp(pass->name, name) == 0 && same(layer, pass->layer) && same(view, pass->view))
      return pass;
  }
  return NULL;
}

lull_io_pass* lull_io_find_pass(const lull_io_image* image, const char* layer, const char* name)
{
  return lull_io_find_pass_view(image, layer, name, NULL);
}

static int fits(const char* s, size_t size)
{
  return s && strlen(s) < size;
}

lull_io_pass* lull_io_add_pass_view(lull_io_image* image, const char* layer, const char* name,
                                    const char* view, int channels,
                                    const char* const* channel_names, const float* data)
{
  if (!image || !lull_io_size_ok(image->width, image->height, 1) || channels < 1 ||
      channels > LULL_IO_MAX_CHANNELS || !channel_names)
    return NULL;
  layer = layer ? layer : "";
  view = view ? view : "";
  /* a pass name is one component of "Layer.Pass.Channel": with a dot it
   * would be read back as part of the layer */
  if (!fits(layer, LULL_IO_NAME_SIZE) || !fits(name, LULL_IO_NAME_SIZE) ||
      !fits(view, LULL_IO_NAME_SIZE) || strchr(name, '.'))
    return NULL;
  for (int c = 0; c < channels; ++c)
    if (!fits(channel_names[c], sizeof image->passes[0].channel_names[0]))
      return NULL;
  if (lull_io_find_pass_view(image, layer, name, view))
    return NULL;

  /* The names may point into a pass of this image (a caller adding a pass
   * to an existing layer): fill the new pass before the array moves. */
  lull_io_pass added;
  memset(&added, 0, sizeof added);
  snprintf(added.layer, sizeof added.layer, "%s", layer);
  snprintf(added.name, sizeof added.name, "%s", name);
  snprintf(added.view, sizeof added.view, "%s", view);
  added.channels = channels;
  for (int c = 0; c < channels; ++c)
    snprintf(added.channel_names[c], sizeof added.channel_names[c], "%s", channel_names[c]);

  const size_t count = (size_t)image->width * (size_t)image->height * (size_t)channels;
  float* copy = malloc(count * sizeof(float));
  if (!copy)
    return NULL;
  if (data)
    memcpy(copy, data, count * sizeof(float));
  else
    memset(copy, 0, count * sizeof(float));
  lull_io_pass* passes = realloc(image->passes, ((size_t)image->num_passes + 1) * sizeof *passes);
  if (!passes) {
    free(copy);
    return NULL;
  }
  image->passes = passes;
  lull_io_pass* pass = &passes[image->num_passes++];
  *pass = added;
  pass->data = copy;
  return pass;
}

lull_io_pass* lull_io_add_pass(lull_io_image* image, const char* layer, const char* name,
                               int channels, const char* const* channel_names,
                               const float* data)
{
  return lull_io_add_pass_view(image, layer, name, "", channels, channel_names, data);
}

void lull_io_free(lull_io_image* image)
{
  if (!image)
    return;
  for (int i = 0; i < image->num_passes && image->passes; ++i)
    free(image->passes[i].data);
  free(image->passes);
  lull_io_metadata* meta = image->metadata;
  if (meta) {
    lull_io_oiio_free_state(meta->oiio);
    free(meta);
  }
  memset(image, 0, sizeof *image);
}

int lull_io_channel_full_name(const lull_io_pass* pass, int channel, char* out, size_t size)
{
  if (!pass || !out || size == 0 || channel < 0 || channel >= pass->channels)
    return 1;
  /* The non-empty components joined by dots: the inverse of the grouping
   * in channel_names.c, so names survive a read and a write exactly. */
  const char* parts[4] = {pass->layer, pass->name, pass->view, pass->channel_names[channel]};
  size_t used = 0;
  out[0] = '\0';
  for (int i = 0; i < 4; ++i) {
    if (!parts[i][0])
      continue;
    const int n = snprintf(out + used, size - used, "%s%s", used ? "." : "", parts[i]);
    if (n < 0 || (size_t)n >= size - used)
      return 1;
    used += (size_t)n;
  }
  return used == 0; /* a channel needs a name */
}

/* -- file information ------------------------------------------------------------- */

void lull_io_get_file_info(const lull_io_image* image, lull_io_file_info* info)
{
  if (!info)
    return;
  memset(info, 0, sizeof *info);
  const lull_io_metadata* meta = image ? image->metadata : NULL;
  if (meta)
    *info = meta->info;
}

int lull_io_get_attribute(const lull_io_image* image, int index, char* name, size_t name_size,
                          char* value, size_t value_size)
{
  const lull_io_metadata* meta = image ? image->metadata : NULL;
  if (!meta || index < 0 || index >= meta->info.attributes || !meta->oiio)
    return 1;
  return lull_io_oiio_attribute(meta->oiio, index, name, name_size, value, value_size);
}
