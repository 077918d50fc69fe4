#include "interrupt.h"

#include <atomic>
#include <chrono>
#include <csignal>

namespace sp::cli {

namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void onInterrupt(int) {
    g_interrupted.store(true);
}

} // namespace

InterruptToStop::InterruptToStop() {
    g_interrupted.store(false);
    m_previous = std::signal(SIGINT, onInterrupt);
    m_watcher = std::jthread([this](std::stop_token st) {
        while (!st.stop_requested()) {
            if (g_interrupted.load()) {
                m_source.request_stop();
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    });
}

InterruptToStop::~InterruptToStop() {
    m_watcher.request_stop();
    m_watcher.join();
    std::signal(SIGINT, m_previous == SIG_ERR ? SIG_DFL : m_previous);
}

} // namespace sp::cli
