// Image files through OpenImageIO: EXR (single- and multilayer, single- and
// multi-part), PNG, HDR, TIFF, JPEG and the rest of what OpenImageIO reads.
//
// The one C++ translation unit of lull_io: everything here is reached
// through the C functions declared in io_internal.h, and no exception
// leaves them.
//
// What a rewrite keeps (so adding a pass to a Blender render is
// non-destructive): each part's header attributes and data window, the
// part each channel lived in under its name in the file, and each
// channel's storage type (half or float, from the pass's `half` flag;
// other types as they were).
//
// Views in parts: Blender writes a stereo render as multilayer EXR
// ("Multi-View" views format) in one part per pass and view, named
// "ViewLayer.Combined-left" with a "view" attribute, the channels of both
// views' parts under the same names ("ViewLayer.Combined.R").  Each
// channel's view is the part's, given to the grouping (channel_names.c)
// apart from its name, so the passes come apart by view; a new pass of a
// view gets a part of its own in the same style.
#include <OpenImageIO/filesystem.h>
#include <OpenImageIO/imageio.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "atrous_math.h"
#include "io_internal.h"

namespace {

using OIIO::ImageInput;
using OIIO::ImageOutput;
using OIIO::ImageSpec;
using OIIO::TypeDesc;

struct Part
{
  ImageSpec spec;                  // as read: attributes, windows, channels
  std::set<std::string> channels;  // full names of the channels that live here
  // full name -> name in the file, where they differ: bare names of a named
  // part ("R" -> "Part.R"), names in a part of a view (see above)
  std::map<std::string, std::string> file_names;
};

// What lull_io_metadata.oiio points to.
struct State
{
  std::string format;
  std::vector<Part> parts;
  std::map<std::string, TypeDesc> channel_types;  // full name -> type in the file
  bool part_views = false;  // views in parts' "view" attributes (see above)
  std::vector<std::pair<std::string, std::string>> attributes;  // for lull_io_get_attribute
};

// OpenImageIO's messages can span lines; ours are one line.
std::string one_line(std::string message)
{
  while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
    message.pop_back();
  std::replace(message.begin(), message.end(), '\n', ';');
  return message.empty() ? std::string("unknown error") : message;
}

int fail(char* err, size_t err_size, const char* path, const std::string& message)
{
  return lull_io_fail(err, err_size, path, "%s", one_line(message).c_str());
}

// Codecs that lose information (OpenEXR: DWAA/DWAB, and B44/B44A on
// half channels); PXR24 only rounds float32 to 24 bits, which a second
// rounding keeps.
bool is_lossy(const std::string& compression)
{
  const std::string codec = compression.substr(0, compression.find(':'));  // "dwaa:45"
  return codec == "dwaa" || codec == "dwab" || codec == "b44" || codec == "b44a";
}

bool is_integer(TypeDesc type)
{
  return type.basetype != TypeDesc::FLOAT && type.basetype != TypeDesc::HALF &&
         type.basetype != TypeDesc::DOUBLE;
}

TypeDesc channel_type(const ImageSpec& spec, int c)
{
  return spec.channelformats.empty() ? spec.format : spec.channelformats[size_t(c)];
}

// The views of a multiview file, from its "multiView" attribute.
std::vector<std::string> views_of(const ImageSpec& spec)
{
  std::vector<std::string> views;
  const OIIO::ParamValue* p = spec.find_attribute("multiView");
  if (p && p->type().basetype == TypeDesc::STRING)
    for (int i = 0; i < int(p->type().numelements()); ++i)
      views.emplace_back(p->get<OIIO::ustring>(i).string());
  return views;
}

// The view of a part of a multi-part file ("" for none).
std::string part_view(const ImageSpec& spec, bool multipart)
{
  return multipart ? std::string(spec.get_string_attribute("view")) : std::string();
}

// Part i's channel names as they are grouped into passes: bare names
// ("R") of a named part of a multi-part file read as "Part.R", so parts
// that reuse "R" stay apart; in a part of a view the part's name less the
// view goes first ("left": nothing, a single-layer stereo file's colour;
// Blender's "ViewLayer.Combined-left": "ViewLayer.Combined").  The view
// itself is the part's, given to the grouping apart from the names, so
// views with dots in their names and names near the length limit read as
// any other.
std::vector<std::string> part_channel_names(const ImageSpec& spec, bool multipart,
                                            const std::string& view)
{
  std::string part_name = spec.get_string_attribute("oiio:subimagename");
  const std::string suffix = "-" + view;
  if (!view.empty() && part_name == view)
    part_name.clear();
  else if (!view.empty() && part_name.size() > suffix.size() &&
           part_name.compare(part_name.size() - suffix.size(), suffix.size(), suffix) == 0)
    part_name.resize(part_name.size() - suffix.size());
  bool bare = false;
  for (const std::string& name : spec.channelnames)
    bare |= name.find('.') == std::string::npos;
  const std::string prefix = multipart && bare && !part_name.empty() ? part_name + "." : "";
  std::vector<std::string> names;
  for (const std::string& name : spec.channelnames)
    names.push_back(name.find('.') == std::string::npos ? prefix + name : name);
  return names;
}

int read_file(const char* path, lull_io_image* image, char* err, size_t err_size)
{
  ImageSpec config;
  config.attribute("oiio:UnassociatedAlpha", 1);  // values as stored: no premultiplication
  auto in = ImageInput::open(path, &config);
  if (!in)
    return fail(err, err_size, path, OIIO::geterror());

  auto state = std::make_unique<State>();
  state->format = in->format_name();
  const bool exr = state->format == "openexr";
  // Every part of an EXR; the first image of anything else (TIFF pages, GIF frames).
  for (int s = 0; in->seek_subimage(s, 0); ++s) {
    state->parts.push_back(Part{in->spec(), {}, {}});
    if (!exr)
      break;
  }
  if (state->parts.empty())
    return fail(err, err_size, path, in->geterror());
  // MIP or RIP levels (a texture): only level 0 is read, so a rewrite of
  // the file would drop the others
  int mip_levels = 1;
  for (size_t s = 0; s < state->parts.size(); ++s) {
    int m = 1;
    while (m < 64 && in->seek_subimage(int(s), m))
      ++m;
    mip_levels = std::max(mip_levels, m);
  }
  const ImageSpec& first = state->parts[0].spec;
  for (const Part& part : state->parts) {
    const ImageSpec& spec = part.spec;
    if (spec.deep)
      return lull_io_fail(err, err_size, path, "deep images are not supported");
    if (!lull_io_size_ok(spec.width, spec.height, spec.nchannels) || spec.depth != 1)
      return lull_io_fail(err, err_size, path, "invalid image size %dx%d with %d channels",
                          spec.width, spec.height, spec.nchannels);
    if (spec.width != first.width || spec.height != first.height)
      return lull_io_fail(err, err_size, path,
                          "parts of different sizes (%dx%d and %dx%d) are not supported",
                          first.width, first.height, spec.width, spec.height);
    // each part is read from its own window into the same rows: parts of
    // one size at other places would be laid over each other shifted
    if (spec.x != first.x || spec.y != first.y)
      return lull_io_fail(err, err_size, path,
                          "parts with different data windows (origins %d,%d and %d,%d) are "
                          "not supported",
                          first.x, first.y, spec.x, spec.y);
  }

  // Channel names of all parts, then the passes they form.
  const bool multipart = state->parts.size() > 1;
  std::vector<std::string> names, channel_views;
  std::vector<TypeDesc> types;
  const std::vector<std::string> views = views_of(first);
  for (const Part& part : state->parts) {
    const std::string view = part_view(part.spec, multipart);
    state->part_views |= !view.empty();
    for (const std::string& name : part_channel_names(part.spec, multipart, view)) {
      names.push_back(name);
      channel_views.push_back(view);
    }
    for (int c = 0; c < part.spec.nchannels; ++c)
      types.push_back(channel_type(part.spec, c));
  }
  if (names.size() > size_t(LULL_IO_MAX_FILE_CHANNELS))
    return lull_io_fail(err, err_size, path, "too many channels (%zu)", names.size());
  std::vector<const char*> name_ptrs, channel_view_ptrs, view_ptrs;
  for (size_t i = 0; i < names.size(); ++i) {
    name_ptrs.push_back(names[i].c_str());
    channel_view_ptrs.push_back(channel_views[i].c_str());
  }
  for (const std::string& v : views)
    view_ptrs.push_back(v.c_str());
  std::vector<lull_io_channel_slot> slots(names.size());
  image->width = first.width;
  image->height = first.height;
  if (lull_io_group_channels(name_ptrs.data(), channel_view_ptrs.data(), int(names.size()),
                             view_ptrs.data(), int(view_ptrs.size()), image, slots.data(), path,
                             err, err_size))
    return 1;
  if (lull_io_allocate_passes(image))
    return lull_io_fail(err, err_size, path, "out of memory");
  // each channel's full name (what a write finds it by) in its part, with
  // the name in the file where that differs
  std::vector<std::string> full_names;
  size_t base = 0;
  for (Part& part : state->parts) {
    for (int c = 0; c < part.spec.nchannels; ++c) {
      const lull_io_channel_slot slot = slots[base + size_t(c)];
      char full[4 * LULL_IO_NAME_SIZE];
      if (lull_io_channel_full_name(&image->passes[slot.pass], slot.channel, full, sizeof full))
        return lull_io_fail(err, err_size, path, "channel '%.100s' has no valid name",
                            part.spec.channelnames[size_t(c)].c_str());
      part.channels.insert(full);
      if (part.spec.channelnames[size_t(c)] != full)
        part.file_names[full] = part.spec.channelnames[size_t(c)];
      full_names.push_back(full);
    }
    base += size_t(part.spec.nchannels);
  }

  // Pixels, one part at a time, scattered into the passes.  The reader's
  // error slot is emptied first (the loop over the parts above ended with a
  // failed seek): some readers report damage there and still return true
  // (a truncated TIFF strip, a JPEG that ends early: filled with black or
  // grey), so a read counts as failed when it left any error.
  (void)in->geterror();
  std::vector<int> all_half(size_t(image->num_passes), 1);
  size_t channel_base = 0;
  int bits = 0;
  bool integer = false;
  for (size_t s = 0; s < state->parts.size(); ++s) {
    const ImageSpec& spec = state->parts[s].spec;
    const size_t n = size_t(spec.nchannels);
    for (size_t c = 0; c < n; ++c) {
      const lull_io_channel_slot slot = slots[channel_base + c];
      const TypeDesc type = types[channel_base + c];
      state->channel_types[full_names[channel_base + c]] = type;
      all_half[size_t(slot.pass)] &= type.basetype == TypeDesc::HALF;
      bits = std::max(bits, int(type.size() * 8));
      integer |= is_integer(type);
    }
    // Strips of rows (a multiple of EXR's 16- and 32-row blocks), so a
    // large multilayer frame never needs a second copy in memory.  Tiled
    // files are read tile row by tile row (read_scanlines divides by zero
    // on them in OpenImageIO 2.4), in strips of whole tiles.  Pixels are
    // read in the file's own types and converted here, channel by channel:
    // OpenImageIO's converting reads allocate a 64 MB buffer per call.
    const int tile_h = spec.tile_width > 0 ? std::max(spec.tile_height, 1) : 0;
    const int strip = tile_h ? (64 + tile_h - 1) / tile_h * tile_h : 64;
    const size_t row = size_t(image->width);
    const size_t pixel_bytes = spec.pixel_bytes(true);
    std::vector<unsigned char> buffer(row * pixel_bytes * size_t(std::min(strip, image->height)));
    for (int y0 = 0; y0 < image->height; y0 += strip) {
      const int y1 = std::min(y0 + strip, image->height);
      const bool ok =
          tile_h ? in->read_tiles(int(s), 0, spec.x, spec.x + spec.width, spec.y + y0,
                                  spec.y + y1, 0, 1, 0, int(n), TypeDesc::UNKNOWN, buffer.data())
                 : in->read_scanlines(int(s), 0, spec.y + y0, spec.y + y1, 0, 0, int(n),
                                      TypeDesc::UNKNOWN, buffer.data());
      if (!ok || in->has_error())
        return fail(err, err_size, path, in->geterror());
      size_t offset = 0;  // of the channel in a pixel of the file
      for (size_t c = 0; c < n; ++c) {
        const lull_io_channel_slot slot = slots[channel_base + c];
        const TypeDesc type = types[channel_base + c];
        lull_io_pass* pass = &image->passes[slot.pass];
        const size_t stride = size_t(pass->channels);
        float* dst = pass->data + size_t(y0) * row * stride + size_t(slot.channel);
        if (!OIIO::convert_image(1, image->width, y1 - y0, 1, buffer.data() + offset, type,
                                 OIIO::stride_t(pixel_bytes), OIIO::stride_t(pixel_bytes * row),
                                 OIIO::AutoStride, dst, OIIO::TypeFloat,
                                 OIIO::stride_t(stride * sizeof(float)),
                                 OIIO::stride_t(stride * row * sizeof(float)), OIIO::AutoStride))
          return lull_io_fail(err, err_size, path, "cannot convert channel '%s' to float",
                              names[channel_base + c].c_str());
        offset += type.size();
      }
    }
    channel_base += n;
  }
  for (int p = 0; p < image->num_passes; ++p)
    image->passes[p].half = all_half[size_t(p)];

  for (const OIIO::ParamValue& p : first.extra_attribs)
    state->attributes.emplace_back(p.name().string(), ImageSpec::metadata_val(p, true));
  auto* meta = lull_io_metadata_new(state->format.c_str());
  if (!meta)
    return lull_io_fail(err, err_size, path, "out of memory");
  meta->info.parts = int(state->parts.size());
  meta->info.mip_levels = mip_levels;
  meta->info.bits = bits;
  meta->info.integer = integer && !exr;  // EXR integers are ids, not display values
  for (int p = 0; p < image->num_passes; ++p)
    image->passes[p].display = meta->info.integer;
  meta->info.attributes = int(state->attributes.size());
  meta->oiio = state.release();
  image->metadata = meta;
  return 0;
}

// -- writing --------------------------------------------------------------------

const State* state_of(const lull_io_image* image)
{
  const auto* meta = static_cast<const lull_io_metadata*>(image->metadata);
  return meta ? static_cast<const State*>(meta->oiio) : nullptr;
}

// Attributes a rewrite must not copy: OpenImageIO's bookkeeping.
bool keep_attribute(const std::string& name)
{
  return name != "oiio:subimages" && name != "oiio:subimagename" &&
         name.rfind("openexr:chunkCount", 0) != 0;
}

void copy_attributes(const ImageSpec& from, ImageSpec* to)
{
  for (const OIIO::ParamValue& p : from.extra_attribs)
    if (keep_attribute(p.name().string()))
      to->attribute(p.name().string(), p.type(), p.data());
}

// One part to write: its spec (channels filled in) and where each channel's
// values come from.
struct OutPart
{
  ImageSpec spec;
  std::map<std::string, std::string> file_names;  // full name -> name written
  std::vector<std::pair<const lull_io_pass*, int>> sources;
};

// A part for a new pass: the first part's header (attributes, windows)
// under the pass's name; with views in parts, Blender's style (name
// "Layer.Pass-view", the view in a "view" attribute), else the view (if
// any) in the name and no view attribute.
OutPart new_part(const std::vector<OutPart>& parts, const lull_io_pass* pass, bool part_views)
{
  const ImageSpec& first = parts[0].spec;
  OutPart out;
  out.spec = first;
  out.spec.channelnames.clear();
  out.spec.channelformats.clear();
  out.spec.erase_attribute("view");
  std::string name;
  for (const char* s : {pass->layer, pass->name})
    if (*s)
      name += (name.empty() ? "" : ".") + std::string(s);
  if (pass->view[0] && part_views) {
    name += "-" + std::string(pass->view);
    out.spec.attribute("view", pass->view);
  } else if (pass->view[0]) {
    name += (name.empty() ? "" : ".") + std::string(pass->view);
  }
  if (name.empty())
    name = "lull";
  // part names are unique in a file: a name taken (by a part named like a
  // pass of another layout) gets a number
  const std::string wanted = name;
  for (int k = 2;; ++k) {
    bool taken = false;
    for (const OutPart& p : parts)
      taken |= p.spec.get_string_attribute("oiio:subimagename") == name;
    if (!taken)
      break;
    name = wanted + " " + std::to_string(k);
  }
  out.spec.attribute("oiio:subimagename", name);
  return out;
}

int build_exr_parts(const char* path, const lull_io_image* image, std::vector<OutPart>* parts,
                    char* err, size_t err_size)
{
  const State* state = state_of(image);
  const bool from_exr = state && state->format == "openexr";
  if (from_exr) {
    for (const Part& part : state->parts) {
      OutPart out;
      out.spec = part.spec;
      // a lossy codec would encode the decoded pixels again, so passes
      // that are only copied would change with every write (DWAA: 96% of
      // a render's pixels): such parts are written losslessly instead
      if (is_lossy(out.spec.get_string_attribute("compression")))
        out.spec.attribute("compression", "zip");
      out.spec.channelnames.clear();
      out.spec.channelformats.clear();
      out.file_names = part.file_names;
      parts->push_back(out);
    }
  } else {
    OutPart out;
    out.spec = ImageSpec(image->width, image->height, 0, OIIO::TypeHalf);
    out.spec.attribute("compression", "zip");
    if (state && !state->parts.empty()) {  // same windows as where the image came from
      out.spec.x = state->parts[0].spec.x;
      out.spec.y = state->parts[0].spec.y;
    }
    parts->push_back(out);
  }
  const bool multipart = parts->size() > 1;
  std::set<std::string> written;
  std::map<std::string, size_t> new_parts;  // pass key -> part index
  for (int p = 0; p < image->num_passes; ++p) {
    const lull_io_pass* pass = &image->passes[p];
    for (int c = 0; c < pass->channels; ++c) {
      char full[4 * LULL_IO_NAME_SIZE];
      if (lull_io_channel_full_name(pass, c, full, sizeof full))
        return lull_io_fail(err, err_size, path, "pass '%.100s' channel %d has no valid name",
                            pass->name, c);
      if (!written.insert(full).second)
        return lull_io_fail(err, err_size, path, "channel '%.200s' is written twice", full);
      size_t target = 0;
      if (multipart) {
        target = parts->size();
        for (size_t s = 0; s < state->parts.size(); ++s)
          if (state->parts[s].channels.count(full))
            target = s;
        if (target == parts->size()) {  // a new pass: a new part, named after it
          const std::string key = std::string(pass->layer) + "." + pass->name + "." + pass->view;
          auto found = new_parts.find(key);
          if (found != new_parts.end()) {
            target = found->second;
          } else {
            target = parts->size();
            new_parts[key] = target;
            parts->push_back(new_part(*parts, pass, state->part_views));
          }
          if (state->part_views && pass->view[0]) {  // the view goes in the part's header
            lull_io_pass named = *pass;
            named.view[0] = '\0';
            char file_name[4 * LULL_IO_NAME_SIZE];
            if (lull_io_channel_full_name(&named, c, file_name, sizeof file_name) == 0)
              (*parts)[target].file_names[full] = file_name;
          }
        }
      }
      OutPart& out = (*parts)[target];
      // the name in the file where it differs from the full one (a bare
      // name of a named part: a part "ViewLayer" may hold
      // "ViewLayer.Albedo.G" beside a bare "B", found by fuzz_io)
      const auto renamed = out.file_names.find(full);
      const std::string name = renamed != out.file_names.end() ? renamed->second : full;
      TypeDesc type = pass->half ? OIIO::TypeHalf : OIIO::TypeFloat;
      if (from_exr) {  // other types (uint ids) as they were; not PNG's bytes
        auto t = state->channel_types.find(full);
        if (t != state->channel_types.end() && is_integer(t->second))
          type = t->second;
      }
      out.sources.emplace_back(pass, c);
      out.spec.channelnames.push_back(name);
      out.spec.channelformats.push_back(type);
    }
  }
  for (OutPart& out : *parts) {
    ImageSpec& spec = out.spec;
    spec.nchannels = int(spec.channelnames.size());
    spec.alpha_channel = -1;
    spec.z_channel = -1;
    spec.tile_width = spec.tile_height = spec.tile_depth = 0;  // scanlines
    spec.deep = false;
    spec.erase_attribute("oiio:subimages");
    if (!multipart)
      spec.erase_attribute("oiio:subimagename");
    bool all_half = true;
    for (const TypeDesc& t : spec.channelformats)
      all_half &= t.basetype == TypeDesc::HALF;
    spec.format = all_half ? OIIO::TypeHalf : OIIO::TypeFloat;
  }
  // a part left without channels (all its passes removed) is not written
  parts->erase(std::remove_if(parts->begin(), parts->end(),
                              [](const OutPart& p) { return p.spec.nchannels == 0; }),
               parts->end());
  return 0;
}

int write_exr(ImageOutput* out, const char* temp, const char* path, const lull_io_image* image,
              int srgb, char* err, size_t err_size)
{
  std::vector<OutPart> parts;
  if (build_exr_parts(path, image, &parts, err, err_size))
    return 1;
  std::vector<ImageSpec> specs;
  for (const OutPart& p : parts)
    specs.push_back(p.spec);
  const bool opened = specs.size() == 1 ? out->open(temp, specs[0])
                                        : out->open(temp, int(specs.size()), specs.data());
  if (!opened)
    return fail(err, err_size, path, out->geterror());
  for (size_t s = 0; s < parts.size(); ++s) {
    if (s > 0 && !out->open(temp, specs[s], ImageOutput::AppendSubimage))
      return fail(err, err_size, path, out->geterror());
    // strips of rows, as when reading
    const size_t n = parts[s].sources.size();
    const int strip = 64;
    const size_t row = size_t(image->width);
    std::vector<float> buffer(row * size_t(std::min(strip, image->height)) * n);
    for (int y0 = 0; y0 < image->height; y0 += strip) {
      const int y1 = std::min(y0 + strip, image->height);
      const size_t first = size_t(y0) * row, count = size_t(y1 - y0) * row;
      for (size_t c = 0; c < n; ++c) {
        const lull_io_pass* pass = parts[s].sources[c].first;
        const int channel = parts[s].sources[c].second;
        const size_t stride = size_t(pass->channels);
        const float* src = pass->data + first * stride + size_t(channel);
        if (lull_io_decodes_display(srgb, pass, channel))
          for (size_t i = 0; i < count; ++i)
            buffer[i * n + c] = lull_io_display_to_linear(src[i * stride]);
        else
          for (size_t i = 0; i < count; ++i)
            buffer[i * n + c] = src[i * stride];
      }
      if (!out->write_scanlines(specs[s].y + y0, specs[s].y + y1, 0, OIIO::TypeFloat,
                                buffer.data()))
        return fail(err, err_size, path, out->geterror());
    }
  }
  return 0;
}

// Everything but EXR: one pass.
int write_single(ImageOutput* out, const char* temp, const char* path,
                 const lull_io_image* image, int srgb, char* err, size_t err_size)
{
  const std::string format = out->format_name();
  if (image->num_passes != 1)
    return lull_io_fail(err, err_size, path,
                        "a %s file holds one image, this one has %d passes (pick one)",
                        format.c_str(), image->num_passes);
  const lull_io_pass* pass = &image->passes[0];
  int channels = pass->channels;
  if (channels == 4 && !out->supports("alpha"))
    channels = 3;  // JPEG, HDR: the alpha is dropped

  const State* state = state_of(image);
  const bool same_format = state && state->format == format && !state->parts.empty();
  const lull_io_metadata* meta = static_cast<const lull_io_metadata*>(image->metadata);
  const bool float_format = format == "hdr" || format == "tiff" || format == "fits";
  TypeDesc type = float_format ? OIIO::TypeFloat : OIIO::TypeUInt8;
  if (same_format && meta->info.integer)
    type = meta->info.bits > 8 ? TypeDesc(TypeDesc::UINT16) : OIIO::TypeUInt8;

  ImageSpec spec(image->width, image->height, channels, type);
  if (same_format)
    copy_attributes(state->parts[0].spec, &spec);
  spec.channelnames.clear();
  spec.alpha_channel = -1;
  for (int c = 0; c < channels; ++c) {
    spec.channelnames.emplace_back(pass->channel_names[c][0] ? pass->channel_names[c] : "Y");
    if (std::strcmp(pass->channel_names[c], "A") == 0)
      spec.alpha_channel = c;
  }
  spec.attribute("oiio:UnassociatedAlpha", 1);  // values as given: no division by alpha
  const bool integer = is_integer(type);
  const bool encode = srgb == LULL_IO_VALUES_LINEAR;
  if (integer && encode)
    spec.attribute("oiio:ColorSpace", "sRGB");

  const size_t pixels = size_t(image->width) * size_t(image->height);
  std::vector<float> buffer(pixels * size_t(channels));
  for (size_t i = 0; i < pixels; ++i)
    for (int c = 0; c < channels; ++c) {
      float v = pass->data[i * size_t(pass->channels) + size_t(c)];
      if (integer) {  // clamp (NaN to 0); encode colour, never alpha
        v = std::isnan(v) ? 0.0f : std::min(std::max(v, 0.0f), 1.0f);
        if (encode && c != spec.alpha_channel)
          v = lull_linear_to_srgb(v);  // the core's formula (IEC 61966-2-1)
      } else if (lull_io_decodes_display(srgb, pass, c)) {
        v = lull_io_display_to_linear(v);  // 8-bit values into a float file
      }
      buffer[i * size_t(channels) + size_t(c)] = v;
    }
  if (!out->open(temp, spec) || !out->write_image(OIIO::TypeFloat, buffer.data()))
    return fail(err, err_size, path, out->geterror());
  return 0;
}

// Writes all of bytes to fd: 0, or an error (ENOSPC, EFBIG) in err.
int write_all(int fd, const std::vector<unsigned char>& bytes, const char* path, char* err,
              size_t err_size)
{
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return lull_io_fail(err, err_size, path, "cannot write: %s",
                          std::strerror(n < 0 ? errno : EIO));
    done += size_t(n);
  }
  return 0;
}

int write_file(const char* path, const lull_io_image* image, int srgb, char* err,
               size_t err_size)
{
  // The format comes from the destination's name; the pixels go to a
  // temporary file next to it (see atomic_file.c).  (The memory a single
  // image is encoded into, below, outlives the writer that uses it.)
  std::vector<unsigned char> bytes;
  OIIO::Filesystem::IOVecOutput proxy(bytes);
  auto out = ImageOutput::create(path);
  if (!out)
    return fail(err, err_size, path, "cannot write this format: " + OIIO::geterror());
  lull_io_temp_file temp;
  if (lull_io_temp_create(&temp, path, err, err_size))
    return 1;
  // A single image is encoded in memory and written here, with every write
  // checked: libjpeg ends the process when its own write fails (a full
  // disk: exit(1), the temporary file left, a sequence's other frames
  // abandoned).  EXR files, of many passes, go to the file by name
  // (OpenEXR reports a failed write as an error).
  const bool exr = std::string(out->format_name()) == "openexr";
  const bool in_memory = !exr && out->supports("ioproxy");
  if (in_memory) {
    // room for the uncompressed pixels and a header, taken here, where an
    // allocation failure is an error: thrown from the encoders' C write
    // callbacks it could not be caught
    size_t pixels_bytes = 1u << 20;
    for (int p = 0; p < image->num_passes; ++p)
      pixels_bytes += size_t(image->width) * size_t(image->height) *
                      size_t(image->passes[p].channels) * sizeof(float);
    bytes.reserve(pixels_bytes);
    out->set_ioproxy(&proxy);
  } else {
    close(temp.fd);  // OpenImageIO opens the file by name
    temp.fd = -1;
  }
  int status;
  try {
    status = exr ? write_exr(out.get(), temp.temp_path, path, image, srgb, err, err_size)
                 : write_single(out.get(), temp.temp_path, path, image, srgb, err, err_size);
    if (!status && !out->close())
      status = fail(err, err_size, path, out->geterror());
    if (!status && in_memory)
      status = write_all(temp.fd, bytes, path, err, err_size);
  } catch (...) {
    lull_io_temp_discard(&temp);
    throw;
  }
  if (status) {
    out.reset();
    lull_io_temp_discard(&temp);
    return status;
  }
  return lull_io_temp_commit(&temp, err, err_size);
}

// Runs f, turning any exception into an error message: none may reach C.
template<class F>
int guarded(const char* path, char* err, size_t err_size, F&& f)
{
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return lull_io_fail(err, err_size, path, "out of memory");
  } catch (const std::exception& e) {
    return fail(err, err_size, path, e.what());
  } catch (...) {
    return lull_io_fail(err, err_size, path, "unknown error");
  }
}

}  // namespace

extern "C" {

int lull_io_oiio_available(void)
{
  return 1;
}

int lull_io_oiio_read(const char* path, lull_io_image* image, char* err, size_t err_size)
{
  return guarded(path, err, err_size, [&] { return read_file(path, image, err, err_size); });
}

int lull_io_oiio_write(const char* path, const lull_io_image* image, int srgb, char* err,
                       size_t err_size)
{
  return guarded(path, err, err_size,
                 [&] { return write_file(path, image, srgb, err, err_size); });
}

void lull_io_oiio_free_state(void* state)
{
  delete static_cast<State*>(state);
}

int lull_io_oiio_attribute(const void* state, int index, char* name, size_t name_size,
                           char* value, size_t value_size)
{
  const State* s = static_cast<const State*>(state);
  if (!s || index < 0 || size_t(index) >= s->attributes.size())
    return 1;
  if (name && name_size)
    std::snprintf(name, name_size, "%s", s->attributes[size_t(index)].first.c_str());
  if (value && value_size)
    std::snprintf(value, value_size, "%s", s->attributes[size_t(index)].second.c_str());
  return 0;
}

}  // extern "C"
