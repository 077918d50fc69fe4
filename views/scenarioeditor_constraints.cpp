// The scenario editor's Constraints group: GPUs to use and memory headroom, the allowed degrees per axis,
// the layers per stage (balanced or tuned), how finely the operators' choices go (per type, per stage or per
// layer group, and how many groups), speculative decoding (searched, off or pinned),
// the pinned operators (folded away until asked for: at 1600x1000 the whole group fits beside the model,
// cluster and workload without scrolling), and the size of the search space they leave.
#include "views/scenarioeditor.h"

#include "core/cost/validity.h"
#include "core/search/space.h"
#include "views/degreechecks.h"
#include "views/format.h"
#include "views/scenarioeditor_p.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QToolButton>

#include <cmath>

namespace sp::views {

using editor::kErrorStyle;
using editor::kInfoStyle;
using editor::makeNote;

namespace {
/// A pinned speculative decoding as the spec combo's item data, and back.
int specCode(const Speculative& s) {
    return int(s.method) * 100 + s.draftTokens;
}
Speculative specOfCode(int code) {
    return {SpecMethod(code / 100), code % 100};
}

/// "0.8, 0.7, 0.6" (commas or spaces) as acceptance rates, each in (0, 1], at most kMaxDraftTokens; the
/// error, or empty.
QString parseRates(const QString& text, std::vector<double>& out) {
    out.clear();
    static const QRegularExpression sep(QStringLiteral("[,;\\s]+"));
    const QStringList parts = text.split(sep, Qt::SkipEmptyParts);
    if (parts.size() > kMaxDraftTokens)
        return QObject::tr("at most %1 rates (one per draft token), %2 given")
            .arg(kMaxDraftTokens)
            .arg(parts.size());
    for (int i = 0; i < parts.size(); ++i) {
        bool ok = false;
        const double a = parts[i].toDouble(&ok);
        if (!ok || !std::isfinite(a))
            return QObject::tr(
                       "\u201c%1\u201d is no number: give rates separated by commas, e.g. 0.8, 0.7, 0.6")
                .arg(parts[i]);
        if (a <= 0 || a > 1)
            return QObject::tr("rate %1 is %2: each must be above 0 and at most 1 (the share of draft token "
                               "%1 accepted when the ones before it were)")
                .arg(i + 1)
                .arg(parts[i]);
        out.push_back(a);
    }
    return {};
}

QString ratesText(const std::vector<double>& rates) {
    QStringList l;
    for (double a : rates) l << QString::number(a, 'g', 6);
    return l.join(QStringLiteral(", "));
}
} // namespace

void ScenarioEditor::buildConstraints(QFormLayout* kf) {
    m_constraintForm = kf;
    // Rows a little closer than the other groups': with the operator choices' row the group still fits
    // unscrolled at 1600x1000 beside a MoE model's EP row (tst_layout).
    kf->setVerticalSpacing(2);
    m_gpus = new QSpinBox(this);
    m_gpus->setRange(0, 10'000'000);
    m_gpus->setSpecialValueText(tr("all"));
    m_gpus->setToolTip(tr("GPUs the plan must use (all: the whole cluster)"));
    connect(m_gpus, &QSpinBox::valueChanged, this, [this](int v) {
        if (m_loading) return;
        m_scenario.constraints.gpus = v;
        rebuildConstraints();
        constraintsEdited();
    });
    // The engine whose memory rule sizes the KV pool, and its memory fraction (the engine's default at 0).
    m_memoryRule = new QComboBox(this);
    m_memoryRule->addItems({tr("vLLM"), tr("SGLang"), tr("TensorRT-LLM")});
    m_memoryRule->setToolTip(
        tr("Whose memory rule sizes the KV pool: vLLM's gpu_memory_utilization, SGLang's "
           "mem_fraction_static or TensorRT-LLM's free_gpu_memory_fraction"));
    connect(m_memoryRule, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (m_loading || i < 0) return;
        m_scenario.constraints.memoryRule = MemoryRule(i);
        changed();
    });
    m_headroom = new QDoubleSpinBox(this);
    m_headroom->setRange(0, 1);
    m_headroom->setDecimals(3);
    m_headroom->setSingleStep(0.01);
    m_headroom->setSpecialValueText(tr("default"));
    m_headroom->setToolTip(
        tr("The engine's memory fraction; \"default\" is the engine's own choice for the plan "
           "(vLLM and TensorRT-LLM 0.9, SGLang's formula)"));
    connect(m_headroom, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        if (m_loading) return;
        m_scenario.constraints.memoryFraction = v < kMinMemoryFraction ? 0.0 : v;
        changed();
    });
    // One row: "GPUs to use [all]  Memory [vLLM] [default]".
    auto* sizes = new QWidget(this);
    auto* sh = new QHBoxLayout(sizes);
    sh->setContentsMargins(0, 0, 0, 0);
    sh->addWidget(m_gpus, 1);
    sh->addWidget(new QLabel(tr("Memory"), sizes));
    sh->addWidget(m_memoryRule, 1);
    sh->addWidget(m_headroom, 1);
    kf->addRow(tr("GPUs to use"), sizes);

    for (Axis a : {Axis::TP, Axis::PP, Axis::DP, Axis::EP}) {
        auto* d = new DegreeChecks(this);
        m_degrees[size_t(a)] = d;
        kf->addRow(qs(kAxisNames[size_t(a)]).toUpper(), d);
        d->setToolTip(tr("Allowed %1 degrees; all checked: any value").arg(qs(kAxisNames[size_t(a)])));
        connect(d, &DegreeChecks::changed, this, &ScenarioEditor::constraintsEdited);
    }

    // How the search splits the layers over the pipeline stages (Constraints::stageSplit); the items are
    // in kStageSplitNames' order.
    m_stageSplit = new QComboBox(this);
    m_stageSplit->addItem(tr("balanced"));
    m_stageSplit->addItem(tr("tuned"));
    m_stageSplit->setToolTip(tr("balanced: the engines' even split of the layers over the pipeline stages; "
                                "tuned: the search may give the first and last stage a few layers more or "
                                "fewer (set in the exported commands through the engines' layer partition)"));
    connect(m_stageSplit, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (m_loading || i < 0) return;
        m_scenario.constraints.stageSplit = static_cast<StageSplit>(i);
        refreshSpace();
        changed();
    });

    // How finely the search chooses the per-layer operators (Constraints::granularity; the items are in
    // kGranularityNames' order) and, per layer group, into how many runs of layers
    // (Constraints::layerGroups).
    m_granularity = new QComboBox(this);
    m_granularity->addItem(tr("per type"));
    m_granularity->addItem(tr("per stage"));
    m_granularity->addItem(tr("per layer group"));
    m_granularity->setToolTip(
        tr("per type: one choice per operator for every layer; per stage: the first, the "
           "middle and the last pipeline stages each choose their own; per layer group: "
           "that many runs of consecutive layers each choose their own (no serving engine "
           "runs such a plan as it is: the exports use the first group's choices)"));
    m_layerGroups = new QSpinBox(this);
    m_layerGroups->setRange(2, kMaxLayerGroups);
    m_layerGroups->setSuffix(tr(" groups"));
    m_layerGroups->setToolTip(
        tr("Runs of consecutive layers (the balanced split of the layers), each with its "
           "own operator choices"));
    connect(m_granularity, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_layerGroups->setEnabled(i == int(Granularity::LayerGroup));
        if (m_loading || i < 0) return;
        m_scenario.constraints.granularity = static_cast<Granularity>(i);
        refreshSpace();
        changed();
    });
    connect(m_layerGroups, &QSpinBox::valueChanged, this, [this](int v) {
        if (m_loading) return;
        m_scenario.constraints.layerGroups = v;
        refreshSpace();
        changed();
    });
    // Speculative decoding (Constraints::specPolicy and specPin): searched, off, or one of the scenario's
    // options in every plan. On the operator choices' row: a row of its own would push the group past the
    // panel at 1600x1000 (tst_layout).
    m_spec = new QComboBox(this);
    m_spec->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_spec->setSizePolicy(QSizePolicy::Minimum, QSizePolicy::Fixed); // its items whole; the row gives way
    m_spec->setToolTip(
        tr("Speculative decoding: searched (the search weighs every method the model has, with each "
           "draft count its acceptance rates cover, and none), off, or one method and draft count in "
           "every plan"));
    connect(m_spec, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (m_loading || i < 0) return;
        Constraints& c = m_scenario.constraints;
        c.specPolicy = i == 0   ? Constraints::SpecPolicy::Search
                       : i == 1 ? Constraints::SpecPolicy::Off
                                : Constraints::SpecPolicy::Pinned;
        // The pin only where it applies, as a constraints file holds it.
        c.specPin = i >= 2 ? specOfCode(m_spec->itemData(i).toInt()) : Speculative{};
        refreshSpecCheck();
        refreshSpace();
        changed();
    });
    m_specError = makeNote(this, kErrorStyle);
    auto* granularityRow = new QWidget(this);
    auto* gh = new QHBoxLayout(granularityRow);
    gh->setContentsMargins(0, 0, 0, 0);
    gh->addWidget(m_granularity, 1);
    gh->addWidget(m_layerGroups);
    auto* specLabel = new QLabel(tr("Speculative"), granularityRow);
    specLabel->setBuddy(m_spec);
    specLabel->setToolTip(m_spec->toolTip());
    gh->addWidget(specLabel);
    gh->addWidget(m_spec);
    kf->addRow(tr("Operator choices"), granularityRow);
    kf->addRow(m_specError);

    // The acceptance rates the options above are priced with (the workload's, per method), editable here
    // where they were only seen through the options' tokens a step.
    m_acceptMethod = new QComboBox(this);
    m_acceptMethod->setToolTip(tr("The speculative decoding method whose acceptance rates the field edits"));
    QWidget* rates = addField(
        nullptr, QStringLiteral("acceptance_rates"), tr("Acceptance rates"),
        tr("a_1, a_2, ...: the share of draft token i accepted when the ones before it were, each above 0 "
           "and at most 1, one per draft token (at most %1); a step yields 1 + a_1 + a_1 a_2 + ... tokens. "
           "Empty: the model's default")
            .arg(kMaxDraftTokens),
        [this](const QString& t) {
            std::vector<double> r;
            QString e = parseRates(t, r);
            if (!e.isEmpty()) return e;
            const SpecMethod m = acceptanceMethod();
            if (m == SpecMethod::None) return tr("the model has no speculative decoding method");
            m_scenario.workload.acceptance[size_t(m)] = r;
            refreshSpec(); // the draft counts a search weighs follow the rates given
            return QString();
        },
        [this] {
            const SpecMethod m = acceptanceMethod();
            return m == SpecMethod::None ? QString() : ratesText(m_scenario.workload.acceptance[size_t(m)]);
        });
    connect(m_acceptMethod, &QComboBox::activated, this, [this] {
        Field& f = m_fields[QStringLiteral("acceptance_rates")];
        setFieldError(f, {});
        refreshAcceptance();
    });
    m_acceptRow = new QWidget(this);
    auto* ah = new QHBoxLayout(m_acceptRow);
    ah->setContentsMargins(0, 0, 0, 0);
    ah->addWidget(m_acceptMethod, 0, Qt::AlignTop);
    ah->addWidget(rates, 1);
    kf->addRow(tr("Acceptance"), m_acceptRow);

    m_pinToggle = new QToolButton(this);
    m_pinToggle->setCheckable(true);
    m_pinToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_pinToggle->setArrowType(Qt::RightArrow);
    m_pinToggle->setAutoRaise(true);
    m_pinToggle->setToolTip(tr("Fix an operator's sharding choice; free lets the search choose"));
    // One row for the pins' toggle and the layers per stage (a row of its own would push the group past
    // the panel at 1600x1000).
    auto* pinRow = new QWidget(this);
    auto* ph = new QHBoxLayout(pinRow);
    ph->setContentsMargins(0, 0, 0, 0);
    ph->addWidget(m_pinToggle);
    ph->addStretch(1);
    auto* splitLabel = new QLabel(tr("Layers per stage"), pinRow);
    splitLabel->setBuddy(m_stageSplit);
    ph->addWidget(splitLabel);
    ph->addWidget(m_stageSplit);
    kf->addRow(pinRow);
    m_pinPanel = new QWidget(this);
    m_pinPanel->setToolTip(m_pinToggle->toolTip());
    m_pinForm = new QFormLayout(m_pinPanel);
    m_pinForm->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_pinForm->setContentsMargins(8, 0, 0, 4);
    m_pinForm->setVerticalSpacing(3);
    for (int i = 0; i < kOpCount; ++i) {
        auto* c = new QComboBox(m_pinPanel);
        c->addItem(tr("free"));
        for (auto n : choiceNames(Op(i))) c->addItem(qs(n));
        c->setToolTip(tr("Pin %1 to one choice, or leave it free").arg(opDisplayName(Op(i))));
        m_pins[size_t(i)] = c;
        m_pinForm->addRow(opDisplayName(Op(i)), c);
        connect(c, &QComboBox::activated, this, [this, i](int idx) {
            m_scenario.constraints.pinned[size_t(i)] = int8_t(idx - 1);
            refreshPinToggle();
            refreshSpace();
            changed();
        });
    }
    kf->addRow(m_pinPanel);
    m_pinPanel->hide();
    connect(m_pinToggle, &QToolButton::toggled, this, [this](bool on) {
        m_pinPanel->setVisible(on);
        m_pinToggle->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    });
    m_spaceInfo = makeNote(this, kInfoStyle);
    kf->addRow(m_spaceInfo);
}

void ScenarioEditor::refreshPinToggle() {
    QStringList pinned;
    for (int i = 0; i < kOpCount; ++i)
        if (m_scenario.constraints.pinned[size_t(i)] >= 0 && opRelevant(m_scenario.model, Op(i)))
            pinned << opDisplayName(Op(i));
    m_pinToggle->setText(pinned.isEmpty()
                             ? tr("Pinned operators: none")
                             : tr("Pinned operators: %1").arg(pinned.join(QStringLiteral(", "))));
}

void ScenarioEditor::rebuildConstraints() {
    const Scenario& s = m_scenario;
    const int gpus = std::max(1, s.gpus());
    const bool moe = s.model.moe.present();
    const int maxOf[kAxisCount] = {std::min<int>(gpus, int(s.model.layers)),
                                   gpus,
                                   gpus,
                                   moe ? std::min<int>(gpus, int(s.model.moe.experts)) : 1,
                                   gpus,
                                   gpus};
    for (Axis a : {Axis::TP, Axis::PP, Axis::DP, Axis::EP}) {
        DegreeChecks* d = m_degrees[size_t(a)];
        const QSignalBlocker b(d);
        d->setValues(maxOf[size_t(a)], s.constraints.allowed[size_t(a)]);
    }
    m_constraintForm->setRowVisible(m_degrees[size_t(Axis::EP)], moe);
    // Pins: only the operators that matter for this model.
    for (int i = 0; i < kOpCount; ++i) {
        QComboBox* c = m_pins[size_t(i)];
        const QSignalBlocker b(c);
        c->setCurrentIndex(s.constraints.pinned[size_t(i)] + 1);
        m_pinForm->setRowVisible(c, opRelevant(s.model, Op(i)));
    }
    refreshPinToggle();
    refreshSpec();
    refreshAcceptance();
    refreshSpace();
}

void ScenarioEditor::refreshSpec() {
    const QSignalBlocker b(m_spec);
    m_spec->clear();
    m_spec->addItem(tr("searched"));
    m_spec->addItem(tr("off"));
    // What a search may weigh, whatever the policy now: the items a pin can take.
    Scenario searched = m_scenario;
    searched.constraints.specPolicy = Constraints::SpecPolicy::Search;
    for (const Speculative& o : speculativeOptions(searched)) {
        m_spec->addItem(qs(specText(o)), specCode(o));
        const double e = tokensPerStep(acceptanceRates(m_scenario, o.method), o.draftTokens);
        m_spec->setItemData(m_spec->count() - 1, specSummary(o, e), Qt::ToolTipRole);
    }
    const Constraints& c = m_scenario.constraints;
    int current = c.specPolicy == Constraints::SpecPolicy::Off ? 1 : 0;
    if (c.specPolicy == Constraints::SpecPolicy::Pinned) {
        current = m_spec->findData(specCode(c.specPin));
        if (current < 0) {
            // A pin this scenario does not offer: kept, outlined red with the reason below (its label no
            // longer than the others', so the panel keeps its width).
            m_spec->addItem(qs(specText(c.specPin)), specCode(c.specPin));
            current = m_spec->count() - 1;
            m_spec->setItemData(current, tr("Not available in this scenario"), Qt::ToolTipRole);
        }
    }
    m_spec->setCurrentIndex(current);
    refreshSpecCheck();
}

SpecMethod ScenarioEditor::acceptanceMethod() const {
    return m_acceptMethod->currentIndex() < 0 ? SpecMethod::None
                                              : SpecMethod(m_acceptMethod->currentData().toInt());
}

void ScenarioEditor::refreshAcceptance() {
    const SpecMethod was = acceptanceMethod();
    m_acceptMethod->clear();
    for (int m = 1; m < kSpecMethodCount; ++m)
        if (specMethodAvailable(m_scenario.model, SpecMethod(m)))
            m_acceptMethod->addItem(specMethodName(SpecMethod(m)), m);
    // The method kept, else the pinned one, else the first with rates, else the first.
    int current = m_acceptMethod->findData(int(was));
    if (current < 0) current = m_acceptMethod->findData(int(m_scenario.constraints.specPin.method));
    for (int i = 0; current < 0 && i < m_acceptMethod->count(); ++i)
        if (!acceptanceRates(m_scenario, SpecMethod(m_acceptMethod->itemData(i).toInt())).empty())
            current = i;
    m_acceptMethod->setCurrentIndex(std::max(0, current));
    const SpecMethod m = acceptanceMethod();
    Field& f = m_fields[QStringLiteral("acceptance_rates")];
    const auto& model = m_scenario.model.spec.acceptance[size_t(m)];
    f.edit->setPlaceholderText(m == SpecMethod::None ? tr("the model has no draft method")
                               : model.empty()       ? tr("none: give the rates")
                                                     : tr("model default %1").arg(ratesText(model)));
    f.edit->setToolTip(
        f.edit->toolTip().section(QStringLiteral("\n"), 0, 0) +
        (model.empty() ? QString()
                       : tr("\nThe model's default: %1 (%2)")
                             .arg(ratesText(model), qs(m_scenario.model.spec.acceptanceSource[size_t(m)]))));
    // Shown where the model drafts (MTP, an EAGLE-3 head, a draft model) or rates are known: n-gram alone,
    // with no rates, would add a row that pushes the group past the panel at 1600x1000 (tst_layout), and a
    // workload file gives it its rates.
    bool shown = false;
    for (int k = 1; k < kSpecMethodCount; ++k)
        shown =
            shown ||
            (SpecMethod(k) != SpecMethod::Ngram && specMethodAvailable(m_scenario.model, SpecMethod(k))) ||
            !acceptanceRates(m_scenario, SpecMethod(k)).empty();
    m_constraintForm->setRowVisible(m_acceptRow, shown);
    if (!f.edit->property("invalid").toBool()) f.edit->setText(f.show()); // a refused text stays to fix
}

void ScenarioEditor::refreshSpecCheck() {
    const Constraints& c = m_scenario.constraints;
    std::optional<std::string> why;
    if (c.specPolicy == Constraints::SpecPolicy::Pinned) why = checkSpeculative(m_scenario, c.specPin);
    m_specError->setText(why ? tr("Constraints: %1").arg(qs(*why)) : QString());
    m_specError->setVisible(bool(why));
    m_spec->setStyleSheet(why ? QStringLiteral("QComboBox { border: 1px solid #dc2626; }") : QString());
    // Prefill drafts nothing; a pin left from before stays editable so it can be cleared.
    m_spec->setEnabled(m_scenario.workload.phase != Phase::Prefill || why);
}

void ScenarioEditor::constraintsEdited() {
    if (m_loading) return;
    for (Axis a : {Axis::TP, Axis::PP, Axis::DP, Axis::EP})
        m_scenario.constraints.allowed[size_t(a)] = m_degrees[size_t(a)]->allowed();
    refreshSpace();
    changed();
}

void ScenarioEditor::refreshSpace() {
    // The size of the search space tells at once whether the constraints leave anything to search.
    const SearchSpace space(m_scenario);
    if (space.empty()) {
        m_spaceInfo->setStyleSheet(QString::fromLatin1(kErrorStyle));
        m_spaceInfo->setText(tr("No valid plan: %1").arg(qs(space.emptyReason())));
    } else {
        const SpaceSize sz = space.size();
        m_spaceInfo->setStyleSheet(QString::fromLatin1(kInfoStyle));
        m_spaceInfo->setText(
            tr("%1%2 valid plans in the search space")
                .arg(sz.exact ? QString() : tr("about "),
                     sz.count < 1e15 ? formatInteger(sz.count) : QString::number(sz.count, 'g', 3)));
    }
    m_spaceInfo->show();
}
} // namespace sp::views
