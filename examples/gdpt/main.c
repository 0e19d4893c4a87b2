/* gdpt: renders gradient-domain test data.
 *
 *   gdpt --out DIR [--scene NAME|all] [--size 256x192] [--spp 32]
 *        [--ref-spp 4096] [--seed 1] [--threads N] [--format exr|pfm]
 *        [--histogram-bins B]
 *        [--direct-only | --reference-only [--ref-first-sample K]]
 *   gdpt --out DIR --merge-reference FROM --merge-spp M --ref-spp N [--scene ...]
 *
 * For each scene it renders two independent halves (A, B) of spp/2 samples
 * each with gradients, and a plain path-traced reference, and writes half-
 * float EXRs named like Mitsuba's G-PT:
 *
 *   NAME-A-primal  NAME-A-dx  NAME-A-dy  NAME-A-direct   (and -B-)
 *   NAME-albedo  NAME-normal  NAME-depth                  first-hit features
 *   NAME-var-albedo  NAME-var-normal  NAME-var-depth      their variances
 *   NAME-reference                                         primal + direct
 *   NAME-reference-direct                                  its direct part
 *
 * With --histogram-bins B (1 to 32) each half also writes
 * NAME-A-histogram and NAME-B-histogram: the samples' histograms for the
 * RHF filter, B passes histogram0 .. histogramB-1 of R, G, B counts
 * (channels "histogram0.R" ...; float), each sample's primal + direct
 * value binned as docs/rhf.md says (gamma 2.2, saturation 2.5); the
 * halves' histograms add.
 *
 * The full-sample buffers are the means of the halves; the final image is
 * reconstruct(primal, dx, dy) + direct.  --direct-only writes only
 * NAME-reference-direct (camera rays at --ref-spp: seconds) with the seed
 * of a full run, the same image.  After each scene it prints the
 * gradient self-check (gdpt.h).
 *
 * More reference samples, in parts and on other machines: --reference-only
 * renders only NAME-reference and NAME-reference-direct from samples K ..
 * K + N - 1 of the reference's streams (--ref-first-sample K, --ref-spp N;
 * same seed), which continue a reference of K samples; --format pfm writes
 * float PFMs (what a machine without OpenImageIO can write; full precision
 * for merging).  --merge-reference FROM then replaces DIR's references (N
 * samples, --ref-spp) by the sample-weighted means with FROM's (M samples,
 * --merge-spp, as PFM or EXR): the image a single render of N + M samples
 * gives, to float rounding.  Files are written atomically; a failed
 * run leaves existing files intact and exits non-zero. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdpt.h"
#include "lull_io.h"
#include "rhf_math.h"

typedef struct options
{
  const char* out;
  const char* scene;
  int width, height, spp, ref_spp, threads;
  int direct_only;    /* only NAME-reference-direct */
  int reference_only; /* only NAME-reference and NAME-reference-direct */
  int pfm;            /* write float PFM instead of half EXR */
  int histogram_bins; /* 0: no histograms */
  unsigned long long seed, ref_first_sample;
  const char* merge_from; /* merge mode: the other part's folder */
  int merge_spp;
} options;

static int usage(const char* message)
{
  fprintf(stderr, "gdpt: %s\nusage: gdpt --out DIR [--scene cornell|window|textured|all] "
                  "[--size WxH] [--spp N] [--ref-spp N] [--seed N] [--threads N]\n"
                  "            [--format exr|pfm] [--histogram-bins B]\n"
                  "            [--direct-only | --reference-only [--ref-first-sample K]]\n"
                  "       gdpt --out DIR --merge-reference FROM --merge-spp M --ref-spp N "
                  "[--scene NAME|all]\n",
          message);
  return 2;
}

static int parse_int(const char* s, int lo, int hi, int* out)
{
  char* end = NULL;
  const long v = strtol(s, &end, 10);
  if (!end || *end || v < lo || v > hi)
    return 0;
  *out = (int)v;
  return 1;
}

/* A whole decimal number in [0, 2^64): 0 for anything else ("abc", "-1",
 * "12x" were read as 0, 2^64 - 1 and 12). */
static int parse_u64(const char* s, unsigned long long* out)
{
  char* end = NULL;
  if (!s[0] || s[0] == '-' || s[0] == '+' || s[0] == ' ')
    return 0;
  errno = 0;
  const unsigned long long v = strtoull(s, &end, 10);
  if (!end || *end || errno == ERANGE)
    return 0;
  *out = v;
  return 1;
}

static int parse(int argc, char** argv, options* o)
{
  o->out = NULL;
  o->scene = "all";
  o->width = 256;
  o->height = 192;
  o->spp = 32;
  o->ref_spp = 4096;
  o->threads = 0;
  o->direct_only = 0;
  o->reference_only = 0;
  o->pfm = 0;
  o->seed = 1;
  o->ref_first_sample = 0;
  o->merge_from = NULL;
  o->merge_spp = 0;
  o->histogram_bins = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (strcmp(a, "--direct-only") == 0) {
      o->direct_only = 1;
      continue;
    }
    if (strcmp(a, "--reference-only") == 0) {
      o->reference_only = 1;
      continue;
    }
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v)
      return usage("missing value");
    ++i;
    if (strcmp(a, "--out") == 0)
      o->out = v;
    else if (strcmp(a, "--scene") == 0)
      o->scene = v;
    else if (strcmp(a, "--size") == 0) {
      char tail = '\0';
      if (sscanf(v, "%dx%d%c", &o->width, &o->height, &tail) != 2 || o->width < 2 ||
          o->height < 2 || o->width > 8192 || o->height > 8192)
        return usage("bad --size");
    } else if (strcmp(a, "--spp") == 0) {
      if (!parse_int(v, 2, 1 << 20, &o->spp) || o->spp % 2)
        return usage("--spp must be an even number >= 2");
    } else if (strcmp(a, "--ref-spp") == 0) {
      if (!parse_int(v, 0, 1 << 24, &o->ref_spp))
        return usage("bad --ref-spp");
    } else if (strcmp(a, "--threads") == 0) {
      if (!parse_int(v, 0, 1024, &o->threads))
        return usage("bad --threads");
    } else if (strcmp(a, "--seed") == 0) {
      if (!parse_u64(v, &o->seed))
        return usage("bad --seed (a whole number >= 0)");
    } else if (strcmp(a, "--ref-first-sample") == 0) {
      if (!parse_u64(v, &o->ref_first_sample))
        return usage("bad --ref-first-sample (a whole number >= 0)");
    } else if (strcmp(a, "--format") == 0) {
      if (strcmp(v, "exr") != 0 && strcmp(v, "pfm") != 0)
        return usage("--format must be exr or pfm");
      o->pfm = strcmp(v, "pfm") == 0;
    } else if (strcmp(a, "--histogram-bins") == 0) {
      if (!parse_int(v, 1, LULL_RHF_MAX_BINS, &o->histogram_bins))
        return usage("--histogram-bins must be 1 to 32");
    } else if (strcmp(a, "--merge-reference") == 0) {
      o->merge_from = v;
    } else if (strcmp(a, "--merge-spp") == 0) {
      if (!parse_int(v, 1, 1 << 30, &o->merge_spp))
        return usage("bad --merge-spp");
    } else {
      return usage("unknown option");
    }
  }
  if (!o->out)
    return usage("--out is required");
  if (o->histogram_bins && o->pfm)
    return usage("--histogram-bins writes EXR files: not with --format pfm");
  if (o->direct_only && o->reference_only)
    return usage("--direct-only and --reference-only exclude each other");
  if (o->merge_from && (o->merge_spp <= 0 || o->ref_spp <= 0))
    return usage("--merge-reference needs --merge-spp and --ref-spp (the samples of each part)");
  /* the direct light alone is a reference too (a run of zero samples
   * divided by zero: an all-NaN image) */
  if ((o->reference_only || o->direct_only || o->merge_from) && o->ref_spp <= 0)
    return usage("--ref-spp must be positive here");
  return 0;
}

/* Writes one RGB (or one-channel) half-float image. */
static int write_image(const options* o, const char* scene, const char* what, const float* data,
                       int channels)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s-%s.%s", o->out, scene, what, o->pfm ? "pfm" : "exr");
  lull_io_image image;
  memset(&image, 0, sizeof image);
  image.width = o->width;
  image.height = o->height;
  static const char* const rgb[] = {"R", "G", "B"};
  static const char* const z[] = {"Z"};
  lull_io_pass* pass = lull_io_add_pass(&image, "", "", channels, channels == 1 ? z : rgb, data);
  if (!pass) {
    fprintf(stderr, "gdpt: out of memory\n");
    return 1;
  }
  pass->half = !o->pfm;
  char err[512];
  const int failed = lull_io_write(path, &image, 0, err, sizeof err);
  if (failed)
    fprintf(stderr, "gdpt: %s\n", err);
  lull_io_free(&image);
  return failed;
}

/* Writes a half's histograms: one float EXR of `bins` RGB passes
 * histogram0 .. histogramB-1 (the RHF filter's image names). */
static int write_histogram(const options* o, const char* scene, const char* what,
                           const float* histogram)
{
  const int bins = o->histogram_bins;
  const size_t n = (size_t)o->width * (size_t)o->height;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s-%s.exr", o->out, scene, what);
  lull_io_image image;
  memset(&image, 0, sizeof image);
  image.width = o->width;
  image.height = o->height;
  static const char* const rgb[] = {"R", "G", "B"};
  float* bin = malloc(3 * n * sizeof(float));
  int failed = bin == NULL;
  for (int k = 0; k < bins && !failed; ++k) {
    for (size_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c)
        bin[3 * i + (size_t)c] = histogram[(i * (size_t)bins + (size_t)k) * 3 + (size_t)c];
    char name[32];
    snprintf(name, sizeof name, "histogram%d", k);
    failed = lull_io_add_pass(&image, "", name, 3, rgb, bin) == NULL;
  }
  free(bin);
  if (failed) {
    fprintf(stderr, "gdpt: out of memory\n");
    lull_io_free(&image);
    return 1;
  }
  char err[512];
  failed = lull_io_write(path, &image, 0, err, sizeof err);
  if (failed)
    fprintf(stderr, "gdpt: %s\n", err);
  lull_io_free(&image);
  return failed;
}

/* Prints "label 10% 20% ... 100%" as rows complete. */
typedef struct progress_line
{
  const char* label;
  int printed; /* tenths printed so far, -1 before the label */
} progress_line;

static void show_progress(double done, void* user)
{
  progress_line* line = user;
  const int tenth = (int)(10.0 * done + 1e-9);
  if (line->printed < 0) {
    fprintf(stderr, "  %s", line->label);
    line->printed = 0;
  }
  while (line->printed < tenth)
    fprintf(stderr, " %d%%", 10 * ++line->printed);
  if (tenth == 10)
    fprintf(stderr, "\n");
}

typedef struct half_render
{
  float *primal, *dx, *dy, *direct, *albedo, *normal, *depth, *albedo_var, *normal_var, *depth_var;
  float* histogram; /* NULL without --histogram-bins */
} half_render;

static int alloc_half(half_render* h, size_t n, int bins)
{
  h->histogram = bins ? calloc(n * (size_t)bins * 3, sizeof(float)) : NULL;
  float** all[] = {&h->primal, &h->dx, &h->dy, &h->direct, &h->albedo, &h->normal,
                   &h->depth, &h->albedo_var, &h->normal_var, &h->depth_var};
  int ok = 1;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
    *all[i] = calloc(3 * n, sizeof(float));
    ok &= *all[i] != NULL;
  }
  return ok && (!bins || h->histogram);
}

static void free_half(half_render* h)
{
  float* all[] = {h->primal, h->dx, h->dy, h->direct, h->albedo, h->normal,
                  h->depth, h->albedo_var, h->normal_var, h->depth_var};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    free(all[i]);
  free(h->histogram);
}

static void render_half(const gdpt_scene* scene, const options* o, uint64_t seed,
                        uint64_t first_sample, int spp, int gradients, half_render* h,
                        const char* label)
{
  gdpt_settings settings;
  memset(&settings, 0, sizeof settings);
  settings.spp = spp;
  settings.seed = seed;
  settings.first_sample = first_sample;
  settings.gradients = gradients;
  settings.direct_only = o->direct_only;
  settings.threads = o->threads;
  settings.histogram_bins = o->histogram_bins;
  settings.histogram_gamma = 2.2f;
  settings.histogram_max = 2.5f;
  gdpt_buffers b = {h->primal,     h->dx,         h->dy,         h->direct,
                    h->albedo,     h->normal,     h->depth,      h->albedo_var,
                    h->normal_var, h->depth_var,  gradients ? h->histogram : NULL};
  progress_line line = {label, -1};
  gdpt_render(scene, &settings, &b, show_progress, &line);
}

/* The plain path-traced reference (its own seed stream) and its direct
 * part: NAME-reference (primal + direct) and NAME-reference-direct. */
static int render_reference(const gdpt_scene* scene, const options* o, const char* name,
                            half_render* ref)
{
  const size_t n = (size_t)o->width * (size_t)o->height;
  render_half(scene, o, 3 * o->seed + 3, o->ref_first_sample, o->ref_spp, 0, ref, "reference");
  int failed = write_image(o, name, "reference-direct", ref->direct, 3);
  for (size_t i = 0; i < 3 * n; ++i)
    ref->primal[i] += ref->direct[i];
  if (!failed)
    failed = write_image(o, name, "reference", ref->primal, 3);
  return failed;
}

static int render_scene(const options* o, const char* name)
{
  gdpt_scene scene;
  if (!gdpt_scene_build(&scene, name, o->width, o->height))
    return usage("unknown scene");
  const size_t n = (size_t)o->width * (size_t)o->height;
  half_render a, b, ref;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  memset(&ref, 0, sizeof ref);
  int failed = !alloc_half(&a, n, o->histogram_bins) || !alloc_half(&b, n, o->histogram_bins) ||
               !alloc_half(&ref, n, 0);
  if (failed) {
    fprintf(stderr, "gdpt: out of memory\n");
  } else {
    if (o->direct_only) {
      render_half(&scene, o, 3 * o->seed + 3, o->ref_first_sample, o->ref_spp, 0, &ref,
                  "reference direct");
      failed = write_image(o, name, "reference-direct", ref.direct, 3);
      free_half(&a);
      free_half(&b);
      free_half(&ref);
      return failed;
    }
    if (o->reference_only) {
      fprintf(stderr, "%s: %dx%d, reference samples %llu to %llu\n", name, o->width, o->height,
              o->ref_first_sample, o->ref_first_sample + (unsigned long long)o->ref_spp - 1);
      failed = render_reference(&scene, o, name, &ref);
      free_half(&a);
      free_half(&b);
      free_half(&ref);
      return failed;
    }
    fprintf(stderr, "%s: %dx%d, %d spp G-PT (two halves), reference %d spp\n", name, o->width,
            o->height, o->spp, o->ref_spp);
    render_half(&scene, o, 3 * o->seed + 1, 0, o->spp / 2, 1, &a, "half A");
    render_half(&scene, o, 3 * o->seed + 2, 0, o->spp / 2, 1, &b, "half B");
    const gdpt_check c = gdpt_gradient_check(o->width, o->height, a.primal, b.primal, a.dx, b.dx,
                                             a.dy, b.dy);
    printf("%s: self-check sum d^2 / sum Var[d]: dx %.3f, dy %.3f (about 1: unbiased); "
           "Var[gradient] / Var[primal difference]: dx %.3f, dy %.3f\n",
           name, c.ratio_x, c.ratio_y, c.noise_x, c.noise_y);
    /* features over both halves: means, and the variance of the mean */
    for (size_t i = 0; i < 3 * n; ++i) {
      a.albedo[i] = 0.5f * (a.albedo[i] + b.albedo[i]);
      a.normal[i] = 0.5f * (a.normal[i] + b.normal[i]);
      a.albedo_var[i] = 0.25f * (a.albedo_var[i] + b.albedo_var[i]);
      a.normal_var[i] = 0.25f * (a.normal_var[i] + b.normal_var[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      a.depth[i] = 0.5f * (a.depth[i] + b.depth[i]);
      a.depth_var[i] = 0.25f * (a.depth_var[i] + b.depth_var[i]);
    }
    const struct
    {
      const char* what;
      const float* data;
      int channels;
    } files[] = {
        {"A-primal", a.primal, 3},       {"A-dx", a.dx, 3},
        {"A-dy", a.dy, 3},               {"A-direct", a.direct, 3},
        {"B-primal", b.primal, 3},       {"B-dx", b.dx, 3},
        {"B-dy", b.dy, 3},               {"B-direct", b.direct, 3},
        {"albedo", a.albedo, 3},         {"normal", a.normal, 3},
        {"depth", a.depth, 1},           {"var-albedo", a.albedo_var, 3},
        {"var-normal", a.normal_var, 3}, {"var-depth", a.depth_var, 1},
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0] && !failed; ++f)
      failed = write_image(o, name, files[f].what, files[f].data, files[f].channels);
    if (!failed && o->histogram_bins && !o->pfm)
      failed = write_histogram(o, name, "A-histogram", a.histogram) ||
               write_histogram(o, name, "B-histogram", b.histogram);
    if (!failed && o->ref_spp > 0)
      failed = render_reference(&scene, o, name, &ref);
  }
  free_half(&a);
  free_half(&b);
  free_half(&ref);
  return failed;
}

/* Reads dir/NAME-WHAT.pfm, else .exr: one pass of 3 channels, width x
 * height of the options. */
static int read_part(const options* o, const char* dir, const char* name, const char* what,
                     lull_io_image* image)
{
  char path[4096], err[512];
  int failed = 1;
  for (int ext = 0; ext < 2 && failed; ++ext) {
    snprintf(path, sizeof path, "%s/%s-%s.%s", dir, name, what, ext == 0 ? "pfm" : "exr");
    FILE* f = fopen(path, "rb");
    if (!f)
      continue;
    fclose(f);
    failed = lull_io_read(path, image, err, sizeof err);
    if (failed) {
      fprintf(stderr, "gdpt: %s\n", err);
      return 1;
    }
  }
  if (failed) {
    fprintf(stderr, "gdpt: no %s/%s-%s.pfm or .exr\n", dir, name, what);
    return 1;
  }
  if (image->width != o->width || image->height != o->height || image->num_passes != 1 ||
      image->passes[0].channels != 3) {
    fprintf(stderr, "gdpt: %s is not a %dx%d RGB image (--size)\n", path, o->width, o->height);
    lull_io_free(image);
    return 1;
  }
  return 0;
}

/* --merge-reference: out's references (ref_spp samples) and from's
 * (merge_spp samples) -> their sample-weighted means, written to out. */
static int merge_scene(const options* o, const char* name)
{
  static const char* const whats[] = {"reference", "reference-direct"};
  const double total = (double)o->ref_spp + (double)o->merge_spp;
  const float wa = (float)(o->ref_spp / total), wb = (float)(o->merge_spp / total);
  const size_t count = 3 * (size_t)o->width * (size_t)o->height;
  float* merged[2] = {malloc(count * sizeof(float)), malloc(count * sizeof(float))};
  int failed = !merged[0] || !merged[1];
  for (int k = 0; k < 2 && !failed; ++k) {
    lull_io_image a, b;
    failed = read_part(o, o->out, name, whats[k], &a);
    if (failed)
      break;
    failed = read_part(o, o->merge_from, name, whats[k], &b);
    if (!failed) {
      for (size_t i = 0; i < count; ++i)
        merged[k][i] = wa * a.passes[0].data[i] + wb * b.passes[0].data[i];
      lull_io_free(&b);
    }
    lull_io_free(&a);
  }
  /* both files are written only once both merged images exist */
  for (int k = 0; k < 2 && !failed; ++k)
    failed = write_image(o, name, whats[k], merged[k], 3);
  if (!failed)
    fprintf(stderr, "%s: reference %d + %d samples\n", name, o->ref_spp, o->merge_spp);
  free(merged[0]);
  free(merged[1]);
  return failed;
}

int main(int argc, char** argv)
{
  options o;
  const int bad = parse(argc, argv, &o);
  if (bad)
    return bad;
  int (*job)(const options*, const char*) = o.merge_from ? merge_scene : render_scene;
  if (strcmp(o.scene, "all") != 0)
    return job(&o, o.scene);
  for (const char* const* name = gdpt_scene_names(); *name; ++name)
    if (job(&o, *name))
      return 1;
  return 0;
}
