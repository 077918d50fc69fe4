#pragma once
// Plans, exports and readers of exported commands shared by the export suites (tst_export, tst_launch).
#include "core/export/check.h"
#include "core/export/launch.h"
#include "core/model/plan.h"
#include "sample_fixtures.h"

#include <QStringList>
#include <QTest>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace sp::test {

/// A Megatron-style plan; with ep > 0 its MoE layers regroup the dp*tp GPUs as ep x etp x edp.
inline Plan megatron(int pp, int dp, int tp, int64_t batch, int ep = 0, int etp = 1) {
    Degrees d{pp, dp, tp, 1, 1, 1};
    if (ep > 0) d.ep = ep, d.etp = etp, d.edp = dp * tp / (ep * etp);
    Plan p = Plan::megatronChoices(d);
    p.batch = batch;
    return p;
}

/// The export of a plan that must export (the test stops with the error otherwise).
inline LaunchCommand exportOk(const Scenario& s, const Plan& p, ServingEngine e,
                              const std::string& version = {}, ServingEngine worker = ServingEngine::Vllm) {
    ExportOptions o;
    o.engine = e, o.version = version, o.dynamoWorker = worker;
    auto r = launchCommand(s, p, o);
    if (!r) qFatal("%s", r.error().str().c_str());
    return r.value();
}

inline QStringList list(const std::vector<std::string>& v) {
    QStringList out;
    for (const auto& x : v) out << QString::fromStdString(x);
    return out;
}

/// The notes of an export, one a line.
inline QString notes(const LaunchCommand& c) {
    QString s;
    for (const auto& n : c.notes) s += QString::fromStdString(n) + "\n";
    return s;
}

inline bool hasNote(const LaunchCommand& c, const std::string& part) {
    for (const auto& n : c.notes)
        if (n.find(part) != std::string::npos) return true;
    return false;
}

/// The value after `flag` in node 0's engine command.
inline std::optional<std::string> flagAfter(const LaunchCommand& c, const std::string& flag) {
    auto it = std::find(c.argv.begin(), c.argv.end(), flag);
    if (it == c.argv.end() || it + 1 == c.argv.end()) return std::nullopt;
    return *(it + 1);
}

inline bool hasArg(const LaunchCommand& c, const std::string& a) {
    return std::find(c.argv.begin(), c.argv.end(), a) != c.argv.end();
}

/// What checkLaunch says of `base` with its command replaced by a one-node SGLang server for Mixtral 8x7B
/// with these arguments (for the checker's known answers).
inline std::vector<std::string> checkSglangArgs(const LaunchCommand& base, const Scenario& s,
                                                const EngineVersion& ver,
                                                const std::vector<std::string>& args) {
    LaunchCommand x = base;
    x.argv = {
        "python3",          "-m",  "sglang.launch_server", "--model-path", "mistralai/Mixtral-8x7B-v0.1",
        "--context-length", "2000"};
    x.argv.insert(x.argv.end(), args.begin(), args.end());
    x.nodes.resize(1);
    x.nodes[0].commands = {x.argv};
    return checkLaunch(x, s, ver);
}

} // namespace sp::test
