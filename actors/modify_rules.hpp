#pragma once

// The merge rules of the coalescing mailbox (docs/design.md, "Expand and modify
// coalesce into one call"), as plain functions: what a request still needs,
// whether it conflicts with the open window, how it merges, and what the record
// becomes. The actor side is volume_mailbox.cpp.

#include <string>

#include <caf/error.hpp>

#include "backends/backend.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// The part of a request (size already rounded, 0: none; parameters) that `rec`
/// does not have yet: a size only when larger, parameters only when different.
/// Empty when the volume already satisfies the request.
modification outstanding(const volume_record& rec, const modification& asked);

/// True when `m` changes nothing.
bool is_empty(const modification& m);

/// ec::out_of_range when `bytes` (rounded) is smaller than the volume: a shrink.
caf::error check_shrink(const volume_record& rec, uint64_t bytes);

/// ec::aborted when the request conflicts with the change merged in the open
/// window: a second, different size (`wanted` is what the request still needs), or
/// a second value for a parameter (`asked`: everything it asks, since the window
/// would overwrite a value the volume already has). The message names both values.
caf::error check_conflict(const std::string& volume, const modification& window,
                          const modification& wanted, const modification& asked);

/// Merges `wanted` into the window's change (check_conflict said they agree).
void merge_into(modification& window, const modification& wanted);

/// The record after the backend applied `m`: its size, its parameters, one more
/// modification.
volume_record apply_modification(volume_record rec, const modification& m);

/// "size 21 MiB, readAheadKB=256" for logs and errors.
std::string describe(const modification& m);

} // namespace berth
