#include "views/fleetview.h"

#include "views/format.h"

#include "core/io/formats.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QShortcut>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>

namespace sp::views {

namespace {

QString money(double usd) {
    return QStringLiteral("$") + QString::number(usd, 'f', 2);
}

/// "3 x 2 GPUs of b200" for each assignment of model m, joined.
QString assignmentsOf(const FleetAnswer& a, const Fleet& f, int m) {
    QStringList parts;
    for (size_t j = 0; j < a.solution.counts.size(); ++j) {
        const FleetCandidate& c = a.problem.candidates[j];
        if (c.model != m || a.solution.counts[j] == 0) continue;
        parts << QStringLiteral("%1 x %2 GPU%3 of %4")
                     .arg(a.solution.counts[j])
                     .arg(c.gpus)
                     .arg(c.gpus == 1 ? "" : "s")
                     .arg(qs(f.inventory[size_t(c.type)].id));
    }
    return parts.isEmpty() ? QStringLiteral("none") : parts.join(QStringLiteral(", "));
}

} // namespace

/// Each GPU type of the inventory as a bar of its GPUs, a segment for each model's share in the model's
/// colour, the rest left empty.
class FleetBars : public QWidget {
public:
    struct Row {
        QString label;
        int64_t total = 0;
        std::vector<std::pair<int, int64_t>> parts; ///< model, GPUs
    };
    std::vector<Row> rows;
    QStringList models;

    explicit FleetBars(QWidget* parent) : QWidget(parent) { setMinimumHeight(60); }
    QSize sizeHint() const override { return {600, int(28 * rows.size() + 34)}; }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        const QFontMetrics fm = fontMetrics();
        int labelW = 0;
        for (const Row& r : rows) labelW = std::max(labelW, fm.horizontalAdvance(r.label));
        const int x0 = labelW + 12, w = std::max(50, width() - x0 - 8);
        int64_t most = 1;
        for (const Row& r : rows) most = std::max(most, r.total);
        int y = 4;
        for (const Row& r : rows) {
            p.setPen(palette().color(QPalette::WindowText));
            p.drawText(QRect(0, y, labelW + 4, 20), Qt::AlignRight | Qt::AlignVCenter, r.label);
            const double scale = double(w) / double(most);
            const QRectF whole(x0, y + 2, scale * double(r.total), 16);
            p.setPen(Qt::NoPen);
            double x = x0;
            for (const auto& [m, gpus] : r.parts) {
                const QRectF seg(x, y + 2, scale * double(gpus), 16);
                p.setBrush(stageColor(m));
                p.drawRect(seg);
                x += seg.width();
            }
            p.setBrush(Qt::NoBrush);
            p.setPen(QPen(palette().color(QPalette::Mid), 1));
            p.drawRect(whole);
            y += 28;
        }
        // The legend: a swatch and a name per model.
        int x = x0;
        for (int m = 0; m < models.size(); ++m) {
            p.setPen(Qt::NoPen);
            p.setBrush(stageColor(m));
            p.drawRect(QRectF(x, y + 4, 12, 12));
            p.setPen(palette().color(QPalette::WindowText));
            p.drawText(QPoint(x + 16, y + 15), models[m]);
            x += 28 + fm.horizontalAdvance(models[m]);
        }
    }
};

FleetView::FleetView(QWidget* parent) : QWidget(parent) {
    auto* top = new QHBoxLayout;
    m_open = new QPushButton(tr("Open Fleet..."), this);
    m_open->setToolTip(tr("A fleet file: the GPU inventory and the models with their rates and SLOs"));
    m_save = new QPushButton(tr("Save Fleet As..."), this);
    m_save->setToolTip(tr("Write the fleet with its edited rates, SLOs and N-1 choice to a fleet file"));
    m_save->setEnabled(false);
    m_file = new QLabel(tr("No fleet"), this);
    m_nMinus1 = new QCheckBox(tr("Lose any one node (N-1)"), this);
    m_nMinus1->setToolTip(tr("Every rate still met with any one node of the inventory gone"));
    m_stopButton = new QPushButton(tr("Stop"), this);
    m_stopButton->setToolTip(tr("Stop solving (Esc)"));
    m_stopButton->setEnabled(false);
    m_status = new QLabel(this);
    top->addWidget(m_open);
    top->addWidget(m_save);
    top->addWidget(m_file, 1);
    top->addWidget(m_nMinus1);
    top->addWidget(m_stopButton);

    m_models = new QTableWidget(0, 6, this);
    m_models->setHorizontalHeaderLabels({tr("Model"), tr("Rate (requests/s)"), tr("TTFT SLO (ms)"),
                                         tr("TPOT SLO (ms)"), tr("Runs on"), tr("$/hour")});
    m_models->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_models->horizontalHeader()->setSectionResizeMode(4, QHeaderView::Stretch);
    m_models->verticalHeader()->hide();
    m_models->setToolTip(tr("Edit a rate or an SLO: the fleet is solved again and the change is shown"));

    m_bars = new FleetBars(this);
    m_total = new QLabel(this);
    QFont bold = m_total->font();
    bold.setBold(true);
    m_total->setFont(bold);
    m_change = new QLabel(this);
    m_change->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_assignment = new QTableWidget(0, 8, this);
    m_assignment->setHorizontalHeaderLabels({tr("Model"), tr("GPU"), tr("Replicas"), tr("GPUs each"),
                                             tr("Rate each"), tr("Capacity"), tr("$/hour"), tr("Plan")});
    m_assignment->horizontalHeader()->setSectionResizeMode(7, QHeaderView::Stretch);
    m_assignment->verticalHeader()->hide();
    m_assignment->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_binds = new QLabel(this);
    m_binds->setWordWrap(true);
    m_binds->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* lay = new QVBoxLayout(this);
    lay->addLayout(top);
    lay->addWidget(m_status);
    lay->addWidget(m_models, 1);
    lay->addWidget(m_bars);
    lay->addWidget(m_total);
    lay->addWidget(m_change);
    lay->addWidget(m_assignment, 2);
    lay->addWidget(m_binds);

    m_debounce = new QTimer(this);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(350);
    connect(m_debounce, &QTimer::timeout, this, &FleetView::solve);
    m_watcher = new QFutureWatcher<FleetAnswer>(this);
    connect(m_watcher, &QFutureWatcher<FleetAnswer>::finished, this, &FleetView::finished);
    connect(m_open, &QPushButton::clicked, this, &FleetView::openFile);
    connect(m_save, &QPushButton::clicked, this, &FleetView::saveFile);
    connect(m_stopButton, &QPushButton::clicked, this, &FleetView::stop);
    connect(m_nMinus1, &QCheckBox::toggled, this, [this](bool on) {
        m_edit = on ? tr("N-1 headroom asked") : tr("N-1 headroom dropped");
        emit edited();
        solveLater();
    });
    auto* esc = new QShortcut(QKeySequence(Qt::Key_Escape), this);
    esc->setContext(Qt::WidgetWithChildrenShortcut);
    connect(esc, &QShortcut::activated, this, &FleetView::stop);
    showAnswer();
}

FleetView::~FleetView() {
    m_stop.request_stop();
    m_watcher->waitForFinished();
}

bool FleetView::loadFile(const QString& path, QString* error) {
    auto loaded = loadFleet(path.toStdString());
    if (!loaded) {
        const QString why = qs(loaded.error().str());
        m_status->setText(why);
        if (error) *error = why;
        return false;
    }
    setFleet(loaded.value(), path);
    return true;
}

void FleetView::openFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Fleet"), m_origin,
                                                      tr("Fleet files (*.yaml *.yml *.json);;All files (*)"));
    if (!path.isEmpty()) loadFile(path);
}

void FleetView::saveFile() {
    if (!m_fleet) return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Fleet"), m_origin,
                                                      tr("Fleet files (*.yaml *.yml);;All files (*)"));
    if (!path.isEmpty()) saveTo(path);
}

std::optional<Fleet> FleetView::shownFleet() const {
    if (!m_fleet) return std::nullopt;
    Fleet f = *m_fleet;
    f.nMinus1 = m_nMinus1->isChecked();
    return f;
}

bool FleetView::saveTo(const QString& path, QString* error) {
    const std::optional<Fleet> f = shownFleet();
    if (!f) return false;
    if (auto w = writeFileAtomic(path.toStdString(), toYaml(*f)); !w) {
        const QString why = tr("Not saved: %1").arg(qs(w.error().str()));
        m_status->setText(why);
        if (error) *error = why;
        return false;
    }
    m_origin = path;
    m_file->setText(path);
    m_status->setText(tr("Saved to %1").arg(path));
    return true;
}

void FleetView::setFleet(const Fleet& f, const QString& origin) {
    m_fleet = f;
    m_origin = origin;
    m_answer.reset();
    m_before.reset();
    m_edit.clear();
    {
        const QSignalBlocker block(m_nMinus1);
        m_nMinus1->setChecked(f.nMinus1);
    }
    m_file->setText(origin.isEmpty() ? qs(f.name) : origin);
    m_save->setEnabled(true);
    showFleet();
    solve();
}

void FleetView::showFleet() {
    m_filling = true;
    const Fleet& f = *m_fleet;
    m_models->setRowCount(int(f.models.size()));
    for (int m = 0; m < int(f.models.size()); ++m) {
        const FleetModel& fm = f.models[size_t(m)];
        auto* name = new QTableWidgetItem(qs(fm.name));
        name->setFlags(name->flags() & ~Qt::ItemIsEditable);
        name->setForeground(stageColor(m).darker(130));
        m_models->setItem(m, 0, name);
        auto spin = [&](int col, double value, double lo, double hi, int decimals, const QString& tip,
                        auto apply) {
            auto* s = new QDoubleSpinBox(m_models);
            s->setRange(lo, hi);
            s->setDecimals(decimals);
            s->setValue(value);
            s->setToolTip(tip);
            s->setKeyboardTracking(false);
            connect(s, &QDoubleSpinBox::valueChanged, this, [this, m, apply](double v) {
                if (!m_filling) apply(m, v);
            });
            m_models->setCellWidget(m, col, s);
        };
        spin(1, fm.rate, 0.001, 1e6, 3, tr("Requests/s this model must sustain under its SLOs"),
             [this](int i, double v) { setModelRate(i, v); });
        spin(2, fm.workload.ttftMs, 0, 1e7, 1, tr("Time to first token, ms (0: none)"),
             [this](int i, double v) { setModelSlo(i, v, m_fleet->models[size_t(i)].workload.tpotMs); });
        spin(3, fm.workload.tpotMs, 0, 1e6, 1, tr("Time per output token, ms (0: none)"),
             [this](int i, double v) { setModelSlo(i, m_fleet->models[size_t(i)].workload.ttftMs, v); });
        for (int col : {4, 5}) {
            auto* it = new QTableWidgetItem;
            it->setFlags(it->flags() & ~Qt::ItemIsEditable);
            m_models->setItem(m, col, it);
        }
    }
    m_models->resizeColumnsToContents();
    // The models' rows and no more: the assignment below gets the room.
    m_models->setMaximumHeight(m_models->horizontalHeader()->sizeHint().height() +
                               2 * m_models->frameWidth() + 8 + m_models->verticalHeader()->length());
    m_filling = false;
}

void FleetView::setModelRate(int m, double rate) {
    if (!m_fleet || m < 0 || m >= int(m_fleet->models.size())) return;
    FleetModel& fm = m_fleet->models[size_t(m)];
    if (fm.rate == rate) return;
    m_edit = tr("%1's rate %2 -> %3 requests/s").arg(qs(fm.name)).arg(fm.rate).arg(rate);
    fm.rate = rate;
    syncSpin(m, 1, rate);
    emit edited();
    solveLater();
}

void FleetView::setModelSlo(int m, double ttftMs, double tpotMs) {
    if (!m_fleet || m < 0 || m >= int(m_fleet->models.size())) return;
    Workload& w = m_fleet->models[size_t(m)].workload;
    if (w.ttftMs == ttftMs && w.tpotMs == tpotMs) return;
    if (ttftMs <= 0 && tpotMs <= 0) {
        m_status->setText(tr("%1 needs a TTFT or a TPOT SLO").arg(qs(m_fleet->models[size_t(m)].name)));
        return;
    }
    const bool ttft = w.ttftMs != ttftMs;
    m_edit = tr("%1's %2 SLO %3 -> %4 ms")
                 .arg(qs(m_fleet->models[size_t(m)].name), ttft ? tr("TTFT") : tr("TPOT"))
                 .arg(ttft ? w.ttftMs : w.tpotMs)
                 .arg(ttft ? ttftMs : tpotMs);
    w.ttftMs = ttftMs, w.tpotMs = tpotMs;
    syncSpin(m, 2, ttftMs);
    syncSpin(m, 3, tpotMs);
    emit edited();
    solveLater();
}

void FleetView::syncSpin(int row, int col, double value) {
    if (auto* spin = qobject_cast<QDoubleSpinBox*>(m_models->cellWidget(row, col));
        spin && spin->value() != value) {
        const QSignalBlocker block(spin);
        spin->setValue(value);
    }
}

void FleetView::solveLater() {
    m_debounce->start();
}

void FleetView::solve() {
    if (!m_fleet) return;
    m_debounce->stop();
    if (m_running) {
        // The edit is solved once the run in flight ends (its answer is for the fleet before the edit).
        m_again = true;
        m_stop.request_stop();
        return;
    }
    if (m_answer && m_answer->ok) m_before = m_answer;
    m_stop = std::stop_source();
    FleetOptions o;
    o.analytical = true; // a hundredth of a second on the sample; the simulated rates are the CLI's
    o.nMinus1 = m_nMinus1->isChecked();
    const Fleet f = *m_fleet;
    const std::stop_token token = m_stop.get_token();
    setRunning(true);
    m_watcher->setFuture(QtConcurrent::run([f, o, token] { return planFleet(f, o, token); }));
}

void FleetView::stop() {
    m_again = false;
    m_debounce->stop();
    if (m_running) m_stop.request_stop();
}

void FleetView::finished() {
    FleetAnswer a = m_watcher->result();
    setRunning(false);
    if (m_again) {
        m_again = false;
        solve();
        return;
    }
    if (a.stopped) {
        m_status->setText(tr("Stopped: the answer shown is the one before"));
        m_edit.clear(); // the answer shown is not the edit's: no change line for it
    } else if (!a.ok) {
        m_status->setText(tr("No answer: %1").arg(qs(a.error)));
        m_answer = std::move(a);
    } else {
        m_status->setText(
            a.solution.exact
                ? tr("Solved exactly (branch and bound, %1 candidates)").arg(a.problem.candidates.size())
                : tr("Best found, NOT proven optimal"));
        m_answer = std::move(a);
    }
    showAnswer();
    emit solved();
}

void FleetView::setRunning(bool running) {
    m_running = running;
    m_stopButton->setEnabled(running);
    if (running) m_status->setText(tr("Solving..."));
}

void FleetView::showAnswer() {
    m_assignment->setRowCount(0);
    m_bars->rows.clear();
    m_bars->models.clear();
    const bool have = m_fleet && m_answer && m_answer->ok;
    if (!m_fleet) {
        m_total->setText(tr("Open a fleet file (Tools > Fleet...): samples/fleet-three-models.yaml"));
        m_change->clear();
        m_binds->clear();
        m_bars->update();
        return;
    }
    const Fleet& f = *m_fleet;
    for (const FleetModel& fm : f.models) m_bars->models << qs(fm.name);
    for (int g = 0; g < int(f.inventory.size()); ++g) {
        const FleetGpuType& t = f.inventory[size_t(g)];
        FleetBars::Row row;
        row.total = int64_t(t.nodes) * t.gpusPerNode;
        const int64_t used = have ? fleetGpus(*m_answer, g) : 0;
        row.label = QStringLiteral("%1  %2/%3 GPUs  $%4/GPU-h")
                        .arg(qs(t.id))
                        .arg(used)
                        .arg(row.total)
                        .arg(t.pricePerGpuHour, 0, 'g', 4);
        if (have)
            for (int m = 0; m < int(f.models.size()); ++m)
                if (const int64_t n = fleetGpus(*m_answer, g, m)) row.parts.emplace_back(m, n);
        m_bars->rows.push_back(row);
    }
    QStringList prices;
    for (const FleetGpuType& t : f.inventory)
        prices << QStringLiteral("%1: $%2 a GPU-hour (%3)")
                      .arg(qs(t.id))
                      .arg(t.pricePerGpuHour)
                      .arg(qs(t.priceSource));
    m_bars->setToolTip(prices.join('\n'));
    m_bars->updateGeometry();
    m_bars->update();
    for (int m = 0; m < int(f.models.size()); ++m) {
        if (QTableWidgetItem* it = m_models->item(m, 4))
            it->setText(have ? assignmentsOf(*m_answer, f, m) : "");
        if (QTableWidgetItem* it = m_models->item(m, 5))
            it->setText(have ? money(fleetUsdPerHour(*m_answer, m)) : "");
    }
    if (!have) {
        m_total->setText(m_answer ? tr("No answer") : QString());
        m_change->clear();
        m_binds->setText(m_answer ? qs(m_answer->error) : QString());
        return;
    }
    const FleetAnswer& a = *m_answer;
    const int64_t gpus = fleetGpus(a);
    m_total->setText(tr("Total %1/hour on %2 GPUs%3")
                         .arg(money(a.solution.usdPerHour))
                         .arg(gpus)
                         .arg(a.nMinus1 ? tr(", with any one node lost") : QString()));
    for (int m = 0; m < int(f.models.size()); ++m) {
        for (size_t j = 0; j < a.solution.counts.size(); ++j) {
            const int n = a.solution.counts[j];
            if (n == 0 || a.problem.candidates[j].model != m) continue;
            const FleetReplica& r = a.replicas[size_t(a.replicaOf[j])];
            const FleetGpuType& t = f.inventory[size_t(r.type)];
            const int row = m_assignment->rowCount();
            m_assignment->insertRow(row);
            const QStringList cells{qs(f.models[size_t(m)].name),
                                    qs(t.id),
                                    QString::number(n),
                                    qs(fleetSizeText(r, t.gpusPerNode)),
                                    QString::number(r.rate, 'g', 3),
                                    QString::number(n * r.rate, 'f', 2),
                                    money(n * r.usdPerHour),
                                    degreesText(r.plan.degrees, f.models[size_t(m)].model.moe.present())};
            for (int c = 0; c < cells.size(); ++c) {
                auto* it = new QTableWidgetItem(cells[c]);
                if (c == 0) it->setForeground(stageColor(m).darker(130));
                if (c == 4) it->setToolTip(qs(r.bindingWhy));
                m_assignment->setItem(row, c, it);
            }
        }
    }
    m_assignment->resizeColumnsToContents();
    QStringList binds;
    for (const FleetBind& b : a.binds)
        binds << QStringLiteral("<b>%1</b>: %2").arg(qs(b.what).toHtmlEscaped(), qs(b.why).toHtmlEscaped());
    m_binds->setText(tr("What binds:") + QStringLiteral("<br>") + binds.join(QStringLiteral("<br>")));
    // What the last edit moved: the cost, and each model whose assignment changed.
    if (m_before && !m_edit.isEmpty()) {
        const double was = m_before->solution.usdPerHour, now = a.solution.usdPerHour;
        QString text =
            tr("After %1: %2/hour -> %3/hour (%4%5)")
                .arg(m_edit, money(was), money(now), now >= was ? "+" : "-", money(std::abs(now - was)));
        for (int m = 0; m < int(f.models.size()); ++m) {
            const QString before = assignmentsOf(*m_before, f, m);
            const QString after = assignmentsOf(a, f, m);
            if (before != after)
                text += tr("\n%1 ran on %2; now on %3").arg(qs(f.models[size_t(m)].name), before, after);
        }
        m_change->setText(text);
    } else {
        m_change->setText(tr("Edit a rate or an SLO above to see what it changes"));
    }
    // Room for every line (a label's height does not follow its text in a layout of stretching tables).
    m_change->setMinimumHeight(int(m_change->text().count('\n') + 1) * m_change->fontMetrics().lineSpacing() +
                               4);
}

QString FleetView::totalText() const {
    return m_total->text();
}
QString FleetView::changeText() const {
    return m_change->text();
}
QString FleetView::bindsText() const {
    return m_binds->text();
}
QString FleetView::statusText() const {
    return m_status->text();
}

QString FleetView::assignmentText() const {
    QStringList lines, head;
    for (int c = 0; c < m_assignment->columnCount(); ++c)
        head << m_assignment->horizontalHeaderItem(c)->text();
    lines << head.join('\t');
    for (int r = 0; r < m_assignment->rowCount(); ++r) {
        QStringList cells;
        for (int c = 0; c < m_assignment->columnCount(); ++c)
            cells << (m_assignment->item(r, c) ? m_assignment->item(r, c)->text() : QString());
        lines << cells.join('\t');
    }
    return lines.join('\n');
}

QString FleetView::inventoryText() const {
    QStringList lines;
    for (const FleetBars::Row& r : m_bars->rows) lines << r.label;
    return lines.join('\n');
}

} // namespace sp::views
