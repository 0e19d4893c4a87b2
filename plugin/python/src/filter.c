/* lull.Filter: an OIDN filter with its images bound to Python arrays.
 *
 *   f = device.new_filter("RT")
 *   f.set_image("color", color); f.set_image("output", out)
 *   f["hdr"] = True            # typed through lull.h's parameter tables
 *   f.progress = callback      # callback(fraction) -> False cancels
 *   f.execute()                # commits when needed, releases the GIL
 *
 * Images are read at execute time (as with OIDN's shared images): arrays
 * that OIDN can address in place are used directly, others are packed
 * before and unpacked after each execution (arrays.c); arrays in GPU memory
 * (cuda_arrays.c) are used in place by filters on a CUDA device.  A filter is busy
 * while it executes: other threads then get RuntimeError instead of
 * freeing memory the filter is using. */
#include <string.h>

#include "pylull.h"

/* f->device and friends are only touched with the GIL held, except inside
 * execute, where `busy` keeps other threads from changing the filter. */
typedef struct progress_context
{
  lull_py_filter* filter;
  PyObject* exc_type; /* exception raised by the callback or a signal */
  PyObject* exc_value;
  PyObject* exc_tb;
} progress_context;

/* The device's Python object (set while the filter is open). */
static lull_py_device* device_of(lull_py_filter* f)
{
  return (lull_py_device*)f->device_obj;
}

int lull_py_filter_open(lull_py_filter* f)
{
  if (f->handle && f->busy && device_of(f)->callback_thread != PyThread_get_thread_ident()) {
    PyErr_SetString(PyExc_RuntimeError, "the filter is executing in another thread");
    return 0;
  }
  if (f->handle && lull_py_device_wait_idle(device_of(f), 1) && f->handle)
    return 1;
  if (!PyErr_Occurred())
    PyErr_SetString(PyExc_ValueError, "the filter is closed");
  return 0;
}

/* Index of an image name in the filter type's list, or -1 (error set). */
static int image_index(lull_py_filter* f, const char* name)
{
  const int n = lullGetFilterImageCount(f->type_name);
  for (int i = 0; i < n && i < LULL_PY_MAX_IMAGES; ++i)
    if (strcmp(lullGetFilterImageName(f->type_name, i), name) == 0)
      return i;
  PyObject* names = PyList_New(0);
  for (int i = 0; names && i < n; ++i) {
    PyObject* s = PyUnicode_FromString(lullGetFilterImageName(f->type_name, i));
    if (!s || PyList_Append(names, s) != 0) {
      Py_XDECREF(s);
      Py_CLEAR(names);
      break;
    }
    Py_DECREF(s);
  }
  if (names) {
    PyErr_Format(PyExc_ValueError, "unknown image '%.60s' for filter '%s' (images: %R)", name,
                 f->type_name, names);
    Py_DECREF(names);
  }
  return -1;
}

static void binding_release(lull_py_binding* b)
{
  lull_py_binding_clear(b);
  if (b->buffer) {
    oidnReleaseBuffer(b->buffer);
    b->buffer = NULL;
  }
}

static int busy_check(lull_py_filter* f)
{
  if (f->busy) {
    PyErr_SetString(PyExc_RuntimeError,
                    device_of(f)->callback_thread == PyThread_get_thread_ident()
                        ? "the filter is executing: its progress callback cannot change or "
                          "execute it"
                        : "the filter is executing in another thread");
    return 0;
  }
  return 1;
}

/* Readies a checked binding for the filter's device: a GPU array only on a
 * CUDA device; host staging memory where the library cannot read the
 * array as it is; a device buffer where the device cannot read host memory.
 * Touches nothing of the filter, so a failure leaves its images as they
 * were. */
static int prepare(lull_py_filter* f, lull_py_binding* b, lull_py_state* state)
{
  if (b->cuda) {
    if (device_of(f)->type != OIDN_DEVICE_TYPE_CUDA) {
      PyErr_Format(PyExc_ValueError,
                   "image '%s' is in GPU memory (__cuda_array_interface__): it needs a filter "
                   "on a CUDA device (lull.Device(\"cuda\")), or copy it to the host",
                   b->name);
      return 0;
    }
    return 1;
  }
  if (f->system_memory ? !b->direct : !b->packed) {
    b->staging = PyMem_RawMalloc(b->packed_size);
    if (!b->staging) {
      PyErr_NoMemory();
      return 0;
    }
  }
  if (!f->system_memory) {
    b->buffer = oidnNewBuffer(f->device, b->packed_size);
    if (!b->buffer)
      return lull_py_check(state, f->device) ? (lull_py_raise(state, OIDN_ERROR_OUT_OF_MEMORY,
                                                               "cannot allocate a device buffer"),
                                                0)
                                             : 0;
  }
  return 1;
}

/* Sets a prepared binding as the filter's image: GPU memory or the array
 * in place, host staging memory, or the device buffer. */
static int attach(lull_py_filter* f, const lull_py_binding* b, lull_py_state* state)
{
  if (b->cuda) {
    /* the library checks that the device reaches it */
    oidnSetSharedFilterImage(f->handle, b->name, b->device_ptr, b->format, (size_t)b->width,
                             (size_t)b->height, 0, (size_t)b->pixel_stride,
                             (size_t)b->row_stride);
  } else if (b->buffer) {
    oidnSetFilterImage(f->handle, b->name, b->buffer, b->format, (size_t)b->width,
                       (size_t)b->height, 0, 0, 0);
  } else if (b->staging) { /* packed */
    oidnSetSharedFilterImage(f->handle, b->name, b->staging, b->format, (size_t)b->width,
                             (size_t)b->height, 0, 0, 0);
  } else {
    oidnSetSharedFilterImage(f->handle, b->name, b->view.buf, b->format, (size_t)b->width,
                             (size_t)b->height, 0, (size_t)b->pixel_stride,
                             (size_t)b->row_stride);
  }
  return lull_py_check(state, f->device);
}

static PyObject* filter_set_image(lull_py_filter* f, PyObject* args)
{
  const char* name = NULL;
  PyObject* array = NULL;
  if (!PyArg_ParseTuple(args, "sO:set_image", &name, &array))
    return NULL;
  if (!lull_py_filter_open(f) || !busy_check(f))
    return NULL;
  const int index = image_index(f, name);
  if (index < 0)
    return NULL;
  lull_py_state* state = lull_py_state_of((PyObject*)f);
  lull_py_binding* slot = &f->images[index];
  if (array == Py_None) {
    binding_release(slot);
    oidnUnsetFilterImage(f->handle, name);
    f->dirty = 1;
    if (!lull_py_check(state, f->device))
      return NULL;
    Py_RETURN_NONE;
  }
  lull_py_binding b;
  /* "output", "outputVariance": images the filter writes, copied back */
  if (!lull_py_binding_init_image(&b, array, name, strncmp(name, "output", 6) == 0))
    return NULL;
  /* reading an array's interface can run Python code (a PyTorch tensor's
   * __cuda_array_interface__), and with it other threads: the filter may
   * have been closed or begun executing since the checks above */
  if (!lull_py_filter_open(f) || !busy_check(f)) {
    lull_py_binding_clear(&b);
    return NULL;
  }
  /* images of one filter share a size: say which ones differ, now */
  for (int i = 0; i < LULL_PY_MAX_IMAGES; ++i) {
    const lull_py_binding* other = &f->images[i];
    if (i == index || !other->set)
      continue;
    if (other->width != b.width || other->height != b.height) {
      PyErr_Format(PyExc_ValueError,
                   "image '%s' is %d x %d (H x W) but image '%s' is %d x %d; the images of a "
                   "filter must have the same size",
                   name, b.height, b.width, other->name, other->height, other->width);
      lull_py_binding_clear(&b);
      return NULL;
    }
  }
  /* the new image replaces the old one only once the library took it: a
   * failed call leaves the filter as it was */
  if (!prepare(f, &b, state)) {
    binding_release(&b);
    return NULL;
  }
  f->dirty = 1;
  if (!attach(f, &b, state)) {
    binding_release(&b);
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (slot->set)
      (void)attach(f, slot, state);
    else
      oidnUnsetFilterImage(f->handle, name);
    (void)oidnGetDeviceError(f->device, NULL);
    PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    return NULL;
  }
  binding_release(slot);
  *slot = b;
  Py_RETURN_NONE;
}

static PyObject* filter_get_image(lull_py_filter* f, PyObject* arg)
{
  const char* name = lull_py_name(arg);
  if (!name || !lull_py_filter_open(f))
    return NULL;
  const int index = image_index(f, name);
  if (index < 0)
    return NULL;
  PyObject* obj = lull_py_binding_object(&f->images[index]);
  if (!obj)
    Py_RETURN_NONE;
  Py_INCREF(obj);
  return obj;
}

static PyObject* filter_commit(lull_py_filter* f, PyObject* unused)
{
  (void)unused;
  if (!lull_py_filter_open(f) || !busy_check(f))
    return NULL;
  oidnCommitFilter(f->handle);
  if (!lull_py_check(lull_py_state_of((PyObject*)f), f->device))
    return NULL;
  f->dirty = 0;
  Py_RETURN_NONE;
}

/* OIDN's progress monitor, called on the executing thread between steps:
 * takes the GIL, calls the Python callback, and checks for signals so that
 * Ctrl-C (KeyboardInterrupt) cancels a long execution cleanly. */
static bool progress_monitor(void* user, double done)
{
  progress_context* ctx = user;
  if (ctx->exc_type)
    return false;
  PyGILState_STATE gil = PyGILState_Ensure();
  /* this thread holds the device's lock: its calls need not wait */
  lull_py_device* device = device_of(ctx->filter);
  const unsigned long outer = device->callback_thread;
  device->callback_thread = PyThread_get_thread_ident();
  int keep_going = 1;
  if (ctx->filter->progress) {
    PyObject* result = PyObject_CallFunction(ctx->filter->progress, "d", done);
    if (!result)
      keep_going = 0;
    else {
      /* False cancels, NumPy's too (a comparison's result); None goes on */
      keep_going = !(result == Py_False ||
                     (lull_py_is_numpy_bool(result) && PyObject_IsTrue(result) == 0));
      Py_DECREF(result);
    }
  }
  if (keep_going && PyErr_CheckSignals() != 0)
    keep_going = 0;
  if (PyErr_Occurred())
    PyErr_Fetch(&ctx->exc_type, &ctx->exc_value, &ctx->exc_tb);
  device->callback_thread = outer;
  PyGILState_Release(gil);
  return keep_going != 0;
}

/* Copies input pixels to where the filter reads them. */
static int stage_inputs(lull_py_filter* f, lull_py_state* state)
{
  for (int i = 0; i < LULL_PY_MAX_IMAGES; ++i) {
    lull_py_binding* b = &f->images[i];
    if (!b->set || b->output)
      continue;
    if (b->staging)
      lull_py_binding_pack(b, b->staging);
    if (b->buffer) {
      oidnWriteBuffer(b->buffer, 0, b->packed_size, b->staging ? b->staging : b->view.buf);
      if (!lull_py_check(state, f->device))
        return 0;
    }
  }
  return 1;
}

/* Copies output pixels back into the caller's arrays. */
static int unstage_outputs(lull_py_filter* f, lull_py_state* state)
{
  for (int i = 0; i < LULL_PY_MAX_IMAGES; ++i) {
    lull_py_binding* b = &f->images[i];
    if (!b->set || !b->output)
      continue;
    if (b->buffer) {
      oidnReadBuffer(b->buffer, 0, b->packed_size, b->staging ? b->staging : b->view.buf);
      if (!lull_py_check(state, f->device))
        return 0;
    }
    if (b->staging)
      lull_py_binding_unpack(b, b->staging);
  }
  return 1;
}

static PyObject* filter_execute(lull_py_filter* f, PyObject* unused)
{
  (void)unused;
  if (!lull_py_filter_open(f) || !busy_check(f))
    return NULL;
  lull_py_state* state = lull_py_state_of((PyObject*)f);
  /* CUDA arrays: their producers' pending work first.  The filter is busy
   * from here to the end: the stream wait and the device wait release the
   * GIL, and no other thread may begin running or changing this filter
   * meanwhile (busy had been cleared between the two waits) */
  f->busy = 1;
  int ready = lull_py_bindings_wait_streams(f->images, LULL_PY_MAX_IMAGES) &&
              lull_py_device_wait_idle(device_of(f), 1);
  if (ready && !f->handle) {
    PyErr_SetString(PyExc_ValueError, "the filter is closed");
    ready = 0;
  }
  if (!ready || !stage_inputs(f, state)) {
    f->busy = 0;
    return NULL;
  }
  if (f->dirty) {
    oidnCommitFilter(f->handle);
    if (!lull_py_check(state, f->device)) {
      f->busy = 0;
      return NULL;
    }
    f->dirty = 0;
  }
  progress_context ctx = {f, NULL, NULL, NULL};
  /* The monitor also lets Ctrl-C cancel a long CPU run.  On a CUDA device
   * a run takes milliseconds, and a monitor makes the library wait for the
   * GPU after every level instead of launching one cached graph (H100,
   * 1080p: 0.7246 against 0.6803 ms a call; 512^2: 0.1789 against 0.1289),
   * so there it is set only for a progress callback. */
  const int cuda = ((lull_py_device*)f->device_obj)->type == OIDN_DEVICE_TYPE_CUDA;
  if (f->progress || !cuda)
    oidnSetFilterProgressMonitorFunction(f->handle, progress_monitor, &ctx);
  OIDNFilter handle = f->handle;
  lull_py_device* device = device_of(f);
  f->busy = 1;
  device->executing += 1;
  Py_BEGIN_ALLOW_THREADS
  oidnExecuteFilter(handle);
  Py_END_ALLOW_THREADS
  device->executing -= 1;
  /* a thread waiting on the device's lock may have begun executing as this
   * run released it: wait for it before calling the library again */
  (void)lull_py_device_wait_idle(device, 0);
  f->busy = 0;
  oidnSetFilterProgressMonitorFunction(f->handle, NULL, NULL);
  if (ctx.exc_type) {
    /* the callback raised (or Ctrl-C): that exception, not "cancelled".
     * A run that ended anyway (the library ignores a cancel at the last
     * report) wrote its output: copied outputs are copied back too, so
     * the caller's array holds the same whatever its layout (a strided
     * output had kept its old values where a contiguous one was
     * overwritten) */
    if (oidnGetDeviceError(f->device, NULL) == OIDN_ERROR_NONE && !unstage_outputs(f, state))
      PyErr_Clear(); /* the callback's exception is the one to raise */
    PyErr_Restore(ctx.exc_type, ctx.exc_value, ctx.exc_tb);
    return NULL;
  }
  if (!lull_py_check(state, f->device) || !unstage_outputs(f, state))
    return NULL;
  Py_RETURN_NONE;
}

static PyObject* filter_set(lull_py_filter* f, PyObject* args)
{
  const char* name = NULL;
  PyObject* value = NULL;
  if (!PyArg_ParseTuple(args, "sO:set", &name, &value))
    return NULL;
  if (!lull_py_filter_open(f) || !busy_check(f) || !lull_py_param_set(f, name, value))
    return NULL;
  Py_RETURN_NONE;
}

static PyObject* filter_get(lull_py_filter* f, PyObject* arg)
{
  const char* name = lull_py_name(arg);
  if (!name || !lull_py_filter_open(f))
    return NULL;
  return lull_py_param_get(f, name);
}

static PyObject* filter_subscript(lull_py_filter* f, PyObject* key)
{
  if (!PyUnicode_Check(key)) {
    PyErr_SetString(PyExc_TypeError, "parameter names are strings");
    return NULL;
  }
  return filter_get(f, key);
}

static int filter_ass_subscript(lull_py_filter* f, PyObject* key, PyObject* value)
{
  if (!PyUnicode_Check(key)) {
    PyErr_SetString(PyExc_TypeError, "parameter names are strings");
    return -1;
  }
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "filter parameters cannot be deleted");
    return -1;
  }
  const char* name = lull_py_name(key);
  if (!name || !lull_py_filter_open(f) || !busy_check(f))
    return -1;
  return lull_py_param_set(f, name, value) ? 0 : -1;
}

static void filter_release(lull_py_filter* f)
{
  for (int i = 0; i < LULL_PY_MAX_IMAGES; ++i)
    binding_release(&f->images[i]);
  if (f->handle) {
    oidnReleaseFilter(f->handle);
    f->handle = NULL;
  }
}

static PyObject* filter_close(lull_py_filter* f, PyObject* unused)
{
  (void)unused;
  if (!busy_check(f) || (f->handle && !lull_py_device_wait_idle(device_of(f), 1)) ||
      !busy_check(f))
    return NULL;
  filter_release(f);
  Py_RETURN_NONE;
}

static PyObject* filter_enter(lull_py_filter* f, PyObject* unused)
{
  (void)unused;
  if (!lull_py_filter_open(f))
    return NULL;
  Py_INCREF(f);
  return (PyObject*)f;
}

static PyObject* filter_exit(lull_py_filter* f, PyObject* args)
{
  (void)args;
  if (!busy_check(f) || (f->handle && !lull_py_device_wait_idle(device_of(f), 1)) ||
      !busy_check(f))
    return NULL;
  filter_release(f);
  Py_RETURN_FALSE;
}

static int filter_traverse(lull_py_filter* f, visitproc visit, void* arg)
{
  Py_VISIT(Py_TYPE(f));
  Py_VISIT(f->device_obj);
  Py_VISIT(f->progress);
  for (int i = 0; i < LULL_PY_MAX_IMAGES; ++i)
    Py_VISIT(lull_py_binding_object(&f->images[i]));
  return 0;
}

static int filter_clear(lull_py_filter* f)
{
  if (f->busy)
    return 0;
  if (f->handle && f->device_obj)
    (void)lull_py_device_wait_idle(device_of(f), 0);
  filter_release(f);
  Py_CLEAR(f->progress);
  Py_CLEAR(f->device_obj);
  return 0;
}

static void filter_dealloc(lull_py_filter* f)
{
  PyTypeObject* tp = Py_TYPE(f);
  PyObject_GC_UnTrack(f);
  filter_clear(f);
  if (f->device) {
    oidnReleaseDevice(f->device);
    f->device = NULL;
  }
  tp->tp_free((PyObject*)f);
  Py_DECREF(tp);
}

static PyObject* filter_type_get(lull_py_filter* f, void* closure)
{
  (void)closure;
  return PyUnicode_FromString(f->type_name);
}

static PyObject* filter_device_get(lull_py_filter* f, void* closure)
{
  (void)closure;
  PyObject* d = f->device_obj ? f->device_obj : Py_None;
  Py_INCREF(d);
  return d;
}

static PyObject* filter_progress_get(lull_py_filter* f, void* closure)
{
  (void)closure;
  PyObject* p = f->progress ? f->progress : Py_None;
  Py_INCREF(p);
  return p;
}

static int filter_progress_set(lull_py_filter* f, PyObject* value, void* closure)
{
  (void)closure;
  if (value && value != Py_None && !PyCallable_Check(value)) {
    PyErr_SetString(PyExc_TypeError, "progress must be callable(fraction) or None");
    return -1;
  }
  if (!busy_check(f))
    return -1;
  PyObject* old = f->progress;
  f->progress = (value && value != Py_None) ? value : NULL;
  Py_XINCREF(f->progress);
  Py_XDECREF(old);
  return 0;
}

static PyObject* filter_repr(lull_py_filter* f)
{
  return PyUnicode_FromFormat("<lull.Filter %s%s>", f->type_name, f->handle ? "" : " (closed)");
}

PyObject* lull_py_filter_new(lull_py_device* device, const char* type)
{
  lull_py_state* state = lull_py_state_of((PyObject*)device);
  if (lullGetFilterParamCount(type) < 0 || strlen(type) >= LULL_PY_NAME_SIZE) {
    PyObject* names = PyList_New(0);
    for (int i = 0; names && i < lullGetFilterTypeCount(); ++i) {
      PyObject* s = PyUnicode_FromString(lullGetFilterTypeName(i));
      if (!s || PyList_Append(names, s) != 0)
        Py_CLEAR(names);
      Py_XDECREF(s);
    }
    if (names) {
      PyErr_Format(PyExc_ValueError, "unknown filter type '%.60s' (available: %R)", type, names);
      Py_DECREF(names);
    }
    return NULL;
  }
  OIDNFilter handle = oidnNewFilter(device->handle, type);
  if (!handle) {
    if (lull_py_check(state, device->handle))
      lull_py_raise(state, OIDN_ERROR_UNKNOWN, "cannot create the filter");
    return NULL;
  }
  /* tp_alloc zeroes the fields and starts GC tracking (traverse copes
   * with the NULLs until they are filled in) */
  lull_py_filter* f = (lull_py_filter*)state->filter_type->tp_alloc(state->filter_type, 0);
  if (!f) {
    oidnReleaseFilter(handle);
    return NULL;
  }
  f->handle = handle;
  f->device = device->handle;
  oidnRetainDevice(f->device);
  f->device_obj = (PyObject*)device;
  Py_INCREF(device);
  f->system_memory = device->system_memory;
  PyOS_snprintf(f->type_name, sizeof f->type_name, "%s", type);
  f->dirty = 1;
  return (PyObject*)f;
}

static PyObject* filter_no_new(PyTypeObject* cls, PyObject* args, PyObject* kwargs)
{
  (void)cls;
  (void)args;
  (void)kwargs;
  PyErr_SetString(PyExc_TypeError, "create filters with Device.new_filter(type)");
  return NULL;
}

static PyMethodDef filter_methods[] = {
    {"set_image", (PyCFunction)filter_set_image, METH_VARARGS,
     "set_image(name, array): binds an image ('color', 'albedo', 'normal', 'output', ...);\n"
     "float32 or float16, shape (H, W) or (H, W, C) with C <= 4, any strides.\n"
     "None unbinds.  The array is read (or written) at each execute()."},
    {"get_image", (PyCFunction)filter_get_image, METH_O,
     "get_image(name): the array bound to an image, or None."},
    {"set", (PyCFunction)filter_set, METH_VARARGS, "set(name, value): sets a parameter."},
    {"get", (PyCFunction)filter_get, METH_O, "get(name): reads a parameter."},
    {"commit", (PyCFunction)filter_commit, METH_NOARGS,
     "Checks images and parameters now (execute() commits when needed)."},
    {"execute", (PyCFunction)filter_execute, METH_NOARGS,
     "Runs the filter (the GIL is released meanwhile).  Raises lull.Error on\n"
     "failure; KeyboardInterrupt or an exception from the progress callback\n"
     "cancels and is re-raised."},
    {"close", (PyCFunction)filter_close, METH_NOARGS, "Releases the filter and its images."},
    {"__enter__", (PyCFunction)filter_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)filter_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef filter_getset[] = {
    {"type", (getter)filter_type_get, NULL, "the filter type name", NULL},
    {"device", (getter)filter_device_get, NULL, "the lull.Device that made this filter", NULL},
    {"progress", (getter)filter_progress_get, (setter)filter_progress_set,
     "callable(fraction) called during execute(); returning False cancels", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot filter_slots[] = {
    {Py_tp_doc, "A filter made by Device.new_filter(type); parameters by f[name]."},
    {Py_tp_new, filter_no_new},
    {Py_tp_dealloc, filter_dealloc},
    {Py_tp_traverse, filter_traverse},
    {Py_tp_clear, filter_clear},
    {Py_tp_methods, filter_methods},
    {Py_tp_getset, filter_getset},
    {Py_tp_repr, filter_repr},
    {Py_mp_subscript, filter_subscript},
    {Py_mp_ass_subscript, filter_ass_subscript},
    {0, NULL},
};

PyType_Spec lull_py_filter_spec = {
    "lull.Filter", sizeof(lull_py_filter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    filter_slots,
};
