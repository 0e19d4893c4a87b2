/* Channel names to passes, the convention of Blender's multilayer EXR
 * ("Layer.Pass.Channel", views as "Layer.Pass.View.Channel" with the views
 * listed in the header's "multiView" attribute, as OpenEXR's multiview
 * convention puts the view second to last).
 *
 * The grouping is chosen so that lull_io_channel_full_name (the non-empty
 * components joined by dots) gives back every channel's exact name: that
 * is what makes rewriting a file non-destructive. */
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"

enum { MAX_COMPONENTS = 64, CHANNEL_NAME_SIZE = 32 };

typedef struct parsed_name
{
  char layer[LULL_IO_NAME_SIZE];
  char pass[LULL_IO_NAME_SIZE];
  char view[LULL_IO_NAME_SIZE];
  char channel[CHANNEL_NAME_SIZE];
  int implicit_view; /* the default view of a multiview file, not in the name */
} parsed_name;

static int in_list(const char* s, size_t n, const char* const* list, int count)
{
  for (int i = 0; i < count; ++i)
    if (list[i] && strlen(list[i]) == n && strncmp(list[i], s, n) == 0)
      return 1;
  return 0;
}

/* Copies [begin, end) into out when it fits (with its terminator). */
static int copy_span(char* out, size_t size, const char* begin, const char* end)
{
  const size_t n = (size_t)(end - begin);
  if (n >= size)
    return 1;
  memcpy(out, begin, n);
  out[n] = '\0';
  return 0;
}

/* Splits a name into layer, pass, view and channel; returns non-zero when
 * the name does not follow the convention (empty components, a component
 * too long for its field). */
static int parse_name(const char* name, const char* const* views, int num_views, parsed_name* out)
{
  memset(out, 0, sizeof *out);
  const char* starts[MAX_COMPONENTS];
  size_t lengths[MAX_COMPONENTS];
  int n = 0;
  for (const char* p = name;;) {
    const char* dot = strchr(p, '.');
    const size_t len = dot ? (size_t)(dot - p) : strlen(p);
    if (len == 0 || n == MAX_COMPONENTS)
      return 1;
    starts[n] = p;
    lengths[n++] = len;
    if (!dot)
      break;
    p = dot + 1;
  }
  if (copy_span(out->channel, sizeof out->channel, starts[n - 1], starts[n - 1] + lengths[n - 1]))
    return 1;
  int m = n - 1; /* components before the channel */
  if (m >= 1 && num_views > 0 && in_list(starts[m - 1], lengths[m - 1], views, num_views)) {
    if (copy_span(out->view, sizeof out->view, starts[m - 1], starts[m - 1] + lengths[m - 1]))
      return 1;
    --m;
  }
  if (m == 1)
    return copy_span(out->pass, sizeof out->pass, starts[0], starts[0] + lengths[0]);
  if (m >= 2) {
    /* the pass is the component before the channel (and view), the layer
     * all before it, as Blender reads them: its view layers may hold dots
     * (a new one is "ViewLayer.001"), its pass names not */
    if (copy_span(out->layer, sizeof out->layer, starts[0], starts[m - 2] + lengths[m - 2]))
      return 1;
    return copy_span(out->pass, sizeof out->pass, starts[m - 1], starts[m - 1] + lengths[m - 1]);
  }
  return 0;
}

/* Order of the well-known channels inside a pass (R G B A, X Y Z W, U V);
 * others keep the file's order after them.  A lone "Y" (luminance) leads. */
static int channel_rank(const char* channel, int luminance)
{
  static const char* const known[] = {"R", "G", "B", "A", "X", "Y", "Z", "W", "U", "V"};
  if (luminance && strcmp(channel, "Y") == 0)
    return -1;
  for (int i = 0; i < (int)(sizeof known / sizeof known[0]); ++i)
    if (strcmp(channel, known[i]) == 0)
      return i;
  return 100;
}

typedef struct group
{
  int first;   /* index of the first parsed name of the group */
  int count;
  int* members; /* channel indices, file order */
} group;

static int same_key(const parsed_name* a, const parsed_name* b)
{
  return strcmp(a->layer, b->layer) == 0 && strcmp(a->pass, b->pass) == 0 &&
         strcmp(a->view, b->view) == 0;
}

static void sort_members(group* g, const parsed_name* names)
{
  int has_r_or_x = 0;
  for (int i = 0; i < g->count; ++i) {
    const char* c = names[g->members[i]].channel;
    has_r_or_x |= strcmp(c, "R") == 0 || strcmp(c, "X") == 0;
  }
  /* insertion sort: stable, and groups are tiny */
  for (int i = 1; i < g->count; ++i) {
    const int m = g->members[i];
    const int rank = channel_rank(names[m].channel, !has_r_or_x);
    int j = i;
    while (j > 0 && channel_rank(names[g->members[j - 1]].channel, !has_r_or_x) > rank) {
      g->members[j] = g->members[j - 1];
      --j;
    }
    g->members[j] = m;
  }
}

/* Joins the non-empty strings with dots into out; non-zero when too long. */
static int join_nonempty(char* out, size_t size, const char* const* parts, int count)
{
  size_t used = 0;
  out[0] = '\0';
  for (int i = 0; i < count; ++i) {
    if (!parts[i][0])
      continue;
    const size_t n = strlen(parts[i]) + (used ? 1 : 0);
    if (used + n >= size)
      return 1;
    if (used)
      out[used++] = '.';
    memcpy(out + used, parts[i], strlen(parts[i]) + 1);
    used += strlen(parts[i]);
  }
  return 0;
}

static int build_passes(const parsed_name* names, group* groups, int num_groups,
                        lull_io_image* image, lull_io_channel_slot* slots)
{
  int total = 0;
  for (int g = 0; g < num_groups; ++g)
    total += groups[g].count <= LULL_IO_MAX_CHANNELS ? 1
                                                     : 1 + groups[g].count - LULL_IO_MAX_CHANNELS;
  image->passes = calloc((size_t)total, sizeof *image->passes);
  if (!image->passes)
    return 1;
  image->num_passes = total;
  int next = 0;
  for (int g = 0; g < num_groups; ++g) {
    group* gr = &groups[g];
    sort_members(gr, names);
    const parsed_name* key = &names[gr->first];
    lull_io_pass* pass = &image->passes[next];
    memcpy(pass->layer, key->layer, sizeof pass->layer);
    memcpy(pass->name, key->pass, sizeof pass->name);
    memcpy(pass->view, key->view, sizeof pass->view);
    const int kept = gr->count < LULL_IO_MAX_CHANNELS ? gr->count : LULL_IO_MAX_CHANNELS;
    pass->channels = kept;
    for (int c = 0; c < kept; ++c) {
      const int m = gr->members[c];
      memcpy(pass->channel_names[c], names[m].channel, sizeof pass->channel_names[c]);
      slots[m].pass = next;
      slots[m].channel = c;
    }
    ++next;
    /* A fifth channel and beyond: a one-channel pass each, named so that the
     * full name is unchanged ("L.P.V.C" as layer "L", pass "P.V.C"). */
    for (int c = kept; c < gr->count; ++c) {
      const int m = gr->members[c];
      lull_io_pass* extra = &image->passes[next];
      const char* parts[3] = {names[m].pass, names[m].implicit_view ? "" : names[m].view,
                              names[m].channel};
      if (join_nonempty(extra->name, sizeof extra->name, parts, 3))
        return 2;
      memcpy(extra->layer, names[m].layer, sizeof extra->layer);
      extra->channels = 1;
      slots[m].pass = next;
      slots[m].channel = 0;
      ++next;
    }
  }
  return 0;
}

/* Channel i's view given apart from its name, or "". */
static const char* given_view(const char* const* channel_views, int i)
{
  return channel_views && channel_views[i] ? channel_views[i] : "";
}

int lull_io_group_channels(const char* const* names, const char* const* channel_views, int count,
                           const char* const* views, int num_views, lull_io_image* image,
                           lull_io_channel_slot* slots, const char* path, char* err,
                           size_t err_size)
{
  if (count < 1 || count > LULL_IO_MAX_FILE_CHANNELS)
    return lull_io_fail(err, err_size, path, "unsupported number of channels (%d)", count);
  parsed_name* parsed = calloc((size_t)count, sizeof *parsed);
  group* groups = calloc((size_t)count, sizeof *groups);
  int* members = calloc((size_t)count, sizeof *members);
  int status = 0;
  if (!parsed || !groups || !members) {
    status = lull_io_fail(err, err_size, path, "out of memory");
    goto done;
  }
  for (int i = 0; i < count && !status; ++i) {
    const char* name = names[i];
    const char* view = given_view(channel_views, i);
    if (!name || !name[0]) {
      status = lull_io_fail(err, err_size, path, "channel %d has no name", i);
    } else if (parse_name(name, views, view[0] ? 0 : num_views, &parsed[i])) {
      /* outside the convention: a pass named after the whole channel */
      memset(&parsed[i], 0, sizeof parsed[i]);
      if (strlen(name) >= LULL_IO_NAME_SIZE)
        status = lull_io_fail(err, err_size, path, "channel name too long: '%.60s...'", name);
      else
        memcpy(parsed[i].pass, name, strlen(name) + 1);
    }
    if (!status && view[0]) {
      if (strlen(view) >= sizeof parsed[i].view)
        status = lull_io_fail(err, err_size, path, "view name too long: '%.60s...'", view);
      else
        memcpy(parsed[i].view, view, strlen(view) + 1);
    } else if (!status && num_views > 0 && views[0] && !parsed[i].view[0] &&
               strlen(views[0]) < sizeof parsed[i].view) {
      /* OpenEXR's multiview convention: a channel without a view in its
       * name is the default (first) view's ("ViewLayer.Combined.R" beside
       * "ViewLayer.Combined.right.R"); it was read as having no view, so
       * `--view left` found nothing.  Its name in the file stays as it is
       * (lull_io_channel_full_name then differs from it: the reader keeps
       * the file's name apart). */
      memcpy(parsed[i].view, views[0], strlen(views[0]) + 1);
      parsed[i].implicit_view = 1;
    }
    for (int j = 0; j < i && !status; ++j)
      if (name && names[j] && strcmp(name, names[j]) == 0 &&
          strcmp(view, given_view(channel_views, j)) == 0)
        status = lull_io_fail(err, err_size, path, "channel '%.100s'%s%s appears twice", name,
                              view[0] ? " of view " : "", view);
  }
  if (status)
    goto done;

  /* groups in order of first appearance; members[] is carved into them */
  int num_groups = 0;
  for (int i = 0; i < count; ++i) {
    int g = 0;
    while (g < num_groups && !same_key(&parsed[groups[g].first], &parsed[i]))
      ++g;
    if (g == num_groups)
      groups[num_groups++].first = i;
    ++groups[g].count;
    slots[i].pass = g; /* the group for now; build_passes sets the pass */
  }
  int offset = 0;
  for (int g = 0; g < num_groups; ++g) {
    groups[g].members = members + offset;
    offset += groups[g].count;
    groups[g].count = 0;
  }
  for (int i = 0; i < count; ++i) {
    group* g = &groups[slots[i].pass];
    g->members[g->count++] = i;
  }
  const int built = build_passes(parsed, groups, num_groups, image, slots);
  if (built == 1)
    status = lull_io_fail(err, err_size, path, "out of memory");
  else if (built)
    status = lull_io_fail(err, err_size, path, "a channel name is too long");
done:
  free(parsed);
  free(groups);
  free(members);
  return status;
}
