/* Images from the buffer protocol: any exporter (NumPy arrays, memoryviews,
 * array.array reshaped through memoryview.cast) of float32 or float16 with
 * shape (H, W) or (H, W, C), C <= 4, and any strides.  Layouts OIDN can
 * describe (contiguous channels, positive pixel and row strides, rows that
 * do not overlap) are used in place; everything else (negative or zero
 * strides, transposed views, strided channels) goes through a packed copy,
 * so no layout is ever misread. */
#include <stdarg.h>
#include <string.h>

#include "pylull.h"

#include "../../../core/half.h"

/* The scalar type of a struct-module format string: 'f' (float32), 'e'
 * (float16) in native or little-endian byte order; 0 for anything else. */
static char scalar_code(const char* format, int* big_endian)
{
  *big_endian = 0;
  if (!format)
    return 'B'; /* unformatted bytes */
  if (*format == '@' || *format == '=' || *format == '<')
    ++format;
  else if (*format == '>' || *format == '!') {
    *big_endian = 1;
    ++format;
  }
  if ((format[0] == 'f' || format[0] == 'e') && format[1] == '\0')
    return format[0];
  return 0;
}

static OIDNFormat oidn_format(int channels, int half)
{
  static const OIDNFormat floats[] = {OIDN_FORMAT_FLOAT, OIDN_FORMAT_FLOAT2, OIDN_FORMAT_FLOAT3,
                                      OIDN_FORMAT_FLOAT4};
  static const OIDNFormat halves[] = {OIDN_FORMAT_HALF, OIDN_FORMAT_HALF2, OIDN_FORMAT_HALF3,
                                      OIDN_FORMAT_HALF4};
  return half ? halves[channels - 1] : floats[channels - 1];
}

static int binding_vraise(const lull_py_binding* b, PyObject* type, const char* format,
                          va_list args)
{
  char message[320];
  PyOS_vsnprintf(message, sizeof message, format, args);
  PyErr_Format(type, "image '%s': %s", b->name, message);
  return 0;
}

int lull_py_binding_raise(const lull_py_binding* b, PyObject* type, const char* format, ...)
{
  va_list args;
  va_start(args, format);
  binding_vraise(b, type, format, args);
  va_end(args);
  return 0;
}

/* lull_py_binding_raise, and the buffer view released */
static int fail(lull_py_binding* b, PyObject* type, const char* format, ...)
{
  va_list args;
  va_start(args, format);
  binding_vraise(b, type, format, args);
  va_end(args);
  PyBuffer_Release(&b->view);
  return 0;
}

int lull_py_binding_set_geometry(lull_py_binding* b, int ndim, const Py_ssize_t* shape,
                                 const Py_ssize_t* strides)
{
  char* e = b->geometry_error;
  const size_t n = sizeof b->geometry_error;
  if (ndim != 2 && ndim != 3) {
    PyOS_snprintf(e, n, "expected shape (H, W) or (H, W, C), got %d dimensions", ndim);
    return 0;
  }
  const Py_ssize_t h = shape[0], w = shape[1];
  const Py_ssize_t c = ndim == 3 ? shape[2] : 1;
  if (c < 1 || c > 4) {
    PyOS_snprintf(e, n, "expected 1 to 4 channels, got %zd", c);
    return 0;
  }
  if (h <= 0 || w <= 0) {
    PyOS_snprintf(e, n, "empty image (shape %zd x %zd)", h, w);
    return 0;
  }
  if (h > 65536 || w > 65536) {
    PyOS_snprintf(e, n, "image is too large (%zd x %zd, at most 65536 per side)", h, w);
    return 0;
  }
  b->height = (int)h;
  b->width = (int)w;
  b->channels = (int)c;
  b->format = oidn_format(b->channels, b->item_size == 2);
  b->row_stride = strides[0];
  b->pixel_stride = strides[1];
  b->channel_stride = ndim == 3 ? strides[2] : b->item_size;
  /* strides along a dimension of size 1 are meaningless; give them values
   * that keep the layout usable in place */
  const Py_ssize_t pixel_size = (Py_ssize_t)b->channels * b->item_size;
  if (b->channels == 1)
    b->channel_stride = b->item_size;
  if (b->width == 1)
    b->pixel_stride = pixel_size;
  /* a pixel stride whose row would overflow is of no layout OIDN reads
   * (and w times it would be undefined) */
  const int row_fits = b->pixel_stride >= -(PY_SSIZE_T_MAX / w) &&
                       b->pixel_stride <= PY_SSIZE_T_MAX / w;
  if (b->height == 1 && row_fits)
    b->row_stride = (Py_ssize_t)b->width * b->pixel_stride;
  b->packed_size = (size_t)h * (size_t)w * (size_t)pixel_size;
  b->packed = b->channel_stride == b->item_size && b->pixel_stride == pixel_size &&
              b->row_stride == w * pixel_size;
  /* rows may be padded and pixels spaced, as OIDN's strides allow */
  b->direct = b->channel_stride == b->item_size && b->pixel_stride >= pixel_size && row_fits &&
              b->row_stride >= w * b->pixel_stride;
  return 1;
}

/* Whether distinct elements of the view share bytes (zero strides, or
 * strides smaller than the span of the axes inside them): taken in order
 * of their strides, each axis must step past everything the axes inside
 * it cover. */
static int self_overlapping(const lull_py_binding* b)
{
  Py_ssize_t stride[3] = {b->row_stride, b->pixel_stride, b->channel_stride};
  Py_ssize_t count[3] = {b->height, b->width, b->channels};
  for (int i = 0; i < 3; ++i)
    stride[i] = stride[i] < 0 ? -stride[i] : stride[i];
  for (int i = 1; i < 3; ++i) /* insertion sort of three */
    for (int j = i; j > 0 && stride[j] < stride[j - 1]; --j) {
      const Py_ssize_t s = stride[j], c = count[j];
      stride[j] = stride[j - 1];
      count[j] = count[j - 1];
      stride[j - 1] = s;
      count[j - 1] = c;
    }
  Py_ssize_t span = b->item_size;
  for (int i = 0; i < 3; ++i) {
    if (count[i] <= 1)
      continue;
    if (stride[i] < span)
      return 1;
    if (stride[i] > (PY_SSIZE_T_MAX - span) / (count[i] - 1))
      return 0; /* spans past the address space: no two elements meet */
    span += stride[i] * (count[i] - 1);
  }
  return 0;
}

int lull_py_binding_init(lull_py_binding* b, PyObject* obj, const char* name, int output)
{
  *b = (lull_py_binding){0};
  PyOS_snprintf(b->name, sizeof b->name, "%s", name);
  b->output = output;
  if (!PyObject_CheckBuffer(obj)) {
    const int cuda = PyObject_HasAttrString(obj, "__cuda_array_interface__");
    PyErr_Format(PyExc_TypeError,
                 "image '%s': expected an array (buffer protocol: numpy.ndarray, memoryview), "
                 "got %.80s%s",
                 name, Py_TYPE(obj)->tp_name,
                 cuda ? " in GPU memory: only filters read those (Filter.set_image, "
                        "lull.denoise); copy it to the host first" : "");
    return 0;
  }
  const int flags = PyBUF_RECORDS_RO | (output ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj, &b->view, flags) != 0) {
    /* exporters say "not writable" in their own words (NumPy: ValueError,
     * bytes: BufferError): when a read-only request works, say it plainly */
    if (output && PyObject_GetBuffer(obj, &b->view, PyBUF_RECORDS_RO) == 0) {
      PyBuffer_Release(&b->view);
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "image '%s': the output array is read-only", name);
    }
    return 0;
  }
  int big_endian = 0;
  const char code = scalar_code(b->view.format, &big_endian);
  if (code != 'f' && code != 'e')
    return fail(b, PyExc_TypeError, "dtype must be float32 or float16 (got format '%s'%s)",
                b->view.format ? b->view.format : "B",
                big_endian ? ", big-endian" : "; convert with .astype(numpy.float32)");
  if (big_endian)
    return fail(b, PyExc_TypeError, "big-endian data is not supported");
  b->item_size = code == 'f' ? 4 : 2;
  if (b->view.itemsize != b->item_size)
    return fail(b, PyExc_TypeError, "unexpected item size %zd", b->view.itemsize);
  if (!lull_py_binding_set_geometry(b, b->view.ndim, b->view.shape, b->view.strides))
    return fail(b, PyExc_ValueError, "%s", b->geometry_error);
  /* an output view that aliases itself (zero strides, or as_strided's
   * overlapping rows) cannot be written: the result would depend on the
   * order the copy-back visits its elements */
  if (output && !b->direct && self_overlapping(b))
    return fail(b, PyExc_ValueError,
                "the output array has overlapping elements (its strides alias)");
  b->set = 1;
  return 1;
}

void lull_py_binding_clear(lull_py_binding* b)
{
  if (b->set && b->cuda)
    Py_CLEAR(b->owner);
  else if (b->set)
    PyBuffer_Release(&b->view);
  if (b->staging)
    PyMem_RawFree(b->staging);
  b->staging = NULL;
  b->set = 0;
}

/* A plain byte copy (GCC turns it into memcpy; clang-tidy's analyzer flags
 * direct memcpy calls in C11 mode). */
static void copy_bytes(void* dst, const void* src, size_t n)
{
  unsigned char* d = dst;
  const unsigned char* s = src;
  for (size_t i = 0; i < n; ++i)
    d[i] = s[i];
}

/* Address of element (y, x, c) of the view. */
static char* element(const lull_py_binding* b, int y, int x, int c)
{
  return (char*)b->view.buf + (Py_ssize_t)y * b->row_stride + (Py_ssize_t)x * b->pixel_stride +
         (Py_ssize_t)c * b->channel_stride;
}

void lull_py_binding_pack(const lull_py_binding* b, void* dst)
{
  const size_t pixel_size = (size_t)b->channels * (size_t)b->item_size;
  if (b->packed) {
    copy_bytes(dst, b->view.buf, b->packed_size);
    return;
  }
  char* out = dst;
  for (int y = 0; y < b->height; ++y)
    for (int x = 0; x < b->width; ++x) {
      if (b->channel_stride == b->item_size)
        copy_bytes(out, element(b, y, x, 0), pixel_size);
      else
        for (int c = 0; c < b->channels; ++c)
          copy_bytes(out + (size_t)c * (size_t)b->item_size, element(b, y, x, c),
                 (size_t)b->item_size);
      out += pixel_size;
    }
}

void lull_py_binding_unpack(const lull_py_binding* b, const void* src)
{
  const size_t pixel_size = (size_t)b->channels * (size_t)b->item_size;
  if (b->packed) {
    copy_bytes(b->view.buf, src, b->packed_size);
    return;
  }
  const char* in = src;
  for (int y = 0; y < b->height; ++y)
    for (int x = 0; x < b->width; ++x) {
      if (b->channel_stride == b->item_size)
        copy_bytes(element(b, y, x, 0), in, pixel_size);
      else
        for (int c = 0; c < b->channels; ++c)
          copy_bytes(element(b, y, x, c), in + (size_t)c * (size_t)b->item_size,
                 (size_t)b->item_size);
      in += pixel_size;
    }
}

float* lull_py_binding_floats(const lull_py_binding* b)
{
  const size_t count = (size_t)b->width * (size_t)b->height * (size_t)b->channels;
  float* out = PyMem_RawMalloc(count * sizeof(float));
  if (!out) {
    PyErr_NoMemory();
    return NULL;
  }
  if (b->item_size == 4) {
    lull_py_binding_pack(b, out);
    return out;
  }
  uint16_t* halves = PyMem_RawMalloc(count * sizeof *halves);
  if (!halves) {
    PyMem_RawFree(out);
    PyErr_NoMemory();
    return NULL;
  }
  lull_py_binding_pack(b, halves);
  for (size_t i = 0; i < count; ++i)
    out[i] = lull_half_to_float(halves[i]);
  PyMem_RawFree(halves);
  return out;
}
