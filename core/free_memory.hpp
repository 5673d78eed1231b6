#pragma once

// Hands the pages the allocator keeps after a burst of short-lived allocations back to the
// kernel. A snapshot's copy of the state allocates megabytes that are freed a moment later
// (a List did too, while it copied every record); glibc keeps the freed pages in the arena of
// the thread that used them, and jemalloc (berthd's allocator) keeps them until their decay
// time ends, so RSS climbed with each burst (docs/benchmarks.md, "Why RSS grew" and
// "jemalloc"). The callers are the places such a burst ends, and berthd's signal wait every
// free_memory_sweep_interval, for what steady load frees between bursts.

#include <chrono>

namespace berth {

/// The shortest time between two trims: a burst of compactions trims once, not once each.
inline constexpr std::chrono::milliseconds free_memory_min_interval{1000};

/// How often berthd trims when nothing else did: what steady load frees is returned too,
/// within this interval.
inline constexpr std::chrono::seconds free_memory_sweep_interval{10};

/// Gives every whole free page back: jemalloc's purge of all its arenas where the program
/// runs on jemalloc, glibc's malloc_trim(0) elsewhere. Does nothing when another call did
/// less than free_memory_min_interval before `now`. Thread-safe. True when it trimmed.
bool release_free_memory(std::chrono::steady_clock::time_point now);

/// release_free_memory(steady_clock::now()).
bool release_free_memory();

/// The allocator the program runs on, for the start-up log: "jemalloc 5.3.0-..." or
/// "glibc malloc".
const char* allocator_name();

} // namespace berth
