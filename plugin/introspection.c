/* lull.h's listing of filter types, parameters and images. */
#include <lull.h>

#include "handles.h"

OIDN_API const char* lullGetVersionString(void)
{
  return LULL_VERSION_STRING;
}

OIDN_API int lullGetFilterTypeCount(void)
{
  int n = 0;
  while (lull_filter_types()[n])
    ++n;
  return n;
}

OIDN_API const char* lullGetFilterTypeName(int index)
{
  if (index < 0 || index >= lullGetFilterTypeCount())
    return NULL;
  return lull_filter_types()[index]->name;
}

static const lull_filter_type* find(const char* name)
{
  return name ? lull_filter_type_find(name) : NULL;
}

OIDN_API int lullGetFilterParamCount(const char* filterType)
{
  const lull_filter_type* type = find(filterType);
  return type ? type->num_params : -1;
}

OIDN_API bool lullGetFilterParamInfo(const char* filterType, int index, LullParamInfo* info)
{
  const lull_filter_type* type = find(filterType);
  if (!type || !info || index < 0 || index >= type->num_params)
    return false;
  const lull_param_def* def = &type->params[index];
  info->name = def->name;
  info->type = (LullParamType)def->type;
  info->defaultValue = lull_param_initial_value(type, index);
  info->minValue = def->min;
  info->maxValue = def->max;
  info->readOnly = def->read_only != 0;
  info->description = def->doc;
  return true;
}

OIDN_API int lullGetFilterImageCount(const char* filterType)
{
  const lull_filter_type* type = find(filterType);
  if (!type)
    return -1;
  int n = 0;
  while (type->image_names[n])
    ++n;
  return n;
}

OIDN_API const char* lullGetFilterImageName(const char* filterType, int index)
{
  const int n = lullGetFilterImageCount(filterType);
  if (index < 0 || index >= n)
    return NULL;
  return find(filterType)->image_names[index];
}
