#include "backends/block_ranges.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.hpp"

namespace berth {

namespace {

constexpr uint64_t none = std::numeric_limits<uint64_t>::max();

caf::error read_error(int e, const std::string& what, const std::string& path) {
  return make_error(ec::backend_failure, what + " " + path + ": " + std::strerror(e));
}

/// The first byte at or after `pos` that holds data; none when no data follows.
caf::expected<uint64_t> next_data(const image_map& f, uint64_t pos) {
  if (pos >= f.size()) {
    return none;
  }
  auto at = ::lseek(f.fd(), static_cast<off_t>(pos), SEEK_DATA);
  if (at < 0) {
    if (errno == ENXIO) {
      return none;
    }
    return read_error(errno, "cannot seek to data in", f.path());
  }
  return static_cast<uint64_t>(at);
}

/// The first byte at or after `pos`, inside data, that is a hole (the end counts as one).
caf::expected<uint64_t> next_hole(const image_map& f, uint64_t pos) {
  auto at = ::lseek(f.fd(), static_cast<off_t>(pos), SEEK_HOLE);
  if (at < 0) {
    return read_error(errno, "cannot seek to a hole in", f.path());
  }
  return std::min(static_cast<uint64_t>(at), f.size());
}

/// The end of the data that starts at `pos` in `f`, or `pos` when none does.
caf::expected<uint64_t> data_end(const image_map& f, uint64_t pos) {
  auto data = next_data(f, pos);
  if (!data || *data != pos) {
    return data ? caf::expected<uint64_t>{pos} : data;
  }
  return next_hole(f, pos);
}

/// One extent of a file: where its logical bytes lie on the device.
struct extent {
  uint64_t logical = 0;
  uint64_t physical = 0;
  uint64_t length = 0;
  bool comparable = false; ///< its physical place says where its bytes are
};

/// The extents of `f` over [start, end). Empty when the file system has no FIEMAP: every
/// block is then compared by its bytes.
std::vector<extent> extents_of(const image_map& f, uint64_t start, uint64_t end) {
  constexpr unsigned batch = 256;
  // Flags under which the physical offset does not name the bytes alone.
  constexpr uint32_t opaque = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED
    | FIEMAP_EXTENT_DATA_ENCRYPTED | FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE
    | FIEMAP_EXTENT_DATA_TAIL;
  std::vector<char> buf(sizeof(fiemap) + batch * sizeof(fiemap_extent));
  auto* fm = reinterpret_cast<fiemap*>(buf.data());
  std::vector<extent> out;
  auto pos = start;
  while (pos < end) {
    std::memset(buf.data(), 0, buf.size());
    fm->fm_start = pos;
    fm->fm_length = end - pos;
    fm->fm_flags = FIEMAP_FLAG_SYNC;
    fm->fm_extent_count = batch;
    if (::ioctl(f.fd(), FS_IOC_FIEMAP, fm) != 0 || fm->fm_mapped_extents == 0) {
      break;
    }
    bool last = false;
    for (unsigned i = 0; i < fm->fm_mapped_extents; ++i) {
      const auto& e = fm->fm_extents[i];
      out.push_back({e.fe_logical, e.fe_physical, e.fe_length, (e.fe_flags & opaque) == 0});
      pos = e.fe_logical + e.fe_length;
      last = last || (e.fe_flags & FIEMAP_EXTENT_LAST) != 0;
    }
    if (last) {
      break;
    }
  }
  return out;
}

/// Where [pos, pos + len) of a file lies on the device, when one comparable extent holds
/// it all. `from` moves forward as blocks do, so a segment's extents are walked once.
std::optional<uint64_t> physical_of(const std::vector<extent>& extents, size_t& from, uint64_t pos,
                                    uint64_t len) {
  while (from < extents.size() && extents[from].logical + extents[from].length <= pos) {
    ++from;
  }
  if (from == extents.size()) {
    return std::nullopt;
  }
  const auto& e = extents[from];
  if (!e.comparable || e.logical > pos || e.logical + e.length < pos + len) {
    return std::nullopt;
  }
  return e.physical + (pos - e.logical);
}

/// Reads [pos, pos + len) of `f` into `out`; bytes past its end read as zeros, as a
/// volume's unwritten bytes do.
caf::error read_block(const image_map& f, uint64_t pos, uint64_t len, char* out) {
  std::memset(out, 0, len);
  uint64_t done = 0;
  while (done < len && pos + done < f.size()) {
    auto n = ::pread(f.fd(), out + done, len - done, static_cast<off_t>(pos + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return read_error(errno, "cannot read", f.path());
    }
    if (n == 0) {
      break;
    }
    done += static_cast<uint64_t>(n);
  }
  return {};
}

/// The pages changed_ranges fills: runs of changed blocks merged into ranges.
class delta_page {
public:
  delta_page(uint64_t from, size_t max) : from_(from), max_(max) {}

  /// Block [pos, pos + len) changed or not. False once the page is full: the caller stops
  /// and the next page starts at `pos`.
  bool add(uint64_t pos, uint64_t len, bool changed) {
    if (run_ && (!changed || run_->end() != pos)) {
      page_.ranges.push_back(*std::exchange(run_, std::nullopt));
      if (page_.ranges.size() == max_) {
        page_.next = pos;
        return false;
      }
    }
    if (changed) {
      if (run_) {
        run_->length += len;
      } else {
        auto start = std::max(pos, from_); // the first block may begin before `from`
        run_ = byte_range{start, pos + len - start};
      }
    }
    return true;
  }

  /// Every block up to `end` was added.
  range_page finish(uint64_t end) {
    if (run_) {
      page_.ranges.push_back(*run_);
    }
    page_.next = end;
    page_.done = true;
    return std::move(page_);
  }

  range_page stopped() { return std::move(page_); }

private:
  uint64_t from_;
  size_t max_;
  std::optional<byte_range> run_;
  range_page page_;
};

} // namespace

caf::expected<image_map> image_map::open(const std::string& path) {
  unique_fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
  if (!fd) {
    auto code = errno == ENOENT ? ec::not_found : ec::backend_failure;
    return make_error(code, "cannot open " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return read_error(errno, "cannot stat", path);
  }
  if (!S_ISREG(st.st_mode)) {
    return make_error(ec::backend_failure, path + " is not a regular file");
  }
  return image_map{std::move(fd), static_cast<uint64_t>(st.st_size), path};
}

caf::expected<range_page> image_map::allocated(uint64_t from, size_t max) const {
  max = std::max<size_t>(max, 1);
  range_page page;
  auto pos = from;
  while (page.ranges.size() < max) {
    auto data = next_data(*this, pos);
    if (!data) {
      return data.error();
    }
    if (*data == none) {
      page.next = size_;
      page.done = true;
      return page;
    }
    auto hole = next_hole(*this, *data);
    if (!hole) {
      return hole.error();
    }
    page.ranges.push_back({*data, *hole - *data});
    pos = *hole;
  }
  page.next = pos;
  page.done = pos >= size_;
  return page;
}

caf::expected<range_page> changed_ranges(const image_map& base, const image_map& target,
                                         uint64_t from, size_t max, delta_cost* cost) {
  delta_cost ignored;
  auto& spent = cost != nullptr ? *cost : ignored;
  const uint64_t block = delta_block_bytes;
  const uint64_t size = target.size();
  delta_page page{from, std::max<size_t>(max, 1)};
  std::vector<char> a(block);
  std::vector<char> b(block);
  auto pos = from / block * block;
  while (pos < size) {
    // The next segment in which either image holds data: elsewhere both read zeros.
    auto in_base = next_data(base, pos);
    auto in_target = next_data(target, pos);
    if (!in_base || !in_target) {
      return !in_base ? in_base.error() : in_target.error();
    }
    auto start = std::min(*in_base, *in_target);
    if (start >= size) {
      break;
    }
    auto end = start;
    for (;;) {
      auto eb = data_end(base, end);
      auto et = data_end(target, end);
      if (!eb || !et) {
        return !eb ? eb.error() : et.error();
      }
      auto further = std::max(*eb, *et);
      if (further == end) {
        break;
      }
      end = further;
    }
    end = std::min(end, size);
    auto first = start / block * block;
    auto last = std::min((end + block - 1) / block * block, size);
    auto base_extents = extents_of(base, first, last);
    auto target_extents = extents_of(target, first, last);
    size_t ib = 0;
    size_t it = 0;
    for (auto at = first; at < last; at += block) {
      auto len = std::min(block, size - at);
      auto pb = at + len <= base.size() ? physical_of(base_extents, ib, at, len) : std::nullopt;
      auto pt = physical_of(target_extents, it, at, len);
      bool changed = false;
      if (pb && pt && *pb == *pt) {
        ++spent.shared_blocks;
      } else {
        ++spent.read_blocks;
        if (auto err = read_block(base, at, len, a.data())) {
          return err;
        }
        if (auto err = read_block(target, at, len, b.data())) {
          return err;
        }
        changed = std::memcmp(a.data(), b.data(), len) != 0;
      }
      if (!page.add(at, len, changed)) {
        return page.stopped();
      }
    }
    pos = last;
  }
  return page.finish(size);
}

} // namespace berth
