#pragma once
// File > Export > Launch Files...: the engine, its version (the newest by default), Dynamo's worker engine,
// whether a layout the version cannot run is adapted or refused, and the folder that receives one script
// per node, plan.yaml and NOTES.txt (as `shardplan export --out-dir`).

#include "core/export/launch.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QPushButton;

namespace sp::app {

class LaunchExportDialog : public QDialog {
    Q_OBJECT
public:
    explicit LaunchExportDialog(const QString& startDir, QWidget* parent = nullptr);

    ExportOptions options() const;
    QString directory() const;
    /// For tests and for reopening with the last choices.
    void setOptions(const ExportOptions& o);
    void setDirectory(const QString& dir);

    QComboBox* engineBox() const { return m_engine; }
    QComboBox* versionBox() const { return m_version; }
    QComboBox* workerBox() const { return m_worker; }

private:
    void fillVersions();
    void updateOk();

    QComboBox* m_engine = nullptr;
    QComboBox* m_version = nullptr;
    QComboBox* m_worker = nullptr;
    QCheckBox* m_adapt = nullptr;
    QLineEdit* m_dir = nullptr;
    QPushButton* m_ok = nullptr;
};

} // namespace sp::app
