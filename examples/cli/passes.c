/* Which passes of a file the filter gets: Blender's names.
 *
 * Cycles writes the beauty as "Combined" and, with denoising data enabled,
 * the unfiltered beauty as "Noisy Image" (then "Combined" may already be
 * denoised, so "Noisy Image" wins), the guides as "Denoising Albedo",
 * "Denoising Normal" and "Denoising Depth", and the world position as
 * "Position".  Files that are one plain image have one unnamed pass.
 *
 * Two halves of a render (two renders of half the samples with different
 * seeds, for the Regression filter) can share one file: each pass of a
 * half is named as the pass with " A" or " B" appended, so a compositor's
 * File Output node (Multilayer EXR) with inputs "Combined A", "Combined B",
 * "Denoising Albedo A", ... writes a file the tool reads as halves. */
#include <stdio.h>
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

int cli_half_name(const char* name, int half, char* out, size_t size)
{
  const int n = snprintf(out, size, "%s %c", name, half ? 'B' : 'A');
  return n < 0 || (size_t)n >= size;
}

int cli_color_halves(const lull_io_image* image, const char* layer, const char* view,
                     const char* const names[2], const lull_io_pass** a, const lull_io_pass** b)
{
  *a = *b = NULL;
  if (names && names[0][0] && names[1][0]) {
    *a = cli_named_pass(image, names[0], layer, view);
    *b = cli_named_pass(image, names[1], layer, view);
    return *a && *b ? 1 : *a || *b ? -1 : 0;
  }
  for (int i = 0; i < 2; ++i) { /* "Noisy Image", "Combined" */
    char name_a[LULL_IO_NAME_SIZE], name_b[LULL_IO_NAME_SIZE];
    if (cli_half_name(color_names[i], 0, name_a, sizeof name_a) ||
        cli_half_name(color_names[i], 1, name_b, sizeof name_b))
      continue;
    *a = lull_io_find_pass_view(image, layer, name_a, view);
    *b = lull_io_find_pass_view(image, layer, name_b, view);
    if (*a || *b)
      return *a && *b ? 1 : -1;
  }
  return 0;
}

static int seen(const cli_target* targets, int count, const lull_io_pass* pass)
{
  for (int i = 0; i < count; ++i)
    if (strcmp(targets[i].layer, pass->layer) == 0 && strcmp(targets[i].view, pass->view) == 0)
      return 1;
  return 0;
}

int cli_find_targets(const lull_io_image* image, const char* path, const char* layer,
                     const char* view, const char* pass_name, const char* const* halves,
                     cli_target* targets, int max, char* err, size_t err_size)
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
    if (halves) {
      const lull_io_pass *a, *b;
      const int found = cli_color_halves(image, p->layer, p->view, halves, &a, &b);
      if (found < 0) {
        const lull_io_pass* one = a ? a : b;
        char where[2 * LULL_IO_NAME_SIZE + 32] = "";
        if (one->layer[0] || one->view[0])
          snprintf(where, sizeof where, " (layer '%s'%s%s%s)", one->layer,
                   one->view[0] ? ", view '" : "", one->view, one->view[0] ? "'" : "");
        char missing[LULL_IO_NAME_SIZE];
        snprintf(missing, sizeof missing, "%s", halves[0][0] ? (a ? halves[1] : halves[0]) : one->name);
        if (!halves[0][0] && missing[0]) /* "Combined A" -> "Combined B" */
          missing[strlen(missing) - 1] = a ? 'B' : 'A';
        snprintf(err, err_size, "%s: pass '%s'%s has no other half: no '%s'", path, one->name,
                 where, missing);
        return 0;
      }
      if (found > 0 && strcmp(a->layer, p->layer) == 0) {
        cli_target* t = &targets[count++];
        memcpy(t->layer, p->layer, sizeof t->layer);
        memcpy(t->view, p->view, sizeof t->view);
        t->color = a;
        t->color_b = b;
        continue;
      }
      if (halves[0][0])
        continue; /* named halves: only the layers that have them */
    }
    const lull_io_pass* color = pass_name && *pass_name
                                    ? cli_named_pass(image, pass_name, p->layer, p->view)
                                    : cli_color_pass(image, p->layer, p->view);
    if (!color || strcmp(color->layer, p->layer) != 0)
      continue;
    cli_target* t = &targets[count++];
    memcpy(t->layer, p->layer, sizeof t->layer);
    memcpy(t->view, p->view, sizeof t->view);
    t->color = color;
    t->color_b = NULL;
  }
  /* a file of one pass (a PFM, a PNG, an EXR with only "Foo.R/G/B") is its colour */
  if (count == 0 && !want_layer && !want_view && !(pass_name && *pass_name) &&
      !(halves && halves[0][0]) && image->num_passes == 1) {
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
  else if (halves && halves[0][0])
    snprintf(err, err_size, "%s: no passes '%s' and '%s' (the halves)", path, halves[0],
             halves[1]);
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
  if (!guide) /* no Blender pass: a pass named as the image (RHF's histogram0, ...) */
    return lull_io_find_pass_view(image, layer, image_name, view);
  for (int i = 0; i < 2 && guide->passes[i]; ++i) {
    const lull_io_pass* pass = lull_io_find_pass_view(image, layer, guide->passes[i], view);
    if (pass)
      return pass;
  }
  return NULL;
}

const lull_io_pass* cli_guide_half(const lull_io_image* image, const char* image_name,
                                   const char* layer, const char* view, int half)
{
  const guide_name* guide = guide_of(image_name);
  for (int i = 0; guide && i < 2 && guide->passes[i]; ++i) {
    char name[LULL_IO_NAME_SIZE];
    if (cli_half_name(guide->passes[i], half, name, sizeof name))
      continue;
    const lull_io_pass* pass = lull_io_find_pass_view(image, layer, name, view);
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
