/* Helpers of the GPU tests: running a filter through the public API on any
 * device with float images, comparing outputs, synthetic scenes, and the
 * exported test renders. */
#pragma once

#include <stddef.h>

#include <OpenImageDenoise/oidn.h>

typedef struct gpu_image
{
  const char* name;
  const float* data; /* width x height x channels floats */
  int channels;
} gpu_image;

typedef struct gpu_param
{
  const char* name;
  int is_float;
  double value;
} gpu_param;

/* A new device of `type`, committed; NULL when it cannot be created. */
OIDNDevice gpu_new_device(OIDNDeviceType type);

/* Runs `type` on device: images are copied into new buffers, the output
 * (out_channels floats per pixel) is read back into out.  Returns the
 * device's error code (OIDN_ERROR_NONE on success). */
int gpu_run_filter(OIDNDevice device, const char* type, int width, int height,
                   const gpu_image* images, int num_images, int out_channels,
                   const gpu_param* params, int num_params, float* out);

/* gpu_run_filter with every input image `input_offset` bytes into its
 * buffer (an offset that is no multiple of 4 leaves the floats unaligned). */
int gpu_run_filter_at(OIDNDevice device, const char* type, int width, int height,
                      const gpu_image* images, int num_images, int out_channels,
                      const gpu_param* params, int num_params, float* out, size_t input_offset);

/* The device's pending error code, reported on stderr (prefixed `what`)
 * unless OIDN_ERROR_NONE. */
int gpu_device_error(OIDNDevice device, const char* what);

/* mean |a - b| / mean |b| over n values. */
double gpu_rel_l1(const float* a, const float* b, size_t n);

/* Largest |a - b| / (|b| + floor) over n values; NaN counts as infinite. */
double gpu_max_rel_diff(const float* a, const float* b, size_t n, double floor);

/* Largest |a - b| over the pixels at least `margin` pixels from the border
 * (channels values per pixel); -1 when no such pixel exists. */
double gpu_interior_max_abs_diff(const float* a, const float* b, int width, int height,
                                 int channels, int margin);

/* Mean |a - b| / mean |b| over the pixels closer than `margin` to the border. */
double gpu_border_rel_l1(const float* a, const float* b, int width, int height, int channels,
                         int margin);

/* The permuted schedule against the CPU backend or the baseline, mean
 * |perm - ref| / mean |ref|, on images without an interior (every pixel
 * within gpu_atrous_margin of the border; the border tolerances of the
 * tests hold only where there is an interior).  The permuted schedule
 * mirrors the taps that leave the image back into it (Dolp et al. 2024
 * §4.1: the embedding is mirrored so that every level runs one stencil),
 * where the CPU and the baseline skip them and renormalise by the taps
 * left; in a tiny image most taps of every level leave it, so the two
 * weight its pixels differently throughout.  Measured in the kernels' CPU
 * emulation for every size in {1..9, 15, 17}^2 at 5 and 10 levels
 * (atrous_emulation_test.cu, run_tiny_images): 0.21 at most (1 wide x 2
 * high; 4x4 at 10 levels), 2x2 0.09, 9x2 0.14, 2x9 0.04, 1x1 1e-7,
 * N x 1 up to 0.06; packedGuides the same.  0.3 leaves 40% margin and
 * still flags a lost or swapped channel or zeros (near 1). */
#define GPU_ATROUS_TINY_TOLERANCE 0.3

/* Pixels on each side that level-by-level border effects of an à-trous run
 * of `iterations` levels can reach: the taps (2 (2^N - 1)) plus the 3x3
 * variance prefilter of every level. */
int gpu_atrous_margin(int iterations);

/* A synthetic scene: colour with edges, a smooth gradient and noise,
 * albedo and normals of two regions, a depth ramp, positions. */
typedef struct gpu_scene
{
  int width, height;
  float *color, *albedo, *normal, *depth, *position; /* 3, 3, 3, 1, 3 channels */
} gpu_scene;

void gpu_scene_make(gpu_scene* s, int width, int height, unsigned seed);

/* The à-trous tests' inputs from a scene: colour with `channels` channels
 * (a fourth one is an alpha ramp; clamped to [.., 1] for LDR), a 3-channel
 * variance image, and with `poison` non-finite values in the colour and the
 * guides and a missing (zero) normal.  color: channels floats per pixel,
 * variance: 3. */
void gpu_scene_atrous_inputs(gpu_scene* s, int channels, int ldr, int poison, float* color,
                             float* variance);
void gpu_scene_free(gpu_scene* s);

/* Guides (n pixels of 3-channel albedo and normal) narrowed to what OIDN
 * 2.1+ also takes, and expanded back by its rule (lull_expand_rgb's,
 * written out here): albedo1 is the albedo's green channel, albedo3 =
 * (g, g, g); normal2 the normal's (x, y), normal3 = (x, y, y).  Rounded to
 * fp16 first, so that half views of albedo1 and normal2 hold the same
 * values.  New arrays, freed by gpu_narrow_guides_free. */
typedef struct gpu_narrow_guides
{
  float *albedo1, *albedo3, *normal2, *normal3;
} gpu_narrow_guides;

void gpu_narrow_guides_make(const float* albedo, const float* normal, size_t n,
                            gpu_narrow_guides* g);
void gpu_narrow_guides_free(gpu_narrow_guides* g);

/* The exported passes of a test render at 4 spp (export_testdata.py):
 * data[0..3] = colour, albedo, normal (3 channels) and depth (1), new
 * arrays or NULL when absent or of another size than the colour; width,
 * height and channels are the colour's. */
void gpu_read_render(const char* scene, float* data[4], int* width, int* height, int* channels);

/* Reads a PFM file (1 or 3 channels) into a new array; NULL when absent. */
float* gpu_read_pfm(const char* path, int* width, int* height, int* channels);
