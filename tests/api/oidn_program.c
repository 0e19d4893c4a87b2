/* The drop-in proof: a program written only against Open Image Denoise's
 * documented C API, the way OIDN's own examples use it.  It includes
 * <OpenImageDenoise/oidn.h> and nothing of lull, is compiled by ctest with
 * the plain C compiler (cc -I<include> oidn_program.c -L<lib>
 * -lOpenImageDenoise) and runs against lull's libOpenImageDenoise.so.2.
 *
 *   oidn_program [-d default|cpu|cuda] [-b] COLOR.pfm ALBEDO.pfm NORMAL.pfm
 *                REFERENCE.pfm [OUTPUT.pfm]
 *
 * Denoises COLOR (HDR) with its albedo and normal through the "RT" filter
 * on the device asked for (default: OIDN_DEVICE_TYPE_DEFAULT) and exits 0
 * when the output is finite and closer to REFERENCE (relative MSE) than the
 * noisy input; 1 otherwise, 2 for bad arguments, files or API errors.
 * Images are the program's own memory (shared images) when the device can
 * read it, else OIDNBuffers; -b always uses buffers.
 * The PFM reader below is part of the program (a user's program brings its
 * own image I/O). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

typedef struct image
{
  int width, height;
  float* data; /* RGB, rows top to bottom */
} image;

/* Reads a 3-channel PFM ("PF"); PFM stores rows bottom to top, and a
 * negative scale means little-endian floats. */
static int read_pfm(const char* path, image* out)
{
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open\n", path);
    return 0;
  }
  char magic[3] = {0};
  int w = 0, h = 0;
  double scale = 0;
  if (fscanf(f, "%2s %d %d %lf", magic, &w, &h, &scale) != 4 || strcmp(magic, "PF") != 0 ||
      w <= 0 || h <= 0 || w > 65536 || h > 65536 || scale == 0 || fgetc(f) == EOF) {
    fprintf(stderr, "%s: not a 3-channel PFM\n", path);
    fclose(f);
    return 0;
  }
  const size_t n = (size_t)w * (size_t)h * 3;
  float* data = malloc(n * sizeof *data);
  unsigned char* raw = malloc(n * 4);
  int ok = data && raw && fread(raw, 4, n, f) == n;
  fclose(f);
  if (ok) {
    const unsigned probe = 1;
    const int host_little = *(const unsigned char*)&probe == 1;
    const int file_little = scale < 0;
    for (int y = 0; y < h; ++y)
      for (size_t i = 0; i < (size_t)w * 3; ++i) {
        unsigned char* b = raw + ((size_t)(h - 1 - y) * (size_t)w * 3 + i) * 4;
        unsigned char v[4] = {b[0], b[1], b[2], b[3]};
        if (host_little != file_little) {
          v[0] = b[3];
          v[1] = b[2];
          v[2] = b[1];
          v[3] = b[0];
        }
        memcpy(&data[(size_t)y * (size_t)w * 3 + i], v, 4);
      }
  } else {
    fprintf(stderr, "%s: truncated\n", path);
  }
  free(raw);
  if (!ok) {
    free(data);
    return 0;
  }
  out->width = w;
  out->height = h;
  out->data = data;
  return 1;
}

static int write_pfm(const char* path, const image* im)
{
  FILE* f = fopen(path, "wb");
  if (!f)
    return 0;
  const unsigned probe = 1;
  const int little = *(const unsigned char*)&probe == 1;
  fprintf(f, "PF\n%d %d\n%s\n", im->width, im->height, little ? "-1.0" : "1.0");
  int ok = 1;
  for (int y = im->height - 1; y >= 0 && ok; --y)
    ok = fwrite(im->data + (size_t)y * (size_t)im->width * 3, sizeof(float),
                (size_t)im->width * 3, f) == (size_t)im->width * 3;
  return fclose(f) == 0 && ok;
}

/* Relative MSE against the reference: mean of (x - r)^2 / (r^2 + 0.01). */
static double rel_mse(const image* x, const image* ref)
{
  const size_t n = (size_t)x->width * (size_t)x->height * 3;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = (double)x->data[i] - (double)ref->data[i];
    sum += d * d / ((double)ref->data[i] * (double)ref->data[i] + 0.01);
  }
  return sum / (double)n;
}

static void print_error(void* user, OIDNError code, const char* message)
{
  (void)user;
  fprintf(stderr, "OIDN error %d: %s\n", (int)code, message);
}

/* Images in OIDNBuffers: what a program does for a device that cannot read
 * its memory (or with -b). */
typedef struct buffers
{
  OIDNBuffer color, albedo, normal, output;
} buffers;

static OIDNBuffer upload(OIDNDevice device, const image* im)
{
  const size_t bytes = (size_t)im->width * (size_t)im->height * 3 * sizeof(float);
  OIDNBuffer buffer = oidnNewBuffer(device, bytes);
  oidnWriteBuffer(buffer, 0, bytes, im->data);
  return buffer;
}

static void set_image(OIDNFilter filter, const char* name, OIDNBuffer buffer, const image* im)
{
  const size_t w = (size_t)im->width, h = (size_t)im->height;
  if (buffer)
    oidnSetFilterImage(filter, name, buffer, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
  else
    oidnSetSharedFilterImage(filter, name, im->data, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0);
}

/* Denoises color with albedo and normal into output; returns 0, or prints
 * the first error and returns 2. */
static int denoise(OIDNDeviceType type, int use_buffers, const image* color, const image* albedo,
                   const image* normal, image* output)
{
  /* the documented sequence: device, commit, filter, images, commit, run */
  OIDNDevice device = oidnNewDevice(type);
  const char* message = NULL;
  if (!device || oidnGetDeviceError(NULL, &message) != OIDN_ERROR_NONE) {
    fprintf(stderr, "no device: %s\n", message ? message : "?");
    return 2;
  }
  oidnSetDeviceErrorFunction(device, print_error, NULL);
  oidnCommitDevice(device);
  use_buffers |= !oidnGetDeviceBool(device, "systemMemorySupported");
  printf("device type %d, OIDN API version %d, %s\n", oidnGetDeviceInt(device, "type"),
         oidnGetDeviceInt(device, "version"), use_buffers ? "buffers" : "shared images");

  buffers b = {NULL, NULL, NULL, NULL};
  if (use_buffers) {
    b.color = upload(device, color);
    b.albedo = upload(device, albedo);
    b.normal = upload(device, normal);
    b.output = upload(device, output);
  }
  OIDNFilter filter = oidnNewFilter(device, "RT");
  set_image(filter, "color", b.color, color);
  set_image(filter, "albedo", b.albedo, albedo);
  set_image(filter, "normal", b.normal, normal);
  set_image(filter, "output", b.output, output);
  oidnSetFilterBool(filter, "hdr", true);
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  if (use_buffers)
    oidnReadBuffer(b.output, 0, (size_t)output->width * (size_t)output->height * 3 * sizeof(float),
                   output->data);
  const OIDNError error = oidnGetDeviceError(device, &message);
  if (error != OIDN_ERROR_NONE)
    fprintf(stderr, "denoising failed: %s\n", message);
  oidnReleaseFilter(filter);
  if (use_buffers) {
    oidnReleaseBuffer(b.color);
    oidnReleaseBuffer(b.albedo);
    oidnReleaseBuffer(b.normal);
    oidnReleaseBuffer(b.output);
  }
  oidnReleaseDevice(device);
  return error == OIDN_ERROR_NONE ? 0 : 2;
}

static void usage(const char* program)
{
  fprintf(stderr,
          "usage: %s [-d default|cpu|cuda] [-b] COLOR.pfm ALBEDO.pfm NORMAL.pfm REFERENCE.pfm "
          "[OUTPUT.pfm]\n",
          program);
}

int main(int argc, char** argv)
{
  OIDNDeviceType type = OIDN_DEVICE_TYPE_DEFAULT;
  int use_buffers = 0, arg = 1;
  for (; arg < argc && argv[arg][0] == '-'; ++arg) {
    if (strcmp(argv[arg], "-b") == 0) {
      use_buffers = 1;
    } else if (strcmp(argv[arg], "-d") == 0 && arg + 1 < argc) {
      const char* name = argv[++arg];
      if (strcmp(name, "cpu") == 0) {
        type = OIDN_DEVICE_TYPE_CPU;
      } else if (strcmp(name, "cuda") == 0) {
        type = OIDN_DEVICE_TYPE_CUDA;
      } else if (strcmp(name, "default") != 0) {
        usage(argv[0]);
        return 2;
      }
    } else {
      usage(argv[0]);
      return 2;
    }
  }
  if (argc - arg < 4) {
    usage(argv[0]);
    return 2;
  }
  /* color, albedo, normal, reference, output */
  image im[5];
  memset(im, 0, sizeof im);
  int status = 2;
  for (int i = 0; i < 4; ++i)
    if (!read_pfm(argv[arg + i], &im[i]))
      goto done;
  const int w = im[0].width, h = im[0].height;
  for (int i = 1; i < 4; ++i)
    if (im[i].width != w || im[i].height != h) {
      fprintf(stderr, "image sizes differ\n");
      goto done;
    }
  im[4].width = w;
  im[4].height = h;
  im[4].data = calloc((size_t)w * (size_t)h * 3, sizeof(float));
  if (!im[4].data || denoise(type, use_buffers, &im[0], &im[1], &im[2], &im[4]) != 0)
    goto done;

  const size_t n = (size_t)w * (size_t)h * 3;
  size_t non_finite = 0;
  for (size_t i = 0; i < n; ++i)
    non_finite += !isfinite(im[4].data[i]);
  const double before = rel_mse(&im[0], &im[3]), after = rel_mse(&im[4], &im[3]);
  printf("%dx%d: relMSE noisy %.6f, denoised %.6f (%.1fx lower), non-finite pixels %lu\n", w, h,
         before, after, after > 0 ? before / after : INFINITY, (unsigned long)non_finite);
  if (argc - arg > 4 && !write_pfm(argv[arg + 4], &im[4]))
    fprintf(stderr, "%s: cannot write\n", argv[arg + 4]);
  status = non_finite == 0 && after < before ? 0 : 1;
done:
  for (int i = 0; i < 5; ++i)
    free(im[i].data);
  return status;
}
