/* libFuzzer harness: sequences of OIDN API calls decoded from the input.
 *
 * Each input is a program: every call takes an opcode byte and its
 * arguments from the following bytes (filter types, image and parameter
 * names come from lull.h's introspection, so new filters are fuzzed
 * without changing this file; unknown names are mixed in).  Objects live
 * in a few slots: two CPU devices, four buffers, four filters, and three
 * host arenas for shared images.  Images are small (at most 16 x 16) so a
 * run of every filter type is cheap; sizes the library must refuse (over
 * 65536 per side, overflowing, bad formats and strides) are mixed in.
 *
 * Properties checked (abort() = a finding, besides the sanitizers):
 *   - every error is one of OIDN's codes with a non-empty message, both in
 *     the error slots and in the error callback;
 *   - images the library must refuse (a side over 65536, an unknown
 *     format, a non-zero stride below the pixel or row size) are refused
 *     with OIDN_ERROR_INVALID_ARGUMENT;
 *   - an execution writes only the bytes of its output images' pixels
 *     (images whose names start with "output": "output", Poisson's
 *     "outputVariance"): every other byte of every arena and buffer is
 *     unchanged (a filter "never writes outside the output it was given");
 *   - a progress callback that cancels gives OIDN_ERROR_CANCELLED or a
 *     finished run, never another error (but for the refused sync of an
 *     asynchronous run on a device changed since its commit);
 *   - releasing everything leaves no error and no leak (LeakSanitizer).
 *
 * Shared images are only set when they fit their arena, or when the
 * library must refuse them without touching memory: the library cannot
 * know the size of memory it is given, so anything else would be this
 * harness's overflow, not a finding. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>
#include <lull.h>

enum
{
  DEVICES = 2,
  BUFFERS = 4,
  FILTERS = 4,
  ARENAS = 3,
  ARENA_BYTES = 16 * 16 * 32 + 256, /* 16 x 16 pixels of 32 bytes, plus offsets */
  OUTPUTS = 4,                      /* output images of one filter, at most */
  MAX_CALLS = 64,
  MAX_ITERATIONS = 12, /* level counts (execution time stays small) */
  MAX_SOLVER_ITERATIONS = 4, /* IRLS steps and CG iterations */
};

typedef struct reader
{
  const uint8_t* p;
  size_t n;
} reader;

static unsigned take(reader* r)
{
  if (r->n == 0)
    return 0;
  --r->n;
  return *r->p++;
}

static unsigned take_u32(reader* r)
{
  unsigned v = 0;
  for (int i = 0; i < 4; ++i)
    v = v << 8 | take(r);
  return v;
}

static unsigned pick(reader* r, unsigned n)
{
  return take(r) % n;
}

/* Where an output image lies, to check what an execution may write. */
typedef struct image_place
{
  int set;
  unsigned char* base; /* first byte of pixel (0, 0) */
  OIDNFormat format;
  size_t width, height, pixel_stride, row_stride;
} image_place;

typedef struct world
{
  OIDNDevice devices[DEVICES];
  int device_dirty[DEVICES]; /* a parameter set after the last good commit */
  OIDNBuffer buffers[BUFFERS];
  int buffer_device[BUFFERS];
  OIDNFilter filters[FILTERS];
  int filter_device[FILTERS];
  image_place output[FILTERS][OUTPUTS];
  const char* output_name[FILTERS][OUTPUTS];
  const char* type[FILTERS]; /* OIDN cannot tell a filter's type: remembered */
  int monitored[FILTERS];    /* a progress monitor is set */
  int progress[FILTERS][2];  /* progress calls so far; cancel after this many (-1 never) */
  unsigned char* arena[ARENAS];
} world;

static void error_callback(void* user, OIDNError code, const char* message)
{
  (void)user;
  if (code < OIDN_ERROR_UNKNOWN || code > OIDN_ERROR_CANCELLED || !message || !*message)
    abort();
}

/* Reads and clears the error of a device (NULL: the global slot). */
static OIDNError take_error(OIDNDevice device)
{
  const char* message = NULL;
  const OIDNError code = oidnGetDeviceError(device, &message);
  if (code == OIDN_ERROR_NONE)
    return code;
  if (code < OIDN_ERROR_UNKNOWN || code > OIDN_ERROR_CANCELLED || !message || !*message) {
    fprintf(stderr, "fuzz_api: bad error code %d\n", (int)code);
    abort();
  }
  return code;
}

static bool progress(void* user, double done)
{
  int* state = user; /* world.progress[slot] */
  if (!(done >= 0.0 && done <= 1.0)) {
    fprintf(stderr, "fuzz_api: progress %g outside [0, 1]\n", done);
    abort();
  }
  ++state[0];
  return state[1] < 0 || state[0] <= state[1];
}

/* -- names ---------------------------------------------------------------------- */

static const char* type_name(reader* r)
{
  const int n = lullGetFilterTypeCount();
  const unsigned i = pick(r, (unsigned)n + 2);
  if ((int)i < n)
    return lullGetFilterTypeName((int)i);
  return i == (unsigned)n ? "Bogus" : "";
}

static const char* image_name(const world* w, reader* r, int slot)
{
  const char* type = w->type[slot] ? w->type[slot] : "RT";
  const int n = lullGetFilterImageCount(type);
  const unsigned i = pick(r, (unsigned)(n > 0 ? n : 0) + 1);
  return (int)i < n ? lullGetFilterImageName(type, (int)i) : "bogus";
}

static const char* param_name(const world* w, reader* r, int slot)
{
  static const char* const extra[] = {"bogus", "hdrScale", "alignment", "overlap"};
  const char* type = w->type[slot] ? w->type[slot] : "RT";
  const int n = lullGetFilterParamCount(type);
  const unsigned i = pick(r, (unsigned)(n > 0 ? n : 0) + 4);
  if ((int)i < n) {
    LullParamInfo info;
    if (lullGetFilterParamInfo(type, (int)i, &info))
      return info.name;
  }
  return extra[(i - (unsigned)(n > 0 ? n : 0)) % 4];
}

/* -- values ---------------------------------------------------------------------- */

static OIDNFormat format_value(reader* r)
{
  static const OIDNFormat formats[] = {
      OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT, OIDN_FORMAT_FLOAT2, OIDN_FORMAT_FLOAT4,
      OIDN_FORMAT_HALF3,  OIDN_FORMAT_HALF,  OIDN_FORMAT_HALF2,  OIDN_FORMAT_HALF4,
      OIDN_FORMAT_UNDEFINED, (OIDNFormat)5, (OIDNFormat)256, (OIDNFormat)261, (OIDNFormat)-1};
  return formats[pick(r, sizeof formats / sizeof formats[0])];
}

static size_t side_value(reader* r)
{
  static const size_t sides[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 0,
                                 65536, 65537, (size_t)1 << 31, (size_t)1 << 32, SIZE_MAX};
  return sides[pick(r, sizeof sides / sizeof sides[0])];
}

static size_t stride_value(reader* r, size_t natural)
{
  switch (pick(r, 8)) {
    case 0: case 1: case 2: return 0; /* tightly packed */
    case 3: return natural;
    case 4: return natural + 4;
    case 5: return natural > 1 ? natural - 1 : 1; /* too small */
    case 6: return SIZE_MAX / 2;
    default: return natural * 2;
  }
}

static size_t offset_value(reader* r)
{
  static const size_t offsets[] = {0, 0, 4, 6, 64, 250, SIZE_MAX - 8, SIZE_MAX};
  return offsets[pick(r, sizeof offsets / sizeof offsets[0])];
}

static int int_value(reader* r, const char* name)
{
  static const int ints[] = {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, -1, -2, 1000, INT32_MAX, INT32_MIN};
  int v = pick(r, 4) ? ints[pick(r, sizeof ints / sizeof ints[0])] : (int)take_u32(r);
  /* counts of levels and solver iterations: valid and invalid ones, but no
   * run of a million iterations (the range check is fuzzed all the same
   * through the small values and -1, 0) */
  if (strstr(name, "terations") && v > MAX_ITERATIONS)
    v = (v & 1) ? MAX_ITERATIONS + 1 : (int)((unsigned)v % (MAX_ITERATIONS + 1));
  /* the solvers' counts multiply (three candidates x IRLS steps x CG
   * iterations of a 41-tap stencil): smaller still */
  if ((strstr(name, "cgIterations") || strstr(name, "irlsIterations")) && v > MAX_SOLVER_ITERATIONS)
    v = (v & 1) ? MAX_SOLVER_ITERATIONS + 1 : (int)((unsigned)v % (MAX_SOLVER_ITERATIONS + 1));
  return v;
}

static float float_value(reader* r)
{
  static const float floats[] = {0.0f, -0.0f, 1.0f, 0.5f, 2.0f, 4.0f, -1.0f, 1e-6f,
                                 1e-30f, 341.0f, 342.0f, 1e30f, 3.4e38f, INFINITY, -INFINITY,
                                 NAN};
  if (pick(r, 4))
    return floats[pick(r, sizeof floats / sizeof floats[0])];
  const uint32_t bits = take_u32(r);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* -- images ---------------------------------------------------------------------- */

static size_t format_size(OIDNFormat f)
{
  switch (f) {
    case OIDN_FORMAT_FLOAT: return 4;
    case OIDN_FORMAT_FLOAT2: return 8;
    case OIDN_FORMAT_FLOAT3: return 12;
    case OIDN_FORMAT_FLOAT4: return 16;
    case OIDN_FORMAT_HALF: return 2;
    case OIDN_FORMAT_HALF2: return 4;
    case OIDN_FORMAT_HALF3: return 6;
    case OIDN_FORMAT_HALF4: return 8;
    default: return 0;
  }
}

/* 1 when OIDN's rules refuse the image whatever memory it points to. */
static int must_refuse(OIDNFormat format, size_t w, size_t h, size_t pixel, size_t row)
{
  const size_t size = format_size(format);
  if (size == 0 || w > 65536 || h > 65536)
    return 1;
  if (pixel != 0 && pixel < size)
    return 1;
  const size_t effective = pixel ? pixel : size;
  return row != 0 && row < w * effective;
}

/* Bytes from the first byte of an accepted image to one past its last, or
 * SIZE_MAX when it would not fit any memory. */
static size_t image_span(OIDNFormat format, size_t w, size_t h, size_t* pixel, size_t* row)
{
  const size_t size = format_size(format);
  if (*pixel == 0)
    *pixel = size;
  if (*pixel > SIZE_MAX / 65536 || w > 65536 || h > 65536)
    return SIZE_MAX;
  if (*row == 0)
    *row = w * *pixel;
  if (*row > SIZE_MAX / 65536 / 2)
    return SIZE_MAX;
  if (w == 0 || h == 0)
    return 0;
  return (h - 1) * *row + (w - 1) * *pixel + size;
}

/* The record of output image `name` of filter `slot`; NULL for inputs. */
static image_place* output_place(world* w, int slot, const char* name)
{
  if (strncmp(name, "output", 6) != 0)
    return NULL;
  for (int i = 0; i < OUTPUTS; ++i)
    if (!w->output_name[slot][i] || strcmp(w->output_name[slot][i], name) == 0) {
      w->output_name[slot][i] = name;
      return &w->output[slot][i];
    }
  abort(); /* more outputs than OUTPUTS: raise it */
}

static void set_image(world* w, reader* r, int slot, int shared)
{
  OIDNFilter filter = w->filters[slot];
  const char* name = image_name(w, r, slot);
  const OIDNFormat format = format_value(r);
  const size_t width = side_value(r), height = side_value(r);
  size_t pixel = stride_value(r, format_size(format));
  size_t row = stride_value(r, width * (pixel ? pixel : format_size(format)));
  size_t offset = offset_value(r);
  const int refuse = must_refuse(format, width, height, pixel, row);
  unsigned char* base = NULL; /* pixel (0, 0), once accepted */
  size_t ep = pixel, er = row;
  const size_t span = image_span(format, width, height, &ep, &er);
  OIDNDevice device = filter ? w->devices[w->filter_device[slot]] : NULL;

  if (shared) {
    unsigned char* arena = w->arena[pick(r, ARENAS)];
    if (!refuse && (offset > ARENA_BYTES || span > ARENA_BYTES - offset))
      return; /* would overflow the arena: this harness's bug, not lull's */
    if (refuse)
      offset = 0;
    oidnSetSharedFilterImage(filter, name, arena, format, width, height, offset, pixel, row);
    base = arena;
  } else {
    const int b = (int)pick(r, BUFFERS + 1);
    OIDNBuffer buffer = b < BUFFERS ? w->buffers[b] : NULL;
    oidnSetFilterImage(filter, name, buffer, format, width, height, offset, pixel, row);
    base = buffer ? (unsigned char*)oidnGetBufferData(buffer) : NULL;
  }
  const OIDNError code = take_error(device);
  if (filter && refuse && code != OIDN_ERROR_INVALID_ARGUMENT) {
    fprintf(stderr, "fuzz_api: image %zux%zu format %d strides %zu/%zu gave error %d\n", width,
            height, (int)format, pixel, row, (int)code);
    abort();
  }
  image_place* out = output_place(w, slot, name);
  if (filter && code == OIDN_ERROR_NONE && out) {
    out->set = width > 0 && height > 0;
    out->base = base + offset; /* accepted: inside the buffer or arena */
    out->format = format;
    out->width = width;
    out->height = height;
    out->pixel_stride = ep;
    out->row_stride = er;
  }
}

/* 1 when byte p belongs to a pixel of image `out`. */
static int in_image(const image_place* out, const unsigned char* p)
{
  if (!out->set || p < out->base)
    return 0;
  const size_t rel = (size_t)(p - out->base);
  const size_t y = rel / out->row_stride, in_row = rel % out->row_stride;
  const size_t x = in_row / out->pixel_stride, in_pixel = in_row % out->pixel_stride;
  return y < out->height && x < out->width && in_pixel < format_size(out->format);
}

/* 1 when byte p may be written by an execution of filter `slot`. */
static int in_output(const world* w, int slot, const unsigned char* p)
{
  for (int i = 0; i < OUTPUTS; ++i)
    if (in_image(&w->output[slot][i], p))
      return 1;
  return 0;
}

/* Executes filter `slot` and checks that only its output's pixels changed in
 * each arena and in each buffer this harness holds. */
static void execute_checked(world* w, int slot, int async)
{
  unsigned char* regions[ARENAS + BUFFERS];
  size_t sizes[ARENAS + BUFFERS];
  int count = 0;
  for (int a = 0; a < ARENAS; ++a) {
    regions[count] = w->arena[a];
    sizes[count++] = ARENA_BYTES;
  }
  for (int b = 0; b < BUFFERS; ++b)
    if (w->buffers[b]) {
      regions[count] = oidnGetBufferData(w->buffers[b]);
      sizes[count++] = oidnGetBufferSize(w->buffers[b]);
    }
  size_t total = 0;
  for (int i = 0; i < count; ++i)
    total += sizes[i];
  unsigned char* snapshot = malloc(total ? total : 1);
  if (!snapshot)
    return;
  size_t at = 0;
  for (int i = 0; i < count; ++i) {
    if (sizes[i])
      memcpy(snapshot + at, regions[i], sizes[i]);
    at += sizes[i];
  }

  OIDNDevice device = w->devices[w->filter_device[slot]];
  w->progress[slot][0] = 0;
  if (async) {
    oidnExecuteFilterAsync(w->filters[slot]);
    oidnSyncDevice(device);
  } else {
    oidnExecuteFilter(w->filters[slot]);
  }
  const OIDNError code = take_error(device);
  const int cancelled = w->monitored[slot] && w->progress[slot][1] >= 0 &&
                        w->progress[slot][0] > w->progress[slot][1];
  /* as in OIDN, a dirty device refuses the sync (INVALID_OPERATION); the
   * run's own error then waits for a sync on a committed device */
  const int sync_refused = async && w->device_dirty[w->filter_device[slot]] &&
                           code == OIDN_ERROR_INVALID_OPERATION;
  if (cancelled && code != OIDN_ERROR_NONE && code != OIDN_ERROR_CANCELLED && !sync_refused) {
    fprintf(stderr, "fuzz_api: a cancelled run gave error %d\n", (int)code);
    abort();
  }

  at = 0;
  for (int i = 0; i < count; ++i) {
    /* byte by byte only where something changed: the per-byte loop's
     * coverage tracing was a tenth of an execution */
    if (sizes[i] && memcmp(regions[i], snapshot + at, sizes[i]) == 0) {
      at += sizes[i];
      continue;
    }
    for (size_t k = 0; k < sizes[i]; ++k)
      if (regions[i][k] != snapshot[at + k] && !in_output(w, slot, regions[i] + k)) {
        fprintf(stderr, "fuzz_api: execution wrote byte %zu of region %d outside its output\n",
                k, i);
        abort();
      }
    at += sizes[i];
  }
  free(snapshot);
}

/* -- the program ----------------------------------------------------------------- */

static OIDNDevice new_device(void)
{
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  if (!device)
    abort();
  oidnSetDeviceErrorFunction(device, error_callback, NULL);
  oidnSetDeviceInt(device, "numThreads", 1); /* the fuzzer's one core */
  oidnCommitDevice(device);
  if (take_error(device) != OIDN_ERROR_NONE)
    abort();
  return device;
}

static void release_filter(world* w, int slot)
{
  if (!w->filters[slot])
    return;
  oidnReleaseFilter(w->filters[slot]);
  w->filters[slot] = NULL;
  w->type[slot] = NULL;
  w->monitored[slot] = 0;
  memset(w->output[slot], 0, sizeof w->output[slot]);
  memset(w->output_name[slot], 0, sizeof w->output_name[slot]);
}

/* Iteration counts start small (and GradientDomain with one candidate):
 * the defaults of the gradient-domain filters (hundreds of CG iterations
 * in three candidates) made their runs take up to 3 s under ASan and held
 * the whole harness to about 330 executions per second.  The program may still set any value (up to
 * MAX_ITERATIONS + 1), and the defaults run in the other tests. */
static void cheap_defaults(OIDNFilter filter, const char* type)
{
  const int count = lullGetFilterParamCount(type);
  for (int i = 0; i < count; ++i) {
    LullParamInfo info;
    if (!lullGetFilterParamInfo(type, i, &info) || info.readOnly ||
        info.type != LULL_PARAM_TYPE_INT || !strstr(info.name, "terations"))
      continue;
    const int small = info.minValue > 2.0 ? (int)info.minValue : 2;
    if (info.defaultValue > small)
      oidnSetFilterInt(filter, info.name, small);
  }
  /* GradientDomain: one candidate, not three plus the halves' solves (a
   * truncated SVD per pixel and candidate is most of an execution under
   * the sanitizers); programs set -1 often enough (int_value's list) */
  if (strcmp(type, "GradientDomain") == 0)
    oidnSetFilterInt(filter, "candidate", 0);
}

static void step(world* w, reader* r)
{
  const int slot = (int)pick(r, FILTERS);
  const int d = (int)pick(r, DEVICES);
  OIDNFilter filter = w->filters[slot];
  OIDNDevice fdev = filter ? w->devices[w->filter_device[slot]] : NULL;
  switch (pick(r, 20)) {
    case 0: { /* a new filter in the slot */
      release_filter(w, slot);
      const char* type = type_name(r);
      w->filters[slot] = oidnNewFilter(w->devices[d], type);
      (void)take_error(w->devices[d]);
      if (w->filters[slot]) {
        w->type[slot] = type;
        w->filter_device[slot] = d;
        cheap_defaults(w->filters[slot], type);
      }
      break;
    }
    case 1:
      release_filter(w, slot);
      break;
    case 2: { /* a new buffer */
      const int b = (int)pick(r, BUFFERS);
      if (w->buffers[b])
        oidnReleaseBuffer(w->buffers[b]);
      static const size_t sizes[] = {0, 1, 12, 64, 768, 3072, 8192, ARENA_BYTES,
                                     (size_t)1 << 62, SIZE_MAX};
      const size_t size = sizes[pick(r, sizeof sizes / sizeof sizes[0])];
      w->buffers[b] = pick(r, 2) ? oidnNewBuffer(w->devices[d], size)
                                 : oidnNewBufferWithStorage(w->devices[d], size,
                                                            (OIDNStorage)pick(r, 5));
      (void)take_error(w->devices[d]);
      w->buffer_device[b] = d;
      /* new buffers hold undefined bytes (as in OIDN): define them */
      if (w->buffers[b]) {
        unsigned char* data = oidnGetBufferData(w->buffers[b]);
        const size_t n = oidnGetBufferSize(w->buffers[b]);
        for (size_t i = 0; i < n; ++i)
          data[i] = (unsigned char)(i * 37u + (unsigned)b);
      }
      break;
    }
    case 3: { /* buffer reads and writes, in and out of range */
      const int b = (int)pick(r, BUFFERS);
      unsigned char host[256];
      memset(host, take(r), sizeof host);
      static const size_t offsets[] = {0, 1, 12, 700, 3000, SIZE_MAX};
      static const size_t sizes[] = {0, 1, 12, 64, 256, SIZE_MAX};
      const size_t offset = offsets[pick(r, 6)], size = sizes[pick(r, 6)];
      OIDNBuffer buffer = w->buffers[b];
      /* only sizes host[] holds, or ones the library must refuse */
      if (size > sizeof host && buffer && offset <= oidnGetBufferSize(buffer) &&
          size <= oidnGetBufferSize(buffer) - offset)
        break;
      const int kind = (int)pick(r, 4);
      if (kind == 0)
        oidnReadBuffer(buffer, offset, size, host);
      else if (kind == 1)
        oidnWriteBuffer(buffer, offset, size, host);
      else if (kind == 2)
        oidnReadBufferAsync(buffer, offset, size, host);
      else
        oidnWriteBufferAsync(buffer, offset, size, host);
      if (buffer)
        oidnSyncDevice(w->devices[w->buffer_device[b]]);
      (void)take_error(buffer ? w->devices[w->buffer_device[b]] : NULL);
      break;
    }
    case 4: case 5:
      set_image(w, r, slot, 0);
      break;
    case 6: case 7:
      set_image(w, r, slot, 1);
      break;
    case 8: {
      const char* name = image_name(w, r, slot);
      oidnUnsetFilterImage(filter, name);
      image_place* out = output_place(w, slot, name);
      if (out)
        out->set = 0;
      (void)take_error(fdev);
      break;
    }
    case 9: {
      const char* name = param_name(w, r, slot);
      oidnSetFilterInt(filter, name, int_value(r, name));
      break;
    }
    case 10:
      oidnSetFilterBool(filter, param_name(w, r, slot), pick(r, 2));
      break;
    case 11:
      oidnSetFilterFloat(filter, param_name(w, r, slot), float_value(r));
      break;
    case 12: {
      const char* name = param_name(w, r, slot);
      (void)oidnGetFilterInt(filter, name);
      (void)oidnGetFilterFloat(filter, name);
      (void)oidnGetFilterBool(filter, name);
      break;
    }
    case 13: case 14:
      oidnCommitFilter(filter);
      break;
    case 15: case 16:
      if (filter)
        execute_checked(w, slot, (int)pick(r, 2));
      else
        oidnExecuteFilter(NULL);
      break;
    case 17: { /* a progress monitor that cancels after n calls, or never */
      static const int after[] = {-1, 0, 1, 2, 5};
      w->progress[slot][1] = after[pick(r, 5)];
      const int on = pick(r, 4) != 0;
      oidnSetFilterProgressMonitorFunction(filter, on ? progress : NULL, w->progress[slot]);
      w->monitored[slot] = filter && on;
      (void)take_error(fdev);
      break;
    }
    case 18: { /* device parameters: a changed device must be committed again */
      static const char* const names[] = {"numThreads", "setAffinity", "bogus"};
      static const int values[] = {0, 1, 2, -1, 1 << 20};
      oidnSetDeviceInt(w->devices[d], names[pick(r, 3)], values[pick(r, 5)]);
      (void)take_error(w->devices[d]);
      w->device_dirty[d] = 1; /* any set after a commit, as in OIDN */
      if (pick(r, 2)) {
        oidnCommitDevice(w->devices[d]);
        w->device_dirty[d] = take_error(w->devices[d]) != OIDN_ERROR_NONE;
      }
      break;
    }
    default: /* retain and release, sync, queries */
      oidnRetainFilter(filter);
      oidnReleaseFilter(filter);
      oidnSyncDevice(w->devices[d]);
      (void)oidnGetDeviceInt(w->devices[d], "version");
      break;
  }
  for (int i = 0; i < DEVICES; ++i)
    (void)take_error(w->devices[i]);
  (void)take_error(NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  reader r = {data, size};
  world w;
  memset(&w, 0, sizeof w);
  for (int d = 0; d < DEVICES; ++d)
    w.devices[d] = new_device();
  /* arena pixels: a pattern seeded by the input, with NaN, Inf, negative,
   * tiny and huge floats and halves among ordinary values */
  const unsigned seed = take_u32(&r);
  static const uint32_t specials[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x00000001u,
                                      0x7f7fffffu, 0xbf800000u, 0x7c007c00u, 0xfc00fc00u};
  for (int a = 0; a < ARENAS; ++a) {
    w.arena[a] = malloc(ARENA_BYTES);
    if (!w.arena[a])
      abort();
    for (size_t i = 0; i < ARENA_BYTES; i += 4) {
      const unsigned k = (unsigned)(i / 4) * 2654435761u + seed + (unsigned)a;
      float v = (float)(k >> 8 & 0xffff) / 65536.0f;
      uint32_t bits;
      memcpy(&bits, &v, sizeof bits);
      if ((k >> 28) == 0 && (seed & 1))
        bits = specials[(k >> 24) & 7];
      memcpy(w.arena[a] + i, &bits, sizeof bits);
    }
  }

  for (int calls = 0; calls < MAX_CALLS && r.n > 0; ++calls)
    step(&w, &r);

  for (int i = 0; i < FILTERS; ++i)
    release_filter(&w, i);
  for (int b = 0; b < BUFFERS; ++b)
    if (w.buffers[b])
      oidnReleaseBuffer(w.buffers[b]);
  for (int d = 0; d < DEVICES; ++d) {
    oidnSyncDevice(w.devices[d]);
    (void)take_error(w.devices[d]);
    oidnReleaseDevice(w.devices[d]);
  }
  if (take_error(NULL) != OIDN_ERROR_NONE) {
    fprintf(stderr, "fuzz_api: releasing everything gave an error\n");
    abort();
  }
  for (int a = 0; a < ARENAS; ++a)
    free(w.arena[a]);
  return 0;
}
