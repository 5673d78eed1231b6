#include "actors/csi_rules.hpp"

#include "actors/volume_rules.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"

namespace berth {

namespace {

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs) {
    out += out.empty() ? x : "," + x;
  }
  return out.empty() ? "(none)" : out;
}

std::string describe_publication(const publication& p) {
  return std::string(p.block ? "block" : "mount") + (p.readonly ? " ro" : " rw")
    + (p.flags.empty() ? "" : " flags " + join(p.flags))
    + (p.single_writer ? " for a single writer" : "");
}

} // namespace

caf::error check_csi_recreate(const volume_record& rec, const volume_spec& spec) {
  auto differ = [&](const std::string& what) {
    return make_error(ec::already_exists,
                      to_string(rec.kind) + " " + rec.name + " already exists with " + what);
  };
  if (rec.kind != spec.kind) {
    return differ("kind " + to_string(rec.kind) + ", not " + to_string(spec.kind));
  }
  if (rec.source != spec.source) {
    return differ("source \"" + rec.source.describe() + "\", not \"" + spec.source.describe()
                  + "\"");
  }
  if (rec.kind == record_kind::snapshot) {
    return {}; // its backend is its volume's, whatever the request named
  }
  if (rec.backend != spec.backend) {
    return differ("backend " + rec.backend + ", not " + spec.backend);
  }
  if (rec.options != spec.parameters) {
    return differ("different parameters");
  }
  // mutable_parameters are not compared: the spec's CreateVolume is incompatible only
  // in "capacity_range, volume_capabilities, parameters, accessibility_requirements or
  // volume_content_source", and mutable parameters are by definition what
  // ControllerModifyVolume changes over the volume's life. A retry whose
  // mutable_parameters differ (the PVC's VolumeAttributesClass changed while the first
  // call's answer was lost) gets the existing volume as it is; the CO's modifier then
  // sends the ControllerModifyVolume that reconciles them. ALREADY_EXISTS instead would
  // leave the claim unprovisionable under that name.
  if (rec.capacity_bytes < spec.required_bytes
      || (spec.limit_bytes != 0 && rec.capacity_bytes > spec.limit_bytes)) {
    return differ("capacity " + std::to_string(rec.capacity_bytes)
                  + " bytes, outside the requested range " + std::to_string(spec.required_bytes)
                  + ".." + (spec.limit_bytes == 0 ? "" : std::to_string(spec.limit_bytes)));
  }
  return {};
}

caf::expected<volume_spec> with_source_size(volume_spec spec) {
  if (spec.source.empty() || spec.kind == record_kind::snapshot) {
    return spec;
  }
  if (spec.required_bytes == 0) {
    spec.required_bytes = spec.source_bytes;
  } else if (spec.required_bytes < spec.source_bytes) {
    return make_error(ec::out_of_range, "requested capacity " + std::to_string(spec.required_bytes)
                                          + " bytes is smaller than the source "
                                          + spec.source.describe() + " ("
                                          + std::to_string(spec.source_bytes) + " bytes)");
  }
  if (spec.limit_bytes != 0 && spec.limit_bytes < spec.source_bytes) {
    return make_error(ec::out_of_range, "capacity limit " + std::to_string(spec.limit_bytes)
                                          + " bytes is smaller than the source "
                                          + spec.source.describe() + " ("
                                          + std::to_string(spec.source_bytes) + " bytes)");
  }
  return spec;
}

volume_record make_csi_record(const std::string& name, const volume_spec& spec,
                              uint64_t capacity) {
  volume_record rec;
  rec.name = name;
  rec.kind = spec.kind;
  rec.owner = spec.owner;
  rec.backend = spec.backend;
  rec.options = spec.parameters;
  rec.mutable_parameters = spec.mutable_parameters;
  rec.source = spec.source;
  rec.capacity_bytes = capacity;
  rec.created_at = now_rfc3339();
  return rec;
}

caf::expected<csi_action> check_stage(const volume_record& rec, const stage_request& req) {
  if (rec.kind != record_kind::volume) {
    return no_such_volume(rec.name, "it is a snapshot");
  }
  if (rec.staging_path.empty()) {
    return csi_action::run;
  }
  if (rec.staging_path != req.staging_path) {
    return make_error(ec::failed_precondition, "volume " + rec.name + " is already staged at "
                                                 + rec.staging_path + ", not at "
                                                 + req.staging_path);
  }
  bool other_fs = !req.block && !req.fs_type.empty() && !rec.stage_fs_type.empty()
                  && req.fs_type != rec.stage_fs_type;
  if (rec.staged_block != req.block || (!req.block && rec.stage_flags != req.flags) || other_fs) {
    return make_error(ec::already_exists,
                      "volume " + rec.name + " is staged at " + rec.staging_path + " as "
                        + (rec.staged_block ? "block"
                                            : "mount" + (rec.stage_fs_type.empty()
                                                           ? std::string()
                                                           : " (" + rec.stage_fs_type + ")")
                                                + " with flags " + join(rec.stage_flags))
                        + ", incompatible with this request");
  }
  return csi_action::done;
}

void set_staged(volume_record& next, const stage_request& req, const std::string& device) {
  next.staging_path = req.staging_path;
  next.staged_block = req.block;
  next.stage_flags = req.flags;
  next.stage_fs_type = req.block ? "" : req.fs_type;
  next.device = device;
}

caf::expected<csi_action> check_unstage(const volume_record& rec, const std::string& path) {
  if (rec.staging_path.empty() || rec.staging_path != path) {
    return rec.kind == record_kind::volume ? csi_action::sweep : csi_action::done;
  }
  if (!rec.published.empty()) {
    return make_error(ec::failed_precondition, "volume " + rec.name + " is still published at "
                                                 + rec.published.begin()->first
                                                 + "; unpublish it before unstaging");
  }
  return csi_action::run;
}

caf::expected<csi_action> check_publish(const volume_record& rec, const publish_request& req) {
  if (rec.kind != record_kind::volume) {
    return no_such_volume(rec.name, "it is a snapshot");
  }
  if (rec.staging_path.empty()) {
    return make_error(ec::failed_precondition, "volume " + rec.name
                                                 + " is not staged; NodeStageVolume first");
  }
  if (rec.staging_path != req.staging_path) {
    return make_error(ec::failed_precondition, "volume " + rec.name + " is staged at "
                                                 + rec.staging_path + ", not at "
                                                 + req.staging_path);
  }
  if (rec.staged_block != req.how.block) {
    return make_error(ec::failed_precondition,
                      "volume " + rec.name + " is staged for "
                        + (rec.staged_block ? "block" : "mount") + " access, the publish asks "
                        + (req.how.block ? "block" : "mount"));
  }
  auto it = rec.published.find(req.target);
  if (it == rec.published.end()) {
    // SINGLE_NODE_SINGLE_WRITER (ReadWriteOncePod): one target at a time, whichever of the
    // two publications asks it (docs/design.md, "CSI": the spec's table).
    for (const auto& [target, how] : rec.published) {
      if (how.single_writer) {
        return make_error(ec::failed_precondition,
                          "volume " + rec.name + " is published at " + target
                            + " for a single writer (SINGLE_NODE_SINGLE_WRITER, "
                              "ReadWriteOncePod); NodeUnpublishVolume it there before "
                              "publishing at "
                            + req.target);
      }
      if (req.how.single_writer) {
        return make_error(ec::failed_precondition,
                          "SINGLE_NODE_SINGLE_WRITER allows one target: volume " + rec.name
                            + " is published at " + target + " already, so not also at "
                            + req.target);
      }
    }
    if (rec.published.size() >= limits::max_targets) {
      return make_error(ec::resource_exhausted,
                        "volume " + rec.name + " is published at "
                          + std::to_string(rec.published.size()) + " targets, the most berth "
                          + "allows (" + std::to_string(limits::max_targets)
                          + "); unpublish one before publishing at " + req.target);
    }
    return csi_action::run;
  }
  if (!same_access(it->second, req.how)) {
    return make_error(ec::already_exists, "volume " + rec.name + " is published at " + req.target
                                            + " as " + describe_publication(it->second)
                                            + ", not " + describe_publication(req.how));
  }
  return csi_action::done;
}

csi_action check_unpublish(const volume_record& rec, const std::string& target) {
  if (rec.published.count(target) > 0) {
    return csi_action::run;
  }
  return rec.kind == record_kind::volume ? csi_action::sweep : csi_action::done;
}

caf::error check_volume_path(const volume_record& rec, const std::string& path) {
  if (rec.kind != record_kind::volume) {
    return no_such_volume(rec.name, "it is a snapshot");
  }
  if (!path.empty() && (path == rec.staging_path || rec.published.count(path) > 0)) {
    return {};
  }
  return make_error(ec::not_found, "volume " + rec.name + " is not staged or published at "
                                     + path);
}

} // namespace berth
