/* The à-trous filter's launches as cached CUDA graphs (atrous_graph.cu says
 * why and how).  The entry points are named lull_cuda_* as the rest of the
 * backend's host code that runs only with a GPU (the allocation-failure
 * test, tests/hardening, tells such code apart by that name). */
#pragma once

#include "atrous_cuda.h"

/* The cache of one backend (opaque; NULL until the first run). */
typedef struct lull_atrous_graphs lull_atrous_graphs;

/* Enqueues the whole filter on `stream` as lull_atrous_enqueue would
 * without progress reporting, through a cached graph (made and kept in
 * *cache when none matches; launched one by one when no graph can be
 * made).  Called with the backend's device current. */
lull_status lull_cuda_atrous_graph_enqueue(lull_atrous_graphs** cache, cudaStream_t stream,
                                           const lull_atrous_plan* plan,
                                           const lull_atrous_params* params,
                                           const lull_atrous_images* images,
                                           unsigned char* scratch, lull_error* err);

/* Frees the cache's graphs and stream (NULL: nothing); the device must be
 * current and the graphs' work finished. */
void lull_cuda_atrous_graphs_release(lull_atrous_graphs* cache);
