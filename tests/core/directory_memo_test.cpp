// The record directory's generation and the answer kept per generation
// (core/directory_memo.hpp): a list made after a put or an erase shows it, and one made
// while nothing changed is the kept answer, not made again.

#include "core/directory_memo.hpp"

#include <memory>
#include <string>

#include <gtest/gtest.h>

using namespace berth;

namespace {

record_directory::entry record(const std::string& name, bool mounted = false) {
  volume_record rec;
  rec.name = name;
  rec.mounted = mounted;
  return std::make_shared<const volume_record>(rec);
}

/// Names the records in order, "+" after a mounted one, and counts how often it ran.
struct names_of {
  std::shared_ptr<int> made = std::make_shared<int>(0);

  std::string operator()(const shared_records& recs) const {
    ++*made;
    std::string out;
    for (const auto& rec : recs) {
      out += rec->name + (rec->mounted ? "+ " : " ");
    }
    return out;
  }
};

} // namespace

TEST(record_directory, every_put_and_erase_moves_the_generation_and_a_read_says_which) {
  record_directory dir;
  auto start = dir.generation();
  dir.put(record("a"));
  EXPECT_GT(dir.generation(), start);
  auto put = dir.generation();
  dir.put(record("a", true));
  EXPECT_GT(dir.generation(), put) << "a record replaced is a change too";
  auto replaced = dir.generation();
  dir.erase("nope");
  EXPECT_EQ(dir.generation(), replaced) << "erasing no record changes nothing";
  auto read = dir.read();
  EXPECT_EQ(read.generation, replaced);
  ASSERT_EQ(read.records.size(), 1U);
  EXPECT_TRUE(read.records[0]->mounted);
  dir.erase("a");
  EXPECT_GT(dir.generation(), replaced);
  EXPECT_TRUE(dir.all().empty());
}

TEST(directory_memo, a_list_is_made_once_while_no_record_changes) {
  record_directory dir;
  dir.put(record("b"));
  dir.put(record("a"));
  directory_memo memo;
  names_of make;
  EXPECT_EQ(*memo.get(dir, make), "a b ");
  EXPECT_EQ(*memo.get(dir, make), "a b ");
  EXPECT_EQ(*make.made, 1) << "the second list is the kept answer";
}

TEST(directory_memo, a_list_after_a_put_or_an_erase_shows_it) {
  record_directory dir;
  directory_memo memo;
  names_of make;
  EXPECT_EQ(*memo.get(dir, make), "") << "an empty directory is an answer too";
  dir.put(record("a"));
  EXPECT_EQ(*memo.get(dir, make), "a ");
  dir.put(record("a", true));
  EXPECT_EQ(*memo.get(dir, make), "a+ ") << "a changed record, under the same name";
  dir.put(record("b"));
  dir.erase("a");
  EXPECT_EQ(*memo.get(dir, make), "b ");
  dir.erase("b");
  EXPECT_EQ(*memo.get(dir, make), "");
  EXPECT_EQ(*make.made, 5);
}

TEST(directory_memo, an_answer_handed_out_stays_as_it_was_made) {
  record_directory dir;
  dir.put(record("a"));
  directory_memo memo;
  names_of make;
  auto before = memo.get(dir, make);
  dir.erase("a");
  EXPECT_EQ(*memo.get(dir, make), "");
  EXPECT_EQ(*before, "a ") << "a reply still being written keeps its body";
}
