#include "views/comparison.h"

#include "core/io/formats.h"
#include "views/format.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>

#include <algorithm>

namespace sp::views {

namespace {
QTableWidget* makeTable(QWidget* parent, const QStringList& headers) {
    auto* t = new QTableWidget(0, int(headers.size()), parent);
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->hide();
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionMode(QAbstractItemView::NoSelection);
    t->setFocusPolicy(Qt::NoFocus);
    t->setAlternatingRowColors(true);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    // A long plan name in a header is cut at its end (not at both ends, centred), and is whole in the
    // tooltip.
    t->horizontalHeader()->setTextElideMode(Qt::ElideRight);
    t->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    // The first column names the rows: as wide as its longest name, never cut.
    t->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    // A cell too long for its column wraps onto more lines, its row taller; nothing is shortened to "...".
    t->setTextElideMode(Qt::ElideNone);
    t->setWordWrap(true);
    t->verticalHeader()->setMinimumSectionSize(t->fontMetrics().height() + 8);
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 8);
    t->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    return t;
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

    // Two rows, so the view fits a laptop's tab area (a 1280x720 screen) without scrolling sideways: the
    // plans, then the options.
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(8, 6, 8, 0);
    bar->addWidget(m_left);
    bar->addWidget(swap);
    bar->addWidget(m_right);
    bar->addStretch(1);
    auto* options = new QHBoxLayout;
    options->setContentsMargins(8, 0, 8, 0);
    options->addWidget(m_onlyDiff);
    options->addSpacing(16);
    options->addWidget(other);
    options->addStretch(1);
    options->addWidget(new QLabel(tr("Bars:"), this));
    options->addWidget(m_phase);

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
    // The metric names and the ratios are whole (their columns fit them); the two plans' values share the
    // rest, and a long one ("memory (a KV pool of 52.1 GiB per GPU)") wraps.
    m_metrics->horizontalHeader()->setSectionResizeMode(3, QHeaderView::ResizeToContents);
    connect(m_metrics->horizontalHeader(), &QHeaderView::sectionResized, this,
            [this] { QTimer::singleShot(0, this, &ComparisonView::fitMetricsHeight); });
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
    m_split = new QSplitter(Qt::Horizontal, this);
    m_split->addWidget(tables);
    m_split->addWidget(m_chartView);
    m_split->setStretchFactor(0, 1);
    m_split->setStretchFactor(1, 1);
    m_split->setSizes({600, 500}); // the bars' labels and legend need room
    m_split->setChildrenCollapsible(false);

    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(4);
    lay->addLayout(bar);
    lay->addLayout(options);
    lay->addWidget(m_verdict);
    lay->addWidget(m_split, 1);

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

void ComparisonView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    arrange();
}

void ComparisonView::arrange() {
    // Beside each other when the tables get their names, ratios and two values of some width besides the
    // bars' minimum; below each other otherwise (the tab scrolls down rather than cut a table short).
    const QHeaderView* h = m_metrics->horizontalHeader(); // names and ratios: sized to their contents
    const int tables = h->sectionSize(0) + h->sectionSize(3) + 2 * 16 * fontMetrics().averageCharWidth() +
                       2 * m_metrics->frameWidth() + 8;
    const bool wide = width() >= tables + m_chartView->minimumWidth() + m_split->handleWidth() + 16;
    const Qt::Orientation want = wide ? Qt::Horizontal : Qt::Vertical;
    if (m_split->orientation() != want) {
        m_split->setOrientation(want);
        fitMetricsHeight();
    }
    // Stacked, the tab scrolls: the bars keep a readable height, and the settings and what-if tables show
    // their rows (up to a dozen) rather than a sliver with a scroll bar of its own.
    m_chartView->setMinimumHeight(wide ? 0 : 300);
    for (QTableWidget* t : {m_settings, m_whatIf}) {
        int h = t->horizontalHeader()->height() + 2 * t->frameWidth();
        for (int r = 0; r < t->rowCount() && r < 12; ++r) h += t->rowHeight(r);
        t->setMinimumHeight(wide ? 0 : h);
    }
}

void ComparisonView::fitMetricsHeight() {
    m_metrics->resizeRowsToContents();
    int h = m_metrics->horizontalHeader()->height() + 2 * m_metrics->frameWidth();
    for (int r = 0; r < m_metrics->rowCount(); ++r) h += m_metrics->rowHeight(r);
    if (m_metrics->height() != h) m_metrics->setFixedHeight(h);
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

} // namespace sp::views
