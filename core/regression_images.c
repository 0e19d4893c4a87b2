/* Views of a Regression run's images (regression.h), shared by the
 * backends' tiled runs. */
#include "regression.h"

static lull_image crop(const lull_image* image, int x0, int y0, int w, int h)
{
  lull_image v = *image;
  if (!image->data)
    return v;
  v.data = image->data + (size_t)y0 * image->row_stride + (size_t)x0 * image->pixel_stride;
  v.width = w;
  v.height = h;
  return v;
}

lull_regression_images lull_regression_crop(const lull_regression_images* im, int x0, int y0,
                                            int w, int h)
{
  lull_regression_images c;
  c.color = crop(&im->color, x0, y0, w, h);
  c.color_a = crop(&im->color_a, x0, y0, w, h);
  c.color_b = crop(&im->color_b, x0, y0, w, h);
  c.albedo = crop(&im->albedo, x0, y0, w, h);
  c.albedo_a = crop(&im->albedo_a, x0, y0, w, h);
  c.albedo_b = crop(&im->albedo_b, x0, y0, w, h);
  c.normal = crop(&im->normal, x0, y0, w, h);
  c.normal_a = crop(&im->normal_a, x0, y0, w, h);
  c.normal_b = crop(&im->normal_b, x0, y0, w, h);
  c.depth = crop(&im->depth, x0, y0, w, h);
  c.depth_a = crop(&im->depth_a, x0, y0, w, h);
  c.depth_b = crop(&im->depth_b, x0, y0, w, h);
  c.position = crop(&im->position, x0, y0, w, h);
  c.position_a = crop(&im->position_a, x0, y0, w, h);
  c.position_b = crop(&im->position_b, x0, y0, w, h);
  c.variance = crop(&im->variance, x0, y0, w, h);
  c.output = crop(&im->output, x0, y0, w, h);
  c.output_variance = crop(&im->output_variance, x0, y0, w, h);
  return c;
}
