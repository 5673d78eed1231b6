// berthctl snapshot diff through the admin socket's stream route (admin_transfers and
// detail/snapshot_diff), over real sparse image files: the ranges, their pages as chunks,
// the text and --json, and every refusal, which changes nothing. The ranges themselves
// are block_ranges_test's; a real volume's are tests/e2e/block_volume_e2e.sh's.

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "apps/berthctl/berthctl_cli.hpp"
#include "backends/block_ranges.hpp"
#include "core/record_kind.hpp"
#include "protocols/admin/admin_transfer.hpp"
#include "protocols/admin/detail/snapshot_diff.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "protocols/http/unix_http_server.hpp"
#include "tests/protocols/berthctl_runner.hpp"
#include "tests/protocols/inert_backend.hpp"
#include "tests/protocols/test_util.hpp"

using namespace berth;

namespace {

constexpr uint64_t kib = 1024;
constexpr uint64_t mib = 1024 * kib;

/// A backend whose snapshots are DIR/NAME.img when it keeps images; nothing else is asked.
class image_backend : public test::inert_backend {
public:
  image_backend(std::string name, std::string dir, bool images)
      : inert_backend(std::move(name)), dir_(std::move(dir)), images_(images) {}
  caf::expected<image_map> open_snapshot_image(const volume_record& rec) const override {
    if (!images_) {
      return backend::open_snapshot_image(rec);
    }
    return image_map::open(dir_ + "/" + rec.name + ".img");
  }

private:
  std::string dir_;
  bool images_;
};

class admin_snapshot_diff_test : public ::testing::Test {
protected:
  test::temp_dir dir;
  std::string path = dir.path + "/admin.sock";
  test::io_threads io;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<record_directory> directory = std::make_shared<record_directory>();
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{"block"});
  std::unique_ptr<admin_transfers> transfers;
  std::unique_ptr<unix_http_server> srv;

  void SetUp() override {
    cfg.add_message_types<caf::id_block::berth>();
    sys = std::make_unique<caf::actor_system>(cfg);
    admin_transfers::config c;
    c.imports_dir = dir.path + "/imports";
    c.directory = directory;
    c.backends["block"] = std::make_shared<image_backend>("block", dir.path, true);
    c.backends["local"] = std::make_shared<image_backend>("local", dir.path, false);
    // A diff asks no actor: no registry.
    transfers = std::make_unique<admin_transfers>(*sys, registry_actor{}, stats, c);
    srv = std::make_unique<unix_http_server>(
      io.io,
      [](const std::string&, const std::string&, std::string, reply_fn reply, const caller&) {
        reply(404, "application/json", R"({"error":"not a stream"})");
      },
      1 << 16, "admin");
    srv->take_streams(&admin_transfers::routes,
                      [this](stream_request r) { transfers->take(std::move(r)); });
    ASSERT_FALSE(srv->listen(path));
  }

  void TearDown() override {
    srv->stop();
    transfers->stop();
    io.stop();
  }

  /// A snapshot `name` of `volume`, taken at `at`, whose image of `size` bytes holds
  /// `writes` ({offset, length}) of `byte`.
  void snapshot(const std::string& name, const std::string& volume, const std::string& at,
                uint64_t size, const std::vector<std::pair<uint64_t, uint64_t>>& writes,
                char byte = 'x', record_owner owner = record_owner::docker,
                const std::string& backend = "block") {
    volume_record rec;
    rec.name = name;
    rec.backend = backend;
    rec.kind = record_kind::snapshot;
    rec.owner = owner;
    rec.source = volume_source(volume);
    rec.created_at = at;
    rec.capacity_bytes = size;
    directory->put(std::make_shared<const volume_record>(std::move(rec)));
    auto image = dir.path + "/" + name + ".img";
    int fd = ::open(image.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    for (const auto& [offset, length] : writes) {
      std::vector<char> data(length, byte);
      ASSERT_EQ(::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset)),
                static_cast<ssize_t>(length));
    }
    ::close(fd);
  }

  /// Runs berthctl against the test socket: its exit code, with standard output and error.
  int ctl(std::vector<std::string> args, std::string& out, std::string& err) {
    return test::run_berthctl(path, std::move(args), out, err);
  }

  /// The ranges of a diff's JSON answer.
  static std::vector<std::pair<uint64_t, uint64_t>> ranges_of(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    std::vector<std::pair<uint64_t, uint64_t>> out;
    EXPECT_TRUE(doc.IsObject()) << json;
    if (!doc.IsObject()) {
      return out;
    }
    for (const auto& r : doc["ranges"].GetArray()) {
      out.emplace_back(r["offset"].GetUint64(), r["length"].GetUint64());
    }
    return out;
  }
};

TEST_F(admin_snapshot_diff_test, lists_the_changed_blocks_as_text_and_as_json) {
  snapshot("mon", "data", "2026-12-07T10:00:00Z", 8 * mib, {{0, 64 * kib}, {mib, 4 * kib}});
  snapshot("tue", "data", "2026-12-07T11:00:00Z", 8 * mib,
           {{0, 64 * kib}, {mib, 4 * kib}, {mib + 4 * kib, 4 * kib}, {3 * mib, 128 * kib}});
  std::string out;
  std::string err;
  ASSERT_EQ(ctl({"snapshot", "diff", "mon", "tue", "--json"}, out, err), 0) << err;
  using r = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(ranges_of(out), (std::vector<r>{{mib, 64 * kib}, {3 * mib, 128 * kib}})) << out;
  rapidjson::Document doc;
  doc.Parse(out.c_str());
  EXPECT_EQ(std::string{doc["base"].GetString()}, "mon");
  EXPECT_EQ(std::string{doc["target"].GetString()}, "tue");
  EXPECT_EQ(std::string{doc["volume"].GetString()}, "data");
  EXPECT_EQ(doc["size_bytes"].GetUint64(), 8 * mib);
  EXPECT_EQ(doc["block_bytes"].GetUint64(), delta_block_bytes);
  EXPECT_EQ(doc["changed_bytes"].GetUint64(), 192 * kib);
  ASSERT_EQ(ctl({"snapshot", "diff", "mon", "tue"}, out, err), 0) << err;
  EXPECT_NE(out.find("snapshot tue differs from mon (volume data, 8 MiB (8388608 bytes)) in "
                     "2 ranges: 192 KiB (196608 bytes), in blocks of 64K"),
            std::string::npos)
    << out;
  EXPECT_NE(out.find("1048576   65536\n3145728   131072\n"), std::string::npos) << out;
  // The same snapshot against itself: no range, and still an answer.
  ASSERT_EQ(ctl({"snapshot", "diff", "mon", "mon", "--json"}, out, err), 0) << err;
  EXPECT_TRUE(ranges_of(out).empty()) << out;
}

TEST_F(admin_snapshot_diff_test, a_long_delta_comes_in_pages_and_whole) {
  // Every other block written: as many ranges as written blocks, more than a page holds.
  const uint64_t blocks = admin::detail::diff_page_ranges + 5;
  std::vector<std::pair<uint64_t, uint64_t>> writes;
  std::vector<std::pair<uint64_t, uint64_t>> expected;
  for (uint64_t i = 0; i < blocks; ++i) {
    writes.emplace_back(2 * i * delta_block_bytes, 4 * kib);
    expected.emplace_back(2 * i * delta_block_bytes, delta_block_bytes);
  }
  const uint64_t size = 2 * blocks * delta_block_bytes;
  snapshot("empty", "big", "2026-12-07T10:00:00Z", size, {});
  snapshot("striped", "big", "2026-12-07T11:00:00Z", size, writes);
  std::string out;
  std::string err;
  ASSERT_EQ(ctl({"snapshot", "diff", "empty", "striped", "--json"}, out, err), 0) << err;
  EXPECT_EQ(ranges_of(out), expected);
}

TEST_F(admin_snapshot_diff_test, refuses_what_it_cannot_compare_and_names_it) {
  snapshot("mon", "data", "2026-12-07T10:00:00Z", mib, {{0, 4 * kib}});
  snapshot("tue", "data", "2026-12-07T11:00:00Z", mib, {{0, 4 * kib}}, 'y');
  snapshot("other", "logs", "2026-12-07T12:00:00Z", mib, {});
  snapshot("csi-snap", "data", "2026-12-07T12:00:00Z", mib, {}, 'x', record_owner::csi);
  snapshot("dir-snap", "files", "2026-12-07T12:00:00Z", mib, {}, 'x', record_owner::docker,
           "local");
  snapshot("dir-snap2", "files", "2026-12-07T13:00:00Z", mib, {}, 'x', record_owner::docker,
           "local");
  struct refusal {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<refusal> refusals = {
    {{"nope", "tue"}, "base snapshot \"nope\": no Docker snapshot of that name"},
    {{"mon", "csi-snap"}, "target snapshot \"csi-snap\": no Docker snapshot of that name"},
    {{"mon", "other"},
     "base snapshot \"mon\" is a snapshot of volume \"data\" and target "
     "snapshot \"other\" of volume \"logs\""},
    {{"tue", "mon"}, "is newer than target snapshot \"mon\""},
    {{"dir-snap", "dir-snap2"},
     "is a local snapshot; changed blocks are known only between the images of block "
     "snapshots"},
    {{"..", "tue"}, "invalid snapshot name"},
  };
  for (const auto& r : refusals) {
    std::string out;
    std::string err;
    std::vector<std::string> args{"snapshot", "diff"};
    args.insert(args.end(), r.args.begin(), r.args.end());
    EXPECT_EQ(ctl(args, out, err), cli::exit_failure) << r.says;
    EXPECT_NE(err.find(r.says), std::string::npos) << err;
    EXPECT_TRUE(out.empty()) << out;
  }
  // A query other than base= once is refused, naming it.
  unix_http_client client{path};
  for (std::string query : {"", "?base=mon&base=mon", "?from=mon"}) {
    auto res = client.get("/v1/snapshots/tue/diff" + query);
    ASSERT_TRUE(res) << describe(res.error());
    EXPECT_EQ(res->status, 400u) << query;
    EXPECT_NE(res->body.find("base=SNAPSHOT"), std::string::npos) << res->body;
  }
  auto ok = client.get("/v1/snapshots/tue/diff?base=mon");
  ASSERT_TRUE(ok) << describe(ok.error());
  EXPECT_EQ(ok->status, 200u) << ok->body;
  EXPECT_EQ(ranges_of(ok->body), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 64 * kib}}));
}

} // namespace
