// Fuzzes CSI requests from the wire to berth's messages: arbitrary bytes parsed as a
// csi.v1 request (the first byte picks which: CreateVolume, NodeStageVolume,
// NodePublishVolume, ControllerExpandVolume, NodeExpandVolume, ControllerModifyVolume,
// CreateSnapshot), decoded by the codec (protocols/csi/csi_codec.hpp), judged by the
// refusal order (refusal_order.hpp) with the fields the services name, node paths
// confined to a kubelet dir (backends/node_path.hpp) as node_service does, and every
// mount flag list through the block backend's parser (block_mount_flags.hpp).
//
// Oracles: decoding is deterministic (twice, and again after the message is
// re-serialized and parsed back: the same status and the same result); a request the
// order admits names a valid volume (core/names) within the bounds of core/limits.hpp,
// its sizes fit an int64, its paths are clean and its node paths lie strictly below the
// kubelet dir; mount flags the codec passes are one flag each (no ',' to split into
// more), and what the parser makes of any list sets only the MS_* bits of its table
// (never MS_BIND, MS_REMOUNT, MS_MOVE, propagation) and a data string whose every
// element is one of the flags given (nothing smuggled), none beginning with '-' or
// naming a path.

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "backends/node_path.hpp"
#include "core/limits.hpp"
#include "core/names.hpp"
#include "core/text.hpp"
#include "protocols/csi/csi_codec.hpp"
#include "protocols/csi/refusal_order.hpp"
#include "protocols/csi/status.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "tests/fuzz/mount_flag_oracles.hpp"

using namespace berth;
using namespace berth::csi;

namespace {

// -- the environment ------------------------------------------------------------

/// The kubelet dir node paths are confined to; `escape` in it links to "/", so a path
/// through it must be refused. Fixed, so the dictionary can name it.
const std::string kubelet_dir = "/tmp/berth-fuzz-kubelet";

void make_kubelet_dir() {
  ::mkdir(kubelet_dir.c_str(), 0755);
  ::mkdir((kubelet_dir + "/pods").c_str(), 0755);
  int rc = ::symlink("/", (kubelet_dir + "/escape").c_str()); // EEXIST from another run
  (void)rc;
}

codec_env make_env() {
  codec_env env;
  env.node_id = "n1";
  env.backends = {"block", "local"};
  return env;
}

const codec_env env = make_env();

// -- shared oracles -------------------------------------------------------------

std::string status_text(const grpc::Status& st) {
  return std::to_string(st.error_code()) + " " + st.error_message();
}

void check_same(const grpc::Status& a, const grpc::Status& b) {
  fuzz::check(a.error_code() == b.error_code() && a.error_message() == b.error_message(),
              "decoding is deterministic", status_text(a) + " vs " + status_text(b));
}

void check_map_bounds(const option_map& m, const char* what) {
  fuzz::check(m.size() <= limits::max_options, "at most max_options entries", what);
  for (const auto& [k, v] : m) {
    fuzz::check(!k.empty() && k.size() <= limits::max_option_key_bytes,
                "keys are non-empty and bounded", what);
    fuzz::check(v.size() <= limits::max_option_value_bytes, "values are bounded", what);
  }
}

void check_capabilities_flags(const google::protobuf::RepeatedPtrField<v1::VolumeCapability>& caps) {
  for (const auto& cap : caps) {
    if (cap.has_mount()) {
      fuzz::check_codec_flags({cap.mount().mount_flags().begin(), cap.mount().mount_flags().end()});
    }
  }
}

void check_node_path(const std::string& path, const char* field) {
  fuzz::check(check_path(path, field).ok(), "an admitted path is clean", path);
  auto confined = confine_node_path(path, kubelet_dir, field);
  if (confined) {
    fuzz::check(confined->rfind(kubelet_dir + "/", 0) == 0
                  && confined->size() > kubelet_dir.size() + 1,
                "a confined path lies strictly below the kubelet dir", *confined);
    fuzz::check(check_path(*confined, field).ok(), "a confined path is clean", *confined);
  }
}

/// The order as the service applies it; an admitted request names a valid volume.
verdict judged(request_shape shape, const grpc::Status& content) {
  shape.content = content;
  auto v = judge(shape);
  if (v.next == verdict::step::admit) {
    fuzz::check(content.ok(), "admitted only with no content refusal");
    for (const auto& f : shape.required) {
      fuzz::check(f.present, "admitted only with every required field", f.name);
    }
    if (shape.volume_id != nullptr) {
      fuzz::check(is_valid_volume_name(*shape.volume_id)
                    && shape.volume_id->size() <= limits::max_name_bytes,
                  "an admitted request names a valid volume", *shape.volume_id);
    }
  } else {
    fuzz::check(!v.status.ok(), "a refusal is not OK");
  }
  return v;
}

// -- one function per request ----------------------------------------------------

bool same(const volume_spec& a, const volume_spec& b) {
  return a.kind == b.kind && a.backend == b.backend && a.parameters == b.parameters
         && a.required_bytes == b.required_bytes && a.limit_bytes == b.limit_bytes
         && a.source == b.source && a.mutable_parameters == b.mutable_parameters;
}

bool same(const stage_request& a, const stage_request& b) {
  return a.staging_path == b.staging_path && a.block == b.block && a.fs_type == b.fs_type
         && a.flags == b.flags;
}

bool same(const publish_request& a, const publish_request& b) {
  return a.target == b.target && a.staging_path == b.staging_path && a.how == b.how;
}

bool same(const modify_request& a, const modify_request& b) {
  return a.required_bytes == b.required_bytes && a.parameters == b.parameters
         && a.owner == b.owner;
}

bool same(uint64_t a, uint64_t b) {
  return a == b;
}

/// `decode` (a codec function bound to its output type) on `req` twice and on `again`,
/// the same message re-serialized and parsed back: the same status and the same result
/// each time, admitted or not. Returns the first.
template <class Out, class M, class F>
std::pair<grpc::Status, Out> decode_checked(const M& req, const M& again, F decode) {
  Out first{}, second{}, third{};
  auto st = decode(req, first);
  check_same(st, decode(req, second));
  check_same(st, decode(again, third));
  fuzz::check(same(first, second) && same(first, third), "decoding is deterministic");
  return {st, std::move(first)};
}

void create_volume(const v1::CreateVolumeRequest& req, const v1::CreateVolumeRequest& again) {
  auto [st, spec] = decode_checked<volume_spec>(req, again, [](const auto& m, auto& out) {
    return decode_create_volume(m, env, out);
  });
  request_shape shape;
  shape.required = {{!req.name().empty(), "name"},
                    {!req.volume_capabilities().empty(), "volume_capabilities"}};
  auto content = st.ok() ? check_topology(req.accessibility_requirements(), env) : st;
  if (judged(shape, content).next != verdict::step::admit) {
    return;
  }
  fuzz::check(check_name(req.name(), "name", "volume").ok() && is_valid_volume_name(req.name()),
              "a created volume's name is valid", req.name());
  fuzz::check(env.backends.count(spec.backend) == 1, "a configured backend", spec.backend);
  check_map_bounds(spec.parameters, "parameters");
  check_map_bounds(spec.mutable_parameters, "mutable_parameters");
  fuzz::check(spec.parameters.count("backend") == 0, "backend is no volume parameter");
  for (const auto& [k, v] : spec.parameters) {
    fuzz::check(k.rfind("csi.storage.k8s.io/", 0) != 0, "the CO's parameters are dropped", k);
  }
  fuzz::check(spec.required_bytes <= uint64_t{INT64_MAX} && spec.limit_bytes <= uint64_t{INT64_MAX},
              "sizes fit an int64");
  fuzz::check(spec.limit_bytes == 0 || spec.required_bytes <= spec.limit_bytes,
              "required_bytes within limit_bytes");
  fuzz::check(spec.source.empty() || is_valid_volume_name(spec.source.name),
              "a source names a valid record", spec.source.name);
  check_capabilities_flags(req.volume_capabilities());
}

void create_snapshot(const v1::CreateSnapshotRequest& req, const v1::CreateSnapshotRequest& again) {
  auto [st, spec] = decode_checked<volume_spec>(req, again, [](const auto& m, auto& out) {
    return decode_create_snapshot(m, env, out);
  });
  request_shape shape;
  shape.required = {{!req.source_volume_id().empty(), "source_volume_id"},
                    {!req.name().empty(), "name"}};
  shape.volume_id = &req.source_volume_id();
  if (judged(shape, st).next != verdict::step::admit) {
    return;
  }
  fuzz::check(is_valid_volume_name(req.name()), "a snapshot's name is valid", req.name());
  fuzz::check(spec.kind == record_kind::snapshot && spec.source.name == req.source_volume_id(),
              "a snapshot of its source volume");
  check_map_bounds(spec.parameters, "parameters");
}

void stage(const v1::NodeStageVolumeRequest& req, const v1::NodeStageVolumeRequest& again) {
  auto [st, out] = decode_checked<stage_request>(
    req, again, [](const auto& m, auto& o) { return decode_stage(m, o); });
  if (st.ok()) {
    auto confined = confine_node_path(out.staging_path, kubelet_dir, "staging_target_path");
    st = confined ? grpc::Status::OK : invalid_argument(describe(confined.error()));
  }
  request_shape shape;
  shape.required = {{!req.volume_id().empty(), "volume_id"},
                    {!req.staging_target_path().empty(), "staging_target_path"},
                    {req.has_volume_capability(), "volume_capability"}};
  shape.volume_id = &req.volume_id();
  if (judged(shape, st).next != verdict::step::admit) {
    return;
  }
  check_node_path(out.staging_path, "staging_target_path");
  fuzz::check(out.fs_type.empty() || out.fs_type == "xfs" || out.fs_type == "ext4",
              "fs_type is xfs or ext4", out.fs_type);
  fuzz::check(!out.block || out.flags.empty(), "raw block has no mount flags");
  fuzz::check_codec_flags(out.flags);
}

void publish(const v1::NodePublishVolumeRequest& req, const v1::NodePublishVolumeRequest& again) {
  auto [st, out] = decode_checked<publish_request>(
    req, again, [](const auto& m, auto& o) { return decode_publish(m, o); });
  std::string target, staging;
  if (st.ok()) {
    auto t = confine_node_path(out.target, kubelet_dir, "target_path");
    auto s = confine_node_path(out.staging_path, kubelet_dir, "staging_target_path");
    st = !t   ? invalid_argument(describe(t.error()))
         : !s ? invalid_argument(describe(s.error()))
         : *t == *s ? invalid_argument("target_path is the staging_target_path")
                    : grpc::Status::OK;
  }
  request_shape shape;
  shape.required = {{!req.volume_id().empty(), "volume_id"},
                    {!req.staging_target_path().empty(), "staging_target_path"},
                    {!req.target_path().empty(), "target_path"},
                    {req.has_volume_capability(), "volume_capability"}};
  shape.volume_id = &req.volume_id();
  if (judged(shape, st).next != verdict::step::admit) {
    return;
  }
  check_node_path(out.target, "target_path");
  check_node_path(out.staging_path, "staging_target_path");
  fuzz::check(out.target != out.staging_path, "the target is not the staging path");
  bool reader = req.volume_capability().access_mode().mode()
                == v1::VolumeCapability::AccessMode::SINGLE_NODE_READER_ONLY;
  fuzz::check(!reader || out.how.readonly, "a reader-only capability publishes read-only");
  fuzz::check_codec_flags(out.how.flags);
}

void controller_expand(const v1::ControllerExpandVolumeRequest& req,
                       const v1::ControllerExpandVolumeRequest& again) {
  auto [st, bytes] = decode_checked<uint64_t>(
    req, again, [](const auto& m, auto& o) { return decode_expand(m, o); });
  request_shape shape;
  shape.required = {{!req.volume_id().empty(), "volume_id"},
                    {req.has_capacity_range(), "capacity_range"}};
  shape.volume_id = &req.volume_id();
  if (judged(shape, st).next != verdict::step::admit) {
    return;
  }
  fuzz::check(bytes > 0 && bytes <= uint64_t{INT64_MAX}, "an expansion asks for a size",
              std::to_string(bytes));
  auto limit = req.capacity_range().limit_bytes();
  fuzz::check(limit == 0 || bytes <= static_cast<uint64_t>(limit), "within limit_bytes");
  if (req.has_volume_capability() && req.volume_capability().has_mount()) {
    const auto& flags = req.volume_capability().mount().mount_flags();
    fuzz::check_codec_flags({flags.begin(), flags.end()});
  }
}

void node_expand(const v1::NodeExpandVolumeRequest& req) {
  // NodeExpandVolume has no decoder: its content checks are node_service's own. The
  // order's steps 1 to 3 are the codec's: the volume and the path it is at.
  request_shape shape;
  shape.required = {{!req.volume_id().empty(), "volume_id"},
                    {!req.volume_path().empty(), "volume_path"}};
  shape.volume_id = &req.volume_id();
  shape.located_path = &req.volume_path();
  auto content = req.has_volume_capability() ? check_capability(req.volume_capability(), "")
                                             : grpc::Status::OK;
  auto v = judged(shape, content);
  if (v.next == verdict::step::admit) {
    fuzz::check(check_path(req.volume_path(), "volume_path").ok(),
                "an admitted volume_path is clean", req.volume_path());
    (void)canonical_node_path(req.volume_path());
  }
  if (v.next != verdict::step::refuse || v.status.error_code() != grpc::StatusCode::NOT_FOUND) {
    return;
  }
  // A path no volume can be at is NOT_FOUND before any content refusal (step 3).
  fuzz::check(!may_exist(req.volume_id()) || !check_path(req.volume_path(), "p").ok(),
              "NOT_FOUND without a lookup only for an id or a path that cannot exist");
}

void modify(const v1::ControllerModifyVolumeRequest& req,
            const v1::ControllerModifyVolumeRequest& again) {
  auto [st, out] = decode_checked<modify_request>(
    req, again, [](const auto& m, auto& o) { return decode_modify(m, o); });
  request_shape shape;
  shape.required = {{!req.volume_id().empty(), "volume_id"}};
  shape.volume_id = &req.volume_id();
  if (judged(shape, st).next != verdict::step::admit) {
    return;
  }
  fuzz::check(out.owner == record_owner::csi && out.required_bytes == 0,
              "a CSI change of parameters");
  check_map_bounds(out.parameters, "mutable_parameters");
}

/// Parses `bytes` as M, then decodes it and the message it re-serializes to.
template <class M, class F>
void run(const uint8_t* data, size_t size, F decode) {
  M req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) {
    return;
  }
  M again;
  fuzz::check(again.ParseFromString(req.SerializeAsString()), "a parsed request re-parses");
  decode(req, again);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Invalid UTF-8 in a string field fails the parse, and protobuf would log each one.
  google::protobuf::SetLogHandler(nullptr);
  make_kubelet_dir();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (1u << 20)) {
    return 0;
  }
  const uint8_t* msg = data + 1;
  size_t n = size - 1;
  switch (data[0] % 8) {
    case 0: run<v1::CreateVolumeRequest>(msg, n, create_volume); break;
    case 1: run<v1::NodeStageVolumeRequest>(msg, n, stage); break;
    case 2: run<v1::NodePublishVolumeRequest>(msg, n, publish); break;
    case 3: run<v1::ControllerExpandVolumeRequest>(msg, n, controller_expand); break;
    case 4:
      run<v1::NodeExpandVolumeRequest>(
        msg, n, [](const auto& req, const auto&) { node_expand(req); });
      break;
    case 5: run<v1::ControllerModifyVolumeRequest>(msg, n, modify); break;
    case 6: run<v1::CreateSnapshotRequest>(msg, n, create_snapshot); break;
    default: {
      // The flag parser on its own, as a record's stage flags reach it: lines of input.
      std::vector<std::string> flags;
      std::string all(reinterpret_cast<const char*>(msg), n);
      size_t start = 0;
      while (start <= all.size() && flags.size() < 64) {
        auto nl = all.find('\n', start);
        flags.push_back(all.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
        start = nl == std::string::npos ? all.size() + 1 : nl + 1;
      }
      fuzz::check_flag_parse(flags);
    }
  }
  return 0;
}
