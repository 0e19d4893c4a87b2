/* OIDN's error semantics, in one place.
 *
 * Each device keeps one error slot per calling thread; a thread-local
 * global slot takes errors that have no device (failed device creation,
 * physical-device queries, NULL handles).  The first error in a slot wins
 * until oidnGetDeviceError reads and clears it; the device's callback sees
 * every error, on the thread that caused it.
 *
 * A device owns its threads' slots (a list under error_mutex, keyed by a
 * thread number that is never reused) and a slot exists only while it holds
 * an unread error: reading removes it.  Nothing is tied to thread exit, so
 * a thread that ends while another releases the device frees nothing twice
 * (per-device pthread keys did: their destructors raced the device's
 * destruction), and the slots of threads that ended unread go with the
 * device. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handles.h"

struct lull_error_slot
{
  unsigned long long thread; /* thread_number() of the thread that erred */
  OIDNError code;
  char message[LULL_ERROR_MESSAGE_SIZE];
  lull_error_slot* next;
};

/* The globals OIDN's semantics require, all per thread: the slot for
 * errors without a device, and the message oidnGetDeviceError handed out
 * last (valid until the thread's next read). */
static _Thread_local struct
{
  OIDNError code;
  char message[LULL_ERROR_MESSAGE_SIZE];
} global_slot;
static _Thread_local char returned_message[LULL_ERROR_MESSAGE_SIZE];
/* The devices whose locks the thread holds, how deeply, and the errors
 * raised on each meanwhile, for its callback (lull_errors_hold).  A thread
 * holds one device in an API call, two when a progress monitor calls
 * another device; more than LULL_HELD_DEVICES at once is not reachable
 * through the API (their errors would go out at once). */
enum { LULL_HELD_DEVICES = 8 };
static _Thread_local struct
{
  int count;
  struct
  {
    OIDNDevice device;
    int depth;
    lull_held_errors errors;
  } entry[LULL_HELD_DEVICES];
} held;

/* The thread's hold on device, or -1. */
static int held_index(OIDNDevice device)
{
  for (int i = held.count - 1; i >= 0; --i)
    if (held.entry[i].device == device)
      return i;
  return -1;
}

/* A number for the calling thread, unlike pthread_t never reused, so a new
 * thread never inherits the unread error of one that ended. */
static unsigned long long thread_number(void)
{
  static atomic_ullong next = 1;
  static _Thread_local unsigned long long number;
  if (number == 0)
    number = atomic_fetch_add(&next, 1);
  return number;
}

static const char* code_name(OIDNError code)
{
  switch (code) {
    case OIDN_ERROR_NONE: return "none";
    case OIDN_ERROR_UNKNOWN: return "unknown error";
    case OIDN_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case OIDN_ERROR_INVALID_OPERATION: return "invalid operation";
    case OIDN_ERROR_OUT_OF_MEMORY: return "out of memory";
    case OIDN_ERROR_UNSUPPORTED_HARDWARE: return "unsupported hardware";
    case OIDN_ERROR_CANCELLED: return "cancelled";
  }
  return "error";
}

int lull_device_errors_init(OIDNDevice device)
{
  device->slots = NULL;
  return pthread_mutex_init(&device->error_mutex, NULL) == 0;
}

void lull_device_errors_destroy(OIDNDevice device)
{
  lull_error_slot* slot = device->slots;
  while (slot) {
    lull_error_slot* next = slot->next;
    free(slot);
    slot = next;
  }
  device->slots = NULL;
  pthread_mutex_destroy(&device->error_mutex);
}

/* Records an error in the calling thread's slot on device unless the slot
 * holds one already. */
static void device_store(OIDNDevice device, OIDNError code, const char* message)
{
  const unsigned long long thread = thread_number();
  pthread_mutex_lock(&device->error_mutex);
  lull_error_slot* slot = device->slots;
  while (slot && slot->thread != thread)
    slot = slot->next;
  if (!slot) {
    /* out of memory: the error is not kept, but the callback still sees it */
    slot = calloc(1, sizeof *slot);
    if (slot) {
      slot->thread = thread;
      slot->code = code;
      snprintf(slot->message, sizeof slot->message, "%s", message);
      slot->next = device->slots;
      device->slots = slot;
    }
  }
  pthread_mutex_unlock(&device->error_mutex);
}

/* Takes the calling thread's error on device out of its slot. */
static OIDNError device_take(OIDNDevice device, char* message, size_t size)
{
  const unsigned long long thread = thread_number();
  OIDNError code = OIDN_ERROR_NONE;
  pthread_mutex_lock(&device->error_mutex);
  for (lull_error_slot** p = &device->slots; *p; p = &(*p)->next) {
    lull_error_slot* slot = *p;
    if (slot->thread == thread) {
      code = slot->code;
      snprintf(message, size, "%s", slot->message);
      *p = slot->next;
      free(slot);
      break;
    }
  }
  pthread_mutex_unlock(&device->error_mutex);
  return code;
}

static int env_verbose(void)
{
  const char* v = getenv("OIDN_VERBOSE");
  return v ? atoi(v) : 0;
}

int lull_errors_depth(OIDNDevice device)
{
  const int i = held_index(device);
  return i >= 0 ? held.entry[i].depth : 0;
}

void lull_errors_hold(OIDNDevice device)
{
  const int i = held_index(device);
  if (i >= 0) {
    held.entry[i].depth++;
  } else if (held.count < LULL_HELD_DEVICES) {
    memset(&held.entry[held.count], 0, sizeof held.entry[held.count]);
    held.entry[held.count].device = device;
    held.entry[held.count].depth = 1;
    held.count++;
  }
}

void lull_errors_unhold(OIDNDevice device, lull_held_errors* out)
{
  memset(out, 0, sizeof *out);
  const int i = held_index(device);
  if (i < 0 || --held.entry[i].depth > 0)
    return;
  *out = held.entry[i].errors;
  /* locks end in reverse order, but a stack is not assumed */
  for (int k = i; k + 1 < held.count; ++k)
    held.entry[k] = held.entry[k + 1];
  held.count--;
}

void lull_errors_deliver(lull_held_errors* errors)
{
  /* a call may release the device: only the copies are used */
  for (int i = 0; i < errors->count; ++i)
    errors->items[i].func(errors->items[i].user, errors->items[i].code, errors->items[i].message);
  free(errors->items);
  errors->items = NULL;
  errors->count = errors->capacity = 0;
}

/* Appends an error for func to a held list; 0 when memory is short. */
static int held_append(lull_held_errors* e, OIDNErrorFunction func, void* user, OIDNError code,
                       const char* message)
{
  if (e->count == e->capacity) {
    const int capacity = e->capacity ? 2 * e->capacity : 4;
    lull_held_error* items = realloc(e->items, (size_t)capacity * sizeof *items);
    if (!items)
      return 0;
    e->items = items;
    e->capacity = capacity;
  }
  e->items[e->count].func = func;
  e->items[e->count].user = user;
  e->items[e->count].code = code;
  snprintf(e->items[e->count].message, sizeof e->items[e->count].message, "%s", message);
  e->count++;
  return 1;
}

void lull_api_error(OIDNDevice device, OIDNError code, const char* message)
{
  if (device) {
    device_store(device, code, message);
  } else if (global_slot.code == OIDN_ERROR_NONE) {
    global_slot.code = code;
    snprintf(global_slot.message, sizeof global_slot.message, "%s", message);
  }
  const int verbose = device ? device->verbose : env_verbose();
  if (verbose >= 1)
    fprintf(stderr, "lull: error: %s (%s)\n", message, code_name(code));
  if (!device)
    return;
  /* the callback as it is now, as OIDN reads it when the error is raised */
  pthread_mutex_lock(&device->error_mutex);
  OIDNErrorFunction func = device->error_func;
  void* user = device->error_user;
  pthread_mutex_unlock(&device->error_mutex);
  if (!func)
    return;
  const int i = held_index(device);
  if (i >= 0) {
    /* for the callback once the lock is released (out of memory: the slot
     * has the error, the callback does not see it, rather than run under
     * the lock) */
    (void)held_append(&held.entry[i].errors, func, user, code, message);
    return;
  }
  func(user, code, message);
}

void lull_api_error_status(OIDNDevice device, const lull_error* err)
{
  if (err->code != LULL_OK)
    lull_api_error(device, (OIDNError)err->code, err->message);
}

void lull_api_warning(OIDNDevice device, const char* format, ...)
{
  const int verbose = device ? device->verbose : env_verbose();
  if (verbose < 1)
    return;
  va_list args;
  va_start(args, format);
  fputs("lull: warning: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}

OIDN_API OIDNError oidnGetDeviceError(OIDNDevice device, const char** outMessage)
{
  if (device && device->magic != LULL_MAGIC_DEVICE) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid device handle");
    device = NULL; /* read that error back */
  }
  OIDNError code = OIDN_ERROR_NONE;
  if (device) {
    code = device_take(device, returned_message, sizeof returned_message);
  } else {
    code = global_slot.code;
    memcpy(returned_message, global_slot.message, sizeof returned_message);
    global_slot.code = OIDN_ERROR_NONE;
    global_slot.message[0] = '\0';
  }
  if (outMessage)
    *outMessage = code == OIDN_ERROR_NONE ? NULL : returned_message;
  return code;
}

OIDN_API void oidnSetDeviceErrorFunction(OIDNDevice device, OIDNErrorFunction func,
                                         void* userPtr)
{
  if (!lull_check_device(device))
    return;
  pthread_mutex_lock(&device->error_mutex);
  device->error_func = func;
  device->error_user = userPtr;
  pthread_mutex_unlock(&device->error_mutex);
}

/* -- handle checks ---------------------------------------------------------- */

int lull_check_device(OIDNDevice device)
{
  if (!device) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "handle is null");
    return 0;
  }
  if (device->magic != LULL_MAGIC_DEVICE) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid device handle");
    return 0;
  }
  return 1;
}

int lull_check_buffer(OIDNBuffer buffer)
{
  if (!buffer) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "handle is null");
    return 0;
  }
  if (buffer->magic != LULL_MAGIC_BUFFER) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid buffer handle");
    return 0;
  }
  return 1;
}

int lull_check_filter(OIDNFilter filter)
{
  if (!filter) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "handle is null");
    return 0;
  }
  if (filter->magic != LULL_MAGIC_FILTER) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid filter handle");
    return 0;
  }
  return 1;
}

int lull_check_semaphore(OIDNSemaphore semaphore)
{
  if (!semaphore) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "handle is null");
    return 0;
  }
  if (semaphore->magic != LULL_MAGIC_SEMAPHORE) {
    lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid semaphore handle");
    return 0;
  }
  return 1;
}

int lull_check_string(OIDNDevice device, const char* s)
{
  if (!s) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
    return 0;
  }
  return 1;
}
