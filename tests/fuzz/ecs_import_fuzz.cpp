// Fuzzes the import of amazon-ecs-volume-plugin's state file (persistence/ecs_import.hpp),
// which berthd reads once, when it takes over from that plugin. Oracles: an imported
// state holds only valid names and mount IDs, Docker's records, mounted exactly when
// some ID counts, every count at least 1; and it survives berth's own snapshot, so
// the first compaction after the import keeps every volume as imported.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "core/names.hpp"
#include "persistence/ecs_import.hpp"
#include "persistence/journal_format.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace berth;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto path = fuzz::scratch_file(data, size);
  auto state = import_ecs_state(path);
  if (!state) {
    return 0;
  }
  fuzz::check(state->imported, "an import is marked imported");
  for (const auto& [name, rec] : state->volumes) {
    fuzz::check(name == rec.name && is_valid_volume_name(name), "a valid volume name", name);
    fuzz::check(rec.owner == record_owner::docker, "an ECS volume is Docker's", name);
    fuzz::check(rec.mounted == !rec.mounts.empty(), "mounted exactly when an ID counts", name);
    for (const auto& [id, n] : rec.mounts) {
      fuzz::check(is_valid_mount_id(id) && n >= 1, "a valid mount ID counted at least once", id);
    }
  }
  auto json = detail::encode_snapshot(*state, 0);
  auto back = detail::decode_snapshot(json);
  fuzz::check(static_cast<bool>(back), "the imported state's snapshot parses", json);
  fuzz::check(back->state.volumes == state->volumes, "the imported state survives its snapshot",
              json);
  return 0;
}
