/* Random sequences of API calls (fixed seeds, so failures repeat): handles
 * valid, NULL or of another device, names known and unknown, formats,
 * sizes, strides and offsets valid, too small, too large or overflowing.
 * The library must never crash (valgrind and the sanitizer builds watch
 * memory), every error must be one of OIDN's codes with a message, and
 * whatever it accepts must run.
 *
 * The devices are CPU devices, or those of LULL_API_TEST_DEVICE=cuda (the
 * GPU test api_random_cuda).  The runnable setups of the first device use
 * host memory where the device can read it, the second device's a buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

enum
{
  DEVICES = 2, BUFFERS = 4, FILTERS = 4,
  SHARED_SIDE = 16,      /* shared images stay within an arena of ... */
  SHARED_STRIDE = 64,    /* ... this pixel stride at most, */
  ARENA = 256 + SHARED_SIDE * SHARED_SIDE * SHARED_STRIDE, /* plus offsets */
  MAX_BUFFER = 100000,   /* bytes of a buffer at most */
  HOST = 128 + MAX_BUFFER
};

typedef struct pool
{
  OIDNDevice devices[DEVICES];
  OIDNBuffer buffers[BUFFERS];
  OIDNFilter filters[FILTERS];
  int filter_device[FILTERS];      /* index of the device of filters[i] */
  OIDNBuffer setup[DEVICES];       /* ARENA bytes per device, for valid_setup */
  int use_host[DEVICES];           /* valid_setup uses host memory (else setup[]) */
  unsigned char* arena; /* memory of shared images */
  unsigned char* host;  /* host side of buffer reads and writes (HOST bytes) */
  unsigned state;
  int bad_codes;
  int calls, errors;
  int runs; /* executions that succeeded */
} pool;

static unsigned pick(pool* p, unsigned n)
{
  return (unsigned)(lull_test_random(&p->state) * (float)n) % n;
}

static const char* pick_name(pool* p, const char* const* names, unsigned n)
{
  return names[pick(p, n)];
}

static const char* const image_names[] = {"color", "albedo", "normal", "output", "depth",
                                          "variance", "position", "bogus", NULL};
static const char* const param_names[] = {"hdr", "srgb", "quality", "inputScale", "hdrScale",
                                          "cleanAux", "iterations", "sigma", "sigmaColor",
                                          "colorMode", "tileAlignment", "alignment",
                                          "directional", "maxMemoryMB", "bogus", NULL};
static const char* const type_names[] = {"RT", "RTLightmap", "ATrous", "Gaussian", "Poisson",
                                         "rt", NULL};

static const OIDNFormat formats[] = {OIDN_FORMAT_FLOAT3, OIDN_FORMAT_FLOAT,  OIDN_FORMAT_FLOAT2,
                                     OIDN_FORMAT_FLOAT4, OIDN_FORMAT_HALF3,  OIDN_FORMAT_HALF,
                                     OIDN_FORMAT_HALF4,  OIDN_FORMAT_UNDEFINED, (OIDNFormat)77};

static size_t pick_size(pool* p, int shared)
{
  static const size_t any[] = {0, 1, 3, 8, 16, 65536, 65537, (size_t)1 << 32, SIZE_MAX};
  if (shared) {
    /* valid sizes within the arena, or ones the library must refuse */
    static const size_t safe[] = {0, 1, 3, 8, 16, 65537, (size_t)1 << 32, SIZE_MAX};
    return safe[pick(p, sizeof safe / sizeof safe[0])];
  }
  return any[pick(p, sizeof any / sizeof any[0])];
}

static size_t pick_stride(pool* p)
{
  static const size_t strides[] = {0, 0, 0, 1, 4, 12, 16, 64, SIZE_MAX / 2, SIZE_MAX};
  return strides[pick(p, sizeof strides / sizeof strides[0])];
}

static size_t pick_offset(pool* p)
{
  static const size_t offsets[] = {0, 0, 4, 256, SIZE_MAX - 8, SIZE_MAX};
  return offsets[pick(p, sizeof offsets / sizeof offsets[0])];
}

/* Shared-image row strides must keep valid images inside the arena. */
static size_t pick_shared_row(pool* p)
{
  static const size_t rows[] = {0, 0, 1, 12 * SHARED_SIDE, SHARED_STRIDE * SHARED_SIDE,
                                SIZE_MAX / 2};
  return rows[pick(p, sizeof rows / sizeof rows[0])];
}

/* Progress monitor: counts the runs that finished (a finished run reports 1). */
static bool count_run(void* user, double n)
{
  if (n == 1.0)
    ++*(int*)user;
  return true;
}

/* A configuration that can run, on which the random calls then build:
 * colour and output of one size and channel count (the output sometimes
 * the colour itself, or overlapping it), sometimes albedo and normal. */
static void set_setup_image(pool* p, int device, OIDNFilter filter, const char* name,
                            size_t offset, OIDNFormat format, size_t w, size_t h)
{
  if (p->use_host[device])
    oidnSetSharedFilterImage(filter, name, p->arena + offset, format, w, h, 0, 0, 0);
  else
    oidnSetFilterImage(filter, name, p->setup[device], format, w, h, offset, 0, 0);
}

static void valid_setup(pool* p, int slot)
{
  OIDNFilter filter = p->filters[slot];
  const int device = p->filter_device[slot];
  static const size_t sides[] = {1, 2, 3, 8, 16};
  static const OIDNFormat rgb[] = {OIDN_FORMAT_FLOAT3, OIDN_FORMAT_HALF3};
  static const OIDNFormat other[] = {OIDN_FORMAT_FLOAT, OIDN_FORMAT_FLOAT4};
  const size_t w = sides[pick(p, 5)], h = sides[pick(p, 5)];
  const int three = pick(p, 3) != 0;
  const OIDNFormat in = three ? rgb[pick(p, 2)] : other[pick(p, 2)];
  const OIDNFormat out = three ? rgb[pick(p, 2)] : in;
  /* each image has a quarter of the memory (16 x 16 x 16 bytes fit) */
  const size_t quarter = ARENA / 4;
  const size_t output = pick(p, 4) ? quarter : 4 * pick(p, 3);
  set_setup_image(p, device, filter, "color", 0, in, w, h);
  set_setup_image(p, device, filter, "output", output, out, w, h);
  if (three && pick(p, 2)) {
    set_setup_image(p, device, filter, "albedo", 2 * quarter, rgb[pick(p, 2)], w, h);
    set_setup_image(p, device, filter, "normal", 3 * quarter, rgb[pick(p, 2)], w, h);
  } else {
    oidnUnsetFilterImage(filter, "albedo");
    oidnUnsetFilterImage(filter, "normal");
  }
  oidnCommitFilter(filter);
}

/* One random call on a random (or NULL) object. */
static void random_call(pool* p)
{
  const int device_index = (int)pick(p, DEVICES);
  OIDNDevice device = p->devices[device_index];
  const int filter_slot = (int)pick(p, FILTERS);
  OIDNFilter filter = pick(p, 10) ? p->filters[filter_slot] : NULL;
  OIDNBuffer buffer = pick(p, 10) ? p->buffers[pick(p, BUFFERS)] : NULL;
  switch (pick(p, 16)) {
    case 0: {
      const unsigned slot = pick(p, BUFFERS);
      oidnReleaseBuffer(p->buffers[slot]); /* NULL: an error */
      p->buffers[slot] = oidnNewBufferWithStorage(device, pick_size(p, 0) % MAX_BUFFER,
                                                  (OIDNStorage)pick(p, 5));
      /* new buffers hold garbage (as in OIDN): give them defined bytes */
      if (p->buffers[slot])
        oidnWriteBuffer(p->buffers[slot], 0, oidnGetBufferSize(p->buffers[slot]), p->host);
      break;
    }
    case 1: {
      const unsigned slot = pick(p, FILTERS);
      oidnReleaseFilter(p->filters[slot]);
      p->filters[slot] = oidnNewFilter(device, pick_name(p, type_names, 6));
      p->filter_device[slot] = device_index;
      oidnSetFilterProgressMonitorFunction(p->filters[slot], count_run, &p->runs);
      break;
    }
    case 2: {
      /* buffer images: the library checks the region against the buffer */
      oidnSetFilterImage(filter, pick_name(p, image_names, 8), buffer,
                         formats[pick(p, sizeof formats / sizeof formats[0])], pick_size(p, 0),
                         pick_size(p, 0), pick_offset(p), pick_stride(p), pick_stride(p));
      break;
    }
    case 3: {
      const size_t w = pick_size(p, 1), h = pick_size(p, 1);
      const size_t pixel = (size_t[]){0, 12, 16, SHARED_STRIDE, 1, SIZE_MAX / 4}[pick(p, 6)];
      const size_t offset = (size_t[]){0, 4, 256, SIZE_MAX - 16}[pick(p, 4)];
      void* data = pick(p, 8) ? (void*)p->arena : NULL;
      oidnSetSharedFilterImage(filter, pick_name(p, image_names, 8), data,
                               formats[pick(p, sizeof formats / sizeof formats[0])], w, h,
                               offset, pixel, pick_shared_row(p));
      break;
    }
    case 4:
      oidnUnsetFilterImage(filter, pick_name(p, image_names, 8));
      break;
    case 5:
      oidnSetFilterBool(filter, pick_name(p, param_names, 15), pick(p, 2));
      break;
    case 6: {
      static const int ints[] = {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, -1, 1 << 30};
      oidnSetFilterInt(filter, pick_name(p, param_names, 15), ints[pick(p, 12)]);
      break;
    }
    case 7: {
      static const float floats[] = {0.0f, 1.0f, 0.5f, 4.0f, -1.0f, 1e30f, 1e-30f};
      oidnSetFilterFloat(filter, pick_name(p, param_names, 15), floats[pick(p, 7)]);
      break;
    }
    case 8:
      (void)oidnGetFilterInt(filter, pick_name(p, param_names, 15));
      (void)oidnGetFilterFloat(filter, pick_name(p, param_names, 15));
      break;
    case 9:
    case 10:
      oidnCommitFilter(filter);
      break;
    case 11:
      if (pick(p, 2))
        oidnExecuteFilter(filter);
      else
        oidnExecuteFilterAsync(filter);
      break;
    case 12: {
      /* the library refuses regions outside the buffer, so a region it
       * accepts is at most MAX_BUFFER bytes: HOST bytes of host memory */
      const size_t offset = pick_offset(p) % 128, size = pick(p, 2) ? 64 : pick_size(p, 0);
      if (pick(p, 2))
        oidnReadBuffer(buffer, offset, size, p->host);
      else
        oidnWriteBuffer(buffer, offset, size, p->host);
      break;
    }
    case 13:
      oidnSyncDevice(device);
      break;
    default:
      if (p->filters[filter_slot])
        valid_setup(p, filter_slot);
      break;
  }
}

/* Reads every slot after a call: codes must be OIDN's. */
static void check_errors(pool* p)
{
  for (int d = -1; d < DEVICES; ++d) {
    const char* message = NULL;
    const OIDNError code = oidnGetDeviceError(d < 0 ? NULL : p->devices[d], &message);
    if (code == OIDN_ERROR_NONE)
      continue;
    ++p->errors;
    if (code < OIDN_ERROR_UNKNOWN || code > OIDN_ERROR_CANCELLED || !message || !*message)
      ++p->bad_codes;
  }
}

/* Returns the number of runs that finished. */
static int run_sequence(unsigned seed, int calls)
{
  pool p;
  memset(&p, 0, sizeof p);
  p.state = seed;
  p.arena = calloc(ARENA, 1);
  p.host = calloc(HOST, 1);
  const char* kind = getenv("LULL_API_TEST_DEVICE");
  for (int d = 0; d < DEVICES; ++d) {
    if (kind && strcmp(kind, "cuda") == 0) {
      p.devices[d] = oidnNewDevice(OIDN_DEVICE_TYPE_CUDA);
      oidnCommitDevice(p.devices[d]);
    } else {
      p.devices[d] = api_cpu_device();
    }
    EXPECT_OK(NULL);
    EXPECT_OK(p.devices[d]);
    /* the first device takes host memory where it can, the second buffers */
    p.use_host[d] = d == 0 && oidnGetDeviceBool(p.devices[d], "systemMemorySupported");
    p.setup[d] = oidnNewBuffer(p.devices[d], ARENA);
    oidnWriteBuffer(p.setup[d], 0, ARENA, p.arena);
  }
  for (int i = 0; i < calls; ++i) {
    random_call(&p);
    check_errors(&p);
    ++p.calls;
  }
  for (int d = 0; d < DEVICES; ++d)
    oidnSyncDevice(p.devices[d]);
  check_errors(&p);
  CHECK_EQ_INT(p.bad_codes, 0);
  CHECK(p.errors > 0); /* the sequence did probe error paths */
  printf("random sequence %u: %d calls, %d errors, %d runs\n", seed, p.calls, p.errors, p.runs);
  for (int i = 0; i < FILTERS; ++i)
    if (p.filters[i])
      oidnReleaseFilter(p.filters[i]);
  for (int i = 0; i < BUFFERS; ++i)
    if (p.buffers[i])
      oidnReleaseBuffer(p.buffers[i]);
  for (int d = 0; d < DEVICES; ++d) {
    oidnReleaseBuffer(p.setup[d]);
    oidnReleaseDevice(p.devices[d]);
  }
  free(p.arena);
  free(p.host);
  EXPECT_OK(NULL);
  return p.runs;
}

/* 16 sequences, or LULL_API_RANDOM_SEQUENCES (fewer under valgrind, more
 * for a long hunt). */
void api_test_random(void)
{
  const char* env = getenv("LULL_API_RANDOM_SEQUENCES");
  const int sequences = env && atoi(env) > 0 ? atoi(env) : 16;
  int runs = 0;
  for (int seed = 1; seed <= sequences; ++seed)
    runs += run_sequence((unsigned)seed * 7919u, 800);
  CHECK(runs >= 3 * sequences); /* the sequences also reached the filters */
}
