// Changed block tracking against the real berthd, with real loop devices: the oracle test.
// A raw block volume gets a known pattern, is snapshotted, has known blocks changed
// (written over, written where nothing was, zeroed, discarded: a hole punched through the
// loop device), and is snapshotted again; GetMetadataAllocated must list what was
// written, and GetMetadataDelta exactly the changed blocks, resumed from any offset. A
// volume grown between its snapshots (a real ControllerExpandVolume) lists the blocks
// written in its new part, and nothing of that part left unwritten.

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {
namespace {

using ranges = std::vector<std::pair<int64_t, int64_t>>;
constexpr int64_t KiB = 1024;

class SnapshotMetadataTest : public csi_fixture {
protected:
  /// Writes `len` bytes of `byte` at `offset` of the device `path`, and flushes them.
  static ::testing::AssertionResult write_device(const std::string& path, int64_t offset,
                                                 int64_t len, char byte) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      return ::testing::AssertionFailure() << "open " << path << ": " << std::strerror(errno);
    }
    std::vector<char> data(static_cast<size_t>(len), byte);
    bool ok = ::pwrite(fd, data.data(), data.size(), offset) == len && ::fsync(fd) == 0;
    int err = errno;
    ::close(fd);
    if (!ok) {
      return ::testing::AssertionFailure() << "write " << path << ": " << std::strerror(err);
    }
    return ::testing::AssertionSuccess();
  }

  /// Discards [offset, offset + len) of the device: the loop driver punches a hole there.
  static ::testing::AssertionResult discard(const std::string& path, int64_t offset, int64_t len) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      return ::testing::AssertionFailure() << "open " << path << ": " << std::strerror(errno);
    }
    uint64_t range[2] = {static_cast<uint64_t>(offset), static_cast<uint64_t>(len)};
    int rc = ::ioctl(fd, BLKDISCARD, range);
    int err = errno;
    ::close(fd);
    if (rc != 0) {
      return ::testing::AssertionFailure() << "BLKDISCARD " << path << ": " << std::strerror(err);
    }
    return ::testing::AssertionSuccess();
  }

  std::unique_ptr<v1::SnapshotMetadata::Stub> stub() {
    return v1::SnapshotMetadata::NewStub(
      grpc::CreateChannel(berthd().endpoint(), grpc::InsecureChannelCredentials()));
  }

  template <class Reader, class Response>
  static ranges read_ranges(Reader& reader, Response msg, grpc::Status& st) {
    ranges out;
    while (reader->Read(&msg)) {
      for (const auto& m : msg.block_metadata()) {
        out.emplace_back(m.byte_offset(), m.size_bytes());
      }
    }
    st = reader->Finish();
    return out;
  }

  ranges allocated(const std::string& id, int64_t from, grpc::Status& st) {
    v1::GetMetadataAllocatedRequest req;
    req.set_snapshot_id(id);
    req.set_starting_offset(from);
    grpc::ClientContext c;
    c.set_deadline(std::chrono::system_clock::now() + timeout);
    auto s = stub();
    auto reader = s->GetMetadataAllocated(&c, req);
    return read_ranges(reader, v1::GetMetadataAllocatedResponse{}, st);
  }

  ranges delta(const std::string& base, const std::string& target, int64_t from, int32_t max,
               grpc::Status& st) {
    v1::GetMetadataDeltaRequest req;
    req.set_base_snapshot_id(base);
    req.set_target_snapshot_id(target);
    req.set_starting_offset(from);
    req.set_max_results(max);
    grpc::ClientContext c;
    c.set_deadline(std::chrono::system_clock::now() + timeout);
    auto s = stub();
    auto reader = s->GetMetadataDelta(&c, req);
    return read_ranges(reader, v1::GetMetadataDeltaResponse{}, st);
  }
};

TEST_F(SnapshotMetadataTest, TheDeltaOfTwoSnapshotsIsExactlyTheBlocksChangedBetweenThem) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume(create_request("cbt", 64 * MiB, 0, {}, block_cap()), &vol));
  auto staging = staging_path(vol.volume_id());
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging, block_cap()));
  ASSERT_TRUE(publish(vol.volume_id(), staging, target, block_cap()));
  const int64_t mib = static_cast<int64_t>(MiB);
  ASSERT_TRUE(write_device(target, 0, 4 * mib, 'a'));
  ASSERT_TRUE(write_device(target, 16 * mib, 1 * mib, 'a'));
  v1::Snapshot first;
  ASSERT_TRUE(create_snapshot("cbt-1", vol.volume_id(), &first));

  ASSERT_TRUE(write_device(target, 1 * mib + 8 * KiB, 4 * KiB, 'b')); // over data
  ASSERT_TRUE(write_device(target, 20 * mib, 128 * KiB, 'c'));        // where none was
  ASSERT_TRUE(write_device(target, 16 * mib, 64 * KiB, '\0'));        // data zeroed
  ASSERT_TRUE(discard(target, 2 * mib, 64 * KiB));                    // a hole punched
  ASSERT_TRUE(write_device(target, 3 * mib, 64 * KiB, 'a'));          // the same bytes again
  v1::Snapshot second;
  ASSERT_TRUE(create_snapshot("cbt-2", vol.volume_id(), &second));

  grpc::Status st;
  auto written = allocated("cbt-1", 0, st);
  ASSERT_TRUE(st.ok()) << st.error_message();
  int64_t covered = 0;
  for (const auto& [offset, length] : written) {
    covered += length;
  }
  EXPECT_EQ(covered, 5 * mib) << "what was written, and nothing else";

  ranges changed{
    {1 * mib, 64 * KiB}, {2 * mib, 64 * KiB}, {16 * mib, 64 * KiB}, {20 * mib, 128 * KiB}};
  EXPECT_EQ(delta("cbt-1", "cbt-2", 0, 0, st), changed);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(delta("cbt-1", "cbt-2", 0, 1, st), changed) << "one range per message";
  // Resumed where an interrupted stream would: after the second range.
  EXPECT_EQ(delta("cbt-1", "cbt-2", 2 * mib + 64 * KiB, 0, st),
            (ranges{{16 * mib, 64 * KiB}, {20 * mib, 128 * KiB}}));

  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
}

TEST_F(SnapshotMetadataTest, AVolumeGrownBetweenSnapshotsListsWhatWasWrittenInItsNewPart) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume(create_request("cbt-grow", 300 * MiB, 0, {}, block_cap()), &vol));
  auto staging = staging_path(vol.volume_id());
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging, block_cap()));
  ASSERT_TRUE(publish(vol.volume_id(), staging, target, block_cap()));
  const int64_t mib = static_cast<int64_t>(MiB);
  ASSERT_TRUE(write_device(target, 0, 1 * mib, 'a'));
  v1::Snapshot small;
  ASSERT_TRUE(create_snapshot("cbt-grow-1", vol.volume_id(), &small));
  EXPECT_EQ(small.size_bytes(), 300 * mib); // berth's least size

  // Grown offline: the next stage attaches the larger image.
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
  ASSERT_TRUE(controller_expand(vol.volume_id(), 400 * MiB));
  ASSERT_TRUE(stage(vol.volume_id(), staging, block_cap()));
  ASSERT_TRUE(publish(vol.volume_id(), staging, target, block_cap()));
  ASSERT_TRUE(write_device(target, 4 * KiB, 4 * KiB, 'b'));    // in the old part
  ASSERT_TRUE(write_device(target, 350 * mib, 64 * KiB, 'n')); // in the new part
  v1::Snapshot grown;
  ASSERT_TRUE(create_snapshot("cbt-grow-2", vol.volume_id(), &grown));
  EXPECT_EQ(grown.size_bytes(), 400 * mib);

  grpc::Status st;
  EXPECT_EQ(delta("cbt-grow-1", "cbt-grow-2", 0, 0, st),
            (ranges{{0, 64 * KiB}, {350 * mib, 64 * KiB}}));
  ASSERT_TRUE(st.ok()) << st.error_message();
  // An offset in the new part is inside the target, so it is no OUT_OF_RANGE.
  EXPECT_EQ(delta("cbt-grow-1", "cbt-grow-2", 320 * mib, 0, st), (ranges{{350 * mib, 64 * KiB}}));
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(allocated("cbt-grow-2", 300 * mib, st), (ranges{{350 * mib, 64 * KiB}}));
  ASSERT_TRUE(st.ok()) << st.error_message();

  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
}

} // namespace
} // namespace berth::csi_test
