/* The process's peak resident memory so far (VmHWM of /proc/self/status)
 * in KB, -1 where unknown.  It only grows: measure in a child process. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline long lull_peak_memory_kb(void)
{
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0)
      kb = strtol(line + 6, NULL, 10);
  if (f)
    fclose(f);
  return kb;
}
