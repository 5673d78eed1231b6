// The refusal order of every CSI RPC (protocols/csi/refusal_order.hpp): a missing
// required field, then an unknown volume, then a path where the volume is not, and
// only then the request's content. Pure: no server, no actors.

#include <gtest/gtest.h>

#include "protocols/csi/csi_codec.hpp"
#include "protocols/csi/refusal_order.hpp"
#include "protocols/csi/status.hpp"

using namespace berth;
using namespace berth::csi;
using grpc::StatusCode;
using step = verdict::step;

namespace {

/// A NodeGetVolumeStats-like request: volume_id and volume_path required, the path
/// located. It keeps the strings the shape points at.
struct stats_request {
  std::string id;
  std::string path;
  grpc::Status content = grpc::Status::OK;

  request_shape shape() const {
    request_shape out;
    out.required = {{!id.empty(), "volume_id"}, {!path.empty(), "volume_path"}};
    out.volume_id = &id;
    out.located_path = &path;
    out.content = content;
    return out;
  }
};

verdict judge_stats(const std::string& id, const std::string& path,
                    grpc::Status content = grpc::Status::OK) {
  stats_request req{id, path, std::move(content)};
  return judge(req.shape());
}

} // namespace

TEST(csi_refusal_order, a_missing_required_field_comes_before_an_unknown_volume) {
  auto v = judge_stats("never-created", "");
  EXPECT_EQ(v.next, step::refuse);
  EXPECT_EQ(v.status.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(v.status.error_message(), "volume_path is required");

  v = judge_stats("", "");
  EXPECT_EQ(v.status.error_message(), "volume_id is required") << "fields in message order";
}

TEST(csi_refusal_order, an_id_no_volume_can_have_is_not_found_before_the_path) {
  auto v = judge_stats("../etc", "some/path");
  EXPECT_EQ(v.next, step::refuse);
  EXPECT_EQ(v.status.error_code(), StatusCode::NOT_FOUND);
  EXPECT_NE(v.status.error_message().find("\"../etc\" does not exist"), std::string::npos)
    << v.status.error_message();
}

TEST(csi_refusal_order, a_located_path_that_is_not_absolute_is_not_found) {
  for (const std::string path : {"some/path", "/a/../b", "/a/", "/"}) {
    SCOPED_TRACE(path);
    auto v = judge_stats("pvc-1", path);
    EXPECT_EQ(v.next, step::refuse);
    EXPECT_EQ(v.status.error_code(), StatusCode::NOT_FOUND);
    EXPECT_NE(v.status.error_message().find("volume_path"), std::string::npos);
    EXPECT_NE(v.status.error_message().find("\"pvc-1\" is not there"), std::string::npos)
      << v.status.error_message();
  }
}

TEST(csi_refusal_order, a_content_refusal_waits_for_the_lookup_of_the_volume) {
  auto v = judge_stats("pvc-1", "/k/pods/x", invalid_argument("capacity_range is bad"));
  EXPECT_EQ(v.next, step::refuse_if_volume_exists);
  EXPECT_EQ(v.status.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(v.status.error_message(), "capacity_range is bad");
}

TEST(csi_refusal_order, a_request_that_names_no_volume_is_refused_on_its_content_at_once) {
  request_shape create;
  create.required = {{true, "name"}, {true, "volume_capabilities"}};
  create.content = invalid_argument("fs_type \"zfs\" is not supported");
  auto v = judge(create);
  EXPECT_EQ(v.next, step::refuse);
  EXPECT_EQ(v.status.error_message(), "fs_type \"zfs\" is not supported");
}

TEST(csi_refusal_order, a_well_formed_request_is_admitted_for_the_actors_to_decide) {
  auto v = judge_stats("pvc-1", "/k/pods/x");
  EXPECT_EQ(v.next, step::admit);
  EXPECT_TRUE(v.status.ok());
}

TEST(csi_refusal_order, the_noun_names_a_source_volume) {
  std::string source = "bad/name";
  request_shape snap;
  snap.required = {{true, "source_volume_id"}, {true, "name"}};
  snap.volume_id = &source;
  snap.volume_noun = "source volume";
  auto v = judge(snap);
  EXPECT_EQ(v.status.error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(v.status.error_message(), "source volume \"bad/name\" does not exist");
}
