/* Which GPUs a build's CUDA architectures run on (cuda/cuda_arch.h), on
 * the CPU: CUDA's rules for machine code (same major version, minor at
 * least the code's), PTX (any newer device), arch-specific code (its chip
 * only) and family code (its major version), on the default list and on
 * single-architecture builds; entries CMake resolves itself ("native")
 * are left to the launch. */
#include <stdio.h>

#include "../../cuda/cuda_arch.h"
#include "test_util.h"

#define DEFAULT_LIST "75-real,80-real,86-real,89-real,90-real,90-virtual"

typedef struct arch_case
{
  const char* list;
  int major, minor;
  int runs;
} arch_case;

static const arch_case CASES[] = {
    /* the default build: Turing to Hopper as machine code, Hopper's PTX */
    {DEFAULT_LIST, 7, 5, 1},
    {DEFAULT_LIST, 8, 0, 1},
    {DEFAULT_LIST, 8, 7, 1},  /* Orin: sm_80 code */
    {DEFAULT_LIST, 9, 0, 1},
    {DEFAULT_LIST, 10, 0, 1}, /* Blackwell: the PTX */
    {DEFAULT_LIST, 12, 0, 1},
    {DEFAULT_LIST, 7, 0, 0},  /* Volta */
    {DEFAULT_LIST, 6, 1, 0},  /* Pascal */
    /* a build for the H100 alone */
    {"90-real", 9, 0, 1},
    {"90-real", 8, 0, 0},  /* an A100 */
    {"90-real", 10, 0, 0}, /* no PTX for newer chips */
    /* machine code runs within its major version only */
    {"80-real", 8, 9, 1},
    {"86-real", 8, 0, 0},
    {"80-real", 9, 0, 0},
    /* PTX runs on anything at least as new */
    {"75-virtual", 9, 0, 1},
    {"80-virtual", 7, 5, 0},
    /* a plain number is both */
    {"80", 8, 6, 1},
    {"80", 12, 0, 1},
    {"80", 7, 5, 0},
    /* arch-specific code runs on its chip only, family code within its
     * major version; three-digit architectures */
    {"90a-real", 9, 0, 1},
    {"90a", 9, 0, 1},
    {"90a", 12, 0, 0},
    {"100a-real", 10, 3, 0},
    {"100a-virtual", 12, 0, 0},
    {"100f-real", 10, 3, 1},
    {"100f", 10, 0, 1},
    {"100f", 12, 0, 0},
    {"103f-real", 10, 0, 0},
    {"75-real,100-real", 10, 0, 1},
    {"75-real,100-real", 9, 0, 0},
    /* what CMake resolves when it configures cannot be judged here */
    {"native", 8, 0, 1},
    {"all-major", 7, 5, 1},
    /* nothing compiled: nothing runs */
    {"", 9, 0, 0},
};

int main(void)
{
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; ++i) {
    const arch_case* c = &CASES[i];
    const int runs = lull_cuda_arch_list_runs(c->list, c->major, c->minor);
    if (runs != c->runs)
      fprintf(stderr, "\"%s\" on compute capability %d.%d: %d, expected %d\n", c->list, c->major,
              c->minor, runs, c->runs);
    CHECK_EQ_INT(runs, c->runs);
  }
  return lull_test_result("cuda_arch");
}
