/* Denoising one file through the public API, the way any program using
 * lull (or Open Image Denoise) would: device buffers, filter images with
 * byte offsets and strides (RGBA passes are given as FLOAT3 with a 16-byte
 * pixel stride, as OIDN's documentation recommends), typed parameters, a
 * progress monitor that can cancel, and error checks after each step. */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "denoise.h"
#include "half.h"

/* Everything one frame holds. */
typedef struct frame_state
{
  lull_io_image input;
  lull_io_image half_b;                   /* --half-b's file (empty without) */
  lull_io_image sources[CLI_MAX_SOURCES]; /* separate files (options->sources[i].file) */
  lull_io_image reference;
  cli_target targets[CLI_MAX_TARGETS];
  int color_index[CLI_MAX_TARGETS]; /* the target's colour pass (half A) in input.passes */
  const lull_io_pass* color_b[CLI_MAX_TARGETS]; /* its half B (input or half_b), or NULL */
  /* halves: their mean in half A's layout (data owned), the noisy image of
   * the metrics and the base of the output pass (alpha included) */
  lull_io_pass mean[CLI_MAX_TARGETS];
  int num_targets;
  float* results[CLI_MAX_TARGETS];  /* denoised colour, packed */
  int result_channels[CLI_MAX_TARGETS];
  const char* filter_names[CLI_MAX_TARGETS]; /* the filter of each target */
  char guides[CLI_MAX_TARGETS][160]; /* which guide images were used, for the log */
  char notes[CLI_MAX_TARGETS][160];  /* and which were found but not used */
  double seconds;
} frame_state;

static double now_seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The first error of the device, as "context: message"; 0 when none. */
static OIDNError device_error(OIDNDevice device, const char* context, char* err, size_t err_size)
{
  const char* message = NULL;
  const OIDNError code = oidnGetDeviceError(device, &message);
  if (code != OIDN_ERROR_NONE)
    snprintf(err, err_size, "%s: %s", context, message && *message ? message : "error");
  return code;
}

/* -- device images ------------------------------------------------------------------ */

typedef struct device_image
{
  OIDNBuffer buffer;
  OIDNFormat format;
  size_t offset;       /* bytes to the first channel */
  size_t pixel_stride; /* bytes */
  size_t bytes;        /* buffer size */
  int channels;
  int half;
} device_image;

static OIDNFormat format_of(int channels, int half)
{
  return (OIDNFormat)((half ? OIDN_FORMAT_HALF : OIDN_FORMAT_FLOAT) + channels - 1);
}

/* A value as -t half stores it: finite values beyond half's range held at
 * +-65504 (counted in *clamped), not turned into infinities, which the
 * filter then treats as missing (a highlight of 1e6 came out black). */
static uint16_t to_half_held(float v, size_t* clamped)
{
  if (v > 65504.0f && v <= FLT_MAX) {
    v = 65504.0f;
    ++*clamped;
  } else if (v < -65504.0f && v >= -FLT_MAX) {
    v = -65504.0f;
    ++*clamped;
  }
  return lull_float_to_half(v);
}

/* A buffer holding the colour channels (not alpha) of a pass, or of the
 * mean of two passes of the same channels (pass_b not NULL: two halves
 * for a filter that takes one image); *clamped counts the values -t half
 * had to hold at its range. */
static int upload(OIDNDevice device, const lull_io_pass* pass, const lull_io_pass* pass_b,
                  int width, int height, int half, device_image* out, size_t* clamped)
{
  memset(out, 0, sizeof *out);
  *clamped = 0;
  int color[3], alpha;
  const int n = cli_pass_channels(pass, color, &alpha);
  if (n == 0)
    return 1;
  const size_t pixels = (size_t)width * (size_t)height;
  int color_b[3] = {0, 0, 0}, alpha_b;
  if (pass_b && cli_pass_channels(pass_b, color_b, &alpha_b) != n)
    return 1;
  int contiguous = pass_b == NULL;
  for (int k = 1; k < n; ++k)
    contiguous &= color[k] == color[0] + k;
  out->channels = n;
  out->half = half;
  out->format = format_of(n, half);
  if (contiguous && !half) {
    /* the pass as it is; the image skips the other channels by its stride */
    out->bytes = pixels * (size_t)pass->channels * sizeof(float);
    out->offset = (size_t)color[0] * sizeof(float);
    out->pixel_stride = (size_t)pass->channels * sizeof(float);
    out->buffer = oidnNewBuffer(device, out->bytes);
    if (out->buffer)
      oidnWriteBuffer(out->buffer, 0, out->bytes, pass->data);
    return out->buffer == NULL;
  }
  const size_t element = half ? sizeof(uint16_t) : sizeof(float);
  out->pixel_stride = (size_t)n * element;
  out->bytes = pixels * out->pixel_stride;
  unsigned char* packed = malloc(out->bytes);
  if (!packed)
    return 1;
  for (size_t i = 0; i < pixels; ++i)
    for (int k = 0; k < n; ++k) {
      float v = pass->data[i * (size_t)pass->channels + (size_t)color[k]];
      if (pass_b)
        v = 0.5f * (v + pass_b->data[i * (size_t)pass_b->channels + (size_t)color_b[k]]);
      unsigned char* dst = packed + i * out->pixel_stride + (size_t)k * element;
      if (half) {
        const uint16_t h = to_half_held(v, clamped);
        memcpy(dst, &h, sizeof h);
      } else {
        memcpy(dst, &v, sizeof v);
      }
    }
  out->buffer = oidnNewBuffer(device, out->bytes);
  if (out->buffer)
    oidnWriteBuffer(out->buffer, 0, out->bytes, packed);
  free(packed);
  return out->buffer == NULL;
}

/* An empty packed buffer for the output. */
static int allocate(OIDNDevice device, int channels, int width, int height, int half,
                    device_image* out)
{
  memset(out, 0, sizeof *out);
  const size_t element = half ? sizeof(uint16_t) : sizeof(float);
  out->channels = channels;
  out->half = half;
  out->format = format_of(channels, half);
  out->pixel_stride = (size_t)channels * element;
  out->bytes = (size_t)width * (size_t)height * out->pixel_stride;
  out->buffer = oidnNewBuffer(device, out->bytes);
  return out->buffer == NULL;
}

/* The image's channels as packed floats (malloc'ed). */
static float* download(const device_image* image, int width, int height)
{
  const size_t pixels = (size_t)width * (size_t)height;
  unsigned char* bytes = malloc(image->bytes);
  float* out = malloc(pixels * (size_t)image->channels * sizeof(float));
  if (!bytes || !out) {
    free(bytes);
    free(out);
    return NULL;
  }
  oidnReadBuffer(image->buffer, 0, image->bytes, bytes);
  for (size_t i = 0; i < pixels; ++i)
    for (int k = 0; k < image->channels; ++k) {
      const unsigned char* src = bytes + image->offset + i * image->pixel_stride +
                                 (size_t)k * (image->half ? 2u : 4u);
      float v;
      if (image->half) {
        uint16_t h;
        memcpy(&h, src, sizeof h);
        v = lull_half_to_float(h);
      } else {
        memcpy(&v, src, sizeof v);
      }
      out[i * (size_t)image->channels + (size_t)k] = v;
    }
  free(bytes);
  return out;
}

static void set_image(OIDNFilter filter, const char* name, const device_image* image, int width,
                      int height)
{
  oidnSetFilterImage(filter, name, image->buffer, image->format, (size_t)width, (size_t)height,
                     image->offset, image->pixel_stride, 0);
}

/* -- one target ------------------------------------------------------------------------ */

typedef struct monitor
{
  cli_progress* progress;
  double base, span;
} monitor;

static bool on_progress(void* user, double done)
{
  const monitor* m = user;
  cli_progress_update(m->progress, m->base + m->span * done);
  return !cli_interrupted(); /* false cancels the filter */
}

/* Is image one of RHF's histogram0 .. histogram31? */
static int is_histogram(const char* image)
{
  if (strncmp(image, "histogram", 9) != 0 || !image[9])
    return 0;
  for (const char* c = image + 9; *c; ++c)
    if (*c < '0' || *c > '9')
      return 0;
  return 1;
}

/* The --image or --pass source of a filter image, NULL when none; for
 * RHF's histogramK also a source named "histogram" (*family set: a file
 * whose passes histogram0, histogram1, ... are the bins). */
static const cli_source* source_for(const cli_denoise_options* options, const char* image,
                                    int* index, int* family)
{
  *family = 0;
  for (int i = options->num_sources - 1; i >= 0; --i) /* the last one given wins */
    if (strcmp(options->sources[i].image, image) == 0) {
      *index = i;
      return &options->sources[i];
    }
  if (!is_histogram(image))
    return NULL;
  for (int i = options->num_sources - 1; i >= 0; --i)
    if (strcmp(options->sources[i].image, "histogram") == 0) {
      *index = i;
      *family = 1;
      return &options->sources[i];
    }
  return NULL;
}

/* Appends "; note" to a target's notes. */
static void add_note(char* notes, size_t size, const char* note)
{
  const size_t used = strlen(notes);
  snprintf(notes + used, size - used, "; %s", note);
}

/* Says how many values of an image -t half held at its range. */
static void note_clamped(char* notes, size_t size, const char* image, size_t clamped)
{
  if (clamped == 0)
    return;
  char note[160];
  snprintf(note, sizeof note, "%zu %.40s values beyond half's range held at +-65504 (-t half)",
           clamped, image);
  add_note(notes, size, note);
}

/* The pass that feeds filter image `name` for a target, NULL when none;
 * non-zero return (err filled) when an explicit source is missing.  `guide`
 * is the image whose Blender passes are looked for (albedo for albedoA). */
static int guide_for(const cli_denoise_options* options, const cli_frame_files* files,
                     const frame_state* s, const cli_target* target, const char* name,
                     const char* guide, const lull_io_pass** pass, const lull_io_image** owner,
                     char* err, size_t err_size)
{
  int index = 0, family = 0;
  const cli_source* source = source_for(options, name, &index, &family);
  *pass = NULL;
  *owner = &s->input;
  if (!source) {
    *pass = cli_guide_pass(&s->input, guide, target->layer, target->view);
    return 0;
  }
  if (family) {
    /* the file's pass named as the bin, in the target's layer and view
     * where it has them; bins past the last one are not there */
    const lull_io_image* from = source->file[0] ? &s->sources[index] : &s->input;
    const char* path = source->file[0] ? files->sources[index] : files->input;
    *owner = from;
    const char* const layers[2] = {target->layer, NULL};
    for (int k = 0; !*pass && k < 2; ++k)
      *pass = cli_guide_pass(from, name, layers[k], target->view);
    if (!*pass && strcmp(name, "histogram0") == 0)
      snprintf(err, err_size, "%s: no pass 'histogram0' (the histograms are passes histogram0, "
                              "histogram1, ...: docs/rhf.md)",
               path);
    return !*pass && strcmp(name, "histogram0") == 0;
  }
  if (source->file[0]) {
    *owner = &s->sources[index];
    *pass = cli_file_pass(*owner, guide, target->layer, target->view);
    if (!*pass)
      snprintf(err, err_size, "%s: no pass for the %s image", files->sources[index], name);
    return *pass == NULL;
  }
  if (strcmp(source->pass, "none") == 0)
    return 0;
  *pass = cli_named_pass(&s->input, source->pass, target->layer, target->view);
  if (!*pass)
    snprintf(err, err_size, "%s: no pass '%s' (for the %s image)", files->input, source->pass,
             name);
  return *pass == NULL;
}

/* A guide (albedo, normal, depth, position, ...) of a target: none, one
 * pass, or two halves (pass[1] set). */
typedef struct feature
{
  char name[32];
  const lull_io_pass* pass[2];
  const lull_io_image* owner[2];
} feature;

/* Where, in messages: " in layer 'L'" (and view), or "". */
static void where_of(const lull_io_pass* pass, char* out, size_t size)
{
  out[0] = '\0';
  if (pass->layer[0] || pass->view[0])
    snprintf(out, size, " in layer '%s'%s%s%s", pass->layer, pass->view[0] ? ", view '" : "",
             pass->view, pass->view[0] ? "'" : "");
}

/* The passes of guide f->name for target t: from --pass/--image when given
 * (IMAGE, or IMAGEA and IMAGEB), else Blender's passes; for a target of
 * halves, each half's own pass where the halves have them (the same pass
 * of --half-b's file, or the pass's " A" and " B" halves in one file).
 * Non-zero (err filled) when a named source is missing or one half has a
 * guide the other lacks. */
static int feature_for(const cli_denoise_options* options, const cli_frame_files* files,
                       const frame_state* s, int t, feature* f, char* err, size_t err_size)
{
  const cli_target* target = &s->targets[t];
  f->pass[0] = f->pass[1] = NULL;
  char half_names[2][40];
  snprintf(half_names[0], sizeof half_names[0], "%.30sA", f->name);
  snprintf(half_names[1], sizeof half_names[1], "%.30sB", f->name);
  int index, family;
  const int named[2] = {source_for(options, half_names[0], &index, &family) != NULL,
                        source_for(options, half_names[1], &index, &family) != NULL};
  if (named[0] || named[1]) {
    if (!named[0] || !named[1]) {
      snprintf(err, err_size, "%s: --pass/--image %s needs %s too (the other half)", files->input,
               half_names[named[0] ? 0 : 1], half_names[named[0] ? 1 : 0]);
      return 1;
    }
    for (int h = 0; h < 2; ++h)
      if (guide_for(options, files, s, target, half_names[h], f->name, &f->pass[h], &f->owner[h],
                    err, err_size))
        return 1;
    if (!f->pass[0] || !f->pass[1]) /* --pass albedoA=none */
      f->pass[0] = f->pass[1] = NULL;
    return 0;
  }
  if (!s->color_b[t] || source_for(options, f->name, &index, &family))
    return guide_for(options, files, s, target, f->name, f->name, &f->pass[0], &f->owner[0], err,
                     err_size);
  char where[2 * LULL_IO_NAME_SIZE + 32];
  if (files->half_b[0]) {
    /* two files: the pass half A has, of the same name in half B */
    const lull_io_pass* a = cli_guide_pass(&s->input, f->name, target->layer, target->view);
    const lull_io_pass* b =
        a ? lull_io_find_pass_view(&s->half_b, a->layer, a->name, a->view)
          : cli_guide_pass(&s->half_b, f->name, target->layer, target->view);
    if (!a != !b) {
      const lull_io_pass* one = a ? a : b;
      where_of(one, where, sizeof where);
      snprintf(err, err_size,
               "%s (half %c) has no pass '%s'%s, %s (half %c) has: the halves must have the same "
               "passes",
               a ? files->half_b : files->input, a ? 'B' : 'A', one->name, where,
               a ? files->input : files->half_b, a ? 'A' : 'B');
      return 1;
    }
    f->pass[0] = a;
    f->pass[1] = b;
    f->owner[0] = &s->input;
    f->owner[1] = &s->half_b;
    return 0;
  }
  /* one file: "Denoising Albedo A" and "... B", else one for both */
  const lull_io_pass* a = cli_guide_half(&s->input, f->name, target->layer, target->view, 0);
  const lull_io_pass* b = cli_guide_half(&s->input, f->name, target->layer, target->view, 1);
  if (!a != !b) {
    const lull_io_pass* one = a ? a : b;
    char missing[LULL_IO_NAME_SIZE];
    snprintf(missing, sizeof missing, "%s", one->name);
    missing[strlen(missing) - 1] = a ? 'B' : 'A';
    where_of(one, where, sizeof where);
    snprintf(err, err_size, "%s: pass '%s'%s has no other half: no '%s'", files->input, one->name,
             where, missing);
    return 1;
  }
  f->owner[0] = f->owner[1] = &s->input;
  if (a) {
    f->pass[0] = a;
    f->pass[1] = b;
    return 0;
  }
  f->pass[0] = cli_guide_pass(&s->input, f->name, target->layer, target->view);
  return 0;
}

static void set_params(const char* filter_name, const cli_param* params, int num_params,
                       int hdr_mode, OIDNFilter filter, int integer_input)
{
  /* Files of integers (PNG, JPEG) hold sRGB-encoded LDR values; float files
   * (EXR, PFM, HDR) linear HDR radiance.  OIDN-style --hdr/--ldr say it, and
   * so do -p hdr=... and srgb=..., each for itself: -p srgb=0 had also
   * dropped the file's hdr, so a float render came out clamped to [0, 1]
   * (--hdr with --srgb then reaches the filter, which refuses the pair). */
  int user_hdr = -1, user_srgb = -1; /* -1: not given */
  for (int i = 0; i < num_params; ++i) {
    const cli_param* p = &params[i];
    if (strcmp(p->name, "hdr") == 0)
      user_hdr = p->value != 0;
    else if (strcmp(p->name, "srgb") == 0)
      user_srgb = p->value != 0;
  }
  if (cli_filter_has_param(filter_name, "hdr") && user_hdr < 0) {
    const int hdr = hdr_mode >= 0 ? hdr_mode : !integer_input && user_srgb != 1;
    oidnSetFilterBool(filter, "hdr", hdr);
    if (cli_filter_has_param(filter_name, "srgb") && hdr_mode < 0 && user_srgb < 0)
      oidnSetFilterBool(filter, "srgb", !hdr);
  }
  for (int i = 0; i < num_params; ++i) {
    const cli_param* p = &params[i];
    switch (p->type) {
      case LULL_PARAM_TYPE_BOOL: oidnSetFilterBool(filter, p->name, p->value != 0); break;
      case LULL_PARAM_TYPE_INT: oidnSetFilterInt(filter, p->name, (int)p->value); break;
      case LULL_PARAM_TYPE_FLOAT: oidnSetFilterFloat(filter, p->name, (float)p->value); break;
    }
  }
}

/* The guides a filter takes, in its order, each once: albedoA and albedoB
 * are the halves of albedo when the filter takes both.  Returns the count. */
static int filter_guides(const char* filter_name, int temporal, feature* out, int max)
{
  int count = 0;
  const int images = lullGetFilterImageCount(filter_name);
  for (int i = 0; i < images && count < max; ++i) {
    const char* name = lullGetFilterImageName(filter_name, i);
    if (!name || strncmp(name, "color", 5) == 0 || strncmp(name, "output", 6) == 0)
      continue;
    if (strcmp(name, "motion") == 0 && !temporal)
      continue; /* only temporal mode takes motion vectors */
    char base[32];
    const size_t n = strlen(name);
    if (n >= sizeof base)
      continue;
    memcpy(base, name, n + 1);
    if (n > 1 && (name[n - 1] == 'A' || name[n - 1] == 'B')) {
      char a[40], b[40];
      snprintf(a, sizeof a, "%.*sA", (int)(n - 1), name);
      snprintf(b, sizeof b, "%.*sB", (int)(n - 1), name);
      if (cli_filter_has_image(filter_name, a) && cli_filter_has_image(filter_name, b))
        base[n - 1] = '\0';
    }
    int seen = 0;
    for (int k = 0; k < count; ++k)
      seen |= strcmp(out[k].name, base) == 0;
    if (!seen) {
      memset(&out[count], 0, sizeof out[count]);
      memcpy(out[count++].name, base, strlen(base) + 1);
    }
  }
  return count;
}

static int compare_double(const void* a, const void* b)
{
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int denoise_target(const cli_denoise_options* options, const cli_frame_files* files,
                          OIDNDevice device, cli_temporal* temporal, frame_state* s, int t,
                          cli_progress* progress, char* err, size_t err_size)
{
  const cli_target* target = &s->targets[t];
  const lull_io_pass* color = &s->input.passes[s->color_index[t]];
  const int width = s->input.width, height = s->input.height;
  char context[CLI_PATH_SIZE + 300];
  snprintf(context, sizeof context, "%s%s%s%s%s", files->input, target->layer[0] ? ": layer " : "",
           target->layer, target->view[0] ? ", view " : "", target->view);

  /* halves found in a file may have a filter of their own (Regression) */
  const lull_io_pass* color_b = s->color_b[t];
  const char* filter_name = color_b ? options->halves_filter : options->filter;
  const cli_param* params = color_b ? options->halves_params : options->params;
  const int num_params = color_b ? options->num_halves_params : options->num_params;
  s->filter_names[t] = filter_name;
  if (color_b && options->halves_params_error[0]) {
    snprintf(err, err_size, "%s: %s", context, options->halves_params_error);
    return CLI_FAILED;
  }
  if (color_b && options->inplace) {
    snprintf(err, err_size,
             "%s: --inplace: two halves are two colour buffers; the output needs its own",
             context);
    return CLI_FAILED;
  }

  int status = CLI_FAILED;
  enum { MAX_IMAGES = 48 }; /* colour, halves, output and every guide: RHF's 32 bins */
  device_image images[MAX_IMAGES];
  int num_images = 0;
  device_image output;
  memset(&output, 0, sizeof output);
  /* temporal: the layer's and view's own filter, which keeps the history */
  OIDNFilter filter = temporal ? cli_temporal_filter(temporal, device, filter_name,
                                                     target->layer, target->view)
                               : oidnNewFilter(device, filter_name);
  if (!filter) {
    if (!device_error(device, context, err, err_size))
      snprintf(err, err_size, "%s: too many layers and views", context);
    return CLI_FAILED;
  }
  lull_io_file_info info;
  lull_io_get_file_info(&s->input, &info);
  set_params(filter_name, params, num_params, options->hdr_mode, filter, info.integer);
  if (temporal) {
    /* a kept filter forgets the last frame's images (a pass this frame
     * lacks must not be read from the last frame's buffer) */
    const int count = lullGetFilterImageCount(filter_name);
    for (int i = 0; i < count; ++i) {
      const char* name = lullGetFilterImageName(filter_name, i);
      if (name)
        oidnUnsetFilterImage(filter, name);
    }
    oidnSetFilterBool(filter, "temporal", true);
    /* the library checks the order of frames numbered from 0 on; the tool
     * has checked it already, and starts a new history where it must */
    oidnSetFilterInt(filter, "frame",
                     temporal->frame >= 0 && temporal->frame <= INT_MAX ? (int)temporal->frame
                                                                          : -1);
    oidnSetFilterBool(filter, "resetHistory", temporal->reset);
  }

  int color_channels[3], alpha;
  const int n = cli_pass_channels(color, color_channels, &alpha);
  if (n == 2 || n == 0) {
    snprintf(err, err_size, "%s: colour pass '%s' has %d colour channels (1 or 3 needed)", context,
             color->name, n);
    goto done;
  }
  s->guides[t][0] = '\0';
  size_t clamped = 0;
  /* the colour: one image, the two halves, or their mean for a filter that
   * takes no halves */
  const int takes_halves = color_b && cli_filter_has_image(filter_name, "colorA") &&
                           cli_filter_has_image(filter_name, "colorB");
  for (int h = 0; h < (takes_halves ? 2 : 1); ++h) {
    const lull_io_pass* pass = h ? color_b : color;
    if (upload(device, pass, takes_halves ? NULL : color_b, width, height, options->half,
               &images[num_images], &clamped)) {
      snprintf(err, err_size, "%s: cannot allocate the colour buffer", context);
      goto done;
    }
    note_clamped(s->notes[t], sizeof s->notes[t], "colour", clamped);
    const char* name = takes_halves ? (h ? "colorB" : "colorA") : "color";
    set_image(filter, name, &images[num_images++], width, height);
    if (takes_halves) {
      const size_t used = strlen(s->guides[t]);
      snprintf(s->guides[t] + used, sizeof s->guides[t] - used, "%s%s", used ? ", " : "", name);
    }
  }
  if (color_b && !takes_halves) {
    char note[160];
    snprintf(note, sizeof note, "the halves' mean: %s takes no colorA/colorB", filter_name);
    add_note(s->notes[t], sizeof s->notes[t], note);
  }

  /* every guide the filter accepts, from the files' passes */
  enum { MAX_GUIDES = 40 };
  feature guides[MAX_GUIDES];
  const int num_guides = filter_guides(filter_name, temporal != NULL, guides, MAX_GUIDES);
  int has_albedo = 0, any_halves = 0;
  for (int g = 0; g < num_guides; ++g) {
    if (feature_for(options, files, s, t, &guides[g], err, err_size))
      goto done;
    has_albedo |= strcmp(guides[g].name, "albedo") == 0 && guides[g].pass[0];
    any_halves |= guides[g].pass[1] != NULL;
  }
  int has_depth = 0;
  for (int g = 0; g < num_guides && num_images + 2 <= MAX_IMAGES; ++g) {
    feature* f = &guides[g];
    const char* name = f->name;
    if (!f->pass[0]) {
      if (strcmp(name, "motion") == 0)
        add_note(s->notes[t], sizeof s->notes[t], "no Vector pass: motion taken as zero");
      continue;
    }
    int explicit_source, family;
    if (strcmp(name, "normal") == 0 && strcmp(filter_name, "RT") == 0 &&
        !source_for(options, name, &explicit_source, &family) && !has_albedo) {
      /* OIDN's rule for RT: a normal only together with an albedo (a normal
       * the user named goes to the API, which says so) */
      add_note(s->notes[t], sizeof s->notes[t], "normal unused: RT takes it only with an albedo");
      continue;
    }
    if (strcmp(name, "position") == 0 && has_depth) {
      /* the filters' geometry guide is the depth when both are given */
      add_note(s->notes[t], sizeof s->notes[t], "position unused: the depth is the geometry guide");
      continue;
    }
    has_depth |= strcmp(name, "depth") == 0;
    for (int h = 0; h < 2; ++h)
      if (f->pass[h] && (f->owner[h]->width != width || f->owner[h]->height != height)) {
        snprintf(err, err_size, "%s: the %s image is %dx%d, the colour %dx%d", context, name,
                 f->owner[h]->width, f->owner[h]->height, width, height);
        goto done;
      }
    char half_names[2][40];
    snprintf(half_names[0], sizeof half_names[0], "%.30sA", name);
    snprintf(half_names[1], sizeof half_names[1], "%.30sB", name);
    const int takes_plain = cli_filter_has_image(filter_name, name);
    const int takes_pair = cli_filter_has_image(filter_name, half_names[0]) &&
                           cli_filter_has_image(filter_name, half_names[1]);
    /* halves as halves where the filter takes them (else their mean); one
     * pass once, or as both halves when other guides come in halves (a
     * filter may read its guides either all once or all in halves) */
    const int as_pair = takes_pair && (f->pass[1] || (any_halves && takes_halves) || !takes_plain);
    const int uploads = as_pair && f->pass[1] ? 2 : 1;
    for (int h = 0; h < uploads; ++h) {
      const lull_io_pass* second = !as_pair && f->pass[1] ? f->pass[1] : NULL; /* mean */
      if (second && f->pass[1]->channels != f->pass[0]->channels) {
        snprintf(err, err_size, "%s: the halves' %s passes have %d and %d channels", context,
                 name, f->pass[0]->channels, f->pass[1]->channels);
        goto done;
      }
      if (upload(device, f->pass[h], second, width, height, options->half, &images[num_images],
                 &clamped)) {
        snprintf(err, err_size, "%s: cannot allocate the %s buffer", context, name);
        goto done;
      }
      note_clamped(s->notes[t], sizeof s->notes[t], name, clamped);
      ++num_images;
    }
    const device_image* first = &images[num_images - uploads];
    const device_image* last = &images[num_images - 1];
    const size_t used = strlen(s->guides[t]);
    if (as_pair) {
      set_image(filter, half_names[0], first, width, height);
      set_image(filter, half_names[1], last, width, height);
      snprintf(s->guides[t] + used, sizeof s->guides[t] - used, "%s%s%s", used ? ", " : "", name,
               f->pass[1] ? " (halves)" : " (one for both halves)");
    } else {
      set_image(filter, name, first, width, height);
      snprintf(s->guides[t] + used, sizeof s->guides[t] - used, "%s%s%s", used ? ", " : "", name,
               f->pass[1] ? " (the halves' mean)" : "");
    }
  }

  if (options->inplace) {
    output = images[0]; /* the colour buffer, denoised in place */
    output.buffer = NULL;
  } else if (allocate(device, n, width, height, options->half, &output)) {
    snprintf(err, err_size, "%s: cannot allocate the output buffer", context);
    goto done;
  }
  set_image(filter, "output", options->inplace ? &images[0] : &output, width, height);

  monitor m = {progress, (double)t / s->num_targets, 1.0 / s->num_targets};
  oidnSetFilterProgressMonitorFunction(filter, on_progress, &m);
  oidnCommitFilter(filter);
  if (device_error(device, context, err, err_size))
    goto done;

  double times[64];
  const int runs = options->repeat < 1 ? 1 : options->repeat > 64 ? 64 : options->repeat;
  /* in place, each timed run starts from the noisy colour again: a run
   * filters its input, so without this the output would be filtered
   * `runs` times */
  unsigned char* noisy = NULL;
  if (options->inplace && runs > 1) {
    noisy = malloc(images[0].bytes);
    if (!noisy) {
      snprintf(err, err_size, "%s: out of memory", context);
      goto done;
    }
    oidnReadBuffer(images[0].buffer, 0, images[0].bytes, noisy);
  }
  OIDNError code = OIDN_ERROR_NONE;
  for (int r = 0; r < runs && code == OIDN_ERROR_NONE; ++r) {
    if (noisy && r > 0)
      oidnWriteBuffer(images[0].buffer, 0, images[0].bytes, noisy);
    const double start = now_seconds();
    oidnExecuteFilter(filter);
    times[r] = now_seconds() - start;
    code = device_error(device, context, err, err_size);
  }
  free(noisy);
  if (code) {
    if (code == OIDN_ERROR_CANCELLED)
      status = CLI_INTERRUPTED;
    goto done;
  }
  qsort(times, (size_t)runs, sizeof times[0], compare_double);
  s->seconds += times[runs / 2];
  if (runs > 1 && !options->quiet)
    cli_progress_message(progress, 0, "%s: filter %s: median %.3f ms over %d runs (min %.3f ms)",
                         context, filter_name, 1e3 * times[runs / 2], runs, 1e3 * times[0]);

  if (temporal && temporal->warmup) {
    status = CLI_OK; /* the history has it; nothing is written */
    goto done;
  }
  s->results[t] = download(options->inplace ? &images[0] : &output, width, height);
  s->result_channels[t] = n;
  if (!s->results[t]) {
    snprintf(err, err_size, "%s: out of memory", context);
    goto done;
  }
  status = CLI_OK;
done:
  if (status != CLI_OK && !err[0])
    snprintf(err, err_size, "%s: failed", context);
  if (!temporal)
    oidnReleaseFilter(filter);
  for (int i = 0; i < num_images; ++i)
    oidnReleaseBuffer(images[i].buffer);
  if (output.buffer)
    oidnReleaseBuffer(output.buffer);
  return status;
}

/* -- output ------------------------------------------------------------------------------ */

static int is_exr(const char* path)
{
  const char* slash = strrchr(path, '/');
  const char* dot = strrchr(path, '.');
  return dot && (!slash || dot > slash) && strcasecmp(dot, ".exr") == 0;
}

/* The noisy colour of a target: its colour pass, or the mean of its halves
 * (in half A's layout). */
static const lull_io_pass* noisy_pass(const frame_state* s, int t)
{
  return s->color_b[t] ? &s->mean[t] : &s->input.passes[s->color_index[t]];
}

/* A copy of the colour pass's data with its colour channels replaced. */
static float* merged(const lull_io_pass* color, const float* result, int n, size_t pixels)
{
  int channels[3], alpha;
  cli_pass_channels(color, channels, &alpha);
  const size_t count = pixels * (size_t)color->channels;
  float* data = malloc(count * sizeof(float));
  if (!data)
    return NULL;
  memcpy(data, color->data, count * sizeof(float));
  for (size_t i = 0; i < pixels; ++i)
    for (int k = 0; k < n; ++k)
      data[i * (size_t)color->channels + (size_t)channels[k]] = result[i * (size_t)n + (size_t)k];
  return data;
}

/* EXR: the input with the denoised passes added (or, for a plain image,
 * its colour replaced), so nothing of the input is lost. */
static int add_results(const cli_denoise_options* options, frame_state* s, const char* path,
                       char* err, size_t err_size)
{
  const size_t pixels = (size_t)s->input.width * (size_t)s->input.height;
  for (int t = 0; t < s->num_targets; ++t) {
    const lull_io_pass* color = noisy_pass(s, t);
    float* data = merged(color, s->results[t], s->result_channels[t], pixels);
    if (!data) {
      snprintf(err, err_size, "%s: out of memory", path);
      return 1;
    }
    if (!color->layer[0] && !color->name[0]) {
      lull_io_pass* plain = &s->input.passes[s->color_index[t]];
      free(plain->data);
      plain->data = data;
      continue;
    }
    lull_io_pass* existing =
        lull_io_find_pass_view(&s->input, color->layer, options->output_pass, color->view);
    /* lull's own pass from an earlier run is replaced; an input pass of
     * another name only with --overwrite: the output keeps every input pass
     * (Blender's Combined, say) unless asked */
    if (existing && strcmp(options->output_pass, "Denoised") != 0 && !options->overwrite) {
      free(data);
      snprintf(err, err_size,
               "%s: layer '%s' has a pass '%s' already: choose another --output-pass, or "
               "--overwrite to replace it", path, color->layer, options->output_pass);
      return 1;
    }
    if (existing && existing->channels == color->channels) { /* a second run replaces it */
      free(existing->data);
      existing->data = data;
      continue;
    }
    const int half = color->half;
    const char* names[LULL_IO_MAX_CHANNELS];
    for (int c = 0; c < color->channels; ++c)
      names[c] = color->channel_names[c];
    lull_io_pass* added =
        existing ? NULL
                 : lull_io_add_pass_view(&s->input, color->layer, options->output_pass,
                                         color->view, color->channels, names, data);
    free(data);
    if (!added) {
      snprintf(err, err_size, "%s: cannot add pass '%s' to layer '%s'%s", path,
               options->output_pass, color->layer,
               existing ? " (a pass of that name with other channels exists)" : "");
      return 1;
    }
    added->half = half; /* stored like the colour it comes from */
  }
  return 0;
}

static int write_output(const cli_denoise_options* options, const cli_frame_files* files,
                        frame_state* s, char* err, size_t err_size)
{
  lull_io_file_info info;
  lull_io_get_file_info(&s->input, &info);
  /* the filter's values are display-encoded when the input's were (8/16-bit
   * files): decoded for float outputs; linear ones encoded for 8-bit ones */
  const int srgb = info.integer ? LULL_IO_VALUES_DISPLAY : LULL_IO_VALUES_LINEAR;
  if (is_exr(files->output)) {
    if (add_results(options, s, files->output, err, err_size))
      return 1;
    return cli_write_file(files->output, &s->input, srgb, err, err_size);
  }
  /* one image: the denoised colour (with the input's alpha) */
  const lull_io_pass* color = noisy_pass(s, 0);
  const size_t pixels = (size_t)s->input.width * (size_t)s->input.height;
  float* data = merged(color, s->results[0], s->result_channels[0], pixels);
  if (data && s->input.num_passes == 1) {
    /* an input of one image is written as itself with its colour replaced,
     * so that a format it shares with the output keeps its depth (a 16-bit
     * PNG stays 16-bit) and attributes */
    free(s->input.passes[0].data);
    s->input.passes[0].data = data;
    return cli_write_file(files->output, &s->input, srgb, err, err_size);
  }
  lull_io_image out;
  memset(&out, 0, sizeof out);
  out.width = s->input.width;
  out.height = s->input.height;
  const char* names[LULL_IO_MAX_CHANNELS];
  for (int c = 0; c < color->channels; ++c)
    names[c] = color->channel_names[c];
  const int ok = data && lull_io_add_pass(&out, "", "", color->channels, names, data);
  free(data);
  const int status = ok ? cli_write_file(files->output, &out, srgb, err, err_size)
                        : (snprintf(err, err_size, "%s: out of memory", files->output), 1);
  lull_io_free(&out);
  return status;
}

/* -- metrics and pictures ----------------------------------------------------------------- */

static const lull_io_pass* reference_pass(const lull_io_image* reference, const cli_target* target)
{
  const lull_io_pass* pass = cli_color_pass(reference, target->layer, target->view);
  if (!pass)
    pass = cli_color_pass(reference, NULL, NULL);
  if (!pass && reference->num_passes == 1)
    pass = &reference->passes[0];
  return pass;
}

/* The side-by-side panels of a frame, kept until the output is written. */
typedef struct frame_panels
{
  float* rgb[3]; /* noisy, denoised, reference (NULL without one), linear */
} frame_panels;

static void free_panels(frame_panels* p)
{
  for (int k = 0; k < 3; ++k)
    free(p->rgb[k]);
  memset(p, 0, sizeof *p);
}

/* Prints the metrics against the reference and, with --side-by-side,
 * keeps the panels (written after the output: a frame that fails leaves
 * an existing side-by-side image as it was). */
static int report(const cli_frame_files* files, frame_state* s, frame_panels* panels, char* err,
                  size_t err_size)
{
  const int width = s->input.width, height = s->input.height;
  const lull_io_pass* color = noisy_pass(s, 0);
  const lull_io_pass* ref = NULL;
  if (files->reference[0]) {
    if (lull_io_read(files->reference, &s->reference, err, err_size))
      return 1;
    ref = reference_pass(&s->reference, &s->targets[0]);
    if (!ref) {
      snprintf(err, err_size, "%s: no colour pass", files->reference);
      return 1;
    }
    if (s->reference.width != width || s->reference.height != height) {
      snprintf(err, err_size, "%s is %dx%d, %s is %dx%d", files->reference, s->reference.width,
               s->reference.height, files->input, width, height);
      return 1;
    }
  }
  const size_t pixels = (size_t)width * (size_t)height;
  float* noisy = cli_pass_rgb(color, width, height);
  float* denoised = malloc(pixels * 3 * sizeof(float));
  float* reference = ref ? cli_pass_rgb(ref, width, height) : NULL;
  int status = !noisy || !denoised || (ref && !reference);
  if (status)
    snprintf(err, err_size, "%s: out of memory", files->input);
  if (!status) {
    const int n = s->result_channels[0];
    for (size_t i = 0; i < pixels; ++i)
      for (int c = 0; c < 3; ++c)
        denoised[i * 3 + (size_t)c] = s->results[0][i * (size_t)n + (size_t)(c < n ? c : 0)];
    /* 8/16-bit files hold display-encoded values (the filter ran with
     * srgb on them): linear for the metrics and the pictures */
    lull_io_file_info info, ref_info;
    lull_io_get_file_info(&s->input, &info);
    if (info.integer) {
      cli_decode_display(noisy, pixels * 3);
      cli_decode_display(denoised, pixels * 3);
    }
    if (reference) {
      lull_io_get_file_info(&s->reference, &ref_info);
      if (ref_info.integer)
        cli_decode_display(reference, pixels * 3);
      /* the first layer (and view) only: say which, when there are more */
      const cli_target* t = &s->targets[0];
      if (s->num_targets > 1)
        printf("%s [%s%s%s] against %s (the first of %d layers and views)\n", files->input,
               t->layer, t->view[0] ? "/" : "", t->view, files->reference, s->num_targets);
      else
        printf("%s against %s\n", files->input, files->reference);
      status = cli_print_metrics(stdout, "  noisy", noisy, reference, width, height) ||
               cli_print_metrics(stdout, "  denoised", denoised, reference, width, height);
      if (status)
        snprintf(err, err_size, "%s: out of memory", files->input);
      fflush(stdout);
    }
    if (!status && files->side_by_side[0]) {
      const frame_panels kept = {{noisy, denoised, reference}};
      *panels = kept;
      return 0; /* the panels own the pictures now */
    }
  }
  free(noisy);
  free(denoised);
  free(reference);
  return status;
}

/* -- the frame -------------------------------------------------------------------------------- */

/* Half B of each target from --half-b's file: the same size, the same
 * layers and views, and each target's colour pass under the same name. */
static int load_half_b(const cli_denoise_options* options, const cli_frame_files* files,
                       frame_state* s, char* err, size_t err_size)
{
  if (lull_io_read(files->half_b, &s->half_b, err, err_size))
    return 1;
  if (s->half_b.width != s->input.width || s->half_b.height != s->input.height) {
    snprintf(err, err_size,
             "the halves differ in size: %s (half A) is %dx%d, %s (half B) is %dx%d",
             files->input, s->input.width, s->input.height, files->half_b, s->half_b.width,
             s->half_b.height);
    return 1;
  }
  cli_target* other = malloc(CLI_MAX_TARGETS * sizeof *other);
  if (!other) {
    snprintf(err, err_size, "%s: out of memory", files->half_b);
    return 1;
  }
  const int count = cli_find_targets(&s->half_b, files->half_b,
                                     options->layer_given ? options->layer : NULL, options->view,
                                     options->color_pass, NULL, other, CLI_MAX_TARGETS, err,
                                     err_size);
  int status = count == 0;
  for (int t = 0; t < s->num_targets && !status; ++t) {
    const lull_io_pass* a = s->targets[t].color;
    s->color_b[t] = lull_io_find_pass_view(&s->half_b, a->layer, a->name, a->view);
    if (!s->color_b[t]) {
      char where[2 * LULL_IO_NAME_SIZE + 32];
      where_of(a, where, sizeof where);
      snprintf(err, err_size,
               "%s (half B) has no pass '%s'%s, %s (half A) has: the halves must have the same "
               "layers and passes",
               files->half_b, a->name, where, files->input);
      status = 1;
    }
  }
  for (int k = 0; k < count && !status; ++k) {
    int found = 0;
    for (int t = 0; t < s->num_targets; ++t)
      found |= strcmp(s->targets[t].layer, other[k].layer) == 0 &&
               strcmp(s->targets[t].view, other[k].view) == 0;
    if (!found) {
      snprintf(err, err_size,
               "%s (half B) has layer '%s'%s%s%s to denoise, %s (half A) has not: the halves "
               "must have the same layers and passes",
               files->half_b, other[k].layer, other[k].view[0] ? ", view '" : "", other[k].view,
               other[k].view[0] ? "'" : "", files->input);
      status = 1;
    }
  }
  free(other);
  return status;
}

/* The mean of a target's halves, in half A's layout: the noisy image of the
 * metrics and the base (alpha included) of the output pass. */
static int make_mean(const frame_state* s, int t, lull_io_pass* mean, const char* path, char* err,
                     size_t err_size)
{
  const lull_io_pass* a = s->targets[t].color;
  const lull_io_pass* b = s->color_b[t];
  int same = a->channels == b->channels;
  for (int c = 0; same && c < a->channels; ++c)
    same = strcmp(a->channel_names[c], b->channel_names[c]) == 0;
  if (!same) {
    snprintf(err, err_size, "%s: the halves' colour passes '%s' and '%s' have other channels (%d "
             "and %d)", path, a->name, b->name, a->channels, b->channels);
    return 1;
  }
  const size_t count = (size_t)s->input.width * (size_t)s->input.height * (size_t)a->channels;
  *mean = *a;
  mean->data = malloc(count * sizeof(float));
  if (!mean->data) {
    snprintf(err, err_size, "%s: out of memory", path);
    return 1;
  }
  for (size_t i = 0; i < count; ++i)
    mean->data[i] = 0.5f * (a->data[i] + b->data[i]);
  return 0;
}

static int load(const cli_denoise_options* options, const cli_frame_files* files, frame_state* s,
                char* err, size_t err_size)
{
  if (lull_io_read(files->input, &s->input, err, err_size))
    return 1;
  /* halves in the file: by --pass colorA/colorB's names, else by the
   * naming convention (not with --half-b, nor with --pass color=) */
  static const char* const convention[2] = {"", ""};
  const char* const named[2] = {options->half_pass[0], options->half_pass[1]};
  const char* const* halves = files->half_b[0] || options->color_pass[0] ? NULL
                              : named[0][0]                              ? named
                                                                         : convention;
  s->num_targets = cli_find_targets(&s->input, files->input,
                                    options->layer_given ? options->layer : NULL, options->view,
                                    options->color_pass, halves, s->targets, CLI_MAX_TARGETS,
                                    err, err_size);
  if (s->num_targets == 0)
    return 1;
  for (int t = 0; t < s->num_targets; ++t) {
    s->color_index[t] = (int)(s->targets[t].color - s->input.passes);
    s->color_b[t] = s->targets[t].color_b;
    const lull_io_pass* passes[2] = {s->targets[t].color, s->targets[t].color_b};
    for (int h = 0; h < 2; ++h)
      if (passes[h] && passes[h]->layer[0] && strcmp(passes[h]->name, options->output_pass) == 0) {
        snprintf(err, err_size, "%s: the output pass '%s' would replace the colour pass",
                 files->input, options->output_pass);
        return 1;
      }
  }
  if (!is_exr(files->output) && s->num_targets > 1) {
    snprintf(err, err_size,
             "%s holds one image, %s has %d layers/views to denoise: pick one with --layer "
             "and --view, or write an EXR",
             files->output, files->input, s->num_targets);
    return 1;
  }
  if (files->half_b[0] && load_half_b(options, files, s, err, err_size))
    return 1;
  for (int t = 0; t < s->num_targets; ++t)
    if (s->color_b[t] && make_mean(s, t, &s->mean[t], files->input, err, err_size))
      return 1;
  for (int i = 0; i < options->num_sources; ++i)
    if (options->sources[i].file[0] &&
        lull_io_read(files->sources[i], &s->sources[i], err, err_size))
      return 1;
  return 0;
}

/* Temporal mode's checks of a loaded frame: the size of the shot, and
 * the camera (a new one starts a new history). */
static int temporal_frame(cli_temporal* t, const cli_frame_files* files, const frame_state* s,
                          cli_progress* progress, int quiet, char* err, size_t err_size)
{
  if (cli_temporal_camera_changed(t, &s->input) && !t->reset) {
    t->reset = 1;
    if (!quiet)
      cli_progress_message(progress, 0, "%s: camera '%s': a new shot, a new history",
                           files->input, t->camera);
  }
  if (!t->reset && (s->input.width != t->width || s->input.height != t->height)) {
    snprintf(err, err_size,
             "%s is %dx%d, the frame before it %dx%d: --temporal needs one size per shot "
             "(--cut %ld starts a new one)",
             files->input, s->input.width, s->input.height, t->width, t->height, t->frame);
    return 1;
  }
  t->width = s->input.width;
  t->height = s->input.height;
  return 0;
}

int cli_denoise_frame(const cli_denoise_options* options, const cli_frame_files* files,
                      OIDNDevice device, cli_temporal* temporal, cli_progress* progress,
                      char* err, size_t err_size)
{
  err[0] = '\0';
  frame_state* s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, err_size, "%s: out of memory", files->input);
    return CLI_FAILED;
  }
  int status = load(options, files, s, err, err_size) ? CLI_FAILED : CLI_OK;
  if (status == CLI_OK && temporal &&
      temporal_frame(temporal, files, s, progress, options->quiet, err, err_size))
    status = CLI_FAILED;
  if (status == CLI_OK && cli_same_file(files->output, files->input)) {
    /* the input file as the output: only when it gains a pass (an EXR of
     * named passes), never when its colour would be replaced */
    int gains = is_exr(files->output);
    for (int t = 0; t < s->num_targets; ++t) {
      const lull_io_pass* color = &s->input.passes[s->color_index[t]];
      gains &= color->layer[0] || color->name[0];
    }
    lull_io_file_info info;
    lull_io_get_file_info(&s->input, &info);
    if (!gains) {
      snprintf(err, err_size, "%s: -o would replace its colour: choose another file",
               files->input);
      status = CLI_FAILED;
    } else if (info.mip_levels > 1) {
      /* only the first level is read, so the rewrite would lose the rest */
      snprintf(err, err_size,
               "%s has %d resolution levels (a texture), which -o onto it would drop: choose "
               "another file",
               files->input, info.mip_levels);
      status = CLI_FAILED;
    }
  }
  for (int t = 0; t < s->num_targets && status == CLI_OK; ++t)
    status = denoise_target(options, files, device, temporal, s, t, progress, err, err_size);
  const int warmup = temporal && temporal->warmup;
  if (status == CLI_OK && cli_interrupted())
    status = CLI_INTERRUPTED;
  /* metrics and pictures first: writing a plain image replaces its colour */
  frame_panels panels;
  memset(&panels, 0, sizeof panels);
  if (status == CLI_OK && !warmup && (files->reference[0] || files->side_by_side[0]) &&
      report(files, s, &panels, err, err_size))
    status = CLI_FAILED;
  if (status == CLI_OK && !warmup && write_output(options, files, s, err, err_size))
    status = CLI_FAILED;
  if (status == CLI_OK && panels.rgb[0]) {
    const float* rgb[3] = {panels.rgb[0], panels.rgb[1], panels.rgb[2]};
    static const int linear[3] = {0, 0, 0}; /* report() decoded 8-bit inputs */
    if (cli_write_panels(files->side_by_side, rgb, linear, rgb[2] ? 3 : 2, s->input.width,
                         s->input.height, err, err_size))
      status = CLI_FAILED;
  }
  free_panels(&panels);
  if (status == CLI_OK && warmup && !options->quiet)
    cli_progress_message(progress, 0, "%s: warm-up (history only, nothing written) %.2f s",
                         files->input, s->seconds);
  for (int t = 0; t < s->num_targets && status == CLI_OK && !options->quiet && !warmup; ++t) {
    char where[2 * LULL_IO_NAME_SIZE + 8] = "";
    if (s->targets[t].layer[0] || s->targets[t].view[0])
      snprintf(where, sizeof where, " [%s%s%s]", s->targets[t].layer,
               s->targets[t].view[0] ? "/" : "", s->targets[t].view);
    cli_progress_message(progress, 0, "%s%s -> %s (%s%s%s%s) %.2f s", files->input, where,
                         files->output, s->filter_names[t], s->guides[t][0] ? ": " : ", no guides",
                         s->guides[t], s->notes[t], s->seconds);
  }
  lull_io_free(&s->input);
  lull_io_free(&s->half_b);
  lull_io_free(&s->reference);
  for (int t = 0; t < CLI_MAX_TARGETS; ++t)
    free(s->mean[t].data);
  for (int i = 0; i < CLI_MAX_SOURCES; ++i)
    lull_io_free(&s->sources[i]);
  for (int t = 0; t < CLI_MAX_TARGETS; ++t)
    free(s->results[t]);
  free(s);
  return status;
}
