/* Progress on stderr: on a terminal one bar redrawn in place (frames done
 * plus the filter's progress inside the current frame); elsewhere (logs of
 * a render farm) plain lines, one per event, never carriage returns. */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static double now_seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void cli_error(const char* format, ...)
{
  va_list args;
  va_start(args, format);
  fputs("lull: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}

char* cli_printable(char* s)
{
  for (char* c = s; *c; ++c)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      *c = '?';
  return s;
}

void cli_progress_init(cli_progress* progress, int quiet, int total)
{
  memset(progress, 0, sizeof *progress);
  const char* term = getenv("TERM");
  progress->quiet = quiet;
  progress->tty = !quiet && isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0);
  progress->total = total > 0 ? total : 1;
}

static void draw(cli_progress* progress)
{
  enum { BAR = 30 };
  double overall = ((double)(progress->index - 1) + progress->fraction) / progress->total;
  overall = overall < 0 ? 0 : overall > 1 ? 1 : overall;
  char bar[BAR + 1];
  const int filled = (int)(overall * BAR + 0.5);
  for (int i = 0; i < BAR; ++i)
    bar[i] = i < filled ? '#' : '.';
  bar[BAR] = '\0';
  if (progress->total > 1)
    fprintf(stderr, "\r\033[K[%s] %3d%%  %d/%d  %s", bar, (int)(overall * 100), progress->index,
            progress->total, progress->label);
  else
    fprintf(stderr, "\r\033[K[%s] %3d%%  %s", bar, (int)(overall * 100), progress->label);
  fflush(stderr);
  progress->drawn = 1;
  progress->last_draw = now_seconds();
}

static void erase(cli_progress* progress)
{
  if (progress->tty && progress->drawn) {
    fputs("\r\033[K", stderr);
    progress->drawn = 0;
  }
}

void cli_progress_frame(cli_progress* progress, long position, const char* label)
{
  progress->index = (int)position + 1;
  snprintf(progress->label, sizeof progress->label, "%s", label);
  progress->fraction = 0;
  if (progress->tty)
    draw(progress);
}

void cli_progress_update(cli_progress* progress, double fraction)
{
  progress->fraction = fraction;
  /* a few redraws a second are enough, and cost nothing */
  if (progress->tty && now_seconds() - progress->last_draw > 0.1)
    draw(progress);
}

void cli_progress_message(cli_progress* progress, int is_error, const char* format, ...)
{
  if (progress->quiet && !is_error)
    return;
  const int redraw = progress->drawn;
  erase(progress);
  char message[2 * CLI_ERROR_SIZE];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  /* one line whatever a file's layer and pass names hold */
  cli_error("%s", cli_printable(message));
  if (redraw)
    draw(progress);
}

void cli_progress_finish(cli_progress* progress)
{
  erase(progress);
  fflush(stderr);
}
