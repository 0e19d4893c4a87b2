/* lull_io: PFM byte layout, EXR layouts as Blender and other tools write
 * them (multilayer, multi-part, multiview, odd names), non-destructive
 * rewrites, atomic writes, corrupt and truncated files. */
#define _XOPEN_SOURCE 700

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_test_util.h"
#include "atrous_math.h"
#include "half.h"
#include "test_util.h"
#if defined(LULL_IO_HAS_OIIO)
  #include "exr_fixtures.h"
#endif

static int write_bytes(const char* path, const void* data, size_t size)
{
  FILE* f = fopen(path, "wb");
  if (!f)
    return 1;
  const int ok = fwrite(data, 1, size, f) == size;
  return (fclose(f) != 0) || !ok;
}

#if defined(LULL_IO_HAS_OIIO)
/* A file's bytes (new memory, *size set), or NULL. */
static unsigned char* read_bytes(const char* path, long* size)
{
  FILE* f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  *size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* bytes = *size > 0 ? malloc((size_t)*size) : NULL;
  if (bytes && fread(bytes, 1, (size_t)*size, f) != (size_t)*size) {
    free(bytes);
    bytes = NULL;
  }
  fclose(f);
  return bytes;
}
#endif

/* -- PFM ------------------------------------------------------------------------ */

static void test_pfm_layout(const char* dir)
{
  char path[1200];
  cli_path(path, sizeof path, dir, "layout.pfm");
  lull_io_image image;
  memset(&image, 0, sizeof image);
  image.width = 5;
  image.height = 3;
  float data[5 * 3 * 3];
  for (int i = 0; i < 45; ++i)
    data[i] = (float)i * 0.25f - 3.0f;
  static const char* const rgb[] = {"R", "G", "B"};
  CHECK(lull_io_add_pass(&image, "", "", 3, rgb, data) != NULL);
  char err[512] = "";
  CHECK_EQ_INT(lull_io_write(path, &image, 0, err, sizeof err), 0);
  lull_io_free(&image);

  /* the bytes: header, then the bottom row first, little endian */
  FILE* f = fopen(path, "rb");
  CHECK(f != NULL);
  if (f) {
    char header[16] = "";
    CHECK(fread(header, 1, 12, f) == 12);
    CHECK(memcmp(header, "PF\n5 3\n-1.0\n", 12) == 0);
    unsigned char first[4];
    CHECK(fread(first, 1, 4, f) == 4);
    float value;
    const uint32_t bits = (uint32_t)first[0] | (uint32_t)first[1] << 8 |
                          (uint32_t)first[2] << 16 | (uint32_t)first[3] << 24;
    memcpy(&value, &bits, sizeof value);
    CHECK_EQ_INT(value == data[2 * 5 * 3], 1); /* pixel (0, 2) */
    fclose(f);
  }
  CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
  CHECK_EQ_INT(image.width, 5);
  CHECK_EQ_INT(image.height, 3);
  CHECK_EQ_INT(image.num_passes, 1);
  if (image.num_passes == 1) {
    CHECK_EQ_INT(image.passes[0].channels, 3);
    CHECK(memcmp(image.passes[0].data, data, sizeof data) == 0);
  }
  lull_io_file_info info;
  lull_io_get_file_info(&image, &info);
  CHECK(strcmp(info.format, "pfm") == 0);
  CHECK_EQ_INT(info.integer, 0);
  lull_io_free(&image);
}

static void test_pfm_big_endian_grey(const char* dir)
{
  /* "Pf", positive scale: big endian; rows bottom to top */
  char path[1200];
  cli_path(path, sizeof path, dir, "grey_be.pfm");
  const float values[4] = {1.5f, -2.0f, 0.125f, 1e6f}; /* file order: (0,1) (1,1) (0,0) (1,0) */
  unsigned char bytes[64];
  const char header[] = "Pf\n2 2\n1.0\n";
  size_t n = strlen(header);
  memcpy(bytes, header, n);
  for (int i = 0; i < 4; ++i) {
    uint32_t u;
    memcpy(&u, &values[i], sizeof u);
    for (int b = 3; b >= 0; --b)
      bytes[n++] = (unsigned char)(u >> (8 * b));
  }
  CHECK_EQ_INT(write_bytes(path, bytes, n), 0);
  lull_io_image image;
  char err[512];
  CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
  CHECK_EQ_INT(image.num_passes, 1);
  if (image.num_passes == 1) {
    CHECK_EQ_INT(image.passes[0].channels, 1);
    const float* d = image.passes[0].data; /* top row first in memory */
    CHECK(d[0] == 0.125f && d[1] == 1e6f && d[2] == 1.5f && d[3] == -2.0f);
  }
  lull_io_free(&image);
}

static void test_pfm_writes(const char* dir)
{
  char path[1200];
  cli_path(path, sizeof path, dir, "rgba.pfm");
  lull_io_image image;
  memset(&image, 0, sizeof image);
  image.width = 2;
  image.height = 1;
  const float rgba[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  static const char* const names[] = {"R", "G", "B", "A"};
  lull_io_add_pass(&image, "", "", 4, names, rgba);
  char err[512];
  CHECK_EQ_INT(lull_io_write(path, &image, 0, err, sizeof err), 0); /* alpha dropped */
  lull_io_image back;
  CHECK_EQ_INT(lull_io_read(path, &back, err, sizeof err), 0);
  if (back.num_passes == 1) {
    CHECK_EQ_INT(back.passes[0].channels, 3);
    CHECK(back.passes[0].data[3] == 5 && back.passes[0].data[5] == 7);
  }
  lull_io_free(&back);
  /* two passes, or two channels: no PFM can hold them */
  lull_io_add_pass(&image, "L", "P", 1, names, NULL);
  CHECK(lull_io_write(path, &image, 0, err, sizeof err) != 0);
  CHECK(strstr(err, path) != NULL);
  lull_io_free(&image);
  image.width = 2;
  image.height = 1;
  lull_io_add_pass(&image, "", "", 2, names, NULL);
  CHECK(lull_io_write(path, &image, 0, err, sizeof err) != 0);
  lull_io_free(&image);
  /* the failed writes left the first file */
  CHECK_EQ_INT(lull_io_read(path, &back, err, sizeof err), 0);
  CHECK_EQ_INT(back.width, 2);
  lull_io_free(&back);
  CHECK_EQ_INT(cli_temp_files(dir), 0);
}

static void test_pfm_corrupt(const char* dir)
{
  static const char* const cases[] = {
      "PF\n-3 2\n-1.0\n",          /* negative size */
      "PF\n3 x\n-1.0\n",           /* not a number */
      "PF\n70000 1\n-1.0\n",       /* over 65536 per side */
      "PF\n2 2\n0\n",              /* zero scale */
      "PF\n2 2\nnan\n",            /* NaN scale */
      "PF\n2 2\n-1.0\n\1\2\3",     /* truncated pixels */
      "PF\n65536 65536\n-1.0\n12", /* a huge header on a tiny file */
      "PF\n",                      /* no size */
      "PF\n99999999999999999999 1\n-1\n",
      "PF\n1 1 -1.00000000000000000000000000000000000000000000000000000000000000000000001\n",
  };
  char path[1200];
  cli_path(path, sizeof path, dir, "corrupt.pfm");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    CHECK_EQ_INT(write_bytes(path, cases[i], strlen(cases[i])), 0);
    lull_io_image image;
    char err[512] = "";
    const int status = lull_io_read(path, &image, err, sizeof err);
    CHECK(status != 0);
    CHECK(strstr(err, path) != NULL);
    CHECK_EQ_INT(image.num_passes, 0);
    CHECK(image.passes == NULL);
    if (status == 0)
      fprintf(stderr, "case %zu was read\n", i);
    lull_io_free(&image);
  }
}

static void test_misuse(const char* dir)
{
  lull_io_image image;
  char err[512];
  CHECK(lull_io_read(NULL, &image, err, sizeof err) != 0);
  CHECK(lull_io_read(dir, &image, err, sizeof err) != 0); /* a folder */
  CHECK(strstr(err, "not a regular file") != NULL);
  char missing[1200];
  cli_path(missing, sizeof missing, dir, "missing.exr");
  CHECK(lull_io_read(missing, &image, err, sizeof err) != 0);
  CHECK(strstr(err, "missing.exr") != NULL);
  CHECK(lull_io_read(missing, NULL, err, sizeof err) != 0);
  CHECK(lull_io_write(missing, NULL, 0, err, sizeof err) != 0);

  memset(&image, 0, sizeof image);
  static const char* const names[] = {"R", "G", "B", "A", "X"};
  CHECK(lull_io_add_pass(&image, "", "", 3, names, NULL) == NULL); /* no size */
  image.width = 4;
  image.height = 4;
  CHECK(lull_io_add_pass(&image, "", "", 5, names, NULL) == NULL);
  CHECK(lull_io_add_pass(&image, "", "", 0, names, NULL) == NULL);
  CHECK(lull_io_add_pass(&image, "L", "P", 3, names, NULL) != NULL);
  CHECK(lull_io_add_pass(&image, "L", "P", 3, names, NULL) == NULL); /* exists */
  CHECK(lull_io_add_pass_view(&image, "L", "P", "left", 3, names, NULL) != NULL);
  /* names taken from a pass of the same image survive the array growing */
  for (int i = 0; i < 20; ++i) {
    char name[16];
    snprintf(name, sizeof name, "P%d", i);
    lull_io_pass* added = lull_io_add_pass(&image, image.passes[0].layer, name, 1, names, NULL);
    CHECK(added != NULL && strcmp(added->layer, "L") == 0);
  }
  CHECK(lull_io_find_pass(&image, NULL, "P") == &image.passes[0]);
  CHECK(lull_io_find_pass_view(&image, "L", "P", "left") == &image.passes[1]);
  CHECK(lull_io_find_pass(&image, "Other", "P") == NULL);
  CHECK(lull_io_find_pass(&image, NULL, NULL) == NULL);
  char full[64];
  CHECK_EQ_INT(lull_io_channel_full_name(&image.passes[1], 2, full, sizeof full), 0);
  CHECK(strcmp(full, "L.P.left.B") == 0);
  CHECK(lull_io_channel_full_name(&image.passes[1], 2, full, 5) != 0);
  lull_io_free(&image);
  lull_io_free(&image); /* freeing twice is harmless */
  lull_io_free(NULL);
}

/* -- EXR (OpenImageIO) -------------------------------------------------------------- */
#if defined(LULL_IO_HAS_OIIO)

static float half_round(float v)
{
  return lull_half_to_float(lull_float_to_half(v));
}

static void test_blender_multilayer(const char* dir)
{
  cli_scene scene;
  CHECK_EQ_INT(cli_scene_make(&scene, 40, 30, 7, 0.5f), 0);
  char path[1200], out[1200];
  cli_path(path, sizeof path, dir, "blender.exr");
  cli_path(out, sizeof out, dir, "blender_rewritten.exr");
  static const char* const layers[] = {"ViewLayer", "Second Layer"};
  CHECK_EQ_INT(cli_scene_write_blender(&scene, path, layers, 2, 1), 0);

  lull_io_image image;
  char err[512];
  CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
  CHECK_EQ_INT(image.num_passes, 14); /* 7 passes in each layer */
  const lull_io_pass* combined = lull_io_find_pass(&image, "ViewLayer", "Combined");
  const lull_io_pass* normal = lull_io_find_pass(&image, "Second Layer", "Denoising Normal");
  const lull_io_pass* noisy = lull_io_find_pass(&image, "ViewLayer", "Noisy Image");
  CHECK(combined && normal && noisy);
  if (combined && normal && noisy) {
    CHECK_EQ_INT(combined->channels, 4);
    CHECK(strcmp(combined->channel_names[3], "A") == 0);
    CHECK_EQ_INT(combined->half, 1);
    CHECK_EQ_INT(normal->half, 0);
    CHECK(strcmp(normal->channel_names[0], "X") == 0 && strcmp(normal->channel_names[2], "Z") == 0);
    CHECK(combined->data[4 * 5 + 1] == half_round(scene.clean[3 * 5 + 1]));
    CHECK(combined->data[4 * 17 + 3] == half_round(scene.alpha[17]));
    CHECK(noisy->data[3 * 9 + 2] == half_round(scene.noisy[3 * 9 + 2]));
    CHECK(normal->data[3 * 20] == scene.normal[3 * 20] * 1.1f); /* float: exact */
  }

  /* add a pass, rewrite: every original channel bit-identical, same types,
   * same attributes */
  static const char* const rgb[] = {"R", "G", "B"};
  lull_io_pass* added = lull_io_add_pass(&image, "ViewLayer", "Denoised", 3, rgb, scene.clean);
  CHECK(added != NULL);
  if (added)
    added->half = 1;
  CHECK_EQ_INT(lull_io_write(out, &image, 0, err, sizeof err), 0);
  lull_io_image back;
  CHECK_EQ_INT(lull_io_read(out, &back, err, sizeof err), 0);
  CHECK_EQ_INT(back.num_passes, image.num_passes);
  lull_io_image original;
  CHECK_EQ_INT(lull_io_read(path, &original, err, sizeof err), 0);
  const size_t pixels = (size_t)image.width * (size_t)image.height;
  for (int i = 0; i < original.num_passes; ++i) {
    const lull_io_pass* a = &original.passes[i];
    const lull_io_pass* b = lull_io_find_pass_view(&back, a->layer, a->name, a->view);
    CHECK(b != NULL);
    if (!b)
      continue;
    CHECK_EQ_INT(b->channels, a->channels);
    CHECK_EQ_INT(b->half, a->half);
    CHECK(memcmp(a->data, b->data, pixels * (size_t)a->channels * sizeof(float)) == 0);
    for (int c = 0; c < a->channels; ++c) {
      char name[400];
      lull_io_channel_full_name(a, c, name, sizeof name);
      CHECK_EQ_INT(fixture_channel_type(out, name), fixture_channel_type(path, name));
    }
  }
  CHECK_EQ_INT(fixture_channel_type(out, "ViewLayer.Denoised.G"), 'h');
  char value[128];
  CHECK_EQ_INT(fixture_attribute(out, "Note", value, sizeof value), 0);
  CHECK(strcmp(value, "lull test fixture") == 0);
  CHECK_EQ_INT(fixture_attribute(out, "cycles.ViewLayer.samples", value, sizeof value), 0);
  CHECK(strcmp(value, "4") == 0);
  CHECK_EQ_INT(fixture_attribute(out, "BlenderMultiChannel", value, sizeof value), 0);
  lull_io_file_info info;
  lull_io_get_file_info(&original, &info);
  CHECK(strcmp(info.format, "openexr") == 0);
  CHECK(info.attributes >= 3);
  lull_io_free(&original);
  lull_io_free(&back);
  lull_io_free(&image);
  cli_scene_free(&scene);
}

static void test_multipart(const char* dir)
{
  enum { W = 8, H = 6, N = W * H };
  float planes[6][N];
  for (int c = 0; c < 6; ++c)
    for (int i = 0; i < N; ++i)
      planes[c][i] = (float)(c * 100 + i) * 0.5f;
  const fixture_channel channels[] = {
      {"R", 1, 0, planes[0]}, {"G", 1, 0, planes[1]}, {"B", 1, 0, planes[2]},
      {"Z", 0, 1, planes[3]}, {"Foo.X", 0, 2, planes[4]}, {"Foo.Y", 0, 2, planes[5]}};
  static const char* const parts[] = {"ViewLayer.Combined", "ViewLayer.Depth", "extra"};
  char path[1200], out[1200];
  cli_path(path, sizeof path, dir, "multipart.exr");
  cli_path(out, sizeof out, dir, "multipart_rewritten.exr");
  CHECK_EQ_INT(fixture_write_exr(path, W, H, channels, 6, parts, 3, NULL, NULL), 0);

  lull_io_image image;
  char err[512];
  CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
  lull_io_file_info info;
  lull_io_get_file_info(&image, &info);
  CHECK_EQ_INT(info.parts, 3);
  const lull_io_pass* combined = lull_io_find_pass(&image, "ViewLayer", "Combined");
  const lull_io_pass* depth = lull_io_find_pass(&image, "ViewLayer", "Depth");
  const lull_io_pass* foo = lull_io_find_pass(&image, "", "Foo");
  CHECK(combined && depth && foo);
  if (combined && depth && foo) {
    CHECK_EQ_INT(combined->channels, 3);
    CHECK(combined->data[3 * 7 + 2] == planes[2][7]);
    CHECK(depth->data[11] == planes[3][11]);
    CHECK_EQ_INT(foo->channels, 2);
  }
  static const char* const rgb[] = {"R", "G", "B"};
  CHECK(lull_io_add_pass(&image, "ViewLayer", "Denoised", 3, rgb, NULL) != NULL);
  CHECK_EQ_INT(lull_io_write(out, &image, 0, err, sizeof err), 0);
  /* each channel stays in its part under its name; the new pass gets a part */
  CHECK_EQ_INT(fixture_part_count(out), 4);
  CHECK_EQ_INT(fixture_channel_type(out, "R"), 'h');
  CHECK_EQ_INT(fixture_channel_type(out, "Z"), 'f');
  CHECK_EQ_INT(fixture_channel_type(out, "Foo.Y"), 'f');
  lull_io_image back;
  CHECK_EQ_INT(lull_io_read(out, &back, err, sizeof err), 0);
  const lull_io_pass* depth2 = lull_io_find_pass(&back, "ViewLayer", "Depth");
  CHECK(depth2 && memcmp(depth2->data, planes[3], sizeof planes[3]) == 0);
  CHECK(lull_io_find_pass(&back, "ViewLayer", "Denoised") != NULL);
  lull_io_free(&back);
  lull_io_free(&image);
}

static void test_multiview_and_odd_names(const char* dir)
{
  enum { W = 4, H = 4, N = W * H };
  float planes[12][N];
  for (int c = 0; c < 12; ++c)
    for (int i = 0; i < N; ++i)
      planes[c][i] = (float)(c + 1) + 0.01f * (float)i;
  const fixture_channel channels[] = {
      {"ViewLayer.Combined.left.R", 1, 0, planes[0]},
      {"ViewLayer.Combined.left.G", 1, 0, planes[1]},
      {"ViewLayer.Combined.left.B", 1, 0, planes[2]},
      {"ViewLayer.Combined.right.R", 1, 0, planes[3]},
      {"ViewLayer.Combined.right.G", 1, 0, planes[4]},
      {"ViewLayer.Combined.right.B", 1, 0, planes[5]},
      {"a..b", 0, 0, planes[6]},                /* an empty component */
      {"L.Five.R", 0, 0, planes[7]},            /* a pass of five channels */
      {"L.Five.G", 0, 0, planes[8]},
      {"L.Five.B", 0, 0, planes[9]},
      {"L.Five.A", 0, 0, planes[10]},
      {"L.Five.W", 0, 0, planes[11]},
  };
  static const char* const views[] = {"left", "right", NULL};
  static const char* const part[] = {"rgba"};
  char path[1200], out[1200];
  cli_path(path, sizeof path, dir, "multiview.exr");
  cli_path(out, sizeof out, dir, "multiview_rewritten.exr");
  CHECK_EQ_INT(fixture_write_exr(path, W, H, channels, 12, part, 1, NULL, views), 0);
  lull_io_image image;
  char err[512];
  CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
  const lull_io_pass* left = lull_io_find_pass_view(&image, "ViewLayer", "Combined", "left");
  const lull_io_pass* right = lull_io_find_pass_view(&image, "ViewLayer", "Combined", "right");
  CHECK(left && right && left != right);
  if (left && right) {
    CHECK(left->data[3 * 5] == half_round(planes[0][5]));
    CHECK(right->data[3 * 5 + 1] == half_round(planes[4][5]));
  }
  CHECK(lull_io_find_pass(&image, NULL, "a..b") != NULL);
  const lull_io_pass* five = lull_io_find_pass(&image, "L", "Five");
  CHECK(five && five->channels == 4);
  CHECK(lull_io_find_pass(&image, "L", "Five.W") != NULL);
  CHECK_EQ_INT(lull_io_write(out, &image, 0, err, sizeof err), 0);
  for (int c = 0; c < 12; ++c)
    CHECK(fixture_channel_type(out, channels[c].name) == (channels[c].half ? 'h' : 'f'));
  lull_io_free(&image);
}

/* A single-part multiview file in OpenEXR's convention: the default
 * (first) view's channels carry no view ("ViewLayer.Combined.R" beside
 * "ViewLayer.Combined.right.R").  They are the left view's (they had no
 * view, so nothing was "left"); a rewrite keeps their names, and a new
 * pass of the left view reads back as that view's. */
static void test_default_view(const char* dir)
{
  enum { W = 4, H = 3, N = W * H };
  float planes[6][N];
  for (int c = 0; c < 6; ++c)
    for (int i = 0; i < N; ++i)
      planes[c][i] = (float)(c + 1) + 0.125f * (float)i;
  const fixture_channel channels[] = {
      {"ViewLayer.Combined.R", 1, 0, planes[0]},
      {"ViewLayer.Combined.G", 1, 0, planes[1]},
      {"ViewLayer.Combined.B", 1, 0, planes[2]},
      {"ViewLayer.Combined.right.R", 1, 0, planes[3]},
      {"ViewLayer.Combined.right.G", 1, 0, planes[4]},
      {"ViewLayer.Combined.right.B", 1, 0, planes[5]},
  };
  static const char* const views[] = {"left", "right", NULL};
  static const char* const part[] = {"rgba"};
  char path[1200], out[1200], err[512];
  cli_path(path, sizeof path, dir, "default_view.exr");
  cli_path(out, sizeof out, dir, "default_view_out.exr");
  CHECK_EQ_INT(fixture_write_exr(path, W, H, channels, 6, part, 1, NULL, views), 0);
  lull_io_image image;
  CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
  CHECK_EQ_INT(image.num_passes, 2);
  const lull_io_pass* left = lull_io_find_pass_view(&image, "ViewLayer", "Combined", "left");
  const lull_io_pass* right = lull_io_find_pass_view(&image, "ViewLayer", "Combined", "right");
  CHECK(left && right && left != right);
  if (left && right)
    CHECK(left->data[3 * 2 + 1] == planes[1][2] && right->data[3 * 2 + 1] == planes[4][2]);
  static const char* const rgb[] = {"R", "G", "B"};
  CHECK(lull_io_add_pass_view(&image, "ViewLayer", "Denoised", "left", 3, rgb, planes[0]) != NULL);
  CHECK_EQ_INT(lull_io_write(out, &image, LULL_IO_VALUES_AS_READ, err, sizeof err), 0);
  for (int c = 0; c < 6; ++c) /* every channel under its own name */
    CHECK_EQ_INT(fixture_channel_type(out, channels[c].name), 'h');
  lull_io_image back;
  CHECK_EQ_INT(lull_io_read(out, &back, err, sizeof err), 0);
  CHECK(lull_io_find_pass_view(&back, "ViewLayer", "Denoised", "left") != NULL);
  CHECK(lull_io_find_pass_view(&back, "ViewLayer", "Combined", "left") != NULL);
  lull_io_free(&back);
  lull_io_free(&image);
}

/* View layers with dots ("ViewLayer.001", the name Blender gives a new
 * one): the pass is the component before the channel, the layer all before
 * it, as Blender reads them.  The layer had been "ViewLayer" with a pass
 * "001.Combined", so the CLI found no colour pass in it and left it noisy. */
static void test_dotted_layers(const char* dir)
{
  enum { W = 4, H = 4, N = W * H };
  float planes[4][N];
  for (int c = 0; c < 4; ++c)
    for (int i = 0; i < N; ++i)
      planes[c][i] = (float)(c + 1) + 0.01f * (float)i;
  const fixture_channel channels[] = {
      {"ViewLayer.001.Combined.R", 0, 0, planes[0]},
      {"ViewLayer.001.Combined.G", 0, 0, planes[1]},
      {"ViewLayer.001.Combined.B", 0, 0, planes[2]},
      {"ViewLayer.001.Depth.Z", 0, 0, planes[3]},
  };
  static const char* const part[] = {"rgba"};
  char path[1200], err[512];
  cli_path(path, sizeof path, dir, "dotted_layers.exr");
  CHECK_EQ_INT(fixture_write_exr(path, W, H, channels, 4, part, 1, NULL, NULL), 0);
  lull_io_image image;
  CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
  CHECK_EQ_INT(image.num_passes, 2);
  const lull_io_pass* combined = lull_io_find_pass(&image, "ViewLayer.001", "Combined");
  CHECK(combined && combined->channels == 3 && combined->data[3 * 2 + 1] == planes[1][2]);
  CHECK(lull_io_find_pass(&image, "ViewLayer.001", "Depth") != NULL);
  lull_io_free(&image);
}

/* Views in parts, as Blender writes a stereo render ("Multi-View" views
 * format): a part per pass and view with a "view" attribute, both views'
 * channels under the same names.  lull read none of it ("channel appears
 * twice"); now each part's view parts the passes, a rewrite keeps every
 * channel in its part under its name, and a new pass of a view gets a part
 * of its own in Blender's style. */
static void test_views_in_parts(const char* dir)
{
  enum { W = 5, H = 3, N = W * H };
  float planes[9][N];
  for (int c = 0; c < 9; ++c)
    for (int i = 0; i < N; ++i)
      planes[c][i] = (float)(c + 1) + 0.125f * (float)i;
  const fixture_channel channels[] = {
      {"ViewLayer.Combined.R", 1, 0, planes[0]}, {"ViewLayer.Combined.G", 1, 0, planes[1]},
      {"ViewLayer.Combined.B", 1, 0, planes[2]}, {"ViewLayer.Combined.R", 0, 1, planes[3]},
      {"ViewLayer.Combined.G", 0, 1, planes[4]}, {"ViewLayer.Combined.B", 0, 1, planes[5]},
      {"ViewLayer.Depth.Z", 0, 2, planes[6]},    {"ViewLayer.Depth.Z", 0, 3, planes[7]},
      {"Foo.X", 0, 4, planes[8]}}; /* a part of no view */
  static const char* const parts[] = {"ViewLayer.Combined-left", "ViewLayer.Combined-right",
                                      "ViewLayer.Depth-left", "ViewLayer.Depth-right", "extra"};
  static const char* const views[] = {"left", "right", "left", "right", NULL};
  char path[1200], out[1200];
  cli_path(path, sizeof path, dir, "views_in_parts.exr");
  cli_path(out, sizeof out, dir, "views_in_parts_rewritten.exr");
  CHECK_EQ_INT(fixture_write_exr_part_views(path, W, H, channels, 9, parts, views, 5, NULL, NULL),
               0);
  lull_io_image image;
  char err[512];
  CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
  const lull_io_pass* left = lull_io_find_pass_view(&image, "ViewLayer", "Combined", "left");
  const lull_io_pass* right = lull_io_find_pass_view(&image, "ViewLayer", "Combined", "right");
  const lull_io_pass* depth = lull_io_find_pass_view(&image, "ViewLayer", "Depth", "right");
  const lull_io_pass* foo = lull_io_find_pass_view(&image, "", "Foo", "");
  CHECK(left && right && depth && foo && left != right);
  if (left && right && depth && foo) {
    CHECK(left->half && !right->half);
    CHECK(left->data[3 * 7] == half_round(planes[0][7]));
    CHECK(right->data[3 * 7 + 2] == planes[5][7]);
    CHECK(depth->data[4] == planes[7][4]);
    CHECK(foo->data[2] == planes[8][2]);
  }
  static const char* const rgb[] = {"R", "G", "B"};
  CHECK(lull_io_add_pass_view(&image, "ViewLayer", "Denoised", "left", 3, rgb, NULL) != NULL);
  CHECK(lull_io_add_pass_view(&image, "ViewLayer", "Denoised", "right", 3, rgb, NULL) != NULL);
  CHECK_EQ_INT(lull_io_write(out, &image, 0, err, sizeof err), 0);
  lull_io_free(&image);
  /* every channel in its part, under its name; the new ones Blender's way */
  CHECK_EQ_INT(fixture_part_count(out), 7);
  char part[256];
  static const struct
  {
    const char *channel, *view, *part;
  } where[] = {{"ViewLayer.Combined.G", "left", "ViewLayer.Combined-left"},
               {"ViewLayer.Combined.G", "right", "ViewLayer.Combined-right"},
               {"ViewLayer.Depth.Z", "right", "ViewLayer.Depth-right"},
               {"Foo.X", "", "extra"},
               {"ViewLayer.Denoised.B", "left", "ViewLayer.Denoised-left"},
               {"ViewLayer.Denoised.R", "right", "ViewLayer.Denoised-right"}};
  for (size_t i = 0; i < sizeof where / sizeof where[0]; ++i) {
    const int found = fixture_part_of(out, where[i].channel, where[i].view, part, sizeof part);
    CHECK_EQ_INT(found, 0);
    if (found == 0 && strcmp(part, where[i].part) != 0) {
      printf("  %s (%s) is in part '%s', expected '%s'\n", where[i].channel, where[i].view, part,
             where[i].part);
      CHECK(0);
    }
  }
  /* view names with dots, and a single-layer stereo file (parts named
   * after their views, bare channels): plain colour passes of each view */
  const fixture_channel more[] = {{"L.P.R", 1, 0, planes[0]}, {"L.P.R", 1, 1, planes[1]},
                                  {"R", 1, 2, planes[2]},     {"G", 1, 2, planes[3]},
                                  {"R", 1, 3, planes[4]},     {"G", 1, 3, planes[5]}};
  static const char* const more_parts[] = {"L.P-cam.a", "L.P-cam.b", "left", "right"};
  static const char* const more_views[] = {"cam.a", "cam.b", "left", "right"};
  char more_path[1200];
  cli_path(more_path, sizeof more_path, dir, "views_more.exr");
  CHECK_EQ_INT(fixture_write_exr_part_views(more_path, W, H, more, 6, more_parts, more_views, 4,
                                            NULL, NULL), 0);
  lull_io_image m;
  CHECK_EQ_INT(lull_io_read(more_path, &m, err, sizeof err), 0);
  const lull_io_pass* cam_b = lull_io_find_pass_view(&m, "L", "P", "cam.b");
  const lull_io_pass* plain = lull_io_find_pass_view(&m, "", "", "right");
  CHECK(cam_b && cam_b->data[4] == half_round(planes[1][4]));
  CHECK(plain && plain->channels == 2 && plain->data[2 * 4 + 1] == half_round(planes[5][4]));
  lull_io_free(&m);
  /* and reads back with the same views and values */
  lull_io_image back;
  CHECK_EQ_INT(lull_io_read(out, &back, err, sizeof err), 0);
  right = lull_io_find_pass_view(&back, "ViewLayer", "Combined", "right");
  CHECK(right && right->data[3 * 7 + 2] == planes[5][7]);
  CHECK(lull_io_find_pass_view(&back, "ViewLayer", "Denoised", "left") != NULL);
  lull_io_free(&back);
}

static void test_single_layer_and_png(const char* dir)
{
  cli_scene scene;
  CHECK_EQ_INT(cli_scene_make(&scene, 16, 8, 3, 0.3f), 0);
  char path[1200];
  cli_path(path, sizeof path, dir, "plain.exr");
  CHECK_EQ_INT(cli_scene_write_plain(&scene, "noisy", path), 0);
  lull_io_image image;
  char err[512];
  CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
  CHECK_EQ_INT(image.num_passes, 1);
  if (image.num_passes == 1) {
    CHECK(image.passes[0].layer[0] == 0 && image.passes[0].name[0] == 0);
    CHECK(memcmp(image.passes[0].data, scene.noisy, 16 * 8 * 3 * sizeof(float)) == 0);
  }
  lull_io_free(&image);

  /* PNG: encoded values survive exactly; linear ones get sRGB-encoded */
  cli_path(path, sizeof path, dir, "values.png");
  memset(&image, 0, sizeof image);
  image.width = 256;
  image.height = 1;
  float values[256 * 3];
  for (int i = 0; i < 256 * 3; ++i)
    values[i] = (float)(i % 256) / 255.0f;
  static const char* const rgb[] = {"R", "G", "B"};
  lull_io_add_pass(&image, "", "", 3, rgb, values);
  CHECK_EQ_INT(lull_io_write(path, &image, 0, err, sizeof err), 0);
  lull_io_image back;
  CHECK_EQ_INT(lull_io_read(path, &back, err, sizeof err), 0);
  lull_io_file_info info;
  lull_io_get_file_info(&back, &info);
  CHECK_EQ_INT(info.integer, 1);
  CHECK_EQ_INT(info.bits, 8);
  if (back.num_passes == 1)
    CHECK(lull_test_max_abs_diff(back.passes[0].data, values, 256 * 3) < 1e-6);
  lull_io_free(&back);
  image.passes[0].data[0] = 0.5f;  /* linear 0.5 is sRGB 0.7354 -> 188 */
  image.passes[0].data[1] = -1.0f; /* clamped */
  image.passes[0].data[2] = 7.0f;
  CHECK_EQ_INT(lull_io_write(path, &image, 1, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_read(path, &back, err, sizeof err), 0);
  if (back.num_passes == 1) {
    CHECK_NEAR(back.passes[0].data[0], 188.0 / 255.0, 1e-6);
    CHECK_NEAR(back.passes[0].data[1], 0.0, 1e-6);
    CHECK_NEAR(back.passes[0].data[2], 1.0, 1e-6);
  }
  lull_io_free(&back);
  lull_io_free(&image);
  cli_scene_free(&scene);
}

/* A lossy codec is not applied again to passes that are only copied
 * (DWAA changed 96% of a render's pixels per rewrite): such parts are
 * written with ZIP, and every value comes back bit for bit. */
static void test_lossy_compression(const char* dir)
{
  enum { W = 64, H = 48 };
  static float planes[3][W * H];
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < W * H; ++i) /* noise, which DWAA's quantisation changes */
      planes[c][i] = (float)((i * 7919 + c * 104729) % 1000) / 997.0f;
  const fixture_channel channels[] = {{"ViewLayer.Combined.R", 1, 0, planes[0]},
                                      {"ViewLayer.Combined.G", 1, 0, planes[1]},
                                      {"ViewLayer.Combined.B", 1, 0, planes[2]}};
  static const char* const attributes[] = {"compression", "dwaa:45", NULL};
  char path[1200], out[1200], again[1200], err[512], value[64];
  cli_path(path, sizeof path, dir, "dwaa.exr");
  cli_path(out, sizeof out, dir, "dwaa_rewritten.exr");
  cli_path(again, sizeof again, dir, "dwaa_rewritten_again.exr");
  CHECK_EQ_INT(fixture_write_exr(path, W, H, channels, 3, NULL, 1, attributes, NULL), 0);
  lull_io_image first, second, third;
  CHECK_EQ_INT(lull_io_read(path, &first, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_write(out, &first, LULL_IO_VALUES_AS_READ, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_read(out, &second, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_write(again, &second, LULL_IO_VALUES_AS_READ, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_read(again, &third, err, sizeof err), 0);
  CHECK_EQ_INT(fixture_attribute(out, "compression", value, sizeof value), 0);
  CHECK(strcmp(value, "zip") == 0);
  const lull_io_pass* a = lull_io_find_pass(&first, "ViewLayer", "Combined");
  const lull_io_pass* b = lull_io_find_pass(&second, "ViewLayer", "Combined");
  const lull_io_pass* c = lull_io_find_pass(&third, "ViewLayer", "Combined");
  CHECK(a && b && c);
  if (a && b && c) {
    CHECK(memcmp(a->data, b->data, sizeof(float) * W * H * 3) == 0);
    CHECK(memcmp(a->data, c->data, sizeof(float) * W * H * 3) == 0);
  }
  lull_io_free(&first);
  lull_io_free(&second);
  lull_io_free(&third);
}

/* 8/16-bit files hold display-encoded values: written to a float format
 * as they were read (LULL_IO_VALUES_AS_READ) or when said so (DISPLAY) they
 * are decoded to linear, the alpha never; PNG's byte channels never reach
 * an EXR's channel types (its bytes had been stored as halves). */
static void test_display_values_to_floats(const char* dir)
{
  char png[1200], exr[1200], pfm[1200], err[512];
  cli_path(png, sizeof png, dir, "display.png");
  cli_path(exr, sizeof exr, dir, "display.exr");
  cli_path(pfm, sizeof pfm, dir, "display.pfm");
  lull_io_image image, back;
  memset(&image, 0, sizeof image);
  image.width = 256;
  image.height = 1;
  float values[256 * 4];
  for (int i = 0; i < 256 * 4; ++i)
    values[i] = (float)(i / 4) / 255.0f;
  static const char* const rgba[] = {"R", "G", "B", "A"};
  lull_io_add_pass(&image, "", "", 4, rgba, values);
  CHECK_EQ_INT(lull_io_write(png, &image, LULL_IO_VALUES_AS_READ, err, sizeof err), 0);
  lull_io_free(&image);
  CHECK_EQ_INT(lull_io_read(png, &image, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_write(exr, &image, LULL_IO_VALUES_AS_READ, err, sizeof err), 0);
  CHECK_EQ_INT(fixture_channel_type(exr, "R"), 'f');
  CHECK_EQ_INT(fixture_channel_type(exr, "A"), 'f');
  CHECK_EQ_INT(lull_io_read(exr, &back, err, sizeof err), 0);
  double worst = 0.0;
  if (back.num_passes == 1 && back.passes[0].channels == 4)
    for (int i = 0; i < 256; ++i) {
      const float v = (float)i / 255.0f;
      worst = fmax(worst, fabs(back.passes[0].data[4 * i] - lull_srgb_to_linear(v)));
      worst = fmax(worst, fabs(back.passes[0].data[4 * i + 3] - v)); /* alpha as it was */
    }
  else
    worst = 1.0;
  CHECK(worst < 1e-6);
  lull_io_free(&back);
  /* an image made in memory says what its values are */
  lull_io_image made;
  memset(&made, 0, sizeof made);
  made.width = 256;
  made.height = 1;
  lull_io_add_pass(&made, "", "", 4, rgba, values);
  CHECK_EQ_INT(lull_io_write(pfm, &made, LULL_IO_VALUES_DISPLAY, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_read(pfm, &back, err, sizeof err), 0);
  if (back.num_passes == 1)
    CHECK_NEAR(back.passes[0].data[3 * 200], lull_srgb_to_linear(200.0f / 255.0f), 1e-7);
  lull_io_free(&back);
  CHECK_EQ_INT(lull_io_write(pfm, &made, LULL_IO_VALUES_AS_READ, err, sizeof err), 0);
  CHECK_EQ_INT(lull_io_read(pfm, &back, err, sizeof err), 0);
  if (back.num_passes == 1)
    CHECK(back.passes[0].data[3 * 200] == 200.0f / 255.0f);
  lull_io_free(&back);
  lull_io_free(&made);
  lull_io_free(&image);
}

static void test_atomic(const char* dir)
{
  char path[1200], copy[1200], link[1200];
  cli_path(path, sizeof path, dir, "keep.exr");
  cli_path(copy, sizeof copy, dir, "keep_copy.exr");
  cli_path(link, sizeof link, dir, "link.exr");
  cli_scene scene;
  CHECK_EQ_INT(cli_scene_make(&scene, 8, 8, 5, 0.2f), 0);
  CHECK_EQ_INT(cli_scene_write_plain(&scene, "noisy", path), 0);
  CHECK_EQ_INT(cli_copy_file(path, copy), 0);
  CHECK_EQ_INT(chmod(path, 0640), 0);

  lull_io_image image;
  char err[512];
  memset(&image, 0, sizeof image);
  image.width = 8;
  image.height = 8;
  static const char* const names[] = {"R", "G", "B"};
  lull_io_add_pass(&image, "", "", 3, names, scene.clean);
  lull_io_add_pass(&image, "L", "P", 3, names, scene.clean);
  /* fails after the temporary file exists (a PNG holds one pass) */
  char png[1200];
  cli_path(png, sizeof png, dir, "keep.png");
  CHECK_EQ_INT(cli_scene_write_plain(&scene, "noisy", png), 0);
  char png_copy[1200];
  cli_path(png_copy, sizeof png_copy, dir, "keep_copy.png");
  CHECK_EQ_INT(cli_copy_file(png, png_copy), 0);
  CHECK(lull_io_write(png, &image, 1, err, sizeof err) != 0);
  CHECK(cli_same_bytes(png, png_copy));
  /* no passes at all */
  lull_io_image empty;
  memset(&empty, 0, sizeof empty);
  empty.width = 8;
  empty.height = 8;
  CHECK(lull_io_write(path, &empty, 0, err, sizeof err) != 0);
  CHECK(cli_same_bytes(path, copy));
  CHECK_EQ_INT(cli_temp_files(dir), 0);
  /* into a missing folder, onto a folder */
  char bad[1200];
  cli_path(bad, sizeof bad, dir, "no/such/folder/x.exr");
  CHECK(lull_io_write(bad, &image, 0, err, sizeof err) != 0);
  CHECK(strstr(err, "x.exr") != NULL);
  CHECK(lull_io_write(dir, &image, 0, err, sizeof err) != 0);
  /* a successful replacement keeps the permissions */
  CHECK_EQ_INT(lull_io_write(path, &image, 0, err, sizeof err), 0);
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640);
  /* through a symbolic link: the file it points to is replaced */
  CHECK_EQ_INT(symlink("keep_copy.exr", link), 0);
  CHECK_EQ_INT(lull_io_write(link, &image, 0, err, sizeof err), 0);
  CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
  lull_io_image back;
  CHECK_EQ_INT(lull_io_read(copy, &back, err, sizeof err), 0);
  CHECK_EQ_INT(back.num_passes, 2);
  lull_io_free(&back);
  CHECK_EQ_INT(cli_temp_files(dir), 0);
  /* onto a FIFO, or through a link to one: refused, both left as they were
   * (the rename had replaced them by a plain file; as root, -o /dev/null
   * replaced /dev/null, which is why this test makes its own FIFO) */
  char fifo[1200], fifo_link[1200];
  cli_path(fifo, sizeof fifo, dir, "fifo.exr");
  cli_path(fifo_link, sizeof fifo_link, dir, "fifo_link.exr");
  CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
  CHECK_EQ_INT(symlink("fifo.exr", fifo_link), 0);
  CHECK(lull_io_write(fifo, &image, 0, err, sizeof err) != 0);
  CHECK(strstr(err, "not a regular file") != NULL);
  CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
  CHECK(lull_io_write(fifo_link, &image, 0, err, sizeof err) != 0);
  CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
  CHECK(lstat(fifo_link, &st) == 0 && S_ISLNK(st.st_mode));
  CHECK_EQ_INT(cli_temp_files(dir), 0);
  lull_io_free(&image);
  cli_scene_free(&scene);
}

/* Parts of one size at different places: refused (they were laid over
 * each other, the albedo 16 pixels off its colour); at one place: read. */
static void test_shifted_parts(const char* dir)
{
  char path[1200], err[512];
  cli_path(path, sizeof path, dir, "shifted_parts.exr");
  lull_io_image image;
  CHECK_EQ_INT(fixture_write_shifted_parts(path, 32, 32, 16, 16), 0);
  CHECK(lull_io_read(path, &image, err, sizeof err) != 0);
  CHECK(strstr(err, "data windows") != NULL);
  CHECK_EQ_INT(fixture_write_shifted_parts(path, 32, 32, 0, 0), 0);
  CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
  CHECK_EQ_INT(image.num_passes, 2);
  lull_io_free(&image);
}

/* TIFF and JPEG files cut short: refused.  Their readers fill the missing
 * rows (black, grey) and still say the read worked, with the damage only in
 * the reader's error slot; such a file had been denoised, exit 0. */
static void test_truncated_tiff_and_jpeg(const char* dir)
{
  cli_scene scene;
  CHECK_EQ_INT(cli_scene_make(&scene, 96, 64, 4, 0.5f), 0);
  static const char* const names[] = {"whole.tif", "whole.jpg"};
  for (int k = 0; k < 2; ++k) {
    char path[1200], bad[1200];
    cli_path(path, sizeof path, dir, names[k]);
    cli_path(bad, sizeof bad, dir, k ? "cut.jpg" : "cut.tif");
    CHECK_EQ_INT(cli_scene_write_plain(&scene, "clean", path), 0);
    long size = 0;
    unsigned char* bytes = read_bytes(path, &size);
    CHECK(bytes != NULL);
    if (!bytes)
      continue;
    lull_io_image image;
    char err[512] = "";
    CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0); /* whole: read */
    lull_io_free(&image);
    CHECK_EQ_INT(write_bytes(bad, bytes, (size_t)size * 2 / 3), 0);
    const int status = lull_io_read(bad, &image, err, sizeof err);
    if (status == 0)
      fprintf(stderr, "%s cut to 2/3 was read\n", names[k]);
    CHECK(status != 0);
    CHECK(strstr(err, k ? "cut.jpg" : "cut.tif") != NULL);
    lull_io_free(&image);
    free(bytes);
  }
  cli_scene_free(&scene);
}

/* A write that fails part-way (here past the file-size limit; a full disk
 * alike) is an error that leaves the old file and no temporary one: libjpeg
 * had ended the process from inside OpenImageIO (exit 1, the temporary
 * file left behind). */
static void test_failed_write(const char* dir)
{
  cli_scene scene;
  CHECK_EQ_INT(cli_scene_make(&scene, 256, 192, 6, 0.5f), 0);
  static const char* const names[] = {"limit.jpg", "limit.png", "limit.tif"};
  for (int k = 0; k < 3; ++k) {
    char path[1200], copy[1200], err[512] = "";
    cli_path(path, sizeof path, dir, names[k]);
    cli_path(copy, sizeof copy, dir, "limit_copy");
    CHECK_EQ_INT(cli_scene_write_plain(&scene, "clean", path), 0);
    CHECK_EQ_INT(cli_copy_file(path, copy), 0);
    lull_io_image image;
    memset(&image, 0, sizeof image);
    image.width = scene.width;
    image.height = scene.height;
    static const char* const rgb[] = {"R", "G", "B"};
    lull_io_add_pass(&image, "", "", 3, rgb, scene.noisy);
    struct rlimit old, small;
    CHECK_EQ_INT(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = 4096; /* the noisy image encodes to far more */
    void (*handler)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &small), 0);
    const int status = lull_io_write(path, &image, 1, err, sizeof err);
    CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, handler);
    CHECK(status != 0);
    CHECK(strstr(err, names[k]) != NULL);
    CHECK(cli_same_bytes(path, copy));
    CHECK_EQ_INT(cli_temp_files(dir), 0);
    lull_io_free(&image);
  }
  cli_scene_free(&scene);
}

static void test_corrupt_exr(const char* dir)
{
  cli_scene scene;
  CHECK_EQ_INT(cli_scene_make(&scene, 48, 40, 9, 0.5f), 0);
  char path[1200], bad[1200];
  cli_path(path, sizeof path, dir, "whole.exr");
  cli_path(bad, sizeof bad, dir, "bad.exr");
  static const char* const layers[] = {"ViewLayer"};
  CHECK_EQ_INT(cli_scene_write_blender(&scene, path, layers, 1, 0), 0);
  long size = 0;
  unsigned char* bytes = read_bytes(path, &size);
  CHECK(bytes != NULL);
  if (!bytes)
    return;
  /* truncated anywhere: an error naming the file, never a crash */
  for (int k = 1; k < 24; ++k) {
    const long keep = size * k / 24;
    CHECK_EQ_INT(write_bytes(bad, bytes, (size_t)keep), 0);
    lull_io_image image;
    char err[512] = "";
    const int status = lull_io_read(bad, &image, err, sizeof err);
    CHECK(status != 0);
    CHECK(strstr(err, "bad.exr") != NULL);
    lull_io_free(&image);
  }
  /* bytes changed: read or refused, but the image is whole or empty */
  unsigned state = 12345;
  for (int k = 0; k < 40; ++k) {
    unsigned char* copy = malloc((size_t)size);
    memcpy(copy, bytes, (size_t)size);
    for (int j = 0; j < 4; ++j)
      copy[(size_t)(lull_test_random(&state) * (float)size) % (size_t)size] ^=
          (unsigned char)(1u + (unsigned)(lull_test_random(&state) * 254));
    CHECK_EQ_INT(write_bytes(bad, copy, (size_t)size), 0);
    free(copy);
    lull_io_image image;
    char err[512];
    if (lull_io_read(bad, &image, err, sizeof err) == 0)
      CHECK(image.num_passes > 0 && image.passes[0].data != NULL);
    else
      CHECK(image.num_passes == 0 && image.passes == NULL);
    lull_io_free(&image);
  }
  /* not an image at all */
  CHECK_EQ_INT(write_bytes(bad, "hello, world\n", 13), 0);
  lull_io_image image;
  char err[512];
  CHECK(lull_io_read(bad, &image, err, sizeof err) != 0);
  free(bytes);
  cli_scene_free(&scene);
}
#endif

int main(void)
{
  char dir[1024];
  if (cli_scratch("io", dir, sizeof dir)) {
    fprintf(stderr, "cannot make a scratch folder\n");
    return 1;
  }
  test_pfm_layout(dir);
  test_pfm_big_endian_grey(dir);
  test_pfm_writes(dir);
  test_pfm_corrupt(dir);
  test_misuse(dir);
#if defined(LULL_IO_HAS_OIIO)
  CHECK_EQ_INT(lull_io_has_oiio(), 1);
  test_blender_multilayer(dir);
  test_multipart(dir);
  test_multiview_and_odd_names(dir);
  test_dotted_layers(dir);
  test_default_view(dir);
  test_views_in_parts(dir);
  test_single_layer_and_png(dir);
  test_lossy_compression(dir);
  test_display_values_to_floats(dir);
  test_atomic(dir);
  test_shifted_parts(dir);
  test_truncated_tiff_and_jpeg(dir);
  test_failed_write(dir);
  test_corrupt_exr(dir);
#else
  /* without OpenImageIO: a clear error for other formats */
  lull_io_image image;
  memset(&image, 0, sizeof image);
  image.width = image.height = 2;
  static const char* const rgb[] = {"R", "G", "B"};
  lull_io_add_pass(&image, "", "", 3, rgb, NULL);
  char path[1200], err[512];
  cli_path(path, sizeof path, dir, "x.exr");
  CHECK(lull_io_write(path, &image, 0, err, sizeof err) != 0);
  CHECK(strstr(err, "OpenImageIO") != NULL);
  lull_io_free(&image);
#endif
  return lull_test_result("cli_io");
}
