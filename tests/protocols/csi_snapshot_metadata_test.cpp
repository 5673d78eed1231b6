// The CSI SnapshotMetadata service through its gRPC socket (csi_server_fixture.hpp), over
// real sparse image files: the allocated ranges and the deltas streamed in pages, resumed
// from an offset, and every refusal the spec names. The ranges themselves are
// block_ranges_test's.

#include "protocols/csi/snapshot_metadata_service.hpp"

#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "actors/csi_rules.hpp"
#include "csi.grpc.pb.h"
#include "tests/protocols/csi_server_fixture.hpp"

using namespace berth;
namespace v1 = ::csi::v1;
using grpc::StatusCode;

namespace {

constexpr int64_t kib = 1024;
constexpr int64_t mib = 1024 * kib;

/// The block backend's snapshot images as files in one directory: NAME.img.
class image_backend : public test::capacity_backend {
public:
  explicit image_backend(std::string dir) : dir_(std::move(dir)) {}
  caf::expected<image_map> open_snapshot_image(const volume_record& rec) const override {
    return image_map::open(dir_ + "/" + rec.name + ".img");
  }

private:
  std::string dir_;
};

/// What a stream delivered: its ranges, its messages' capacities and types, its status.
struct streamed {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::vector<int64_t> capacities;
  std::vector<int> types;
  size_t messages = 0;
  grpc::Status status;
};

template <class Reader, class Response>
streamed read_all(Reader& reader, Response msg) {
  streamed out;
  while (reader->Read(&msg)) {
    ++out.messages;
    out.capacities.push_back(msg.volume_capacity_bytes());
    out.types.push_back(msg.block_metadata_type());
    for (const auto& m : msg.block_metadata()) {
      out.ranges.emplace_back(m.byte_offset(), m.size_bytes());
    }
  }
  out.status = reader->Finish();
  return out;
}

class csi_snapshot_metadata_test : public test::csi_server_fixture {
protected:
  csi_snapshot_metadata_test() {
    directory = std::make_shared<record_directory>();
    block = std::make_shared<image_backend>(dir.path);
  }

  /// A CSI snapshot `name` of `volume`, taken at `at`, whose image holds `writes`
  /// ({offset, length}) in a file of `size` bytes.
  void snapshot(const std::string& name, const std::string& volume, const std::string& at,
                int64_t size, const std::vector<std::pair<int64_t, int64_t>>& writes,
                char byte = 'x', record_owner owner = record_owner::csi) {
    volume_spec spec;
    spec.kind = record_kind::snapshot;
    spec.backend = "block";
    spec.source = volume_source(volume);
    auto rec = make_csi_record(name, spec, static_cast<uint64_t>(size));
    rec.created_at = at;
    rec.owner = owner;
    directory->put(std::make_shared<const volume_record>(std::move(rec)));
    auto path = dir.path + "/" + name + ".img";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, size), 0);
    for (const auto& [offset, length] : writes) {
      std::vector<char> data(static_cast<size_t>(length), byte);
      ASSERT_EQ(::pwrite(fd, data.data(), data.size(), offset), length);
    }
    ::close(fd);
  }

  streamed allocated(const std::string& id, int64_t from = 0, int32_t max = 0) {
    v1::GetMetadataAllocatedRequest req;
    req.set_snapshot_id(id);
    req.set_starting_offset(from);
    req.set_max_results(max);
    auto stub = v1::SnapshotMetadata::NewStub(channel);
    grpc::ClientContext c;
    auto reader = stub->GetMetadataAllocated(ctx(c), req);
    return read_all(reader, v1::GetMetadataAllocatedResponse{});
  }

  streamed delta(const std::string& base, const std::string& target, int64_t from = 0,
                 int32_t max = 0) {
    v1::GetMetadataDeltaRequest req;
    req.set_base_snapshot_id(base);
    req.set_target_snapshot_id(target);
    req.set_starting_offset(from);
    req.set_max_results(max);
    auto stub = v1::SnapshotMetadata::NewStub(channel);
    grpc::ClientContext c;
    auto reader = stub->GetMetadataDelta(ctx(c), req);
    return read_all(reader, v1::GetMetadataDeltaResponse{});
  }
};

using ranges = std::vector<std::pair<int64_t, int64_t>>;

} // namespace

TEST_F(csi_snapshot_metadata_test, allocated_streams_the_written_ranges_in_pages_and_resumes) {
  snapshot("snap-a", "pvc-1", "2026-12-07T10:00:00Z", 8 * mib,
           {{0, 4 * kib}, {1 * mib, 64 * kib}, {5 * mib, 4 * kib}});
  ranges written{{0, 4 * kib}, {1 * mib, 64 * kib}, {5 * mib, 4 * kib}};
  auto all = allocated("snap-a");
  ASSERT_TRUE(all.status.ok()) << all.status.error_message();
  EXPECT_EQ(all.ranges, written);
  EXPECT_EQ(all.messages, 1u);
  EXPECT_EQ(all.capacities, std::vector<int64_t>{8 * mib});
  EXPECT_EQ(all.types, std::vector<int>{v1::VARIABLE_LENGTH});
  auto paged = allocated("snap-a", 0, 1);
  ASSERT_TRUE(paged.status.ok()) << paged.status.error_message();
  EXPECT_EQ(paged.ranges, written);
  EXPECT_EQ(paged.messages, 3u) << "max_results 1: a range per message";
  auto resumed = allocated("snap-a", 1 * mib + 32 * kib);
  ASSERT_TRUE(resumed.status.ok()) << resumed.status.error_message();
  EXPECT_EQ(resumed.ranges, (ranges{{1 * mib + 32 * kib, 32 * kib}, {5 * mib, 4 * kib}}));
  // From the very end: one message with the capacity and no range.
  auto end = allocated("snap-a", 8 * mib);
  ASSERT_TRUE(end.status.ok()) << end.status.error_message();
  EXPECT_TRUE(end.ranges.empty());
  EXPECT_EQ(end.capacities, std::vector<int64_t>{8 * mib});
}

TEST_F(csi_snapshot_metadata_test, delta_streams_the_blocks_that_changed_between_two_snapshots) {
  snapshot("snap-1", "pvc-1", "2026-12-07T10:00:00Z", 8 * mib, {{0, 2 * mib}});
  snapshot("snap-2", "pvc-1", "2026-12-07T11:00:00Z", 8 * mib, {{0, 2 * mib}});
  // Changed after snap-1: one block inside the written data, one in its hole.
  int fd = ::open((dir.path + "/snap-2.img").c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<char> y(4 * kib, 'y');
  ASSERT_EQ(::pwrite(fd, y.data(), y.size(), 300 * kib), 4 * kib);
  ASSERT_EQ(::pwrite(fd, y.data(), y.size(), 6 * mib), 4 * kib);
  ::close(fd);
  ranges changed{{256 * kib, 64 * kib}, {6 * mib, 64 * kib}};
  auto all = delta("snap-1", "snap-2");
  ASSERT_TRUE(all.status.ok()) << all.status.error_message();
  EXPECT_EQ(all.ranges, changed);
  EXPECT_EQ(all.capacities.front(), 8 * mib);
  auto paged = delta("snap-1", "snap-2", 0, 1);
  EXPECT_EQ(paged.ranges, changed);
  EXPECT_EQ(paged.messages, 2u);
  auto resumed = delta("snap-1", "snap-2", 1 * mib);
  EXPECT_EQ(resumed.ranges, (ranges{{6 * mib, 64 * kib}}));
  auto none = delta("snap-1", "snap-1");
  ASSERT_TRUE(none.status.ok()) << none.status.error_message();
  EXPECT_TRUE(none.ranges.empty()) << "a snapshot does not differ from itself";
}

TEST_F(csi_snapshot_metadata_test, refuses_what_the_spec_names_and_streams_nothing) {
  snapshot("snap-1", "pvc-1", "2026-12-07T10:00:00Z", 8 * mib, {{0, 4 * kib}});
  snapshot("snap-2", "pvc-1", "2026-12-07T11:00:00Z", 8 * mib, {{0, 4 * kib}});
  snapshot("snap-other", "pvc-2", "2026-12-07T11:00:00Z", 8 * mib, {{0, 4 * kib}});
  snapshot("web-snap", "web", "2026-12-07T11:00:00Z", 8 * mib, {{0, 4 * kib}}, 'x',
           record_owner::docker);
  auto code_of = [](const streamed& s) { return s.status.error_code(); };
  EXPECT_EQ(code_of(allocated("")), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code_of(allocated("snap-none")), StatusCode::NOT_FOUND);
  EXPECT_EQ(code_of(allocated("web-snap")), StatusCode::NOT_FOUND) << "Docker's is none of CSI's";
  EXPECT_EQ(code_of(allocated("../etc")), StatusCode::NOT_FOUND);
  EXPECT_EQ(code_of(allocated("snap-1", -1)), StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(code_of(allocated("snap-1", 8 * mib + 1)), StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(code_of(allocated("snap-1", 0, -1)), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code_of(delta("", "snap-2")), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code_of(delta("snap-1", "")), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code_of(delta("snap-1", "snap-none")), StatusCode::NOT_FOUND);
  auto other = delta("snap-1", "snap-other");
  EXPECT_EQ(code_of(other), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(other.status.error_message().find("pvc-2"), std::string::npos)
    << other.status.error_message();
  auto backwards = delta("snap-2", "snap-1");
  EXPECT_EQ(code_of(backwards), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(backwards.status.error_message().find("newer"), std::string::npos)
    << backwards.status.error_message();
  EXPECT_EQ(code_of(delta("snap-1", "snap-2", 9 * mib)), StatusCode::OUT_OF_RANGE);
  for (const auto* s : {&other, &backwards}) {
    EXPECT_EQ(s->messages, 0u);
  }
}

TEST_F(csi_snapshot_metadata_test,
       a_snapshot_of_a_backend_without_images_is_a_failed_precondition) {
  volume_spec spec;
  spec.kind = record_kind::snapshot;
  spec.backend = "local";
  spec.source = volume_source("pvc-dir");
  auto rec = make_csi_record("snap-dir", spec, 0);
  directory->put(std::make_shared<const volume_record>(std::move(rec)));
  auto st = allocated("snap-dir").status;
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION) << st.error_message();
  EXPECT_NE(st.error_message().find("local"), std::string::npos) << st.error_message();
}

TEST_F(csi_snapshot_metadata_test, identity_advertises_the_service) {
  v1::GetPluginCapabilitiesResponse caps;
  grpc::ClientContext c;
  ASSERT_TRUE(v1::Identity::NewStub(channel)->GetPluginCapabilities(ctx(c), {}, &caps).ok());
  bool found = false;
  for (const auto& cap : caps.capabilities()) {
    found =
      found || cap.service().type() == v1::PluginCapability::Service::SNAPSHOT_METADATA_SERVICE;
  }
  EXPECT_TRUE(found);
}

namespace {

class csi_capabilities_1_9_test : public csi_snapshot_metadata_test {
protected:
  csi_capabilities_1_9_test() { advertise_since_1_10 = false; }
};

} // namespace

// --csi-capabilities 1.9: neither GET_SNAPSHOT nor SNAPSHOT_METADATA_SERVICE is advertised,
// for a suite that refuses what CSI 1.9 lacks; their RPCs still answer.
TEST_F(csi_capabilities_1_9_test, advertises_nothing_csi_1_9_lacks_and_still_serves_it) {
  v1::GetPluginCapabilitiesResponse plugin;
  grpc::ClientContext c1;
  ASSERT_TRUE(v1::Identity::NewStub(channel)->GetPluginCapabilities(ctx(c1), {}, &plugin).ok());
  for (const auto& cap : plugin.capabilities()) {
    EXPECT_NE(cap.service().type(), v1::PluginCapability::Service::SNAPSHOT_METADATA_SERVICE);
  }
  v1::ControllerGetCapabilitiesResponse ctrl;
  grpc::ClientContext c2;
  ASSERT_TRUE(v1::Controller::NewStub(channel)->ControllerGetCapabilities(ctx(c2), {}, &ctrl).ok());
  ASSERT_GT(ctrl.capabilities_size(), 0);
  for (const auto& cap : ctrl.capabilities()) {
    EXPECT_NE(cap.rpc().type(), v1::ControllerServiceCapability::RPC::GET_SNAPSHOT);
  }
  snapshot("snap-a", "pvc-1", "2026-12-07T10:00:00Z", 1 * mib, {{0, 4 * kib}});
  auto all = allocated("snap-a");
  ASSERT_TRUE(all.status.ok()) << all.status.error_message();
  EXPECT_EQ(all.ranges, (ranges{{0, 4 * kib}}));
}
