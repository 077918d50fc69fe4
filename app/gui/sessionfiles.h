#pragma once
// Saving the window's state as a session file and restoring it: the scenario (as edited), the search
// settings, every searcher's results, the opened plan and the selection, the Pareto sweep, and the Serving
// tab (its inputs, the run drawn and the capacity answer).

#include <QString>
#include <QStringList>

namespace sp::app {

class MainWindow;
struct SessionPareto;
struct SessionServing;

class SessionFiles {
public:
    static bool save(MainWindow& w, const QString& path);
    /// On bad input: false, the error shown, the window unchanged.
    static bool open(MainWindow& w, const QString& path);

private:
    /// The session's Pareto sweep into the Pareto tab; points left out are added to `dropped`.
    static void restorePareto(MainWindow& w, const SessionPareto& saved, QStringList& dropped);
    /// The session's Serving tab: its inputs, then its run and capacity answer drawn as they were.
    static QString restoreServing(MainWindow& w, const SessionServing& saved);
};

} // namespace sp::app
