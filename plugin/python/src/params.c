/* Filter parameters, typed by lull.h's tables (lullGetFilterParamInfo):
 * bools take True/False (or 0/1), ints take integers (not floats), floats
 * take any real number; "automatic" float parameters (default NaN) also
 * take None.  Values outside the documented range raise ValueError here,
 * before OIDN would report them at commit. */
#include <math.h>
#include <string.h>

#include "pylull.h"

/* Finds a parameter by name; raises KeyError listing the valid names. */
static int find(const char* type, const char* name, LullParamInfo* info)
{
  const int n = lullGetFilterParamCount(type);
  for (int i = 0; i < n; ++i)
    if (lullGetFilterParamInfo(type, i, info) && strcmp(info->name, name) == 0)
      return 1;
  PyObject* names = PyList_New(0);
  for (int i = 0; names && i < n; ++i) {
    LullParamInfo other;
    if (!lullGetFilterParamInfo(type, i, &other))
      continue;
    PyObject* s = PyUnicode_FromString(other.name);
    if (!s || PyList_Append(names, s) != 0)
      Py_CLEAR(names);
    Py_XDECREF(s);
  }
  if (names) {
    PyObject* message = PyUnicode_FromFormat(
        "unknown parameter '%.60s' for filter '%s' (parameters: %R)", name, type, names);
    if (message) {
      PyErr_SetObject(PyExc_KeyError, message);
      Py_DECREF(message);
    }
    Py_DECREF(names);
  }
  return 0;
}

static int out_of_range(const LullParamInfo* info, double v)
{
  char message[200];
  PyOS_snprintf(message, sizeof message, "parameter '%s' = %.9g is out of range [%.9g, %.9g]",
                info->name, v, info->minValue, info->maxValue);
  PyErr_SetString(PyExc_ValueError, message);
  return 0;
}

int lull_py_is_numpy_bool(PyObject* value)
{
  const char* name = Py_TYPE(value)->tp_name;
  return strcmp(name, "numpy.bool_") == 0 || strcmp(name, "numpy.bool") == 0;
}

int lull_py_param_set(lull_py_filter* f, const char* name, PyObject* value)
{
  LullParamInfo info;
  if (!find(f->type_name, name, &info))
    return 0;
  if (info.readOnly) {
    PyErr_Format(PyExc_ValueError, "parameter '%s' of filter '%s' is read-only", name,
                 f->type_name);
    return 0;
  }
  switch (info.type) {
    case LULL_PARAM_TYPE_BOOL: {
      long v;
      if (PyBool_Check(value))
        v = value == Py_True;
      else if (PyIndex_Check(value) && !PyFloat_Check(value)) {
        v = PyNumber_AsSsize_t(value, NULL);
        if (v == -1 && PyErr_Occurred())
          return 0;
        if (v != 0 && v != 1) {
          PyErr_Format(PyExc_ValueError, "parameter '%s' is a bool (got %ld)", name, v);
          return 0;
        }
      } else if (lull_py_is_numpy_bool(value))
        v = PyObject_IsTrue(value) == 1;
      else {
        PyErr_Format(PyExc_TypeError, "parameter '%s' is a bool, got %.60s", name,
                     Py_TYPE(value)->tp_name);
        return 0;
      }
      if (!lull_py_filter_open(f)) /* the conversion ran Python code */
        return 0;
      oidnSetFilterBool(f->handle, name, v != 0);
      break;
    }
    case LULL_PARAM_TYPE_INT: {
      if (PyFloat_Check(value) || !PyIndex_Check(value)) {
        PyErr_Format(PyExc_TypeError, "parameter '%s' is an int, got %.60s", name,
                     Py_TYPE(value)->tp_name);
        return 0;
      }
      int overflow = 0;
      PyObject* index = PyNumber_Index(value);
      if (!index)
        return 0;
      const long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
      Py_DECREF(index);
      if (v == -1 && PyErr_Occurred())
        return 0;
      if (overflow || (double)v < info.minValue || (double)v > info.maxValue) {
        PyErr_Format(PyExc_ValueError, "parameter '%s' = %R is out of range [%lld, %lld]", name,
                     value, (long long)info.minValue, (long long)info.maxValue);
        return 0;
      }
      if (!lull_py_filter_open(f)) /* the conversion ran Python code */
        return 0;
      oidnSetFilterInt(f->handle, name, (int)v);
      break;
    }
    case LULL_PARAM_TYPE_FLOAT: {
      double v;
      if (value == Py_None && isnan(info.defaultValue))
        v = NAN; /* automatic */
      else {
        if (!PyFloat_Check(value) && !PyLong_Check(value) &&
            !PyObject_HasAttrString(value, "__float__")) {
          PyErr_Format(PyExc_TypeError, "parameter '%s' is a float, got %.60s", name,
                       Py_TYPE(value)->tp_name);
          return 0;
        }
        v = PyFloat_AsDouble(value);
        if (v == -1.0 && PyErr_Occurred())
          return 0;
        /* compared as the float the library gets, with its limits as floats
         * (the library's rule): 1e-6 itself, a float 9.99999997e-07 once
         * read back, was refused */
        const double as_float = (double)(float)v;
        if (isnan(v) ? !isnan(info.defaultValue)
                     : (as_float < (double)(float)info.minValue ||
                        as_float > (double)(float)info.maxValue))
          return out_of_range(&info, v);
      }
      if (!lull_py_filter_open(f)) /* the conversion ran Python code */
        return 0;
      oidnSetFilterFloat(f->handle, name, (float)v);
      break;
    }
    default:
      PyErr_Format(PyExc_TypeError, "parameter '%s' has an unknown type", name);
      return 0;
  }
  f->dirty = 1;
  return lull_py_check(lull_py_state_of((PyObject*)f), f->device);
}

PyObject* lull_py_param_get(lull_py_filter* f, const char* name)
{
  LullParamInfo info;
  if (!find(f->type_name, name, &info))
    return NULL;
  lull_py_state* state = lull_py_state_of((PyObject*)f);
  PyObject* result = NULL;
  switch (info.type) {
    case LULL_PARAM_TYPE_BOOL:
      result = PyBool_FromLong(oidnGetFilterBool(f->handle, name));
      break;
    case LULL_PARAM_TYPE_INT:
      result = PyLong_FromLong(oidnGetFilterInt(f->handle, name));
      break;
    default: {
      const float v = oidnGetFilterFloat(f->handle, name);
      if (isnan(v) && isnan(info.defaultValue)) { /* automatic: None, as set and listed */
        Py_INCREF(Py_None);
        result = Py_None;
      } else {
        result = PyFloat_FromDouble((double)v);
      }
      break;
    }
  }
  if (!lull_py_check(state, f->device)) {
    Py_XDECREF(result);
    return NULL;
  }
  return result;
}

/* A value of a parameter's own type, None for NaN ("automatic"). */
static PyObject* typed(LullParamType type, double v)
{
  if (isnan(v))
    Py_RETURN_NONE;
  switch (type) {
    case LULL_PARAM_TYPE_BOOL: return PyBool_FromLong(v != 0);
    case LULL_PARAM_TYPE_INT: return PyLong_FromDouble(v);
    default: return PyFloat_FromDouble(v);
  }
}

PyObject* lull_py_param_info_dict(const LullParamInfo* info)
{
  static const char* const type_names[] = {"bool", "int", "float"};
  const int t = info->type >= 0 && info->type <= 2 ? (int)info->type : 2;
  PyObject* def = typed(info->type, info->defaultValue);
  PyObject* lo = info->readOnly ? Py_NewRef(Py_None) : typed(info->type, info->minValue);
  PyObject* hi = info->readOnly ? Py_NewRef(Py_None) : typed(info->type, info->maxValue);
  PyObject* d = NULL;
  if (def && lo && hi)
    d = Py_BuildValue("{s:s,s:s,s:O,s:O,s:O,s:O,s:s}", "name", info->name, "type", type_names[t],
                      "default", def, "min", lo, "max", hi, "read_only",
                      info->readOnly ? Py_True : Py_False, "description",
                      info->description ? info->description : "");
  Py_XDECREF(def);
  Py_XDECREF(lo);
  Py_XDECREF(hi);
  return d;
}
