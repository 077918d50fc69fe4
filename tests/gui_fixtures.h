#pragma once
// Shared by the window suites (tst_gui, tst_gui_files, tst_layout): options without settings or prompts,
// the samples, a short search, typing and wheel turns as the user makes them, and the CLI.

#include "core/io/formats.h"
#include "mainwindow.h"
#include "views/runpanel.h"

#include <QApplication>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

namespace sp::testing {

using sp::app::MainWindow;
inline const QString kSamples = QStringLiteral(SHARDPLAN_SAMPLES_DIR);
inline const QString kDefault = kSamples + QStringLiteral("/scenarios/llama-3.1-8b-h100-1x8.yaml");
/// The serving sample with p99 SLOs the Serving tab's tests run on.
inline const QString kP99 = kSamples + QStringLiteral("/scenarios/llama-3.1-70b-h200-1x8-chat-p99.yaml");

inline MainWindow::Options testOptions() {
    MainWindow::Options o;
    o.persistSettings = false;
    o.confirmClose = false;
    return o;
}

#ifdef SHARDPLAN_CLI
struct Run {
    int code = -1;
    QString out, err;
};
inline Run shardplan(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(SHARDPLAN_CLI), args);
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}
#endif

inline QString readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

/// A copy of the file at `path` with each `from` replaced by `to`, written to `out` (a broken input made from
/// a good one); false where `from` is not in it or a file does not open.
inline bool writeEdited(const QString& path, const QString& from, const QString& to, const QString& out) {
    QString text = readAll(path);
    if (!text.contains(from)) return false;
    text.replace(from, to);
    QFile f(out);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text.toUtf8()) >= 0;
}

/// A wheel turn over a widget, as the mouse would send it (through the application, so filters see it).
inline bool wheelOver(QWidget* w, int delta) {
    const QPoint c = w->rect().center();
    QWheelEvent e(QPointF(c), QPointF(w->mapToGlobal(c)), QPoint(), QPoint(0, delta), Qt::NoButton,
                  Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(w, &e);
    return e.isAccepted();
}

inline void typeInto(QLineEdit* e, const QString& text) {
    e->setFocus();
    e->selectAll();
    QTest::keyClick(e, Qt::Key_Backspace);
    QTest::keyClicks(e, text);
}

/// The push button of `w` (or its children) that reads `text`; null where none does.
inline QPushButton* button(QWidget* w, const QString& text) {
    for (auto* b : w->findChildren<QPushButton*>())
        if (b->text() == text) return b;
    return nullptr;
}

/// Qt's warnings about ambiguous shortcuts (two actions on one key run neither), collected while a test runs
/// (and still printed): install collectAmbiguous in init(), restore g_previousHandler in cleanup().
inline QStringList g_ambiguous;
inline QtMessageHandler g_previousHandler = nullptr;
inline void collectAmbiguous(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (message.contains(QLatin1String("Ambiguous shortcut"))) g_ambiguous << message;
    if (g_previousHandler) g_previousHandler(type, context, message);
}

/// Runs a short search (random + sa) and waits for it to end.
inline bool shortSearch(MainWindow& w, qint64 budget = 300) {
    w.runPanel()->setSelectedSearchers({QStringLiteral("random"), QStringLiteral("sa")});
    w.runPanel()->setBudget(budget);
    QSignalSpy done(&w, &MainWindow::searchFinished);
    w.startSearch();
    return done.wait(120000) || done.count() > 0;
}

/// The shown labels under `w` whose text does not fit them: one line wider than the label, or word-wrapped
/// lines taller than it at its width ("'Efficiency' needs 340x54 px, has 340x36"). A label elided on
/// purpose ("...", the whole text in its tooltip) is left out.
inline QStringList cutLabels(QWidget* w) {
    QStringList out;
    for (QLabel* l : w->findChildren<QLabel*>()) {
        if (!l->isVisible() || l->text().isEmpty()) continue;
        if (l->text().endsWith(QChar(0x2026)) && !l->toolTip().isEmpty()) continue;
        const QSize hint = l->sizeHint();
        const QSize need = l->wordWrap() ? QSize(l->width(), l->heightForWidth(l->width())) : hint;
        if (need.width() > l->width() || need.height() > l->height())
            out << QStringLiteral("'%1' needs %2x%3 px, has %4x%5")
                       .arg(l->text().left(60))
                       .arg(need.width())
                       .arg(need.height())
                       .arg(l->width())
                       .arg(l->height());
    }
    return out;
}

/// The default sample on two nodes (a disaggregated split needs two), written to `dir`.
inline QString twoNodeScenario(const QTemporaryDir& dir) {
    auto loaded = loadScenario(kDefault.toStdString());
    if (!loaded) qFatal("%s", loaded.error().str().c_str());
    Scenario s = loaded.value();
    s.cluster.nodes = 2;
    s.name = "llama-3.1-8b-h100-2x8";
    const QString path = dir.filePath("llama-3.1-8b-h100-2x8.yaml");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(QByteArray::fromStdString(toYaml(s)));
    return path;
}

} // namespace sp::testing
