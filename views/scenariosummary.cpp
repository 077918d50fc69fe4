#include "views/scenariosummary.h"

#include "core/io/formats.h"

#include <QHeaderView>

namespace sp::views {

ScenarioSummary::ScenarioSummary(QWidget* parent) : QTreeWidget(parent) {
    setColumnCount(2);
    setHeaderLabels({tr("Field"), tr("Value")});
    header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    setAlternatingRowColors(true);
}

void ScenarioSummary::setScenario(const Scenario& s) {
    clear();
    auto group = [this](const QString& name) {
        auto* g = new QTreeWidgetItem(this, {name});
        g->setExpanded(true);
        QFont f = g->font(0);
        f.setBold(true);
        g->setFont(0, f);
        return g;
    };
    auto row = [](QTreeWidgetItem* g, const QString& k, const QString& v) { new QTreeWidgetItem(g, {k, v}); };
    const auto& m = s.model;
    const ParamCounts pc = countParams(m);
    auto* mg = group(tr("Model: %1").arg(QString::fromStdString(m.name)));
    row(mg, tr("Parameters"),
        QStringLiteral("%1 total, %2 active")
            .arg(QString::fromStdString(formatCount(pc.total)),
                 QString::fromStdString(formatCount(pc.active))));
    row(mg, tr("Layers"), QString::number(m.layers));
    row(mg, tr("Hidden"), QString::number(m.hidden));
    row(mg, tr("Attention"),
        m.attention.type == AttentionType::MLA
            ? tr("MLA, %1 heads, KV latent %2").arg(m.attention.heads).arg(m.attention.mla.kvLoraRank)
            : tr("GQA, %1 heads, %2 KV heads x %3")
                  .arg(m.attention.heads)
                  .arg(m.attention.kvHeads)
                  .arg(m.attention.headDim));
    if (m.moe.present())
        row(mg, tr("MoE"),
            tr("%1 experts, top-%2, FFN %3, %4 shared; %5 MoE layers of %6%7")
                .arg(m.moe.experts)
                .arg(m.moe.topK)
                .arg(m.moe.expertFfn)
                .arg(m.moe.sharedExperts)
                .arg(m.moeLayers())
                .arg(m.layers)
                .arg(m.moe.layerStep > 1          ? tr(" (every %1th layer)").arg(m.moe.layerStep)
                     : m.moe.firstDenseLayers > 0 ? tr(" (after %1 dense)").arg(m.moe.firstDenseLayers)
                                                  : QString()));
    row(mg, tr("Dtypes"),
        QStringLiteral("weights %1, activations %2, KV %3")
            .arg(QString::fromUtf8(nameOf(m.weights).data(), int(nameOf(m.weights).size())),
                 QString::fromUtf8(nameOf(m.activations).data(), int(nameOf(m.activations).size())),
                 QString::fromUtf8(nameOf(m.kvCache).data(), int(nameOf(m.kvCache).size()))));
    const auto& c = s.cluster;
    auto* cg = group(tr("Cluster: %1").arg(QString::fromStdString(c.name)));
    row(cg, tr("GPUs"),
        tr("%1 nodes x %2 %3").arg(c.nodes).arg(c.gpusPerNode).arg(QString::fromStdString(c.gpu.name)));
    row(cg, tr("HBM"),
        c.gpu.memoryMiB > 0 ? tr("%1 GB at %2 TB/s (%3 GiB as the driver reports it)")
                                  .arg(c.gpu.hbmGB)
                                  .arg(c.gpu.hbmTBs)
                                  .arg(c.gpu.memoryMiB / 1024.0, 0, 'f', 1)
                            : tr("%1 GB at %2 TB/s").arg(c.gpu.hbmGB).arg(c.gpu.hbmTBs));
    row(cg, tr("NVLink"),
        c.intraNode.meshLinkGbPerS > 0 ? tr("%1 GB/s per GPU, point to point (%2 GB/s a link)")
                                             .arg(c.intraNode.gbPerS)
                                             .arg(c.intraNode.meshLinkGbPerS)
                                       : tr("%1 GB/s per GPU").arg(c.intraNode.gbPerS));
    if (c.nodes > 1) row(cg, tr("NIC"), tr("%1 Gb/s per GPU").arg(c.interNode.gbPerS * 8));
    // Which efficiency factors the cost model runs with, and what they were fitted on (or that nothing was).
    if (!c.efficiencySource.empty()) row(cg, tr("Factors"), QString::fromStdString(c.efficiencySource));
    const auto& w = s.workload;
    static const char* phases[] = {"prefill", "decode", "serving"};
    auto* wg = group(tr("Workload: %1").arg(QString::fromStdString(w.name)));
    row(wg, tr("Phase"), QString::fromLatin1(phases[int(w.phase)]));
    row(wg, tr("Tokens"), tr("%1 in, %2 out").arg(w.inputTokens).arg(w.outputTokens));
    row(wg, tr("SLOs"), tr("TTFT %1 ms, TPOT %2 ms").arg(w.ttftMs).arg(w.tpotMs));
}

} // namespace sp::views
