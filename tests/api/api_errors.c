/* OIDN's error semantics: the thread-local global slot (NULL handles, failed
 * device creation), per-device per-thread slots where the first error wins
 * and reading clears, and the error callback, called for every error on the
 * thread that caused it. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_util.h"

/* -- every function given a NULL handle: "handle is null", global slot ----- */

static void null_handles(void)
{
  char bytes[16] = {0};
  size_t size = 0;
  OIDNDevice device = api_cpu_device();
  OIDNFilter filter = oidnNewFilter(device, "RT");
  OIDNBuffer buffer = oidnNewBuffer(device, 64);
  EXPECT_OK(device);

#define NULL_CALL(call)                                                     \
  do {                                                                      \
    call;                                                                   \
    EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "handle is null");  \
    EXPECT_OK(device); /* nothing reaches the device that was not named */  \
  } while (0)

  NULL_CALL(oidnRetainDevice(NULL));
  NULL_CALL(oidnReleaseDevice(NULL));
  NULL_CALL(oidnSetDeviceBool(NULL, "verbose", false));
  NULL_CALL(oidnSetDeviceInt(NULL, "verbose", 0));
  NULL_CALL(CHECK(oidnGetDeviceBool(NULL, "setAffinity") == false));
  NULL_CALL(CHECK_EQ_INT(oidnGetDeviceInt(NULL, "version"), 0));
  NULL_CALL(oidnSetDeviceErrorFunction(NULL, NULL, NULL));
  NULL_CALL(oidnCommitDevice(NULL));
  NULL_CALL(oidnSyncDevice(NULL));
  NULL_CALL(CHECK(oidnNewBuffer(NULL, 16) == NULL));
  NULL_CALL(CHECK(oidnNewBufferWithStorage(NULL, 16, OIDN_STORAGE_HOST) == NULL));
  NULL_CALL(CHECK(oidnNewSharedBuffer(NULL, bytes, sizeof bytes) == NULL));
  NULL_CALL(CHECK(oidnNewSharedBufferFromFD(NULL, OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD, 3,
                                            16) == NULL));
  NULL_CALL(CHECK(oidnNewSharedBufferFromWin32Handle(
                      NULL, OIDN_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_WIN32, bytes, NULL, 16) == NULL));
  NULL_CALL(CHECK(oidnNewSharedBufferFromMetal(NULL, bytes) == NULL));
  NULL_CALL(CHECK_EQ_INT(oidnGetBufferSize(NULL), 0));
  NULL_CALL(CHECK_EQ_INT(oidnGetBufferStorage(NULL), OIDN_STORAGE_UNDEFINED));
  NULL_CALL(CHECK(oidnGetBufferData(NULL) == NULL));
  NULL_CALL(oidnReadBuffer(NULL, 0, 4, bytes));
  NULL_CALL(oidnReadBufferAsync(NULL, 0, 4, bytes));
  NULL_CALL(oidnWriteBuffer(NULL, 0, 4, bytes));
  NULL_CALL(oidnWriteBufferAsync(NULL, 0, 4, bytes));
  NULL_CALL(oidnRetainBuffer(NULL));
  NULL_CALL(oidnReleaseBuffer(NULL));
  NULL_CALL(CHECK(oidnNewFilter(NULL, "RT") == NULL));
  NULL_CALL(oidnRetainFilter(NULL));
  NULL_CALL(oidnReleaseFilter(NULL));
  NULL_CALL(oidnSetFilterImage(NULL, "color", buffer, OIDN_FORMAT_FLOAT, 1, 1, 0, 0, 0));
  NULL_CALL(oidnSetSharedFilterImage(NULL, "color", bytes, OIDN_FORMAT_FLOAT, 1, 1, 0, 0, 0));
  NULL_CALL(oidnUnsetFilterImage(NULL, "color"));
  NULL_CALL(oidnSetSharedFilterData(NULL, "weights", bytes, sizeof bytes));
  NULL_CALL(oidnUpdateFilterData(NULL, "weights"));
  NULL_CALL(oidnUnsetFilterData(NULL, "weights"));
  NULL_CALL(oidnSetFilterBool(NULL, "hdr", true));
  NULL_CALL(CHECK(oidnGetFilterBool(NULL, "hdr") == false));
  NULL_CALL(oidnSetFilterInt(NULL, "quality", 6));
  NULL_CALL(CHECK_EQ_INT(oidnGetFilterInt(NULL, "quality"), 0));
  NULL_CALL(oidnSetFilterFloat(NULL, "inputScale", 1.0f));
  NULL_CALL(CHECK(oidnGetFilterFloat(NULL, "inputScale") == 0.0f));
  NULL_CALL(oidnSetFilterProgressMonitorFunction(NULL, NULL, NULL));
  NULL_CALL(oidnCommitFilter(NULL));
  NULL_CALL(oidnExecuteFilter(NULL));
  NULL_CALL(oidnExecuteFilterAsync(NULL));
  NULL_CALL(oidnRetainSemaphore(NULL));
  NULL_CALL(oidnReleaseSemaphore(NULL));
  NULL_CALL(oidnSignalSemaphoresAsync(NULL, NULL, NULL, 0));
  NULL_CALL(oidnWaitSemaphoresAsync(NULL, NULL, NULL, NULL, 0));
  NULL_CALL(CHECK(oidnNewSharedSemaphoreFromFD(NULL, OIDN_EXTERNAL_SEMAPHORE_TYPE_FLAG_OPAQUE_FD,
                                               3) == NULL));
#undef NULL_CALL

  /* a NULL buffer given to a valid filter: the filter's device knows it
   * (OIDN reports errors of a call on the device of its first object) */
  oidnSetFilterImage(filter, "color", NULL, OIDN_FORMAT_FLOAT3, 1, 1, 0, 0, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "handle is null");
  EXPECT_OK(NULL);

  /* NULL strings: "string pointer is null" on the object's device */
  (void)oidnGetDeviceInt(device, NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
  oidnSetDeviceInt(device, NULL, 1);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
  CHECK(oidnNewFilter(device, NULL) == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
  oidnSetFilterBool(filter, NULL, true);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
  (void)oidnGetFilterFloat(filter, NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
  oidnSetSharedFilterImage(filter, NULL, bytes, OIDN_FORMAT_FLOAT, 1, 1, 0, 0, 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
  oidnUnsetFilterImage(filter, NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
  oidnSetSharedFilterData(filter, NULL, bytes, sizeof bytes);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
  CHECK(oidnGetPhysicalDeviceString(0, NULL) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
  CHECK(oidnGetPhysicalDeviceData(0, NULL, &size) == NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "string pointer is null");
  EXPECT_OK(device);

  oidnReleaseBuffer(buffer);
  oidnReleaseFilter(filter);
  oidnReleaseDevice(device);
  EXPECT_OK(NULL);
}

/* -- slots: first error wins, reading clears, messages stay valid ---------- */

static void slots(void)
{
  /* global slot */
  EXPECT_OK(NULL);
  CHECK(oidnNewDevice(OIDN_DEVICE_TYPE_HIP) == NULL);
  oidnRetainDevice(NULL); /* a second error does not replace the first */
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_UNSUPPORTED_HARDWARE, "unsupported device type: HIP");
  EXPECT_OK(NULL);
  const char* message = "not touched";
  CHECK_EQ_INT(oidnGetDeviceError(NULL, &message), OIDN_ERROR_NONE);
  CHECK(message == NULL); /* no error: the message is NULL */

  /* a device's slot */
  OIDNDevice device = api_cpu_device();
  (void)oidnGetDeviceInt(device, "noSuchParameter");
  oidnCommitDevice(device); /* second commit: another error, not stored */
  message = NULL;
  CHECK_EQ_INT(oidnGetDeviceError(device, &message), OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(message && strstr(message, "unknown device parameter or type mismatch") &&
        strstr(message, "noSuchParameter"));
  /* the message stays valid until the next read, whatever happens meanwhile */
  char copy[256];
  snprintf(copy, sizeof copy, "%s", message ? message : "");
  oidnCommitDevice(device);
  CHECK(message && strcmp(message, copy) == 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "committed only once");
  EXPECT_OK(device);
  EXPECT_OK(NULL); /* device errors never go to the global slot */

  /* outMessage may be NULL; the read still clears */
  oidnCommitDevice(device);
  CHECK_EQ_INT(oidnGetDeviceError(device, NULL), OIDN_ERROR_INVALID_OPERATION);
  EXPECT_OK(device);
  oidnReleaseDevice(device);
}

/* -- the error callback ------------------------------------------------------ */

typedef struct callback_log
{
  atomic_int calls;
  OIDNError last_code;
  char last_message[256];
  pthread_t last_thread;
  OIDNDevice device;        /* for the re-entrant call */
  int reentrant_version;    /* what a call into the API from the callback saw */
} callback_log;

static void log_error(void* user, OIDNError code, const char* message)
{
  callback_log* log = user;
  atomic_fetch_add(&log->calls, 1);
  log->last_code = code;
  snprintf(log->last_message, sizeof log->last_message, "%s", message ? message : "(null)");
  log->last_thread = pthread_self();
}

static void log_error_reentrant(void* user, OIDNError code, const char* message)
{
  callback_log* log = user;
  log_error(user, code, message);
  /* calling back into the API on the same device must not deadlock */
  log->reentrant_version = oidnGetDeviceInt(log->device, "version");
}

static void callback(void)
{
  /* no commit needed to install a callback */
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  callback_log log;
  memset(&log, 0, sizeof log);
  atomic_init(&log.calls, 0);
  oidnSetDeviceErrorFunction(device, log_error, &log);
  EXPECT_OK(device);

  /* every error reaches the callback, with its code and message, even
   * though only the first stays in the slot */
  (void)oidnNewFilter(device, "RT"); /* not committed */
  CHECK_EQ_INT(atomic_load(&log.calls), 1);
  CHECK_EQ_INT(log.last_code, OIDN_ERROR_INVALID_OPERATION);
  oidnCommitDevice(device);
  CHECK_EQ_INT(atomic_load(&log.calls), 1); /* success: no call */
  (void)oidnGetDeviceInt(device, "bogus");
  CHECK_EQ_INT(atomic_load(&log.calls), 2);
  CHECK_EQ_INT(log.last_code, OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(log.last_message, "bogus") != NULL);
  oidnCommitDevice(device);
  CHECK_EQ_INT(atomic_load(&log.calls), 3);
  CHECK_EQ_INT(log.last_code, OIDN_ERROR_INVALID_OPERATION);
  CHECK(strstr(log.last_message, "committed only once") != NULL);
  CHECK(pthread_equal(log.last_thread, pthread_self()));
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION); /* the first one */

  /* errors of the global slot never reach a device's callback */
  oidnRetainFilter(NULL);
  CHECK_EQ_INT(atomic_load(&log.calls), 3);
  EXPECT_ERROR(NULL, OIDN_ERROR_INVALID_ARGUMENT);

  /* errors of the filter and buffer functions reach the device's callback */
  OIDNFilter filter = oidnNewFilter(device, "RT");
  (void)oidnGetFilterInt(filter, "bogus");
  CHECK_EQ_INT(atomic_load(&log.calls), 4);
  OIDNBuffer buffer = oidnNewBuffer(device, 8);
  oidnReadBuffer(buffer, 4, 8, log.last_message);
  CHECK_EQ_INT(atomic_load(&log.calls), 5);
  CHECK_EQ_INT(log.last_code, OIDN_ERROR_INVALID_ARGUMENT);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);

  /* the callback may call into the API */
  callback_log reentrant;
  memset(&reentrant, 0, sizeof reentrant);
  atomic_init(&reentrant.calls, 0);
  reentrant.device = device;
  oidnSetDeviceErrorFunction(device, log_error_reentrant, &reentrant);
  oidnExecuteFilter(filter); /* not committed */
  CHECK_EQ_INT(atomic_load(&reentrant.calls), 1);
  CHECK_EQ_INT(reentrant.reentrant_version, OIDN_VERSION);
  CHECK_EQ_INT(atomic_load(&log.calls), 5); /* replaced */
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "not committed");

  /* NULL removes the callback */
  oidnSetDeviceErrorFunction(device, NULL, NULL);
  (void)oidnGetDeviceInt(device, "bogus");
  CHECK_EQ_INT(atomic_load(&reentrant.calls), 1);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);

  oidnReleaseBuffer(buffer);
  oidnReleaseFilter(filter);
  oidnReleaseDevice(device);
}

/* -- the callback runs without the device's lock --------------------------------- */

/* A callback that asks another thread to call the device and waits for it
 * (up to 20 s): with the device still locked by the erring call, that
 * thread would wait for the lock and the callback would time out. */
typedef struct handoff
{
  OIDNDevice device;
  pthread_mutex_t mutex;
  pthread_cond_t done_cond;
  int done;
  int version;    /* what the other thread read */
  int timed_out;
  int started;
  pthread_t thread;
} handoff;

static void* handoff_thread(void* arg)
{
  handoff* h = arg;
  const int version = oidnGetDeviceInt(h->device, "version");
  pthread_mutex_lock(&h->mutex);
  h->version = version;
  h->done = 1;
  pthread_cond_signal(&h->done_cond);
  pthread_mutex_unlock(&h->mutex);
  return NULL;
}

static void handoff_callback(void* user, OIDNError code, const char* message)
{
  (void)code;
  (void)message;
  handoff* h = user;
  if (pthread_create(&h->thread, NULL, handoff_thread, h) != 0)
    return;
  h->started = 1;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 20;
  pthread_mutex_lock(&h->mutex);
  while (!h->done && !h->timed_out)
    h->timed_out = pthread_cond_timedwait(&h->done_cond, &h->mutex, &until) != 0;
  pthread_mutex_unlock(&h->mutex);
  /* (joined by the test once the erring call has returned: after a
   * time-out the thread waits for the lock that call holds) */
}

/* Makes handoff_callback device's error callback. */
static void handoff_init(handoff* h, OIDNDevice device)
{
  memset(h, 0, sizeof *h);
  h->device = device;
  pthread_mutex_init(&h->mutex, NULL);
  pthread_cond_init(&h->done_cond, NULL);
  oidnSetDeviceErrorFunction(device, handoff_callback, h);
}

/* Joins the callback's thread; 1 when it ran and the callback saw it end. */
static int handoff_join(handoff* h)
{
  if (!h->started)
    return 0;
  pthread_join(h->thread, NULL);
  h->started = 0;
  const int ok = h->done && !h->timed_out;
  h->done = h->timed_out = 0;
  return ok;
}

static void release_callback(void* user, OIDNError code, const char* message)
{
  (void)code;
  (void)message;
  oidnReleaseDevice((OIDNDevice)user);
}

static void callback_unlocked(void)
{
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  handoff h;
  handoff_init(&h, device);
  /* errors raised with the device locked: not committed, then an
   * execution that is not committed */
  CHECK(oidnNewBuffer(device, 16) == NULL);
  CHECK(handoff_join(&h));
  CHECK_EQ_INT(h.version, OIDN_VERSION);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "not committed");
  oidnCommitDevice(device);
  OIDNFilter filter = oidnNewFilter(device, "RT");
  oidnExecuteFilter(filter);
  CHECK(handoff_join(&h));
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  oidnReleaseFilter(filter);
  pthread_cond_destroy(&h.done_cond);
  pthread_mutex_destroy(&h.mutex);

  /* a callback may release the device's last reference (ASan and valgrind
   * see any use of it afterwards) */
  oidnSetDeviceErrorFunction(device, release_callback, device);
  CHECK(oidnNewFilter(device, "bogus") == NULL);
}

/* A progress monitor runs under its execution's lock and may call the API:
 * errors it raises on another device, and any number on its own, wait for
 * their device's lock to be released and keep their order. */
typedef struct monitor_calls
{
  OIDNDevice other;
  OIDNFilter filter;
  int done;
} monitor_calls;

static bool monitor_calling(void* user, double done)
{
  (void)done;
  monitor_calls* m = user;
  if (m->done)
    return true;
  m->done = 1;
  (void)oidnNewBuffer(m->other, 16); /* the other device is dirty */
  for (int i = 0; i < 6; ++i) {
    char name[16];
    snprintf(name, sizeof name, "bogus%d", i);
    (void)oidnGetFilterInt(m->filter, name);
  }
  return true;
}

typedef struct order_log
{
  char seen[16]; /* the digits of the "bogus<i>" names, in callback order */
  int n;
} order_log;

static void order_callback(void* user, OIDNError code, const char* message)
{
  (void)code;
  order_log* o = user;
  const char* b = message ? strstr(message, "bogus") : NULL;
  if (b && o->n < (int)sizeof o->seen - 1)
    o->seen[o->n++] = b[5];
}

static void callback_from_monitor(void)
{
  enum { W = 16, H = 12 };
  OIDNDevice device = api_cpu_device();
  order_log order;
  memset(&order, 0, sizeof order);
  oidnSetDeviceErrorFunction(device, order_callback, &order);
  OIDNDevice other = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnCommitDevice(other);
  oidnSetDeviceInt(other, "noSuchParameter", 0); /* dirty */
  handoff h;
  handoff_init(&h, other);

  float* color = api_noisy_image(W, H, 3, 0.1f, 5);
  float* output = calloc((size_t)W * H * 3, sizeof(float));
  OIDNFilter filter = oidnNewFilter(device, "ATrous");
  oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  monitor_calls m = {other, filter, 0};
  oidnSetFilterProgressMonitorFunction(filter, monitor_calling, &m);
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  CHECK_EQ_INT(m.done, 1);
  CHECK(handoff_join(&h)); /* the other device's callback ran unlocked */
  EXPECT_ERROR_MSG(other, OIDN_ERROR_INVALID_OPERATION, "not committed");
  CHECK(strcmp(order.seen, "012345") == 0); /* all six, in order */
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT); /* the first in the slot */

  oidnReleaseFilter(filter);
  oidnReleaseDevice(other);
  oidnReleaseDevice(device);
  pthread_cond_destroy(&h.done_cond);
  pthread_mutex_destroy(&h.mutex);
  free(color);
  free(output);
}

/* -- threads ------------------------------------------------------------------- */

typedef struct thread_args
{
  OIDNDevice device;
  int iterations;
  int wrong;            /* reads that returned another thread's error */
  OIDNError first_read; /* the first read of the thread, before any error of its own */
  OIDNError global_read;
} thread_args;

/* Which kind of error the calling thread causes (0: the main thread), so
 * the callback can tell whether it runs on the thread that erred. */
static _Thread_local int thread_kind;

/* Causes one error of a kind per thread: kind 1 INVALID_ARGUMENT (an
 * unknown parameter), kind 2 INVALID_OPERATION (a second commit). */
static void* error_loop(thread_args* t, int kind)
{
  thread_kind = kind;
  t->first_read = oidnGetDeviceError(t->device, NULL);
  const OIDNError expected = kind == 2 ? OIDN_ERROR_INVALID_OPERATION : OIDN_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < t->iterations; ++i) {
    if (kind == 2)
      oidnCommitDevice(t->device);
    else
      (void)oidnGetDeviceInt(t->device, "bogus");
    if (oidnGetDeviceError(t->device, NULL) != expected)
      ++t->wrong;
    if (oidnGetDeviceError(t->device, NULL) != OIDN_ERROR_NONE)
      ++t->wrong;
  }
  /* the thread's own global slot */
  (void)oidnNewDevice(OIDN_DEVICE_TYPE_METAL);
  t->global_read = oidnGetDeviceError(NULL, NULL);
  /* leave an unread error behind: it must not reach other threads (nor
   * leak memory when the thread ends) */
  if (kind == 2)
    oidnCommitDevice(t->device);
  else
    (void)oidnGetDeviceInt(t->device, "bogus");
  return NULL;
}

static void* argument_thread(void* arg)
{
  return error_loop(arg, 1);
}

static void* operation_thread(void* arg)
{
  return error_loop(arg, 2);
}

typedef struct thread_log
{
  atomic_int calls;
  atomic_int wrong_thread; /* callbacks whose code does not fit the calling thread */
} thread_log;

static void thread_callback(void* user, OIDNError code, const char* message)
{
  (void)message;
  thread_log* log = user;
  atomic_fetch_add(&log->calls, 1);
  const OIDNError expected = thread_kind == 1   ? OIDN_ERROR_INVALID_ARGUMENT
                             : thread_kind == 2 ? OIDN_ERROR_INVALID_OPERATION
                                                : OIDN_ERROR_UNKNOWN;
  if (code != expected)
    atomic_fetch_add(&log->wrong_thread, 1);
}

static void threads(void)
{
  OIDNDevice device = api_cpu_device();
  /* errors of the main thread, left unread while the others work */
  oidnRetainBuffer(NULL);
  oidnCommitDevice(device);

  thread_log log;
  atomic_init(&log.calls, 0);
  atomic_init(&log.wrong_thread, 0);
  oidnSetDeviceErrorFunction(device, thread_callback, &log);

  enum { ITERATIONS = 300 };
  thread_args a = {device, ITERATIONS, 0, OIDN_ERROR_NONE, OIDN_ERROR_NONE};
  thread_args b = a;
  pthread_t ta, tb;
  CHECK(pthread_create(&ta, NULL, argument_thread, &a) == 0);
  CHECK(pthread_create(&tb, NULL, operation_thread, &b) == 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);

  /* errors stayed on the thread that caused them */
  CHECK_EQ_INT(a.first_read, OIDN_ERROR_NONE);
  CHECK_EQ_INT(b.first_read, OIDN_ERROR_NONE);
  CHECK_EQ_INT(a.wrong, 0);
  CHECK_EQ_INT(b.wrong, 0);
  CHECK_EQ_INT(a.global_read, OIDN_ERROR_UNSUPPORTED_HARDWARE);
  CHECK_EQ_INT(b.global_read, OIDN_ERROR_UNSUPPORTED_HARDWARE);
  /* the callback ran once per device error, on the thread that erred */
  CHECK_EQ_INT(atomic_load(&log.calls), 2 * (ITERATIONS + 1));
  CHECK_EQ_INT(atomic_load(&log.wrong_thread), 0);
  /* main's own errors are still there, and only those */
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "committed only once");
  EXPECT_OK(device);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "handle is null");
  EXPECT_OK(NULL);
  oidnReleaseDevice(device);
}

/* A worker errs on a device and ends while the caller releases the device:
 * nothing is freed twice (regression: per-device pthread keys freed the
 * worker's slot in its exit destructor and again in the device's
 * destruction). */
typedef struct release_race
{
  OIDNDevice device;
  atomic_int erred;
} release_race;

static void* err_and_exit(void* arg)
{
  release_race* race = arg;
  (void)oidnGetDeviceInt(race->device, "bogus");
  atomic_store(&race->erred, 1);
  return NULL;
}

static void release_while_thread_exits(void)
{
  for (int i = 0; i < 200; ++i) {
    release_race race;
    race.device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
    atomic_init(&race.erred, 0);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, err_and_exit, &race) == 0);
    while (!atomic_load(&race.erred))
      ;
    oidnReleaseDevice(race.device); /* while the worker is ending */
    pthread_join(thread, NULL);
  }
  EXPECT_OK(NULL);
}

void api_test_errors(void)
{
  null_handles();
  slots();
  callback();
  callback_unlocked();
  callback_from_monitor();
  threads();
  release_while_thread_exits();
}
