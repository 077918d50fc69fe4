#include "views/calibrationview.h"

#include "views/background.h"
#include "views/format.h"
#include "views/messagebanner.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QCursor>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QLineSeries>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace sp::views {

namespace {
const QColor kBefore(0x9c, 0xa3, 0xaf); // grey: the model as it is
const QColor kAfter(0x25, 0x63, 0xeb);  // blue: with the fitted factors

QString percent(double fraction) {
    return QString::asprintf("%+.1f%%", 100 * fraction);
}

/// A measured or predicted value in the unit of its metric.
QString metricValue(const std::string& metric, double v) {
    if (metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_ms") == 0) return formatMs(v);
    return formatRate(v);
}

QString metricName(const std::string& metric) {
    if (metric == "output_tokens_per_s") return QObject::tr("output tok/s");
    if (metric == "input_tokens_per_s") return QObject::tr("input tok/s");
    if (metric == "total_tokens_per_s") return QObject::tr("total tok/s");
    if (metric == "ttft_ms") return QObject::tr("TTFT");
    if (metric == "tpot_ms") return QObject::tr("TPOT");
    return qs(metric);
}

/// An error cell: its text, its value for sorting, and a colour that grows with its size.
QStandardItem* errorItem(double e) {
    auto* it = new QStandardItem(percent(e));
    it->setData(e, CalibrationView::ValueRole);
    it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    const double a = std::fabs(e);
    if (a >= 0.35)
        it->setForeground(QColor(0xb9, 0x1c, 0x1c));
    else if (a >= 0.15)
        it->setForeground(QColor(0xb4, 0x53, 0x09));
    return it;
}

QStandardItem* numberItem(const QString& text, double v) {
    auto* it = new QStandardItem(text);
    it->setData(v, CalibrationView::ValueRole);
    it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return it;
}

QScatterSeries* dots(const QString& name, const QColor& color, QScatterSeries::MarkerShape shape) {
    auto* s = new QScatterSeries;
    s->setName(name);
    s->setMarkerShape(shape);
    s->setMarkerSize(10);
    s->setColor(color);
    s->setBorderColor(color.darker(140));
    return s;
}
} // namespace

CalibrationView::CalibrationView(const QString& samplesDir, QWidget* parent)
    : QWidget(parent), m_samplesDir(samplesDir) {
    m_banner = new MessageBanner;
    m_banner->hide();

    m_source = new QLabel;
    m_source->setTextFormat(Qt::PlainText);
    m_source->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_openButton = new QPushButton(tr("Open..."));
    m_openButton->setToolTip(
        tr("Measurements in the project's format (YAML), or the JSON that "
           "`vllm bench serve --save-result` writes (run with the current scenario and plan)"));
    connect(m_openButton, &QPushButton::clicked, this, &CalibrationView::openDialog);
    m_fitButton = new QPushButton(tr("Fit"));
    m_fitButton->setToolTip(tr("Fit the efficiency factors to these runs (least squares on log(predicted / "
                               "measured)), starting from the scenario's cluster; seconds to minutes"));
    m_fitButton->setEnabled(false);
    connect(m_fitButton, &QPushButton::clicked, this, [this] { m_fitting ? stopFit() : fit(); });
    m_useButton = new QPushButton(tr("Use the fitted cluster"));
    m_useButton->setToolTip(
        tr("Replace the scenario's cluster efficiency with the fitted factors (undo: Ctrl+Z)"));
    m_useButton->setEnabled(false);
    connect(m_useButton, &QPushButton::clicked, this, [this] {
        if (m_fit) emit useFittedRequested(m_fit->efficiency);
    });
    m_busy = new QProgressBar;
    m_busy->setRange(0, 0); // indeterminate until the full fit is done, then fits done of 1 + cases + sources
    m_busy->setMinimumWidth(130);
    m_busy->setMaximumWidth(160);
    m_busy->setFormat(tr("%v of %m fits"));
    m_busy->setToolTip(tr("The fit on all runs, then one fit per left-out run (the leave-one-out error) and "
                          "one per left-out source"));
    m_busy->hide();

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 0);
    bar->addWidget(m_source, 1);
    bar->addWidget(m_busy);
    bar->addWidget(m_openButton);
    bar->addWidget(m_fitButton);
    bar->addWidget(m_useButton);

    m_summary = new QLabel;
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setContentsMargins(6, 0, 6, 0);
    m_factors = new QLabel;
    m_factors->setTextFormat(Qt::RichText);
    m_factors->setWordWrap(true);
    m_factors->setContentsMargins(6, 0, 6, 4);
    m_factors->setStyleSheet(QStringLiteral("color: #374151;"));

    m_model = new QStandardItemModel(0, ColumnCount, this);
    m_model->setHorizontalHeaderLabels({tr("Measurement"), tr("Metric"), tr("Measured"), tr("Model"),
                                        tr("Error"), tr("Fitted error"), tr("Leave-one-out"),
                                        tr("Source held out")});
    const char* tips[] = {
        "The run's id in the measurement file",
        "What was measured",
        "The measured value",
        "The cost model's prediction with the scenario's factors",
        "Model / measured - 1",
        "The error with the fitted factors",
        "The error when fitted on every other run (how well the fit generalises)",
        "The error when fitted on the other sources' runs only (how well the fit carries to "
        "a source it has not seen)"};
    for (int c = 0; c < ColumnCount; ++c) m_model->horizontalHeaderItem(c)->setToolTip(tr(tips[c]));
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(ValueRole);
    m_table = new QTableView;
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(Id, Qt::AscendingOrder); // file order: the row numbers are the plot's x
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_table->horizontalHeader()->setHighlightSections(false);
    m_table->horizontalHeader()->setSectionResizeMode(Id, QHeaderView::Stretch);

    m_chart = new QChart;
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setBackgroundRoundness(0);
    m_chart->setMargins(QMargins(6, 6, 12, 6));
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_view = new QChartView(m_chart);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumHeight(260);
    m_view->setToolTip(tr("Model / measured - 1 per measurement (row number of the file), before and after "
                          "the fit; hover a point for its run"));
    m_x = new QValueAxis;
    m_x->setLabelFormat(QStringLiteral("%d"));
    m_x->setTitleText(tr("Measurement"));
    m_y = new QValueAxis;
    m_y->setLabelFormat(QStringLiteral("%.0f"));
    m_y->setTitleText(tr("Error (%)"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    m_zero = new QLineSeries;
    QPen zeroPen(QColor(0x4b, 0x55, 0x63));
    zeroPen.setStyle(Qt::DashLine);
    zeroPen.setWidthF(1.2);
    m_zero->setPen(zeroPen);
    m_zero->setName(tr("Exact"));
    m_before = dots(tr("Before the fit"), kBefore, QScatterSeries::MarkerShapeCircle);
    m_after = dots(tr("Fitted"), kAfter, QScatterSeries::MarkerShapeRectangle);
    for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_zero), static_cast<QAbstractSeries*>(m_before),
                               static_cast<QAbstractSeries*>(m_after)}) {
        m_chart->addSeries(s);
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    // Hovering a point names its run (x is the 1-based row of the file).
    for (QScatterSeries* s : {m_before, m_after})
        connect(s, &QScatterSeries::hovered, this, [this](const QPointF& at, bool state) {
            const int i = int(std::lround(at.x())) - 1;
            if (!state || i < 0 || i >= int(m_report.rows.size())) {
                QToolTip::hideText();
                return;
            }
            const CalibrationRow& r = m_report.rows[size_t(i)];
            QString text = tr("%1\n%2: measured %3, model %4 (%5)")
                               .arg(qs(r.id), metricName(r.metric), metricValue(r.metric, r.measured),
                                    metricValue(r.metric, r.predicted), percent(r.error));
            if (m_fit && size_t(i) < m_fit->after.rows.size())
                text += tr("\nfitted %1 (%2)")
                            .arg(metricValue(r.metric, m_fit->after.rows[size_t(i)].predicted),
                                 percent(m_fit->after.rows[size_t(i)].error));
            QToolTip::showText(QCursor::pos(), text, m_view);
        });

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_table);
    split->addWidget(m_view);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);

    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(4);
    lay->addLayout(bar);
    lay->addWidget(m_banner);
    lay->addWidget(m_summary);
    lay->addWidget(split, 1);
    lay->addWidget(m_factors);
    redrawPlot();
}

// A running fit is not waited for: its watcher goes with the view, and the worker owns its inputs.
CalibrationView::~CalibrationView() {
    stopFit(); // its result would be dropped: no use in finishing it
}

QWidget* CalibrationView::plotWidget() const {
    return m_view;
}

int CalibrationView::plottedPoints(bool after) const {
    return int((after ? m_after : m_before)->count());
}

bool CalibrationView::loadFile(const QString& path) {
    const std::string p = QDir::toNativeSeparators(path).toStdString();
    Result<CalibrationSet> set = sp::Error{};
    if (path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive)) {
        const std::optional<Base> base = m_baseSource ? m_baseSource() : std::nullopt;
        if (!base) {
            showError(tr("%1: a `vllm bench` result needs a valid scenario and plan (the run's model, "
                         "cluster and layout); fix the scenario first")
                          .arg(QFileInfo(path).fileName()));
            return false;
        }
        set = loadVllmBenchResult(p, base->scenario, base->plan);
    } else {
        set = loadCalibrationSet(p, m_samplesDir.toStdString());
    }
    if (!set) {
        showError(tr("Measurements not read (the previous ones are kept): %1")
                      .arg(qs(set.error().str()).toHtmlEscaped()));
        return false;
    }
    setCalibrationSet(set.value(), QDir::toNativeSeparators(path));
    emit loaded();
    return true;
}

void CalibrationView::setCalibrationSet(const CalibrationSet& set, const QString& origin) {
    if (m_fitting) { // a fit of the previous cases: stop it and drop its result
        stopFit();
        ++m_run;
        delete m_watcher;
        m_watcher = nullptr;
        setFitting(false);
    }
    m_set = set;
    m_origin = origin;
    m_report = calibrationReport(m_set);
    m_fit.reset();
    m_source->setText(tr("%1 measurements from %2").arg(m_set.cases.size()).arg(origin));
    m_source->setToolTip(origin);
    if (!m_set.skipped.empty()) {
        // The count and the first reason inline; every reason in the tooltip (a long file skips many).
        QStringList why;
        for (const std::string& s : m_set.skipped) why << qs(s);
        m_banner->showMessage(
            MessageBanner::Kind::Info,
            tr("%n measurement(s) skipped, the model cannot predict them (%1%2)", nullptr, int(why.size()))
                .arg(why.front().toHtmlEscaped(), why.size() > 1 ? tr("; ...") : QString()));
        m_banner->setToolTip(why.join(QLatin1Char('\n')));
    } else {
        m_banner->hide();
        m_banner->setToolTip(QString());
    }
    setFitting(false);
    fillTable();
    redrawPlot();
    showSummary();
}

void CalibrationView::fit() {
    if (m_fitting || m_set.cases.size() < 2) return;
    const std::optional<Base> base = m_baseSource ? m_baseSource() : std::nullopt;
    const Efficiency start =
        base ? base->scenario.cluster.efficiency : m_set.cases.front().scenario.cluster.efficiency;
    const quint64 run = ++m_run;
    delete m_watcher;
    m_watcher = new QFutureWatcher<FitOutcome>(this);
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this, run] { fitDone(run); });
    // The worker gets copies (and shares the stop flag): it may outlive the view. Progress comes back as
    // queued calls, dropped when the view is gone or the fit superseded.
    m_stop = std::make_shared<std::atomic<bool>>(false);
    m_busy->setRange(0, 0);
    QPointer<CalibrationView> self(this);
    FitControl control;
    control.progress = [self, run](int done, int total) {
        QMetaObject::invokeMethod(
            qApp,
            [self, run, done, total] {
                if (self && self->m_run == run)
                    self->m_busy->setRange(0, total), self->m_busy->setValue(done);
            },
            Qt::QueuedConnection);
    };
    m_watcher->setFuture(QtConcurrent::run([set = m_set, start, stop = m_stop, control]() -> FitOutcome {
        lowerThreadPriority();
        try {
            FitControl c = control;
            c.stop = stop.get();
            auto f = fitEfficiency(set, start, true, c);
            if (!f && f.error().message == kFitStopped) return {nullptr, {}, true};
            if (!f) return {nullptr, QString::fromStdString(f.error().str())};
            return {std::make_shared<const FitResult>(std::move(f.value())), {}};
        } catch (const std::exception& e) {
            return {nullptr, QString::fromUtf8(e.what())};
        }
    }));
    setFitting(true);
}

void CalibrationView::stopFit() {
    if (m_fitting && m_stop) m_stop->store(true);
}

void CalibrationView::fitDone(quint64 run) {
    if (run != m_run || !m_watcher) return;
    const FitOutcome o = m_watcher->result();
    if (!o.stopped) m_fit = o.result; // before setFitting, which enables "Use the fitted cluster"
    setFitting(false);
    if (o.stopped) {
        m_banner->setToolTip(QString());
        m_banner->showMessage(MessageBanner::Kind::Info,
                              m_fit ? tr("Fit stopped; the table shows the previous fit.")
                                    : tr("Fit stopped; nothing was changed."));
        emit fitStopped();
        return;
    }
    if (!o.result) {
        showError(tr("Fit failed: %1").arg(o.error.toHtmlEscaped()));
        return;
    }
    fillTable();
    redrawPlot();
    showSummary();
    emit fitFinished();
}

void CalibrationView::showError(const QString& text) {
    m_banner->setToolTip(QString());
    m_banner->showMessage(MessageBanner::Kind::Error, text);
}

void CalibrationView::setFitting(bool on) {
    m_fitting = on;
    m_busy->setVisible(on);
    m_openButton->setEnabled(!on);
    m_fitButton->setEnabled(on || m_set.cases.size() >= 2);
    m_fitButton->setText(on ? tr("Stop") : tr("Fit"));
    // Esc is the window's Stop (Search > Stop), which stops a fit with whatever else runs: one owner.
    emit fittingChanged(on);
    m_fitButton->setToolTip(
        on ? tr("Stop the fit (Esc); the factors stay as they were")
           : tr("Fit the efficiency factors to these runs (least squares on log(predicted "
                "/ measured)), starting from the scenario's cluster; seconds to minutes"));
    m_useButton->setEnabled(!on && m_fit);
}

void CalibrationView::openDialog() {
    const QString dir = m_origin.isEmpty() ? m_samplesDir : QFileInfo(m_origin).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open measurements"), dir,
        tr("Measurements (*.yaml *.yml *.json);;Project measurements (*.yaml *.yml);;vllm bench serve result "
           "(*.json);;All files (*)"));
    if (!path.isEmpty()) loadFile(path);
}

void CalibrationView::fillTable() {
    m_model->removeRows(0, m_model->rowCount());
    const bool fitted = bool(m_fit);
    for (size_t i = 0; i < m_report.rows.size(); ++i) {
        const CalibrationRow& r = m_report.rows[i];
        auto* id = new QStandardItem(qs(r.id));
        id->setData(double(i), ValueRole); // file order
        id->setToolTip(qs(r.id) + (r.feasible ? QString()
                                              : tr("\nThe model thinks this run does not fit "
                                                   "(memory or SLOs)")));
        if (!r.feasible) id->setForeground(QColor(0x6b, 0x72, 0x80));
        auto* metric = new QStandardItem(metricName(r.metric));
        metric->setData(qs(r.metric), ValueRole);
        QList<QStandardItem*> row{id, metric, numberItem(metricValue(r.metric, r.measured), r.measured),
                                  numberItem(metricValue(r.metric, r.predicted), r.predicted),
                                  errorItem(r.error)};
        if (fitted && i < m_fit->after.rows.size())
            row << errorItem(m_fit->after.rows[i].error);
        else
            row << numberItem(QString(), 0);
        if (fitted && i < m_fit->looErrors.size())
            row << errorItem(m_fit->looErrors[i]);
        else
            row << numberItem(QString(), 0);
        if (fitted && i < m_fit->losoErrors.size())
            row << errorItem(m_fit->losoErrors[i]);
        else
            row << numberItem(QString(), 0);
        m_model->appendRow(row);
    }
    m_table->setColumnHidden(Fitted, !fitted);
    m_table->setColumnHidden(LeaveOneOut, !fitted || m_fit->looErrors.empty());
    m_table->setColumnHidden(LeaveSourceOut, !fitted || m_fit->losoErrors.empty());
    m_table->resizeColumnsToContents();
    m_table->horizontalHeader()->setSectionResizeMode(Id, QHeaderView::Stretch);
}

void CalibrationView::redrawPlot() {
    QList<QPointF> before, after;
    double lo = 0, hi = 0;
    for (size_t i = 0; i < m_report.rows.size(); ++i) {
        const double e = 100 * m_report.rows[i].error;
        before << QPointF(double(i + 1), e);
        lo = std::min(lo, e), hi = std::max(hi, e);
        if (m_fit && i < m_fit->after.rows.size()) {
            const double f = 100 * m_fit->after.rows[i].error;
            after << QPointF(double(i + 1), f);
            lo = std::min(lo, f), hi = std::max(hi, f);
        }
    }
    m_before->replace(before);
    m_after->replace(after);
    m_after->setVisible(bool(m_fit));
    const int n = std::max(1, int(m_report.rows.size()));
    m_zero->replace({QPointF(0.5, 0), QPointF(n + 0.5, 0)});
    m_x->setRange(0.5, n + 0.5);
    m_x->setTickCount(std::min(n, 12) + 1);
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(1);
    m_x->setTickInterval(std::max(1.0, std::ceil(n / 12.0)));
    // Whole 10% steps around the errors, zero always in view.
    const double step = (hi - lo) > 100 ? 25 : 10;
    m_y->setRange(std::floor(lo / step - 0.5) * step, std::ceil(hi / step + 0.5) * step);
    m_y->setTickType(QValueAxis::TicksDynamic);
    m_y->setTickAnchor(0);
    m_y->setTickInterval(step);
}

void CalibrationView::showSummary() {
    if (m_report.rows.empty()) {
        m_summary->setText(tr("No measurements."));
        m_factors->clear();
        return;
    }
    QString text = tr("Median |error| <b>%1</b> with the file's clusters")
                       .arg(QString::asprintf("%.1f%%", 100 * m_report.medianAbsError));
    if (m_fit) {
        text += tr(", <b>%1</b> fitted").arg(QString::asprintf("%.1f%%", 100 * m_fit->after.medianAbsError));
        if (!m_fit->looErrors.empty())
            text +=
                tr(", <b>%1</b> leave-one-out").arg(QString::asprintf("%.1f%%", 100 * m_fit->looMedianAfter));
        if (!m_fit->losoErrors.empty())
            text += tr(", <b>%1</b> with each of the %2 sources held out")
                        .arg(QString::asprintf("%.1f%%", 100 * m_fit->losoMedianAfter))
                        .arg(m_fit->bySource.size());
        text += tr(" (%1 model evaluations)").arg(formatInteger(m_fit->objectiveEvaluations));
    } else if (m_set.cases.size() < 2) {
        text += tr("; a fit needs at least two measurements");
    }
    m_summary->setText(text);
    if (!m_fit) {
        m_factors->clear();
        m_factors->hide();
        return;
    }
    QStringList parts;
    for (const FittedFactor& f : m_fit->factors) {
        const bool moved = std::fabs(f.after - f.before) > 1e-3 * std::max(1.0, std::fabs(f.before));
        parts << tr("%1 %2 &rarr; %3%4")
                     .arg(qs(f.name).toHtmlEscaped(), QString::number(f.before, 'g', 3),
                          moved ? QStringLiteral("<b>%1</b>").arg(QString::number(f.after, 'g', 3))
                                : QString::number(f.after, 'g', 3),
                          (f.after <= f.lo || f.after >= f.hi) ? tr(" (at its bound)") : QString());
    }
    m_factors->setText(tr("Fitted factors: %1").arg(parts.join(QStringLiteral(", &nbsp;"))));
    m_factors->show();
}

} // namespace sp::views
