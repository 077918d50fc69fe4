#include "views/servingsizing.h"

#include "core/io/gpudb.h"
#include "views/format.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace sp::views {

namespace {
enum Column { Gpu, Nodes, Gpus, Ttft, Tpot, PerHour, PerMillion, PerMegawatt, PlanColumn, Columns };

QLabel* wrapping(const QString& text = {}) {
    auto* l = new QLabel(text);
    l->setTextFormat(Qt::PlainText);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}
} // namespace

ServingSizingView::ServingSizingView(QWidget* parent) : QWidget(parent) {
    m_rate = new QDoubleSpinBox;
    m_rate->setRange(0.001, 1e6);
    m_rate->setDecimals(3);
    m_rate->setValue(10.0);
    m_rate->setSuffix(tr(" requests/s"));
    m_rate->setToolTip(tr("The request rate to sustain under the workload's SLOs"));
    m_size = new QPushButton(tr("Find GPUs"));
    m_size->setToolTip(tr("For each GPU type checked, the fewest nodes whose Megatron plan sustains the rate "
                          "under the SLOs (node counts doubled, then bisected; Stop or Esc ends it)"));
    connect(m_size, &QPushButton::clicked, this, &ServingSizingView::sizeRequested);

    // The database's GPUs as check boxes, five a row: all of them in view at a laptop's width (13 types
    // in three rows at 1280x720).
    auto* gpuGrid = new QGridLayout;
    gpuGrid->setContentsMargins(0, 0, 0, 0);
    gpuGrid->setHorizontalSpacing(12);
    gpuGrid->setVerticalSpacing(2);
    constexpr int kColumns = 5;
    for (const GpuSpec& g : gpuDatabase()) {
        auto* box = new QCheckBox(qs(g.id));
        box->setProperty("gpu", qs(g.id));
        QString tip = tr("%1: %2 GB, %3 W").arg(qs(g.gpu.name)).arg(g.gpu.hbmGB).arg(g.gpu.tdpW);
        if (g.pricePerHourUsd > 0)
            tip += tr("; $%1 a GPU-hour (%2)").arg(g.pricePerHourUsd).arg(qs(g.priceSource));
        box->setToolTip(tip);
        connect(box, &QCheckBox::toggled, this, [this] {
            if (!m_setting) m_touched = true;
            updateButton();
        });
        const int i = int(m_gpuBoxes.size());
        gpuGrid->addWidget(box, i / kColumns, i % kColumns);
        m_gpuBoxes.push_back(box);
    }
    gpuGrid->setColumnStretch(kColumns, 1);

    m_heading = wrapping();
    m_table = new QTableWidget(0, Columns);
    m_table->setHorizontalHeaderLabels({tr("GPU"), tr("nodes"), tr("GPUs"), tr("TTFT ms"), tr("TPOT ms"),
                                        tr("$/hour"), tr("$/M tokens"), tr("tokens/s/MW"), tr("plan")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setMinimumHeight(120);
    m_notes = wrapping();

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("GPUs for")));
    top->addWidget(m_rate);
    top->addWidget(m_size);
    top->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->addLayout(top);
    layout->addLayout(gpuGrid);
    layout->addWidget(m_heading);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_notes);
    updateButton();
}

double ServingSizingView::rate() const {
    return m_rate->value();
}
void ServingSizingView::setRate(double r) {
    m_rate->setValue(r);
}

std::vector<std::string> ServingSizingView::gpus() const {
    std::vector<std::string> ids;
    for (const QCheckBox* box : m_gpuBoxes)
        if (box->isChecked()) ids.push_back(box->property("gpu").toString().toStdString());
    return ids;
}

void ServingSizingView::setGpus(const std::vector<std::string>& ids) {
    m_touched = true;
    m_setting = true;
    for (QCheckBox* box : m_gpuBoxes) {
        const std::string id = box->property("gpu").toString().toStdString();
        box->setChecked(std::find(ids.begin(), ids.end(), id) != ids.end());
    }
    m_setting = false;
    updateButton();
}

void ServingSizingView::suggestGpu(const std::string& id) {
    if (m_touched) return;
    setGpus({id});
    m_touched = false;
}

void ServingSizingView::setRunning(bool running) {
    m_running = running;
    m_rate->setEnabled(!running);
    for (QCheckBox* box : m_gpuBoxes) box->setEnabled(!running);
    updateButton();
}

void ServingSizingView::updateButton() {
    m_size->setEnabled(!m_running && !gpus().empty());
}

void ServingSizingView::setResult(const GpuSizing& z) {
    m_result = z;
    const Workload& w = z.workload;
    const QString at = sloPercentileName(w.sloPercentile);
    QStringList asked;
    for (const std::string& id : z.gpus) asked << qs(id);
    m_heading->setText(
        tr("The fewest GPUs for %1 requests/s under %2 (%3), Megatron's plan on each cluster (as `shardplan "
           "capacity --rate %1 --gpus %4`); TTFT and TPOT at %5 at that rate. Each run lasts 20 request "
           "latencies, at least the %6 requests given.%7")
            .arg(z.rate, 0, 'g', 4)
            .arg(sloText(w), qs(w.name), asked.join(u','), at, formatInteger(double(z.requests)),
                 z.stopped ? tr(" Stopped: the rows done so far; the last may not be the fewest.")
                           : QString()));

    m_table->setRowCount(int(z.rows.size()));
    const auto cell = [this](int row, int col, const QString& text, bool number = true) {
        auto* item = new QTableWidgetItem(text);
        item->setTextAlignment(Qt::Alignment(number ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
        m_table->setItem(row, col, item);
        return item;
    };
    const QString none = QStringLiteral("-");
    QStringList binds, prices;
    for (int i = 0; i < int(z.rows.size()); ++i) {
        const CapacityRow& r = z.rows[size_t(i)];
        cell(i, Gpu, qs(r.gpu), false)->setToolTip(qs(r.why));
        if (!r.met) {
            for (int c = Nodes; c < PlanColumn; ++c) cell(i, c, none);
            cell(i, PlanColumn, tr("not met"), false)->setToolTip(qs(r.why));
            binds << tr("%1: %2").arg(qs(r.gpu), qs(r.why));
            continue;
        }
        cell(i, Nodes, QString::number(r.nodes));
        cell(i, Gpus, QString::number(r.gpus));
        cell(i, Ttft, QString::number(r.slo.ttftMs, 'f', 1));
        cell(i, Tpot, QString::number(r.slo.tpotMs, 'f', 2));
        cell(i, PerHour, r.cost.priced ? formatGrouped(r.cost.usdPerHour, 2) : none);
        cell(i, PerMillion, r.cost.priced ? formatGrouped(r.cost.usdPerMillionTokens, 3) : none);
        cell(i, PerMegawatt, r.cost.powered ? formatInteger(r.cost.tokensPerSPerMegawatt) : none);
        cell(i, PlanColumn, planShapeText(r.plan, z.moe), false);
        binds << tr("%1 %2").arg(qs(r.gpu), qs(r.why));
        if (r.cost.priced)
            prices << tr("%1 $%2/GPU-hour (%3)")
                          .arg(qs(r.gpu))
                          .arg(r.cost.usdPerGpuHour, 0, 'g', 4)
                          .arg(qs(r.cost.priceSource));
    }
    QString notes = tr("What binds one size down: %1.")
                        .arg(binds.isEmpty() ? tr("nothing yet") : binds.join(QStringLiteral("; ")));
    notes += u' ' + tr("Prices: %1. Energy: tokens/s per MW of GPU board power (TDP), not measured draw.")
                        .arg(prices.isEmpty() ? tr("none known") : prices.join(QStringLiteral("; ")));
    m_notes->setText(notes);
}

void ServingSizingView::clear() {
    m_result.reset();
    m_heading->clear();
    m_table->setRowCount(0);
    m_notes->clear();
}

QString ServingSizingView::tableText() const {
    QStringList lines;
    QStringList header;
    for (int c = 0; c < m_table->columnCount(); ++c) header << m_table->horizontalHeaderItem(c)->text();
    lines << header.join(u'\t');
    for (int r = 0; r < m_table->rowCount(); ++r) {
        QStringList cells;
        for (int c = 0; c < m_table->columnCount(); ++c)
            cells << (m_table->item(r, c) ? m_table->item(r, c)->text() : QString());
        lines << cells.join(u'\t');
    }
    return lines.join(u'\n');
}

QString ServingSizingView::headingText() const {
    return m_heading->text();
}

QString ServingSizingView::notesText() const {
    return m_notes->text();
}

} // namespace sp::views
