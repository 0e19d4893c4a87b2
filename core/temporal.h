/* Temporal accumulation: what one frame of a filter's temporal mode takes
 * and the history it keeps between frames (docs/temporal.md).
 *
 * A filter in temporal mode runs, for each frame,
 *   1. the accumulation (temporal_math.h, on the backend: backend.h's
 *      `temporal`): this frame's colour blended with the reprojected
 *      history, into the colour and variance images of the history block;
 *   2. its spatial filter on that colour, with that variance image
 *      (lull_atrous_params.variance_fallback) and the frame's own guides;
 * and once both succeeded, lull_temporal_end makes the new history the one
 * the next frame reads.  A failed or cancelled frame leaves the history as
 * it was.
 *
 * The history lives in one block of backend memory (device memory on
 * CUDA): two sets of LULL_TH_PLANES planes that swap roles, this frame's
 * demodulated colour, and the accumulated colour and variance images.
 * Keeping the older set lets a frame run again (the same frame number:
 * a parameter changed) from the history it had read. */
#pragma once

#include "image.h"
#include "status.h"
#include "temporal_math.h"

/* The history of one filter. */
typedef struct lull_temporal_history
{
  void* block;           /* backend memory (NULL: none yet) */
  size_t bytes;
  int storage;           /* as allocated (backend.h's LULL_STORAGE_*) */
  int width, height, channels;
  /* set `newest` holds the history after frame `frame` (length > 0 when it
   * holds one); the other set the history before it */
  int newest;
  int length, older_length; /* frames since the last reset; 0: no history */
  long long frame, older_frame; /* -1: not numbered */
} lull_temporal_history;

/* What one frame does with the history. */
typedef struct lull_temporal_step
{
  int read;        /* the set it reads, -1: none (the first frame, a cut) */
  int write;       /* the set it writes */
  long long frame; /* its number, -1: not numbered */
} lull_temporal_step;

/* Bytes of the block for a width x height image of `channels` colour
 * channels; 0 when the size overflows. */
size_t lull_temporal_history_bytes(int width, int height, int channels);

/* Whether the block must be (re)allocated for this frame: none yet, or a
 * different size or channel count. */
int lull_temporal_history_fits(const lull_temporal_history* history, int width, int height,
                               int channels);

/* Forgets the history (the block stays). */
void lull_temporal_history_clear(lull_temporal_history* history);

/* Plans a frame: `frame` its number (-1: not numbered, each execution is
 * the frame after the last), `reset` a cut.  Numbered frames must follow
 * each other (frame n + 1 after n; n again runs frame n anew from the
 * history before it); any other number, or a frame of another size than
 * the numbered history's, is an INVALID_OPERATION error that names both
 * frames (set reset to start a new history).  A frame of another size
 * without numbers starts a new history.  Called before the block is
 * (re)allocated for the frame (lull_temporal_history_fits): a frame that
 * gets a new block reads no history (the caller sets step->read = -1). */
lull_status lull_temporal_begin(const lull_temporal_history* history, int width, int height,
                                int channels, long long frame, int reset,
                                lull_temporal_step* step, lull_error* err);

/* After the frame succeeded: its history becomes the newest. */
void lull_temporal_end(lull_temporal_history* history, const lull_temporal_step* step);

/* The planes of a step in the history's block (whose memory the backend
 * reaches), the accumulated colour image as FLOAT3 or FLOAT4 and the
 * variance as FLOAT. */
lull_temporal_planes lull_temporal_planes_of(const lull_temporal_history* history,
                                             const lull_temporal_step* step);

/* The images one frame reads (optional ones: data NULL). */
typedef struct lull_temporal_images
{
  lull_image color, albedo, normal, depth, motion;
} lull_temporal_images;

/* Checks what a filter's commit can check: colour of 3 or 4 channels,
 * every image of the colour's size, a motion image of 2 or more channels. */
lull_status lull_temporal_validate(const lull_temporal_images* images, lull_error* err);

/* Step 1 on the CPU with OpenMP (num_threads <= 0: OpenMP's default). */
lull_status lull_temporal_cpu(const lull_temporal_params* params,
                              const lull_temporal_images* images,
                              const lull_temporal_planes* planes, int num_threads,
                              lull_error* err);
