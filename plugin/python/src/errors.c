/* lull.Error: OIDN's errors as a Python exception with the error code
 * (.code, an OIDNError value, also lull.ERROR_*) and the message. */
#include "pylull.h"

static const char error_doc[] =
    "An error reported by lull's C library (Open Image Denoise API).\n\n"
    ".code is the OIDN error code (lull.ERROR_INVALID_ARGUMENT, ...),\n"
    ".message the library's message.";

PyObject* lull_py_error_create(PyObject* module)
{
  (void)module;
  return PyErr_NewExceptionWithDoc("lull.Error", error_doc, NULL, NULL);
}

const char* lull_py_name(PyObject* arg)
{
  Py_ssize_t size = 0;
  const char* s = PyUnicode_AsUTF8AndSize(arg, &size);
  if (s && strlen(s) != (size_t)size) {
    PyErr_Format(PyExc_ValueError, "name %R contains a NUL character", arg);
    return NULL;
  }
  return s;
}

PyObject* lull_py_raise(const lull_py_state* state, int code, const char* message)
{
  if (!message || !*message)
    message = "lull error"; /* the library always gives a message */
  /* messages quote names from files, which need not be UTF-8: undecodable
   * bytes become U+FFFD (a UnicodeDecodeError here would replace lull.Error) */
  PyObject* msg_obj = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace");
  if (!msg_obj)
    return NULL;
  PyObject* exc = PyObject_CallFunctionObjArgs(state->error, msg_obj, NULL);
  if (!exc) {
    Py_DECREF(msg_obj);
    return NULL;
  }
  PyObject* code_obj = PyLong_FromLong(code);
  if (code_obj && PyObject_SetAttrString(exc, "code", code_obj) == 0 &&
      PyObject_SetAttrString(exc, "message", msg_obj) == 0)
    PyErr_SetObject(state->error, exc);
  Py_XDECREF(code_obj);
  Py_XDECREF(msg_obj);
  Py_DECREF(exc);
  return NULL;
}

int lull_py_check(const lull_py_state* state, OIDNDevice device)
{
  const char* message = NULL;
  const OIDNError code = oidnGetDeviceError(device, &message);
  if (code == OIDN_ERROR_NONE)
    return 1;
  lull_py_raise(state, (int)code, message);
  return 0;
}
