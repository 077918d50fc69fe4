#include "views/servingview.h"

#include "views/format.h"
#include "views/servingsizing.h"
#include "views/servingsweep.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace sp::views {

namespace {
/// A label with nothing to say takes no room.
void setShownText(QLabel* l, const QString& text) {
    l->setText(text);
    l->setVisible(!text.isEmpty());
}

QLabel* wrapping() {
    auto* l = new QLabel;
    l->setTextFormat(Qt::PlainText);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}
} // namespace

ServingView::ServingView(QWidget* parent) : QWidget(parent) {
    m_plan = new QComboBox;
    m_plan->addItem(tr("the best found"), int(ServedPlan::Best));
    m_plan->addItem(tr("the selected plan"), int(ServedPlan::Selected));
    m_plan->addItem(tr("Megatron"), int(ServedPlan::Megatron));
    m_plan->addItem(tr("the Pareto point selected"), int(ServedPlan::ParetoSplit));
    m_plan->setToolTip(
        tr("The plan to simulate: the best feasible plan the search has found so far (Megatron's "
           "until it finds one), the plan selected in the elite table (or opened), the "
           "Megatron recipe, or the disaggregated point selected on the Pareto tab"));
    setParetoSplitChoice(tr("Select a disaggregated point (a triangle) on the Pareto tab"));
    connect(m_plan, &QComboBox::currentIndexChanged, this, &ServingView::servedPlanChanged);
    connect(m_plan, &QComboBox::activated, this, &ServingView::servedPlanChosen);
    m_planName = wrapping();

    m_byRate = new QRadioButton(tr("Rate"));
    m_byRate->setToolTip(tr("Poisson arrivals at this many requests per second"));
    m_byTrace = new QRadioButton(tr("Trace"));
    m_byTrace->setToolTip(tr("Replay a CSV or JSON Lines trace (arrival, input and output tokens; the Azure "
                             "LLM inference layout reads as it is)"));
    auto* source = new QButtonGroup(this);
    source->addButton(m_byRate);
    source->addButton(m_byTrace);
    m_byRate->setChecked(true);
    m_rate = new QDoubleSpinBox;
    m_rate->setRange(0.001, 1e6);
    m_rate->setDecimals(3);
    m_rate->setValue(1.0);
    m_rate->setSuffix(tr(" requests/s"));
    m_trace = new QLineEdit;
    m_trace->setPlaceholderText(tr("trace file"));
    m_trace->setMinimumWidth(80);
    m_traceButton = new QPushButton(tr("Trace..."));
    connect(m_traceButton, &QPushButton::clicked, this, &ServingView::traceRequested);
    m_requests = new QSpinBox;
    m_requests->setRange(1, 10'000'000);
    m_requests->setSingleStep(1000);
    m_requests->setValue(1000);
    m_requests->setGroupSeparatorShown(true);
    m_requests->setToolTip(tr("Requests to simulate (with a trace: its first N). Capacity and Find GPUs "
                              "simulate at least these, and more where 20 request latencies at the rate "
                              "take more: a run starts empty"));
    m_run = new QPushButton(tr("Run"));
    m_run->setToolTip(tr("Simulate the plan served, serving the requests step by step"));
    m_capacity = new QPushButton(tr("Capacity"));
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setToolTip(tr("Stop the simulation, the capacity bisection or the GPU sizing, keeping what "
                          "completed (Esc)"));
    m_stop->setEnabled(false);
    m_pinButton = new QPushButton(tr("Pin"));
    m_pinButton->setToolTip(tr("Keep the run and the rate sweep shown, to draw the next ones (another plan, "
                               "rate or GPU type) over them and compare their figures"));
    m_unpinButton = new QPushButton(tr("Clear pin"));
    m_unpinButton->setToolTip(tr("Drop the pinned run and sweep from the charts"));
    connect(m_pinButton, &QPushButton::clicked, this, [this] {
        if (pin()) emit pinChanged();
    });
    connect(m_unpinButton, &QPushButton::clicked, this, [this] {
        clearPin();
        emit pinChanged();
    });
    connect(m_run, &QPushButton::clicked, this, &ServingView::runRequested);
    connect(m_capacity, &QPushButton::clicked, this, &ServingView::capacityRequested);
    connect(m_stop, &QPushButton::clicked, this, &ServingView::stopRequested);
    connect(m_byRate, &QRadioButton::toggled, this, [this] { updateSourceControls(); });
    m_progress = new QProgressBar;
    m_progress->setMaximumWidth(160);
    m_progress->setVisible(false);
    m_status = wrapping();

    // Three short rows rather than one long one: at 1280x720 the tab is about 710 px wide.
    auto* planRow = new QHBoxLayout;
    planRow->addWidget(new QLabel(tr("Serve")));
    planRow->addWidget(m_plan);
    planRow->addWidget(m_planName, 1);
    auto* sourceRow = new QHBoxLayout;
    sourceRow->addWidget(m_byRate);
    sourceRow->addWidget(m_rate);
    sourceRow->addWidget(m_byTrace);
    sourceRow->addWidget(m_trace, 1);
    sourceRow->addWidget(m_traceButton);
    auto* runRow = new QHBoxLayout;
    runRow->addWidget(new QLabel(tr("Requests")));
    runRow->addWidget(m_requests);
    runRow->addWidget(m_run);
    runRow->addWidget(m_capacity);
    runRow->addWidget(m_stop);
    runRow->addWidget(m_pinButton);
    runRow->addWidget(m_unpinButton);
    runRow->addWidget(m_progress);
    runRow->addStretch(1);
    auto* controls = new QVBoxLayout;
    controls->setContentsMargins(6, 4, 6, 0);
    controls->setSpacing(4);
    controls->addLayout(planRow);
    controls->addLayout(sourceRow);
    controls->addLayout(runRow);
    controls->addWidget(m_status);

    m_summary = new QLabel;
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setFont(QFont(QStringLiteral("monospace")));
    m_summary->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_capacityLabel = wrapping();
    m_capacityLabel->setAlignment(Qt::AlignLeft | Qt::AlignTop);

    m_simulationPage = new QWidget;
    auto* texts = new QHBoxLayout;
    texts->setContentsMargins(6, 0, 6, 0);
    texts->addWidget(m_summary);
    texts->addWidget(m_capacityLabel, 1);
    auto* simulation = new QVBoxLayout(m_simulationPage);
    simulation->setContentsMargins(0, 4, 0, 0);
    simulation->addLayout(texts);
    m_runCompare = new ServingCompareTable;
    m_runCompare->setVisible(false);
    auto* compare = new QHBoxLayout;
    compare->setContentsMargins(6, 0, 6, 0);
    compare->addWidget(m_runCompare);
    simulation->addLayout(compare);
    simulation->addWidget(buildCharts(), 1);
    setShownText(m_summary, QString());
    setShownText(m_capacityLabel, QString());

    m_sizing = new ServingSizingView;
    connect(m_sizing, &ServingSizingView::sizeRequested, this, &ServingView::sizeRequested);
    m_pages = new QTabWidget;
    m_pages->setDocumentMode(true);
    m_sweep = new ServingSweepView;
    connect(m_sweep, &ServingSweepView::sweepRequested, this, &ServingView::sweepRequested);
    m_pages->addTab(m_simulationPage, tr("Simulation"));
    m_pages->addTab(m_sweep, tr("Rate sweep"));
    m_pages->setTabToolTip(1, tr("p50 and p99 TTFT and TPOT against the rate, and the highest rate of the "
                                 "sweep that meets the SLOs"));
    m_pages->addTab(m_sizing, tr("GPUs for a rate"));
    m_pages->setTabToolTip(2,
                           tr("The fewest GPUs of each type that serve a request rate under the SLOs, with "
                              "what they cost (shardplan capacity --rate R --gpus LIST)"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 4);
    layout->addLayout(controls);
    layout->addWidget(m_pages, 1);
    setCapacityUnavailable(QString());
    updatePin();
}

ServingView::~ServingView() = default;

ServedPlan ServingView::servedPlan() const {
    return ServedPlan(m_plan->currentData().toInt());
}
void ServingView::setServedPlan(ServedPlan p) {
    m_plan->setCurrentIndex(std::max(0, m_plan->findData(int(p))));
}
void ServingView::setPlanName(const QString& text) {
    m_planName->setText(text);
}
QString ServingView::planName() const {
    return m_planName->text();
}

void ServingView::setParetoSplitChoice(const QString& unavailable) {
    auto* model = qobject_cast<QStandardItemModel*>(m_plan->model());
    QStandardItem* item = model ? model->item(m_plan->findData(int(ServedPlan::ParetoSplit))) : nullptr;
    if (!item) return;
    item->setEnabled(unavailable.isEmpty());
    item->setToolTip(unavailable.isEmpty()
                         ? tr("The prefill/decode split selected on the Pareto tab: a prefill pool, the KV "
                              "transfer and a decode pool, simulated together")
                         : tr("Not available: %1").arg(unavailable));
}

QString ServingView::paretoSplitChoiceUnavailable() const {
    const int i = m_plan->findData(int(ServedPlan::ParetoSplit));
    const auto* model = qobject_cast<const QStandardItemModel*>(m_plan->model());
    if (!model || !model->item(i) || model->item(i)->isEnabled()) return QString();
    return model->item(i)->toolTip();
}

void ServingView::setCapacityUnavailable(const QString& why) {
    m_capacityUnavailable = why;
    m_capacity->setToolTip(
        why.isEmpty() ? tr("The highest rate the plan served sustains under the workload's SLOs (bisection "
                           "on simulations), its tokens/s and what they cost")
                      : tr("Not available: %1").arg(why));
    updateSourceControls();
}

void ServingView::updateSourceControls() {
    const bool trace = m_byTrace->isChecked();
    m_rate->setEnabled(!trace && !m_running);
    m_trace->setEnabled(trace && !m_running);
    m_traceButton->setEnabled(trace && !m_running);
    // Capacity bisects the rate: it draws its own arrivals.
    m_capacity->setEnabled(!trace && !m_running && m_capacityUnavailable.isEmpty());
}

double ServingView::rate() const {
    return m_rate->value();
}
void ServingView::setRate(double r) {
    m_rate->setValue(r);
}
qint64 ServingView::requests() const {
    return m_requests->value();
}
void ServingView::setRequests(qint64 n) {
    m_requests->setValue(int(std::clamp<qint64>(n, 1, m_requests->maximum())));
}
bool ServingView::useTrace() const {
    return m_byTrace->isChecked();
}
void ServingView::setUseTrace(bool on) {
    (on ? m_byTrace : m_byRate)->setChecked(true);
}
QString ServingView::tracePath() const {
    return m_trace->text();
}
void ServingView::setTracePath(const QString& path) {
    m_trace->setText(path);
    if (!path.isEmpty()) setUseTrace(true);
}

void ServingView::setRunning(bool running) {
    m_running = running;
    m_run->setEnabled(!running);
    m_stop->setEnabled(running);
    m_requests->setEnabled(!running);
    m_byRate->setEnabled(!running);
    m_byTrace->setEnabled(!running);
    m_plan->setEnabled(!running);
    m_sizing->setRunning(running);
    m_sweep->setRunning(running);
    m_progress->setVisible(running);
    if (running) {
        m_progress->setRange(0, 0);
        m_progress->setValue(0);
    }
    updateSourceControls();
    updatePin();
}

void ServingView::setProgress(qint64 completed, qint64 total) {
    if (total <= 0) {
        m_progress->setRange(0, 0);
        return;
    }
    m_progress->setRange(0, 1000);
    m_progress->setValue(int(1000.0 * double(std::min(completed, total)) / double(total)));
}

void ServingView::setStatus(const QString& text) {
    setShownText(m_status, text);
}

QString ServingView::status() const {
    return m_status->text();
}

QString ServingView::summaryText() const {
    return m_summary->text();
}

QString ServingView::capacityText() const {
    return m_capacityLabel->text();
}

void ServingView::showPage(Page page) {
    m_pages->setCurrentWidget(page == Page::Sizing  ? static_cast<QWidget*>(m_sizing)
                              : page == Page::Sweep ? static_cast<QWidget*>(m_sweep)
                                                    : m_simulationPage);
}

ServingView::Page ServingView::page() const {
    QWidget* w = m_pages->currentWidget();
    return w == m_sizing ? Page::Sizing : w == m_sweep ? Page::Sweep : Page::Simulation;
}

bool ServingView::pin() {
    ServingPin p;
    if (m_result) p.run = ShownRun{m_result, m_resultWorkload, m_resultTag};
    if (m_sweep->sweep() && !m_sweep->sweep()->sweep.points.empty()) p.sweep = m_sweep->sweep();
    if (p.empty()) return false;
    setPin(std::move(p));
    return true;
}

void ServingView::clearPin() {
    setPin({});
}

void ServingView::setPin(ServingPin pin) {
    m_pin = std::move(pin);
    m_sweep->setPinned(m_pin.sweep);
    drawCdfs();
    updatePin();
}

QString ServingView::runCompareText() const {
    return m_pin.run ? m_runCompare->text() : QString();
}

void ServingView::updatePin() {
    m_pinButton->setEnabled(!m_running &&
                            (m_result || (m_sweep->sweep() && !m_sweep->sweep()->sweep.points.empty())));
    m_unpinButton->setEnabled(!m_running && !m_pin.empty());
    if (m_pin.run) {
        const ShownRun current{m_result, m_resultWorkload, m_resultTag};
        m_runCompare->showRuns(*m_pin.run, m_result ? &current : nullptr);
    }
    m_runCompare->setVisible(m_pin.run.has_value());
}

void ServingView::setResult(std::shared_ptr<const SimResult> r, const Workload& w, const RunTag& tag) {
    m_result = std::move(r);
    if (!m_result) {
        m_resultWorkload = {};
        m_resultTag = {};
        clearCharts();
        drawCdfs(); // the pinned run, if any
        setShownText(m_summary, QString());
        updatePin();
        return;
    }
    m_resultWorkload = w;
    m_resultTag = tag;
    const QString& planName = tag.plan;
    const SimResult& s = *m_result;
    drawRun(s);
    updatePin();

    const SloCheck c = checkSlo(s, w);
    const auto row = [](const QString& name, const Percentiles& p) {
        return QStringLiteral("%1 %2 %3 %4 %5\n")
            .arg(name, -8)
            .arg(p.mean, 9, 'f', 1)
            .arg(p.p50, 9, 'f', 1)
            .arg(p.p90, 9, 'f', 1)
            .arg(p.p99, 9, 'f', 1);
    };
    QString text = QStringLiteral("%1 %2 %3 %4 %5\n")
                       .arg(QString(), -8)
                       .arg(tr("mean"), 9)
                       .arg(QStringLiteral("p50"), 9)
                       .arg(QStringLiteral("p90"), 9)
                       .arg(QStringLiteral("p99"), 9);
    text += row(tr("TTFT ms"), s.ttftMs) + row(tr("TPOT ms"), s.tpotMs) + row(tr("E2E ms"), s.e2eMs);
    text += tr("%1 requests/s, %2 output").arg(s.requestsPerS, 0, 'f', 2).arg(formatRate(s.outputTokensPerS));
    if (w.ttftMs > 0 || w.tpotMs > 0)
        text += tr("\nSLOs at %1 %2; goodput %3 requests/s (%4%)")
                    .arg(sloPercentileName(w.sloPercentile), c.met ? tr("met") : tr("missed"))
                    .arg(s.goodputRequestsPerS, 0, 'f', 2)
                    .arg(100.0 * s.sloAttainment, 0, 'f', 1);
    setShownText(m_summary, text);
    setStatus(tr("%1%2: %3 of %4 requests in %5 simulated, %6 steps%7")
                  .arg(planName.isEmpty() ? QString() : planName + QStringLiteral("; "), qs(s.plan))
                  .arg(formatInteger(double(s.completed)), formatInteger(double(s.requests)),
                       formatDuration(s.durationS), formatInteger(double(s.steps)),
                       s.stopped ? tr(" (stopped)") : QString()));
}

void ServingView::setCapacity(const MaxRateRow& row, qint64 requestsGiven, const Workload& w,
                              const QString& gpus) {
    setCapacity(views::capacityAnswer(row, requestsGiven), w);
    if (row.rate.at && !row.stopped) {
        setResult(row.rate.at, w, RunTag{qs(row.planName), rateText(row.rate.rate), gpus});
        setRate(row.rate.rate);
    }
}

void ServingView::setCapacity(const CapacityAnswer& a, const Workload& w) {
    const MaxRateRow& r = a.row;
    const MaxRate& m = r.rate;
    const QString slo = sloPercentileName(w.sloPercentile);
    // A session saved before answers named their plan has none.
    const QString of = r.planName.empty() ? tr("Capacity") : tr("Capacity of %1").arg(qs(r.planName));
    QString text;
    if (r.stopped) {
        text = tr("%1: stopped after %2 simulations, before the bisection ended: no answer.")
                   .arg(of)
                   .arg(m.simulations);
    } else if (!r.error.empty()) {
        text = tr("%1: %2").arg(of, qs(r.error));
    } else if (m.rate <= 0) {
        text = tr("%1: not even one request at a time meets the %2 SLOs: %3").arg(of, slo, qs(m.why));
    } else {
        text = tr("%1 on %2 GPUs: %3 requests/s under the %4 SLOs, %5 output tokens/s")
                   .arg(of)
                   .arg(r.gpus)
                   .arg(m.rate, 0, 'g', 4)
                   .arg(slo, formatInteger(r.outputTokensPerS));
        QStringList cost;
        if (r.cost.priced)
            cost << tr("$%1/hour").arg(formatGrouped(r.cost.usdPerHour, 2))
                 << tr("$%1/M tokens").arg(formatGrouped(r.cost.usdPerMillionTokens, 3));
        if (r.cost.powered) cost << tr("%1 tokens/s/MW").arg(formatInteger(r.cost.tokensPerSPerMegawatt));
        text += cost.isEmpty() ? tr(" (no price or power known).")
                               : QStringLiteral("; ") + cost.join(", ") + u'.';
        text += u' ' + tr("At %1 requests/s it misses them: %2.").arg(m.rateAbove, 0, 'g', 4).arg(qs(m.why));
    }
    // Why the runs hold more requests than the box says: they start empty, and a few request latencies pass
    // before their concurrency settles (RateSearchOptions::steadyLatencies).
    if (!r.stopped && r.error.empty() && a.requestsGiven > 0)
        text += u' ' + tr("%1 simulations, each of at least the %2 requests given, and more where 20 request "
                          "latencies at its rate take more%3.")
                           .arg(m.simulations)
                           .arg(formatInteger(double(a.requestsGiven)))
                           .arg(a.requestsAtRate > 0 ? tr(": %1 requests at %2 requests/s")
                                                           .arg(formatInteger(double(a.requestsAtRate)))
                                                           .arg(m.rate, 0, 'g', 4)
                                                     : QString());
    else if (!r.stopped && r.error.empty())
        text += u' ' + tr("%1 simulations.").arg(m.simulations);
    setShownText(m_capacityLabel, text);
    // A sweep around the answer: to a quarter above it, so its last rates show what misses.
    if (!r.stopped && r.error.empty() && m.rate > 0) m_sweep->suggestTop(1.25 * m.rate);
    m_capacityAnswer = a;
    m_capacityWorkload = w;
}

void ServingView::clear() {
    m_result.reset();
    m_resultWorkload = {};
    m_resultTag = {};
    m_capacityAnswer.reset();
    m_capacityWorkload = {};
    m_pin = {};
    m_sweep->clear();
    clearCharts();
    updatePin();
    setShownText(m_summary, QString());
    setShownText(m_capacityLabel, QString());
    m_sizing->clear();
    setStatus(QString());
}

} // namespace sp::views
