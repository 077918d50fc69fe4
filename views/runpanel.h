#pragma once
// The run panel: which searchers to run side by side, the budget and the seed, Start and Stop, and the
// progress of the run (evaluations per second, time left, each searcher's count and best).

#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTreeWidget;
class QTreeWidgetItem;

namespace sp::views {

class RunPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunPanel(QWidget* parent = nullptr);

    /// Lists the searchers (in order), checking those in `checked`.
    void setSearchers(const QStringList& names, const QStringList& checked);
    QStringList searchers() const;
    QStringList selectedSearchers() const;
    void setSelectedSearchers(const QStringList& names);
    qint64 budget() const;
    void setBudget(qint64 evaluations);
    quint64 seed() const;
    void setSeed(quint64 seed);

    /// Enables Start or Stop.
    void setRunning(bool running);
    bool isRunning() const { return m_running; }
    /// Clears every searcher's status and the progress bar.
    void resetStatus();
    void setSearcherStatus(const QString& name, qint64 evaluations, double best, const QString& note = {});
    /// Overall progress; negative secondsLeft: unknown.
    void setProgress(qint64 done, qint64 total, double evalsPerSecond, double secondsLeft);
    /// The run ended: a full bar, "done", and `text` under it.
    void setFinished(const QString& text);
    /// The run was stopped: the bar as far as it got (`done` of the `total` evaluations planned), "stopped",
    /// and `text` under it.
    void setStopped(qint64 done, qint64 total, const QString& text);
    /// A searcher's row as shown: its label and tooltip.
    QString searcherLabel(const QString& name) const;
    QString searcherToolTip(const QString& name) const;

    QPushButton* startButton() const { return m_start; }
    QPushButton* stopButton() const { return m_stop; }
    QProgressBar* progressBar() const { return m_progress; }
    QString rateText() const;

signals:
    void startRequested();
    void stopRequested();

private:
    QTreeWidgetItem* itemOf(const QString& name) const;

    QTreeWidget* m_list = nullptr;
    QSpinBox* m_budget = nullptr;
    QSpinBox* m_seed = nullptr;
    QPushButton* m_start = nullptr;
    QPushButton* m_stop = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_rate = nullptr;
    bool m_running = false;
};

} // namespace sp::views
