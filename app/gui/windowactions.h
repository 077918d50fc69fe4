#pragma once
// The main window's menus, toolbar and shortcuts. Each action is registered under a name
// (MainWindow::action) so tests and scripts can trigger it.

namespace sp::app {

class MainWindow;

class WindowActions {
public:
    /// Builds the menu bar and the toolbar of `w`.
    static void build(MainWindow& w);
};

} // namespace sp::app
