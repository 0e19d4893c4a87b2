/* Ctrl-C without globals: the signals that ask us to stop are blocked for
 * the whole process and polled.  The filter's progress monitor polls them
 * (and cancels the filter), and so does the loop over frames, so an
 * interrupted run stops promptly, never in the middle of writing a file,
 * and leaves no temporary files behind. */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>

#include "cli.h"

static void stop_signals(sigset_t* set)
{
  sigemptyset(set);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGHUP);
}

void cli_block_signals(void)
{
  sigset_t set;
  stop_signals(&set);
  sigprocmask(SIG_BLOCK, &set, NULL);
}

int cli_interrupted(void)
{
  sigset_t pending;
  if (sigpending(&pending) != 0)
    return 0;
  return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 ||
         sigismember(&pending, SIGHUP) == 1;
}
