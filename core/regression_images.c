/* A Regression run's images as both backends read them (regression.h):
 * the features of each half, and views of a tile. */
#include "regression.h"

lull_regression_images lull_regression_crop(const lull_regression_images* im, int x0, int y0,
                                            int w, int h)
{
  lull_regression_images c;
  c.color = lull_image_region(&im->color, x0, y0, w, h);
  c.color_a = lull_image_region(&im->color_a, x0, y0, w, h);
  c.color_b = lull_image_region(&im->color_b, x0, y0, w, h);
  c.albedo = lull_image_region(&im->albedo, x0, y0, w, h);
  c.albedo_a = lull_image_region(&im->albedo_a, x0, y0, w, h);
  c.albedo_b = lull_image_region(&im->albedo_b, x0, y0, w, h);
  c.normal = lull_image_region(&im->normal, x0, y0, w, h);
  c.normal_a = lull_image_region(&im->normal_a, x0, y0, w, h);
  c.normal_b = lull_image_region(&im->normal_b, x0, y0, w, h);
  c.depth = lull_image_region(&im->depth, x0, y0, w, h);
  c.depth_a = lull_image_region(&im->depth_a, x0, y0, w, h);
  c.depth_b = lull_image_region(&im->depth_b, x0, y0, w, h);
  c.position = lull_image_region(&im->position, x0, y0, w, h);
  c.position_a = lull_image_region(&im->position_a, x0, y0, w, h);
  c.position_b = lull_image_region(&im->position_b, x0, y0, w, h);
  c.variance = lull_image_region(&im->variance, x0, y0, w, h);
  c.output = lull_image_region(&im->output, x0, y0, w, h);
  c.output_variance = lull_image_region(&im->output_variance, x0, y0, w, h);
  return c;
}

static int has(const lull_image* image)
{
  return image->data != NULL;
}

/* half b's own image of a feature where given, else the one given once */
static const lull_image* half_or_once(const lull_image* a, const lull_image* b_image,
                                      const lull_image* once, int b)
{
  const lull_image* own = b ? b_image : a;
  return has(own) ? own : once;
}

lull_regression_features lull_regression_half_features(const lull_regression_images* im, int b)
{
  lull_regression_features s;
  s.albedo = half_or_once(&im->albedo_a, &im->albedo_b, &im->albedo, b);
  s.normal = half_or_once(&im->normal_a, &im->normal_b, &im->normal, b);
  s.depth = half_or_once(&im->depth_a, &im->depth_b, &im->depth, b);
  s.position = half_or_once(&im->position_a, &im->position_b, &im->position, b);
  return s;
}

int lull_regression_feature_channels(const lull_regression_features* s)
{
  return (has(s->albedo) ? 3 : 0) + (has(s->normal) ? 3 : 0) +
         (has(s->depth) ? 1 : (has(s->position) ? 3 : 0));
}

int lull_regression_feature_halves(const lull_regression_images* im)
{
  return lull_regression_has_halves(im) && (has(&im->albedo_a) || has(&im->normal_a) ||
                                            has(&im->depth_a) || has(&im->position_a));
}

int lull_regression_feature_shared(const lull_regression_images* im, int k)
{
  const lull_regression_features a = lull_regression_half_features(im, 0);
  const lull_regression_features b = lull_regression_half_features(im, 1);
  const lull_image* const images_a[] = {a.albedo, a.normal, has(a.depth) ? a.depth : a.position};
  const lull_image* const images_b[] = {b.albedo, b.normal, has(b.depth) ? b.depth : b.position};
  for (int f = 0; f < 3; ++f) {
    if (!has(images_a[f]))
      continue;
    const int channels = f == 2 && has(a.depth) ? 1 : 3;
    if (k < channels)
      return images_a[f] == images_b[f];
    k -= channels;
  }
  return 0;
}
