// Test fixtures written with OpenImageIO itself (see exr_fixtures.h).
#include "exr_fixtures.h"

#include <OpenImageIO/imageio.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using OIIO::ImageInput;
using OIIO::ImageOutput;
using OIIO::ImageSpec;
using OIIO::TypeDesc;

extern "C" int fixture_write_exr(const char* path, int width, int height,
                                 const fixture_channel* channels, int count,
                                 const char* const* part_names, int num_parts,
                                 const char* const* attributes, const char* const* views)
{
  return fixture_write_exr_part_views(path, width, height, channels, count, part_names, NULL,
                                      num_parts, attributes, views);
}

extern "C" int fixture_write_exr_part_views(const char* path, int width, int height,
                                            const fixture_channel* channels, int count,
                                            const char* const* part_names,
                                            const char* const* part_views, int num_parts,
                                            const char* const* attributes,
                                            const char* const* views)
{
  auto out = ImageOutput::create(path);
  if (!out)
    return 1;
  std::vector<ImageSpec> specs(size_t(num_parts), ImageSpec(width, height, 0, OIIO::TypeHalf));
  std::vector<std::vector<int>> members(static_cast<size_t>(num_parts));
  for (int c = 0; c < count; ++c) {
    ImageSpec& spec = specs[size_t(channels[c].part)];
    spec.channelnames.push_back(channels[c].name);
    spec.channelformats.push_back(channels[c].half ? OIIO::TypeHalf : OIIO::TypeFloat);
    members[size_t(channels[c].part)].push_back(c);
  }
  for (int p = 0; p < num_parts; ++p) {
    ImageSpec& spec = specs[size_t(p)];
    spec.nchannels = int(spec.channelnames.size());
    spec.alpha_channel = -1;
    spec.attribute("compression", "zip");
    if (num_parts > 1)
      spec.attribute("oiio:subimagename", part_names[p]);
    if (part_views && part_views[p])
      spec.attribute("view", part_views[p]);
    for (int a = 0; attributes && attributes[a]; a += 2)
      spec.attribute(attributes[a], attributes[a + 1]);
    if (views) {
      std::vector<OIIO::ustring> list;
      for (int v = 0; views[v]; ++v)
        list.emplace_back(views[v]);
      spec.attribute("multiView", TypeDesc(TypeDesc::STRING, int(list.size())), list.data());
    }
  }
  const bool opened = num_parts == 1 ? out->open(path, specs[0])
                                     : out->open(path, num_parts, specs.data());
  if (!opened)
    return 1;
  const size_t pixels = size_t(width) * size_t(height);
  for (int p = 0; p < num_parts; ++p) {
    if (p > 0 && !out->open(path, specs[size_t(p)], ImageOutput::AppendSubimage))
      return 1;
    const std::vector<int>& m = members[size_t(p)];
    std::vector<float> buffer(pixels * m.size());
    for (size_t i = 0; i < pixels; ++i)
      for (size_t k = 0; k < m.size(); ++k)
        buffer[i * m.size() + k] = channels[m[k]].plane[i];
    if (!out->write_image(OIIO::TypeFloat, buffer.data()))
      return 1;
  }
  return out->close() ? 0 : 1;
}

extern "C" int fixture_write_shifted_parts(const char* path, int width, int height, int dx,
                                           int dy)
{
  auto out = ImageOutput::create(path);
  if (!out)
    return 1;
  ImageSpec specs[2] = {ImageSpec(width, height, 3, OIIO::TypeHalf),
                        ImageSpec(width, height, 3, OIIO::TypeHalf)};
  specs[0].channelnames = {"ViewLayer.Combined.R", "ViewLayer.Combined.G",
                           "ViewLayer.Combined.B"};
  specs[1].channelnames = {"ViewLayer.Denoising Albedo.R", "ViewLayer.Denoising Albedo.G",
                           "ViewLayer.Denoising Albedo.B"};
  specs[0].attribute("oiio:subimagename", "Combined");
  specs[1].attribute("oiio:subimagename", "Albedo");
  specs[1].x = dx;
  specs[1].y = dy;
  std::vector<float> grey(size_t(width) * size_t(height) * 3, 0.5f);
  if (!out->open(path, 2, specs) || !out->write_image(OIIO::TypeFloat, grey.data()) ||
      !out->open(path, specs[1], ImageOutput::AppendSubimage) ||
      !out->write_image(OIIO::TypeFloat, grey.data()))
    return 1;
  return out->close() ? 0 : 1;
}

extern "C" int fixture_write_mipmapped(const char* path, int width, int height)
{
  auto out = ImageOutput::create(path);
  if (!out || !out->supports("mipmap"))
    return 1;
  ImageSpec spec(width, height, 3, OIIO::TypeHalf);
  spec.channelnames = {"ViewLayer.Combined.R", "ViewLayer.Combined.G", "ViewLayer.Combined.B"};
  spec.tile_width = spec.tile_height = 16;
  spec.attribute("textureformat", "Plain Texture");  // what makes OpenEXR MIP-map
  std::vector<float> ramp(size_t(width) * size_t(height) * 3);
  for (size_t i = 0; i < ramp.size(); ++i)
    ramp[i] = float(i % 97) / 97.0f;
  if (!out->open(path, spec) || !out->write_image(OIIO::TypeFloat, ramp.data()))
    return 1;
  while (spec.width > 1 || spec.height > 1) {
    spec.width = std::max(spec.width / 2, 1);
    spec.height = std::max(spec.height / 2, 1);
    if (!out->open(path, spec, ImageOutput::AppendMIPLevel) ||
        !out->write_image(OIIO::TypeFloat, ramp.data()))
      return 1;
  }
  return out->close() ? 0 : 1;
}

extern "C" int fixture_write_png16(const char* path, int width, int height, int channels,
                                   const float* data)
{
  auto out = ImageOutput::create(path);
  if (!out || !out->open(path, ImageSpec(width, height, channels, OIIO::TypeUInt16)))
    return 1;
  return out->write_image(OIIO::TypeFloat, data) && out->close() ? 0 : 1;
}

extern "C" int fixture_channel_type(const char* path, const char* name)
{
  auto in = ImageInput::open(path);
  if (!in)
    return 0;
  for (int s = 0; in->seek_subimage(s, 0); ++s) {
    const ImageSpec& spec = in->spec();
    for (int c = 0; c < spec.nchannels; ++c)
      if (spec.channelnames[size_t(c)] == name) {
        const TypeDesc t = spec.channelformat(c);
        return t == OIIO::TypeHalf ? 'h' : t == OIIO::TypeFloat ? 'f' : 'o';
      }
  }
  return 0;
}

extern "C" int fixture_attribute(const char* path, const char* name, char* value, size_t size)
{
  auto in = ImageInput::open(path);
  if (!in)
    return 1;
  const OIIO::ParamValue* p = in->spec().find_attribute(name);
  if (!p)
    return 1;
  std::snprintf(value, size, "%s", in->spec().get_string_attribute(name).c_str());
  return 0;
}

extern "C" int fixture_part_count(const char* path)
{
  auto in = ImageInput::open(path);
  if (!in)
    return 0;
  int n = 0;
  while (in->seek_subimage(n, 0))
    ++n;
  return n;
}

extern "C" int fixture_part_of(const char* path, const char* channel, const char* view, char* name,
                               size_t size)
{
  auto in = ImageInput::open(path);
  if (!in)
    return 1;
  for (int s = 0; in->seek_subimage(s, 0); ++s) {
    const ImageSpec& spec = in->spec();
    if (spec.get_string_attribute("view") != view)
      continue;
    for (const std::string& c : spec.channelnames)
      if (c == channel) {
        std::snprintf(name, size, "%s", spec.get_string_attribute("oiio:subimagename").c_str());
        return 0;
      }
  }
  return 1;
}
