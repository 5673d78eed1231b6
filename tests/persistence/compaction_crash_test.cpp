// All or nothing, across crashes (docs/design.md): no crash at any step of a compaction
// brings old state back or loses an acknowledged record. Each case runs the store in a
// child process that dies with _exit(137) at one named step (BERTH_TEST_CRASH_AT, as
// berthd would), then loads the directory the way the next start does.

#include "persistence/file_store.hpp"

#include <cstdlib>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "records.hpp"
#include "temp_dir.hpp"

namespace berth {
namespace {

using test::make_record;
using test::put;
using test::temp_dir;

/// Every step of a compaction that a crash can hit (persistence/file_store_compaction.cpp).
const std::string compaction_steps[] = {
  "compact-journal-next-created",
  "compact-snapshot-written",
  "compact-snapshot-renamed",
  "compact-snapshot-durable",
  "compact-journal-cut",
  "compact-journal-switched",
};

/// Runs `body` in a child with BERTH_TEST_CRASH_AT=step; returns its exit status
/// (137 when it crashed at the step, 0 when it finished, 1 when a step failed).
template <class F>
int run_crashing_at(const std::string& step, F body) {
  auto pid = ::fork();
  if (pid == 0) {
    ::setenv("BERTH_TEST_CRASH_AT", step.c_str(), 1);
    ::_exit(body() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

state_snapshot load_or_fail(const std::string& dir) {
  file_store st{dir};
  auto loaded = st.load();
  EXPECT_TRUE(loaded) << describe(loaded.error());
  return loaded ? *loaded : state_snapshot{};
}

/// A state as an earlier boot left it: a snapshot, then mounts recorded in the journal.
void write_old_boot(const std::string& dir) {
  file_store st{dir};
  ASSERT_TRUE(st.load());
  state_snapshot old;
  old.boot_id = "boot-old";
  old.volumes["a"] = make_record("a");
  old.volumes["b"] = make_record("b");
  ASSERT_FALSE(st.compact(old));
  ASSERT_FALSE(st.append({put(make_record("a", 2))}));
  ASSERT_FALSE(st.append({put(make_record("b", 1))}));
}

/// What reconciliation decides on a new boot: counts cleared, the new boot ID.
state_snapshot reconciled(state_snapshot state) {
  state.boot_id = "boot-new";
  for (auto& [name, rec] : state.volumes) {
    rec.mounts.clear();
    rec.mounted = false;
    rec.mountpoint.clear();
  }
  return state;
}

class compaction_crash : public ::testing::TestWithParam<std::string> {};

TEST_P(compaction_crash, start_up_compaction_never_brings_cleared_counts_back) {
  temp_dir tmp;
  auto dir = tmp / "state";
  write_old_boot(dir);
  auto status = run_crashing_at(GetParam(), [&] {
    file_store st{dir};
    auto loaded = st.load();
    return loaded && !st.compact(reconciled(*loaded));
  });
  ASSERT_EQ(status, 137) << "the child did not crash at " << GetParam();
  auto after = load_or_fail(dir);
  if (after.boot_id == "boot-old") {
    // The crash came before the new snapshot counted: the next start reconciles again
    // from the whole old state, so nothing acknowledged is lost.
    EXPECT_EQ(after.volumes.at("a"), make_record("a", 2));
    EXPECT_EQ(after.volumes.at("b"), make_record("b", 1));
  } else {
    EXPECT_EQ(after.boot_id, "boot-new");
    EXPECT_EQ(after.volumes.at("a"), make_record("a"))
      << "the old journal was replayed over the reconciled snapshot";
    EXPECT_EQ(after.volumes.at("b"), make_record("b"));
  }
  // The start after the crash reconciles and compacts again; counts stay cleared, and the
  // new journal takes records.
  {
    file_store st{dir};
    auto loaded = st.load();
    ASSERT_TRUE(loaded);
    ASSERT_FALSE(st.compact(reconciled(*loaded)));
    ASSERT_FALSE(st.append({put(make_record("c", 1))}));
  }
  auto final_state = load_or_fail(dir);
  EXPECT_EQ(final_state.boot_id, "boot-new");
  EXPECT_EQ(final_state.volumes.at("a"), make_record("a"));
  EXPECT_EQ(final_state.volumes.at("b"), make_record("b"));
  EXPECT_EQ(final_state.volumes.at("c"), make_record("c", 1));
}

TEST_P(compaction_crash, threshold_compaction_loses_no_acknowledged_record) {
  temp_dir tmp;
  auto dir = tmp / "state";
  write_old_boot(dir);
  auto status = run_crashing_at(GetParam(), [&] {
    file_store st{dir};
    auto loaded = st.load();
    if (!loaded) {
      return false;
    }
    auto state = *loaded;
    for (int i = 0; i < 20; ++i) {
      auto rec = make_record("v" + std::to_string(i), i % 3);
      if (st.append({put(rec)})) {
        return false;
      }
      state.volumes[rec.name] = rec; // acknowledged
    }
    return !st.compact(state);
  });
  ASSERT_EQ(status, 137) << "the child did not crash at " << GetParam();
  auto after = load_or_fail(dir);
  EXPECT_EQ(after.boot_id, "boot-old");
  EXPECT_EQ(after.volumes.at("a"), make_record("a", 2));
  for (int i = 0; i < 20; ++i) {
    auto name = "v" + std::to_string(i);
    ASSERT_EQ(after.volumes.count(name), 1u) << name << " was acknowledged, then lost";
    EXPECT_EQ(after.volumes.at(name), make_record(name, i % 3));
  }
  // Appends after the crash are not lost behind a stale journal either.
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("later", 1))}));
  }
  auto final_state = load_or_fail(dir);
  EXPECT_EQ(final_state.volumes.size(), 23u);
  EXPECT_EQ(final_state.volumes.at("later"), make_record("later", 1));
}

TEST_P(compaction_crash, commits_during_a_compaction_off_the_commit_path_survive) {
  temp_dir tmp;
  auto dir = tmp / "state";
  write_old_boot(dir);
  // As the persistence actor does it: the journal switches, the snapshot is written from a
  // copy of the state at the switch while appends go on, then the journals switch. The
  // child acknowledges each record once its append returns; every one must load.
  auto status = run_crashing_at(GetParam(), [&] {
    file_store st{dir};
    auto loaded = st.load();
    if (!loaded) {
      return false;
    }
    auto state = *loaded;
    for (int i = 0; i < 5; ++i) {
      auto rec = make_record("old" + std::to_string(i), 1);
      if (st.append({put(rec)})) {
        return false;
      }
      state.volumes[rec.name] = rec;
    }
    auto generation = st.begin_compaction();
    if (!generation) {
      return false;
    }
    auto copy = share(state_snapshot{state});
    for (int i = 0; i < 10; ++i) {
      auto rec = make_record("during" + std::to_string(i), 2);
      if (st.append({put(rec)})) {
        return false;
      }
    }
    if (st.append({put(make_record("a", 3))}) || st.write_snapshot(copy, *generation)) {
      return false;
    }
    if (st.append({put(make_record("after", 1))}) || st.finish_compaction(*generation)) {
      return false;
    }
    return !st.append({put(make_record("b", 3))});
  });
  ASSERT_EQ(status, 137) << "the child did not crash at " << GetParam();
  auto after = load_or_fail(dir);
  for (int i = 0; i < 5; ++i) {
    auto name = "old" + std::to_string(i);
    ASSERT_EQ(after.volumes.count(name), 1u) << name << " was acknowledged, then lost";
  }
  // What was acknowledged before the crash point (each step comes after the appends
  // written before it in the child).
  bool began = GetParam() != "compact-journal-next-created";
  if (began) {
    for (int i = 0; i < 10; ++i) {
      auto name = "during" + std::to_string(i);
      ASSERT_EQ(after.volumes.count(name), 1u) << name << " was acknowledged, then lost";
      EXPECT_EQ(after.volumes.at(name), make_record(name, 2));
    }
    EXPECT_EQ(after.volumes.at("a"), make_record("a", 3)) << "an older record came back";
  } else {
    EXPECT_EQ(after.volumes.at("a"), make_record("a", 2));
  }
  bool switching = GetParam() == "compact-journal-cut" || GetParam() == "compact-journal-switched";
  if (switching) {
    EXPECT_EQ(after.volumes.at("after"), make_record("after", 1));
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/journal.next"))
    << "load finished the interrupted compaction";
  // The store takes appends after the crash, and they are not lost behind a stale journal.
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({put(make_record("later", 1))}));
  }
  auto final_state = load_or_fail(dir);
  EXPECT_EQ(final_state.volumes.at("later"), make_record("later", 1));
  EXPECT_EQ(final_state.volumes.size(), after.volumes.size() + 1);
}

INSTANTIATE_TEST_SUITE_P(file_store, compaction_crash, ::testing::ValuesIn(compaction_steps),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           auto name = info.param;
                           for (auto& c : name) {
                             c = (c == '-') ? '_' : c;
                           }
                           return name;
                         });

TEST(compaction_generations, journal_of_a_newer_generation_than_the_snapshot_is_refused) {
  temp_dir tmp;
  auto dir = tmp / "state";
  write_old_boot(dir);
  {
    file_store st{dir};
    auto loaded = st.load();
    ASSERT_TRUE(loaded);
    ASSERT_FALSE(st.compact(*loaded));
    ASSERT_FALSE(st.append({put(make_record("n", 1))}));
  }
  // An older snapshot put back by hand: the journal continues one it does not know.
  test::write_text(dir + "/snapshot.json",
                   R"({"version":2,"generation":1,"boot_id":"x","volumes":[]})");
  file_store st{dir};
  auto loaded = st.load();
  ASSERT_FALSE(loaded);
  EXPECT_NE(describe(loaded.error()).find("generation"), std::string::npos)
    << describe(loaded.error());
}

TEST(compaction_generations, version_1_snapshot_and_headerless_journal_still_load) {
  temp_dir tmp;
  auto dir = tmp / "state";
  std::filesystem::create_directories(dir);
  test::write_text(dir + "/snapshot.json",
                   R"({"version":1,"boot_id":"b1","volumes":[{"name":"old","backend":"local",)"
                   R"("options":{},"created_at":"","mounts":{},"mounted":false,"mountpoint":""}]})");
  {
    // An older berth's journal: records without a header frame.
    file_store writer{tmp / "scratch"};
    ASSERT_TRUE(writer.load());
    ASSERT_FALSE(writer.append({put(make_record("j", 1))}));
  }
  auto journal = test::read_text(tmp / "scratch/journal.log");
  // Drop the header frame the new writer put first.
  uint32_t len = 0;
  for (int i = 3; i >= 0; --i) {
    len = (len << 8) | static_cast<unsigned char>(journal[static_cast<size_t>(i)]);
  }
  test::write_text(dir + "/journal.log", journal.substr(8 + len));
  auto loaded = load_or_fail(dir);
  EXPECT_EQ(loaded.boot_id, "b1");
  EXPECT_EQ(loaded.volumes.count("old"), 1u);
  EXPECT_EQ(loaded.volumes.count("j"), 1u);
}

/// Sets or clears the append-only flag (chattr +a) of `path`; false when it cannot.
bool set_append_only(const std::string& path, bool on) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  int flags = 0;
  bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  flags = on ? (flags | FS_APPEND_FL) : (flags & ~FS_APPEND_FL);
  ok = ok && ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  ::close(fd);
  return ok;
}

TEST(compaction_generations, after_a_compaction_fails_past_its_rename_the_old_journal_takes_no_appends) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto journal = dir + "/journal.log";
  file_store st{dir};
  auto loaded = st.load();
  ASSERT_TRUE(loaded);
  ASSERT_FALSE(st.append({put(make_record("a", 1))}));
  // An append-only journal cannot be truncated: the compaction fails after its rename.
  if (!set_append_only(journal, true)) {
    GTEST_SKIP() << "cannot chattr +a " << journal << " (needs root and ext4/xfs)";
  }
  state_snapshot state;
  state.volumes["a"] = make_record("a", 1);
  auto err = st.compact(state);
  EXPECT_TRUE(err) << "the journal cannot be replaced, so the compaction cannot finish";
  EXPECT_TRUE(std::filesystem::exists(dir + "/journal.next"));
  // The new snapshot is in place: a record in the old journal would be skipped at load.
  // Appends go to journal.next, which continues the new snapshot.
  auto before = test::read_text(journal);
  err = st.append({put(make_record("b", 1))});
  EXPECT_FALSE(err) << "journal.next takes appends meanwhile: " << describe(err);
  EXPECT_EQ(test::read_text(journal), before) << "an append went to the stale journal";
  ASSERT_TRUE(set_append_only(journal, false));
  err = st.append({put(make_record("c", 1))});
  ASSERT_FALSE(err) << "the append finishes the compaction first: " << describe(err);
  EXPECT_FALSE(std::filesystem::exists(dir + "/journal.next"));
  auto after = load_or_fail(dir);
  EXPECT_EQ(after.volumes.count("a"), 1u);
  EXPECT_EQ(after.volumes.count("b"), 1u) << "an acknowledged record was lost";
  EXPECT_EQ(after.volumes.count("c"), 1u) << "an acknowledged record was lost";
}

} // namespace
} // namespace berth
