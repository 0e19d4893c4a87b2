/* The CUDA Regression filter step by step: the library's schedule
 * (lull_rk_filter) on the library's kernels, with a CUDA event after each
 * named step (the launchers' mark), at 1280x720, 1920x1080 and 3840x2160,
 * two halves and one buffer (albedo, normal, depth; the images in device
 * memory).  Median ms per step over --runs runs after a warm-up run.
 *
 * Variants of the tile kernels' launch, which change no arithmetic (the
 * outputs are compared bit for bit with the first variant's):
 *   base      the library's launches (LULL_RK_GROUP offsets a round);
 *   gN        N window offsets a round (fewer barriers, more shared memory);
 *   minb2     compiled for two blocks a multiprocessor (at most 128
 *             registers a thread: more warps to hide the pair terms' loads,
 *             at the price of spills);
 *   split     two bandwidths as two launches of one (a tile of 16 x 16
 *             pixels, the pair terms computed twice) instead of one launch
 *             with a thread per pixel and bandwidth (16 x 8 pixels).
 * (gN and minb2 apply to the passes with 7 feature channels, the bench's.)
 *
 *   bench_regression_steps [--runs N] [--sizes 720,1080,2160] [--modes halves,one]
 *                          [--variants base,g1,g2,g4,g2-minb2,g4-minb2,g2-split,g4-split-minb2] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_cuda.h"
#include "regression_kernels.cuh"

#define CHECK_CUDA(x)                                                                 \
  do {                                                                                \
    const cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));    \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

/* The tile kernels of a variant: G offsets a round, at least MINB blocks
 * a multiprocessor (the bench's data have 7 feature channels: N = 10). */
template <class Acc, int G, int MINB>
static __global__ void __launch_bounds__(LULL_RK_THREADS, MINB)
    tile_kernel(const __grid_constant__ lull_rk_tile_args a)
{
  lull_rk_tile_kernel_body<Acc, G>(&a);
}

template <class Acc, int G, int MINB>
static cudaError_t launch(const lull_rk_tile_args* a, cudaStream_t stream)
{
  const int th = LULL_RK_TILE_W / a->nb;
  const dim3 grid((unsigned)((a->width + LULL_RK_TILE_W - 1) / LULL_RK_TILE_W),
                  (unsigned)((a->height + th - 1) / th),
                  (unsigned)(a->kind == LULL_RK_SMOOTH ? a->sets : 1));
  const size_t smem = lull_rk_tile_smem_floats(a->nb, a->patch, G) * sizeof(float);
  tile_kernel<Acc, G, MINB><<<grid, LULL_RK_THREADS, smem, stream>>>(*a);
  return cudaGetLastError();
}

template <int G, int MINB>
static cudaError_t launch_variant(const lull_rk_tile_args* a, cudaStream_t s)
{
  if (a->kind == LULL_RK_SMOOTH)
    return launch<lull_rk_smooth, G, MINB>(a, s);
  if (a->n != 10)
    return cudaErrorInvalidValue;
  return a->kind == LULL_RK_FIT ? launch<lull_rk_fit<10>, G, MINB>(a, s)
                                : launch<lull_rk_gather<10>, G, MINB>(a, s);
}

typedef struct variant
{
  const char* name;
  int group, minb, split; /* group 0: the library's launches */
} variant;

static const variant all_variants[] = {
    {"base", 0, 1, 0},     {"g1", 1, 1, 0},       {"g2", 2, 1, 0},   {"g4", 4, 1, 0},
    {"g2-minb2", 2, 2, 0}, {"g4-minb2", 4, 2, 0}, {"g2-split", 2, 1, 1},
    {"g4-split-minb2", 4, 2, 1}};

static cudaError_t launch_any(const variant* v, const lull_rk_tile_args* a, cudaStream_t s)
{
  switch (v->group * 10 + v->minb) {
    case 11: return launch_variant<1, 1>(a, s);
    case 21: return launch_variant<2, 1>(a, s);
    case 41: return launch_variant<4, 1>(a, s);
    case 22: return launch_variant<2, 2>(a, s);
    case 42: return launch_variant<4, 2>(a, s);
    default: return cudaErrorInvalidValue;
  }
}

enum { MAX_MARKS = 32 };

typedef struct bench_ctx
{
  lull_cuda_backend* cuda;
  lull_rk_launchers inner;
  const variant* v;
  cudaEvent_t ev[MAX_MARKS + 1];
  const char* names[MAX_MARKS];
  int marks;
} bench_ctx;

static cudaError_t one_tiles(bench_ctx* b, const lull_rk_tile_args* a)
{
  return b->v->group ? launch_any(b->v, a, b->cuda->stream) : b->inner.tiles(b->inner.ctx, a);
}

static cudaError_t ctx_tiles(void* ctx, const lull_rk_tile_args* a)
{
  bench_ctx* b = (bench_ctx*)ctx;
  if (!b->v->split || a->nb != 2 || a->kind == LULL_RK_SMOOTH)
    return one_tiles(b, a);
  /* bandwidth 1 as a launch of its own on its own record and planes */
  lull_rk_tile_args one = *a;
  one.nb = 1;
  cudaError_t code = one_tiles(b, &one);
  one.k[0] = a->k[1];
  one.fits = a->fits + (size_t)lull_rk_record(a->n) * a->plane_stride;
  for (int c = 0; c < 3; ++c)
    one.out[0][c] = a->out[1][c];
  if (code == cudaSuccess)
    code = one_tiles(b, &one);
  return code;
}

static cudaError_t ctx_pixels(void* ctx, const lull_rk_pixel_args* a)
{
  bench_ctx* b = (bench_ctx*)ctx;
  return b->inner.pixels(b->inner.ctx, a);
}

static cudaError_t ctx_reduce(void* ctx, const lull_rk_reduce_args* a)
{
  bench_ctx* b = (bench_ctx*)ctx;
  return b->inner.reduce(b->inner.ctx, a);
}

static lull_status ctx_pilot(void* ctx, const lull_atrous_params* p, const lull_atrous_images* im,
                             unsigned char* scratch, size_t bytes, lull_error* err)
{
  bench_ctx* b = (bench_ctx*)ctx;
  return b->inner.pilot(b->inner.ctx, p, im, scratch, bytes, err);
}

static void ctx_mark(void* ctx, const char* step)
{
  bench_ctx* b = (bench_ctx*)ctx;
  if (b->marks >= MAX_MARKS)
    return;
  b->names[b->marks] = step;
  CHECK_CUDA(cudaEventRecord(b->ev[b->marks + 1], b->cuda->stream));
  ++b->marks;
}

static lull_image device_image(int w, int h, int channels, const float* host)
{
  lull_image im;
  memset(&im, 0, sizeof im);
  const size_t bytes = (size_t)w * (size_t)h * (size_t)channels * sizeof(float);
  CHECK_CUDA(cudaMalloc((void**)&im.data, bytes));
  if (host)
    CHECK_CUDA(cudaMemcpy(im.data, host, bytes, cudaMemcpyHostToDevice));
  im.format = (lull_format)channels;
  im.width = w;
  im.height = h;
  im.pixel_stride = sizeof(float) * (size_t)channels;
  im.row_stride = im.pixel_stride * (size_t)w;
  return im;
}

static float random01(unsigned* s)
{
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return (float)(*s >> 8) * (1.0f / 16777216.0f);
}

static int compare_float(const void* a, const void* b)
{
  const float x = *(const float*)a, y = *(const float*)b;
  return (x > y) - (x < y);
}

static int has_word(const char* list, const char* word)
{
  const size_t n = strlen(word);
  for (const char* p = list; (p = strstr(p, word)) != NULL; p += n)
    if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
      return 1;
  return 0;
}

/* FNV-1a of the output's bytes. */
static unsigned long long checksum(const lull_image* im)
{
  const size_t bytes = im->row_stride * (size_t)im->height;
  unsigned char* h = (unsigned char*)malloc(bytes);
  CHECK_CUDA(cudaMemcpy(h, im->data, bytes, cudaMemcpyDeviceToHost));
  unsigned long long x = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i)
    x = (x ^ h[i]) * 1099511628211ull;
  free(h);
  return x;
}

int main(int argc, char** argv)
{
  int runs = 10;
  const char* sizes = "720,1080,2160";
  const char* modes = "halves,one";
  const char* variants = "base";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--runs"))
      runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--sizes"))
      sizes = argv[i + 1];
    else if (!strcmp(argv[i], "--modes"))
      modes = argv[i + 1];
    else if (!strcmp(argv[i], "--variants"))
      variants = argv[i + 1];
  }
  lull_backend* backend = NULL;
  lull_error err;
  if (lull_cuda_backend_create(0, NULL, &backend, &err) != LULL_OK) {
    fprintf(stderr, "no CUDA device: %s\n", err.message);
    return 1;
  }
  lull_cuda_backend* cuda = (lull_cuda_backend*)backend;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  static const struct
  {
    const char* key;
    int w, h;
  } all_sizes[] = {{"720", 1280, 720}, {"1080", 1920, 1080}, {"2160", 3840, 2160}};
  for (size_t s = 0; s < sizeof all_sizes / sizeof *all_sizes; ++s) {
    if (!has_word(sizes, all_sizes[s].key))
      continue;
    const int w = all_sizes[s].w, h = all_sizes[s].h;
    const size_t n = (size_t)w * (size_t)h;
    float* host[6];
    for (int k = 0; k < 6; ++k)
      host[k] = (float*)malloc(n * 3 * sizeof(float));
    unsigned seed = 7u;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const size_t i = (size_t)y * (size_t)w + (size_t)x;
        const int right = x * 3 > w + y;
        const float a = 0.45f + 0.25f * __builtin_sinf(0.031f * (float)x) * __builtin_cosf(0.023f * (float)y);
        for (int c = 0; c < 3; ++c) {
          const float clean = a * (0.2f + 0.8f * (float)y / (float)h) * (right ? 2.0f : 1.0f);
          host[0][3 * i + c] = clean * (0.4f + 1.2f * random01(&seed));
          host[1][3 * i + c] = clean * (0.4f + 1.2f * random01(&seed));
          host[2][3 * i + c] = 0.5f * (host[0][3 * i + c] + host[1][3 * i + c]);
          host[3][3 * i + c] = a;
          host[4][3 * i + c] = c == 2 ? 1.0f : 0.0f;
        }
        host[5][i] = right ? 5.0f + 0.001f * (float)x : 3.0f + 0.002f * (float)y;
      }
    lull_image color_a = device_image(w, h, 3, host[0]), color_b = device_image(w, h, 3, host[1]);
    lull_image color = device_image(w, h, 3, host[2]), albedo = device_image(w, h, 3, host[3]);
    lull_image normal = device_image(w, h, 3, host[4]), depth = device_image(w, h, 1, host[5]);
    lull_image output = device_image(w, h, 3, NULL);
    for (int halves = 1; halves >= 0; --halves) {
      if (!has_word(modes, halves ? "halves" : "one"))
        continue;
      lull_regression_images im;
      memset(&im, 0, sizeof im);
      if (halves) {
        im.color_a = color_a;
        im.color_b = color_b;
      } else {
        im.color = color;
      }
      im.albedo = albedo;
      im.normal = normal;
      im.depth = depth;
      im.output = output;
      const lull_regression_params params = lull_regression_default_params();
      const size_t bytes = lull_rk_filter_bytes(&params, &im, 0);
      unsigned char* memory = NULL;
      CHECK_CUDA(cudaMalloc((void**)&memory, bytes));
      unsigned long long base_sum = 0;
      for (size_t v = 0; v < sizeof all_variants / sizeof *all_variants; ++v) {
        if (!has_word(variants, all_variants[v].name))
          continue;
        bench_ctx b;
        memset(&b, 0, sizeof b);
        b.cuda = cuda;
        b.inner = lull_rk_stream_launchers(cuda);
        b.v = &all_variants[v];
        for (int k = 0; k <= MAX_MARKS; ++k)
          CHECK_CUDA(cudaEventCreate(&b.ev[k]));
        lull_rk_launchers l = b.inner;
        l.ctx = &b;
        l.pixels = ctx_pixels;
        l.tiles = ctx_tiles;
        l.reduce = ctx_reduce;
        l.pilot = ctx_pilot;
        l.sync = NULL;
        l.mark = ctx_mark;
        float* times = (float*)calloc((size_t)(MAX_MARKS + 1) * (size_t)runs, sizeof(float));
        int marks = 0;
        for (int r = -1; r < runs; ++r) {
          b.marks = 0;
          CHECK_CUDA(cudaEventRecord(b.ev[0], cuda->stream));
          if (lull_rk_filter(&params, &im, 0, memory, &l, NULL, &err) != LULL_OK) {
            fprintf(stderr, "error: %s\n", err.message);
            return 1;
          }
          CHECK_CUDA(cudaStreamSynchronize(cuda->stream));
          marks = b.marks;
          if (r < 0)
            continue;
          for (int k = 0; k < marks; ++k)
            CHECK_CUDA(cudaEventElapsedTime(&times[(size_t)k * runs + r], b.ev[k], b.ev[k + 1]));
          CHECK_CUDA(cudaEventElapsedTime(&times[(size_t)MAX_MARKS * runs + r], b.ev[0], b.ev[marks]));
        }
        const unsigned long long sum = checksum(&output);
        if (!base_sum)
          base_sum = sum;
        printf("%dx%d %s %-14s", w, h, halves ? "halves" : "one   ", all_variants[v].name);
        for (int k = 0; k <= marks; ++k) {
          const int row = k < marks ? k : MAX_MARKS;
          qsort(&times[(size_t)row * runs], (size_t)runs, sizeof(float), compare_float);
          printf(" | %s %.3f", k < marks ? b.names[k] : "total", times[(size_t)row * runs + runs / 2]);
        }
        printf(" | output %s\n", sum == base_sum ? "= first variant" : "DIFFERS from the first variant");
        fflush(stdout);
        free(times);
        for (int k = 0; k <= MAX_MARKS; ++k)
          CHECK_CUDA(cudaEventDestroy(b.ev[k]));
      }
      CHECK_CUDA(cudaFree(memory));
    }
    lull_image all[] = {color_a, color_b, color, albedo, normal, depth, output};
    for (size_t k = 0; k < sizeof all / sizeof *all; ++k)
      CHECK_CUDA(cudaFree(all[k].data));
    for (int k = 0; k < 6; ++k)
      free(host[k]);
  }
  backend->ops->destroy(backend);
  return 0;
}
