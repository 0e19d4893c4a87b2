/* A structural check of an EXR file's headers before OpenImageIO opens it.
 *
 * OpenImageIO 2.4 and OpenEXR 3.1 abort the process on some corrupt files
 * (an unknown channel pixel type trips an assertion in OpenImageIO's EXR
 * reader; found by tests/fuzz/fuzz_io), and allocate offset tables from
 * header fields before reading any pixel.  A crash would take down the
 * tool, the Python module or Blender itself, so lull_io walks the headers
 * first and refuses what is malformed or what lull cannot use anyway
 * (deep data, subsampled channels, sizes over 65536, unknown compressions).
 *
 * The file layout checked is OpenEXR's ("The OpenEXR File Layout",
 * openexr.com): a magic number, a version field with flags, one header
 * (or, for multi-part files, a list of headers ended by an empty one) of
 * attributes "name\0type\0<int32 size><value>" ended by a zero byte, then
 * the chunk offset tables, then the chunks.  All numbers are little endian. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"

enum
{
  EXR_MAGIC = 20000630,
  FLAG_TILED = 0x200,
  FLAG_LONG_NAMES = 0x400,
  FLAG_DEEP = 0x800,
  FLAG_MULTIPART = 0x1000,
  MAX_PARTS = 1024,
  MAX_ATTRIBUTES = 1024,      /* per header (Blender writes about 20) */
  MAX_HEADER_BYTES = 16 << 20, /* headers larger than this are refused */
  MAX_COORDINATE = 1 << 30,    /* window corners; extents then fit an int */
};

typedef struct cursor
{
  const unsigned char* p;
  size_t left;
} cursor;

static int read_u32(cursor* c, uint32_t* v)
{
  if (c->left < 4)
    return 1;
  *v = (uint32_t)c->p[0] | (uint32_t)c->p[1] << 8 | (uint32_t)c->p[2] << 16 |
       (uint32_t)c->p[3] << 24;
  c->p += 4;
  c->left -= 4;
  return 0;
}

static int32_t as_i32(uint32_t v)
{
  return v <= INT32_MAX ? (int32_t)v : -(int32_t)(~v) - 1;
}

/* A zero-terminated name of at most max_length characters (0: none). */
static int read_name(cursor* c, const char** name, size_t max_length)
{
  const unsigned char* end = memchr(c->p, 0, c->left < max_length + 1 ? c->left : max_length + 1);
  if (!end)
    return 1;
  *name = (const char*)c->p;
  const size_t n = (size_t)(end - c->p) + 1;
  c->p += n;
  c->left -= n;
  return 0;
}

/* What one header says, for the checks after all attributes are read. */
typedef struct part
{
  int has_channels, has_compression, has_data_window, has_display_window, has_line_order;
  int has_aspect, has_window_center, has_window_width, has_tiles, has_name, has_type;
  int compression;
  int64_t width, height;
  uint32_t tile_x, tile_y;
  int level_mode, rounding;
  int tiled_type;      /* "type" is tiledimage */
  int64_t chunk_count; /* the chunkCount attribute, -1 when absent */
} part;

static int box2i(cursor v, int64_t* width, int64_t* height)
{
  uint32_t b[4];
  for (int i = 0; i < 4; ++i)
    if (read_u32(&v, &b[i]))
      return 1;
  const int64_t x0 = as_i32(b[0]), y0 = as_i32(b[1]), x1 = as_i32(b[2]), y1 = as_i32(b[3]);
  for (int i = 0; i < 4; ++i)
    if (as_i32(b[i]) > MAX_COORDINATE || as_i32(b[i]) < -MAX_COORDINATE)
      return 1;
  if (x1 < x0 || y1 < y0)
    return 1;
  *width = x1 - x0 + 1;
  *height = y1 - y0 + 1;
  return 0;
}

/* The channel list: names, pixel types 0..2 (uint, half, float), no
 * subsampling (lull's passes are full resolution). */
static int check_channels(cursor v, size_t max_name, const char** why)
{
  int count = 0;
  for (;;) {
    if (v.left == 0)
      return *why = "unterminated channel list", 1;
    if (v.p[0] == 0)
      break;
    const char* name;
    uint32_t type = 0, reserved = 0, sx = 0, sy = 0; /* reserved: pLinear and 3 bytes */
    if (read_name(&v, &name, max_name) || read_u32(&v, &type) || read_u32(&v, &reserved) ||
        read_u32(&v, &sx) || read_u32(&v, &sy))
      return *why = "corrupt channel list", 1;
    if (type > 2)
      return *why = "unknown channel pixel type", 1;
    if (sx != 1 || sy != 1)
      return *why = "subsampled channels are not supported", 1;
    if (++count > LULL_IO_MAX_FILE_CHANNELS)
      return *why = "too many channels", 1;
  }
  /* OpenEXR reads up to the terminator and goes on from there: bytes
   * after it would be read as the next attribute (found by fuzz_io) */
  if (v.left != 1)
    return *why = "channel list shorter than its attribute", 1;
  return count == 0 ? (*why = "no channels", 1) : 0;
}

/* Byte sizes of OpenEXR's fixed-size attribute types (0: variable). */
static int fixed_size(const char* type, size_t* size)
{
  static const struct
  {
    const char* type;
    size_t size;
  } sizes[] = {{"int", 4},      {"float", 4},     {"double", 8},  {"v2i", 8},
               {"v2f", 8},      {"v2d", 16},      {"v3i", 12},    {"v3f", 12},
               {"v3d", 24},     {"box2i", 16},    {"box2f", 16},  {"m33f", 36},
               {"m33d", 72},    {"m44f", 64},     {"m44d", 128},  {"rational", 8},
               {"timecode", 8}, {"keycode", 28},  {"chromaticities", 32},
               {"envmap", 1},   {"compression", 1}, {"lineOrder", 1}, {"tiledesc", 9},
               {"deepImageState", 1}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
    if (strcmp(type, sizes[i].type) == 0) {
      *size = sizes[i].size;
      return 1;
    }
  return 0;
}

/* Variable-size types: OpenEXR reads each by its own structure, not by the
 * attribute's size, so the structure must fill the size exactly (else it
 * reads the rest as the next attribute: a parse that differs from this
 * one, which fuzz_io found).  Returns 1 when the value is malformed. */
static int check_variable(const char* type, cursor v, size_t max_name, const char** why)
{
  if (strcmp(type, "chlist") == 0)
    return check_channels(v, max_name, why);
  if (strcmp(type, "idmanifest") == 0) {
    /* OpenEXR 3.1 reads an 8-byte uncompressed size and then size - 4
     * bytes of data: 4 bytes past the attribute, so the rest of the header
     * is parsed out of step with this check (a fuzz_io input made it
     * allocate 1.8 GB for an "attribute size" read from a name).  Other
     * versions read 4 bytes.  No parse agrees with every version, and lull
     * has no use for ID manifests. */
    (void)v;
    return *why = "ID manifests are not supported", 1;
  }
  if (strcmp(type, "stringvector") == 0) {
    while (v.left > 0) {
      uint32_t n;
      if (read_u32(&v, &n) || n > v.left)
        return 1;
      v.p += n;
      v.left -= n;
    }
  } else if (strcmp(type, "floatvector") == 0) {
    return v.left % 4 != 0;
  } else if (strcmp(type, "preview") == 0) {
    uint32_t w, h;
    if (read_u32(&v, &w) || read_u32(&v, &h))
      return 1;
    return (uint64_t)w * h * 4 != v.left;
  }
  return 0;
}

/* The type's own rules, whatever the attribute's name. */
static int check_type(const char* type, cursor v, size_t max_name, const char** why)
{
  size_t size;
  if (fixed_size(type, &size) && v.left != size)
    return *why = "attribute of the wrong size", 1;
  const char* inner = NULL;
  if (check_variable(type, v, max_name, &inner))
    return *why = inner ? inner : "corrupt attribute", 1;
  return 0;
}

/* One attribute: records what the checks after the header need. */
static int check_attribute(const char* name, const char* type, cursor v, size_t max_name,
                           part* pt, const char** why)
{
  if (check_type(type, v, max_name, why))
    return 1;
  if (strcmp(name, "channels") == 0) {
    if (strcmp(type, "chlist") != 0)
      return *why = "channels of the wrong type", 1;
    pt->has_channels = 1;
    return 0;
  }
  if (strcmp(name, "compression") == 0 && strcmp(type, "compression") == 0) {
    pt->has_compression = 1;
    pt->compression = v.p[0];
    if (pt->compression > 9)
      return *why = "unknown compression", 1;
  } else if (strcmp(name, "dataWindow") == 0 && strcmp(type, "box2i") == 0) {
    pt->has_data_window = 1;
    if (box2i(v, &pt->width, &pt->height) || pt->width > LULL_IO_MAX_SIZE ||
        pt->height > LULL_IO_MAX_SIZE)
      return *why = "invalid data window (1 to 65536 pixels per side)", 1;
  } else if (strcmp(name, "displayWindow") == 0 && strcmp(type, "box2i") == 0) {
    int64_t w, h;
    pt->has_display_window = 1;
    if (box2i(v, &w, &h))
      return *why = "invalid display window", 1;
  } else if (strcmp(name, "lineOrder") == 0 && strcmp(type, "lineOrder") == 0) {
    pt->has_line_order = 1;
    if (v.p[0] > 2)
      return *why = "unknown line order", 1;
  } else if (strcmp(name, "pixelAspectRatio") == 0 && strcmp(type, "float") == 0) {
    pt->has_aspect = 1;
  } else if (strcmp(name, "screenWindowCenter") == 0 && strcmp(type, "v2f") == 0) {
    pt->has_window_center = 1;
  } else if (strcmp(name, "screenWindowWidth") == 0 && strcmp(type, "float") == 0) {
    pt->has_window_width = 1;
  } else if (strcmp(name, "tiles") == 0 && strcmp(type, "tiledesc") == 0) {
    cursor t = v;
    pt->has_tiles = 1;
    if (read_u32(&t, &pt->tile_x) || read_u32(&t, &pt->tile_y))
      return *why = "corrupt attribute", 1;
    pt->level_mode = t.p[0] & 0xf;
    pt->rounding = t.p[0] >> 4;
    if (pt->tile_x < 1 || pt->tile_y < 1 || pt->tile_x > LULL_IO_MAX_SIZE ||
        pt->tile_y > LULL_IO_MAX_SIZE || pt->level_mode > 2 || pt->rounding > 1)
      return *why = "invalid tile description", 1;
  } else if (strcmp(name, "name") == 0 && strcmp(type, "string") == 0) {
    pt->has_name = 1;
  } else if (strcmp(name, "type") == 0 && strcmp(type, "string") == 0) {
    pt->has_type = 1;
    if (v.left == 13 && memcmp(v.p, "scanlineimage", 13) == 0)
      pt->tiled_type = 0;
    else if (v.left == 10 && memcmp(v.p, "tiledimage", 10) == 0)
      pt->tiled_type = 1;
    else
      return *why = "unsupported part type (deep data?)", 1;
  } else if (strcmp(name, "chunkCount") == 0 && strcmp(type, "int") == 0) {
    cursor t = v;
    uint32_t n = 0;
    if (read_u32(&t, &n))
      return *why = "corrupt attribute", 1;
    pt->chunk_count = as_i32(n);
  }
  return 0;
}

/* Scanlines per chunk of each compression (OpenEXR: none, RLE, ZIPS: 1;
 * ZIP, PXR24: 16; PIZ, B44, B44A, DWAA: 32; DWAB: 256). */
static int64_t lines_per_chunk(int compression)
{
  static const int lines[10] = {1, 1, 1, 16, 32, 16, 32, 32, 32, 256};
  return lines[compression];
}

static int64_t levels(int64_t size, int rounding)
{
  int64_t n = 1;
  while (size > 1) {
    size = rounding ? (size + 1) / 2 : size / 2;
    ++n;
  }
  return n;
}

/* Size of mipmap level l: rounded down or up, at least 1. */
static int64_t level_size(int64_t size, int64_t l, int rounding)
{
  const int64_t scale = (int64_t)1 << l;
  const int64_t s = rounding ? (size + scale - 1) / scale : size / scale;
  return s > 0 ? s : 1;
}

static int64_t tiles(int64_t size, int64_t tile)
{
  return (size + tile - 1) / tile;
}

/* Chunks of a part (its offset table's length), as OpenEXR computes them. */
static int64_t chunks_of(const part* pt, int tiled)
{
  if (!tiled)
    return (pt->height + lines_per_chunk(pt->compression) - 1) / lines_per_chunk(pt->compression);
  const int64_t lx = levels(pt->width, pt->rounding), ly = levels(pt->height, pt->rounding);
  int64_t n = 0;
  if (pt->level_mode == 0)
    return tiles(pt->width, pt->tile_x) * tiles(pt->height, pt->tile_y);
  for (int64_t i = 0; i < (pt->level_mode == 1 ? (lx > ly ? lx : ly) : lx); ++i) {
    const int64_t w = level_size(pt->width, i, pt->rounding);
    if (pt->level_mode == 1) {
      n += tiles(w, pt->tile_x) * tiles(level_size(pt->height, i, pt->rounding), pt->tile_y);
    } else {
      for (int64_t j = 0; j < ly; ++j)
        n += tiles(w, pt->tile_x) * tiles(level_size(pt->height, j, pt->rounding), pt->tile_y);
    }
  }
  return n;
}

/* Checks the header bytes `data` (the whole file, or its first bytes); the
 * chunk offset tables must fit in file_size. */
int lull_io_exr_check_bytes(const unsigned char* data, size_t size, unsigned long long file_size,
                            const char** why)
{
  cursor c = {data, size};
  uint32_t magic, version;
  if (read_u32(&c, &magic) || magic != EXR_MAGIC)
    return *why = "not an OpenEXR file", 1;
  if (read_u32(&c, &version))
    return *why = "truncated OpenEXR header", 1;
  const uint32_t flags = version & ~0xffu;
  if ((version & 0xff) != 2 ||
      (flags & ~(uint32_t)(FLAG_TILED | FLAG_LONG_NAMES | FLAG_DEEP | FLAG_MULTIPART)))
    return *why = "unsupported OpenEXR version", 1;
  if (flags & FLAG_DEEP)
    return *why = "deep images are not supported", 1;
  const size_t max_name = (flags & FLAG_LONG_NAMES) ? 255 : 31;
  const int multipart = (flags & FLAG_MULTIPART) != 0;

  int64_t total_chunks = 0;
  int parts = 0;
  for (;;) {
    if (c.left == 0)
      return *why = "truncated OpenEXR header", 1;
    if (multipart && c.p[0] == 0 && parts > 0) {
      ++c.p; /* the empty header that ends the list */
      --c.left;
      break;
    }
    part pt;
    memset(&pt, 0, sizeof pt);
    pt.chunk_count = -1;
    int attributes = 0;
    const char* names[MAX_ATTRIBUTES];
    for (;;) {
      if (attributes >= MAX_ATTRIBUTES)
        return *why = "too many attributes", 1;
      if (c.left == 0)
        return *why = "truncated OpenEXR header", 1;
      if (c.p[0] == 0) {
        ++c.p;
        --c.left;
        break;
      }
      const char *name, *type;
      uint32_t length;
      if (read_name(&c, &name, max_name) || read_name(&c, &type, max_name) ||
          read_u32(&c, &length))
        return *why = "corrupt or truncated OpenEXR header", 1;
      if (!*type || length > c.left)
        return *why = "corrupt or truncated OpenEXR attribute", 1;
      /* OpenEXR lets a repeated attribute overwrite the first (a second
       * channel list replaces the one checked here, and OpenImageIO and
       * OpenEXR then disagree on the channels: found by fuzz_io); no
       * writer repeats one */
      for (int k = 0; k < attributes; ++k)
        if (strcmp(names[k], name) == 0)
          return *why = "an OpenEXR attribute appears twice", 1;
      names[attributes] = name;
      const cursor value = {c.p, length};
      if (check_attribute(name, type, value, max_name, &pt, why))
        return 1;
      c.p += length;
      c.left -= length;
      ++attributes;
    }
    if (!pt.has_channels || !pt.has_compression || !pt.has_data_window ||
        !pt.has_display_window || !pt.has_line_order || !pt.has_aspect ||
        !pt.has_window_center || !pt.has_window_width)
      return *why = "a required OpenEXR attribute is missing", 1;
    const int tiled = multipart ? pt.tiled_type : (flags & FLAG_TILED) != 0;
    if (multipart && (!pt.has_name || !pt.has_type))
      return *why = "a part without a name or type", 1;
    if (tiled && !pt.has_tiles)
      return *why = "a tiled image without a tile description", 1;
    /* OpenEXR allocates a whole tile's pixels to read one: a 20 x 28 image
     * declaring 57860 x 1024 tiles made it allocate 355 MB (found by
     * fuzz_io).  Writers use tiles up to the image's size; a tile larger
     * than both the image and a megapixel serves no file. */
    if (tiled && (int64_t)pt.tile_x * pt.tile_y > (int64_t)pt.width * pt.height &&
        (int64_t)pt.tile_x * pt.tile_y > ((int64_t)1 << 20))
      return *why = "tiles larger than the image", 1;
    /* OpenEXR sizes the offset table by chunkCount when given */
    const int64_t chunks = chunks_of(&pt, tiled);
    total_chunks += pt.chunk_count > chunks ? pt.chunk_count : chunks;
    if (++parts > MAX_PARTS)
      return *why = "too many parts", 1;
    if (!multipart)
      break;
  }
  /* every chunk has an 8-byte entry in an offset table after the headers */
  const uint64_t header_end = (uint64_t)(c.p - data);
  if (file_size < header_end || (uint64_t)total_chunks > (file_size - header_end) / 8)
    return *why = "truncated OpenEXR file (offset tables missing)", 1;
  return 0;
}

int lull_io_is_exr_file(const char* path)
{
  FILE* f = fopen(path, "rb");
  if (!f)
    return -1;
  unsigned char magic[4] = {0, 0, 0, 0};
  const size_t n = fread(magic, 1, sizeof magic, f);
  fclose(f);
  cursor c = {magic, n};
  uint32_t v;
  return read_u32(&c, &v) == 0 && v == EXR_MAGIC;
}

int lull_io_exr_check(const char* path, char* err, size_t err_size)
{
  FILE* f = fopen(path, "rb");
  if (!f)
    return lull_io_fail(err, err_size, path, "%s", strerror(errno));
  int status = 0;
  unsigned char* data = NULL;
  if (fseek(f, 0, SEEK_END) != 0) {
    status = lull_io_fail(err, err_size, path, "%s", strerror(errno));
    goto done;
  }
  const long file_size = ftell(f);
  if (file_size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    status = lull_io_fail(err, err_size, path, "%s", strerror(errno));
    goto done;
  }
  const size_t size = (size_t)file_size < MAX_HEADER_BYTES ? (size_t)file_size : MAX_HEADER_BYTES;
  data = malloc(size ? size : 1);
  if (!data) {
    status = lull_io_fail(err, err_size, path, "out of memory");
    goto done;
  }
  if (fread(data, 1, size, f) != size) {
    status = lull_io_fail(err, err_size, path, "read error");
    goto done;
  }
  const char* why = NULL;
  if (lull_io_exr_check_bytes(data, size, (uint64_t)file_size, &why))
    status = lull_io_fail(err, err_size, path, "%s", why);
done:
  free(data);
  fclose(f);
  return status;
}
