#pragma once
// The main window's menus, toolbar and shortcuts. Each action is registered under a name
// (MainWindow::action) so tests and scripts can trigger it.

#include <QString>

namespace sp::app {

class MainWindow;

class WindowActions {
public:
    /// Builds the menu bar and the toolbar of `w`.
    static void build(MainWindow& w);
    /// Help > Keyboard Shortcuts (F1): every shortcut of the menus, and the views' zoom keys.
    static QString shortcutsHelp();
};

} // namespace sp::app
