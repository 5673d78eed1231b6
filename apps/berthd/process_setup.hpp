#pragma once

// What berthd asks of its process around the start-up in daemon.cpp: enough descriptors,
// and a wait for the signal that stops it.

namespace berth {

/// Raises the soft open-file limit to the hard one: every connection, journal and
/// helper pipe takes a descriptor, and the default soft limit (1024) is low.
void raise_open_file_limit();

/// Waits for SIGTERM or SIGINT and returns it. SIGHUP (blocked in main, like them) is
/// logged and ignored: berthd has no configuration to reload, and a hang-up must not stop
/// it. Between signals, every free_memory_sweep_interval, gives the allocator's kept pages
/// back: what steady load frees is then returned within that interval, wherever it was
/// freed.
int wait_for_signal();

} // namespace berth
