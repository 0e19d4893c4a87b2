/* Which passes of a file the filter gets: Blender's names.
 *
 * Cycles writes the beauty as "Combined" and, with denoising data enabled,
 * the unfiltered beauty as "Noisy Image" (then "Combined" may already be
 * denoised, so "Noisy Image" wins), the guides as "Denoising Albedo",
 * "Denoising Normal" and "Denoising Depth", and the world position as
 * "Position".  Files that are one plain image have one unnamed pass. */
#include <string.h>

#include "cli.h"

static const char* const color_names[] = {"Noisy Image", "Combined", ""};

const lull_io_pass* cli_color_pass(const lull_io_image* image, const char* layer,
                                   const char* view)
{
  for (int i = 0; i < 3; ++i) {
    const lull_io_pass* pass = lull_io_find_pass_view(image, layer, color_names[i], view);
    if (pass)
      return pass;
  }
  return NULL;
}

const lull_io_pass* cli_named_pass(const lull_io_image* image, const char* name,
                                   const char* layer, const char* view)
{
  const lull_io_pass* pass = lull_io_find_pass_view(image, layer, name, view);
  if (pass)
    return pass;
  /* "Layer.Pass" names the layer too; the layer may hold dots
   * ("ViewLayer.001.Combined"), the pass not */
  const char* dot = strrchr(name, '.');
  if (!dot || (size_t)(dot - name) >= LULL_IO_NAME_SIZE)
    return NULL;
  char qualified_layer[LULL_IO_NAME_SIZE];
  memcpy(qualified_layer, name, (size_t)(dot - name));
  qualified_layer[dot - name] = '\0';
  if (layer && *layer && strcmp(layer, qualified_layer) != 0)
    return NULL;
  return lull_io_find_pass_view(image, qualified_layer, dot + 1, view);
}

static int seen(const cli_target* targets, int count, const lull_io_pass* pass)
{
  for (int i = 0; i < count; ++i)
    if (strcmp(targets[i].layer, pass->layer) == 0 && strcmp(targets[i].view, pass->view) == 0)
      return 1;
  return 0;
}

int cli_find_targets(const lull_io_image* image, const char* path, const char* layer,
                     const char* view, const char* pass_name, cli_target* targets, int max,
                     char* err, size_t err_size)
{
  int count = 0;
  const int want_layer = layer != NULL;
  layer = layer ? layer : "";
  view = view ? view : "";
  const int want_view = *view != '\0';
  if (!image->passes)
    return snprintf(err, err_size, "%s: no passes", path), 0;
  /* every layer and view that has a colour pass, in file order */
  for (int i = 0; i < image->num_passes && count < max; ++i) {
    const lull_io_pass* p = &image->passes[i];
    if ((want_layer && strcmp(p->layer, layer) != 0) || (want_view && strcmp(p->view, view) != 0))
      continue;
    if (seen(targets, count, p))
      continue;
    const lull_io_pass* color = pass_name && *pass_name
                                    ? cli_named_pass(image, pass_name, p->layer, p->view)
                                    : cli_color_pass(image, p->layer, p->view);
    if (!color || strcmp(color->layer, p->layer) != 0)
      continue;
    cli_target* t = &targets[count++];
    memcpy(t->layer, p->layer, sizeof t->layer);
    memcpy(t->view, p->view, sizeof t->view);
    t->color = color;
  }
  /* a file of one pass (a PFM, a PNG, an EXR with only "Foo.R/G/B") is its colour */
  if (count == 0 && !want_layer && !want_view && !(pass_name && *pass_name) &&
      image->num_passes == 1) {
    memset(&targets[0], 0, sizeof targets[0]);
    targets[0].color = &image->passes[0];
    memcpy(targets[0].layer, image->passes[0].layer, sizeof targets[0].layer);
    memcpy(targets[0].view, image->passes[0].view, sizeof targets[0].view);
    count = 1;
  }
  if (count > 0)
    return count;

  /* say what there is */
  char names[512];
  const size_t used = lull_io_list_names(image, 0, 1, names, sizeof names);
  char view_names[512];
  const size_t views_used = lull_io_list_names(image, 1, 1, view_names, sizeof view_names);
  char quoted[LULL_IO_NAME_SIZE + 2];
  snprintf(quoted, sizeof quoted, "'%s'", view);
  if (want_view && !views_used)
    snprintf(err, err_size, "%s: no view '%s' (the file has no views)", path, view);
  else if (want_view && !strstr(view_names, quoted))
    snprintf(err, err_size, "%s: no view '%s' (views: %s)", path, view, view_names);
  else if (want_layer)
    snprintf(err, err_size, "%s: no layer '%s'%s%s%s", path, layer, used ? " (layers: " : "",
             used ? names : "", used ? ")" : "");
  else if (pass_name && *pass_name)
    snprintf(err, err_size, "%s: no pass '%s'", path, pass_name);
  else
    snprintf(err, err_size, "%s: no colour pass ('Noisy Image', 'Combined' or plain RGB)", path);
  return 0;
}

/* Blender's passes for each guide image, best first: the denoising-data
 * passes (noise-free first-hit features, meant for denoisers), else the
 * ordinary render passes (Diffuse Color stands in for the albedo). */
typedef struct guide_name
{
  const char* image;
  const char* passes[2];
} guide_name;

static const guide_name guides[] = {
    {"albedo", {"Denoising Albedo", "DiffCol"}},
    {"normal", {"Denoising Normal", "Normal"}},
    {"depth", {"Denoising Depth", "Depth"}},
    {"position", {"Position", NULL}},
    {"motion", {"Vector", NULL}}, /* temporal mode's motion vectors */
};

static const guide_name* guide_of(const char* image_name)
{
  for (size_t i = 0; i < sizeof guides / sizeof guides[0]; ++i)
    if (strcmp(guides[i].image, image_name) == 0)
      return &guides[i];
  return NULL;
}

const lull_io_pass* cli_guide_pass(const lull_io_image* image, const char* image_name,
                                   const char* layer, const char* view)
{
  const guide_name* guide = guide_of(image_name);
  for (int i = 0; guide && i < 2 && guide->passes[i]; ++i) {
    const lull_io_pass* pass = lull_io_find_pass_view(image, layer, guide->passes[i], view);
    if (pass)
      return pass;
  }
  return NULL;
}

const lull_io_pass* cli_file_pass(const lull_io_image* image, const char* image_name,
                                  const char* layer, const char* view)
{
  /* the target's layer and view where the file has them (a stereo guide
   * file's right eye for the right eye: each view had got the first's),
   * else any */
  const char* const layers[4] = {layer, NULL, layer, NULL};
  const char* const views[4] = {view, view, NULL, NULL};
  const lull_io_pass* pass = NULL;
  for (int k = 0; !pass && k < 4; ++k)
    pass = cli_guide_pass(image, image_name, layers[k], views[k]);
  for (int k = 0; !pass && k < 4; ++k)
    pass = cli_color_pass(image, layers[k], views[k]);
  if (!pass && image->num_passes == 1)
    pass = &image->passes[0];
  return pass;
}

int cli_pass_channels(const lull_io_pass* pass, int color[3], int* alpha)
{
  int n = 0;
  *alpha = -1;
  for (int c = 0; c < pass->channels; ++c) {
    if (strcmp(pass->channel_names[c], "A") == 0 && *alpha < 0)
      *alpha = c;
    else if (n < 3)
      color[n++] = c;
  }
  return n;
}
