#include "status.h"

#include <stdarg.h>
#include <stdio.h>

lull_status lull_fail(lull_error* err, lull_status code, const char* format, ...)
{
  if (err) {
    va_list args;
    va_start(args, format);
    vsnprintf(err->message, sizeof(err->message), format, args);
    va_end(args);
    err->code = code;
  }
  return code;
}

lull_status lull_progress_report(const lull_progress* progress, double done, lull_error* err)
{
  if (!progress || !progress->report)
    return LULL_OK;
  if (done < 0.0)
    done = 0.0;
  if (done > 1.0)
    done = 1.0;
  if (!progress->report(progress->user, done))
    return lull_fail(err, LULL_ERROR_CANCELLED, "execution was cancelled");
  return LULL_OK;
}
