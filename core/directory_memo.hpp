#pragma once

// An answer made from every record of a record_directory, kept until a record changes: a
// Docker List of 10,000 volumes is encoded once per change, not once per call
// (docs/design.md, "Lists").

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "core/record_directory.hpp"

namespace berth {

class directory_memo {
public:
  using make_fn = std::function<std::string(const shared_records&)>;

  /// `make` of `dir`'s records as they are now: the kept answer while the directory's
  /// generation is the one it was made at, else a new one, kept for the next call. One
  /// memo serves one directory and one `make`.
  std::shared_ptr<const std::string> get(const record_directory& dir, const make_fn& make);

private:
  std::mutex mtx_;
  uint64_t generation_ = 0;                   ///< of the records `answer_` was made from
  std::shared_ptr<const std::string> answer_; ///< null until the first get
};

} // namespace berth
