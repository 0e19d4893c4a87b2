/* Filter parameters from text, typed through lull.h's introspection
 * (lullGetFilterParamInfo), so the tool knows every parameter of every
 * filter type, including ones added after it was written. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

static int find_param(const char* filter, const char* name, LullParamInfo* info)
{
  const int count = lullGetFilterParamCount(filter);
  for (int i = 0; i < count; ++i)
    if (lullGetFilterParamInfo(filter, i, info) && strcmp(info->name, name) == 0)
      return 1;
  return 0;
}

int cli_filter_has_param(const char* filter, const char* name)
{
  LullParamInfo info;
  return find_param(filter, name, &info);
}

int cli_filter_has_image(const char* filter, const char* name)
{
  const int count = lullGetFilterImageCount(filter);
  for (int i = 0; i < count; ++i) {
    const char* image = lullGetFilterImageName(filter, i);
    if (image && strcmp(image, name) == 0)
      return 1;
  }
  return 0;
}

/* "iterations, colorMode, ..." */
static void list_params(const char* filter, char* out, size_t size)
{
  out[0] = '\0';
  const int count = lullGetFilterParamCount(filter);
  size_t used = 0;
  for (int i = 0; i < count; ++i) {
    LullParamInfo info;
    if (!lullGetFilterParamInfo(filter, i, &info) || info.readOnly)
      continue;
    const int n = snprintf(out + used, size - used, "%s%s", used ? ", " : "", info.name);
    if (n < 0 || (size_t)n >= size - used)
      break;
    used += (size_t)n;
  }
}

const char* cli_param_type_name(LullParamType type)
{
  switch (type) {
    case LULL_PARAM_TYPE_BOOL: return "bool";
    case LULL_PARAM_TYPE_INT: return "int";
    case LULL_PARAM_TYPE_FLOAT: return "float";
  }
  return "?";
}

static int parse_bool(const char* s, double* value)
{
  static const char* const yes[] = {"1", "true", "on", "yes"};
  static const char* const no[] = {"0", "false", "off", "no"};
  for (int i = 0; i < 4; ++i) {
    if (strcasecmp(s, yes[i]) == 0) {
      *value = 1;
      return 0;
    }
    if (strcasecmp(s, no[i]) == 0) {
      *value = 0;
      return 0;
    }
  }
  return 1;
}

/* Parses text as the parameter's type; non-zero when it is not one. */
static int parse_value(const LullParamInfo* info, const char* text, double* value)
{
  char* end = NULL;
  errno = 0;
  switch (info->type) {
    case LULL_PARAM_TYPE_BOOL:
      return parse_bool(text, value);
    case LULL_PARAM_TYPE_INT: {
      const long long v = strtoll(text, &end, 10);
      *value = (double)v;
      return errno != 0 || end == text || *end != '\0';
    }
    case LULL_PARAM_TYPE_FLOAT:
      /* "auto" (and NaN) where the default is automatic */
      if (isnan(info->defaultValue) &&
          (strcasecmp(text, "auto") == 0 || strcasecmp(text, "nan") == 0)) {
        *value = NAN;
        return 0;
      }
      *value = strtod(text, &end);
      return errno != 0 || end == text || *end != '\0' || !isfinite(*value);
  }
  return 1;
}

int cli_params_resolve(const char* filter, const cli_param_text* text, int count, cli_param* out,
                       int* out_count, int quiet, char* err, size_t err_size)
{
  *out_count = 0;
  for (int i = 0; i < count; ++i) {
    const cli_param_text* t = &text[i];
    LullParamInfo info;
    if (!find_param(filter, t->name, &info)) {
      if (t->optional) {
        if (!quiet)
          cli_error("warning: filter %s has no parameter '%s': %s ignored", filter, t->name,
                    t->flag);
        continue;
      }
      char names[512];
      list_params(filter, names, sizeof names);
      snprintf(err, err_size, "%s %s=%s: filter %s has no parameter '%s' (it has: %s)", t->flag,
               t->name, t->value, filter, t->name, names);
      return 1;
    }
    if (info.readOnly) {
      snprintf(err, err_size, "%s %s=%s: '%s' of filter %s is read-only", t->flag, t->name,
               t->value, t->name, filter);
      return 1;
    }
    double value;
    if (parse_value(&info, t->value, &value)) {
      snprintf(err, err_size, "%s %s=%s: '%s' of filter %s is a%s %s%s", t->flag, t->name,
               t->value, t->name, filter, info.type == LULL_PARAM_TYPE_INT ? "n" : "",
               cli_param_type_name(info.type),
               info.type == LULL_PARAM_TYPE_BOOL ? " (true/false, 1/0, on/off, yes/no)" : "");
      return 1;
    }
    if (!isnan(value) && (value < info.minValue || value > info.maxValue)) {
      snprintf(err, err_size, "%s %s=%s: '%s' of filter %s must be in [%g, %g]", t->flag,
               t->name, t->value, t->name, filter, info.minValue, info.maxValue);
      return 1;
    }
    /* a later value of the same parameter replaces the earlier one */
    int slot = 0;
    while (slot < *out_count && strcmp(out[slot].name, info.name) != 0)
      ++slot;
    if (slot == *out_count) {
      if (*out_count == CLI_MAX_PARAMS) {
        snprintf(err, err_size, "too many parameters");
        return 1;
      }
      ++*out_count;
    }
    snprintf(out[slot].name, sizeof out[slot].name, "%s", info.name);
    out[slot].type = info.type;
    out[slot].value = value;
  }
  return 0;
}

int cli_param_value(const char* filter, const cli_param* params, int count, const char* name,
                    double* value)
{
  LullParamInfo info;
  if (!find_param(filter, name, &info))
    return 0;
  *value = info.defaultValue;
  for (int i = 0; i < count; ++i)
    if (strcmp(params[i].name, name) == 0)
      *value = params[i].value;
  return 1;
}
