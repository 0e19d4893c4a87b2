/* The module `lull._lull`: types, lull.Error, introspection (filter types,
 * parameters, images, physical devices) and the error-code constants.
 * lull/__init__.py re-exports all of it next to the one-call helpers. */
#include <string.h>

#include "pylull.h"

lull_py_state* lull_py_state_of(PyObject* self)
{
  return PyType_GetModuleState(Py_TYPE(self));
}

static PyObject* filter_types(PyObject* module, PyObject* unused)
{
  (void)module;
  (void)unused;
  const int n = lullGetFilterTypeCount();
  PyObject* list = PyList_New(n);
  for (int i = 0; list && i < n; ++i) {
    PyObject* s = PyUnicode_FromString(lullGetFilterTypeName(i));
    if (!s)
      Py_CLEAR(list);
    else
      PyList_SET_ITEM(list, i, s);
  }
  return list;
}

static int known_type(const char* type)
{
  if (lullGetFilterParamCount(type) >= 0)
    return 1;
  PyErr_Format(PyExc_ValueError, "unknown filter type '%.60s'", type);
  return 0;
}

static PyObject* filter_params(PyObject* module, PyObject* arg)
{
  (void)module;
  const char* type = lull_py_name(arg);
  if (!type || !known_type(type))
    return NULL;
  const int n = lullGetFilterParamCount(type);
  PyObject* list = PyList_New(0);
  for (int i = 0; list && i < n; ++i) {
    LullParamInfo info;
    if (!lullGetFilterParamInfo(type, i, &info))
      continue;
    PyObject* d = lull_py_param_info_dict(&info);
    if (!d || PyList_Append(list, d) != 0)
      Py_CLEAR(list);
    Py_XDECREF(d);
  }
  return list;
}

static PyObject* filter_images(PyObject* module, PyObject* arg)
{
  (void)module;
  const char* type = lull_py_name(arg);
  if (!type || !known_type(type))
    return NULL;
  const int n = lullGetFilterImageCount(type);
  PyObject* list = PyList_New(n);
  for (int i = 0; list && i < n; ++i) {
    PyObject* s = PyUnicode_FromString(lullGetFilterImageName(type, i));
    if (!s)
      Py_CLEAR(list);
    else
      PyList_SET_ITEM(list, i, s);
  }
  return list;
}

static const char* device_type_name(int type)
{
  switch (type) {
    case OIDN_DEVICE_TYPE_CPU: return "cpu";
    case OIDN_DEVICE_TYPE_CUDA: return "cuda";
    default: return "other";
  }
}

static PyObject* physical_devices(PyObject* module, PyObject* unused)
{
  (void)unused;
  lull_py_state* state = PyModule_GetState(module);
  const int n = oidnGetNumPhysicalDevices();
  PyObject* list = PyList_New(0);
  for (int i = 0; list && i < n; ++i) {
    const int type = oidnGetPhysicalDeviceInt(i, "type");
    const char* name = oidnGetPhysicalDeviceString(i, "name");
    if (!lull_py_check(state, NULL)) {
      Py_CLEAR(list);
      break;
    }
    PyObject* d = Py_BuildValue("{s:i,s:s,s:s}", "id", i, "type", device_type_name(type), "name",
                                name ? name : "");
    if (d && oidnGetPhysicalDeviceBool(i, "uuidSupported")) {
      size_t size = 0;
      const void* uuid = oidnGetPhysicalDeviceData(i, "uuid", &size);
      PyObject* b = uuid ? PyBytes_FromStringAndSize(uuid, (Py_ssize_t)size) : NULL;
      if (b)
        PyDict_SetItemString(d, "uuid", b);
      Py_XDECREF(b);
    }
    (void)oidnGetDeviceError(NULL, NULL); /* optional queries */
    if (!d || PyList_Append(list, d) != 0)
      Py_CLEAR(list);
    Py_XDECREF(d);
  }
  return list;
}

static PyMethodDef module_methods[] = {
    {"filter_types", filter_types, METH_NOARGS, "filter_types() -> list of filter type names."},
    {"filter_params", filter_params, METH_O,
     "filter_params(type) -> list of dicts: name, type ('bool'/'int'/'float'), default\n"
     "(None: automatic), min, max, read_only, description."},
    {"filter_images", filter_images, METH_O,
     "filter_images(type) -> list of the image names a filter type accepts."},
    {"physical_devices", physical_devices, METH_NOARGS,
     "physical_devices() -> list of dicts: id, type ('cpu'/'cuda'), name[, uuid]."},
    {"metrics", lull_py_metrics, METH_VARARGS,
     "metrics(image, reference) -> dict: relmse (linear HDR), psnr and ssim (clamped,\n"
     "sRGB-encoded), over RGB; as `lull compare` reports them (core/metrics.h) for\n"
     "linear inputs (compare decodes 8/16-bit files first; read_exr does not)."},
    {"_read_image", lull_py_read_image, METH_VARARGS, NULL},
    {"_write_image", (PyCFunction)(void (*)(void))lull_py_write_image, METH_VARARGS | METH_KEYWORDS,
     NULL},
    {"_add_passes", lull_py_add_passes, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static int add_constants(PyObject* m)
{
  static const struct { const char* name; int value; } constants[] = {
      {"ERROR_NONE", OIDN_ERROR_NONE},
      {"ERROR_UNKNOWN", OIDN_ERROR_UNKNOWN},
      {"ERROR_INVALID_ARGUMENT", OIDN_ERROR_INVALID_ARGUMENT},
      {"ERROR_INVALID_OPERATION", OIDN_ERROR_INVALID_OPERATION},
      {"ERROR_OUT_OF_MEMORY", OIDN_ERROR_OUT_OF_MEMORY},
      {"ERROR_UNSUPPORTED_HARDWARE", OIDN_ERROR_UNSUPPORTED_HARDWARE},
      {"ERROR_CANCELLED", OIDN_ERROR_CANCELLED},
      {"COLOR_MODE_FIXED", LULL_COLOR_MODE_FIXED},
      {"COLOR_MODE_VARIANCE", LULL_COLOR_MODE_VARIANCE},
      {"SCHEDULE_AUTO", LULL_SCHEDULE_AUTO},
      {"SCHEDULE_BASELINE", LULL_SCHEDULE_BASELINE},
      {"SCHEDULE_PERMUTED", LULL_SCHEDULE_PERMUTED},
  };
  for (size_t i = 0; i < sizeof constants / sizeof constants[0]; ++i)
    if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value) != 0)
      return -1;
#if defined(LULL_PY_HAVE_IO)
  const int have_io = 1;
#else
  const int have_io = 0;
#endif
  if (PyModule_AddIntConstant(m, "HAVE_IMAGE_IO", have_io) != 0)
    return -1;
  return PyModule_AddStringConstant(m, "__version__", lullGetVersionString());
}

static int module_exec(PyObject* m)
{
  lull_py_state* state = PyModule_GetState(m);
  state->error = lull_py_error_create(m);
  if (!state->error || PyModule_AddObjectRef(m, "Error", state->error) != 0)
    return -1;
  state->device_type = (PyTypeObject*)PyType_FromModuleAndSpec(m, &lull_py_device_spec, NULL);
  if (!state->device_type || PyModule_AddObjectRef(m, "Device", (PyObject*)state->device_type) != 0)
    return -1;
  state->filter_type = (PyTypeObject*)PyType_FromModuleAndSpec(m, &lull_py_filter_spec, NULL);
  if (!state->filter_type || PyModule_AddObjectRef(m, "Filter", (PyObject*)state->filter_type) != 0)
    return -1;
  return add_constants(m);
}

static int module_traverse(PyObject* m, visitproc visit, void* arg)
{
  lull_py_state* state = PyModule_GetState(m);
  if (state) {
    Py_VISIT(state->error);
    Py_VISIT(state->device_type);
    Py_VISIT(state->filter_type);
  }
  return 0;
}

static int module_clear(PyObject* m)
{
  lull_py_state* state = PyModule_GetState(m);
  if (state) {
    Py_CLEAR(state->error);
    Py_CLEAR(state->device_type);
    Py_CLEAR(state->filter_type);
  }
  return 0;
}

static void module_free(void* m)
{
  module_clear((PyObject*)m);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void*)module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "lull._lull",
    "lull's C extension: Device, Filter, Error and introspection (see the lull package).",
    sizeof(lull_py_state),
    module_methods,
    module_slots,
    module_traverse,
    module_clear,
    module_free,
};

PyMODINIT_FUNC PyInit__lull(void)
{
  return PyModuleDef_Init(&module_def);
}
