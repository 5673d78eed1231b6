// A record is never silently cut (docs/design.md, "Durable state"). Encoding and
// decoding share limits::max_frame_bytes; a record over it is refused when written, a
// length field over it is damage when read, and a record filled to every bound in
// core/limits.hpp fits.

#include "persistence/file_store.hpp"

#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "records.hpp"
#include "temp_dir.hpp"

namespace berth {
namespace {

using test::make_record;
using test::put;
using test::read_text;
using test::temp_dir;
using test::write_text;

namespace fs = std::filesystem;

/// A record whose option "o" is `filler` bytes of 'x' (no JSON escapes).
volume_record padded(const std::string& name, size_t filler) {
  auto rec = make_record(name, 1);
  rec.options["o"] = std::string(filler, 'x');
  return rec;
}

/// The journal frame size of `rec`: what one append of it adds to a journal.
size_t frame_size(const volume_record& rec) {
  temp_dir tmp;
  file_store st{tmp / "state"};
  EXPECT_TRUE(st.load());
  EXPECT_FALSE(st.append({put(make_record("first"))})); // a header, when there is one
  auto before = st.journal_bytes();
  auto err = st.append({put(rec)});
  EXPECT_FALSE(err) << describe(err);
  return st.journal_bytes() - before;
}

/// A record padded so that its frame is exactly `bytes` long.
volume_record record_with_frame(const std::string& name, size_t bytes) {
  auto probe = padded(name, 1000);
  auto size = frame_size(probe);
  auto rec = padded(name, 1000 + bytes - size);
  return rec;
}

bool has_damaged_copy(const std::string& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("journal.log.damaged-", 0) == 0) {
      return true;
    }
  }
  return false;
}

TEST(journal_limits, record_at_the_frame_limit_round_trips) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto rec = record_with_frame("atlimit", limits::max_frame_bytes);
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("before"))}));
    auto before = st.journal_bytes();
    auto err = st.append({put(rec)});
    ASSERT_FALSE(err) << describe(err);
    EXPECT_EQ(st.journal_bytes() - before, size_t{limits::max_frame_bytes});
    ASSERT_FALSE(st.append({put(make_record("after"))}));
  }
  file_store st{dir};
  auto loaded = st.load();
  ASSERT_TRUE(loaded) << describe(loaded.error());
  ASSERT_EQ(loaded->volumes.count("atlimit"), 1u);
  EXPECT_EQ(loaded->volumes.at("atlimit"), rec);
  EXPECT_EQ(loaded->volumes.count("before"), 1u);
  EXPECT_EQ(loaded->volumes.count("after"), 1u);
  EXPECT_FALSE(has_damaged_copy(dir));
}

TEST(journal_limits, record_one_byte_over_the_limit_is_refused_and_the_journal_stays_whole) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto rec = record_with_frame("overlimit", limits::max_frame_bytes);
  rec.options["o"].push_back('x');
  file_store st{dir};
  ASSERT_TRUE(st.load());
  ASSERT_FALSE(st.append({put(make_record("before"))}));
  auto whole = st.journal_bytes();
  auto err = st.append({put(make_record("same-batch")), put(rec)});
  ASSERT_TRUE(err) << "a record that decoding would reject must not be written";
  EXPECT_NE(describe(err).find("overlimit"), std::string::npos) << describe(err);
  EXPECT_NE(describe(err).find(std::to_string(limits::max_frame_bytes + 1)), std::string::npos)
    << describe(err);
  EXPECT_EQ(st.journal_bytes(), whole);
  EXPECT_EQ(fs::file_size(dir + "/journal.log"), whole) << "nothing partial is written";
  ASSERT_FALSE(st.append({put(make_record("after"))}));
  file_store again{dir};
  auto loaded = again.load();
  ASSERT_TRUE(loaded) << describe(loaded.error());
  EXPECT_EQ(loaded->volumes.count("before"), 1u);
  EXPECT_EQ(loaded->volumes.count("after"), 1u) << "later appends read back";
  EXPECT_EQ(loaded->volumes.count("overlimit"), 0u);
  EXPECT_EQ(loaded->volumes.count("same-batch"), 0u) << "the refused write wrote nothing";
}

TEST(journal_limits, a_large_record_never_cuts_later_acknowledged_records) {
  temp_dir tmp;
  auto dir = tmp / "state";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("a"))}));
    // Accepted or refused, but never written so that it reads back as a torn tail.
    auto err = st.append({put(padded("huge", size_t{limits::max_frame_bytes} + (1u << 20)))});
    EXPECT_TRUE(err);
    ASSERT_FALSE(st.append({put(make_record("b"))}));
  }
  file_store st{dir};
  auto loaded = st.load();
  ASSERT_TRUE(loaded) << describe(loaded.error());
  EXPECT_EQ(loaded->volumes.count("a"), 1u);
  EXPECT_EQ(loaded->volumes.count("b"), 1u) << "an acknowledged record was silently cut";
}

/// Appends a frame header claiming `len` bytes, then `tail` bytes of payload.
void append_bad_frame(const std::string& journal, uint32_t len, size_t tail) {
  std::string frame;
  for (int i = 0; i < 4; ++i) {
    frame.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  }
  frame.append("\x12\x34\x56\x78", 4);
  frame.append(tail, 'g');
  write_text(journal, read_text(journal) + frame);
}

TEST(journal_limits, length_field_beyond_the_limit_is_damage_not_a_torn_tail) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto journal = dir + "/journal.log";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("a"))}));
    ASSERT_FALSE(st.append({put(make_record("b"))}));
  }
  auto good = read_text(journal);
  append_bad_frame(journal, limits::max_frame_bytes, 64);
  auto damaged = read_text(journal);
  {
    file_store st{dir};
    auto loaded = st.load();
    ASSERT_TRUE(loaded) << describe(loaded.error());
    EXPECT_EQ(loaded->volumes.size(), 2u);
    ASSERT_FALSE(st.append({put(make_record("c"))}));
  }
  bool kept = false;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("journal.log.damaged-", 0) == 0) {
      kept = read_text(entry.path().string()) == damaged;
    }
  }
  EXPECT_TRUE(kept) << "a length over the limit is damage: the journal is kept aside";
  file_store st{dir};
  auto loaded = st.load();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->volumes.size(), 3u);
}

TEST(journal_limits, length_within_the_limit_but_cut_short_is_still_a_torn_tail) {
  temp_dir tmp;
  auto dir = tmp / "state";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("a"))}));
  }
  append_bad_frame(dir + "/journal.log", limits::max_frame_bytes - 8, 64);
  file_store st{dir};
  auto loaded = st.load();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->volumes.size(), 1u);
  EXPECT_FALSE(has_damaged_copy(dir)) << "a torn tail was never acknowledged";
}

// -- every bound at once -----------------------------------------------------------------

/// `n` bytes that JSON writes at their longest: control characters become \u00XX (6 bytes),
/// after a distinct prefix `unique` (map keys must differ).
std::string escaped(const std::string& unique, size_t n) {
  auto s = unique.substr(0, n);
  s.resize(n, '\x01');
  return s;
}

volume_record record_at_every_bound() {
  volume_record rec;
  rec.name = std::string(128, 'n');
  rec.backend = "block";
  rec.created_at = "2026-12-01T00:00:00Z";
  rec.kind = record_kind::volume;
  rec.capacity_bytes = ~uint64_t{0};
  rec.source = snapshot_source(std::string(128, 's'));
  rec.device = "/dev/loop" + std::to_string(~uint32_t{0});
  rec.mounted = true;
  rec.mountpoint = "/var/lib/berth/volumes/" + rec.name + "/mnt";
  for (size_t i = 0; i < limits::max_mount_ids; ++i) {
    auto id = escaped(std::to_string(i) + "-", limits::max_mount_id_bytes);
    rec.mounts[id] = ~uint32_t{0};
    // The longest origin: a dockerd key of the largest pid and start time.
    rec.origins[id] =
      mount_id_origin{"2147483647@18446744073709551615", std::numeric_limits<int64_t>::min()};
  }
  for (size_t i = 0; i < limits::max_options; ++i) {
    rec.options[escaped(std::to_string(i) + "=", limits::max_option_key_bytes)] =
      escaped("\"\\", limits::max_option_value_bytes);
  }
  rec.staging_path = escaped("/", limits::max_path_bytes);
  rec.staged_block = false;
  for (size_t i = 0; i < limits::max_mount_flags; ++i) {
    rec.stage_flags.push_back(escaped("", limits::max_mount_flag_bytes));
  }
  for (size_t t = 0; t < limits::max_targets; ++t) {
    publication how;
    how.readonly = true;
    how.block = true;
    for (size_t i = 0; i < limits::max_mount_flags; ++i) {
      how.flags.push_back(escaped("", limits::max_mount_flag_bytes));
    }
    rec.published[escaped("/" + std::to_string(t) + "/", limits::max_path_bytes)] = how;
  }
  return rec;
}

TEST(journal_limits, record_filled_to_every_bound_fits_in_a_frame) {
  auto rec = record_at_every_bound();
  temp_dir tmp;
  auto dir = tmp / "state";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("first"))}));
    auto before = st.journal_bytes();
    auto err = st.append({put(rec)});
    ASSERT_FALSE(err) << "bounded inputs made a record the journal cannot hold: "
                      << describe(err);
    auto frame = st.journal_bytes() - before;
    EXPECT_LT(frame, size_t{limits::max_frame_bytes});
    std::cout << "largest bounded record: " << frame << " bytes, limit "
              << limits::max_frame_bytes << "\n";
    ASSERT_FALSE(st.append({put(make_record("last"))}));
  }
  file_store st{dir};
  auto loaded = st.load();
  ASSERT_TRUE(loaded) << describe(loaded.error());
  ASSERT_EQ(loaded->volumes.count(rec.name), 1u);
  EXPECT_EQ(loaded->volumes.at(rec.name), rec);
  EXPECT_EQ(loaded->volumes.count("last"), 1u);
}

} // namespace
} // namespace berth
