#pragma once

#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/type_id.hpp>

#include "core/csi_types.hpp"
#include "core/mount_release.hpp"
#include "core/record_directory.hpp"
#include "core/volume_record.hpp"

// One block for every atom and message type berth sends between actors.
CAF_BEGIN_TYPE_ID_BLOCK(berth, caf::first_custom_type_id)

  CAF_ADD_TYPE_ID(berth, (berth::record_kind))
  CAF_ADD_TYPE_ID(berth, (berth::record_owner))
  CAF_ADD_TYPE_ID(berth, (berth::volume_record))
  CAF_ADD_TYPE_ID(berth, (std::vector<berth::volume_record>))
  CAF_ADD_TYPE_ID(berth, (berth::option_map))
  CAF_ADD_TYPE_ID(berth, (berth::volume_spec))
  CAF_ADD_TYPE_ID(berth, (berth::stage_request))
  CAF_ADD_TYPE_ID(berth, (berth::publish_request))
  CAF_ADD_TYPE_ID(berth, (berth::volume_stats))
  CAF_ADD_TYPE_ID(berth, (berth::modify_request))
  CAF_ADD_TYPE_ID(berth, (berth::mount_id_origin))
  CAF_ADD_TYPE_ID(berth, (berth::release_reason))
  CAF_ADD_TYPE_ID(berth, (berth::mount_release))
  CAF_ADD_TYPE_ID(berth, (berth::export_view))
  CAF_ADD_TYPE_ID(berth, (berth::export_form))

  CAF_ADD_ATOM(berth, berth::atom, create, "create")
  CAF_ADD_ATOM(berth, berth::atom, mount, "mount")
  CAF_ADD_ATOM(berth, berth::atom, unmount, "unmount")
  CAF_ADD_ATOM(berth, berth::atom, remove, "remove")
  CAF_ADD_ATOM(berth, berth::atom, get, "get")
  CAF_ADD_ATOM(berth, berth::atom, list, "list")
  CAF_ADD_ATOM(berth, berth::atom, put, "put")
  CAF_ADD_ATOM(berth, berth::atom, erase, "erase")
  CAF_ADD_ATOM(berth, berth::atom, flush, "flush")
  CAF_ADD_ATOM(berth, berth::atom, commit, "commit")
  CAF_ADD_ATOM(berth, berth::atom, done, "done")
  CAF_ADD_ATOM(berth, berth::atom, deadline, "deadline")
  CAF_ADD_ATOM(berth, berth::atom, drain, "drain")
  CAF_ADD_ATOM(berth, berth::atom, retire, "retire")
  CAF_ADD_ATOM(berth, berth::atom, settled, "settled")
  CAF_ADD_ATOM(berth, berth::atom, ok, "ok")
  CAF_ADD_ATOM(berth, berth::atom, stage, "stage")
  CAF_ADD_ATOM(berth, berth::atom, unstage, "unstage")
  CAF_ADD_ATOM(berth, berth::atom, publish, "publish")
  CAF_ADD_ATOM(berth, berth::atom, unpublish, "unpublish")
  CAF_ADD_ATOM(berth, berth::atom, grow, "grow")
  CAF_ADD_ATOM(berth, berth::atom, stats, "stats")
  CAF_ADD_ATOM(berth, berth::atom, modify, "modify")
  CAF_ADD_ATOM(berth, berth::atom, close_window, "closewin")
  CAF_ADD_ATOM(berth, berth::atom, ping, "ping")
  CAF_ADD_ATOM(berth, berth::atom, release, "release")
  CAF_ADD_ATOM(berth, berth::atom, compacted, "compacted")
  CAF_ADD_ATOM(berth, berth::atom, export_open, "expopen")
  CAF_ADD_ATOM(berth, berth::atom, export_close, "expclose")
  CAF_ADD_ATOM(berth, berth::atom, import_check, "impcheck")
  // clang-format would indent everything after a new line of the block, to its end.
  // clang-format off
  CAF_ADD_ATOM(berth, berth::atom, import_delta, "impdelta")

CAF_END_TYPE_ID_BLOCK(berth)

// A list's answer shares the records of the record directory: it never leaves the
// process, so it needs no serialization.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(berth::shared_records)
// A saved record goes to the persistence actor as the pointer its volume commits, for
// the same reason.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(berth::shared_record)
  // clang-format on
