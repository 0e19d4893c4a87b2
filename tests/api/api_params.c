/* Filter creation and parameters: known and unknown names, bool/int shared
 * storage, type mismatches, read-only tile parameters, the deprecated
 * names, data parameters, and the rule that a changed filter must be
 * committed again before it runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lull.h>

#include "api_util.h"

static void creation(OIDNDevice device)
{
  static const char* const oidn_types[] = {"RT", "RTLightmap"};
  for (size_t i = 0; i < 2; ++i) {
    OIDNFilter filter = oidnNewFilter(device, oidn_types[i]);
    CHECK(filter != NULL);
    oidnReleaseFilter(filter);
  }
  /* every type lull lists can be created */
  const int count = lullGetFilterTypeCount();
  CHECK(count >= 4);
  for (int i = 0; i < count; ++i) {
    OIDNFilter filter = oidnNewFilter(device, lullGetFilterTypeName(i));
    CHECK(filter != NULL);
    oidnReleaseFilter(filter);
  }
  EXPECT_OK(device);
  static const char* const unknown[] = {"rt", "Bogus", "", "RT "};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    CHECK(oidnNewFilter(device, unknown[i]) == NULL);
    EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "unknown filter type");
  }
  EXPECT_OK(NULL);
}

static void values(OIDNDevice device)
{
  OIDNFilter filter = oidnNewFilter(device, "RT");
  /* OIDN's defaults */
  CHECK(!oidnGetFilterBool(filter, "hdr"));
  CHECK(!oidnGetFilterBool(filter, "srgb"));
  CHECK(!oidnGetFilterBool(filter, "cleanAux"));
  CHECK(isnan(oidnGetFilterFloat(filter, "inputScale")));
  CHECK_EQ_INT(oidnGetFilterInt(filter, "maxMemoryMB"), -1);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "tileAlignment"), 1); /* before the first commit */
  CHECK_EQ_INT(oidnGetFilterInt(filter, "tileOverlap"), 0);
  EXPECT_OK(device);

  /* round trips; bool and int share storage */
  oidnSetFilterBool(filter, "hdr", true);
  CHECK(oidnGetFilterBool(filter, "hdr"));
  CHECK_EQ_INT(oidnGetFilterInt(filter, "hdr"), 1);
  oidnSetFilterInt(filter, "cleanAux", 1);
  CHECK(oidnGetFilterBool(filter, "cleanAux"));
  oidnSetFilterInt(filter, "quality", OIDN_QUALITY_FAST);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "quality"), OIDN_QUALITY_FAST);
  CHECK(oidnGetFilterBool(filter, "quality"));
  oidnSetFilterFloat(filter, "inputScale", 2.5f);
  CHECK(oidnGetFilterFloat(filter, "inputScale") == 2.5f);
  oidnSetFilterInt(filter, "maxMemoryMB", 512);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "maxMemoryMB"), 512);
  EXPECT_OK(device);
  /* as in OIDN: an int set on a bool is a bool; any negative maxMemoryMB
   * is no cap */
  oidnSetFilterInt(filter, "cleanAux", 5);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "cleanAux"), 1);
  oidnSetFilterInt(filter, "cleanAux", 0);
  {
    float pixels[4 * 4 * 3] = {0};
    OIDNFilter capped = oidnNewFilter(device, "RT");
    oidnSetSharedFilterImage(capped, "color", pixels, OIDN_FORMAT_FLOAT3, 4, 4, 0, 0, 0);
    oidnSetSharedFilterImage(capped, "output", pixels, OIDN_FORMAT_FLOAT3, 4, 4, 0, 0, 0);
    oidnSetFilterInt(capped, "maxMemoryMB", -5);
    oidnCommitFilter(capped);
    EXPECT_OK(device);
    oidnReleaseFilter(capped);
  }

  /* the deprecated name hdrScale is inputScale */
  oidnSetFilterFloat(filter, "hdrScale", 3.0f);
  CHECK(oidnGetFilterFloat(filter, "inputScale") == 3.0f);
  CHECK(oidnGetFilterFloat(filter, "hdrScale") == 3.0f);
  EXPECT_OK(device);

  /* type mismatches: a set is ignored with a warning, a get is an error */
  oidnSetFilterFloat(filter, "hdr", 0.0f);
  CHECK(oidnGetFilterBool(filter, "hdr"));
  oidnSetFilterInt(filter, "inputScale", 7);
  CHECK(oidnGetFilterFloat(filter, "inputScale") == 3.0f);
  EXPECT_OK(device);
  CHECK(oidnGetFilterFloat(filter, "hdr") == 0.0f);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT,
                   "unknown filter parameter or type mismatch");
  CHECK_EQ_INT(oidnGetFilterInt(filter, "inputScale"), 0);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(!oidnGetFilterBool(filter, "inputScale"));
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);

  /* unknown names */
  oidnSetFilterBool(filter, "noSuchParameter", true);
  oidnSetFilterInt(filter, "noSuchParameter", 1);
  oidnSetFilterFloat(filter, "noSuchParameter", 1.0f);
  EXPECT_OK(device);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "noSuchParameter"), 0);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "noSuchParameter");
  CHECK(oidnGetFilterFloat(filter, "noSuchParameter") == 0.0f);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(!oidnGetFilterBool(filter, "noSuchParameter"));
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  /* names are case-sensitive */
  (void)oidnGetFilterBool(filter, "HDR");
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);

  /* read-only parameters keep their value; the old names read them */
  oidnSetFilterInt(filter, "tileAlignment", 64);
  oidnSetFilterInt(filter, "tileOverlap", 64);
  oidnSetFilterInt(filter, "alignment", 64);
  oidnSetFilterInt(filter, "overlap", 64);
  EXPECT_OK(device);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "tileAlignment"), 1);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "alignment"), 1);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "tileOverlap"), 0);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "overlap"), 0);
  EXPECT_OK(device);

  /* data parameters: RT knows "weights" (user_weights below); other
   * names are unknown (warnings) */
  unsigned char blob[16] = {0};
  oidnSetSharedFilterData(filter, "weights", blob, sizeof blob);
  oidnUpdateFilterData(filter, "weights");
  oidnUnsetFilterData(filter, "weights");
  oidnUnsetFilterData(filter, "neverSet");
  oidnSetSharedFilterData(filter, "neverSet", blob, sizeof blob);
  oidnUpdateFilterData(filter, "neverSet");
  EXPECT_OK(device);
  oidnReleaseFilter(filter);
}

/* The data parameter "weights" (OIDN 2.5's oidnTest "user weights"): lull
 * has no network, so user weights are refused at the commit, as OIDN
 * refuses weights it cannot read; NULL with bytes is an error of the call;
 * unsetting them, or empty data, makes the filter usable again.  lull's
 * own filter types do not know the name. */
static void user_weights(OIDNDevice device)
{
  enum { W = 23, H = 9 };
  float* color = api_noisy_image(W, H, 3, 0.2f, 5);
  float* output = api_filled(W * H * 3, -7.0f);
  unsigned char blob[900];
  for (size_t i = 0; i < sizeof blob; ++i)
    blob[i] = (unsigned char)(i * 37u + 11u);
  static const char* const types[] = {"RT", "RTLightmap"};
  for (size_t t = 0; t < 2; ++t) {
    OIDNFilter filter = oidnNewFilter(device, types[t]);
    oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    EXPECT_OK(device);
    /* a NULL name is an error; the filter still commits */
    oidnSetSharedFilterData(filter, NULL, blob, sizeof blob);
    EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
    oidnCommitFilter(filter);
    EXPECT_OK(device);
    /* empty data is no weights; bytes without a pointer are an error */
    oidnSetSharedFilterData(filter, "weights", NULL, 0);
    EXPECT_OK(device);
    oidnSetSharedFilterData(filter, "weights", NULL, sizeof blob);
    EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "data pointer is null");
    oidnCommitFilter(filter);
    EXPECT_OK(device);
    /* user weights: accepted, refused by the commit, and the filter does
     * not run */
    oidnSetSharedFilterData(filter, "weights", blob, sizeof blob);
    EXPECT_OK(device);
    oidnCommitFilter(filter);
    EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "user weights are not supported");
    oidnExecuteFilter(filter);
    EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "not committed");
    CHECK(output[0] == -7.0f);
    oidnUpdateFilterData(filter, "weights");
    oidnCommitFilter(filter);
    EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
    /* unset: the built-in filter again */
    oidnUnsetFilterData(filter, "weights");
    oidnCommitFilter(filter);
    oidnExecuteFilter(filter);
    EXPECT_OK(device);
    CHECK(output[0] != -7.0f);
    /* and empty data replaces the weights */
    oidnSetSharedFilterData(filter, "weights", blob, sizeof blob);
    oidnSetSharedFilterData(filter, "weights", NULL, 0);
    oidnCommitFilter(filter);
    EXPECT_OK(device);
    oidnReleaseFilter(filter);
    output[0] = -7.0f;
  }
  /* lull's own filters: an unknown name, which only warns */
  OIDNFilter atrous = oidnNewFilter(device, "ATrous");
  oidnSetSharedFilterImage(atrous, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(atrous, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterData(atrous, "weights", blob, sizeof blob);
  oidnCommitFilter(atrous);
  oidnExecuteFilter(atrous);
  EXPECT_OK(device);
  oidnReleaseFilter(atrous);
  free(color);
  free(output);
}

/* Changes need a commit; the tile parameters are set by the commit. */
static void commit_rules(OIDNDevice device)
{
  enum { W = 12, H = 10 };
  float* color = api_noisy_image(W, H, 3, 0.3f, 11);
  float* output = api_filled(W * H * 3, 0.0f);
  OIDNFilter filter = oidnNewFilter(device, "RT");
  oidnExecuteFilter(filter); /* never committed */
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "changes to the filter are not committed");
  oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnCommitFilter(filter);
  EXPECT_OK(device);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "tileAlignment"), 16);
  const int overlap = oidnGetFilterInt(filter, "tileOverlap");
  CHECK(overlap > 0 && overlap % 16 == 0);
  CHECK_EQ_INT(oidnGetFilterInt(filter, "overlap"), overlap);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);

  /* a parameter change */
  oidnSetFilterBool(filter, "hdr", true);
  oidnExecuteFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "not committed");
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  /* an image change */
  oidnSetSharedFilterImage(filter, "albedo", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  oidnExecuteFilter(filter);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  /* unsetting an image */
  oidnUnsetFilterImage(filter, "albedo");
  oidnExecuteFilterAsync(filter);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  /* as in OIDN, every setter call needs a new commit, whatever its name
   * or value: unsetting what is not set, unknown names, the value a
   * parameter has, read-only parameters, data parameters, inputScale */
  static const char* const calls[] = {"unset albedo again", "unset unknown image",
                                      "set unknown image", "unknown int",
                                      "type mismatch", "same value", "read-only",
                                      "data", "update data", "unset data", "inputScale"};
  for (size_t k = 0; k < sizeof calls / sizeof calls[0]; ++k) {
    oidnCommitFilter(filter);
    oidnExecuteFilter(filter);
    EXPECT_OK(device);
    switch (k) {
      case 0: oidnUnsetFilterImage(filter, "albedo"); break;
      case 1: oidnUnsetFilterImage(filter, "noSuchImage"); break;
      case 2:
        oidnSetSharedFilterImage(filter, "noSuchImage", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
        break;
      case 3: oidnSetFilterInt(filter, "noSuchParameter", 3); break;
      case 4: oidnSetFilterInt(filter, "inputScale", 3); break;
      case 5: oidnSetFilterBool(filter, "hdr", true); break;
      case 6: oidnSetFilterInt(filter, "tileOverlap", 32); break;
      case 7: oidnSetSharedFilterData(filter, "weights", NULL, 0); break; /* empty */
      case 8: oidnUpdateFilterData(filter, "weights"); break;
      case 9: oidnUnsetFilterData(filter, "weights"); break;
      default: oidnSetFilterFloat(filter, "inputScale", 2.0f); break;
    }
    EXPECT_OK(device); /* warnings at most */
    for (int i = 0; i < W * H * 3; ++i)
      output[i] = -7.0f;
    oidnExecuteFilter(filter);
    if (oidnGetDeviceError(device, NULL) != OIDN_ERROR_INVALID_OPERATION) {
      fprintf(stderr, "%s: the filter ran without a new commit\n", calls[k]);
      CHECK(0);
    }
    CHECK(output[0] == -7.0f && output[W * H * 3 - 1] == -7.0f); /* untouched */
  }
  /* with the new inputScale committed */
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  CHECK(lull_test_all_finite(output, W * H * 3));
  /* an out-of-range inputScale: the commit says why */
  oidnSetFilterFloat(filter, "inputScale", 1e-40f);
  oidnCommitFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "inputScale");
  oidnExecuteFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "not committed");
  oidnSetFilterFloat(filter, "inputScale", NAN);
  oidnCommitFilter(filter);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  /* the progress monitor is no parameter: it needs no commit (as in OIDN) */
  oidnSetFilterProgressMonitorFunction(filter, NULL, NULL);
  oidnExecuteFilter(filter);
  EXPECT_OK(device);
  /* a failed commit leaves the filter uncommitted */
  oidnSetFilterBool(filter, "srgb", true); /* with hdr: invalid */
  oidnCommitFilter(filter);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  oidnExecuteFilter(filter);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_OPERATION, "not committed");
  oidnReleaseFilter(filter);
  free(color);
  free(output);
}

/* lull.h's listing agrees with what the filters do: every listed
 * parameter reads its listed default through the getter of its type, and
 * read-only ones cannot be set. */
static void introspection(OIDNDevice device)
{
  CHECK(strcmp(lullGetVersionString(), LULL_VERSION_STRING) == 0);
  const int count = lullGetFilterTypeCount();
  CHECK(lullGetFilterTypeName(-1) == NULL);
  CHECK(lullGetFilterTypeName(count) == NULL);
  CHECK_EQ_INT(lullGetFilterParamCount(NULL), -1);
  CHECK_EQ_INT(lullGetFilterParamCount("Bogus"), -1);
  CHECK_EQ_INT(lullGetFilterImageCount(NULL), -1);
  CHECK_EQ_INT(lullGetFilterImageCount("Bogus"), -1);
  LullParamInfo info;
  CHECK(!lullGetFilterParamInfo("RT", -1, &info));
  CHECK(!lullGetFilterParamInfo("RT", lullGetFilterParamCount("RT"), &info));
  CHECK(!lullGetFilterParamInfo("RT", 0, NULL));
  CHECK(!lullGetFilterParamInfo(NULL, 0, &info));
  CHECK(lullGetFilterImageName("RT", -1) == NULL);
  CHECK(lullGetFilterImageName("RT", lullGetFilterImageCount("RT")) == NULL);
  CHECK(lullGetFilterImageName("Bogus", 0) == NULL);

  for (int t = 0; t < count; ++t) {
    const char* type = lullGetFilterTypeName(t);
    OIDNFilter filter = oidnNewFilter(device, type);
    const int params = lullGetFilterParamCount(type);
    CHECK(params >= 0);
    for (int i = 0; i < params; ++i) {
      CHECK(lullGetFilterParamInfo(type, i, &info));
      CHECK(info.name && info.description && info.description[0]);
      double value = 0;
      if (info.type == LULL_PARAM_TYPE_FLOAT)
        value = oidnGetFilterFloat(filter, info.name);
      else if (info.type == LULL_PARAM_TYPE_INT)
        value = oidnGetFilterInt(filter, info.name);
      else
        value = oidnGetFilterBool(filter, info.name);
      EXPECT_OK(device);
      const int same = isnan(info.defaultValue) ? isnan(value) : value == (double)(float)info.defaultValue;
      if (!same)
        fprintf(stderr, "%s.%s: reads %g, listed default %g\n", type, info.name, value,
                info.defaultValue);
      CHECK(same);
      if (info.readOnly && info.type == LULL_PARAM_TYPE_INT) {
        oidnSetFilterInt(filter, info.name, 12345);
        CHECK(oidnGetFilterInt(filter, info.name) != 12345);
      }
      /* the listed limits of a float parameter, passed back as floats, are
       * valid (1e-6 became 9.99999997e-07 and was refused) */
      for (int end = 0; info.type == LULL_PARAM_TYPE_FLOAT && !info.readOnly && end < 2;
           ++end) {
        oidnSetFilterFloat(filter, info.name, (float)(end ? info.maxValue : info.minValue));
        oidnCommitFilter(filter); /* may fail for want of images, never for the value */
        const char* message = NULL;
        const OIDNError code = oidnGetDeviceError(device, &message);
        const int refused = code == OIDN_ERROR_INVALID_ARGUMENT && message &&
                            strstr(message, "invalid value") && strstr(message, info.name);
        if (refused)
          fprintf(stderr, "%s.%s: %s\n", type, info.name, message);
        CHECK(!refused);
        oidnSetFilterFloat(filter, info.name, (float)info.defaultValue);
      }
    }
    const int images = lullGetFilterImageCount(type);
    CHECK(images >= 2); /* at least an input and "output" */
    int has_output = 0;
    for (int i = 0; i < images; ++i)
      has_output |= strcmp(lullGetFilterImageName(type, i), "output") == 0;
    CHECK(has_output);
    EXPECT_OK(device);
    oidnReleaseFilter(filter);
  }
}

/* Every registered type (also those added later) on a small colour image:
 * the commit either succeeds and execution gives finite output, or fails
 * with INVALID_OPERATION / INVALID_ARGUMENT (images it needs are missing);
 * nothing else, and never a crash. */
static void every_type(OIDNDevice device)
{
  enum { W = 14, H = 11 };
  float* color = api_noisy_image(W, H, 3, 0.3f, 5);
  for (int t = 0; t < lullGetFilterTypeCount(); ++t) {
    const char* type = lullGetFilterTypeName(t);
    OIDNFilter filter = oidnNewFilter(device, type);
    float* output = api_filled(3 * W * H, NAN);
    oidnSetSharedFilterImage(filter, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnSetSharedFilterImage(filter, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnCommitFilter(filter);
    const OIDNError code = oidnGetDeviceError(device, NULL);
    CHECK(code == OIDN_ERROR_NONE || code == OIDN_ERROR_INVALID_OPERATION ||
          code == OIDN_ERROR_INVALID_ARGUMENT);
    if (code == OIDN_ERROR_NONE) {
      oidnExecuteFilter(filter);
      EXPECT_OK(device);
      if (!lull_test_all_finite(output, 3 * W * H))
        fprintf(stderr, "%s: non-finite output\n", type);
      CHECK(lull_test_all_finite(output, 3 * W * H));
    } else {
      oidnExecuteFilter(filter); /* not committed */
      EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
    }
    free(output);
    oidnReleaseFilter(filter);
  }
  free(color);
}

/* What a call prints to stderr, read back through a temporary file. */
typedef struct captured
{
  int saved_fd;
  FILE* file;
} captured;

static captured capture_begin(void)
{
  captured c = {-1, tmpfile()};
  fflush(stderr);
  if (c.file) {
    c.saved_fd = dup(fileno(stderr));
    dup2(fileno(c.file), fileno(stderr));
  }
  return c;
}

static void capture_end(captured* c, char* text, size_t size)
{
  text[0] = '\0';
  fflush(stderr);
  if (!c->file)
    return;
  dup2(c->saved_fd, fileno(stderr));
  close(c->saved_fd);
  rewind(c->file);
  const size_t n = fread(text, 1, size - 1, c->file);
  text[n] = '\0';
  fclose(c->file);
}

/* Unknown names and deprecated ones are warnings: printed by a verbose
 * device, silent otherwise; neither is an error. */
static void warnings(void)
{
  char text[2048];
  for (int verbose = 0; verbose < 2; ++verbose) {
    OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
    oidnSetDeviceInt(device, "verbose", verbose);
    oidnCommitDevice(device);
    OIDNFilter filter = oidnNewFilter(device, "RT");
    captured c = capture_begin();
    oidnSetFilterInt(filter, "noSuchParameter", 1);
    oidnSetFilterFloat(filter, "hdrScale", 2.0f);
    oidnSetFilterInt(filter, "tileOverlap", 3);
    capture_end(&c, text, sizeof text);
    EXPECT_OK(device);
    if (verbose) {
      CHECK(strstr(text, "noSuchParameter") != NULL);
      CHECK(strstr(text, "hdrScale") != NULL);
      CHECK(strstr(text, "tileOverlap") != NULL);
    } else {
      CHECK(text[0] == '\0');
    }
    oidnReleaseFilter(filter);
    oidnReleaseDevice(device);
  }
}

/* oidnExecuteSYCLFilterAsync exists for linking; lull has no SYCL device. */
OIDN_API void oidnExecuteSYCLFilterAsync(OIDNFilter filter, const void* depEvents,
                                         int numDepEvents, void* doneEvent);

static void sycl_execute(OIDNDevice device)
{
  OIDNFilter filter = oidnNewFilter(device, "RT");
  oidnExecuteSYCLFilterAsync(filter, NULL, 0, NULL);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_OPERATION);
  oidnExecuteSYCLFilterAsync(NULL, NULL, 0, NULL);
  EXPECT_ERROR_MSG(NULL, OIDN_ERROR_INVALID_ARGUMENT, "handle is null");
  oidnReleaseFilter(filter);
}

void api_test_params(void)
{
  OIDNDevice device = api_cpu_device();
  creation(device);
  values(device);
  commit_rules(device);
  user_weights(device);
  introspection(device);
  every_type(device);
  sycl_execute(device);
  warnings();
  oidnReleaseDevice(device);
  EXPECT_OK(NULL);
}
