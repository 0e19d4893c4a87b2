/* The Poisson filter on the CUDA backend: validation, the plan for this
 * device, scratch memory, and the kernels on the backend's stream
 * (poisson_schedule.cu). */
#include "backend_cuda.h"
#include "poisson_cuda.h"

lull_status lull_cuda_poisson(lull_cuda_backend* cuda, const lull_poisson_params* params,
                              const lull_poisson_images* images, const lull_progress* progress,
                              lull_error* err)
{
  lull_status status = lull_poisson_validate(params, images, err);
  if (status != LULL_OK)
    return status;
  const lull_image* primal = images->color.data ? &images->color : &images->color_a;
  const int channels = LULL_MIN(lull_format_channels(primal->format), 3);
  size_t max_smem = 0;
  status = lull_cuda_max_shared_memory(cuda, &max_smem, err);
  if (status != LULL_OK)
    return status;
  lull_pk_plan plan;
  status = lull_pk_plan_make(images->output.width, images->output.height, channels,
                             images->output_variance.data != NULL,
                             params->preconditioner == LULL_POISSON_PRECOND_DCT, cuda->num_sms,
                             max_smem, &plan, err);
  if (status != LULL_OK)
    return status;
  unsigned char* scratch = (unsigned char*)lull_cuda_scratch(cuda, plan.scratch_bytes, err);
  if (!scratch)
    return err ? err->code : LULL_ERROR_OUT_OF_MEMORY;
  const lull_pk_launchers launchers = lull_pk_stream_launchers(&cuda->stream);
  return lull_pk_filter_enqueue(&plan, params, images, scratch, &launchers, progress, err);
}
