#pragma once
// Saving the window's state as a session file and restoring it: the scenario (as edited), the search
// settings, every searcher's results, the opened plan and the selection.

#include <QString>

namespace sp::app {

class MainWindow;

class SessionFiles {
public:
    static bool save(MainWindow& w, const QString& path);
    /// On bad input: false, the error shown, the window unchanged.
    static bool open(MainWindow& w, const QString& path);
};

} // namespace sp::app
