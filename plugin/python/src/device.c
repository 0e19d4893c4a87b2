/* lull.Device: an OIDN device, created and committed in one step.
 *
 *   lull.Device("cpu" | "cuda" | "default" | physical_device_id,
 *               num_threads=None, set_affinity=None, verbose=None)
 *
 * The device is released by close() or at the end of a `with` block; the
 * filters it made keep the underlying device alive until they are gone. */
/* Python.h first: it sets the POSIX level (nanosleep) for the headers */
#include "pylull.h"

#include <string.h>
#include <time.h>

int lull_py_device_wait_idle(lull_py_device* device, int interruptible)
{
  while (device->executing > 0 && device->callback_thread != PyThread_get_thread_ident()) {
    Py_BEGIN_ALLOW_THREADS
    const struct timespec pause = {0, 200000}; /* 0.2 ms */
    nanosleep(&pause, NULL);
    Py_END_ALLOW_THREADS
    if (interruptible && PyErr_CheckSignals() != 0)
      return 0;
  }
  return 1;
}

static int parse_type(PyObject* arg, OIDNDeviceType* type, int* physical_id)
{
  *physical_id = -1;
  if (arg == NULL || arg == Py_None) {
    *type = OIDN_DEVICE_TYPE_DEFAULT;
    return 1;
  }
  if (PyLong_Check(arg)) {
    const long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
      return 0;
    if (id < 0 || id > 1000000) {
      PyErr_Format(PyExc_ValueError, "invalid physical device id %ld", id);
      return 0;
    }
    *physical_id = (int)id;
    return 1;
  }
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError,
                    "device must be 'cpu', 'cuda', 'default' or a physical device id");
    return 0;
  }
  const char* s = lull_py_name(arg);
  if (!s)
    return 0;
  static const struct { const char* name; OIDNDeviceType type; } names[] = {
      {"default", OIDN_DEVICE_TYPE_DEFAULT}, {"cpu", OIDN_DEVICE_TYPE_CPU},
      {"cuda", OIDN_DEVICE_TYPE_CUDA}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (PyOS_stricmp(s, names[i].name) == 0) {
      *type = names[i].type;
      return 1;
    }
  PyErr_Format(PyExc_ValueError, "unknown device type '%.60s' (use 'cpu', 'cuda' or 'default')",
               s);
  return 0;
}

static int set_optional_int(OIDNDevice device, const char* name, PyObject* value)
{
  if (!value || value == Py_None)
    return 1;
  const long v = PyLong_AsLong(value);
  if (v == -1 && PyErr_Occurred())
    return 0;
  if (v < -1000000 || v > 1000000) {
    PyErr_Format(PyExc_ValueError, "%s out of range", name);
    return 0;
  }
  oidnSetDeviceInt(device, name, (int)v);
  return 1;
}

static PyObject* device_new(PyTypeObject* cls, PyObject* args, PyObject* kwargs)
{
  static char* kwlist[] = {"type", "num_threads", "set_affinity", "verbose", NULL};
  PyObject *type_arg = NULL, *num_threads = NULL, *set_affinity = NULL, *verbose = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOO:Device", kwlist, &type_arg,
                                   &num_threads, &set_affinity, &verbose))
    return NULL;
  OIDNDeviceType type = OIDN_DEVICE_TYPE_DEFAULT;
  int physical_id = -1;
  if (!parse_type(type_arg, &type, &physical_id))
    return NULL;
  lull_py_state* state = PyType_GetModuleState(cls);
  if (!state)
    return NULL;
  OIDNDevice handle = physical_id >= 0 ? oidnNewDeviceByID(physical_id) : oidnNewDevice(type);
  if (!handle) {
    if (lull_py_check(state, NULL))
      lull_py_raise(state, OIDN_ERROR_UNKNOWN, "cannot create the device");
    return NULL;
  }
  if (!set_optional_int(handle, "numThreads", num_threads) ||
      !set_optional_int(handle, "verbose", verbose) ||
      (set_affinity && set_affinity != Py_None &&
       !set_optional_int(handle, "setAffinity", set_affinity))) {
    oidnReleaseDevice(handle);
    return NULL;
  }
  oidnCommitDevice(handle);
  if (!lull_py_check(state, handle)) {
    oidnReleaseDevice(handle);
    return NULL;
  }
  lull_py_device* self = (lull_py_device*)cls->tp_alloc(cls, 0);
  if (!self) {
    oidnReleaseDevice(handle);
    return NULL;
  }
  self->handle = handle;
  self->type = oidnGetDeviceInt(handle, "type");
  self->system_memory = oidnGetDeviceBool(handle, "systemMemorySupported");
  if (!lull_py_check(state, handle)) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject*)self;
}

static void device_close_handle(lull_py_device* self)
{
  if (self->handle) {
    OIDNDevice handle = self->handle;
    self->handle = NULL;
    Py_BEGIN_ALLOW_THREADS
    oidnReleaseDevice(handle); /* may wait for asynchronous work */
    Py_END_ALLOW_THREADS
  }
}

static void device_dealloc(lull_py_device* self)
{
  PyTypeObject* tp = Py_TYPE(self);
  if (self->handle) {
    oidnReleaseDevice(self->handle);
    self->handle = NULL;
  }
  tp->tp_free((PyObject*)self);
  Py_DECREF(tp);
}

static int device_open(lull_py_device* self)
{
  if (self->handle && lull_py_device_wait_idle(self, 1) && self->handle)
    return 1;
  if (!PyErr_Occurred())
    PyErr_SetString(PyExc_ValueError, "the device is closed");
  return 0;
}

static PyObject* device_new_filter(lull_py_device* self, PyObject* arg)
{
  if (!device_open(self))
    return NULL;
  const char* type = lull_py_name(arg);
  if (!type)
    return NULL;
  return lull_py_filter_new(self, type);
}

static PyObject* device_sync(lull_py_device* self, PyObject* unused)
{
  (void)unused;
  if (!device_open(self))
    return NULL;
  OIDNDevice handle = self->handle;
  Py_BEGIN_ALLOW_THREADS
  oidnSyncDevice(handle);
  Py_END_ALLOW_THREADS
  if (!lull_py_check(lull_py_state_of((PyObject*)self), handle))
    return NULL;
  Py_RETURN_NONE;
}

static PyObject* device_get(lull_py_device* self, PyObject* arg)
{
  if (!device_open(self))
    return NULL;
  const char* name = lull_py_name(arg);
  if (!name)
    return NULL;
  const int value = oidnGetDeviceInt(self->handle, name);
  if (!lull_py_check(lull_py_state_of((PyObject*)self), self->handle))
    return NULL;
  return PyLong_FromLong(value);
}

static PyObject* device_close(lull_py_device* self, PyObject* unused)
{
  (void)unused;
  device_close_handle(self);
  Py_RETURN_NONE;
}

static PyObject* device_enter(lull_py_device* self, PyObject* unused)
{
  (void)unused;
  if (!device_open(self))
    return NULL;
  Py_INCREF(self);
  return (PyObject*)self;
}

static PyObject* device_exit(lull_py_device* self, PyObject* args)
{
  (void)args;
  device_close_handle(self);
  Py_RETURN_FALSE;
}

static const char* type_string(int type)
{
  switch (type) {
    case OIDN_DEVICE_TYPE_CPU: return "cpu";
    case OIDN_DEVICE_TYPE_CUDA: return "cuda";
    case OIDN_DEVICE_TYPE_SYCL: return "sycl";
    case OIDN_DEVICE_TYPE_HIP: return "hip";
    case OIDN_DEVICE_TYPE_METAL: return "metal";
    default: return "default";
  }
}

static PyObject* device_type_get(lull_py_device* self, void* closure)
{
  (void)closure;
  return PyUnicode_FromString(type_string(self->type));
}

static PyObject* device_closed_get(lull_py_device* self, void* closure)
{
  (void)closure;
  return PyBool_FromLong(self->handle == NULL);
}

static PyObject* device_repr(lull_py_device* self)
{
  return PyUnicode_FromFormat("<lull.Device %s%s>", type_string(self->type),
                              self->handle ? "" : " (closed)");
}

static PyMethodDef device_methods[] = {
    {"new_filter", (PyCFunction)device_new_filter, METH_O,
     "new_filter(type) -> Filter: a filter of the given type ('RT', 'ATrous', ...)."},
    {"sync", (PyCFunction)device_sync, METH_NOARGS,
     "Waits for all asynchronous work and raises its errors."},
    {"get", (PyCFunction)device_get, METH_O,
     "get(name) -> int: a device parameter ('version', 'numThreads', ...)."},
    {"close", (PyCFunction)device_close, METH_NOARGS, "Releases the device."},
    {"__enter__", (PyCFunction)device_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)device_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef device_getset[] = {
    {"type", (getter)device_type_get, NULL, "'cpu' or 'cuda'", NULL},
    {"closed", (getter)device_closed_get, NULL, "True after close()", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot device_slots[] = {
    {Py_tp_doc, "Device(type='default', *, num_threads=None, set_affinity=None, verbose=None)\n\n"
                "An Open Image Denoise device: 'cpu', 'cuda', 'default' (CUDA when usable,\n"
                "else CPU; OIDN_DEFAULT_DEVICE overrides) or a physical device id."},
    {Py_tp_new, device_new},
    {Py_tp_dealloc, device_dealloc},
    {Py_tp_methods, device_methods},
    {Py_tp_getset, device_getset},
    {Py_tp_repr, device_repr},
    {0, NULL},
};

PyType_Spec lull_py_device_spec = {
    "lull.Device", sizeof(lull_py_device), 0, Py_TPFLAGS_DEFAULT, device_slots,
};
