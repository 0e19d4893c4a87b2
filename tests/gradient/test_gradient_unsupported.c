/* A backend without the gradient-domain operations (a backend added
 * without them) makes the filter report UNSUPPORTED_HARDWARE with the
 * filter's name, and never calls through a NULL pointer.  The filter type
 * is compiled into this test (its symbols are internal to the library). */
#include <string.h>

#include "filter_types.h"
#include "test_util.h"

int main(void)
{
  const lull_backend_ops ops = {0}; /* every operation absent */
  lull_backend backend;
  memset(&backend, 0, sizeof backend);
  backend.ops = &ops;
  const double values[LULL_MAX_FILTER_PARAMS] = {0};
  lull_filter_config config;
  memset(&config, 0, sizeof config);
  config.values = values;
  const lull_filter_type* types[] = {&lull_filter_type_poisson, &lull_filter_type_gradient_domain};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    lull_error err = {LULL_OK, ""};
    const lull_status status = types[i]->execute(&backend, &config, NULL, 0, &err);
    CHECK_EQ_INT(status, LULL_ERROR_UNSUPPORTED_HARDWARE);
    char expected[128];
    snprintf(expected, sizeof expected, "filter '%s' is not supported on this device",
             types[i]->name);
    CHECK(strcmp(err.message, expected) == 0);
  }
  return lull_test_result("gradient_unsupported");
}
