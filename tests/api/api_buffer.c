/* Buffers: sizes, storage kinds, bounds-checked reads and writes (offset +
 * size overflow included), asynchronous copies, shared user memory. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

static void storage(OIDNDevice device)
{
  /* OIDN: UNDEFINED means managed memory where the device supports it (the
   * CPU does), else host memory */
  OIDNBuffer buffer = oidnNewBuffer(device, 256);
  CHECK(buffer != NULL);
  CHECK_EQ_INT(oidnGetBufferSize(buffer), 256);
  CHECK_EQ_INT(oidnGetBufferStorage(buffer), OIDN_STORAGE_MANAGED);
  CHECK(oidnGetBufferData(buffer) != NULL);
  oidnReleaseBuffer(buffer);

  static const OIDNStorage kinds[] = {OIDN_STORAGE_HOST, OIDN_STORAGE_DEVICE,
                                      OIDN_STORAGE_MANAGED};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    buffer = oidnNewBufferWithStorage(device, 64, kinds[i]);
    CHECK(buffer != NULL);
    CHECK_EQ_INT(oidnGetBufferStorage(buffer), kinds[i]);
    CHECK_EQ_INT(oidnGetBufferSize(buffer), 64);
    unsigned char in[64], out[64];
    for (int k = 0; k < 64; ++k)
      in[k] = (unsigned char)(k * 7 + (int)i);
    oidnWriteBuffer(buffer, 0, sizeof in, in);
    memset(out, 0, sizeof out);
    oidnReadBuffer(buffer, 0, sizeof out, out);
    CHECK(memcmp(in, out, sizeof in) == 0);
    oidnReleaseBuffer(buffer);
  }
  buffer = oidnNewBufferWithStorage(device, 64, OIDN_STORAGE_UNDEFINED);
  CHECK_EQ_INT(oidnGetBufferStorage(buffer), OIDN_STORAGE_MANAGED);
  oidnReleaseBuffer(buffer);
  EXPECT_OK(device);

  CHECK(oidnNewBufferWithStorage(device, 64, (OIDNStorage)7) == NULL);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  CHECK(oidnNewBufferWithStorage(device, 64, (OIDNStorage)-1) == NULL);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);

  /* empty buffers are legal; impossible ones are out of memory */
  buffer = oidnNewBuffer(device, 0);
  CHECK(buffer != NULL);
  CHECK_EQ_INT(oidnGetBufferSize(buffer), 0);
  oidnReadBuffer(buffer, 0, 0, NULL);
  oidnWriteBuffer(buffer, 0, 0, NULL);
  EXPECT_OK(device);
  oidnReleaseBuffer(buffer);
  CHECK(oidnNewBuffer(device, SIZE_MAX) == NULL);
  EXPECT_ERROR(device, OIDN_ERROR_OUT_OF_MEMORY);
  CHECK(oidnNewBuffer(device, SIZE_MAX / 2) == NULL);
  EXPECT_ERROR(device, OIDN_ERROR_OUT_OF_MEMORY);
}

static void bounds(OIDNDevice device)
{
  enum { SIZE = 40 };
  OIDNBuffer buffer = oidnNewBuffer(device, SIZE);
  unsigned char data[SIZE], check[SIZE], junk[SIZE + 8];
  for (int i = 0; i < SIZE; ++i)
    data[i] = (unsigned char)(100 + i);
  memset(junk, 0xee, sizeof junk);
  oidnWriteBuffer(buffer, 0, SIZE, data);

  /* partial regions */
  unsigned char part[8];
  oidnReadBuffer(buffer, 30, 8, part);
  CHECK(memcmp(part, data + 30, 8) == 0);
  oidnWriteBuffer(buffer, 32, 8, junk);
  data[32] = data[33] = data[34] = data[35] = data[36] = data[37] = data[38] = data[39] = 0xee;
  oidnReadBuffer(buffer, SIZE, 0, part); /* empty region at the end */
  EXPECT_OK(device);

  /* out of bounds, including sums that overflow: an error on the buffer's
   * device, nothing read or written */
  const struct { size_t offset, size; } bad[] = {
      {0, SIZE + 1}, {1, SIZE}, {SIZE, 1}, {SIZE + 1, 0}, {SIZE_MAX, 2}, {2, SIZE_MAX},
      {SIZE_MAX, SIZE_MAX}, {SIZE_MAX - 3, 8}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    oidnReadBuffer(buffer, bad[i].offset, bad[i].size, junk);
    EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
    oidnReadBufferAsync(buffer, bad[i].offset, bad[i].size, junk);
    EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
    oidnWriteBuffer(buffer, bad[i].offset, bad[i].size, junk);
    EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
    oidnWriteBufferAsync(buffer, bad[i].offset, bad[i].size, junk);
    EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  }
  EXPECT_OK(NULL);
  int untouched = 1;
  for (size_t i = 0; i < sizeof junk; ++i)
    untouched &= junk[i] == 0xee;
  CHECK(untouched); /* no failed read wrote into the destination */
  /* NULL host pointers with bytes to copy */
  oidnReadBuffer(buffer, 0, 4, NULL);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  oidnWriteBuffer(buffer, 0, 4, NULL);
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  oidnReadBuffer(buffer, 0, 0, NULL);
  EXPECT_OK(device);
  oidnReadBuffer(buffer, 0, SIZE, check);
  CHECK(memcmp(check, data, SIZE) == 0);

  /* asynchronous copies complete by the next sync */
  unsigned char async_in[SIZE], async_out[SIZE];
  for (int i = 0; i < SIZE; ++i)
    async_in[i] = (unsigned char)(3 * i + 1);
  oidnWriteBufferAsync(buffer, 0, SIZE, async_in);
  oidnReadBufferAsync(buffer, 0, SIZE, async_out);
  oidnSyncDevice(device);
  EXPECT_OK(device);
  CHECK(memcmp(async_in, async_out, SIZE) == 0);
  oidnReleaseBuffer(buffer);
}

static void shared(OIDNDevice device)
{
  CHECK(oidnNewSharedBuffer(device, NULL, 16) == NULL);
  EXPECT_ERROR_MSG(device, OIDN_ERROR_INVALID_ARGUMENT, "buffer pointer is null");

  /* the user's memory, no copy; releasing does not free it */
  float* user = api_filled(16, 1.5f);
  OIDNBuffer buffer = oidnNewSharedBuffer(device, user, 16 * sizeof(float));
  CHECK(buffer != NULL);
  CHECK(oidnGetBufferData(buffer) == user);
  CHECK_EQ_INT(oidnGetBufferSize(buffer), 16 * sizeof(float));
  CHECK_EQ_INT(oidnGetBufferStorage(buffer), OIDN_STORAGE_HOST);
  const float two = 2.0f;
  oidnWriteBuffer(buffer, 4 * sizeof(float), sizeof two, &two);
  CHECK(user[4] == 2.0f && user[3] == 1.5f && user[5] == 1.5f);
  user[0] = 9.0f;
  float first = 0;
  oidnReadBuffer(buffer, 0, sizeof first, &first);
  CHECK(first == 9.0f);
  oidnWriteBuffer(buffer, 15 * sizeof(float), 2 * sizeof(float), &two); /* past the end */
  EXPECT_ERROR(device, OIDN_ERROR_INVALID_ARGUMENT);
  EXPECT_OK(device);
  oidnReleaseBuffer(buffer);
  user[1] = 3.0f; /* still ours */
  free(user);

  /* a shared buffer of zero bytes wraps a valid pointer */
  char byte = 0;
  buffer = oidnNewSharedBuffer(device, &byte, 0);
  CHECK(buffer != NULL);
  CHECK_EQ_INT(oidnGetBufferSize(buffer), 0);
  EXPECT_OK(device);
  oidnReleaseBuffer(buffer);
}

void api_test_buffers(void)
{
  OIDNDevice device = api_cpu_device();
  storage(device);
  bounds(device);
  shared(device);
  oidnReleaseDevice(device);
  EXPECT_OK(NULL);
}
