#pragma once
// Everything a search of one scenario needs, built once and shared (read-only, but for the thread-safe
// Engine) by the GUI and the worker threads: the cost model, the search space, one Engine (its cache serves
// every run of the scenario) and the reference figures (the Megatron plan, the roofline bound).

#include "core/cost/costmodel.h"
#include "core/search/engine.h"
#include "core/search/space.h"
#include "views/planrecord.h"

#include <memory>

namespace sp::app {

class SearchContext {
public:
    explicit SearchContext(Scenario scenario);
    SearchContext(const SearchContext&) = delete;
    SearchContext& operator=(const SearchContext&) = delete;

    const Scenario& scenario() const { return m_scenario; }
    /// The scenario as a shared pointer that keeps this context alive (for the views).
    static std::shared_ptr<const Scenario> scenarioOf(const std::shared_ptr<SearchContext>& ctx);
    const CostModel& costModel() const { return m_model; }
    const SearchSpace& space() const { return m_space; }
    /// Thread-safe: several runs share it (their batches take turns on its workers).
    Engine& engine() const { return *m_engine; }
    const views::PlanRecordPtr& megatron() const { return m_megatron; }
    double roofline() const { return m_roofline; }

private:
    Scenario m_scenario;
    CostModel m_model;
    CostModelObjective m_objective;
    SearchSpace m_space;
    std::unique_ptr<Engine> m_engine;
    views::PlanRecordPtr m_megatron;
    double m_roofline = 0;
};
using SearchContextPtr = std::shared_ptr<SearchContext>;

} // namespace sp::app
