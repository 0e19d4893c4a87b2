/* Thread counts for the OpenMP loops of the CPU backend. */
#pragma once

#if defined(_OPENMP)
  #include <omp.h>
#endif

/* requested > 0: that many threads, but no more than the processors
 * available (a team of a million threads overflows the OpenMP runtime's
 * stack, and each thread gets scratch rows); otherwise all the runtime
 * offers. */
static inline int lull_thread_count(int requested)
{
#if defined(_OPENMP)
  if (requested > 0) {
    const int processors = omp_get_num_procs();
    return requested < processors ? requested : processors;
  }
  return omp_get_max_threads();
#else
  (void)requested;
  return 1;
#endif
}

/* Index of the calling thread inside a parallel region. */
static inline int lull_thread_index(void)
{
#if defined(_OPENMP)
  return omp_get_thread_num();
#else
  return 0;
#endif
}
