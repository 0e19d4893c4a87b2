/* OIDN's error semantics, in one place.
 *
 * Each device keeps one error slot per calling thread; a thread-local
 * global slot takes errors that have no device (failed device creation,
 * physical-device queries, NULL handles).  The first error in a slot wins
 * until oidnGetDeviceError reads and clears it; the device's callback sees
 * every error, on the thread that caused it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handles.h"

struct lull_error_slot
{
  OIDNError code;
  char message[LULL_ERROR_MESSAGE_SIZE];
  char returned[LULL_ERROR_MESSAGE_SIZE]; /* valid until the next read */
  OIDNDevice device;
  lull_error_slot* next;
};

/* The one global OIDN's semantics require: the per-thread slot for errors
 * without a device. */
static _Thread_local lull_error_slot global_slot;

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

/* Called by pthreads when a thread that used the device exits. */
static void slot_thread_exit(void* ptr)
{
  lull_error_slot* slot = ptr;
  OIDNDevice device = slot->device;
  pthread_mutex_lock(&device->error_mutex);
  for (lull_error_slot** p = &device->slots; *p; p = &(*p)->next)
    if (*p == slot) {
      *p = slot->next;
      break;
    }
  pthread_mutex_unlock(&device->error_mutex);
  free(slot);
}

int lull_device_errors_init(OIDNDevice device)
{
  if (pthread_mutex_init(&device->error_mutex, NULL) != 0)
    return 0;
  if (pthread_key_create(&device->error_key, slot_thread_exit) != 0) {
    pthread_mutex_destroy(&device->error_mutex);
    return 0;
  }
  device->slots = NULL;
  return 1;
}

void lull_device_errors_destroy(OIDNDevice device)
{
  /* pthread_key_delete runs no destructors: free every thread's slot here */
  pthread_key_delete(device->error_key);
  lull_error_slot* slot = device->slots;
  while (slot) {
    lull_error_slot* next = slot->next;
    free(slot);
    slot = next;
  }
  device->slots = NULL;
  pthread_mutex_destroy(&device->error_mutex);
}

/* The calling thread's slot on device, created on first use; NULL when out
 * of memory (the error then still reaches the callback). */
static lull_error_slot* device_slot(OIDNDevice device)
{
  lull_error_slot* slot = pthread_getspecific(device->error_key);
  if (slot)
    return slot;
  slot = calloc(1, sizeof *slot);
  if (!slot)
    return NULL;
  slot->device = device;
  if (pthread_setspecific(device->error_key, slot) != 0) {
    free(slot);
    return NULL;
  }
  pthread_mutex_lock(&device->error_mutex);
  slot->next = device->slots;
  device->slots = slot;
  pthread_mutex_unlock(&device->error_mutex);
  return slot;
}

static int env_verbose(void)
{
  const char* v = getenv("OIDN_VERBOSE");
  return v ? atoi(v) : 0;
}

void lull_api_error(OIDNDevice device, OIDNError code, const char* message)
{
  lull_error_slot* slot = device ? device_slot(device) : &global_slot;
  if (slot && slot->code == OIDN_ERROR_NONE) {
    slot->code = code;
    snprintf(slot->message, sizeof slot->message, "%s", message);
  }
  const int verbose = device ? device->verbose : env_verbose();
  if (verbose >= 1)
    fprintf(stderr, "lull: error: %s (%s)\n", message, code_name(code));
  if (device) {
    pthread_mutex_lock(&device->error_mutex);
    OIDNErrorFunction func = device->error_func;
    void* user = device->error_user;
    pthread_mutex_unlock(&device->error_mutex);
    if (func)
      func(user, code, message);
  }
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
  lull_error_slot* slot = &global_slot;
  if (device) {
    if (device->magic != LULL_MAGIC_DEVICE) {
      lull_api_error(NULL, OIDN_ERROR_INVALID_ARGUMENT, "invalid device handle");
      slot = &global_slot;
    } else {
      slot = device_slot(device);
      if (!slot) {
        if (outMessage)
          *outMessage = "out of memory";
        return OIDN_ERROR_OUT_OF_MEMORY;
      }
    }
  }
  const OIDNError code = slot->code;
  if (outMessage) {
    if (code == OIDN_ERROR_NONE) {
      *outMessage = NULL;
    } else {
      memcpy(slot->returned, slot->message, sizeof slot->returned);
      *outMessage = slot->returned;
    }
  }
  slot->code = OIDN_ERROR_NONE;
  slot->message[0] = '\0';
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

int lull_check_string(OIDNDevice device, const char* s)
{
  if (!s) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
    return 0;
  }
  return 1;
}
