/* The objects behind OIDN's handles, shared by the files of the handle
 * layer.  Lifetimes follow OIDN (and libuv's habit of explicit ownership):
 * every object is reference counted, buffers and filters hold a reference
 * to their device, and a filter holds references to the buffers its images
 * live in.  Each public call that touches a device takes the device's mutex,
 * so calls on one device are serialised as in OIDN. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>

#include <OpenImageDenoise/oidn.h>

#include "../core/backend.h"
#include "filter_types.h"

/* Tags that let a call recognise a handle of the wrong kind or a released
 * one (best effort: released memory may have been reused). */
enum
{
  LULL_MAGIC_DEVICE = 0x6c6c7544,  /* "Dull" */
  LULL_MAGIC_BUFFER = 0x6c6c7542,
  LULL_MAGIC_FILTER = 0x6c6c7546,
  LULL_MAGIC_SEMAPHORE = 0x6c6c7553,
  LULL_MAGIC_DEAD = 0,
};

typedef struct lull_error_slot lull_error_slot;
typedef struct lull_work_queue lull_work_queue;

struct OIDNDeviceImpl
{
  unsigned magic;
  atomic_int refs;
  pthread_mutex_t mutex;        /* serialises calls on this device */
  OIDNDeviceType type;          /* CPU or CUDA, never DEFAULT */
  int cuda_device_id;
  void* cuda_stream;

  /* parameters, effective after commit */
  int verbose;
  int num_threads;
  int set_affinity;
  int committed;
  int dirty;                    /* a parameter was set after the commit */

  lull_backend* backend;        /* created by the commit */
  /* asynchronous calls of a backend that runs work on the calling thread
   * (the CPU) run here, on the device's worker thread (work_queue.c);
   * NULL where the backend queues work itself (CUDA streams) */
  lull_work_queue* queue;
  /* the first error of asynchronous work (a cancelled asynchronous
   * execution, a failure the backend found while waiting) since it was
   * last raised; under mutex (lull_device_park) */
  lull_error parked;

  /* errors: a slot per thread with an unread error, callback for every error */
  pthread_mutex_t error_mutex;  /* guards slots and the callback */
  lull_error_slot* slots;       /* see error.c */
  OIDNErrorFunction error_func;
  void* error_user;
};

struct OIDNBufferImpl
{
  unsigned magic;
  atomic_int refs;
  OIDNDevice device;
  void* data;
  size_t size;
  int storage;                  /* OIDNStorage */
  int shared;                   /* memory owned by the user */
  void* external;               /* imported memory: the backend's handle (release_import) */
};

struct OIDNSemaphoreImpl
{
  unsigned magic;
  atomic_int refs;
  OIDNDevice device;
  int type;                     /* the OIDNExternalSemaphoreTypeFlag it was imported as */
  void* handle;                 /* the backend's (release_semaphore) */
};

/* One image argument of a filter. */
typedef struct lull_filter_image
{
  int set;
  OIDNBuffer buffer;            /* NULL for shared images */
  void* ptr;                    /* shared pointer, or NULL */
  lull_format format;
  size_t width, height, offset, pixel_stride, row_stride;
} lull_filter_image;

struct OIDNFilterImpl
{
  unsigned magic;
  atomic_int refs;
  OIDNDevice device;
  const lull_filter_type* type;
  lull_filter_image images[LULL_MAX_FILTER_IMAGES];
  double values[LULL_MAX_FILTER_PARAMS];
  int committed;                /* commit succeeded and nothing changed since */
  int params_changed;           /* a parameter changed since the last commit (or none yet) */
  int user_weights;             /* the data parameter "weights" is set (RT, RTLightmap) */
  OIDNProgressMonitorFunction progress_func;
  void* progress_user;
  lull_filter_state* state;     /* kept between executions (its release frees it) */
};

/* -- error.c -------------------------------------------------------------- */

/* Records an error: in the device's slot for this thread (the global slot
 * when device is NULL), first error wins; the device's callback sees every
 * error (after the device's lock is released, when the calling thread
 * holds it: lull_errors_hold); verbose devices print it. */
void lull_api_error(OIDNDevice device, OIDNError code, const char* message);
void lull_api_error_status(OIDNDevice device, const lull_error* err);
/* Printed when the device is verbose (unknown parameters, for example). */
void lull_api_warning(OIDNDevice device, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int lull_device_errors_init(OIDNDevice device);
void lull_device_errors_destroy(OIDNDevice device);

/* Errors a thread raises on a device while it holds the device's lock
 * reach the error callback only once the lock is released, as in OIDN,
 * whose API functions report errors after their device guard is gone: the
 * callback may then hand work to another thread that calls the device, or
 * release it.  lull_device_lock calls hold after locking; unhold, before
 * unlocking, takes the waiting errors (in order, any number) when the
 * device's outermost hold ends, and deliver, after unlocking, passes them
 * to the callback.  A thread may hold several devices at once (a progress
 * monitor of one device's filter calling another device). */
typedef struct lull_held_error
{
  OIDNErrorFunction func; /* the callback when the error was raised (as OIDN */
  void* user;             /* reads it), so delivering touches no device */
  OIDNError code;
  char message[LULL_ERROR_MESSAGE_SIZE];
} lull_held_error;
typedef struct lull_held_errors
{
  int count, capacity;
  lull_held_error* items; /* malloc'd; deliver frees it */
} lull_held_errors;
void lull_errors_hold(OIDNDevice device);
void lull_errors_unhold(OIDNDevice device, lull_held_errors* out);
void lull_errors_deliver(lull_held_errors* held);

/* The calling thread's depth of holds on device: how many times it has
 * locked it (0: it does not hold it). */
int lull_errors_depth(OIDNDevice device);

/* -- work_queue.c ----------------------------------------------------------- */

/* A piece of asynchronous work.  run does it on the worker (its error is
 * kept for the next synchronising call); finish runs after it, once the
 * job counts as done, without the device's lock, and frees the job (with
 * the references it held). */
typedef struct lull_job lull_job;
struct lull_job
{
  lull_status (*run)(lull_job* job, lull_error* err);
  void (*finish)(lull_job* job);
  lull_job* next;
};

lull_work_queue* lull_work_queue_new(void);
/* Queues job (the first job starts the worker thread). */
void lull_work_queue_push(lull_work_queue* queue, lull_job* job);
/* 1 when every queued job has run. */
int lull_work_queue_idle(lull_work_queue* queue);
/* Waits until every queued job has run (on the worker: returns at once). */
void lull_work_queue_wait(lull_work_queue* queue);
/* Moves the first error of queued work into err and returns its code
 * (LULL_OK when there is none). */
lull_status lull_work_queue_take_error(lull_work_queue* queue, lull_error* err);
/* 1 on the queue's worker thread (a monitor of a queued run, a finish). */
int lull_work_queue_on_worker(lull_work_queue* queue);
/* Waits for the queue and ends the thread; called on the worker (the
 * last reference to the device went with a job), the worker ends and frees
 * the queue by itself. */
void lull_work_queue_destroy(lull_work_queue* queue);

/* -- handle checks (each records "handle is null" and returns 0) --------- */

int lull_check_device(OIDNDevice device);
int lull_check_buffer(OIDNBuffer buffer);
int lull_check_filter(OIDNFilter filter);
int lull_check_semaphore(OIDNSemaphore semaphore);
/* Records "string pointer is null" on device and returns 0 when s is NULL. */
int lull_check_string(OIDNDevice device, const char* s);

/* -- device.c ------------------------------------------------------------- */

void lull_device_lock(OIDNDevice device);
void lull_device_unlock(OIDNDevice device);
/* 1 when the device is committed and clean, else records the error. */
int lull_device_ready(OIDNDevice device);
/* Drops one reference (buffers and filters call this for theirs). */
void lull_device_release(OIDNDevice device);
/* OIDN's asynchronous errors, with the device locked.  park keeps the first
 * error of asynchronous work until a synchronising call raises it: take
 * moves it into err (returning its code, LULL_OK when none is parked).
 * wait waits for the device's queued work without raising anything (as
 * releases do) and parks what the wait found. */
void lull_device_park(OIDNDevice device, const lull_error* err);
lull_status lull_device_take_parked(OIDNDevice device, lull_error* err);
void lull_device_wait(OIDNDevice device);
/* 1 on the device's worker thread: releases there neither lock the device
 * nor wait (the jobs hold references to what they use, and a thread may
 * hold the lock while it waits for the worker). */
int lull_device_on_worker(OIDNDevice device);

/* -- filter.c ------------------------------------------------------------- */

/* A new filter's value of parameter `index` (what lull.h reports as its
 * default): the registry's default, except where OIDN's differs. */
double lull_param_initial_value(const lull_filter_type* type, int index);

/* -- buffer.c ------------------------------------------------------------- */

/* Drops one reference (filters call this for the buffers of their images). */
void lull_buffer_release(OIDNBuffer buffer);

/* Reads an environment variable as an int; returns fallback when unset. */
int lull_env_int(const char* name, int fallback);
