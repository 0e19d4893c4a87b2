/* `lull denoise --temporal`: frames in order through filters that keep
 * their history (docs/temporal.md), and what a sequence needs around that:
 *
 *   - a filter per layer and view, kept from frame to frame;
 *   - a new history at a cut: a frame of --cut, a frame whose EXR names
 *     another camera than the one before (Blender's "Camera" metadata, which
 *     it writes by default and which changes at a camera marker), a gap in
 *     the frame numbers, a frame after one that failed;
 *   - warm-up: the frames before the first one a run denoises (in its
 *     shot, up to --warmup of them) are run through the filter first, their
 *     outputs not written, so that a resumed run or a shard starts with the
 *     history an uninterrupted run would have had there (to within the
 *     weight of the frames further back: 0.8^16 = 3% at the defaults);
 *   - shards: --shard I/N takes the I-th of N contiguous chunks of the
 *     frames (frame k mod N would leave every shard a history one frame in
 *     N long). */
#include <stdlib.h>
#include <string.h>

#include "denoise.h"

/* Whether frame starts a shot by --cut (cuts ascending). */
static int is_cut(long frame, const long* cuts, long num_cuts)
{
  for (long i = 0; i < num_cuts; ++i)
    if (cuts[i] == frame)
      return 1;
  return 0;
}

void cli_temporal_roles(const long* frames, long count, const int* needed, const long* cuts,
                        long num_cuts, int shard_index, int shard_count, int warmup,
                        unsigned char* roles)
{
  long first = 0, end = count;
  if (shard_count > 0) {
    /* chunk i of N: frames [i n / N, (i + 1) n / N) */
    first = (long)((long long)count * shard_index / shard_count);
    end = (long)((long long)count * (shard_index + 1) / shard_count);
  }
  for (long i = 0; i < count; ++i)
    roles[i] = i >= first && i < end && needed[i] ? CLI_ROLE_DENOISE : CLI_ROLE_SKIP;
  for (long i = 0; i < count; ++i) {
    if (roles[i] != CLI_ROLE_DENOISE)
      continue;
    /* the frames before it in its shot, as far as the history reaches */
    for (long j = i - 1, n = 0; j >= 0 && n < warmup; --j, ++n) {
      if (frames[j] != frames[j + 1] - 1 || is_cut(frames[j + 1], cuts, num_cuts))
        break;
      if (roles[j] == CLI_ROLE_SKIP)
        roles[j] = CLI_ROLE_WARMUP;
    }
  }
}

int cli_temporal_starts_shot(const cli_temporal* t, long frame, const long* cuts, long num_cuts)
{
  return t->broken || t->last_frame == CLI_NO_FRAME || frame != t->last_frame + 1 ||
         is_cut(frame, cuts, num_cuts);
}

/* The frame's camera from its metadata ("" when it has none). */
static void camera_of(const lull_io_image* image, char* out, size_t size)
{
  lull_io_file_info info;
  lull_io_get_file_info(image, &info);
  out[0] = '\0';
  for (int i = 0; i < info.attributes; ++i) {
    char name[64], value[256];
    if (lull_io_get_attribute(image, i, name, sizeof name, value, sizeof value) == 0 &&
        strcmp(name, "Camera") == 0) {
      /* a string attribute reads back quoted */
      const size_t n = strlen(value);
      const int quoted = n >= 2 && value[0] == '"' && value[n - 1] == '"';
      snprintf(out, size, "%.*s", quoted ? (int)n - 2 : (int)n, value + quoted);
      return;
    }
  }
}

int cli_temporal_camera_changed(cli_temporal* t, const lull_io_image* image)
{
  char camera[sizeof t->camera];
  camera_of(image, camera, sizeof camera);
  /* a file without the metadata says nothing */
  const int changed = t->last_frame != CLI_NO_FRAME && camera[0] && t->camera[0] &&
                      strcmp(camera, t->camera) != 0;
  memcpy(t->camera, camera, sizeof camera);
  return changed;
}

OIDNFilter cli_temporal_filter(cli_temporal* t, OIDNDevice device, const char* type,
                               const char* layer, const char* view)
{
  for (int i = 0; i < t->count; ++i)
    if (strcmp(t->layers[i], layer) == 0 && strcmp(t->views[i], view) == 0)
      return t->filters[i];
  if (t->count == CLI_MAX_TARGETS)
    return NULL;
  OIDNFilter f = oidnNewFilter(device, type);
  if (!f)
    return NULL;
  snprintf(t->layers[t->count], sizeof t->layers[t->count], "%s", layer);
  snprintf(t->views[t->count], sizeof t->views[t->count], "%s", view);
  t->filters[t->count++] = f;
  return f;
}

void cli_temporal_init(cli_temporal* t)
{
  memset(t, 0, sizeof *t);
  t->last_frame = CLI_NO_FRAME;
}

void cli_temporal_release(cli_temporal* t)
{
  for (int i = 0; i < t->count; ++i)
    oidnReleaseFilter(t->filters[i]);
  t->count = 0;
}
