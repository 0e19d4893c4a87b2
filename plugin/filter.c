/* Filters: images, parameters, commit and execution, with OIDN's rules
 * (unknown names warn on set and fail on get; a changed filter must be
 * committed again before it runs).  What a filter type accepts and does is
 * described by its entry in filter_types.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handles.h"

/* OIDN's per-side limit; larger images are refused before any size
 * arithmetic can overflow. */
enum { MAX_IMAGE_SIDE = 65536 };

double lull_param_initial_value(const lull_filter_type* type, int index)
{
  /* OIDN reports an alignment of 1 until the first commit sets it */
  if (strcmp(type->params[index].name, "tileAlignment") == 0)
    return 1;
  return type->params[index].default_value;
}

OIDN_API OIDNFilter oidnNewFilter(OIDNDevice device, const char* type)
{
  if (!lull_check_device(device) || !lull_check_string(device, type))
    return NULL;
  lull_device_lock(device);
  if (!lull_device_ready(device)) {
    lull_device_unlock(device);
    return NULL;
  }
  lull_device_unlock(device);
  const lull_filter_type* ft = lull_filter_type_find(type);
  if (!ft) {
    char message[160];
    snprintf(message, sizeof message, "unknown filter type: '%.100s'", type);
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, message);
    return NULL;
  }
  OIDNFilter filter = calloc(1, sizeof *filter);
  if (!filter) {
    lull_api_error(device, OIDN_ERROR_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  filter->magic = LULL_MAGIC_FILTER;
  atomic_init(&filter->refs, 1);
  filter->device = device;
  filter->type = ft;
  filter->params_changed = 1;
  for (int i = 0; i < ft->num_params; ++i)
    filter->values[i] = lull_param_initial_value(ft, i);
  atomic_fetch_add(&device->refs, 1);
  return filter;
}

OIDN_API void oidnRetainFilter(OIDNFilter filter)
{
  if (lull_check_filter(filter))
    atomic_fetch_add(&filter->refs, 1);
}

static void image_clear(lull_filter_image* image)
{
  if (image->buffer)
    lull_buffer_release(image->buffer);
  memset(image, 0, sizeof *image);
}

OIDN_API void oidnReleaseFilter(OIDNFilter filter)
{
  if (!lull_check_filter(filter) || atomic_fetch_sub(&filter->refs, 1) != 1)
    return;
  OIDNDevice device = filter->device;
  /* asynchronous executions may still read the images; errors of that
   * work stay for the next synchronising call, as in OIDN, whose releases
   * wait without raising them.  On the device's worker (the last
   * reference went with a finished job, or a monitor released it) no job
   * that uses the images is left: each holds references to its own. */
  const int on_worker = lull_device_on_worker(device);
  if (!on_worker) {
    lull_device_lock(device);
    lull_device_wait(device);
  }
  /* the state (temporal mode's history) is backend memory */
  if (filter->state)
    filter->state->release(device->backend, filter->state);
  if (!on_worker)
    lull_device_unlock(device);
  for (int i = 0; i < LULL_MAX_FILTER_IMAGES; ++i)
    image_clear(&filter->images[i]);
  filter->magic = LULL_MAGIC_DEAD;
  free(filter);
  lull_device_release(device);
}

/* -- images ------------------------------------------------------------------ */

/* Validates sizes and strides and fills the stride defaults; returns the
 * bytes the image spans from its first byte, or 0 with the error recorded. */
static int image_layout(OIDNDevice device, OIDNFormat format, size_t width, size_t height,
                        size_t* pixel_stride, size_t* row_stride, size_t* span)
{
  const size_t pixel_size = lull_format_size((lull_format)format);
  if (pixel_size == 0) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "invalid image format");
    return 0;
  }
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE ||
      width * height * (size_t)lull_format_channels((lull_format)format) > (size_t)INT32_MAX) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "image size is too large");
    return 0;
  }
  if (*pixel_stride == 0)
    *pixel_stride = pixel_size;
  else if (*pixel_stride < pixel_size) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "pixel stride is smaller than pixel size");
    return 0;
  }
  if (*pixel_stride > SIZE_MAX / MAX_IMAGE_SIDE) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "pixel stride is too large");
    return 0;
  }
  const size_t min_row = width * *pixel_stride;
  if (*row_stride == 0)
    *row_stride = min_row;
  else if (*row_stride < min_row) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "row stride is smaller than width * pixel stride");
    return 0;
  }
  if (*row_stride > SIZE_MAX / MAX_IMAGE_SIDE / 2) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "row stride is too large");
    return 0;
  }
  *span = (width == 0 || height == 0)
              ? 0
              : (height - 1) * *row_stride + (width - 1) * *pixel_stride + pixel_size;
  return 1;
}

/* Marks the filter as changed since its commit.  As in OIDN, every call
 * of a setter that gets past its argument checks does this, whatever the
 * name or value: an unknown name (which only warns), a read-only
 * parameter, the value it already has, an image that was not set, a data
 * parameter.  The next execution then fails until a commit; a commit
 * after changes that are only pointers or inputScale is cheap. */
static void uncommit(OIDNFilter filter)
{
  lull_device_lock(filter->device);
  filter->committed = 0;
  lull_device_unlock(filter->device);
}

/* The image setters' lookup: the index of the image, or -1 (a warning)
 * for an unknown name; uncommits the filter either way. */
static int image_index(OIDNFilter filter, const char* name)
{
  uncommit(filter);
  const int index = lull_filter_type_image(filter->type, name);
  if (index < 0)
    lull_api_warning(filter->device, "unknown filter image: '%s'", name);
  return index;
}

OIDN_API void oidnSetFilterImage(OIDNFilter filter, const char* name, OIDNBuffer buffer,
                                 OIDNFormat format, size_t width, size_t height,
                                 size_t byteOffset, size_t pixelByteStride, size_t rowByteStride)
{
  if (!lull_check_filter(filter) || !lull_check_string(filter->device, name))
    return;
  OIDNDevice device = filter->device;
  /* as in OIDN, a bad buffer is an error of the call's filter, so it goes
   * to the filter's device (and its callback), not to the global slot */
  if (!buffer) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "handle is null");
    return;
  }
  if (buffer->magic != LULL_MAGIC_BUFFER) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "invalid buffer handle");
    return;
  }
  if (buffer->device != device) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "the specified objects are bound to different devices");
    return;
  }
  size_t span = 0;
  if (!image_layout(device, format, width, height, &pixelByteStride, &rowByteStride, &span))
    return;
  if (byteOffset > buffer->size || span > buffer->size - byteOffset) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "buffer region is out of bounds");
    return;
  }
  if (buffer->storage == LULL_STORAGE_UNDEFINED) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "image data not accessible by the device, please use OIDNBuffer or device "
                   "allocator for storage");
    return;
  }
  const int index = image_index(filter, name);
  if (index < 0)
    return;
  lull_device_lock(device);
  oidnRetainBuffer(buffer);
  lull_filter_image* image = &filter->images[index];
  image_clear(image);
  image->set = 1;
  image->buffer = buffer;
  image->format = (lull_format)format;
  image->width = width;
  image->height = height;
  image->offset = byteOffset;
  image->pixel_stride = pixelByteStride;
  image->row_stride = rowByteStride;
  filter->committed = 0;
  lull_device_unlock(device);
}

OIDN_API void oidnSetSharedFilterImage(OIDNFilter filter, const char* name, void* devPtr,
                                       OIDNFormat format, size_t width, size_t height,
                                       size_t byteOffset, size_t pixelByteStride,
                                       size_t rowByteStride)
{
  if (!lull_check_filter(filter) || !lull_check_string(filter->device, name))
    return;
  OIDNDevice device = filter->device;
  if (!devPtr && (width == 0 || height == 0)) {
    oidnUnsetFilterImage(filter, name); /* as OIDN: a null, empty image unsets */
    return;
  }
  if (!devPtr) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "image data pointer is null");
    return;
  }
  size_t span = 0;
  if (!image_layout(device, format, width, height, &pixelByteStride, &rowByteStride, &span))
    return;
  if (byteOffset > UINTPTR_MAX - span || (uintptr_t)devPtr > UINTPTR_MAX - span - byteOffset) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT, "image region wraps around the address space");
    return;
  }
  /* no check of the device's state: a filter exists only on a committed
   * device, and OIDN takes shared images on a dirty one too */
  lull_device_lock(device);
  const int storage = device->backend->ops->classify(device->backend, devPtr);
  lull_device_unlock(device);
  if (storage == LULL_STORAGE_UNDEFINED) {
    lull_api_error(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "image data not accessible by the device, please use OIDNBuffer or device "
                   "allocator for storage");
    return;
  }
  const int index = image_index(filter, name);
  if (index < 0)
    return;
  lull_device_lock(device);
  lull_filter_image* image = &filter->images[index];
  image_clear(image);
  image->set = 1;
  image->ptr = devPtr;
  image->format = (lull_format)format;
  image->width = width;
  image->height = height;
  image->offset = byteOffset;
  image->pixel_stride = pixelByteStride;
  image->row_stride = rowByteStride;
  filter->committed = 0;
  lull_device_unlock(device);
}

OIDN_API void oidnUnsetFilterImage(OIDNFilter filter, const char* name)
{
  if (!lull_check_filter(filter) || !lull_check_string(filter->device, name))
    return;
  const int index = image_index(filter, name);
  if (index < 0)
    return;
  lull_device_lock(filter->device);
  image_clear(&filter->images[index]);
  lull_device_unlock(filter->device);
}

/* Data parameters.  OIDN's RT and RTLightmap take one, "weights": a
 * trained network that replaces the built-in one.  lull has no network,
 * so such weights cannot be honoured: setting them is accepted (as OIDN
 * accepts any bytes until it parses them) and the commit fails with
 * INVALID_OPERATION, as OIDN's does for weights it cannot read; unsetting
 * them (or setting an empty blob, NULL and 0 bytes) makes the filter
 * usable again.  Other names, and "weights" on lull's own filter types,
 * are unknown names, which only warn.  As OIDN's data setters do, every
 * call that gets past its argument checks uncommits the filter. */
static int is_weights(OIDNFilter filter, const char* name)
{
  return filter->type->takes_weights && strcmp(name, "weights") == 0;
}

/* The setters' common part: 1 when name is the filter's "weights". */
static int data_param(OIDNFilter filter, const char* name)
{
  uncommit(filter);
  if (is_weights(filter, name))
    return 1;
  lull_api_warning(filter->device, "unknown filter data parameter: '%s' (ignored)", name);
  return 0;
}

static void set_weights(OIDNFilter filter, int set)
{
  lull_device_lock(filter->device);
  filter->user_weights = set;
  filter->params_changed = 1;
  lull_device_unlock(filter->device);
}

OIDN_API void oidnSetSharedFilterData(OIDNFilter filter, const char* name, void* hostPtr,
                                      size_t byteSize)
{
  if (!lull_check_filter(filter) || !lull_check_string(filter->device, name))
    return;
  /* as OIDN's data view: bytes without a pointer are an error of the call
   * (the filter is left as it was); no pointer and no bytes is empty data */
  if (!hostPtr && byteSize > 0) {
    lull_api_error(filter->device, OIDN_ERROR_INVALID_ARGUMENT, "data pointer is null");
    return;
  }
  if (data_param(filter, name))
    set_weights(filter, hostPtr != NULL);
}

OIDN_API void oidnUpdateFilterData(OIDNFilter filter, const char* name)
{
  if (!lull_check_filter(filter) || !lull_check_string(filter->device, name))
    return;
  if (data_param(filter, name)) {
    lull_device_lock(filter->device);
    filter->params_changed = 1;
    lull_device_unlock(filter->device);
  }
}

OIDN_API void oidnUnsetFilterData(OIDNFilter filter, const char* name)
{
  if (!lull_check_filter(filter) || !lull_check_string(filter->device, name))
    return;
  if (data_param(filter, name))
    set_weights(filter, 0);
}

/* -- parameters -------------------------------------------------------------- */

/* OIDN 1.x parameter names that still work, with a warning. */
static const char* canonical_name(OIDNFilter filter, const char* name)
{
  static const char* const renamed[][2] = {
      {"hdrScale", "inputScale"}, {"alignment", "tileAlignment"}, {"overlap", "tileOverlap"}};
  for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; ++i)
    if (strcmp(name, renamed[i][0]) == 0) {
      lull_api_warning(filter->device, "filter parameter '%s' is deprecated, use '%s'", name,
                       renamed[i][1]);
      return renamed[i][1];
    }
  return name;
}

/* Index of a parameter of type `want` (bool and int are interchangeable,
 * as in OIDN), or -1. */
static int param_index(OIDNFilter filter, const char* name, lull_param_type want)
{
  const int index = lull_filter_type_param(filter->type, canonical_name(filter, name));
  if (index < 0)
    return -1;
  const lull_param_type type = filter->type->params[index].type;
  const int integral = type == LULL_PARAM_BOOL || type == LULL_PARAM_INT;
  const int want_integral = want == LULL_PARAM_BOOL || want == LULL_PARAM_INT;
  return integral == want_integral ? index : -1;
}

/* Whether v is a valid value of the parameter.  Float limits are compared
 * as the floats oidnSetFilterFloat can pass: the limit 1e-6 itself (as a
 * float 9.99999997e-07) was refused. */
static int param_in_range(const lull_param_def* def, double v)
{
  if (isnan(v) && isnan(def->default_value))
    return 1; /* "automatic" */
  const int as_float = def->type == LULL_PARAM_FLOAT;
  const double lo = as_float ? (double)(float)def->min : def->min;
  const double hi = as_float ? (double)(float)def->max : def->max;
  return v >= lo && v <= hi;
}

static void set_param(OIDNFilter filter, const char* name, lull_param_type type, double value)
{
  if (!lull_check_filter(filter) || !lull_check_string(filter->device, name))
    return;
  const int index = param_index(filter, name, type);
  if (index < 0) {
    uncommit(filter);
    lull_api_warning(filter->device, "unknown filter parameter or type mismatch: '%s'", name);
    return;
  }
  const lull_param_def* def = &filter->type->params[index];
  if (def->read_only) {
    uncommit(filter);
    lull_api_warning(filter->device, "filter parameter '%s' is read-only", name);
    return;
  }
  if (def->type == LULL_PARAM_BOOL)
    value = value != 0.0; /* oidnSetFilterInt(f, "hdr", 5) is true, as in OIDN */
  /* a refused value is an error before the setter changes anything, as
   * OIDN's quality setter throws before it marks the filter */
  const char* refused = def->accept ? def->accept(&value) : NULL;
  if (refused) {
    lull_api_error(filter->device, OIDN_ERROR_INVALID_ARGUMENT, refused);
    return;
  }
  lull_device_lock(filter->device);
  filter->committed = 0;
  if (filter->values[index] != value || isnan(filter->values[index]) != isnan(value)) {
    filter->values[index] = value;
    if (def->reconfigures)
      filter->params_changed = 1;
  }
  lull_device_unlock(filter->device);
}

static double get_param(OIDNFilter filter, const char* name, lull_param_type type)
{
  if (!lull_check_filter(filter) || !lull_check_string(filter->device, name))
    return 0;
  const int index = param_index(filter, name, type);
  if (index < 0) {
    char message[160];
    snprintf(message, sizeof message, "unknown filter parameter or type mismatch: '%.100s'", name);
    lull_api_error(filter->device, OIDN_ERROR_INVALID_ARGUMENT, message);
    return 0;
  }
  lull_device_lock(filter->device);
  const double value = filter->values[index];
  lull_device_unlock(filter->device);
  return value;
}

OIDN_API void oidnSetFilterBool(OIDNFilter filter, const char* name, bool value)
{
  set_param(filter, name, LULL_PARAM_BOOL, value ? 1.0 : 0.0);
}

OIDN_API bool oidnGetFilterBool(OIDNFilter filter, const char* name)
{
  return get_param(filter, name, LULL_PARAM_BOOL) != 0.0;
}

OIDN_API void oidnSetFilterInt(OIDNFilter filter, const char* name, int value)
{
  set_param(filter, name, LULL_PARAM_INT, (double)value);
}

OIDN_API int oidnGetFilterInt(OIDNFilter filter, const char* name)
{
  return (int)get_param(filter, name, LULL_PARAM_INT);
}

OIDN_API void oidnSetFilterFloat(OIDNFilter filter, const char* name, float value)
{
  set_param(filter, name, LULL_PARAM_FLOAT, (double)value);
}

OIDN_API float oidnGetFilterFloat(OIDNFilter filter, const char* name)
{
  return (float)get_param(filter, name, LULL_PARAM_FLOAT);
}

OIDN_API void oidnSetFilterProgressMonitorFunction(OIDNFilter filter,
                                                   OIDNProgressMonitorFunction func,
                                                   void* userPtr)
{
  if (!lull_check_filter(filter))
    return;
  lull_device_lock(filter->device);
  filter->progress_func = func;
  filter->progress_user = userPtr;
  lull_device_unlock(filter->device);
}

/* -- commit and execute -------------------------------------------------------- */

/* 1 when a set image has no pixels: OIDN accepts empty images, and
 * executing a filter with empty images does nothing. */
static int filter_empty(OIDNFilter filter)
{
  for (int i = 0; i < LULL_MAX_FILTER_IMAGES; ++i) {
    const lull_filter_image* image = &filter->images[i];
    if (image->set && (image->width == 0 || image->height == 0))
      return 1;
  }
  return 0;
}

/* Resolves images to views and points config at the values.  An empty
 * image still counts as given (a non-NULL view of size 0), so the commit
 * checks see it; its data is never read. */
static void filter_config(OIDNFilter filter, lull_filter_config* config)
{
  memset(config, 0, sizeof *config);
  config->values = filter->values;
  config->state = &filter->state;
  for (int i = 0; i < LULL_MAX_FILTER_IMAGES; ++i) {
    const lull_filter_image* image = &filter->images[i];
    if (!image->set)
      continue;
    unsigned char* base = image->buffer ? (unsigned char*)image->buffer->data
                                        : (unsigned char*)image->ptr;
    lull_image* view = &config->images[i];
    view->data = base ? base + image->offset : (unsigned char*)&filter->images[i];
    view->format = image->format;
    view->width = (int)image->width;
    view->height = (int)image->height;
    view->pixel_stride = image->pixel_stride;
    view->row_stride = image->row_stride;
  }
}

/* Parameter ranges, then the type's own checks. */
static lull_status check_config(OIDNFilter filter, const lull_filter_config* config,
                                lull_error* err)
{
  const lull_filter_type* type = filter->type;
  for (int i = 0; i < type->num_params; ++i) {
    const lull_param_def* def = &type->params[i];
    const double v = config->values[i];
    if (def->read_only)
      continue;
    if (!param_in_range(def, v))
      return lull_fail(err, LULL_ERROR_INVALID_ARGUMENT,
                       "invalid value %.9g for filter parameter '%s' (valid: %.9g to %.9g)", v,
                       def->name, def->min, def->max);
  }
  return type->check(config, err);
}

static void set_tile_params(OIDNFilter filter, const lull_filter_config* config)
{
  const int alignment = lull_filter_type_param(filter->type, "tileAlignment");
  const int overlap = lull_filter_type_param(filter->type, "tileOverlap");
  if (alignment >= 0)
    filter->values[alignment] = 16;
  if (overlap >= 0 && filter->type->tile_overlap)
    filter->values[overlap] = filter->type->tile_overlap(config);
}

OIDN_API void oidnCommitFilter(OIDNFilter filter)
{
  if (!lull_check_filter(filter))
    return;
  OIDNDevice device = filter->device;
  /* a filter's device was committed when it made the filter; a device
   * left dirty since (a parameter set after its commit) refuses new
   * buffers, filters and syncs, but OIDN still commits and runs the
   * filters it has, and so does lull */
  lull_device_lock(device);
  /* it waits for the device's queued work; as OIDN's commit, one that
   * follows a parameter change raises what asynchronous work parked (a
   * cancelled or failed oidnExecuteFilterAsync), without committing then.
   * New image pointers alone commit, and the parked error waits for the
   * next sync: an interactive application that cancelled a frame and
   * moved on to the next buffers had lost that frame too (a review
   * helper's finding) */
  lull_device_wait(device);
  lull_error err = {LULL_OK, ""};
  lull_status status = filter->params_changed ? lull_device_take_parked(device, &err) : LULL_OK;
  if (status != LULL_OK) {
    lull_device_unlock(device);
    lull_api_error_status(device, &err);
    return;
  }
  lull_filter_config config;
  filter_config(filter, &config);
  status = check_config(filter, &config, &err);
  if (status == LULL_OK && filter->user_weights)
    status = lull_fail(&err, LULL_ERROR_INVALID_OPERATION,
                       "user weights are not supported: lull's %s filter has no trained network "
                       "(unset the data parameter 'weights')",
                       filter->type->name);
  if (status == LULL_OK) {
    set_tile_params(filter, &config);
    filter->committed = 1;
    filter->params_changed = 0;
  } else {
    filter->committed = 0;
  }
  lull_device_unlock(device);
  if (status != LULL_OK)
    lull_api_error_status(device, &err);
}

/* The monitor of one run, as it was when the run began: the callback may
 * set another monitor, or none, for later runs. */
typedef struct progress_state
{
  OIDNProgressMonitorFunction func;
  void* user;
  int cancelled; /* once cancelled, the callback is not called again */
  double last;   /* the last value reported */
} progress_state;

static int progress_report(void* user, double done)
{
  progress_state* state = user;
  if (state->cancelled)
    return 0;
  state->last = done;
  if (!state->func(state->user, done))
    state->cancelled = 1;
  return !state->cancelled;
}

/* What a run reads is its own until it ends: the progress monitor may
 * call the API (a blocking run's with the device's lock held, it is
 * recursive; a queued run's from the worker), so it could release the
 * filter, replace or unset its images (dropping their buffers) or change
 * its parameters.  A run holds a reference to the filter (and so to the
 * device) and to each image's buffer, and reads a copy of the parameters
 * and of the monitor. */
typedef struct filter_run
{
  lull_job job; /* a queued run (the device's worker thread) */
  OIDNFilter filter;
  OIDNBuffer held[LULL_MAX_FILTER_IMAGES];
  int num_held;
  double values[LULL_MAX_FILTER_PARAMS];
  lull_filter_config config;
  progress_state state;
  lull_progress progress;
} filter_run;

/* Takes the references and copies; with the device locked. */
static void run_begin(filter_run* run, OIDNFilter filter)
{
  run->filter = filter;
  atomic_fetch_add(&filter->refs, 1);
  run->num_held = 0;
  for (int i = 0; i < LULL_MAX_FILTER_IMAGES; ++i)
    if (filter->images[i].set && filter->images[i].buffer) {
      run->held[run->num_held] = filter->images[i].buffer;
      atomic_fetch_add(&run->held[run->num_held++]->refs, 1);
    }
  memcpy(run->values, filter->values, sizeof run->values);
  filter_config(filter, &run->config);
  run->config.values = run->values;
  run->state = (progress_state){filter->progress_func, filter->progress_user, 0, 0.0};
  run->progress = (lull_progress){NULL, &run->state};
  if (run->state.func)
    run->progress.report = progress_report;
}

/* Runs the filter; a finished blocking or queued run always ends its
 * report at 1, whatever the filter type reported last (the output is
 * complete: the answer does not matter).  (A backend's asynchronous run
 * has only been launched when the call returns.) */
static lull_status run_filter(filter_run* run, int async, lull_error* err)
{
  OIDNFilter filter = run->filter;
  const lull_status status =
      filter->type->execute(filter->device->backend, &run->config, &run->progress, async, err);
  if (status == LULL_OK && !async && run->progress.report && !run->state.cancelled &&
      run->state.last < 1.0)
    (void)progress_report(&run->state, 1.0);
  return status;
}

/* Drops the references (without the device's lock). */
static void run_end(filter_run* run)
{
  for (int i = 0; i < run->num_held; ++i)
    lull_buffer_release(run->held[i]);
  oidnReleaseFilter(run->filter); /* the last reference when the monitor released it */
}

static lull_status queued_run(lull_job* job, lull_error* err)
{
  return run_filter((filter_run*)job, 0, err);
}

static void queued_finish(lull_job* job)
{
  run_end((filter_run*)job);
  free(job);
}

static void execute(OIDNFilter filter, int async)
{
  if (!lull_check_filter(filter))
    return;
  OIDNDevice device = filter->device;
  lull_device_lock(device); /* a dirty device runs its filters: oidnCommitFilter */
  /* a blocking run follows the work queued on the device's worker before
   * it (and may let the lock go while it waits: the checks come after);
   * a backend's own queue (a CUDA stream) orders it by itself */
  if (!async && device->queue)
    lull_device_wait(device);
  if (!filter->committed) {
    lull_device_unlock(device);
    lull_api_error(device, OIDN_ERROR_INVALID_OPERATION, "changes to the filter are not committed");
    return;
  }
  if (filter_empty(filter)) {
    lull_device_unlock(device);
    return; /* nothing to do */
  }
  lull_error err = {LULL_OK, ""};
  lull_status status = LULL_OK;
  if (async && device->queue) {
    /* the device's worker runs it; its errors, cancellation included, wait
     * for the next synchronising call */
    filter_run* run = calloc(1, sizeof *run);
    if (!run) {
      status = lull_fail(&err, LULL_ERROR_OUT_OF_MEMORY, "out of memory");
    } else {
      run_begin(run, filter);
      run->job.run = queued_run;
      run->job.finish = queued_finish;
      lull_work_queue_push(device->queue, &run->job);
    }
    lull_device_unlock(device);
    if (status != LULL_OK)
      lull_api_error_status(device, &err);
    return;
  }
  filter_run run;
  run_begin(&run, filter);
  status = run_filter(&run, async, &err);
  if (async && status == LULL_ERROR_CANCELLED) {
    /* a cancelled asynchronous run is an error of asynchronous work, for
     * the next synchronising call; errors of enqueuing (invalid images,
     * memory, launches) are raised at once, as OIDN does */
    lull_device_park(device, &err);
    status = LULL_OK;
  } else if (status == LULL_OK && !async) {
    /* a blocking execution synchronises: it raises what asynchronous work
     * parked before it */
    status = lull_device_take_parked(device, &err);
  }
  lull_device_unlock(device);
  if (status != LULL_OK)
    lull_api_error_status(device, &err);
  run_end(&run);
}

OIDN_API void oidnExecuteFilter(OIDNFilter filter)
{
  execute(filter, 0);
}

OIDN_API void oidnExecuteFilterAsync(OIDNFilter filter)
{
  execute(filter, 1);
}
