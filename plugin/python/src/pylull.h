/* Internal interface of the Python extension `lull._lull`.
 *
 * The extension is a thin layer over the public C API (oidn.h + lull.h):
 * Device and Filter objects own OIDN handles, images arrive through the
 * buffer protocol (arrays.c), errors become lull.Error (errors.c).  The
 * one-call helpers (denoise, reconstruct) live in Python (lull/__init__.py)
 * on top of these objects.
 *
 * Types are heap types created per module; their module state holds the
 * Error class and the types themselves, so nothing here is global. */
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include <OpenImageDenoise/oidn.h>
#include <lull.h>

/* at least the library's most images of a filter type (plugin/filter_types.h) */
enum { LULL_PY_MAX_IMAGES = 40, LULL_PY_NAME_SIZE = 64 };

typedef struct lull_py_state
{
  PyObject* error;        /* lull.Error */
  PyTypeObject* device_type;
  PyTypeObject* filter_type;
} lull_py_state;

/* -- errors.c ------------------------------------------------------------- */

/* Creates lull.Error (an Exception with .code and .message). */
PyObject* lull_py_error_create(PyObject* module);
/* Raises lull.Error(code, message). Returns NULL for `return` convenience. */
PyObject* lull_py_raise(const lull_py_state* state, int code, const char* message);
/* Reads and clears the device's (NULL: this thread's global) first error and
 * raises it; returns 0 when an error was raised, 1 when there was none. */
int lull_py_check(const lull_py_state* state, OIDNDevice device);

/* A str argument as the C string the library takes; NULL (TypeError, or
 * ValueError for an embedded NUL, which C would have cut the name at:
 * "ATrous\0x" had made an ATrous filter) when it cannot be one. */
const char* lull_py_name(PyObject* arg);

/* -- arrays.c -------------------------------------------------------------- */

/* One image argument of a filter: the exporter's buffer (held while bound,
 * so the memory stays valid and the exporter cannot resize it) and how the
 * filter reaches it.  When the device can read the memory in place and the
 * layout fits OIDN's (channels contiguous, positive pixel and row strides
 * with rows not overlapping) the filter uses it directly; otherwise the
 * pixels are packed into `staging` (host) or `buffer` (device memory) before
 * each execution and, for the output, unpacked after it. */
typedef struct lull_py_binding
{
  int set;
  int output;                /* written by the filter */
  char name[LULL_PY_NAME_SIZE];
  Py_buffer view;
  OIDNFormat format;
  int width, height, channels, item_size;
  Py_ssize_t channel_stride, pixel_stride, row_stride; /* of the view, bytes */
  int direct;                /* the filter uses view.buf */
  int packed;                /* the view is tightly packed (one block copy) */
  void* staging;             /* PyMem_RawMalloc'd packed pixels, or NULL */
  OIDNBuffer buffer;         /* device buffer, or NULL */
  size_t packed_size;
  char geometry_error[128];  /* why the shape or strides are not an image's */
  /* A CUDA array (__cuda_array_interface__) instead of a buffer: its GPU
   * memory at device_ptr, which the filter uses in place; owner keeps the
   * array alive while bound; stream: the producer's stream (CAI v3), which
   * the filter waits for before it executes. */
  int cuda;
  PyObject* owner;
  void* device_ptr;
  int has_stream;
  uintptr_t stream;
} lull_py_binding;

/* Fills b from obj: checks dtype (float32/float16), shape ((H, W) or
 * (H, W, C), C <= 4), writability for outputs.  Raises TypeError or
 * ValueError naming the image and returns 0 on failure. */
int lull_py_binding_init(lull_py_binding* b, PyObject* obj, const char* name, int output);
/* Raises `type` with "image '<name>': " and the formatted message; 0. */
int lull_py_binding_raise(const lull_py_binding* b, PyObject* type, const char* format, ...);
/* Size, format and strides of b from an array's shape and byte strides
 * (b->item_size set); 0 with b->geometry_error when the shape is not an
 * image's. */
int lull_py_binding_set_geometry(lull_py_binding* b, int ndim, const Py_ssize_t* shape,
                                 const Py_ssize_t* strides);
/* Fills b from obj like lull_py_binding_init, and also takes arrays in GPU
 * memory (__cuda_array_interface__, versions 2 and 3: CuPy, PyTorch,
 * Numba), which need a CUDA device and a layout the filter can read in
 * place. */
int lull_py_binding_init_image(lull_py_binding* b, PyObject* obj, const char* name, int output);
/* The object a binding was made from (borrowed), or NULL. */
PyObject* lull_py_binding_object(const lull_py_binding* b);
/* Waits for the producer streams of the bound CUDA arrays, as their
 * interfaces name them at the call (through the CUDA driver, loaded on
 * first use; without the GIL); raises and returns 0 when that fails.  The
 * caller keeps the bindings from changing meanwhile (busy). */
int lull_py_bindings_wait_streams(lull_py_binding* bindings, int count);
/* Releases the view and the staging memory (not the OIDN buffer). */
void lull_py_binding_clear(lull_py_binding* b);
/* Copies the view's pixels into dst, tightly packed; and back. */
void lull_py_binding_pack(const lull_py_binding* b, void* dst);
void lull_py_binding_unpack(const lull_py_binding* b, const void* src);
/* The pixels as packed float32 (half widened), PyMem_RawMalloc'd; NULL with
 * MemoryError set when out of memory. */
float* lull_py_binding_floats(const lull_py_binding* b);

/* -- device.c / filter.c ----------------------------------------------------- */

typedef struct lull_py_device
{
  PyObject_HEAD
  OIDNDevice handle;        /* NULL once closed */
  int type;                 /* OIDNDeviceType after commit */
  int system_memory;        /* the device reads host memory in place */
  /* Filters executing on the device (in threads that released the GIL),
   * and the thread inside one's progress callback (0: none).  The library
   * holds the device's lock while it executes and calls the progress
   * monitor, which takes the GIL: a thread holding the GIL must not wait
   * for that lock (lull_py_device_wait_idle). */
  int executing;
  unsigned long callback_thread;
} lull_py_device;

/* Waits, with the GIL released, until no filter executes on the device, so
 * that a call into the library that takes the device's lock cannot block
 * while holding the GIL (the executing thread's progress monitor needs the
 * GIL: a deadlock).  Returns at once in the thread of a progress callback
 * (the lock is recursive and held by that thread).  Returns 1, or 0 with
 * the exception of a signal handler (Ctrl-C) when interruptible. */
int lull_py_device_wait_idle(lull_py_device* device, int interruptible);

typedef struct lull_py_filter
{
  PyObject_HEAD
  PyObject* device_obj;     /* the lull.Device it was made by (strong) */
  OIDNDevice device;        /* retained */
  OIDNFilter handle;        /* NULL once closed */
  int system_memory;
  char type_name[LULL_PY_NAME_SIZE];
  int dirty;                /* needs a commit before the next execute */
  int busy;                 /* executing (the GIL is released) */
  PyObject* progress;       /* callable or NULL */
  lull_py_binding images[LULL_PY_MAX_IMAGES];
} lull_py_filter;

extern PyType_Spec lull_py_device_spec;
extern PyType_Spec lull_py_filter_spec;

/* The module state of an object of one of the extension's types. */
lull_py_state* lull_py_state_of(PyObject* self);

/* Creates a Filter of the given type on an open device (Device.new_filter). */
PyObject* lull_py_filter_new(lull_py_device* device, const char* type);

/* -- params.c ------------------------------------------------------------------ */

/* Sets or reads a filter parameter typed by lullGetFilterParamInfo: bool,
 * int or float.  Unknown names raise KeyError, wrong types TypeError,
 * read-only or out-of-range values ValueError. */
/* The filter is open, not executing in another thread, and no other
 * thread executes on its device (which would hold the device's lock:
 * lull_py_device_wait_idle); else 0 with the exception set.  A filter's own
 * progress callback may use it.  Call it right before calling the library
 * with the filter (Python code run in between, converting a value, say, may
 * let another thread begin executing). */
int lull_py_filter_open(lull_py_filter* f);
int lull_py_param_set(lull_py_filter* f, const char* name, PyObject* value);
/* numpy.bool_ (numpy.bool in NumPy 2), which has no __index__ */
int lull_py_is_numpy_bool(PyObject* value);
PyObject* lull_py_param_get(lull_py_filter* f, const char* name);
/* A dict describing one parameter (lull.filter_params). */
PyObject* lull_py_param_info_dict(const LullParamInfo* info);

/* -- exr.c ----------------------------------------------------------------------- */

PyObject* lull_py_read_image(PyObject* module, PyObject* args);
PyObject* lull_py_write_image(PyObject* module, PyObject* args, PyObject* kwargs);
PyObject* lull_py_add_passes(PyObject* module, PyObject* args);

/* -- metrics.c -------------------------------------------------------------------- */

PyObject* lull_py_metrics(PyObject* module, PyObject* args);
