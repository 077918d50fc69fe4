#include "views/comparison.h"

#include "core/analysis/why.h"
#include "core/cost/economics.h"
#include "core/cost/validity.h"
#include "core/io/formats.h"
#include "views/format.h"
#include "views/meshgroups.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QToolButton>
#include <QToolTip>
#include <QValueAxis>

#include <cmath>
#include <optional>

namespace sp::views {

namespace {
const QColor kDiffBg(0xfe, 0xf3, 0xc7), kBetter(0x15, 0x80, 0x3d), kWorse(0xb9, 0x1c, 0x1c);

QTableWidget* makeTable(QWidget* parent, const QStringList& headers) {
    auto* t = new QTableWidget(0, int(headers.size()), parent);
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->hide();
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionMode(QAbstractItemView::NoSelection);
    t->setFocusPolicy(Qt::NoFocus);
    t->setAlternatingRowColors(true);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    // A long plan name is cut at its end (not at both ends, centred), and is whole in the tooltip.
    t->horizontalHeader()->setTextElideMode(Qt::ElideRight);
    t->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    t->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 8);
    return t;
}

QTableWidgetItem* item(const QString& text, Qt::Alignment a = Qt::AlignLeft | Qt::AlignVCenter) {
    auto* it = new QTableWidgetItem(text);
    it->setTextAlignment(a);
    return it;
}
} // namespace

ComparisonView::ComparisonView(QWidget* parent) : QWidget(parent) {
    m_left = new QComboBox(this);
    m_right = new QComboBox(this);
    for (QComboBox* c : {m_left, m_right}) {
        c->setSizeAdjustPolicy(QComboBox::AdjustToContents);
        c->setMinimumContentsLength(18);
    }
    m_left->setToolTip(tr("The reference plan (left; ratios are right / left)"));
    m_right->setToolTip(tr("The plan compared with it (right)"));
    auto* other = new QToolButton(this);
    other->setText(tr("Other Scenario..."));
    other->setToolTip(tr("Compare with a plan of another scenario: the same model on other GPUs, or another "
                         "workload (a plan file, or that scenario's Megatron plan)"));
    auto* swap = new QToolButton(this);
    swap->setText(QStringLiteral("\u21c4"));
    swap->setToolTip(tr("Swap the two sides"));
    m_onlyDiff = new QCheckBox(tr("Only differences"), this);
    m_onlyDiff->setToolTip(tr("Hide the settings and figures both plans share"));
    m_phase = new QComboBox(this);
    m_phase->addItems({tr("Decode step"), tr("Prefill pass")});
    m_phase->setToolTip(tr("Which pass the step-time bars break down"));
    m_verdict = new QLabel(this);
    m_verdict->setTextFormat(Qt::RichText);
    m_verdict->setWordWrap(true);
    m_verdict->setContentsMargins(8, 2, 8, 2);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(8, 6, 8, 0);
    bar->addWidget(m_left);
    bar->addWidget(swap);
    bar->addWidget(m_right);
    bar->addSpacing(16);
    bar->addWidget(m_onlyDiff);
    bar->addSpacing(16);
    bar->addWidget(other);
    bar->addStretch(1);
    bar->addWidget(new QLabel(tr("Bars:"), this));
    bar->addWidget(m_phase);

    m_metrics = makeTable(this, {tr("Metric"), tr("Left"), tr("Right"), tr("Right / left")});
    m_settings = makeTable(this, {tr("Setting"), tr("Left"), tr("Right")});
    m_whatIf = makeTable(
        this, {tr("Right with the left's"), tr("Right"), tr("Left"), tr("Throughput"), tr("Batch")});
    m_whatIf->setToolTip(
        tr("Each setting of the right plan taken back to the left plan's alone, the costliest "
           "first: the right plan's throughput with it (x its own) and the batch it then "
           "holds. Click a row to compare that plan with the right one."));
    m_whatIf->setCursor(Qt::PointingHandCursor);
    m_whatIf->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < 5; ++c)
        m_whatIf->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    // The figures are what a reader compares: their columns fit them, and a long metric name gives way
    // (cut at its end, whole in its tooltip).
    m_metrics->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < 4; ++c)
        m_metrics->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_chart = new QChart;
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setBackgroundRoundness(0);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 8, 4));
    m_chartView = new QChartView(m_chart, this);
    m_chartView->setRenderHint(QPainter::Antialiasing);
    m_chartView->setMinimumWidth(360);

    auto* tables = new QSplitter(Qt::Vertical, this);
    tables->addWidget(m_metrics);
    tables->addWidget(m_settings);
    tables->addWidget(m_whatIf);
    tables->setStretchFactor(0, 0);
    tables->setStretchFactor(1, 1);
    tables->setStretchFactor(2, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(tables);
    split->addWidget(m_chartView);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({600, 500}); // the bars' labels and legend need room
    split->setChildrenCollapsible(false);

    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(4);
    lay->addLayout(bar);
    lay->addWidget(m_verdict);
    lay->addWidget(split, 1);

    auto picked = [this] {
        m_userPicked = true;
        refresh();
    };
    connect(m_left, &QComboBox::activated, this, picked);
    connect(m_right, &QComboBox::activated, this, picked);
    connect(swap, &QToolButton::clicked, this, [this] {
        m_userPicked = true;
        setSides(rightIndex(), leftIndex());
    });
    connect(m_onlyDiff, &QCheckBox::toggled, this, &ComparisonView::refresh);
    connect(other, &QToolButton::clicked, this, [this] {
        const QString scenario =
            QFileDialog::getOpenFileName(this, tr("Scenario to Compare With"), QString(),
                                         tr("Scenarios (*.yaml *.yml *.json);;All files (*)"));
        if (scenario.isEmpty()) return;
        QMessageBox ask(QMessageBox::Question, tr("Which Plan"),
                        tr("Which plan of %1 goes on the right?").arg(QFileInfo(scenario).fileName()),
                        QMessageBox::Cancel, this);
        QPushButton* megatron = ask.addButton(tr("Its &Megatron Plan"), QMessageBox::AcceptRole);
        QPushButton* file = ask.addButton(tr("A &Plan File..."), QMessageBox::ActionRole);
        ask.setDefaultButton(megatron);
        ask.exec();
        QString plan;
        if (ask.clickedButton() == file) {
            plan = QFileDialog::getOpenFileName(this, tr("Plan"), QFileInfo(scenario).absolutePath(),
                                                tr("Plans (*.yaml *.yml *.json);;All files (*)"));
            if (plan.isEmpty()) return;
        } else if (ask.clickedButton() != megatron) {
            return;
        }
        const QString error = addFromScenario(scenario, plan);
        if (!error.isEmpty()) QMessageBox::warning(this, tr("Cannot Compare"), error);
    });
    connect(m_whatIf, &QTableWidget::cellClicked, this, [this](int row, int) { showWhatIf(row); });
    connect(m_phase, &QComboBox::currentIndexChanged, this, &ComparisonView::refreshBars);
    refresh();
}

void ComparisonView::setScenario(std::shared_ptr<const Scenario> scenario) {
    m_scenario = std::move(scenario);
    m_model = m_scenario ? std::make_shared<const CostModel>(*m_scenario) : nullptr;
    refresh();
}

QString ComparisonView::addFromScenario(const QString& scenarioPath, const QString& planPath) {
    auto s = loadScenario(scenarioPath.toStdString());
    if (!s) return qs(s.error().str());
    const CostModel model(s.value());
    Plan plan = model.megatronPlan();
    QString what = tr("Megatron");
    if (!planPath.isEmpty()) {
        auto p = loadPlan(planPath.toStdString());
        if (!p) return qs(p.error().str());
        if (const auto bad = model.checkPlan(p.value()))
            return tr("%1: does not fit %2: %3").arg(planPath, qs(s->name), qs(*bad));
        plan = p.value();
        what = QFileInfo(planPath).fileName();
    }
    const QString name = tr("%1: %2").arg(qs(s->name), what);
    auto scenario = std::make_shared<const Scenario>(s.value());
    NamedPlan np{name,
                 makePlanRecord(model, plan, name.toStdString(), planPath.isEmpty() ? "megatron" : "file"),
                 scenario};
    int at = -1;
    for (int i = 0; i < m_foreign.size(); ++i)
        if (m_foreign[i].name == name) at = i;
    if (at >= 0)
        m_foreign[at] = np;
    else
        m_foreign.push_back(np);
    // Rebuild the pickers with it; the window's own plans stay as they are.
    QVector<NamedPlan> own;
    for (const NamedPlan& p : m_plans)
        if (!p.scenario || p.scenario == m_scenario) own.push_back(p);
    const int left = std::max(0, leftIndex());
    setCandidates(own, left, 0);
    for (int i = 0; i < m_plans.size(); ++i)
        if (m_plans[i].name == name) {
            m_userPicked = true;
            setSides(left, i);
        }
    return {};
}

std::shared_ptr<const Scenario> ComparisonView::scenarioOf(int side) const {
    const int i = side == 0 ? leftIndex() : rightIndex();
    if (i >= 0 && i < m_plans.size() && m_plans[i].scenario) return m_plans[i].scenario;
    return m_scenario;
}

void ComparisonView::showWhatIf(int row) {
    const PlanRecordPtr R = right();
    if (!R || !m_model || row < 0 || row >= int(m_whatIfs.size())) return;
    const WhatIf& w = m_whatIfs[size_t(row)];
    if (!w.valid) return;
    // Named as the row reads: "Best found (rl) with qkv (MoE layers) column".
    const QString name =
        tr("%1 with %2 %3").arg(qs(R->label), m_whatIf->item(row, 0)->text(), m_whatIf->item(row, 2)->text());
    int at = -1;
    for (int i = 0; i < m_plans.size(); ++i)
        if (m_plans[i].name == name) at = i;
    if (at < 0) {
        m_plans.push_back({name, makePlanRecord(*m_model, w.plan, name.toStdString(), "what-if"), nullptr});
        for (QComboBox* c : {m_left, m_right}) {
            const QSignalBlocker b(c);
            c->addItem(name);
        }
        at = int(m_plans.size()) - 1;
    }
    m_userPicked = true;
    setSides(at, rightIndex());
}

QString ComparisonView::barAxisTitle() const {
    const auto axes = m_chart->axes(Qt::Horizontal);
    return axes.isEmpty() ? QString() : axes.first()->titleText();
}

QStringList ComparisonView::barCategories() const {
    const auto axes = m_chart->axes(Qt::Vertical);
    auto* cat = axes.isEmpty() ? nullptr : qobject_cast<QBarCategoryAxis*>(axes.first());
    return cat ? cat->categories() : QStringList();
}

void ComparisonView::setCandidates(const QVector<NamedPlan>& given, int defaultLeft, int defaultRight) {
    const QString oldL = m_left->currentText(), oldR = m_right->currentText();
    QVector<NamedPlan> plans = given;
    plans += m_foreign;
    m_plans = plans;
    int l = defaultLeft, r = defaultRight;
    if (m_userPicked) {
        for (int i = 0; i < plans.size(); ++i) {
            if (plans[i].name == oldL) l = i;
            if (plans[i].name == oldR) r = i;
        }
    }
    for (QComboBox* c : {m_left, m_right}) {
        const QSignalBlocker b(c);
        c->clear();
        for (const NamedPlan& p : plans) c->addItem(p.name);
    }
    setSides(l, r);
}

void ComparisonView::setSides(int left, int right) {
    {
        const QSignalBlocker a(m_left), b(m_right);
        m_left->setCurrentIndex(left < m_plans.size() ? left : -1);
        m_right->setCurrentIndex(right < m_plans.size() ? right : -1);
    }
    refresh();
}

int ComparisonView::leftIndex() const {
    return m_left->currentIndex();
}
int ComparisonView::rightIndex() const {
    return m_right->currentIndex();
}
PlanRecordPtr ComparisonView::left() const {
    const int i = leftIndex();
    return i >= 0 && i < m_plans.size() ? m_plans[i].record : nullptr;
}
PlanRecordPtr ComparisonView::right() const {
    const int i = rightIndex();
    return i >= 0 && i < m_plans.size() ? m_plans[i].record : nullptr;
}
QStringList ComparisonView::differences() const {
    return m_diff;
}
QString ComparisonView::whySentence() const {
    return m_why;
}
QHorizontalStackedBarSeries* ComparisonView::barSeries() const {
    const auto all = m_chart->series();
    return all.isEmpty() ? nullptr : qobject_cast<QHorizontalStackedBarSeries*>(all.first());
}

void ComparisonView::refresh() {
    const PlanRecordPtr L = left(), R = right();
    m_metrics->setRowCount(0);
    m_settings->setRowCount(0);
    m_whatIf->setRowCount(0);
    m_whatIfs.clear();
    m_diff.clear();
    m_why.clear();
    const std::shared_ptr<const Scenario> sL = scenarioOf(0), sR = scenarioOf(1);
    if (!L || !R || !sL || !sR) {
        m_verdict->setText(
            tr("<i>Pick two plans to compare (Megatron against the best found by default).</i>"));
        m_whatIf->hide();
        refreshBars();
        return;
    }
    // Plans of two scenarios (another GPU, another workload) compare as they stand; what limits a batch,
    // the step at equal load and the what-ifs need one scenario.
    const bool same = sL == sR || *sL == *sR;
    const Metrics &a = L->metrics(), &b = R->metrics();
    m_metrics->setHorizontalHeaderLabels({tr("Metric"), qs(L->label), qs(R->label), tr("Right / left")});
    m_settings->setHorizontalHeaderLabels({tr("Setting"), qs(L->label), qs(R->label)});
    for (QTableWidget* t : {m_metrics, m_settings})
        for (int c : {1, 2}) t->horizontalHeaderItem(c)->setToolTip(qs(c == 1 ? L->label : R->label));

    // Metrics. higher: +1 when larger is better, -1 when smaller is, 0 when neither.
    auto metric = [&](const QString& name, double va, double vb, const QString& ta, const QString& tb,
                      int higher) {
        // "Only differences" leaves out the figures both plans share (the throughput stays: it is what the
        // comparison is about).
        if (m_onlyDiff->isChecked() && ta == tb && m_metrics->rowCount() > 0) return;
        const int row = m_metrics->rowCount();
        m_metrics->insertRow(row);
        m_metrics->setItem(row, 0, item(name));
        m_metrics->item(row, 0)->setToolTip(name);
        m_metrics->setItem(row, 1, item(ta, Qt::AlignRight | Qt::AlignVCenter));
        m_metrics->setItem(row, 2, item(tb, Qt::AlignRight | Qt::AlignVCenter));
        QString ratio;
        QColor color = palette().color(QPalette::Text);
        if (va > 0 && vb >= 0 && std::isfinite(va) && std::isfinite(vb)) {
            const double q = vb / va;
            ratio = QStringLiteral("%1x").arg(q, 0, 'f', q >= 10 ? 1 : 3);
            if (higher != 0 && std::abs(q - 1) > 0.005) color = ((q > 1) == (higher > 0)) ? kBetter : kWorse;
        }
        auto* it = item(ratio, Qt::AlignRight | Qt::AlignVCenter);
        it->setForeground(color);
        if (color != palette().color(QPalette::Text)) {
            QFont f = it->font();
            f.setBold(true);
            it->setFont(f);
        }
        m_metrics->setItem(row, 3, it);
    };
    metric(tr("Throughput"), a.throughput, b.throughput, formatRate(a.throughput), formatRate(b.throughput),
           +1);
    metric(tr("Per GPU"), a.throughputPerGpu, b.throughputPerGpu, formatRate(a.throughputPerGpu),
           formatRate(b.throughputPerGpu), +1);
    metric(tr("Of the roofline bound"), a.rooflineFraction, b.rooflineFraction,
           QStringLiteral("%1%").arg(100 * a.rooflineFraction, 0, 'f', 1),
           QStringLiteral("%1%").arg(100 * b.rooflineFraction, 0, 'f', 1), +1);
    // A workload without prefill (decode) has no TTFT, one without decode (prefill) no TPOT.
    if (a.ttftMs > 0 || b.ttftMs > 0)
        metric(tr("TTFT"), a.ttftMs, b.ttftMs, formatMs(a.ttftMs), formatMs(b.ttftMs), -1);
    if (a.tpotMs > 0 || b.tpotMs > 0) {
        metric(tr("TPOT"), a.tpotMs, b.tpotMs, formatMs(a.tpotMs), formatMs(b.tpotMs), -1);
        if (a.spec.on() || b.spec.on()) {
            // Speculative decoding: a step yields E tokens a sequence, and TPOT is the step over E.
            const int row = m_metrics->rowCount() - 1;
            for (int side : {1, 2}) {
                const Metrics& x = side == 1 ? a : b;
                if (x.spec.on() && x.stepMs > 0)
                    m_metrics->item(row, side)->setToolTip(tr("TPOT = step %1 / %2 tokens a step (%3)")
                                                               .arg(formatMs(x.stepMs))
                                                               .arg(x.tokensPerStep, 0, 'f', 2)
                                                               .arg(specSummary(x.spec)));
            }
            metric(tr("Tokens a step (E)"), a.tokensPerStep, b.tokensPerStep,
                   QString::number(a.tokensPerStep, 'f', 2), QString::number(b.tokensPerStep, 'f', 2), 0);
            QTableWidgetItem* named = m_metrics->item(m_metrics->rowCount() - 1, 0);
            named->setToolTip(named->text() + tr(": tokens a step yields a sequence under speculative "
                                                 "decoding (1 without); TPOT is the step over it"));
        }
    }
    metric(tr("Batch per replica"), double(a.batch), double(b.batch), QString::number(a.batch),
           QString::number(b.batch), 0);
    // What the throughput is made of: sequences in flight over the step, and what stops each batch
    // (core/analysis/why.h).
    Why why;
    if (same) {
        std::optional<CostModel> own;
        const CostModel* model = m_model.get();
        if (!model || !(model->scenario() == *sL)) model = &own.emplace(*sL);
        why = explainWhy(*model, L->plan, R->plan, L->label, R->label);
        m_why = QString::fromStdString(why.sentence);
        const int before = m_metrics->rowCount();
        metric(tr("Batch stops at"), 0, 0, qs(why.bindingA.name), qs(why.bindingB.name), 0);
        if (m_metrics->rowCount() > before) {
            const int row = before;
            m_metrics->item(row, 0)->setToolTip(
                tr("Batch stops at: the limit one more sequence a micro-batch would break"));
            m_metrics->item(row, 1)->setToolTip(qs(why.bindingA.detail));
            m_metrics->item(row, 2)->setToolTip(qs(why.bindingB.detail));
        }
    } else {
        const PlanFigures fa = planFigures(*sL, L->plan, a), fb = planFigures(*sR, R->plan, b);
        why.rows = {
            {"replicas", "Replicas (dp)", double(fa.replicas), double(fb.replicas), "model copies"},
            {"in_flight", "Sequences in flight", double(fa.inFlight), double(fb.inFlight),
             "replicas x stages x batch: sequences advancing at once"},
            {"step_ms", "Step (ms)", fa.stepMs, fb.stepMs, "one cycle: every micro-batch advances once"}};
    }
    for (const WhyRow& w : why.rows) {
        if (w.key == "weights_gib" || w.key == "kv_cache_gib") continue;
        const bool step = w.key == "step_ms";
        if (step && (w.a <= 0 || w.b <= 0)) continue;
        metric(qs(w.label).remove(QStringLiteral(" (ms)")), w.a, w.b,
               step ? formatMs(w.a) : formatInteger(w.a), step ? formatMs(w.b) : formatInteger(w.b),
               step ? -1 : 0);
        QTableWidgetItem* named = m_metrics->item(m_metrics->rowCount() - 1, 0);
        named->setToolTip(named->text() + QStringLiteral(": ") + qs(w.tip));
    }
    // What a million tokens cost on each side's GPUs (the cluster's price per GPU-hour;
    // core/cost/economics.h): the figure two scenarios on two GPU types are compared by.
    {
        const ServingCost ca = servingCost(sL->cluster, sL->gpus(), a.feasible ? a.throughput : 0),
                          cb = servingCost(sR->cluster, sR->gpus(), b.feasible ? b.throughput : 0);
        const auto usd = [](const ServingCost& c) {
            return c.priced && c.usdPerMillionTokens > 0
                       ? QStringLiteral("$%1").arg(c.usdPerMillionTokens, 0, 'f', 3)
                       : tr("unknown");
        };
        if (ca.priced || cb.priced) {
            metric(tr("Per million tokens"), ca.usdPerMillionTokens, cb.usdPerMillionTokens, usd(ca), usd(cb),
                   -1);
            QTableWidgetItem* named = m_metrics->item(m_metrics->rowCount() - 1, 0);
            if (named && named->text() == tr("Per million tokens")) {
                named->setToolTip(tr("Per million tokens: dollars at the cluster's price per GPU-hour "
                                     "(%1 a GPU-hour left, %2 right)")
                                      .arg(ca.usdPerGpuHour, 0, 'f', 2)
                                      .arg(cb.usdPerGpuHour, 0, 'f', 2));
                for (int side : {1, 2}) {
                    const ServingCost& c = side == 1 ? ca : cb;
                    m_metrics->item(m_metrics->rowCount() - 1, side)->setToolTip(qs(c.priceSource));
                }
            }
        }
    }
    metric(tr("Memory per GPU"), a.memoryPerGpuGiB, b.memoryPerGpuGiB,
           QStringLiteral("%1 GiB").arg(a.memoryPerGpuGiB, 0, 'f', 1),
           QStringLiteral("%1 GiB").arg(b.memoryPerGpuGiB, 0, 'f', 1), 0);
    const bool prefill = m_phase->currentIndex() == 1;
    const double sa = L->breakdown(prefill).stageMs, sb = R->breakdown(prefill).stageMs;
    metric(tr("Slowest stage, %1").arg(qs(L->breakdown(prefill).phase)), sa, sb, formatMs(sa), formatMs(sb),
           -1);
    metric(tr("Feasible"), 0, 0, a.feasible ? tr("yes") : tr("no: %1").arg(qs(a.violation)),
           b.feasible ? tr("yes") : tr("no: %1").arg(qs(b.violation)), 0);
    m_metrics->setFixedHeight(m_metrics->horizontalHeader()->height() +
                              m_metrics->rowCount() * m_metrics->verticalHeader()->defaultSectionSize() + 4);

    // Settings.
    const bool moe = sL->model.moe.present() || sR->model.moe.present();
    QFont bold = font();
    bold.setBold(true);
    auto setting = [&](const QString& name, const QString& va, const QString& vb) {
        const bool differs = va != vb;
        if (differs) m_diff << name;
        if (m_onlyDiff->isChecked() && !differs) return;
        const int row = m_settings->rowCount();
        m_settings->insertRow(row);
        QTableWidgetItem* cells[3] = {item(differs ? QStringLiteral("\u2260 ") + name : name), item(va),
                                      item(vb)};
        for (int c = 0; c < 3; ++c) {
            if (differs) {
                cells[c]->setBackground(kDiffBg);
                cells[c]->setFont(bold);
                cells[c]->setToolTip(tr("Differs between the two plans"));
            }
            cells[c]->setData(Qt::UserRole, differs);
            m_settings->setItem(row, c, cells[c]);
        }
    };
    if (!same) {
        const auto gpus = [](const Scenario& x) {
            return tr("%1 x %2 (%3)").arg(x.cluster.nodes).arg(x.cluster.gpusPerNode).arg(x.gpus());
        };
        const auto workload = [](const Scenario& x) {
            const Workload& w = x.workload;
            QString t = tr("%1 in, %2 out").arg(w.inputTokens).arg(w.outputTokens);
            if (w.ttftMs > 0) t += tr("; TTFT %1 ms").arg(w.ttftMs);
            if (w.tpotMs > 0) t += tr("; TPOT %1 ms").arg(w.tpotMs);
            return t;
        };
        setting(tr("scenario"), qs(sL->name), qs(sR->name));
        setting(tr("model"), qs(sL->model.name), qs(sR->model.name));
        setting(tr("GPU"), qs(sL->cluster.gpu.name), qs(sR->cluster.gpu.name));
        setting(tr("GPUs"), gpus(*sL), gpus(*sR));
        setting(tr("workload"), workload(*sL), workload(*sR));
    }
    const Degrees &da = L->plan.degrees, &db = R->plan.degrees;
    const Axis axes[] = {Axis::PP, Axis::DP, Axis::TP, Axis::EP, Axis::ETP, Axis::EDP};
    for (Axis ax : axes) {
        if (!moe && (ax == Axis::EP || ax == Axis::ETP || ax == Axis::EDP)) continue;
        setting(qs(kAxisNames[size_t(ax)]), QString::number(da.get(ax)), QString::number(db.get(ax)));
    }
    if (!L->plan.stageLayers.empty() || !R->plan.stageLayers.empty()) {
        // Either plan splits the layers its own way: both splits, first stage first.
        setting(tr("layers per stage"), qs(stageCountsText(int(sL->model.layers), L->plan)),
                qs(stageCountsText(int(sR->model.layers), R->plan)));
    }
    if (!L->plan.layerGroups.empty() || !R->plan.layerGroups.empty()) {
        // Either plan chooses its per-layer operators by runs of layers; the operator rows below are each
        // plan's first group.
        const auto groups = [](const Plan& p) {
            return p.layerGroups.empty() ? tr("none (every layer alike)") : qs(layerGroupsText(p));
        };
        setting(tr("layer groups"), groups(L->plan), groups(R->plan));
    }
    setting(tr("mesh order"), meshText(L->plan), meshText(R->plan));
    setting(tr("speculative decoding"), specSummary(L->plan.spec), specSummary(R->plan.spec));
    for (int i = 0; i < kOpCount; ++i) {
        const Op op = Op(i);
        if (!opRelevant(sL->model, op) && !opRelevant(sR->model, op)) continue;
        setting(opDisplayName(op), choiceName(op, L->plan.choice(op)), choiceName(op, R->plan.choice(op)));
    }

    // What if: each of the right plan's settings taken back to the left's alone, costliest first.
    m_whatIfs = why.whatIf;
    for (const WhatIf& w : m_whatIfs) {
        const int row = m_whatIf->rowCount();
        m_whatIf->insertRow(row);
        QString ratio = !w.valid             ? tr("not valid")
                        : w.metrics.feasible ? QStringLiteral("%1x").arg(w.ratio, 0, 'f', 3)
                                             : tr("does not fit");
        // An operator is named as in the settings above ("qkv (MoE layers)", its choices' names).
        QString field = qs(w.diff.field), vb = qs(w.diff.b), va = qs(w.diff.a);
        for (int i = 0; i < kOpCount; ++i)
            if (opField(Op(i)) == w.diff.field) {
                field = opDisplayName(Op(i));
                vb = choiceName(Op(i), R->plan.choice(Op(i)));
                va = choiceName(Op(i), L->plan.choice(Op(i)));
            }
        QTableWidgetItem* cells[5] = {
            item(field), item(vb), item(va), item(ratio, Qt::AlignRight | Qt::AlignVCenter),
            item(w.valid && w.metrics.feasible ? QString::number(w.metrics.batch) : QString(),
                 Qt::AlignRight | Qt::AlignVCenter)};
        if (w.valid && w.metrics.feasible && std::abs(w.ratio - 1) > 0.005)
            cells[3]->setForeground(w.ratio < 1 ? kWorse : kBetter);
        for (int c = 0; c < 5; ++c) {
            cells[c]->setToolTip(qs(w.summary));
            m_whatIf->setItem(row, c, cells[c]);
        }
    }
    m_whatIf->setVisible(!m_whatIfs.empty());

    QString verdict;
    if (!same) {
        verdict = tr("The plans serve two scenarios, <b>%1</b> and <b>%2</b>: their figures compare as they "
                     "stand (what stops each batch and the what-ifs need one scenario).<br>")
                      .arg(qs(sL->name).toHtmlEscaped(), qs(sR->name).toHtmlEscaped());
    }
    if (a.feasible && b.feasible && a.throughput > 0) {
        const double q = b.throughput / a.throughput;
        verdict += tr("<b>%1</b> reaches <b>%2x</b> the throughput of <b>%3</b>")
                       .arg(qs(R->label).toHtmlEscaped())
                       .arg(q, 0, 'f', 3)
                       .arg(qs(L->label).toHtmlEscaped());
    } else {
        verdict += tr("<b>%1</b> is %2; <b>%3</b> is %4")
                       .arg(qs(L->label).toHtmlEscaped(), a.feasible ? tr("feasible") : tr("infeasible"),
                            qs(R->label).toHtmlEscaped(), b.feasible ? tr("feasible") : tr("infeasible"));
    }
    verdict += m_diff.isEmpty() ? tr("; the two plans are identical.")
                                : tr("; %n setting(s) differ: %1.", "", int(m_diff.size()))
                                      .arg(m_diff.join(QStringLiteral(", ")));
    if (!m_diff.isEmpty() && !m_why.isEmpty()) {
        // The why's first sentence repeats the ratio above; the rest says what decides it.
        QString rest = m_why;
        if (rest.startsWith(qs(why.headline))) rest = rest.mid(qsizetype(qs(why.headline).size())).trimmed();
        if (!rest.isEmpty())
            verdict += QStringLiteral("<br><span style='color:#1f2937'>%1</span>").arg(rest.toHtmlEscaped());
    }
    m_verdict->setText(verdict);
    refreshBars();
}

void ComparisonView::refreshBars() {
    m_chart->removeAllSeries();
    for (QAbstractAxis* ax : m_chart->axes()) {
        m_chart->removeAxis(ax);
        delete ax;
    }
    const PlanRecordPtr L = left(), R = right();
    if (!L || !R) return;
    const bool prefill = m_phase->currentIndex() == 1;
    StepSplit a = stepSplit(L->breakdown(prefill)), b = stepSplit(R->breakdown(prefill));
    // Speculative decoding's draft passes apart from the operators they are counted with.
    auto draftOf = [](const Breakdown& br, StepSplit& split) {
        double ms = 0;
        for (const OpCost& o : br.ops)
            if (o.layer == LayerKind::Draft) {
                (o.memoryBound ? split.memoryMs : split.computeMs) -= o.timeMs;
                ms += o.timeMs;
            }
        return ms;
    };
    const double draftA = draftOf(L->breakdown(prefill), a), draftB = draftOf(R->breakdown(prefill), b);
    struct Cat {
        QString name;
        double va, vb;
        QColor color;
    };
    const Cat cats[] = {
        {tr("compute"), a.computeMs, b.computeMs, QColor(0x3b, 0x82, 0xf6)},
        {tr("memory"), a.memoryMs, b.memoryMs, QColor(0x93, 0xc5, 0xfd)},
        {tr("draft"), draftA, draftB, draftColor()},
        {tr("NVLink"), a.nvlinkMs + a.localMs, b.nvlinkMs + b.localMs, linkColor(LinkClass::NvLink)},
        {tr("network"), a.networkMs, b.networkMs, linkColor(LinkClass::Network)},
        {tr("pipeline"), a.pipelineMs, b.pipelineMs, QColor(0xf5, 0x9e, 0x0b)},
        {tr("bubble"), a.bubbleMs, b.bubbleMs, QColor(0xd1, 0xd5, 0xdb)}};
    auto* series = new QHorizontalStackedBarSeries;
    for (const Cat& c : cats) {
        if (c.va <= 0 && c.vb <= 0) continue;
        auto* set = new QBarSet(c.name);
        // Categories run bottom to top: right plan below, left plan on top.
        *set << c.vb << c.va;
        set->setColor(c.color);
        set->setBorderColor(c.color.darker(115));
        set->setLabelColor(c.color.lightnessF() > 0.6 ? QColor(0x1f, 0x29, 0x37) : Qt::white);
        series->append(set);
        const QString name = c.name, left = qs(L->label), right = qs(R->label);
        const double va = c.va, vb = c.vb, ta = a.total() + draftA, tb = b.total() + draftB;
        connect(set, &QBarSet::hovered, this, [=, this](bool on, int index) {
            if (!on) {
                QToolTip::hideText();
                return;
            }
            const bool isRight = index == 0;
            const double v = isRight ? vb : va, t = isRight ? tb : ta;
            QString tip = tr("<b>%1</b>: %2 %3 (%4% of its step)")
                              .arg((isRight ? right : left).toHtmlEscaped(), formatMs(v), name)
                              .arg(t > 0 ? 100 * v / t : 0, 0, 'f', 1);
            if (va > 0) tip += tr("<br>right / left: %1x").arg(vb / va, 0, 'f', 3);
            m_barTip = tip;
            QToolTip::showText(QCursor::pos(), tip, m_chartView);
        });
    }
    // Numbers on the bars: each part's milliseconds (too narrow a part shows none).
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value"));
    series->setLabelsPrecision(3);
    series->setLabelsPosition(QAbstractBarSeries::LabelsCenter);
    series->setBarWidth(0.55);
    m_chart->addSeries(series);
    auto* cat = new QBarCategoryAxis;
    // Each bar names its plan and the batch it carries (the steps of two batches are not the same work).
    auto catLabel = [](const PlanRecord& r) {
        return tr("%1<br>batch %2")
            .arg(qs(r.label).section(QStringLiteral(" ("), 0, 0).toHtmlEscaped())
            .arg(r.metrics().batch);
    };
    QString right = catLabel(*R), left = catLabel(*L);
    if (right == left) right += tr(" (right)"); // the axis needs two names
    cat->append({right, left});
    auto* val = new QValueAxis;
    // The phase's long description ("serving step (253 decode + ...)") is the chart's tooltip.
    val->setTitleText(tr("ms per step (slowest stage)"));
    m_chartView->setToolTip(qs(L->breakdown(prefill).phase));
    val->setMin(0);
    val->setMax(std::max({a.total() + draftA, b.total() + draftB, 1e-6}) * 1.05);
    val->applyNiceNumbers();
    m_chart->addAxis(cat, Qt::AlignLeft);
    m_chart->addAxis(val, Qt::AlignBottom);
    series->attachAxis(cat);
    series->attachAxis(val);
    m_chart->setTitle(tr("Where the step time goes"));
    const bool decode = L->hasDecode() && R->hasDecode(), pre = L->hasPrefill() && R->hasPrefill();
    m_phase->setEnabled(decode && pre);
}

} // namespace sp::views
