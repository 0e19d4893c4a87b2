/* A complete denoising program written against Open Image Denoise's C API
 * only: it compiles and runs unchanged against lull's libOpenImageDenoise
 * or Intel's.  Images are PFM files, read and written with the C library
 * alone (a real program brings its own image I/O).
 *
 *   denoise_oidn [-d default|cpu|cuda] [-f FILTER] (--hdr | --ldr) COLOR.pfm
 *                [--alb ALBEDO.pfm [--nrm NORMAL.pfm]] -o OUTPUT.pfm
 *
 * The flags are those of OIDN's own oidnDenoise.  --hdr: linear colour
 * (a render); --ldr: colour in [0, 1].  The filter is "RT" unless -f names
 * another (lull's "ATrous", ...; `lull filters` lists them).  The output
 * replaces OUTPUT.pfm only when everything worked.
 *
 * Exit status: 0 denoised, 1 a file or the denoiser failed, 2 bad usage.
 *
 * Build (see the README):
 *   cc examples/denoise_oidn.c -I<prefix>/include -L<prefix>/lib \
 *      -lOpenImageDenoise -Wl,-rpath,<prefix>/lib -o denoise_oidn */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

enum { EXIT_USAGE = 2, MAX_SIDE = 65536 };

typedef struct image
{
  int width, height;
  float* rgb; /* width * height * 3 floats, rows top to bottom */
} image;

/* -- PFM files ------------------------------------------------------------------ */

/* Whether this machine stores floats little-endian. */
static int little_endian(void)
{
  const unsigned one = 1;
  return *(const unsigned char*)&one == 1;
}

/* Reads a PFM file: "PF" (RGB) or "Pf" (grey, read as RGB), width,
 * height, scale (negative: little-endian), one whitespace character, then
 * the rows bottom to top.  Returns 1, or 0 after printing why. */
static int read_pfm(const char* path, image* out)
{
  FILE* f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 0;
  }
  /* the header: four tokens, then one whitespace character */
  char magic[8] = "", width[16] = "", height[16] = "", scale_text[64] = "";
  const int tokens = fscanf(f, "%7s %15s %15s %63s", magic, width, height, scale_text);
  const int separator = fgetc(f);
  const int channels = strcmp(magic, "PF") == 0 ? 3 : strcmp(magic, "Pf") == 0 ? 1 : 0;
  char* end = NULL;
  const double scale = strtod(scale_text, &end);
  if (tokens != 4 || !channels || *end || scale == 0.0 ||
      (separator != '\n' && separator != ' ' && separator != '\r')) {
    fprintf(stderr, "%s: not a PFM file\n", path);
    fclose(f);
    return 0;
  }
  const long w = strtol(width, &end, 10);
  const int width_ok = !*end;
  const long h = strtol(height, &end, 10);
  if (!width_ok || *end || w <= 0 || h <= 0 || w > MAX_SIDE || h > MAX_SIDE) {
    fprintf(stderr, "%s: unsupported size %s x %s\n", path, width, height);
    fclose(f);
    return 0;
  }
  const size_t pixels = (size_t)w * (size_t)h;
  const size_t values = pixels * (size_t)channels;
  float* file_values = malloc(values * sizeof(float));
  float* rgb = malloc(pixels * 3 * sizeof(float));
  if (!file_values || !rgb) {
    fprintf(stderr, "%s: out of memory for %ld x %ld pixels\n", path, w, h);
    free(file_values);
    free(rgb);
    fclose(f);
    return 0;
  }
  const size_t read = fread(file_values, sizeof(float), values, f);
  fclose(f);
  if (read != values) {
    fprintf(stderr, "%s: truncated (%zu of %zu values)\n", path, read, values);
    free(file_values);
    free(rgb);
    return 0;
  }
  const int swap = (scale < 0.0) != little_endian();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        /* the file's row y is the image's row h - 1 - y */
        const size_t from = ((size_t)(h - 1 - y) * (size_t)w + (size_t)x) * (size_t)channels +
                            (size_t)(channels == 3 ? c : 0);
        unsigned char bytes[4];
        memcpy(bytes, &file_values[from], 4);
        if (swap) {
          unsigned char t = bytes[0];
          bytes[0] = bytes[3];
          bytes[3] = t;
          t = bytes[1];
          bytes[1] = bytes[2];
          bytes[2] = t;
        }
        memcpy(&rgb[((size_t)y * (size_t)w + (size_t)x) * 3 + (size_t)c], bytes, 4);
      }
  free(file_values);
  out->width = (int)w;
  out->height = (int)h;
  out->rgb = rgb;
  return 1;
}

/* Writes an RGB PFM next to `path` and renames it over `path` only when
 * every byte is written, so that a failure leaves an existing file as it
 * was.  Returns 1, or 0 after printing why. */
static int write_pfm(const char* path, const image* im)
{
  const size_t length = strlen(path);
  char* partial = malloc(length + sizeof ".partial");
  if (!partial) {
    fprintf(stderr, "%s: out of memory\n", path);
    return 0;
  }
  memcpy(partial, path, length);
  memcpy(partial + length, ".partial", sizeof ".partial");
  FILE* f = fopen(partial, "wb");
  if (!f) {
    perror(partial);
    free(partial);
    return 0;
  }
  int ok = fprintf(f, "PF\n%d %d\n%s\n", im->width, im->height,
                   little_endian() ? "-1.0" : "1.0") > 0;
  const size_t row = (size_t)im->width * 3;
  for (int y = im->height - 1; y >= 0 && ok; --y)
    ok = fwrite(im->rgb + (size_t)y * row, sizeof(float), row, f) == row;
  ok = (fclose(f) == 0) && ok;
  if (ok && rename(partial, path) != 0) {
    perror(path);
    ok = 0;
  } else if (!ok) {
    fprintf(stderr, "%s: cannot write the file\n", partial);
  }
  if (!ok)
    remove(partial);
  free(partial);
  return ok;
}

/* -- denoising ------------------------------------------------------------------ */

typedef struct options
{
  const char* device;  /* "default", "cpu" or "cuda" */
  const char* filter;  /* "RT" unless -f */
  const char* color;
  const char* albedo;  /* NULL: none */
  const char* normal;
  const char* output;
  int hdr;
} options;

/* Prints the device's pending error, if any; returns 1 when there was one. */
static int failed(OIDNDevice device, const char* what)
{
  const char* message = NULL;
  const OIDNError code = oidnGetDeviceError(device, &message);
  if (code == OIDN_ERROR_NONE)
    return 0;
  fprintf(stderr, "%s failed: %s (OIDN error %d)\n", what, message ? message : "no message",
          (int)code);
  return 1;
}

static OIDNDeviceType device_type(const char* name)
{
  if (strcmp(name, "cpu") == 0)
    return OIDN_DEVICE_TYPE_CPU;
  if (strcmp(name, "cuda") == 0)
    return OIDN_DEVICE_TYPE_CUDA;
  return OIDN_DEVICE_TYPE_DEFAULT;
}

/* Copies an image into a new buffer on the device; NULL after an error. */
static OIDNBuffer upload(OIDNDevice device, const image* im)
{
  const size_t bytes = (size_t)im->width * (size_t)im->height * 3 * sizeof(float);
  OIDNBuffer buffer = oidnNewBuffer(device, bytes);
  if (failed(device, "allocating a buffer"))
    return NULL;
  oidnWriteBuffer(buffer, 0, bytes, im->rgb);
  if (failed(device, "copying an image to the device")) {
    oidnReleaseBuffer(buffer);
    return NULL;
  }
  return buffer;
}

/* Denoises images[0] (colour) with images[1] (albedo) and images[2]
 * (normal) where they have pixels, into images[0].  Returns 1 on success. */
static int denoise(const options* o, image images[3])
{
  OIDNDevice device = oidnNewDevice(device_type(o->device));
  if (!device) {
    failed(NULL, "creating the device"); /* NULL: the error of a failed creation */
    return 0;
  }
  oidnCommitDevice(device);
  if (failed(device, "starting the device")) {
    oidnReleaseDevice(device);
    return 0;
  }
  static const char* const names[3] = {"color", "albedo", "normal"};
  OIDNBuffer buffers[3] = {NULL, NULL, NULL};
  OIDNFilter filter = oidnNewFilter(device, o->filter);
  int ok = !failed(device, "creating the filter");
  const size_t w = (size_t)images[0].width, h = (size_t)images[0].height;
  for (int i = 0; i < 3 && ok; ++i) {
    if (!images[i].rgb)
      continue;
    ok = (buffers[i] = upload(device, &images[i])) != NULL;
    if (ok)
      oidnSetFilterImage(filter, names[i], buffers[i], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  }
  if (ok) {
    /* in place: the colour's buffer receives the result */
    oidnSetFilterImage(filter, "output", buffers[0], OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
    oidnSetFilterBool(filter, "hdr", o->hdr);
    oidnCommitFilter(filter);
    ok = !failed(device, "setting up the filter");
  }
  if (ok) {
    oidnExecuteFilter(filter);
    ok = !failed(device, "denoising");
  }
  if (ok) {
    oidnReadBuffer(buffers[0], 0, w * h * 3 * sizeof(float), images[0].rgb);
    ok = !failed(device, "reading the result");
  }
  if (filter)
    oidnReleaseFilter(filter);
  for (int i = 0; i < 3; ++i)
    if (buffers[i])
      oidnReleaseBuffer(buffers[i]);
  oidnReleaseDevice(device);
  return ok;
}

/* -- the command line -------------------------------------------------------------- */

/* Prints the usage, after `problem` when there is one ("": said already);
 * returns the exit status. */
static int usage(const char* problem)
{
  if (problem && *problem)
    fprintf(stderr, "denoise_oidn: %s\n", problem);
  fprintf(problem ? stderr : stdout,
          "usage: denoise_oidn [-d default|cpu|cuda] [-f FILTER] (--hdr | --ldr) COLOR.pfm\n"
          "                    [--alb ALBEDO.pfm [--nrm NORMAL.pfm]] -o OUTPUT.pfm\n");
  return problem ? EXIT_USAGE : EXIT_SUCCESS;
}

/* Parses the arguments; returns -1 to go on, else the exit status. */
static int parse(int argc, char** argv, options* o)
{
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
      return usage(NULL);
    const char** value = NULL;
    if (strcmp(arg, "-d") == 0 || strcmp(arg, "--device") == 0)
      value = &o->device;
    else if (strcmp(arg, "-f") == 0 || strcmp(arg, "--filter") == 0)
      value = &o->filter;
    else if (strcmp(arg, "--hdr") == 0 || strcmp(arg, "--ldr") == 0)
      value = &o->color;
    else if (strcmp(arg, "--alb") == 0)
      value = &o->albedo;
    else if (strcmp(arg, "--nrm") == 0)
      value = &o->normal;
    else if (strcmp(arg, "-o") == 0)
      value = &o->output;
    if (!value) {
      fprintf(stderr, "denoise_oidn: unknown argument '%s'\n", arg);
      return usage("");
    }
    if (i + 1 >= argc || !argv[i + 1][0]) {
      fprintf(stderr, "denoise_oidn: %s needs a value\n", arg);
      return usage("");
    }
    if (value == &o->color)
      o->hdr = strcmp(arg, "--hdr") == 0;
    *value = argv[++i];
  }
  if (!o->color)
    return usage("the colour image is missing (--hdr or --ldr)");
  if (!o->output)
    return usage("the output is missing (-o)");
  if (o->normal && !o->albedo)
    return usage("--nrm needs --alb (as in OIDN, the normal guides only with the albedo)");
  if (strcmp(o->device, "default") != 0 && strcmp(o->device, "cpu") != 0 &&
      strcmp(o->device, "cuda") != 0)
    return usage("-d takes default, cpu or cuda");
  return -1;
}

int main(int argc, char** argv)
{
  options o = {"default", "RT", NULL, NULL, NULL, NULL, 1};
  const int parsed = parse(argc, argv, &o);
  if (parsed >= 0)
    return parsed;

  const char* paths[3] = {o.color, o.albedo, o.normal};
  image images[3] = {{0, 0, NULL}, {0, 0, NULL}, {0, 0, NULL}};
  int ok = 1;
  for (int i = 0; i < 3 && ok; ++i) {
    if (!paths[i])
      continue;
    ok = read_pfm(paths[i], &images[i]);
    if (ok && (images[i].width != images[0].width || images[i].height != images[0].height)) {
      fprintf(stderr, "%s is %d x %d, but %s is %d x %d\n", paths[i], images[i].width,
              images[i].height, paths[0], images[0].width, images[0].height);
      ok = 0;
    }
  }
  ok = ok && denoise(&o, images);
  ok = ok && write_pfm(o.output, &images[0]);
  if (ok)
    printf("denoise_oidn: wrote %s (%d x %d)\n", o.output, images[0].width, images[0].height);
  for (int i = 0; i < 3; ++i)
    free(images[i].rgb);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
