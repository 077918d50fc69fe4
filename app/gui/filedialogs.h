#pragma once
// The window's file dialogs: they open in the folder last used (remembered across runs when settings
// persist), offer a file name, and can be answered by a function instead (tests, scripting).

#include <QObject>
#include <QString>

#include <functional>

class QWidget;

namespace sp::app {

class FileDialogs {
public:
    /// Answers a dialog without showing it: (title, proposed path, filter) -> chosen path or empty (cancel).
    using Answer =
        std::function<QString(const QString& title, const QString& proposed, const QString& filter)>;

    FileDialogs(QWidget* parent, QString fallbackDir, bool persist);

    void setAnswer(Answer a) { m_answer = std::move(a); }
    /// The folder the next dialog opens in: the last one used, else the fallback.
    QString lastDir() const;
    /// The folder a save dialog proposes: lastDir(), unless that is inside the shipped folder (the program's
    /// own samples, read-only where installed: opening a sample made it the last folder), then the user's
    /// documents folder (their home where there is none).
    QString saveDir() const;
    /// The shipped folder save dialogs keep out of (default: the fallback folder).
    void setShippedDir(const QString& dir) { m_shipped = dir; }
    void setLastDir(const QString& dir);

    QString openFile(const QString& title, const QString& filter);
    /// `name`: the file name offered; a missing suffix becomes `suffix` (or the selected filter's first).
    QString saveFile(const QString& title, const QString& name, const QString& filter,
                     const QString& suffix = {});

private:
    QString remember(const QString& path);

    QWidget* m_parent;
    QString m_fallback;
    QString m_shipped;
    QString m_last;
    bool m_persist;
    Answer m_answer;
};

} // namespace sp::app
