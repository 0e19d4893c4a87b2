/* The GradientDomain filter on CUDA: its plan (the Poisson solver's plan and
 * the working planes of core/gradient_domain_planes.h) and the host
 * scheduling that mirrors the CPU run (core/gradient_domain_cpu.c) kernel
 * for step.  The kernels are the Poisson filter's (poisson_kernels.cuh)
 * and GradientDomain's own (gradient_domain_kernels.cuh), run through the
 * same launchers, so tests/gpu/gradient_domain_emulation_test.cu runs the
 * whole filter on the CPU. */
#pragma once

#include "poisson_cuda.h"

#if defined(__cplusplus)
extern "C" {
#endif

typedef struct lull_gdk_plan
{
  lull_pk_plan solver;  /* the Poisson solves (channels of the input, no halves) */
  size_t plane_stride;  /* floats between working planes */
  size_t solver_bytes;  /* the solver's part of the scratch, 256-byte aligned */
  size_t scratch_bytes; /* all of it */
} lull_gdk_plan;

lull_status lull_gdk_plan_make(int width, int height, int channels, int num_sms, size_t max_smem,
                               lull_gdk_plan* plan, lull_error* err);

/* The whole filter (lull_gradient_domain_cpu) on validated images; scratch
 * holds plan->scratch_bytes. */
lull_status lull_gdk_filter_enqueue(lull_gdk_plan* plan, const lull_gradient_domain_params* params,
                                    const lull_gradient_domain_images* images,
                                    unsigned char* scratch, const lull_pk_launchers* launchers,
                                    const lull_progress* progress, lull_error* err);

struct lull_cuda_backend;
lull_status lull_cuda_gradient_domain(struct lull_cuda_backend* cuda,
                                      const lull_gradient_domain_params* params,
                                      const lull_gradient_domain_images* images,
                                      const lull_progress* progress, lull_error* err);

#if defined(__cplusplus)
}
#endif
