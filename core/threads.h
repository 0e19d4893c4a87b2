/* Thread counts for the OpenMP loops of the CPU backend. */
#pragma once

#if defined(_OPENMP)
  #include <omp.h>
#endif

/* requested > 0: that many threads; otherwise all the runtime offers. */
static inline int lull_thread_count(int requested)
{
  if (requested > 0)
    return requested;
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
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
