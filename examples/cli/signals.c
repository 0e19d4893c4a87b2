/* Ctrl-C without globals: the signals that ask us to stop are blocked for
 * the whole process and polled by the commands that write files (denoise,
 * compare).  The filter's progress monitor polls them (and cancels the
 * filter), and so does the loop over frames, so an interrupted run stops
 * promptly, never in the middle of writing a file, and leaves no temporary
 * files behind; then the signal is let through to end the process. */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>

#include "cli.h"

static const int stops[] = {SIGINT, SIGTERM, SIGHUP};

/* The stop signals, but for those the parent had us ignore: `nohup` ignores
 * SIGHUP and a script's background job SIGINT, and a blocked signal stays
 * pending even when ignored, so it would have stopped the run it was meant
 * to leave alone. */
static void stop_signals(sigset_t* set)
{
  sigemptyset(set);
  for (int i = 0; i < 3; ++i) {
    struct sigaction current;
    if (sigaction(stops[i], NULL, &current) == 0 && current.sa_handler == SIG_IGN)
      continue;
    sigaddset(set, stops[i]);
  }
}

void cli_block_signals(void)
{
  sigset_t set;
  stop_signals(&set);
  sigprocmask(SIG_BLOCK, &set, NULL);
  /* past the file-size limit (ulimit -f) a write then fails with EFBIG
   * and the output's temporary file is removed; by default SIGXFSZ ended
   * the process there and left the partial temporary file behind */
  signal(SIGXFSZ, SIG_IGN);
}

void cli_end_by_signal(void)
{
  sigset_t pending, set;
  if (sigpending(&pending) != 0)
    return;
  for (int i = 0; i < 3; ++i)
    if (sigismember(&pending, stops[i]) == 1) {
      fflush(NULL);
      signal(stops[i], SIG_DFL);
      stop_signals(&set);
      sigprocmask(SIG_UNBLOCK, &set, NULL); /* delivered here: the process ends */
      return;
    }
}

int cli_interrupted(void)
{
  sigset_t pending;
  if (sigpending(&pending) != 0)
    return 0;
  return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 ||
         sigismember(&pending, SIGHUP) == 1;
}
