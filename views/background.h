#pragma once
// Background work yields to the GUI thread: searches, sweeps and fits call this first on their worker
// thread, so the event loop keeps its share of the CPU when the workers outnumber the cores. Threads the
// worker starts afterwards (the core's evaluation threads) inherit the priority.

namespace sp::views {

/// Lowers the calling thread's scheduling priority (on Linux: nice +10 for this thread only; it stays
/// lowered, as raising it back needs privileges). Failures are ignored: the work runs anyway.
void lowerThreadPriority();

} // namespace sp::views
