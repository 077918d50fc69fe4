#include "views/servingcompare.h"

#include "views/format.h"
#include "views/servinganswers.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLocale>
#include <QObject>

namespace sp::views {

QString rateText(double r) {
    return QObject::tr("%1 requests/s").arg(QLocale(QLocale::English).toString(r, 'g', 4));
}

QString sweepLoadText(const std::vector<double>& rates) {
    if (rates.empty()) return QString();
    const QLocale en(QLocale::English);
    if (rates.size() == 1) return rateText(rates.front());
    return QObject::tr("%1-%2 requests/s")
        .arg(en.toString(rates.front(), 'g', 4), en.toString(rates.back(), 'g', 4));
}

QString gpusText(const Cluster& c) {
    return QStringLiteral("%1x %2").arg(c.gpus()).arg(qs(c.gpu.name));
}

std::pair<QString, QString> distinctNames(const RunTag& a, const RunTag& b, const QString& currentWord) {
    QStringList na, nb;
    if (a.plan != b.plan) {
        // "Megatron" against "Best found (sa)"; the whole label where the names agree (two selected plans).
        const QString sa = a.plan.section(QStringLiteral(": "), 0, 0);
        const QString sb = b.plan.section(QStringLiteral(": "), 0, 0);
        const bool shortDiffer = sa != sb && !sa.isEmpty() && !sb.isEmpty();
        na << (shortDiffer ? sa : a.plan);
        nb << (shortDiffer ? sb : b.plan);
    }
    if (a.load != b.load) na << a.load, nb << b.load;
    if (a.gpus != b.gpus) na << a.gpus, nb << b.gpus;
    const auto join = [](QStringList l) {
        l.removeAll(QString());
        return l.join(QStringLiteral(", "));
    };
    QString pa = join(na), pb = join(nb);
    if (pa.isEmpty() || pa == pb) pa = QObject::tr("pinned");
    if (pb.isEmpty() || pb == pa) pb = currentWord;
    return {pa, pb};
}

ServingCompareTable::ServingCompareTable(QWidget* parent) : QTableWidget(parent) {
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionMode(QAbstractItemView::NoSelection);
    setFocusPolicy(Qt::NoFocus);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setTextElideMode(Qt::ElideMiddle);
    setWordWrap(false);
    verticalHeader()->setVisible(false);
    horizontalHeader()->setHighlightSections(false);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void ServingCompareTable::fill(const QStringList& header, const QList<QStringList>& rows,
                               const QStringList& tips) {
    clear();
    setColumnCount(int(header.size()));
    setRowCount(int(rows.size()));
    setHorizontalHeaderLabels(header);
    for (int r = 0; r < rows.size(); ++r)
        for (int c = 0; c < rows[r].size() && c < header.size(); ++c) {
            auto* item = new QTableWidgetItem(rows[r][c]);
            item->setTextAlignment(c == 0 ? Qt::AlignLeft | Qt::AlignVCenter
                                          : Qt::AlignRight | Qt::AlignVCenter);
            if (c == 0 && r < tips.size()) item->setToolTip(tips[r]);
            setItem(r, c, item);
        }
    // The figures as wide as they need; the names take the rest, elided in the middle (their tooltips say
    // all).
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    resizeRowsToContents();
    int h = horizontalHeader()->sizeHint().height() + 2 * frameWidth();
    for (int r = 0; r < rowCount(); ++r) h += rowHeight(r);
    setFixedHeight(h);
}

QString ServingCompareTable::text() const {
    QStringList lines, cells;
    for (int c = 0; c < columnCount(); ++c)
        cells << (horizontalHeaderItem(c) ? horizontalHeaderItem(c)->text() : QString());
    lines << cells.join(u'\t');
    for (int r = 0; r < rowCount(); ++r) {
        cells.clear();
        for (int c = 0; c < columnCount(); ++c) cells << (item(r, c) ? item(r, c)->text() : QString());
        lines << cells.join(u'\t');
    }
    return lines.join(u'\n');
}

void ServingCompareTable::showRuns(const ShownRun& pinned, const ShownRun* current) {
    const QString slo = sloPercentileName(pinned.workload.sloPercentile);
    const QStringList header{QString(),      tr("TTFT p50"), tr("TTFT p99"), tr("TPOT p50"),
                             tr("TPOT p99"), tr("output"),   tr("in SLOs"),  tr("%1 SLOs").arg(slo)};
    const auto names = current ? distinctNames(pinned.tag, current->tag, tr("this run"))
                               : std::pair{tr("pinned"), QString()};
    const auto row = [](const QString& name, const ShownRun& s) {
        const SimResult& r = *s.run;
        const SloCheck c = checkSlo(r, s.workload);
        const bool slos = s.workload.ttftMs > 0 || s.workload.tpotMs > 0;
        return QStringList{name,
                           formatMs(r.ttftMs.p50),
                           formatMs(r.ttftMs.p99),
                           formatMs(r.tpotMs.p50),
                           formatMs(r.tpotMs.p99),
                           formatRate(r.outputTokensPerS),
                           slos ? QStringLiteral("%1%").arg(100.0 * r.sloAttainment, 0, 'f', 1) : tr("-"),
                           !slos   ? tr("none")
                           : c.met ? tr("met")
                                   : tr("missed (%1)").arg(qs(c.binding))};
    };
    QList<QStringList> rows{row(names.first, pinned)};
    QStringList tips{
        tr("Pinned: %1")
            .arg(QStringList{pinned.tag.plan, pinned.tag.load, pinned.tag.gpus}.join(QStringLiteral("; ")))};
    if (current && current->run) {
        rows << row(names.second, *current);
        tips << QStringList{current->tag.plan, current->tag.load, current->tag.gpus}.join(
            QStringLiteral("; "));
    }
    fill(header, rows, tips);
}

void ServingCompareTable::showSweeps(const ShownSweep& pinned, const ShownSweep* current) {
    const QString slo = sloPercentileName(pinned.workload.sloPercentile);
    const QStringList header{QString(),
                             tr("highest rate in SLOs"),
                             tr("output there"),
                             tr("TTFT %1").arg(slo),
                             tr("TPOT %1").arg(slo),
                             tr("first miss")};
    const auto names = current ? distinctNames(pinned.tag, current->tag, tr("this sweep"))
                               : std::pair{tr("pinned"), QString()};
    const auto row = [](const QString& name, const ShownSweep& s) {
        const std::vector<SweepPoint>& pts = s.sweep.points;
        const int best = highestMeeting(pts);
        QStringList cells{name};
        if (best < 0) {
            cells << tr("none of %1").arg(pts.size()) << tr("-") << tr("-") << tr("-");
        } else {
            const SweepPoint& p = pts[size_t(best)];
            cells << rateText(p.rate) << formatRate(p.outputTokensPerS) << formatMs(p.slo.ttftMs)
                  << formatMs(p.slo.tpotMs);
        }
        // The lowest rate above the best that misses, and what binds there.
        const SweepPoint* miss = nullptr;
        for (const SweepPoint& p : pts)
            if (!p.slo.met && (best < 0 || p.rate > pts[size_t(best)].rate) && (!miss || p.rate < miss->rate))
                miss = &p;
        cells << (miss ? QStringLiteral("%1 (%2)").arg(rateText(miss->rate), qs(miss->slo.binding))
                       : tr("-"));
        return cells;
    };
    const auto tip = [](const ShownSweep& s) {
        return QStringList{s.tag.plan, s.tag.load, s.tag.gpus}.join(QStringLiteral("; "));
    };
    QList<QStringList> rows{row(names.first, pinned)};
    QStringList tips{tr("Pinned: %1").arg(tip(pinned))};
    if (current) {
        rows << row(names.second, *current);
        tips << tip(*current);
    }
    fill(header, rows, tips);
}

} // namespace sp::views
