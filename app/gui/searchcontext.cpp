#include "searchcontext.h"

namespace sp::app {

SearchContext::SearchContext(Scenario scenario)
    : m_scenario(std::move(scenario)), m_model(m_scenario), m_objective(m_model), m_space(m_scenario),
      m_engine(std::make_unique<Engine>(m_objective)) {
    m_megatron = views::makePlanRecord(m_model, m_model.megatronPlan(), "Megatron", "megatron");
    m_roofline = m_model.rooflineThroughput();
}

std::shared_ptr<const Scenario> SearchContext::scenarioOf(const std::shared_ptr<SearchContext>& ctx) {
    if (!ctx) return nullptr;
    return std::shared_ptr<const Scenario>(ctx, &ctx->m_scenario);
}

} // namespace sp::app
