#pragma once
// Ctrl-C as a stop request for a running search: the searchers stop on a std::stop_token, the verbs print
// the best plan found so far.

#include <stop_token>
#include <thread>

namespace sp::cli {

/// While alive, SIGINT requests a stop through token() instead of ending the process; the previous
/// handler is restored on destruction. The signal handler only sets a lock-free flag (all a signal handler
/// may do); a watcher thread turns it into request_stop().
class InterruptToStop {
public:
    InterruptToStop();
    ~InterruptToStop();
    InterruptToStop(const InterruptToStop&) = delete;
    InterruptToStop& operator=(const InterruptToStop&) = delete;
    std::stop_token token() const { return m_source.get_token(); }
    bool interrupted() const { return m_source.stop_requested(); }

private:
    std::stop_source m_source;
    std::jthread m_watcher;
    void (*m_previous)(int) = nullptr;
};

} // namespace sp::cli
