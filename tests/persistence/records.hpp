#pragma once

// Small builders shared by the persistence tests.

#include <string>

#include "core/volume_record.hpp"
#include "persistence/store.hpp"

namespace berth::test {

/// A record named `name`, mounted by `mounts` IDs ("c0", "c1", ...) once each.
inline volume_record make_record(const std::string& name, int mounts = 0) {
  volume_record rec;
  rec.name = name;
  rec.options = {{"type", "tmpfs"}, {"device", "tmpfs"}};
  rec.created_at = "2024-05-01T10:00:00Z";
  for (int i = 0; i < mounts; ++i) {
    rec.mounts["c" + std::to_string(i)] = 1;
  }
  rec.mounted = mounts > 0;
  if (rec.mounted) {
    rec.mountpoint = "/var/lib/berth/volumes/" + name + "/mnt";
  }
  return rec;
}

/// A put entry for `rec`.
inline journal_entry put(volume_record rec) {
  return journal_entry::put(std::move(rec));
}

/// An erase entry for `name`.
inline journal_entry erase(const std::string& name) {
  return journal_entry::erasure(name);
}

} // namespace berth::test
