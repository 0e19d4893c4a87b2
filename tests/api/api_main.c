/* The OIDN API contract tests: `test_api_contract [GROUP...]` runs the named
 * groups (errors devices buffers params images execute random no_cpu
 * no_devices), or all of them but no_cpu and no_devices, which need a
 * process of their own. */
#include <string.h>

#include "api_util.h"

typedef struct api_group
{
  const char* name;
  void (*run)(void);
  int own_process; /* run only when named */
} api_group;

static const api_group groups[] = {
    {"errors", api_test_errors, 0},   {"devices", api_test_devices, 0},
    {"buffers", api_test_buffers, 0}, {"params", api_test_params, 0},
    {"images", api_test_images, 0},   {"execute", api_test_execute, 0},
    {"random", api_test_random, 0},   {"no_cpu", api_test_no_cpu, 1},
    {"no_devices", api_test_no_devices, 1},
};
enum { NUM_GROUPS = sizeof groups / sizeof groups[0] };

int main(int argc, char** argv)
{
  for (int g = 0; g < NUM_GROUPS; ++g) {
    int wanted = argc < 2 && !groups[g].own_process;
    for (int a = 1; a < argc; ++a)
      wanted |= strcmp(argv[a], groups[g].name) == 0;
    if (wanted) {
      const int before = lull_test_failures;
      groups[g].run();
      printf("%s: %s\n", groups[g].name, lull_test_failures == before ? "ok" : "FAILED");
    }
  }
  for (int a = 1; a < argc; ++a) {
    int known = 0;
    for (int g = 0; g < NUM_GROUPS; ++g)
      known |= strcmp(argv[a], groups[g].name) == 0;
    if (!known) {
      fprintf(stderr, "unknown test group '%s'\n", argv[a]);
      return 2;
    }
  }
  return lull_test_result("api_contract");
}
