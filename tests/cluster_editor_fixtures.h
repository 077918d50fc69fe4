#pragma once
// Fixtures of the cluster editor's tests (tst_cluster_editor, tst_cluster_editor_layout): a sample cluster, typing
// into a field as the user does, and a screenshot when SHARDPLAN_SHOTS names a folder.
#include "core/io/formats.h"
#include "gui_fixtures.h"
#include "views/clustereditor.h"

#include <QDir>
#include <QLineEdit>
#include <QTest>

namespace sp::testing {

inline Cluster sampleCluster(const QString& name) {
    auto c =
        loadCluster((kSamples + QStringLiteral("/clusters/") + name + QStringLiteral(".yaml")).toStdString());
    if (!c) qFatal("%s", c.error().str().c_str());
    return c.value();
}

/// Types into a dialog field as the user does (select all, type).
inline void typeField(views::ClusterEditor& d, const char* key, const QString& text) {
    QLineEdit* e = d.field(QLatin1String(key));
    QVERIFY2(e, key);
    typeInto(e, text);
}

inline void shot(QWidget* w, const QString& name) {
    if (const QByteArray dir = qgetenv("SHARDPLAN_SHOTS"); !dir.isEmpty()) {
        // Widgets added to a shown layout are shown, and word-wrapped notes laid out, from queued events.
        QTest::qWait(50);
        w->grab().save(QDir(QString::fromLocal8Bit(dir)).filePath(name));
    }
}

} // namespace sp::testing
