#include "views/runpanel.h"

#include "views/format.h"

#include <QHBoxLayout>
#include <QHash>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace sp::views {

namespace {
QString describe(const QString& name) {
    static const QHash<QString, QString> d{
        {QStringLiteral("megatron"),
         QObject::tr("The standard recipe: TP inside a node, column/row linears, sequence "
                     "parallel norms, EP for experts, the smallest PP that fits (one evaluation)")},
        {QStringLiteral("exhaustive"),
         QObject::tr("Every valid plan: the true optimum, for small spaces only (ignores the budget)")},
        {QStringLiteral("random"), QObject::tr("Uniformly random valid plans")},
        {QStringLiteral("sa"),
         QObject::tr("Simulated annealing: parallel chains, geometric cooling, restarts")},
        {QStringLiteral("ga"),
         QObject::tr("Genetic algorithm: tournament selection, crossover, mutation, elitism")},
        {QStringLiteral("rl"),
         QObject::tr("Learn to Shard, the method of the paper this planner follows (arXiv 2509.00217): a "
                     "policy attending over the elite plans, trained with PPO; half of each batch refines "
                     "the elite plans by one- and two-decision moves")}};
    return d.value(name, QObject::tr("Searcher %1").arg(name));
}

/// The name shown in the list: the searcher's own (as the chart and the elite table name it), with the
/// method's name where the short one does not say it.
QString label(const QString& name) {
    if (name == QLatin1String("rl")) return QObject::tr("rl — Learn to Shard");
    return name;
}

constexpr int kNameRole = Qt::UserRole;
} // namespace

RunPanel::RunPanel(QWidget* parent) : QWidget(parent) {
    m_list = new QTreeWidget(this);
    m_list->setColumnCount(3);
    m_list->setHeaderLabels({tr("Searcher"), tr("Evals"), tr("Best")});
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setSelectionMode(QAbstractItemView::NoSelection);
    m_list->setFocusPolicy(Qt::NoFocus);
    m_list->header()->setStretchLastSection(true);
    m_list->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_list->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_list->setToolTip(tr("Check the searchers to run side by side on the same budget"));

    m_budget = new QSpinBox(this);
    m_budget->setRange(1, 100'000'000);
    m_budget->setValue(2000);
    m_budget->setSingleStep(500);
    m_budget->setGroupSeparatorShown(true);
    m_budget->setSuffix(tr(" evaluations"));
    m_budget->setToolTip(tr("Distinct plans each searcher may evaluate"));
    m_seed = new QSpinBox(this);
    m_seed->setRange(0, std::numeric_limits<int>::max());
    m_seed->setValue(1);
    m_seed->setToolTip(tr("Random seed: the same seed and budget give the same result"));

    m_start = new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Start"), this);
    m_start->setToolTip(tr("Run the checked searchers (Ctrl+R)"));
    m_start->setDefault(true);
    m_stop = new QPushButton(style()->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this);
    m_stop->setToolTip(tr("Stop the run, keeping the best plans found so far (Esc)"));
    m_stop->setEnabled(false);
    connect(m_start, &QPushButton::clicked, this, &RunPanel::startRequested);
    connect(m_stop, &QPushButton::clicked, this, &RunPanel::stopRequested);

    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    m_progress->setFormat(tr("idle"));
    m_rate = new QLabel(this);
    m_rate->setStyleSheet(QStringLiteral("color: #4b5563;"));
    m_rate->setWordWrap(true);

    // Budget and seed on one row: the scenario panel above keeps the height (its constraints unscrolled).
    auto* form = new QHBoxLayout;
    form->setContentsMargins(0, 0, 0, 0);
    form->addWidget(new QLabel(tr("Budget"), this));
    form->addWidget(m_budget, 3);
    form->addWidget(new QLabel(tr("Seed"), this));
    form->addWidget(m_seed, 1);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_start, 1);
    buttons->addWidget(m_stop, 1);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(6, 6, 6, 6);
    lay->addWidget(m_list, 1);
    lay->addLayout(form);
    lay->addLayout(buttons);
    lay->addWidget(m_progress);
    lay->addWidget(m_rate);
}

void RunPanel::setSearchers(const QStringList& names, const QStringList& checked) {
    m_list->clear();
    for (const QString& n : names) {
        auto* it = new QTreeWidgetItem(m_list, {label(n), QString(), QString()});
        it->setData(0, kNameRole, n);
        it->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        it->setCheckState(0, checked.contains(n) ? Qt::Checked : Qt::Unchecked);
        it->setToolTip(0, describe(n));
        it->setForeground(0, searcherColor(n).darker(130));
        it->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
        it->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
    }
    const int row = names.isEmpty() ? m_list->fontMetrics().height() + 6 : m_list->sizeHintForRow(0);
    m_list->setFixedHeight(m_list->header()->sizeHint().height() + int(names.size()) * row +
                           2 * m_list->frameWidth() + 2);
}

QStringList RunPanel::searchers() const {
    QStringList out;
    for (int i = 0; i < m_list->topLevelItemCount(); ++i)
        out << m_list->topLevelItem(i)->data(0, kNameRole).toString();
    return out;
}

QStringList RunPanel::selectedSearchers() const {
    QStringList out;
    for (int i = 0; i < m_list->topLevelItemCount(); ++i)
        if (m_list->topLevelItem(i)->checkState(0) == Qt::Checked)
            out << m_list->topLevelItem(i)->data(0, kNameRole).toString();
    return out;
}

void RunPanel::setSelectedSearchers(const QStringList& names) {
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        QTreeWidgetItem* it = m_list->topLevelItem(i);
        it->setCheckState(0, names.contains(it->data(0, kNameRole).toString()) ? Qt::Checked : Qt::Unchecked);
    }
}

qint64 RunPanel::budget() const {
    return m_budget->value();
}
void RunPanel::setBudget(qint64 evaluations) {
    m_budget->setValue(int(std::min<qint64>(evaluations, m_budget->maximum())));
}
quint64 RunPanel::seed() const {
    return quint64(m_seed->value());
}
void RunPanel::setSeed(quint64 seed) {
    m_seed->setValue(int(std::min<quint64>(seed, quint64(m_seed->maximum()))));
}

void RunPanel::setRunning(bool running) {
    m_running = running;
    m_start->setEnabled(!running);
    m_stop->setEnabled(running);
    m_list->setEnabled(!running);
    m_budget->setEnabled(!running);
    m_seed->setEnabled(!running);
}

QTreeWidgetItem* RunPanel::itemOf(const QString& name) const {
    for (int i = 0; i < m_list->topLevelItemCount(); ++i)
        if (m_list->topLevelItem(i)->data(0, kNameRole).toString() == name) return m_list->topLevelItem(i);
    return nullptr;
}

void RunPanel::resetStatus() {
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        QTreeWidgetItem* it = m_list->topLevelItem(i);
        it->setText(1, QString());
        it->setText(2, QString());
        it->setToolTip(2, QString());
    }
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_progress->setFormat(tr("idle"));
    m_rate->clear();
}

void RunPanel::setSearcherStatus(const QString& name, qint64 evaluations, double best, const QString& note) {
    QTreeWidgetItem* it = itemOf(name);
    if (!it) return;
    it->setText(1, formatInteger(double(evaluations)));
    it->setText(2, !note.isEmpty() ? note : best > 0 ? formatCompact(best) : QStringLiteral("-"));
    it->setToolTip(2, note.isEmpty() ? (best > 0 ? formatRate(best) : tr("no feasible plan yet")) : note);
}

void RunPanel::setProgress(qint64 done, qint64 total, double evalsPerSecond, double secondsLeft) {
    // QProgressBar holds ints: scale large totals.
    const double scale = total > 1'000'000'000 ? double(total) / 1e9 : 1.0;
    m_progress->setRange(0, int(double(std::max<qint64>(1, total)) / scale));
    m_progress->setValue(int(double(std::min(done, total)) / scale));
    m_progress->setFormat(tr("%1 of %2").arg(formatInteger(double(done)), formatInteger(double(total))));
    QString t = tr("%1 evaluations/s").arg(formatInteger(evalsPerSecond));
    if (secondsLeft >= 0) t += tr(" \u00b7 %1 left").arg(formatDuration(secondsLeft));
    m_rate->setText(t);
}

void RunPanel::setFinished(const QString& text) {
    m_progress->setValue(m_progress->maximum());
    m_progress->setFormat(tr("done"));
    m_rate->setText(text);
}

void RunPanel::setStopped(qint64 done, qint64 total, const QString& text) {
    setProgress(done, std::max(done, total), 0, -1); // the bar as far as the run got
    m_progress->setFormat(
        tr("stopped at %1 of %2")
            .arg(formatInteger(double(done)), formatInteger(double(std::max(done, total)))));
    m_rate->setText(text);
}

QString RunPanel::searcherLabel(const QString& name) const {
    const QTreeWidgetItem* it = itemOf(name);
    return it ? it->text(0) : QString();
}

QString RunPanel::searcherToolTip(const QString& name) const {
    const QTreeWidgetItem* it = itemOf(name);
    return it ? it->toolTip(0) : QString();
}

QString RunPanel::rateText() const {
    return m_rate->text();
}

} // namespace sp::views
