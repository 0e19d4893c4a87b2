/* Status codes of the core.
 *
 * Core functions return a lull_status and describe a failure in a
 * lull_error; the numeric values equal OIDN's error codes, and exactly one
 * place (plugin/error.c) turns them into OIDN errors. */
#pragma once

#include <stddef.h>

typedef enum lull_status
{
  LULL_OK = 0,
  LULL_ERROR_UNKNOWN = 1,
  LULL_ERROR_INVALID_ARGUMENT = 2,
  LULL_ERROR_INVALID_OPERATION = 3,
  LULL_ERROR_OUT_OF_MEMORY = 4,
  LULL_ERROR_UNSUPPORTED_HARDWARE = 5,
  LULL_ERROR_CANCELLED = 6,
} lull_status;

enum { LULL_ERROR_MESSAGE_SIZE = 256 };

typedef struct lull_error
{
  lull_status code;
  char message[LULL_ERROR_MESSAGE_SIZE];
} lull_error;

/* Records code and a printf-style message in err (which may be NULL) and
 * returns code, so callers can write `return lull_fail(err, ...)`. */
lull_status lull_fail(lull_error* err, lull_status code, const char* format, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;

/* Progress reporting with cancellation.  report returns false to cancel. */
typedef struct lull_progress
{
  int (*report)(void* user, double done); /* NULL: no reporting */
  void* user;
} lull_progress;

/* Returns LULL_ERROR_CANCELLED (and fills err) when the callback asks to stop. */
lull_status lull_progress_report(const lull_progress* progress, double done, lull_error* err);
