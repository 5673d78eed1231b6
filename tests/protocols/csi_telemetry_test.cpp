// Every CSI RPC counts once in telemetry::operations ("csi", the RPC's name, the
// outcome's code, arrival to answer), whether the adapter refuses it, an actor
// answers it or the RPC is not served.

#include <algorithm>

#include <caf/all.hpp>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "csi.grpc.pb.h"
#include "protocols/csi/counted_reactor.hpp"
#include "tests/protocols/csi_server_fixture.hpp"

using namespace berth;
namespace v1 = ::csi::v1;

namespace {

class csi_telemetry_test : public test::csi_server_fixture {
protected:
  /// The row (csi, `rpc`), and how many of its requests were answered with `code`.
  operation_table::row row_of(const std::string& rpc) {
    for (auto& r : stats->operations.snapshot()) {
      if (r.key == label_pair{"csi", rpc}) {
        return r;
      }
    }
    ADD_FAILURE() << "no row csi/" << rpc;
    return {};
  }
  static uint64_t with_code(const operation_table::row& row, const std::string& code) {
    for (const auto& [c, n] : row.codes) {
      if (c == code) {
        return n;
      }
    }
    return 0;
  }
};

} // namespace

TEST_F(csi_telemetry_test, each_rpc_counts_once_with_its_code_and_duration) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  EXPECT_EQ(create_volume("", &created).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  {
    v1::ControllerExpandVolumeRequest req;
    req.set_volume_id("nope");
    req.mutable_capacity_range()->set_required_bytes(2 << 20);
    v1::ControllerExpandVolumeResponse resp;
    grpc::ClientContext c;
    EXPECT_EQ(v1::Controller::NewStub(channel)->ControllerExpandVolume(ctx(c), req, &resp)
                .error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  {
    v1::ControllerPublishVolumeRequest req;
    v1::ControllerPublishVolumeResponse resp;
    grpc::ClientContext c;
    EXPECT_EQ(v1::Controller::NewStub(channel)->ControllerPublishVolume(ctx(c), req, &resp)
                .error_code(),
              grpc::StatusCode::UNIMPLEMENTED);
  }

  auto create = row_of("CreateVolume");
  EXPECT_EQ(with_code(create, "ok"), 1u);
  EXPECT_EQ(with_code(create, "invalid_argument"), 1u) << "refused in the adapter: no name";
  EXPECT_EQ(create.duration.count, 2u);
  EXPECT_GT(create.duration.sum, 0.0);
  auto expand = row_of("ControllerExpandVolume");
  EXPECT_EQ(with_code(expand, "not_found"), 1u) << "the registry's error, by code_of()";
  EXPECT_EQ(expand.duration.count, 1u);
  EXPECT_EQ(with_code(row_of("ControllerPublishVolume"), "unsupported"), 1u);
  uint64_t all = 0;
  for (const auto& r : stats->operations.snapshot()) {
    all += r.duration.count;
  }
  EXPECT_EQ(all, 4u) << "every RPC once, nothing twice";
}

TEST(csi_code_of_status, names_the_berth_code_of_each_status_the_adapter_makes) {
  EXPECT_EQ(berth::csi::code_of_status(grpc::StatusCode::OK), "ok");
  EXPECT_EQ(berth::csi::code_of_status(grpc::StatusCode::INVALID_ARGUMENT), "invalid_argument");
  EXPECT_EQ(berth::csi::code_of_status(grpc::StatusCode::NOT_FOUND), "not_found");
  EXPECT_EQ(berth::csi::code_of_status(grpc::StatusCode::DEADLINE_EXCEEDED), "timeout");
  EXPECT_EQ(berth::csi::code_of_status(grpc::StatusCode::UNIMPLEMENTED), "unsupported");
  EXPECT_EQ(berth::csi::code_of_status(grpc::StatusCode::DATA_LOSS), other_label);
  for (auto code : {grpc::StatusCode::OK, grpc::StatusCode::ABORTED,
                    grpc::StatusCode::RESOURCE_EXHAUSTED, grpc::StatusCode::CANCELLED}) {
    auto name = std::string{berth::csi::code_of_status(code)};
    EXPECT_NE(std::find(code_names().begin(), code_names().end(), name), code_names().end())
      << name << " is one of code_names()";
  }
}
