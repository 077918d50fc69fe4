// The main window's Pareto tab: the sweep of the scenario as edited (ParetoRunner) drawn live in the
// ParetoView; clicking a point shows its plan in every view.
#include "mainwindow_p.h"

namespace sp::app {

void MainWindow::buildParetoTab() {
    m_pareto = new views::ParetoView;
    const int tab = m_tabs->addTab(m_pareto, tr("Pareto front"));
    m_tabs->setTabToolTip(tab, tr("Throughput per GPU against tokens/s per user: one plan per TPOT target"));
    m_paretoRunner = new ParetoRunner(this);

    connect(m_pareto, &views::ParetoView::startRequested, this, [this](int points, qint64 budget) {
        if (!m_editor->isValid()) {
            showError(tr("Fix the scenario first: %1").arg(m_editor->errors().join(QStringLiteral("; "))),
                      Cause::InvalidScenario);
            return;
        }
        ParetoOptions o;
        o.points = points;
        o.budget = budget;
        o.threads = m_options.threadsPerRun;
        m_paretoScenario = std::make_shared<const Scenario>(m_editor->scenario());
        m_pareto->clear();
        m_pareto->setRunning(true);
        m_pareto->setStatus(tr("Searching the two ends..."));
        m_paretoRunner->start(*m_paretoScenario, o);
    });
    connect(m_pareto, &views::ParetoView::stopRequested, m_paretoRunner, &ParetoRunner::stop);
    connect(m_paretoRunner, &ParetoRunner::pointsFound, this,
            [this](quint64, const std::vector<ParetoPoint>& points, const std::vector<bool>& megatron,
                   int done, int total) {
                for (size_t i = 0; i < points.size(); ++i) m_pareto->addPoint(points[i], megatron[i]);
                m_pareto->setStatus(tr("%1 of %2 targets searched").arg(done).arg(total));
            });
    connect(m_paretoRunner, &ParetoRunner::finished, this, [this](quint64, ParetoResultPtr r) {
        m_pareto->setResult(*r);
        m_pareto->setRunning(false);
        m_pareto->setStatus(tr("%1 points (Megatron %2), %3 searches, %4 evaluations in %5%6")
                                .arg(r->frontier.size())
                                .arg(r->megatron.size())
                                .arg(r->searches)
                                .arg(views::formatInteger(double(r->evaluations)))
                                .arg(views::formatDuration(r->seconds))
                                .arg(r->stopped ? tr(" (stopped)") : QString()));
    });
    connect(m_paretoRunner, &ParetoRunner::failed, this, [this](quint64, const QString& message) {
        m_pareto->setRunning(false);
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
                            ? views::saveFile(path, QByteArray::fromStdString(paretoCsv(*r)), &error)
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
}

} // namespace sp::app
