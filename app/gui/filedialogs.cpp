#include "filedialogs.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>

namespace sp::app {

namespace {
const QString kKey = QStringLiteral("dialogs/lastDir");

/// The first suffix of a filter such as "YAML plan (*.yaml *.yml)".
QString firstSuffix(const QString& filter) {
    const auto m = QRegularExpression(QStringLiteral("\\*\\.([A-Za-z0-9]+)")).match(filter);
    return m.hasMatch() ? m.captured(1) : QString();
}
} // namespace

FileDialogs::FileDialogs(QWidget* parent, QString fallbackDir, bool persist)
    : m_parent(parent), m_fallback(std::move(fallbackDir)), m_persist(persist) {
    if (m_persist) m_last = QSettings().value(kKey).toString();
}

QString FileDialogs::lastDir() const {
    if (!m_last.isEmpty() && QFileInfo(m_last).isDir()) return m_last;
    return m_fallback;
}

QString FileDialogs::saveDir() const {
    const QString dir = lastDir();
    const QString shipped = m_shipped.isEmpty() ? m_fallback : m_shipped;
    const QString samples = shipped.isEmpty() ? QString() : QDir(shipped).canonicalPath();
    const QString here = QDir(dir).canonicalPath();
    const bool inSamples =
        !samples.isEmpty() && (here == samples || here.startsWith(samples + QLatin1Char('/')));
    if (!inSamples) return dir;
    const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return !docs.isEmpty() && QFileInfo(docs).isDir() ? docs : QDir::homePath();
}

void FileDialogs::setLastDir(const QString& dir) {
    m_last = dir;
    if (m_persist) QSettings().setValue(kKey, dir);
}

QString FileDialogs::remember(const QString& path) {
    if (!path.isEmpty()) setLastDir(QFileInfo(path).absolutePath());
    return path;
}

QString FileDialogs::openFile(const QString& title, const QString& filter) {
    const QString dir = lastDir();
    if (m_answer) return remember(m_answer(title, dir, filter));
    return remember(QFileDialog::getOpenFileName(m_parent, title, dir, filter));
}

QString FileDialogs::saveFile(const QString& title, const QString& name, const QString& filter,
                              const QString& suffix) {
    const QString proposed = QDir(saveDir()).filePath(name);
    QString selected;
    QString path = m_answer ? m_answer(title, proposed, filter)
                            : QFileDialog::getSaveFileName(m_parent, title, proposed, filter, &selected);
    if (path.isEmpty()) return {};
    if (QFileInfo(path).suffix().isEmpty()) {
        const QString s = !selected.isEmpty() ? firstSuffix(selected)
                          : !suffix.isEmpty() ? suffix
                                              : firstSuffix(filter);
        if (!s.isEmpty()) path += QLatin1Char('.') + s;
    }
    return remember(path);
}

} // namespace sp::app
