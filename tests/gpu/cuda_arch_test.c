/* Which GPUs a build's CUDA architectures run on (cuda/cuda_arch.h), on
 * the CPU: CUDA's rules for machine code (same major version, minor at
 * least the code's), PTX (any newer device), arch-specific code (its chip
 * only) and family code (its major version), on the default list and on
 * single-architecture builds; entries CMake resolves itself ("native")
 * are left to the launch. */
#include "../../cuda/cuda_arch.h"
#include "test_util.h"

static const char* const DEFAULT_LIST = "75-real,80-real,86-real,89-real,90-real,90-virtual";

int main(void)
{
  /* the default build: Turing to Hopper as machine code, Hopper's PTX */
  CHECK(lull_cuda_arch_list_runs(DEFAULT_LIST, 7, 5));
  CHECK(lull_cuda_arch_list_runs(DEFAULT_LIST, 8, 0));
  CHECK(lull_cuda_arch_list_runs(DEFAULT_LIST, 8, 7));  /* Orin: sm_80 code */
  CHECK(lull_cuda_arch_list_runs(DEFAULT_LIST, 9, 0));
  CHECK(lull_cuda_arch_list_runs(DEFAULT_LIST, 10, 0)); /* Blackwell: the PTX */
  CHECK(lull_cuda_arch_list_runs(DEFAULT_LIST, 12, 0));
  CHECK(!lull_cuda_arch_list_runs(DEFAULT_LIST, 7, 0)); /* Volta */
  CHECK(!lull_cuda_arch_list_runs(DEFAULT_LIST, 6, 1)); /* Pascal */

  /* a build for the H100 alone */
  CHECK(lull_cuda_arch_list_runs("90-real", 9, 0));
  CHECK(!lull_cuda_arch_list_runs("90-real", 8, 0));  /* an A100 */
  CHECK(!lull_cuda_arch_list_runs("90-real", 10, 0)); /* no PTX for newer chips */
  /* machine code runs within its major version only */
  CHECK(lull_cuda_arch_list_runs("80-real", 8, 9));
  CHECK(!lull_cuda_arch_list_runs("86-real", 8, 0));
  CHECK(!lull_cuda_arch_list_runs("80-real", 9, 0));
  /* PTX runs on anything at least as new */
  CHECK(lull_cuda_arch_list_runs("75-virtual", 9, 0));
  CHECK(!lull_cuda_arch_list_runs("80-virtual", 7, 5));
  /* a plain number is both */
  CHECK(lull_cuda_arch_list_runs("80", 8, 6));
  CHECK(lull_cuda_arch_list_runs("80", 12, 0));
  CHECK(!lull_cuda_arch_list_runs("80", 7, 5));
  /* arch-specific code runs on its chip only, family code within its major
   * version; three-digit architectures */
  CHECK(lull_cuda_arch_list_runs("90a-real", 9, 0));
  CHECK(lull_cuda_arch_list_runs("90a", 9, 0));
  CHECK(!lull_cuda_arch_list_runs("90a", 12, 0));
  CHECK(!lull_cuda_arch_list_runs("100a-real", 10, 3));
  CHECK(!lull_cuda_arch_list_runs("100a-virtual", 12, 0));
  CHECK(lull_cuda_arch_list_runs("100f-real", 10, 3));
  CHECK(lull_cuda_arch_list_runs("100f", 10, 0));
  CHECK(!lull_cuda_arch_list_runs("100f", 12, 0));
  CHECK(!lull_cuda_arch_list_runs("103f-real", 10, 0));
  CHECK(lull_cuda_arch_list_runs("75-real,100-real", 10, 0));
  CHECK(!lull_cuda_arch_list_runs("75-real,100-real", 9, 0));
  /* what CMake resolves when it configures cannot be judged here */
  CHECK(lull_cuda_arch_list_runs("native", 8, 0));
  CHECK(lull_cuda_arch_list_runs("all-major", 7, 5));
  /* nothing compiled: nothing runs */
  CHECK(!lull_cuda_arch_list_runs("", 9, 0));
  return lull_test_result("cuda_arch");
}
