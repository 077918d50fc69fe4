#pragma once
// What the search verbs (search, compare, bench) share: Ctrl-C as a stop request, and small text helpers.
#include "core/search/engine.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace sp::cli {

// Ctrl-C requests a stop through a stop token: the handler only sets a lock-free flag (all a signal handler
// may do); a watcher thread turns it into request_stop().
inline std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" inline void onInterrupt(int) {
    g_interrupted.store(true);
}

class InterruptToStop {
public:
    InterruptToStop() {
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
    ~InterruptToStop() {
        m_watcher.request_stop();
        m_watcher.join();
        std::signal(SIGINT, m_previous);
    }
    std::stop_token token() const { return m_source.get_token(); }
    bool interrupted() const { return m_source.stop_requested(); }

private:
    std::stop_source m_source;
    std::jthread m_watcher;
    void (*m_previous)(int) = SIG_DFL;
};

/// "--warm-start none|megatron|cd" (core/search/engine.h, WarmStart); nullopt for anything else.
inline std::optional<WarmStart> parseWarmStart(const std::string& s) {
    if (s == "none") return WarmStart::None;
    if (s == "megatron") return WarmStart::Megatron;
    if (s == "cd") return WarmStart::Descent;
    return std::nullopt;
}

inline std::string joined(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}

/// The file name without its folders and extension: the short name of a scenario in tables.
inline std::string stem(const std::string& path) {
    std::string s = path.substr(path.find_last_of('/') + 1);
    if (auto dot = s.find_last_of('.'); dot != std::string::npos && dot > 0) s = s.substr(0, dot);
    return s;
}

/// JSON for a number that may be undefined (NaN or infinite -> null).
inline nlohmann::ordered_json num(double x) {
    return std::isfinite(x) ? nlohmann::ordered_json(x) : nullptr;
}

} // namespace sp::cli
