/* Image files through plugin/io (lull_io.h): the C side of lull.read_exr,
 * lull.write_exr and lull.add_passes.  Python (lull/__init__.py) turns the
 * pass tuples into a dict of arrays.
 *
 *   _read_image(path) -> (width, height, [(layer, name, channel_names, half,
 *                          bytearray of float32 H*W*C, view), ...])
 *   _write_image(path, passes, srgb=False) with passes a list of
 *                (layer, name, channel_names, half, array)
 *   _add_passes(src, dst, passes): src's passes and metadata kept exactly,
 *                passes added (or replaced when layer and name exist)
 *
 * Writes are atomic (lull_io): a failed write leaves the destination as it
 * was.  Built without plugin/io, they raise NotImplementedError. */
#include <string.h>

#include "pylull.h"

#if defined(LULL_PY_HAVE_IO)

#include "../../io/lull_io.h"

enum { ERR_SIZE = 512 };

static lull_py_state* module_state(PyObject* module)
{
  return PyModule_GetState(module);
}

/* Reads a file with the GIL released; raises lull.Error and returns 0 on
 * failure (leaving *image empty). */
static int read_file(PyObject* module, const char* path, lull_io_image* image)
{
  *image = (lull_io_image){0};
  char err[ERR_SIZE] = "";
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = lull_io_read(path, image, err, sizeof err);
  Py_END_ALLOW_THREADS
  if (rc == 0)
    return 1;
  lull_py_raise(module_state(module), OIDN_ERROR_INVALID_ARGUMENT,
                *err ? err : "cannot read the image file");
  return 0;
}

/* Names from a file as str; bytes that are not UTF-8 become U+FFFD (a
 * corrupt file gives odd names, not a UnicodeDecodeError). */
static PyObject* file_text(const char* s)
{
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

PyObject* lull_py_read_image(PyObject* module, PyObject* args)
{
  PyObject* path_obj = NULL;
  if (!PyArg_ParseTuple(args, "O&:_read_image", PyUnicode_FSConverter, &path_obj))
    return NULL;
  lull_io_image image;
  const int ok = read_file(module, PyBytes_AS_STRING(path_obj), &image);
  Py_DECREF(path_obj);
  if (!ok)
    return NULL;
  PyObject* passes = PyList_New(0);
  const size_t pixels = (size_t)image.width * (size_t)image.height;
  for (int i = 0; passes && i < image.num_passes; ++i) {
    const lull_io_pass* p = &image.passes[i];
    PyObject* names = PyTuple_New(p->channels);
    for (int c = 0; names && c < p->channels; ++c) {
      PyObject* s = file_text(p->channel_names[c]);
      if (!s)
        Py_CLEAR(names);
      else
        PyTuple_SET_ITEM(names, c, s);
    }
    PyObject* data = PyByteArray_FromStringAndSize((const char*)p->data,
                                                   (Py_ssize_t)(pixels * (size_t)p->channels *
                                                                sizeof(float)));
    PyObject* item = names && data ? Py_BuildValue("(N N O O O N)", file_text(p->layer),
                                                   file_text(p->name), names,
                                                   p->half ? Py_True : Py_False, data,
                                                   file_text(p->view))
                                   : NULL;
    Py_XDECREF(names);
    Py_XDECREF(data);
    if (!item || PyList_Append(passes, item) != 0)
      Py_CLEAR(passes);
    Py_XDECREF(item);
  }
  PyObject* result = passes ? Py_BuildValue("(i i O)", image.width, image.height, passes) : NULL;
  Py_XDECREF(passes);
  lull_io_free(&image);
  return result;
}

/* Converts a pass tuple's array to float32 H*W*C (malloc'd) with its size. */
static float* pass_pixels(PyObject* array, const char* name, int* width, int* height,
                          int* channels)
{
  lull_py_binding b;
  if (!lull_py_binding_init(&b, array, name, 0))
    return NULL;
  float* out = lull_py_binding_floats(&b);
  if (!out) {
    lull_py_binding_clear(&b);
    return NULL;
  }
  *width = b.width;
  *height = b.height;
  *channels = b.channels;
  lull_py_binding_clear(&b);
  return out;
}

/* The view a key "layer.name" ends in, when it is "Layer.Pass.<view>" for
 * one of the image's views (Python split it at its last dot, which may be
 * one of the view's own: "cam.c"): the longest such view, with the layer
 * and pass in out_layer and out_name; else NULL. */
static const char* split_view(const lull_io_image* image, const char* layer, const char* name,
                              char out_layer[LULL_IO_NAME_SIZE], char out_name[LULL_IO_NAME_SIZE])
{
  char key[2 * LULL_IO_NAME_SIZE + 2];
  PyOS_snprintf(key, sizeof key, "%s.%s", layer, name);
  const size_t n = strlen(key);
  const char* best = NULL;
  for (int i = 0; i < image->num_passes; ++i) {
    const char* v = image->passes[i].view;
    const size_t m = strlen(v);
    if (m && m + 1 < n && key[n - m - 1] == '.' && strcmp(key + n - m, v) == 0 &&
        (!best || m > strlen(best)))
      best = v;
  }
  if (!best)
    return NULL;
  key[n - strlen(best) - 1] = '\0'; /* "Layer.Pass" */
  const char* dot = strrchr(key, '.'); /* none: "Pass.<view>", a pass without a layer */
  PyOS_snprintf(out_layer, LULL_IO_NAME_SIZE, "%.*s", dot ? (int)(dot - key) : 0, key);
  PyOS_snprintf(out_name, LULL_IO_NAME_SIZE, "%s", dot ? dot + 1 : key);
  return best;
}

/* Whether `layer` of a key that names no view of a file with views looks
 * like "Layer.Pass" of an existing layer, the key then being a misspelt
 * "Layer.Pass.<view>" (it would have added the pass "<view>" to a new
 * layer "Layer.Pass", without a view); the views in views_out. */
static int misspelt_view(const lull_io_image* image, const char* layer, char* views_out,
                         size_t views_size)
{
  int has_views = 0, layer_exists = 0, parent_exists = 0;
  const char* dot = strrchr(layer, '.');
  const size_t parent = dot ? (size_t)(dot - layer) : 0;
  lull_io_list_names(image, 1, 0, views_out, views_size);
  for (int i = 0; i < image->num_passes; ++i) {
    const lull_io_pass* p = &image->passes[i];
    has_views |= p->view[0] != '\0';
    layer_exists |= strcmp(p->layer, layer) == 0;
    parent_exists |= dot && strlen(p->layer) == parent && strncmp(p->layer, layer, parent) == 0;
  }
  return has_views && !layer_exists && parent_exists;
}

/* Adds (or, when replace is set and it exists, overwrites) the passes of a
 * Python list of (layer, name, channel_names, half, array[, explicit,
 * view_channel_names]) tuples.  explicit (default true): the caller named
 * the channels; otherwise they are defaults, and a pass that is replaced
 * keeps its own (a Vector's X Y Z W, Cryptomatte's r g b a), and one that
 * turns out to be a view's takes view_channel_names (the defaults for its
 * real name). */
static int add_passes(lull_io_image* image, PyObject* passes, int replace)
{
  PyObject* seq = PySequence_Fast(passes, "passes must be a sequence of tuples");
  if (!seq)
    return 0;
  int ok = 1;
  for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(seq); ++i) {
    const char *layer = NULL, *name = NULL;
    PyObject *names = NULL, *array = NULL, *view_names = NULL;
    int half = 0, explicit = 1;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ssOpO|pO", &layer, &name, &names,
                          &half, &array, &explicit, &view_names)) {
      ok = 0;
      break;
    }
    if (strlen(layer) >= LULL_IO_NAME_SIZE || strlen(name) >= LULL_IO_NAME_SIZE) {
      PyErr_Format(PyExc_ValueError, "pass name '%.40s.%.40s...' is too long", layer, name);
      ok = 0;
      break;
    }
    char label[2 * LULL_IO_NAME_SIZE + 2];
    PyOS_snprintf(label, sizeof label, "%s%s%s", layer, *layer ? "." : "", name);
    int w = 0, h = 0, c = 0;
    float* pixels = pass_pixels(array, label, &w, &h, &c);
    if (!pixels) {
      ok = 0;
      break;
    }
    /* add_passes into a file with views: "Layer.Pass.view" (a view of the
     * file last) is that view's pass (Python split it as layer
     * "Layer.Pass", name "view"), with the default channel names of its
     * real name when none were given */
    char view_layer[LULL_IO_NAME_SIZE] = "", view_pass[LULL_IO_NAME_SIZE] = "";
    const char* view = replace ? split_view(image, layer, name, view_layer, view_pass) : NULL;
    char views[256];
    if (replace && !view && misspelt_view(image, layer, views, sizeof views)) {
      PyErr_Format(PyExc_ValueError,
                   "pass '%s': '%s' is none of the file's views (%s), and the file has no "
                   "layer '%s'; a pass of a view is \"Layer.Pass.<view>\"",
                   label, name, views, layer);
      ok = 0;
      PyMem_RawFree(pixels);
      break;
    }
    if (view) {
      layer = view_layer;
      name = view_pass;
      if (!explicit && view_names)
        names = view_names;
    }
    const char* channel_names[LULL_IO_MAX_CHANNELS] = {NULL, NULL, NULL, NULL};
    PyObject* names_seq = PySequence_Fast(names, "channel names must be a sequence");
    if (!names_seq || PySequence_Fast_GET_SIZE(names_seq) != c) {
      if (names_seq)
        PyErr_Format(PyExc_ValueError, "pass '%s' has %d channels but %zd channel names", label,
                     c, PySequence_Fast_GET_SIZE(names_seq));
      ok = 0;
    }
    for (int k = 0; ok && k < c; ++k) {
      channel_names[k] = lull_py_name(PySequence_Fast_GET_ITEM(names_seq, k));
      if (!channel_names[k] || strlen(channel_names[k]) >= 32) {
        if (channel_names[k])
          PyErr_Format(PyExc_ValueError, "channel name of pass '%s' is too long", label);
        ok = 0;
      }
    }
    if (ok && image->num_passes == 0 && image->width == 0) {
      image->width = w;
      image->height = h;
    }
    if (ok && (w != image->width || h != image->height)) {
      PyErr_Format(PyExc_ValueError, "pass '%s' is %d x %d (H x W) but the image is %d x %d",
                   label, h, w, image->height, image->width);
      ok = 0;
    }
    if (ok) {
      /* a key without a view is a pass without one: in a stereo file it
       * is not the first view's (it replaced the left eye's) */
      lull_io_pass* existing = lull_io_find_pass_view(image, layer, name, view ? view : "");
      if (existing && replace && existing->channels == c) {
        const size_t n = (size_t)w * (size_t)h * (size_t)c;
        for (size_t k = 0; k < n; ++k)
          existing->data[k] = pixels[k];
        existing->half = half;
        for (int k = 0; explicit && k < c; ++k)
          PyOS_snprintf(existing->channel_names[k], sizeof existing->channel_names[k], "%s",
                        channel_names[k]);
      } else if (existing) {
        PyErr_Format(PyExc_ValueError, "pass '%s' exists%s", label,
                     replace ? " with a different number of channels" : " twice");
        ok = 0;
      } else {
        lull_io_pass* added =
            lull_io_add_pass_view(image, layer, name, view ? view : "", c, channel_names, pixels);
        if (!added) {
          PyErr_NoMemory();
          ok = 0;
        } else
          added->half = half;
      }
    }
    Py_XDECREF(names_seq);
    PyMem_RawFree(pixels);
  }
  Py_DECREF(seq);
  return ok;
}

static PyObject* write_checked(PyObject* module, const char* path, lull_io_image* image, int srgb)
{
  char err[ERR_SIZE] = "";
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = lull_io_write(path, image, srgb, err, sizeof err);
  Py_END_ALLOW_THREADS
  if (rc != 0)
    return lull_py_raise(module_state(module), OIDN_ERROR_INVALID_ARGUMENT,
                         *err ? err : "cannot write the image file");
  Py_RETURN_NONE;
}

PyObject* lull_py_write_image(PyObject* module, PyObject* args, PyObject* kwargs)
{
  static char* kwlist[] = {"path", "passes", "srgb", NULL};
  PyObject* path_obj = NULL;
  PyObject* passes = NULL;
  int srgb = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&O|p:_write_image", kwlist,
                                   PyUnicode_FSConverter, &path_obj, &passes, &srgb))
    return NULL;
  lull_io_image image = {0};
  PyObject* result = NULL;
  if (add_passes(&image, passes, 0)) {
    if (image.num_passes == 0)
      PyErr_SetString(PyExc_ValueError, "no passes to write");
    else
      result = write_checked(module, PyBytes_AS_STRING(path_obj), &image, srgb);
  }
  lull_io_free(&image);
  Py_DECREF(path_obj);
  return result;
}

PyObject* lull_py_add_passes(PyObject* module, PyObject* args)
{
  PyObject *src_obj = NULL, *dst_obj = NULL, *passes = NULL;
  if (!PyArg_ParseTuple(args, "O&O&O:_add_passes", PyUnicode_FSConverter, &src_obj,
                        PyUnicode_FSConverter, &dst_obj, &passes))
    return NULL;
  lull_io_image image;
  PyObject* result = NULL;
  lull_io_file_info info;
  int ok = read_file(module, PyBytes_AS_STRING(src_obj), &image);
  lull_io_get_file_info(&image, &info);
  if (ok && info.mip_levels > 1) {
    /* only the first level is read: the copy would lack the others, and
     * dst = src would lose them */
    PyErr_Format(PyExc_ValueError,
                 "%s has %d resolution levels (a texture); add_passes would keep only the "
                 "first: use read_exr and write_exr",
                 PyBytes_AS_STRING(src_obj), info.mip_levels);
    ok = 0;
  }
  if (ok && add_passes(&image, passes, 1))
    result = write_checked(module, PyBytes_AS_STRING(dst_obj), &image, 0);
  lull_io_free(&image);
  Py_DECREF(src_obj);
  Py_DECREF(dst_obj);
  return result;
}

#else /* no plugin/io */

static PyObject* unavailable(PyObject* module)
{
  (void)module;
  PyErr_SetString(PyExc_NotImplementedError,
                  "this build of lull has no image-file support (plugin/io was not built)");
  return NULL;
}

PyObject* lull_py_read_image(PyObject* module, PyObject* args)
{
  (void)args;
  return unavailable(module);
}

PyObject* lull_py_write_image(PyObject* module, PyObject* args, PyObject* kwargs)
{
  (void)args;
  (void)kwargs;
  return unavailable(module);
}

PyObject* lull_py_add_passes(PyObject* module, PyObject* args)
{
  (void)args;
  return unavailable(module);
}

#endif
