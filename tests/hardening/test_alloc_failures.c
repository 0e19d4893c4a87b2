/* Allocation failures: every allocation liblull makes is made to fail, one
 * at a time, and each failure must surface as OIDN_ERROR_OUT_OF_MEMORY (or
 * be absorbed), never as a crash, another error or a leak.
 *
 * This program defines malloc, calloc, realloc, free, aligned_alloc,
 * posix_memalign and memalign itself (forwarding to glibc's __libc_*), so
 * they also serve liblull.so.  Allocations whose caller lies in liblull.so
 * are counted while a workload runs; run k makes the k-th fail.  The
 * workload uses every part of the library that allocates: devices, error
 * slots, errors held for the callback, buffers, every filter type and variant (tiled and in place
 * ATrous, Poisson with both solvers and a prime-sized image for Bluestein
 * transforms, NaN repair), asynchronous execution.
 *
 *   - a step during which an allocation failed reports OUT_OF_MEMORY, or
 *     its normal result (the failure was absorbed), or for a step meant to
 *     fail, nothing (its error could not be stored: OIDN's error callback
 *     still saw it); every error comes with a message;
 *   - after releasing everything, no allocation made by liblull is live;
 *   - every allocation call in liblull.so (found by disassembling it with
 *     objdump) was reached by the workload, so none is left untested, but
 *     for those that only run with a GPU: the CUDA backend's host code
 *     (functions named lull_cuda...) and the statically linked CUDA runtime
 *     (libcudart_static_...), which are in the library whenever nvcc built it.
 *
 * Not built with sanitizers (they own malloc); needs glibc. */
#if !defined(_GNU_SOURCE)
  #define _GNU_SOURCE
#endif

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

#include "test_util.h"

/* -- the allocator ----------------------------------------------------------- */

void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* ptr);

enum { LIVE_SLOTS = 1 << 16, MAX_SITES = 512 };

static struct
{
  pthread_mutex_t mutex;
  uintptr_t lib_begin, lib_end; /* liblull.so's executable segment */
  int armed;                    /* counting allocations from liblull */
  long count;                   /* allocations from liblull since arming */
  long fail_at;                 /* which one fails (0: none) */
  long failed;                  /* failures injected */
  uintptr_t failed_site;        /* return address of the failed call */
  void* live[LIVE_SLOTS];       /* open addressing: liblull's live blocks */
  long live_count;
  uintptr_t sites[MAX_SITES];   /* return addresses seen */
  int site_count;
} g = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0, 0, 0, {0}, 0, {0}, 0};

static size_t slot_of(const void* p)
{
  return (size_t)(((uintptr_t)p >> 4) * 2654435761u) & (LIVE_SLOTS - 1);
}

static void live_add(void* p)
{
  size_t i = slot_of(p);
  while (g.live[i] && g.live[i] != (void*)1)
    i = (i + 1) & (LIVE_SLOTS - 1);
  g.live[i] = p;
  ++g.live_count;
}

static void live_remove(const void* p)
{
  size_t i = slot_of(p);
  while (g.live[i]) {
    if (g.live[i] == p) {
      g.live[i] = (void*)1; /* tombstone */
      --g.live_count;
      return;
    }
    i = (i + 1) & (LIVE_SLOTS - 1);
  }
}

/* Called before an allocation from `caller`: 1 when it must fail. */
static int before_alloc(uintptr_t caller)
{
  if (caller < g.lib_begin || caller >= g.lib_end)
    return 0;
  pthread_mutex_lock(&g.mutex);
  int fail = 0;
  if (g.armed) {
    ++g.count;
    int known = 0;
    for (int i = 0; i < g.site_count && !known; ++i)
      known = g.sites[i] == caller;
    if (!known && g.site_count < MAX_SITES)
      g.sites[g.site_count++] = caller;
    if (g.count == g.fail_at) {
      fail = 1;
      ++g.failed;
      g.failed_site = caller;
    }
  }
  pthread_mutex_unlock(&g.mutex);
  return fail;
}

static void after_alloc(uintptr_t caller, void* p)
{
  if (!p || caller < g.lib_begin || caller >= g.lib_end)
    return;
  pthread_mutex_lock(&g.mutex);
  if (g.armed)
    live_add(p);
  pthread_mutex_unlock(&g.mutex);
}

static void before_free(void* p)
{
  if (!p || !g.lib_begin)
    return;
  pthread_mutex_lock(&g.mutex);
  if (g.live_count)
    live_remove(p);
  pthread_mutex_unlock(&g.mutex);
}

#define CALLER ((uintptr_t)__builtin_return_address(0))
/* exported, so they serve liblull.so too (the build hides symbols) */
#define EXPORT __attribute__((visibility("default")))

/* The body of each allocating function: fail when chosen, else forward.
 * (A macro: the return address must be the wrapper's own.) */
#define FORWARD(call)                                                            \
  do {                                                                           \
    const uintptr_t caller_ = CALLER;                                            \
    if (before_alloc(caller_)) {                                                 \
      errno = ENOMEM;                                                            \
      return NULL;                                                               \
    }                                                                            \
    void* p_ = call;                                                             \
    after_alloc(caller_, p_);                                                    \
    return p_;                                                                   \
  } while (0)

EXPORT void* malloc(size_t size)
{
  FORWARD(__libc_malloc(size));
}

EXPORT void* calloc(size_t count, size_t size)
{
  FORWARD(__libc_calloc(count, size));
}

EXPORT void* realloc(void* ptr, size_t size)
{
  before_free(ptr); /* a failed realloc keeps ptr: it is added back below */
  const uintptr_t caller = CALLER;
  if (before_alloc(caller)) {
    after_alloc(caller, ptr);
    errno = ENOMEM;
    return NULL;
  }
  void* p = __libc_realloc(ptr, size);
  after_alloc(caller, p ? p : ptr);
  return p;
}

EXPORT void* aligned_alloc(size_t alignment, size_t size)
{
  FORWARD(__libc_memalign(alignment, size));
}

EXPORT void* memalign(size_t alignment, size_t size)
{
  FORWARD(__libc_memalign(alignment, size));
}

EXPORT int posix_memalign(void** out, size_t alignment, size_t size)
{
  const uintptr_t caller = CALLER;
  if (before_alloc(caller))
    return ENOMEM;
  void* p = __libc_memalign(alignment, size);
  if (!p)
    return ENOMEM;
  after_alloc(caller, p);
  *out = p;
  return 0;
}

EXPORT void free(void* ptr)
{
  before_free(ptr);
  __libc_free(ptr);
}

/* -- liblull.so's allocation calls ------------------------------------------------ */

static char lib_path[1024];
static uintptr_t lib_base;

static int find_lib(struct dl_phdr_info* info, size_t size, void* user)
{
  (void)size;
  (void)user;
  if (!strstr(info->dlpi_name, "/liblull.so"))
    return 0;
  snprintf(lib_path, sizeof lib_path, "%s", info->dlpi_name);
  lib_base = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
      g.lib_begin = info->dlpi_addr + ph->p_vaddr;
      g.lib_end = g.lib_begin + ph->p_memsz;
    }
  }
  return 1;
}

/* Whether a function (objdump's "<name>:" header) runs only with a GPU: the
 * CUDA backend's host code, C or C++-mangled, the CUDA runtime, the import
 * of external memory (its buffer is allocated only for a type the device
 * imports, which the CPU device has none of; tests/gpu/cuda_api runs it)
 * and external semaphores (the same: a handle, and the lists of a signal
 * or wait, only on a device with semaphores; the CUDA backend's own
 * signal and wait are static, named cuda_..., when nvcc does not inline
 * them). */
static int needs_gpu(const char* function)
{
  return strstr(function, "lull_cuda") != NULL || strstr(function, "libcudart_static") != NULL ||
         strstr(function, "oidnNewSharedBufferFromFD") != NULL ||
         strstr(function, "oidnNewSharedSemaphoreFromFD") != NULL ||
         strstr(function, "signal_or_wait") != NULL ||
         strstr(function, "cuda_signal_semaphores") != NULL ||
         strstr(function, "cuda_wait_semaphores") != NULL;
}

/* Return addresses of every call to an allocation function in liblull.so
 * (the instruction after each call) outside functions that need a GPU, from
 * objdump; -1 without objdump.  *gpu_only counts the calls left out. */
static int static_sites(uintptr_t* sites, int max, int* gpu_only)
{
  char command[1200];
  snprintf(command, sizeof command, "objdump -d --no-show-raw-insn '%s' 2>/dev/null", lib_path);
  FILE* p = popen(command, "r");
  if (!p)
    return -1;
  static const char* const calls[] = {"<malloc@plt>", "<calloc@plt>", "<realloc@plt>",
                                      "<aligned_alloc@plt>", "<posix_memalign@plt>",
                                      "<memalign@plt>"};
  char line[512];
  int count = 0, pending = 0, lines = 0, gpu = 0;
  *gpu_only = 0;
  while (fgets(line, sizeof line, p)) {
    unsigned long address;
    int end = 0;
    if (sscanf(line, " %lx%n", &address, &end) != 1)
      continue;
    /* "0000000000012340 <name>:" starts a function */
    if (line[end] == ' ' && line[end + 1] == '<') {
      gpu = needs_gpu(line + end + 1);
      continue;
    }
    /* instruction lines ("  4cd1e:\tcall ...") */
    if (line[end] != ':')
      continue;
    ++lines;
    if (pending && gpu)
      ++*gpu_only;
    else if (pending && count < max)
      sites[count++] = lib_base + address;
    pending = 0;
    if (strstr(line, "call") || strstr(line, "jmp"))
      for (size_t k = 0; k < sizeof calls / sizeof calls[0]; ++k)
        pending |= strstr(line, calls[k]) != NULL;
  }
  pclose(p);
  return lines > 0 ? count : -1;
}

/* -- the workload ------------------------------------------------------------------ */

typedef struct run_state
{
  long step;        /* index of the current step */
  int stopped;      /* a step failed with OUT_OF_MEMORY */
  int bad;          /* a step gave something it must not */
  int absorbed;     /* failures that gave no error */
} run_state;

/* Checks the result of a step; returns 1 to go on. */
static int step_ok(run_state* r, OIDNDevice device, OIDNError expected, long failed_before,
                   const char* what)
{
  ++r->step;
  const char* text = NULL;
  const OIDNError code = oidnGetDeviceError(device, &text);
  char message[256]; /* valid until the next call: copied */
  snprintf(message, sizeof message, "%s", text ? text : "");
  (void)oidnGetDeviceError(NULL, NULL); /* the global slot too (NULL handles) */
  const int injected = g.failed > failed_before;
  if (code != OIDN_ERROR_NONE && !*message) {
    fprintf(stderr, "step %ld (%s): error %d without a message%s\n", r->step, what, (int)code,
            injected ? " (after an injected failure)" : "");
    r->bad = 1;
    return 0;
  }
  if (code == expected) {
    r->absorbed += injected;
    return 1;
  }
  if (injected && code == OIDN_ERROR_OUT_OF_MEMORY) {
    r->stopped = 1;
    return 0;
  }
  if (injected && expected != OIDN_ERROR_NONE && code == OIDN_ERROR_NONE) {
    r->absorbed += 1; /* the expected error could not be stored */
    return 1;
  }
  fprintf(stderr, "step %ld (%s): error %d '%s', expected %d%s\n", r->step, what, (int)code,
          message, (int)expected, injected ? " (after an injected failure)" : "");
  r->bad = 1;
  return 0;
}

#define STEP(expected, call)                                                     \
  do {                                                                           \
    const long before_ = g.failed;                                               \
    call;                                                                        \
    if (!step_ok(r, device, expected, before_, #call))                           \
      goto done;                                                                 \
  } while (0)

/* pixels of each image slot of the pool: the largest spec's w * h */
enum { MAX_IMAGES = 12, POOL_PIXELS = 96 * 320 };

typedef struct filter_spec
{
  const char* type;
  int w, h;
  const char* images[MAX_IMAGES];
  const char* int_param;
  int int_value;
  int in_place;
  int nan;     /* a NaN in the inputs */
  int async;
} filter_spec;

static const filter_spec specs[] = {
    {"ATrous", 16, 12, {"color", "albedo", "normal", "depth", NULL}, NULL, 0, 0, 1, 0},
    {"ATrous", 16, 12, {"color", "position", "variance", NULL}, "colorMode", 0, 0, 0, 1},
    /* tall enough to tile: 5 tiles of 96 x 64 (tiles are at least as wide
     * as the 71-pixel overlap, so a smaller image runs untiled) */
    {"ATrous", 96, 320, {"color", "albedo", NULL}, "maxMemoryMB", 0, 0, 0, 0},
    {"ATrous", 96, 320, {"color", NULL}, "maxMemoryMB", 0, 1, 0, 0},
    {"RT", 16, 12, {"color", "albedo", "normal", NULL}, "hdr", 1, 0, 0, 0},
    {"RT", 16, 12, {"albedo", NULL}, NULL, 0, 0, 0, 0},
    {"RTLightmap", 16, 12, {"color", NULL}, NULL, 0, 1, 0, 0},
    {"Gaussian", 16, 12, {"color", NULL}, NULL, 0, 0, 0, 0},
    {"Poisson", 16, 12, {"color", "gradientX", "gradientY", NULL}, NULL, 0, 0, 1, 0},
    /* prime lengths over 31 take Bluestein's transform; 77 = 7 x 11 */
    {"Poisson", 67, 13, {"color", "gradientX", "gradientY", NULL}, "norm", 2, 0, 0, 0},
    {"Poisson", 77, 37, {"color", "gradientX", "gradientY", NULL}, "norm", 2, 0, 0, 0},
    /* one-pixel axes take their own (length 1) transform plans */
    {"Poisson", 1, 53, {"color", "gradientX", "gradientY", NULL}, "norm", 2, 0, 0, 0},
    {"Poisson", 16, 12, {"color", "gradientX", "gradientY", NULL}, "solver", 1, 0, 1, 0},
    {"Poisson", 16, 12,
     {"colorA", "colorB", "gradientXA", "gradientXB", "gradientYA", "gradientYB",
      "outputVariance", NULL}, "preconditioner", 2, 0, 0, 0},
    /* temporal mode: the history's planes and the reprojection (two frames) */
    {"ATrous", 16, 12, {"color", "normal", "depth", "motion", NULL}, "temporal", 1, 0, 0, 0},
    {"RT", 16, 12, {"color", "albedo", "normal", "motion", NULL}, "temporal", 1, 0, 1, 0},
    /* Regression: one buffer (tiled), and the two halves */
    {"Regression", 40, 24, {"color", "albedo", "normal", NULL}, NULL, 0, 0, 0, 0},
    /* tiled: the workload shrinks the window, which keeps the margin (and
     * the smallest tile, four margins) short */
    {"Regression", 12, 140, {"colorA", "colorB", "normal", NULL}, "maxMemoryMB", 0, 0, 0, 0},
    {"Regression", 12, 140, {"colorA", "colorB", "outputVariance", NULL}, "maxMemoryMB", 0, 0, 0,
     0},
    {"Regression", 16, 12, {"colorA", "colorB", "albedo", "normal", "depth", NULL}, NULL, 0, 1, 0,
     0},
    /* RDFC: the halves with feature halves, one buffer with its variance */
    {"RDFC", 16, 12, {"colorA", "colorB", "albedoA", "albedoB", "normal", NULL}, "radius", 2, 0,
     1, 0},
    {"RDFC", 16, 12, {"color", "variance", "depth", NULL}, "radius", 2, 1, 0, 0},
    /* DDID: the halves with a feature, one buffer with its variance (one step) */
    {"DDID", 16, 12, {"colorA", "colorB", "albedo", NULL}, "iterations", 1, 0, 1, 0},
    {"DDID", 16, 12, {"color", "variance", "normal", NULL}, "iterations", 1, 1, 0, 0},
    /* RHF: three bins over two scales, and in place */
    {"RHF", 16, 12, {"color", "histogram0", "histogram1", "histogram2", NULL}, "scales", 2, 0, 1,
     0},
    {"RHF", 16, 12, {"color", "histogram0", NULL}, "patchRadius", 0, 1, 0, 0},
    {"GradientDomain", 16, 12,
     {"colorA", "colorB", "gradientXA", "gradientXB", "gradientYA", "gradientYB", "albedo",
      "normal", "depth", NULL}, NULL, 0, 0, 1, 0},
};

static OIDNFormat format_of(const char* name)
{
  if (strcmp(name, "motion") == 0)
    return OIDN_FORMAT_FLOAT2;
  return strcmp(name, "depth") == 0 || strcmp(name, "variance") == 0 ? OIDN_FORMAT_FLOAT
                                                                      : OIDN_FORMAT_FLOAT3;
}

/* One run of the whole workload; returns the state. */
/* The workload's error callback: with one set, errors raised with the
 * device locked wait in a list for the unlock (plugin/error.c). */
static void ignore_error(void* user, OIDNError code, const char* message)
{
  (void)user;
  (void)code;
  (void)message;
}

static run_state workload(float* pixels, float* outputs)
{
  run_state state = {0, 0, 0, 0};
  run_state* r = &state;
  OIDNDevice device = NULL;
  OIDNBuffer buffers[3] = {NULL, NULL, NULL};
  OIDNFilter filter = NULL;
  char host[256];
  memset(host, 1, sizeof host);

  STEP(OIDN_ERROR_NONE, device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU));
  STEP(OIDN_ERROR_NONE, oidnSetDeviceErrorFunction(device, ignore_error, NULL));
  /* an error raised under the device's lock (not committed yet) */
  STEP(OIDN_ERROR_INVALID_OPERATION, (void)oidnNewBuffer(device, 16));
  STEP(OIDN_ERROR_NONE, oidnSetDeviceInt(device, "numThreads", 2));
  STEP(OIDN_ERROR_NONE, oidnCommitDevice(device));
  STEP(OIDN_ERROR_INVALID_ARGUMENT, (void)oidnNewFilter(device, "Bogus"));
  STEP(OIDN_ERROR_NONE, buffers[0] = oidnNewBuffer(device, 1024));
  STEP(OIDN_ERROR_NONE, buffers[1] = oidnNewBufferWithStorage(device, 512, OIDN_STORAGE_HOST));
  STEP(OIDN_ERROR_NONE, buffers[2] = oidnNewSharedBuffer(device, host, sizeof host));
  STEP(OIDN_ERROR_NONE, oidnWriteBuffer(buffers[0], 0, sizeof host, host));
  STEP(OIDN_ERROR_NONE, oidnReadBuffer(buffers[1], 0, sizeof host, host));
  STEP(OIDN_ERROR_NONE, (oidnWriteBufferAsync(buffers[1], 0, sizeof host, host),
                         oidnSyncDevice(device)));

  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; ++k) {
    const filter_spec* s = &specs[k];
    const size_t w = (size_t)s->w, h = (size_t)s->h;
    STEP(OIDN_ERROR_NONE, filter = oidnNewFilter(device, s->type));
    float* out = outputs;
    for (int i = 0; s->images[i]; ++i) {
      /* inputs share the pixel pool (they are only read); NaN where asked;
       * a second output (outputVariance) gets the second output area */
      float* in = pixels + (size_t)i * 3 * POOL_PIXELS;
      if (strncmp(s->images[i], "output", 6) == 0)
        in = outputs + (size_t)3 * POOL_PIXELS;
      in[5] = s->nan ? NAN : 0.5f;
      if (s->in_place && i == 0) {
        memcpy(out, in, w * h * 3 * sizeof(float));
        in = out;
      }
      STEP(OIDN_ERROR_NONE,
           oidnSetSharedFilterImage(filter, s->images[i], in, format_of(s->images[i]), w, h, 0,
                                    0, 0));
    }
    STEP(OIDN_ERROR_NONE,
         oidnSetSharedFilterImage(filter, "output", out, OIDN_FORMAT_FLOAT3, w, h, 0, 0, 0));
    if (s->int_param)
      STEP(OIDN_ERROR_NONE, oidnSetFilterInt(filter, s->int_param, s->int_value));
    if (strcmp(s->type, "Regression") == 0 && s->int_param) {
      static const char* const small_window[] = {"radius", "patchRadius", "secondPassRadius"};
      for (int m = 0; m < 3; ++m)
        STEP(OIDN_ERROR_NONE, oidnSetFilterInt(filter, small_window[m], m == 0));
    }
    STEP(OIDN_ERROR_NONE, oidnCommitFilter(filter));
    if (s->async) {
      /* an asynchronous run's error surfaces at the next synchronisation */
      STEP(OIDN_ERROR_NONE, (oidnExecuteFilterAsync(filter), oidnSyncDevice(device)));
    } else {
      STEP(OIDN_ERROR_NONE, oidnExecuteFilter(filter));
    }
    /* a second frame: temporal mode reprojects the history it kept */
    if (s->int_param && strcmp(s->int_param, "temporal") == 0)
      STEP(OIDN_ERROR_NONE, oidnExecuteFilter(filter));
    oidnReleaseFilter(filter);
    filter = NULL;
  }

done:
  if (filter)
    oidnReleaseFilter(filter);
  for (int b = 0; b < 3; ++b)
    if (buffers[b])
      oidnReleaseBuffer(buffers[b]);
  if (device)
    oidnReleaseDevice(device);
  (void)oidnGetDeviceError(NULL, NULL);
  return state;
}

int main(void)
{
  dl_iterate_phdr(find_lib, NULL);
  if (!g.lib_begin) {
    fprintf(stderr, "liblull.so is not loaded\n");
    return 1;
  }
  float* pixels = __libc_calloc((size_t)MAX_IMAGES * 3 * POOL_PIXELS, sizeof(float));
  float* outputs = __libc_calloc((size_t)2 * 3 * POOL_PIXELS, sizeof(float));
  for (size_t i = 0; i < (size_t)MAX_IMAGES * 3 * POOL_PIXELS; ++i)
    pixels[i] = 0.25f + 0.5f * (float)((i * 7919u) % 1000u) / 1000.0f;

  /* a clean run: how many allocations, which call sites */
  g.fail_at = 0;
  g.armed = 1;
  run_state clean = workload(pixels, outputs);
  g.armed = 0;
  const long total = g.count;
  CHECK(!clean.bad && !clean.stopped);
  CHECK_EQ_INT(g.live_count, 0);
  printf("alloc_failures: a clean run makes %ld allocations from %d call sites\n", total,
         g.site_count);

  /* every call site of liblull.so was reached */
  uintptr_t sites[MAX_SITES];
  int gpu_only = 0;
  const int n_sites = static_sites(sites, MAX_SITES, &gpu_only);
  if (n_sites < 0) {
    printf("alloc_failures: no objdump: call-site coverage not checked\n");
  } else {
    int missed = 0;
    for (int i = 0; i < n_sites; ++i) {
      int hit = 0;
      for (int k = 0; k < g.site_count && !hit; ++k)
        hit = g.sites[k] == sites[i];
      if (!hit) {
        fprintf(stderr, "allocation call at liblull.so+0x%lx never reached (addr2line -f -e %s "
                        "0x%lx)\n", (unsigned long)(sites[i] - lib_base), lib_path,
                (unsigned long)(sites[i] - lib_base - 1));
        ++missed;
      }
    }
    printf("alloc_failures: %d allocation calls in liblull.so, %d reached (and %d that only "
           "run with a GPU: the CUDA backend and runtime)\n", n_sites, n_sites - missed,
           gpu_only);
    CHECK_EQ_INT(missed, 0);
  }

  /* each allocation fails once */
  long oom = 0, absorbed = 0, bad = 0, leaks = 0;
  for (long k = 1; k <= total; ++k) {
    g.count = 0;
    g.failed = 0;
    g.fail_at = k;
    g.armed = 1;
    const run_state s = workload(pixels, outputs);
    g.armed = 0;
    CHECK_EQ_INT(g.failed, 1);
    oom += s.stopped;
    absorbed += s.absorbed;
    if (s.bad) {
      fprintf(stderr, "  (with allocation %ld failing, at liblull.so+0x%lx)\n", k,
              (unsigned long)(g.failed_site - lib_base));
      ++bad;
    }
    if (g.live_count) {
      fprintf(stderr, "allocation %ld failing: %ld blocks of liblull leaked\n", k, g.live_count);
      ++leaks;
      memset(g.live, 0, sizeof g.live);
      g.live_count = 0;
    }
  }
  printf("alloc_failures: %ld runs, each with one failed allocation: %ld OUT_OF_MEMORY, %ld "
         "absorbed, %ld wrong results, %ld leaking\n", total, oom, absorbed, bad, leaks);
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(leaks, 0);
  CHECK_EQ_INT(oom + absorbed, total);
  __libc_free(pixels);
  __libc_free(outputs);
  return lull_test_result("hardening_alloc_failures");
}
