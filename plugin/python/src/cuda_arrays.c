/* Images in GPU memory, through the CUDA Array Interface
 * (https://numba.readthedocs.io/en/stable/cuda/cuda_array_interface.html,
 * versions 2 and 3): any object with a `__cuda_array_interface__` dict
 * (CuPy arrays, PyTorch CUDA tensors, Numba device arrays).
 *
 * The filter reads and writes such an array where it is, as OIDN's shared
 * images from cudaMalloc pointers: no copy through the host.  So it needs a
 * CUDA device (the library checks that the device can reach the pointer)
 * and a layout OIDN can describe (channels contiguous, positive pixel and
 * row strides); other layouts are refused with a hint instead of being
 * copied, since packing them would need GPU code in this module.
 *
 * Streams (version 3): the producer may still be writing the array on the
 * stream it names; the consumer must wait for it.  At every execution this
 * module asks the array again (the stream can change between calls) and
 * waits on the host, without the GIL, with the CUDA driver's
 * cuStreamSynchronize, loaded on first use (the module links no CUDA
 * library; a process holding CUDA arrays has the driver loaded already). */
#include <stdint.h>
#include <string.h>

#include "pylull.h"

#if defined(__unix__)
#include <dlfcn.h>
#define LULL_PY_HAVE_DLOPEN 1
#endif

/* The items of a tuple of integers (at most max of them read; *count: its
 * length); 0 with the error set. */
static int tuple_of_sizes(const lull_py_binding* b, PyObject* value, const char* key,
                          Py_ssize_t* out, Py_ssize_t max, Py_ssize_t* count)
{
  if (!PyTuple_Check(value))
    return lull_py_binding_raise(b, PyExc_TypeError,
                                 "__cuda_array_interface__['%s'] must be a tuple", key);
  *count = PyTuple_GET_SIZE(value);
  for (Py_ssize_t i = 0; i < *count && i < max; ++i) {
    out[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(value, i));
    if (out[i] == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return lull_py_binding_raise(b, PyExc_TypeError,
                                   "__cuda_array_interface__['%s'] must hold integers", key);
    }
  }
  return 1;
}

/* The dtype from typestr: float32 or float16, little-endian ('<', or '='
 * and '|' as NumPy writes native order); sets b->item_size. */
static int interface_dtype(lull_py_binding* b, PyObject* typestr)
{
  const char* type = PyUnicode_Check(typestr) ? lull_py_name(typestr) : NULL;
  if (!type) {
    PyErr_Clear();
    return lull_py_binding_raise(b, PyExc_TypeError, "typestr must be a string");
  }
  if (type[0] == '>')
    return lull_py_binding_raise(b, PyExc_TypeError, "big-endian data is not supported");
  const char* kind = type[0] == '<' || type[0] == '=' || type[0] == '|' ? type + 1 : type;
  if (strcmp(kind, "f4") != 0 && strcmp(kind, "f2") != 0)
    return lull_py_binding_raise(b, PyExc_TypeError,
                                 "dtype must be float32 or float16 (got typestr '%.20s')", type);
  b->item_size = kind[1] == '4' ? 4 : 2;
  return 1;
}

/* data = (pointer, read-only): sets b->device_ptr. */
static int interface_data(lull_py_binding* b, PyObject* data, int output)
{
  if (!PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2)
    return lull_py_binding_raise(b, PyExc_TypeError, "data must be a tuple (pointer, read-only)");
  b->device_ptr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
  if (!b->device_ptr) {
    PyErr_Clear();
    return lull_py_binding_raise(b, PyExc_ValueError, "the data pointer is not a non-zero integer");
  }
  const int readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
  if (readonly < 0)
    return 0;
  if (output && readonly)
    return lull_py_binding_raise(b, PyExc_ValueError, "the output array is read-only");
  return 1;
}

/* stream (version 3): None or absent, or the producer's stream, which 0
 * cannot be (the interface disallows it: ambiguous); 1 and 2 are the
 * legacy and the per-thread default stream. */
static int interface_stream(lull_py_binding* b, PyObject* stream)
{
  if (!stream || stream == Py_None)
    return 1;
  const unsigned long long v = PyLong_AsUnsignedLongLong(stream);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return lull_py_binding_raise(b, PyExc_TypeError, "stream must be an integer or None");
  }
  if (v == 0)
    return lull_py_binding_raise(b, PyExc_ValueError,
                                 "stream 0 is not allowed by the CUDA Array Interface (1 is the "
                                 "legacy default stream; None: no stream to wait for)");
  b->has_stream = 1;
  b->stream = (uintptr_t)v;
  return 1;
}

/* Fills b from a __cuda_array_interface__ dict (a copy the caller owns:
 * reading a value can run Python code, which could empty the object's own
 * dict and free the values this holds borrowed). */
static int binding_from_dict(lull_py_binding* b, PyObject* cai, int output)
{
  PyObject* shape = PyDict_GetItemString(cai, "shape");
  PyObject* typestr = PyDict_GetItemString(cai, "typestr");
  PyObject* data = PyDict_GetItemString(cai, "data");
  if (!shape || !typestr || !data)
    return lull_py_binding_raise(b, PyExc_ValueError,
                                 "__cuda_array_interface__ lacks 'shape', 'typestr' or 'data'");
  PyObject* mask = PyDict_GetItemString(cai, "mask");
  if (mask && mask != Py_None)
    return lull_py_binding_raise(b, PyExc_ValueError, "masked CUDA arrays are not supported");
  if (!interface_dtype(b, typestr) || !interface_data(b, data, output) ||
      !interface_stream(b, PyDict_GetItemString(cai, "stream")))
    return 0;
  Py_ssize_t dims[3] = {0, 0, 0}, ndim = 0;
  if (!tuple_of_sizes(b, shape, "shape", dims, 3, &ndim))
    return 0;
  if (ndim != 2 && ndim != 3)
    return lull_py_binding_raise(b, PyExc_ValueError,
                                 "expected shape (H, W) or (H, W, C), got %zd dimensions", ndim);
  /* strides: absent or None for C order, else bytes per dimension */
  Py_ssize_t strides[3] = {0, 0, 0};
  PyObject* stride_obj = PyDict_GetItemString(cai, "strides");
  if (stride_obj && stride_obj != Py_None) {
    Py_ssize_t n = 0;
    if (!tuple_of_sizes(b, stride_obj, "strides", strides, 3, &n))
      return 0;
    if (n != ndim)
      return lull_py_binding_raise(b, PyExc_ValueError, "%zd strides for %zd dimensions", n, ndim);
  } else if (dims[1] > 0 && dims[1] <= 65536 && (ndim == 2 || (dims[2] > 0 && dims[2] <= 4))) {
    /* C order (for sizes the image checks below accept: no overflow) */
    strides[ndim - 1] = b->item_size;
    for (Py_ssize_t k = ndim - 1; k > 0; --k)
      strides[k - 1] = strides[k] * dims[k];
  }
  if (!lull_py_binding_set_geometry(b, (int)ndim, dims, strides))
    return lull_py_binding_raise(b, PyExc_ValueError, "%s", b->geometry_error);
  if (!b->direct)
    return lull_py_binding_raise(b, PyExc_ValueError,
                                 "a CUDA array needs contiguous channels and positive pixel and "
                                 "row strides (got strides %zd, %zd, %zd bytes); make it "
                                 "contiguous first (e.g. cupy.ascontiguousarray, "
                                 "torch.Tensor.contiguous)", strides[0], strides[1], strides[2]);
  return 1;
}

static int binding_from_interface(lull_py_binding* b, PyObject* cai, int output)
{
  if (!PyDict_Check(cai))
    return lull_py_binding_raise(b, PyExc_TypeError, "__cuda_array_interface__ is not a dict");
  PyObject* copy = PyDict_Copy(cai);
  if (!copy)
    return 0;
  const int ok = binding_from_dict(b, copy, output);
  Py_DECREF(copy);
  return ok;
}

int lull_py_binding_init_image(lull_py_binding* b, PyObject* obj, const char* name, int output)
{
  if (PyObject_CheckBuffer(obj) || !PyObject_HasAttrString(obj, "__cuda_array_interface__"))
    return lull_py_binding_init(b, obj, name, output);
  *b = (lull_py_binding){0};
  PyOS_snprintf(b->name, sizeof b->name, "%s", name);
  b->output = output;
  PyObject* cai = PyObject_GetAttrString(obj, "__cuda_array_interface__");
  if (!cai)
    return 0;
  const int ok = binding_from_interface(b, cai, output);
  Py_DECREF(cai);
  if (!ok)
    return 0;
  b->cuda = 1;
  Py_INCREF(obj);
  b->owner = obj;
  b->set = 1;
  return 1;
}

PyObject* lull_py_binding_object(const lull_py_binding* b)
{
  if (!b->set)
    return NULL;
  return b->cuda ? b->owner : b->view.obj;
}

/* -- waiting for producer streams ------------------------------------------ */

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_pointer_attribute_fn)(void*, int, uintptr_t);
typedef int (*cu_device_get_fn)(int*, int);
typedef int (*cu_primary_retain_fn)(void**, int);
typedef int (*cu_primary_release_fn)(int);
typedef int (*cu_ctx_push_fn)(void*);
typedef int (*cu_ctx_pop_fn)(void**);
typedef int (*cu_stream_sync_fn)(uintptr_t);

/* cuda.h's CUpointer_attribute values */
enum { CU_POINTER_ATTRIBUTE_CONTEXT = 1, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9 };

typedef struct cuda_driver
{
  cu_init_fn init;
  cu_pointer_attribute_fn pointer_attribute;
  cu_device_get_fn device_get;
  cu_primary_retain_fn primary_retain;
  cu_primary_release_fn primary_release;
  cu_ctx_push_fn push;
  cu_ctx_pop_fn pop;
  cu_stream_sync_fn sync;
} cuda_driver;

/* The driver's entry points (with the GIL held: loaded once), or NULL. */
static const cuda_driver* cuda_driver_get(void)
{
  static cuda_driver driver;
  static int loaded = 0;
  if (loaded)
    return driver.sync ? &driver : NULL;
  loaded = 1;
#if defined(LULL_PY_HAVE_DLOPEN)
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return NULL;
  static const char* const names[8] = {"cuInit",
                                       "cuPointerGetAttribute",
                                       "cuDeviceGet",
                                       "cuDevicePrimaryCtxRetain",
                                       "cuDevicePrimaryCtxRelease_v2",
                                       "cuCtxPushCurrent_v2",
                                       "cuCtxPopCurrent_v2",
                                       "cuStreamSynchronize"};
  void* p[8];
  for (int i = 0; i < 8; ++i)
    if (!(p[i] = dlsym(lib, names[i])))
      return NULL;
  /* function pointers from void*: through memcpy, as ISO C allows */
  memcpy(&driver.init, &p[0], sizeof p[0]);
  memcpy(&driver.pointer_attribute, &p[1], sizeof p[1]);
  memcpy(&driver.device_get, &p[2], sizeof p[2]);
  memcpy(&driver.primary_retain, &p[3], sizeof p[3]);
  memcpy(&driver.primary_release, &p[4], sizeof p[4]);
  memcpy(&driver.push, &p[5], sizeof p[5]);
  memcpy(&driver.pop, &p[6], sizeof p[6]);
  memcpy(&driver.sync, &p[7], sizeof p[7]);
  if (driver.init(0) != 0)
    driver.sync = NULL;
  return driver.sync ? &driver : NULL;
#else
  return NULL;
#endif
}

/* Waits for `stream` of the array at ptr; a CUresult.  A stream handle
 * names its context; the legacy (1) and per-thread (2) default streams
 * are those of the current context, so for them the context of the
 * array's memory is made current: the pointer's own, or for memory
 * without one (stream-ordered pools, cudaMallocAsync) the device's
 * primary context. */
static int wait_stream(const cuda_driver* d, uintptr_t ptr, uintptr_t stream)
{
  if (stream > 2)
    return d->sync(stream);
  void* ctx = NULL;
  void* popped = NULL;
  int device = -1, retained = 0;
  int r = d->pointer_attribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, ptr);
  if (r != 0 || !ctx) {
    int ordinal = -1;
    r = d->pointer_attribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr);
    if (r == 0)
      r = d->device_get(&device, ordinal);
    if (r == 0)
      r = d->primary_retain(&ctx, device);
    retained = r == 0;
  }
  if (r == 0)
    r = d->push(ctx);
  if (r == 0) {
    r = d->sync(stream);
    const int r_pop = d->pop(&popped);
    r = r != 0 ? r : r_pop;
  }
  if (retained) {
    const int r_release = d->primary_release(device);
    r = r != 0 ? r : r_release;
  }
  return r;
}

int lull_py_bindings_wait_streams(lull_py_binding* bindings, int count)
{
  /* the streams as the arrays' interfaces name them now (CuPy's names its
   * current stream on every access), read with the GIL */
  int waits = 0;
  for (int i = 0; i < count; ++i) {
    lull_py_binding* b = &bindings[i];
    if (!b->set || !b->cuda)
      continue;
    PyObject* cai = PyObject_GetAttrString(b->owner, "__cuda_array_interface__");
    if (!cai)
      return 0;
    b->has_stream = 0;
    int ok = PyDict_Check(cai);
    if (ok) {
      /* a strong reference: converting it may run code that empties cai */
      PyObject* stream = PyDict_GetItemString(cai, "stream");
      Py_XINCREF(stream);
      ok = interface_stream(b, stream);
      Py_XDECREF(stream);
    } else
      lull_py_binding_raise(b, PyExc_TypeError, "__cuda_array_interface__ is not a dict");
    Py_DECREF(cai);
    if (!ok)
      return 0;
    waits += b->has_stream;
  }
  if (!waits)
    return 1;
  const cuda_driver* d = cuda_driver_get();
  if (!d) {
    PyErr_SetString(PyExc_RuntimeError,
                    "cannot wait for a CUDA array's stream (the CUDA driver could not be "
                    "loaded); synchronize before the call, or export the array without a "
                    "stream");
    return 0;
  }
  /* the waits without the GIL: the producer may still be busy */
  int results[LULL_PY_MAX_IMAGES] = {0};
  Py_BEGIN_ALLOW_THREADS
  for (int i = 0; i < count && i < LULL_PY_MAX_IMAGES; ++i)
    if (bindings[i].set && bindings[i].cuda && bindings[i].has_stream)
      results[i] = wait_stream(d, (uintptr_t)bindings[i].device_ptr, bindings[i].stream);
  Py_END_ALLOW_THREADS
  for (int i = 0; i < count && i < LULL_PY_MAX_IMAGES; ++i)
    if (results[i] != 0)
      return lull_py_binding_raise(&bindings[i], PyExc_RuntimeError,
                                   "waiting for its CUDA stream failed (CUresult %d)", results[i]);
  return 1;
}
