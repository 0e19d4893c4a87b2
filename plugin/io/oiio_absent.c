/* lull_io without OpenImageIO: only PFM (pfm.c); every other format gets
 * an error saying why. */
#include "io_internal.h"

int lull_io_oiio_available(void)
{
  return 0;
}

int lull_io_oiio_read(const char* path, lull_io_image* image, char* err, size_t err_size)
{
  (void)image;
  return lull_io_fail(err, err_size, path,
                      "lull was built without OpenImageIO: only PFM files can be read");
}

int lull_io_oiio_write(const char* path, const lull_io_image* image, int srgb, char* err,
                       size_t err_size)
{
  (void)image;
  (void)srgb;
  return lull_io_fail(err, err_size, path,
                      "lull was built without OpenImageIO: only .pfm files can be written");
}

void lull_io_oiio_free_state(void* state)
{
  (void)state; /* never allocated without OpenImageIO */
}

int lull_io_oiio_attribute(const void* state, int index, char* name, size_t name_size,
                           char* value, size_t value_size)
{
  (void)state;
  (void)index;
  (void)name;
  (void)name_size;
  (void)value;
  (void)value_size;
  return 1;
}
