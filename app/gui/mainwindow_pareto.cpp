// The main window's Pareto tab: the sweep of the scenario as edited (ParetoRunner) drawn live in the
// ParetoView; clicking a point shows its plan in every view. Optionally the disaggregated frontier at the
// same targets, and the frontier of another scenario file as an overlay.
#include "mainwindow_p.h"

#include "core/io/formats.h"

namespace sp::app {

namespace {
/// Evaluations of each pool search of the disaggregated sweep: `shardplan pareto --pool-budget`'s default.
constexpr int64_t kPoolBudget = 200;

ParetoOptions paretoOptions(int points, qint64 budget, int threads) {
    ParetoOptions o;
    o.points = points;
    o.budget = budget;
    o.threads = threads;
    return o;
}
} // namespace

DisaggSearchOptions MainWindow::disaggregatedOptions(const ParetoOptions& o) {
    // As `shardplan pareto --disaggregated` derives them (app/cli/pareto_command.cpp).
    DisaggSearchOptions d;
    d.searcher = o.searcher;
    d.budget = kPoolBudget;
    d.seed = o.seed;
    d.threads = o.threads;
    d.warm = o.warm;
    return d;
}

void MainWindow::buildParetoTab() {
    m_pareto = new views::ParetoView;
    const int tab = m_tabs->addTab(scrolledPage(m_pareto), tr("Pareto front"));
    m_tabs->setTabToolTip(tab, tr("Throughput per GPU against tokens/s per user: one plan per TPOT target"));
    m_paretoRunner = new ParetoRunner(this);

    connect(m_pareto, &views::ParetoView::startRequested, this, [this](int points, qint64 budget) {
        if (!m_editor->isValid()) {
            showError(tr("Fix the scenario first: %1").arg(m_editor->errors().join(QStringLiteral("; "))),
                      Cause::InvalidScenario);
            return;
        }
        const ParetoOptions o = paretoOptions(points, budget, m_options.threadsPerRun);
        m_paretoScenario = std::make_shared<const Scenario>(m_editor->scenario());
        m_pareto->clear();
        m_pareto->setScenarioName(scenarioTitle());
        m_pareto->setRunning(true);
        m_pareto->setStatus(tr("Searching the two ends..."));
        m_paretoRunner->start(*m_paretoScenario, o,
                              m_pareto->disaggregated() ? std::optional(disaggregatedOptions(o))
                                                        : std::nullopt);
        updateStopAction();
    });
    connect(m_pareto, &views::ParetoView::stopRequested, m_paretoRunner, &ParetoRunner::stop);
    connect(m_paretoRunner, &ParetoRunner::pointsFound, this,
            [this](quint64, const std::vector<ParetoPoint>& points, const std::vector<bool>& megatron,
                   int done, int total) {
                for (size_t i = 0; i < points.size(); ++i) m_pareto->addPoint(points[i], megatron[i]);
                m_pareto->setStatus(tr("%1 of %2 targets searched").arg(done).arg(total));
            });
    connect(m_paretoRunner, &ParetoRunner::disaggregatedStarted, this, [this](quint64, int targets) {
        m_pareto->setStatus(tr("Searching prefill/decode splits at %1 targets...").arg(targets));
    });
    connect(m_paretoRunner, &ParetoRunner::disaggregatedFound, this,
            [this](quint64, DisaggFrontierPtr d) { m_pareto->setDisaggregated(*d); });
    connect(m_paretoRunner, &ParetoRunner::finished, this, [this](quint64, ParetoResultPtr r) {
        m_pareto->setResult(*r);
        m_pareto->setRunning(false);
        updateStopAction();
        // Both parts of the sweep count: the collocated searches and, with disaggregation, the split searches
        // after them (the status once said "35,552 evaluations in 0 s" of a 5.7 s sweep: the first part's).
        const DisaggFrontierTotals& d = m_paretoRunner->disaggregatedTotals();
        const bool split = d.searches > 0;
        const QString dis =
            split ? tr(", disaggregated %1").arg(m_pareto->disaggregatedPoints().size()) : QString();
        const QString parts =
            split ? tr(" (collocated %1 in %2, splits %3 in %4)")
                        .arg(views::formatInteger(double(r->evaluations)), views::formatDuration(r->seconds),
                             views::formatInteger(double(d.evaluations)), views::formatDuration(d.seconds))
                  : QString();
        m_pareto->setStatus(tr("%1 points (Megatron %2%7), %3 searches, %4 evaluations in %5%8%6")
                                .arg(r->frontier.size())
                                .arg(r->megatron.size())
                                .arg(r->searches + d.searches)
                                .arg(views::formatInteger(double(r->evaluations + d.evaluations)))
                                .arg(views::formatDuration(r->seconds + d.seconds))
                                .arg(r->stopped ? tr(" (stopped)") : QString())
                                .arg(dis, parts));
    });
    connect(m_paretoRunner, &ParetoRunner::failed, this, [this](quint64, const QString& message) {
        m_pareto->setRunning(false);
        updateStopAction();
        m_pareto->setStatus(QString());
        showError(tr("Pareto front: %1").arg(message));
    });
    connect(m_pareto, &views::ParetoView::exportRequested, this, [this] {
        const ParetoResult* r = m_pareto->result();
        if (!r) return;
        const QString path =
            m_dialogs->saveFile(tr("Export Pareto front"), QStringLiteral("pareto-front.png"),
                                tr("PNG image (*.png);;SVG image (*.svg);;CSV table (*.csv)"));
        if (path.isEmpty()) return;
        QString error;
        const bool ok = path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive)
                            ? views::saveFile(path,
                                              QByteArray::fromStdString(m_pareto->csv(
                                                  m_paretoScenario ? &m_paretoScenario->model : nullptr)),
                                              &error)
                            : views::saveImage(m_pareto->plotWidget(), path, &error);
        if (ok)
            statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)), 5000);
        else
            showError(error);
    });
    connect(m_pareto, &views::ParetoView::planClicked, this, [this](const ParetoPoint& p) {
        // The plan views show plans of the current context; a point of another scenario cannot be shown.
        if (!m_ctx || !m_paretoScenario || !(m_ctx->scenario() == *m_paretoScenario)) {
            statusBar()->showMessage(
                tr("The scenario changed since the sweep: start a search to show its plans"), 8000);
            return;
        }
        const std::string label = "pareto " + views::formatMs(p.tpotMs).toStdString();
        showPlan(views::makePlanRecord(m_ctx->costModel(), p.plan, label, "pareto"));
        refreshComparison();
    });
    connect(m_pareto, &views::ParetoView::disaggregatedSelected, this, [this] {
        if (const DisaggFrontierPoint* d = m_pareto->selectedDisaggregated())
            statusBar()->showMessage(
                tr("Split selected: %1 prefill + %2 decode nodes; the Serving tab serves it "
                   "as \"the Pareto point selected\"")
                    .arg(d->split.plan.prefill.nodes)
                    .arg(d->split.plan.decode.nodes),
                8000);
    });
    buildParetoOverlay();
}

void MainWindow::refreshParetoStale() {
    if (!m_paretoScenario || m_editor->scenario() == *m_paretoScenario) {
        m_pareto->setStale(QString());
        return;
    }
    m_pareto->setStale(tr("it was swept on %1, and the scenario has changed since. It stays on display "
                          "until you sweep again.")
                           .arg(m_pareto->scenarioName()));
}

void MainWindow::buildParetoOverlay() {
    m_overlayRunner = new ParetoRunner(this);
    auto overlayName = std::make_shared<QString>();
    auto overlayScenario = std::make_shared<std::shared_ptr<const Scenario>>(); // of the sweep running
    connect(m_pareto, &views::ParetoView::overlayRequested, this, [this, overlayName, overlayScenario] {
        const QString path =
            m_dialogs->openFile(tr("Overlay scenario"), tr("Scenarios (*.yaml *.yml *.json);;All files (*)"));
        if (path.isEmpty()) return;
        auto s = loadScenario(path.toStdString());
        if (!s) { // the frontier shown stays as it is
            showError(tr("Overlay: %1").arg(views::MessageBanner::fromBytes(s.error().str())),
                      Cause::OpenFile);
            return;
        }
        *overlayName = s->name.empty() ? QFileInfo(path).completeBaseName() : QString::fromStdString(s->name);
        *overlayScenario = std::make_shared<const Scenario>(s.value());
        m_pareto->setOverlayRunning(true);
        m_pareto->setStatus(tr("Sweeping %1 for the overlay...").arg(*overlayName));
        m_overlayRunner->start(
            *s, paretoOptions(m_pareto->points(), m_pareto->budget(), m_options.threadsPerRun));
        updateStopAction();
    });
    connect(m_pareto, &views::ParetoView::overlayCleared, this, [this] {
        m_overlayRunner->cancel();
        m_overlayScenario = nullptr;
        updateStopAction();
    });
    connect(m_overlayRunner, &ParetoRunner::pointsFound, this,
            [this, overlayName](quint64, const std::vector<ParetoPoint>&, const std::vector<bool>&, int done,
                                int total) {
                m_pareto->setStatus(
                    tr("Overlay %1: %2 of %3 targets searched").arg(*overlayName).arg(done).arg(total));
            });
    connect(m_overlayRunner, &ParetoRunner::finished, this,
            [this, overlayName, overlayScenario](quint64, ParetoResultPtr r) {
                m_pareto->setOverlayRunning(false);
                updateStopAction();
                m_overlayScenario = *overlayScenario;
                m_pareto->setOverlay(*overlayName, *r);
                m_pareto->setStatus(tr("Overlay %1: %2 points").arg(*overlayName).arg(r->frontier.size()));
            });
    connect(m_overlayRunner, &ParetoRunner::failed, this, [this](quint64, const QString& message) {
        m_pareto->setOverlayRunning(false);
        updateStopAction();
        m_pareto->setStatus(QString());
        showError(tr("Overlay: %1").arg(message));
    });
}

} // namespace sp::app
