#include "persistence/file_store.hpp"

#include <csignal>
#include <filesystem>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "persistence/journal_format.hpp"
#include "records.hpp"
#include "temp_dir.hpp"

namespace berth {
namespace {

using test::erase;
using test::make_record;
using test::put;
using test::read_text;
using test::temp_dir;
using test::write_text;

namespace fs = std::filesystem;

/// Loads a fresh store on `dir`, failing the test on error.
state_snapshot reload(const std::string& dir) {
  file_store st{dir};
  auto loaded = st.load();
  EXPECT_TRUE(loaded) << describe(loaded.error());
  return loaded ? *loaded : state_snapshot{};
}

/// Appends one record per call, so each is one framed journal record.
void append_each(file_store& st, std::initializer_list<const char*> names) {
  for (auto name : names) {
    ASSERT_FALSE(st.append({put(make_record(name, 1))}));
  }
}

/// Byte offsets where each journal record starts (walks the length fields), after the
/// journal's header frame.
std::vector<size_t> record_offsets(const std::string& journal) {
  std::vector<size_t> offsets;
  size_t pos = 0;
  bool header = true;
  while (pos + 8 <= journal.size()) {
    if (!header) {
      offsets.push_back(pos);
    }
    header = false;
    uint32_t len = 0;
    for (int i = 3; i >= 0; --i) {
      len = (len << 8) | static_cast<unsigned char>(journal[pos + static_cast<size_t>(i)]);
    }
    pos += 8 + len;
  }
  return offsets;
}

TEST(file_store, creates_missing_folder_private_and_loads_empty) {
  temp_dir tmp;
  file_store st{tmp / "state"};
  auto loaded = st.load();
  ASSERT_TRUE(loaded) << describe(loaded.error());
  EXPECT_TRUE(loaded->volumes.empty());
  struct stat info {};
  ASSERT_EQ(::stat((tmp / "state").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  EXPECT_EQ(st.journal_bytes(), 0u);
}

TEST(file_store, journal_round_trip) {
  temp_dir tmp;
  auto dir = tmp / "state";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("a", 2)), put(make_record("b"))}));
    auto c = make_record("c", 1);
    c.mounts["c0"] = 7;
    c.options["o"] = "size=1m,\"quoted\"";
    ASSERT_FALSE(st.append({put(c)}));
    EXPECT_EQ(st.journal_bytes(), fs::file_size(dir + "/journal.log"));
  }
  auto state = reload(dir);
  ASSERT_EQ(state.volumes.size(), 3u);
  EXPECT_EQ(state.volumes["a"], make_record("a", 2));
  EXPECT_EQ(state.volumes["b"], make_record("b"));
  EXPECT_EQ(state.volumes["c"].mounts.at("c0"), 7u);
  EXPECT_EQ(state.volumes["c"].options.at("o"), "size=1m,\"quoted\"");
}

TEST(file_store, later_put_wins_and_erase_survives_reload) {
  temp_dir tmp;
  auto dir = tmp / "state";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("a")), put(make_record("b"))}));
    ASSERT_FALSE(st.append({put(make_record("a", 3)), erase("b")}));
  }
  auto state = reload(dir);
  ASSERT_EQ(state.volumes.size(), 1u);
  EXPECT_EQ(state.volumes["a"], make_record("a", 3));
}

TEST(file_store, torn_tail_is_dropped_and_appends_continue) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto journal = dir + "/journal.log";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    append_each(st, {"a", "b", "c"});
  }
  auto full = fs::file_size(journal);
  fs::resize_file(journal, full - 3);
  {
    file_store st{dir};
    auto loaded = st.load();
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->volumes.size(), 2u);
    EXPECT_EQ(loaded->volumes.count("c"), 0u);
    EXPECT_EQ(fs::file_size(journal), st.journal_bytes());
    append_each(st, {"d"});
  }
  auto state = reload(dir);
  EXPECT_EQ(state.volumes.size(), 3u);
  EXPECT_EQ(state.volumes.count("a"), 1u);
  EXPECT_EQ(state.volumes.count("b"), 1u);
  EXPECT_EQ(state.volumes.count("d"), 1u);
}

TEST(file_store, torn_header_is_dropped) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto journal = dir + "/journal.log";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    append_each(st, {"a"});
  }
  auto text = read_text(journal);
  write_text(journal, text + std::string("\x05\x00\x00", 3));
  auto state = reload(dir);
  EXPECT_EQ(state.volumes.size(), 1u);
  EXPECT_EQ(fs::file_size(journal), text.size());
}

TEST(file_store, checksum_failing_tail_is_dropped_and_appends_continue) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto journal = dir + "/journal.log";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    append_each(st, {"a", "b", "c"});
  }
  auto text = read_text(journal);
  text[text.size() - 2] ^= 0x20; // inside the last payload
  write_text(journal, text);
  {
    file_store st{dir};
    auto loaded = st.load();
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->volumes.size(), 2u);
    EXPECT_EQ(loaded->volumes.count("c"), 0u);
    append_each(st, {"d"});
  }
  auto state = reload(dir);
  EXPECT_EQ(state.volumes.size(), 3u);
  EXPECT_EQ(state.volumes.count("d"), 1u);
  // A torn tail is not worth keeping.
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find("damaged"), std::string::npos);
  }
}

TEST(file_store, corrupt_middle_record_stops_replay_and_keeps_the_bytes) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto journal = dir + "/journal.log";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    append_each(st, {"a", "b", "c"});
  }
  auto text = read_text(journal);
  auto offsets = record_offsets(text);
  ASSERT_EQ(offsets.size(), 3u);
  text[offsets[1] + 12] ^= 0x01; // in b's payload; c stays valid behind it
  write_text(journal, text);
  {
    file_store st{dir};
    auto loaded = st.load();
    ASSERT_TRUE(loaded);
    // Replay stops at the damage: c is not applied over the hole.
    EXPECT_EQ(loaded->volumes.size(), 1u);
    EXPECT_EQ(loaded->volumes.count("a"), 1u);
    append_each(st, {"d"});
  }
  bool kept = false;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("journal.log.damaged-", 0) == 0) {
      kept = read_text(entry.path().string()) == text;
    }
  }
  EXPECT_TRUE(kept) << "the damaged journal is kept for inspection";
  auto state = reload(dir);
  EXPECT_EQ(state.volumes.size(), 2u);
  EXPECT_EQ(state.volumes.count("d"), 1u);
}

TEST(file_store, compact_writes_snapshot_and_empties_journal) {
  temp_dir tmp;
  auto dir = tmp / "state";
  state_snapshot state;
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("a", 1)), put(make_record("b")), erase("b")}));
    state.volumes["a"] = make_record("a", 1);
    state.volumes["z"] = make_record("z", 2);
    state.boot_id = "0b7e1d9a-boot";
    ASSERT_FALSE(st.compact(state));
    // The new journal holds its header only: no record, the generation it continues.
    auto journal = read_text(dir + "/journal.log");
    auto decoded = detail::decode_entries(journal);
    EXPECT_TRUE(decoded.entries.empty());
    EXPECT_TRUE(decoded.has_header);
    EXPECT_EQ(decoded.generation, st.generation());
    EXPECT_EQ(decoded.good_bytes, journal.size());
    EXPECT_EQ(st.journal_bytes(), journal.size());
    EXPECT_FALSE(fs::exists(dir + "/journal.next"));
    EXPECT_TRUE(fs::exists(dir + "/snapshot.json"));
    EXPECT_FALSE(fs::exists(dir + "/snapshot.json.tmp"));
    ASSERT_FALSE(st.append({erase("z")}));
  }
  auto loaded = reload(dir);
  state.volumes.erase("z");
  EXPECT_EQ(loaded.boot_id, "0b7e1d9a-boot");
  EXPECT_EQ(loaded.volumes, state.volumes);
}

TEST(file_store, crash_between_snapshot_and_journal_cut_is_harmless) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto journal = dir + "/journal.log";
  state_snapshot expected;
  std::string old_journal;
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("a")), put(make_record("b", 1)), erase("a")}));
    old_journal = read_text(journal);
    expected = reload(dir);
    ASSERT_FALSE(st.compact(expected));
  }
  write_text(journal, old_journal); // as if the cut never reached the disk
  auto loaded = reload(dir);
  EXPECT_EQ(loaded.volumes, expected.volumes);
}

TEST(file_store, unreadable_snapshot_is_an_error_naming_it) {
  temp_dir tmp;
  auto dir = tmp / "state";
  fs::create_directories(dir);
  write_text(dir + "/snapshot.json", "{\"version\":1,\"volumes\":[{\"name\":");
  file_store st{dir};
  auto loaded = st.load();
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error(), ec::persist_failure);
  EXPECT_NE(describe(loaded.error()).find("snapshot.json"), std::string::npos);
}

// Older berth wrote {"volumes":{NAME:{...}}} with "mounts" as a map of null/N or an ID array.
const char* legacy_state = R"({"volumes":{
  "old1":{"backend":"local","options":{"type":"nfs4"},"created_at":"2023-01-01T00:00:00Z",
          "mounts":{"m-null":null,"m-zero":0,"m-three":3}},
  "old2":{"options":{},"mounts":["x","y"]},
  "old3":{"mounts":{}}
}})";

void expect_legacy_loaded(const state_snapshot& state) {
  ASSERT_EQ(state.volumes.size(), 3u);
  const auto& old1 = state.volumes.at("old1");
  EXPECT_EQ(old1.mounts.at("m-null"), 1u);
  EXPECT_EQ(old1.mounts.at("m-zero"), 1u);
  EXPECT_EQ(old1.mounts.at("m-three"), 3u);
  EXPECT_TRUE(old1.mounted);
  EXPECT_EQ(old1.options.at("type"), "nfs4");
  const auto& old2 = state.volumes.at("old2");
  EXPECT_EQ(old2.mounts, (mount_counts{{"x", 1}, {"y", 1}}));
  EXPECT_EQ(old2.backend, "local");
  EXPECT_FALSE(state.volumes.at("old3").mounted);
}

TEST(file_store, legacy_state_in_parent_loads_with_null_and_zero_counts_as_one) {
  temp_dir tmp;
  write_text(tmp / "state.json", legacy_state);
  auto dir = tmp / "state";
  {
    file_store st{dir};
    auto loaded = st.load();
    ASSERT_TRUE(loaded) << describe(loaded.error());
    expect_legacy_loaded(*loaded);
    // Migrated: later records apply on top of the old volumes.
    ASSERT_FALSE(st.append({put(make_record("new"))}));
  }
  EXPECT_TRUE(fs::exists(dir + "/snapshot.json"));
  auto state = reload(dir);
  EXPECT_EQ(state.volumes.size(), 4u);
  state.volumes.erase("new");
  expect_legacy_loaded(state);
}

TEST(file_store, legacy_state_in_state_folder_loads) {
  temp_dir tmp;
  auto dir = tmp / "state";
  fs::create_directories(dir);
  write_text(dir + "/state.json", legacy_state);
  expect_legacy_loaded(reload(dir));
}

TEST(file_store, legacy_state_is_ignored_once_berth_has_state) {
  temp_dir tmp;
  auto dir = tmp / "state";
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    append_each(st, {"mine"});
  }
  write_text(tmp / "state.json", legacy_state);
  auto state = reload(dir);
  ASSERT_EQ(state.volumes.size(), 1u);
  EXPECT_EQ(state.volumes.count("mine"), 1u);
}

TEST(file_store, removed_state_dir_fails_append_and_nothing_counts_as_durable) {
  temp_dir tmp;
  auto dir = tmp / "state";
  file_store st{dir};
  ASSERT_TRUE(st.load());
  append_each(st, {"a"});
  fs::remove_all(dir);
  auto err = st.append({put(make_record("lost"))});
  ASSERT_TRUE(err);
  EXPECT_EQ(err, ec::persist_failure);
  EXPECT_NE(describe(err).find("is gone"), std::string::npos) << describe(err);
  EXPECT_NE(describe(err).find(dir), std::string::npos) << describe(err);
  EXPECT_TRUE(st.compact(state_snapshot{}));
  // A state directory made anew (another journal file) does not make writes durable either.
  fs::create_directories(dir);
  write_text(dir + "/journal.log", "");
  EXPECT_EQ(st.append({put(make_record("lost2"))}), ec::persist_failure);
  auto state = reload(dir);
  EXPECT_TRUE(state.volumes.empty());
}

TEST(file_store, failed_write_is_cut_back) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto journal = dir + "/journal.log";
  file_store st{dir};
  ASSERT_TRUE(st.load());
  append_each(st, {"a"});
  auto good = st.journal_bytes();
  // A file size limit makes the next write fail halfway (EFBIG), like a full disk.
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit limit = old_limit;
  limit.rlim_cur = good + 100;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  auto big = make_record("big");
  big.options["o"] = std::string(4096, 'x');
  auto err = st.append({put(make_record("small")), put(big)});
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_TRUE(err);
  EXPECT_EQ(err, ec::persist_failure);
  EXPECT_NE(describe(err).find(journal), std::string::npos) << describe(err);
  EXPECT_EQ(fs::file_size(journal), good);
  EXPECT_EQ(st.journal_bytes(), good);
  append_each(st, {"b"});
  auto state = reload(dir);
  EXPECT_EQ(state.volumes.size(), 2u);
  EXPECT_EQ(state.volumes.count("small"), 0u);
  EXPECT_EQ(state.volumes.count("b"), 1u);
}

} // namespace
} // namespace berth
