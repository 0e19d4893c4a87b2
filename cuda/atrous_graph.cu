/* The à-trous filter's launches as a CUDA graph, cached per device.
 *
 * A run is about a dozen dependent launches (the colour pass, prepare, the
 * layout tables, per level the guide and the level kernel, the finish).
 * Launched one by one, each kernel waits for its predecessor to drain and
 * the next to ramp up; as one graph the GPU schedules them back to back.
 * On the H100 the API call took 0.1417 ms at 512^2 against the graph's
 * 0.1190 (1.19x), and 0.7063 against 0.6716 ms at 1080p (1.05x)
 * (bench_atrous_cuda, "API").
 *
 * Building a graph costs more than it saves once (capture and
 * instantiation take ~0.1 ms), so graphs are kept: a run first records its
 * launches (lull_atrous_enqueue with recording launchers: arguments only,
 * nothing runs), and if a cached graph was made from the same records it
 * is launched as it is; otherwise the records are captured on a private
 * stream into a new graph, which replaces the least recently used of
 * GRAPH_SLOTS.  The records hold every argument of every launch (images,
 * scratch memory, parameters; the structures are zeroed before they are
 * filled and the image views' padding cleared, so equal records compare
 * equal byte for byte), so a graph is
 * reused exactly when launching anew would launch the same kernels with
 * the same arguments.
 *
 * Runs that report progress synchronise between levels and keep the
 * direct launches; so do runs on a stream the application is capturing
 * (its graph gets the kernels, as before the cache) and any run whose
 * graph cannot be made or launched (the graph is an optimisation, never a
 * requirement). */
#include <stdlib.h>
#include <string.h>

#include "atrous_graph.h"
#include "backend_cuda.h"

enum
{
  GRAPH_SLOTS = 4,
  /* the colour pass and prepare (one launcher call), the tables, levels */
  MAX_LAUNCHES = 2 + LULL_ATROUS_MAX_ITERATIONS,
};

enum
{
  LAUNCH_PREPARE,
  LAUNCH_TABLES,
  LAUNCH_LEVEL
};

/* One launcher call with its arguments. */
typedef struct launch_record
{
  int kind;
  int permuted, variance_mode, geometry_kind; /* LAUNCH_LEVEL */
  int* tables;                                /* LAUNCH_TABLES */
  int width, height, levels;
  lull_atrous_prepare_args prepare;
  lull_atrous_level_args level;
} launch_record;

typedef struct launch_list
{
  int count, overflow;
  launch_record at[MAX_LAUNCHES];
} launch_list;

typedef struct graph_slot
{
  cudaGraphExec_t exec; /* NULL: empty */
  unsigned long long used;
  launch_list launches;
} graph_slot;

struct lull_atrous_graphs
{
  cudaStream_t capture; /* private: the backend's stream may be the legacy default */
  unsigned long long clock;
  graph_slot slots[GRAPH_SLOTS];
};

/* -- recording launchers --------------------------------------------------- */

static launch_record* record_next(launch_list* list)
{
  if (list->count == MAX_LAUNCHES) {
    list->overflow = 1;
    return NULL;
  }
  launch_record* r = &list->at[list->count++];
  memset(r, 0, sizeof *r);
  return r;
}

/* An image view with its padding bytes zeroed (lull_image has 4 after
 * height): a struct copied from the caller may carry any bytes there, and
 * records compare byte for byte, so equal views must be equal bytes (or
 * every run would miss the cache). */
static void image_clean(lull_image* im)
{
  lull_image c;
  memset(&c, 0, sizeof c);
  c.data = im->data;
  c.format = im->format;
  c.width = im->width;
  c.height = im->height;
  c.pixel_stride = im->pixel_stride;
  c.row_stride = im->row_stride;
  memcpy(im, &c, sizeof c);
}

static cudaError_t record_prepare(void* ctx, const lull_atrous_prepare_args* args)
{
  launch_record* r = record_next((launch_list*)ctx);
  if (r) {
    r->kind = LAUNCH_PREPARE;
    r->prepare = *args;
    lull_image* images[5] = {&r->prepare.color, &r->prepare.albedo, &r->prepare.normal,
                             &r->prepare.geometry, &r->prepare.variance};
    for (int i = 0; i < 5; ++i)
      image_clean(images[i]);
  }
  return cudaSuccess;
}

static cudaError_t record_tables(void* ctx, int* tables, int width, int height, int levels)
{
  launch_record* r = record_next((launch_list*)ctx);
  if (r) {
    r->kind = LAUNCH_TABLES;
    r->tables = tables;
    r->width = width;
    r->height = height;
    r->levels = levels;
  }
  return cudaSuccess;
}

static cudaError_t record_level(void* ctx, const lull_atrous_level_args* args, int permuted,
                                int variance_mode, int geometry_kind)
{
  launch_record* r = record_next((launch_list*)ctx);
  if (r) {
    r->kind = LAUNCH_LEVEL;
    r->level = *args;
    image_clean(&r->level.output);
    r->permuted = permuted;
    r->variance_mode = variance_mode;
    r->geometry_kind = geometry_kind;
  }
  return cudaSuccess;
}

/* The recorded launches through real launchers. */
static cudaError_t replay(const launch_list* list, const lull_atrous_launchers* l)
{
  cudaError_t code = cudaSuccess;
  for (int i = 0; i < list->count && code == cudaSuccess; ++i) {
    const launch_record* r = &list->at[i];
    if (r->kind == LAUNCH_PREPARE)
      code = l->prepare(l->ctx, &r->prepare);
    else if (r->kind == LAUNCH_TABLES)
      code = l->layout_tables(l->ctx, r->tables, r->width, r->height, r->levels);
    else
      code = l->level(l->ctx, &r->level, r->permuted, r->variance_mode, r->geometry_kind);
  }
  return code;
}

static int same_launches(const launch_list* a, const launch_list* b)
{
  return a->count == b->count &&
         memcmp(a->at, b->at, (size_t)a->count * sizeof a->at[0]) == 0;
}

/* -- the cache --------------------------------------------------------------- */

/* The records captured into a graph and instantiated into slot s (an
 * executable graph there is updated in place when its topology allows). */
static cudaError_t slot_build(lull_atrous_graphs* g, graph_slot* s, const launch_list* list)
{
  cudaError_t code = cudaStreamBeginCapture(g->capture, cudaStreamCaptureModeThreadLocal);
  if (code != cudaSuccess)
    return code;
  const lull_atrous_launchers real = lull_atrous_stream_launchers(&g->capture);
  const cudaError_t launched = replay(list, &real);
  cudaGraph_t graph = NULL;
  code = cudaStreamEndCapture(g->capture, &graph);
  if (launched != cudaSuccess || code != cudaSuccess) {
    if (graph)
      (void)cudaGraphDestroy(graph);
    return launched != cudaSuccess ? launched : code;
  }
  if (s->exec) {
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(s->exec, graph, &info) != cudaSuccess) {
      (void)cudaGetLastError();
      (void)cudaGraphExecDestroy(s->exec);
      s->exec = NULL;
    }
  }
  if (!s->exec) {
    code = cudaGraphInstantiate(&s->exec, graph, 0);
    if (code != cudaSuccess)
      s->exec = NULL;
  }
  (void)cudaGraphDestroy(graph);
  if (code == cudaSuccess)
    s->launches = *list;
  return code;
}

/* The slot whose graph was made from these launches, or a new one. */
static cudaError_t slot_for(lull_atrous_graphs* g, const launch_list* list, graph_slot** out)
{
  graph_slot* victim = &g->slots[0];
  for (int i = 0; i < GRAPH_SLOTS; ++i) {
    graph_slot* s = &g->slots[i];
    if (s->exec && same_launches(&s->launches, list)) {
      *out = s;
      return cudaSuccess;
    }
    if (s->used < victim->used)
      victim = s;
  }
  victim->used = 0;
  victim->launches.count = 0;
  *out = victim;
  return slot_build(g, victim, list);
}

lull_status lull_cuda_atrous_graph_enqueue(lull_atrous_graphs** cache, cudaStream_t stream,
                                           const lull_atrous_plan* plan,
                                           const lull_atrous_params* params,
                                           const lull_atrous_images* images,
                                           unsigned char* scratch, lull_error* err)
{
  /* what a direct run would launch (nothing runs) */
  launch_list* list = (launch_list*)calloc(1, sizeof *list);
  if (!list)
    return lull_fail(err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
  const lull_atrous_launchers recording = {list, record_prepare, record_tables, record_level,
                                           NULL};
  lull_status status = lull_atrous_enqueue(plan, params, images, scratch, &recording, NULL, err);
  if (status != LULL_OK) {
    free(list);
    return status;
  }
  cudaError_t code = cudaErrorNotSupported;
  graph_slot* slot = NULL;
  /* a stream the application is capturing gets the kernels themselves
   * (into its graph), as without the cache */
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (!list->overflow && cudaStreamIsCapturing(stream, &capturing) == cudaSuccess &&
      capturing == cudaStreamCaptureStatusNone) {
    if (!*cache) {
      lull_atrous_graphs* g = (lull_atrous_graphs*)calloc(1, sizeof *g);
      if (g && cudaStreamCreateWithFlags(&g->capture, cudaStreamNonBlocking) == cudaSuccess)
        *cache = g;
      else
        free(g);
    }
    if (*cache)
      code = slot_for(*cache, list, &slot);
  }
  if (code == cudaSuccess) {
    slot->used = ++(*cache)->clock;
    code = cudaGraphLaunch(slot->exec, stream);
  }
  if (code != cudaSuccess) {
    /* no graph: the launches one by one, as without the cache */
    (void)cudaGetLastError();
    cudaStream_t s = stream;
    const lull_atrous_launchers direct = lull_atrous_stream_launchers(&s);
    code = replay(list, &direct);
  }
  free(list);
  if (code != cudaSuccess)
    return lull_cuda_fail(err, code, "cannot launch the ATrous filter");
  return LULL_OK;
}

void lull_cuda_atrous_graphs_release(lull_atrous_graphs* cache)
{
  if (!cache)
    return;
  for (int i = 0; i < GRAPH_SLOTS; ++i)
    if (cache->slots[i].exec)
      (void)cudaGraphExecDestroy(cache->slots[i].exec);
  (void)cudaStreamDestroy(cache->capture);
  free(cache);
}
