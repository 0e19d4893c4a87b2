/* lull.metrics(image, reference): relMSE, PSNR and SSIM as core/metrics.h
 * defines them (the command-line tool's `lull compare` reports the same
 * numbers), for scripts that compare denoisers. */
#include "pylull.h"

#include <math.h>

#include "../../../core/metrics.h"

/* The RGB(A) of an array as packed float32 (PyMem_RawMalloc'd). */
static float* rgb_floats(PyObject* obj, const char* name, lull_py_binding* b)
{
  if (!lull_py_binding_init(b, obj, name, 0))
    return NULL;
  if (b->channels < 3) {
    PyErr_Format(PyExc_ValueError, "image '%s': metrics need 3 or 4 channels, got %d", name,
                 b->channels);
    lull_py_binding_clear(b);
    return NULL;
  }
  float* out = lull_py_binding_floats(b);
  if (!out)
    lull_py_binding_clear(b);
  return out;
}

/* Packed RGBA to packed RGB in place (the metrics leave the alpha out). */
static void drop_alpha(float* data, size_t pixels)
{
  for (size_t i = 0; i < pixels; ++i)
    for (int c = 0; c < 3; ++c)
      data[3 * i + (size_t)c] = data[4 * i + (size_t)c];
}

PyObject* lull_py_metrics(PyObject* module, PyObject* args)
{
  (void)module;
  PyObject *image_obj = NULL, *ref_obj = NULL;
  if (!PyArg_ParseTuple(args, "OO:metrics", &image_obj, &ref_obj))
    return NULL;
  lull_py_binding image_b, ref_b;
  float* image = rgb_floats(image_obj, "image", &image_b);
  if (!image)
    return NULL;
  float* ref = rgb_floats(ref_obj, "reference", &ref_b);
  PyObject* result = NULL;
  if (ref && (image_b.width != ref_b.width || image_b.height != ref_b.height))
    PyErr_Format(PyExc_ValueError,
                 "image is %d x %d x %d (H x W x C) but the reference is %d x %d x %d",
                 image_b.height, image_b.width, image_b.channels, ref_b.height, ref_b.width,
                 ref_b.channels);
  else if (ref) {
    /* RGB against RGBA (a PFM reference of Blender's Combined): the
     * metrics are of the colour, which both have */
    const size_t pixels = (size_t)image_b.width * (size_t)image_b.height;
    int channels = image_b.channels;
    if (image_b.channels != ref_b.channels) {
      if (image_b.channels == 4)
        drop_alpha(image, pixels);
      if (ref_b.channels == 4)
        drop_alpha(ref, pixels);
      channels = 3;
    }
    lull_metrics m;
    Py_BEGIN_ALLOW_THREADS
    m = lull_metrics_compute(image, ref, (size_t)image_b.width, (size_t)image_b.height,
                             channels);
    Py_END_ALLOW_THREADS
    if (isnan(m.ssim)) /* out of memory; a negative SSIM is a result */
      PyErr_NoMemory();
    else
      result = Py_BuildValue("{s:d,s:d,s:d}", "relmse", m.rel_mse, "psnr", m.psnr, "ssim",
                             m.ssim);
  }
  PyMem_RawFree(image);
  PyMem_RawFree(ref);
  lull_py_binding_clear(&image_b);
  if (ref)
    lull_py_binding_clear(&ref_b);
  return result;
}
