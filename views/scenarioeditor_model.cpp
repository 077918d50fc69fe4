// The scenario editor's Model group: the model picker and its data types (weights, activations, KV cache),
// checked against the cluster's GPU.
#include "views/scenarioeditor.h"

#include "core/cost/validity.h"
#include "views/format.h"
#include "views/scenarioeditor_p.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>

namespace sp::views {

using editor::kErrorStyle;
using editor::makeNote;

void ScenarioEditor::buildModel(QFormLayout* mf) {
    mf->addRow(buildPicker(m_model, QStringLiteral("models"), tr("model")));
    mf->addRow(m_model.info);
    mf->addRow(m_model.error);
    const char* dtypeLabels[3] = {"Weights", "Act.", "KV"};
    const char* dtypeTips[3] = {"Data type of the weights (fp8 weights run fp8 GEMMs where the GPU has them)",
                                "Data type of the activations (sets the GEMM rate otherwise)",
                                "Data type of the KV cache"};
    // One row: "Weights [fp8]  Act. [bf16]  KV [bf16]".
    auto* dtypes = new QWidget(this);
    auto* dh = new QHBoxLayout(dtypes);
    dh->setContentsMargins(0, 0, 0, 0);
    for (int i = 0; i < 3; ++i) {
        m_dtypes[i] = new QComboBox(this);
        for (auto n : kDtypeNames) m_dtypes[i]->addItem(qs(n));
        m_dtypes[i]->setToolTip(tr(dtypeTips[i]));
        if (i > 0) {
            auto* l = new QLabel(tr(dtypeLabels[i]), dtypes);
            l->setToolTip(tr(dtypeTips[i]));
            dh->addWidget(l);
        }
        dh->addWidget(m_dtypes[i], 1);
        connect(m_dtypes[i], &QComboBox::activated, this, [this, i](int idx) {
            Dtype* target[3] = {&m_scenario.model.weights, &m_scenario.model.activations,
                                &m_scenario.model.kvCache};
            *target[i] = Dtype(idx);
            checkDtypes();
            refreshInfo();
            changed();
        });
    }
    mf->addRow(tr(dtypeLabels[0]), dtypes);
    m_dtypeError = makeNote(this, kErrorStyle);
    mf->addRow(m_dtypeError);
}

void ScenarioEditor::checkDtypes() {
    const Gpu& g = m_scenario.cluster.gpu;
    const Dtype act = m_scenario.model.activations, w = m_scenario.model.weights;
    const bool fp8Gemm = w == Dtype::FP8 && g.tflops[size_t(Dtype::FP8)] > 0;
    QString e;
    if (!fp8Gemm && g.tflops[size_t(act)] <= 0)
        e = tr("Activations: %1 has no %2 tensor throughput in its cluster file")
                .arg(qs(g.name), qs(nameOf(act)));
    m_dtypeError->setText(e);
    m_dtypeError->setVisible(!e.isEmpty());
    m_dtypes[1]->setStyleSheet(e.isEmpty() ? QString()
                                           : QStringLiteral("QComboBox { border: 1px solid #dc2626; }"));
}

void ScenarioEditor::replaceModel(const Model& m, const QString&) {
    m_scenario.model = m;
    m_model.error->hide(); // a failed open before is no longer the model shown
    // Pins of operators this model does not have would only confuse.
    for (int i = 0; i < kOpCount; ++i)
        if (!opRelevant(m, Op(i))) m_scenario.constraints.pinned[size_t(i)] = -1;
    refreshFields();
    changed();
}

} // namespace sp::views
