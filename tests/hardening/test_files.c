/* lull_io on EXR files the fuzzer taught us about (tests/fuzz/corpus_io):
 *
 *   - a tiled EXR reads (the tool died with SIGFPE on every tiled file) and
 *     gives the same values as the same image stored in scanlines, the
 *     values make_corpus.py wrote (0.1 x + 0.05 y + 0.3 k, as halves);
 *   - the header check (exr_check.c) accepts that file and refuses each of
 *     its corruptions with the reason: an unknown pixel type (OpenImageIO
 *     aborts on it), subsampling, deep data, an oversized data window, an
 *     unknown compression, a channel list shorter than its attribute
 *     (OpenEXR then allocated gigabytes), a truncated header. */
#if !defined(_GNU_SOURCE)
  #define _GNU_SOURCE
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"
#include "lull_io.h"
#include "test_util.h"

#define CORPUS LULL_TEST_DATA_DIR "/../fuzz/corpus_io/"

/* A corpus file without fuzz_io's selector byte, written to a temp file. */
static unsigned char* corpus_bytes(const char* name, size_t* size)
{
  char path[512];
  snprintf(path, sizeof path, "%s%s", CORPUS, name);
  FILE* f = fopen(path, "rb");
  if (!f)
    return NULL;
  unsigned char* data = malloc(1 << 16);
  const size_t n = fread(data, 1, 1 << 16, f);
  fclose(f);
  *size = n - 1;
  memmove(data, data + 1, n - 1);
  return data;
}

static int write_temp(const char* path, const unsigned char* data, size_t size)
{
  FILE* f = fopen(path, "wb");
  if (!f)
    return 0;
  const int ok = fwrite(data, 1, size, f) == size;
  return (fclose(f) == 0) && ok;
}

static void check_ramp(const char* name)
{
  size_t size = 0;
  unsigned char* data = corpus_bytes(name, &size);
  CHECK(data != NULL);
  if (!data)
    return;
  char path[256], err[512];
  snprintf(path, sizeof path, "%s/hardening_%s", LULL_TEST_BINARY_DIR, name);
  CHECK(write_temp(path, data, size));
  lull_io_image image;
  if (lull_io_read(path, &image, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    ++lull_test_failures;
    free(data);
    return;
  }
  CHECK_EQ_INT(image.num_passes, 1);
  const lull_io_pass* pass = &image.passes[0];
  CHECK_EQ_INT(pass->channels, 3);
  double worst = 0.0;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      for (int c = 0; c < 3; ++c) {
        /* channels are stored sorted (B, G, R): k = 2 - c for R, G, B */
        const double want = 0.1 * x + 0.05 * y + 0.3 * (2 - c);
        const double got = pass->data[((size_t)y * (size_t)image.width + (size_t)x) * 3 + (size_t)c];
        worst = fmax(worst, fabs(got - want));
      }
  printf("  %s: %dx%d, largest difference from the ramp %.2g\n", name, image.width,
         image.height, worst);
  CHECK(worst <= 2e-3); /* half precision at values up to 1.3 */
  lull_io_free(&image);
  remove(path);
  free(data);
}

/* The value bytes of the attribute `name` of type `type` (after its size). */
static unsigned char* attribute(unsigned char* data, size_t size, const char* name,
                                const char* type)
{
  char key[96];
  const size_t n = (size_t)snprintf(key, sizeof key, "%s%c%s", name, 0, type) + 1;
  unsigned char* at = memmem(data, size, key, n);
  return at ? at + n + 4 : NULL;
}

static void expect_refused(const unsigned char* data, size_t size, const char* fragment)
{
  const char* why = "";
  const int refused = lull_io_exr_check_bytes(data, size, size, &why) != 0;
  if (!refused || !strstr(why, fragment)) {
    fprintf(stderr, "expected '%s', got %s '%s'\n", fragment, refused ? "refused:" : "accepted",
            why);
    ++lull_test_failures;
  }
}

static void test_header_check(void)
{
  size_t size = 0;
  unsigned char* good = corpus_bytes("rgb_half_none.exr", &size);
  CHECK(good != NULL);
  if (!good)
    return;
  const char* why = NULL;
  CHECK_EQ_INT(lull_io_exr_check_bytes(good, size, size, &why), 0);
  unsigned char* copy = malloc(size);

  memcpy(copy, good, size);
  unsigned char* chlist = attribute(copy, size, "channels", "chlist");
  CHECK(chlist != NULL);
  chlist[2] = 3; /* the first channel ("B") gets pixel type 3 */
  expect_refused(copy, size, "unknown channel pixel type");

  memcpy(copy, good, size);
  chlist = attribute(copy, size, "channels", "chlist");
  chlist[10] = 2; /* xSampling of "B" */
  expect_refused(copy, size, "subsampled");

  memcpy(copy, good, size);
  chlist = attribute(copy, size, "channels", "chlist");
  chlist[-4] += 1; /* the attribute one byte longer than the list */
  expect_refused(copy, size, "shorter than its attribute");

  memcpy(copy, good, size);
  copy[5] |= 0x08; /* the deep-data flag (0x800) */
  expect_refused(copy, size, "deep");

  memcpy(copy, good, size);
  unsigned char* window = attribute(copy, size, "dataWindow", "box2i");
  CHECK(window != NULL);
  window[8] = 0x70; /* xMax = 70000 */
  window[9] = 0x11;
  window[10] = 0x01;
  expect_refused(copy, size, "data window");

  memcpy(copy, good, size);
  unsigned char* compression = attribute(copy, size, "compression", "compression");
  CHECK(compression != NULL);
  compression[0] = 10;
  expect_refused(copy, size, "compression");

  expect_refused(good, 40, "truncated");
  /* headers complete, offset tables cut off */
  const char* tables = "";
  CHECK(lull_io_exr_check_bytes(good, size, 300, &tables) != 0);
  free(copy);
  free(good);
}

int main(void)
{
  if (!lull_io_has_oiio()) {
    printf("hardening_files: this build cannot read EXR (no OpenImageIO); skipped\n");
    return 77;
  }
  check_ramp("rgb_half_none.exr");
  check_ramp("tiled.exr");
  test_header_check();
  return lull_test_result("hardening_files");
}
