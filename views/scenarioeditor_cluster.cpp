// The scenario editor's Cluster group: the cluster picker (samples, files opened or saved, "(edited)"), the
// cluster editor, the note of what a change of cluster changed, and the nodes and GPUs per node.
#include "views/scenarioeditor.h"

#include "views/clustereditor.h"
#include "views/format.h"
#include "views/scenarioeditor_p.h"

#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLayout>
#include <QToolButton>

namespace sp::views {

using editor::kNoticeStyle;
using editor::makeNote;
using editor::pairRow;

void ScenarioEditor::buildCluster(QFormLayout* cf) {
    QWidget* clusterRow = buildPicker(m_cluster, QStringLiteral("clusters"), tr("cluster"));
    auto* editCluster = new QToolButton(clusterRow);
    editCluster->setText(tr("Edit\u2026"));
    editCluster->setToolTip(tr("Edit the cluster: GPU type, nodes, GPUs per NVLink domain and host, network; "
                               "save it as a cluster file"));
    clusterRow->layout()->addWidget(editCluster);
    connect(editCluster, &QToolButton::clicked, this, &ScenarioEditor::editCluster);
    cf->addRow(clusterRow);
    cf->addRow(m_cluster.info);
    m_clusterNote = makeNote(this, kNoticeStyle);
    cf->addRow(m_clusterNote);
    cf->addRow(m_cluster.error);
    QWidget* nodes = addField(
        nullptr, QStringLiteral("nodes"), tr("Nodes"), tr("Nodes in the cluster (each an NVLink domain)"),
        [this](const QString& t) {
            qint64 v;
            QString e = parseWholeNumber(t, 1, 100000, v);
            // Collectives across nodes run over the NICs: a one-node cluster file may have none.
            if (e.isEmpty() && v > 1 && m_scenario.cluster.interNode.gbPerS <= 0)
                e = tr("the cluster has no NIC between nodes; give it one in the cluster editor (Edit...)");
            if (e.isEmpty()) m_scenario.cluster.nodes = int(v);
            return e;
        },
        [this] { return QString::number(m_scenario.cluster.nodes); });
    QWidget* perNode = addField(
        nullptr, QStringLiteral("gpus_per_node"), tr("GPUs per node"), tr("GPUs in one node's NVLink domain"),
        [this](const QString& t) {
            qint64 v;
            QString e = parseWholeNumber(t, 1, 1024, v);
            // A host's GPUs sit in one domain (an NVL72 rack: 18 hosts of 4), as the cluster file's reader
            // checks.
            const int host = m_scenario.cluster.gpusPerHost;
            if (e.isEmpty() && host > 0 && v % host != 0)
                e = tr("must be a multiple of the GPUs per host (%1): a host's GPUs sit in one NVLink "
                       "domain; "
                       "change the host size in the cluster editor (Edit...)")
                        .arg(host);
            if (e.isEmpty()) m_scenario.cluster.gpusPerNode = int(v);
            return e;
        },
        [this] { return QString::number(m_scenario.cluster.gpusPerNode); });
    cf->addRow(tr("Nodes"), pairRow(this, nodes, tr("GPUs per node"), perNode));
}

void ScenarioEditor::replaceCluster(const Cluster& c, const QString& origin) {
    const Cluster before = m_scenario.cluster;
    if (!origin.isEmpty() && !m_cluster.paths.contains(QFileInfo(origin).absoluteFilePath())) {
        m_clusterFile = QFileInfo(origin).absoluteFilePath();
        m_clusterFileCluster = c;
    }
    m_scenario.cluster = c;
    m_cluster.error->hide();
    setScenario(m_scenario);
    showClusterNote(origin.isEmpty() ? tr("Cluster replaced") : QFileInfo(origin).completeBaseName(), before);
    changed();
}

void ScenarioEditor::showClusterNote(const QString& what, const Cluster& before) {
    const QStringList changes = clusterChanges(before, m_scenario.cluster);
    m_clusterNote->setText(
        changes.isEmpty()
            ? QString()
            : tr("%1: %2. Edit > Undo takes it back.").arg(what, changes.join(QStringLiteral("; "))));
    m_clusterNote->setVisible(!changes.isEmpty());
}

QString ScenarioEditor::clusterNote() const {
    return m_clusterNote->isVisibleTo(this) ? m_clusterNote->text() : QString();
}

void ScenarioEditor::refreshClusterPicker() {
    if (m_sampleClusters.size() != size_t(m_cluster.paths.size())) {
        m_sampleClusters.clear();
        for (const QString& path : m_cluster.paths) {
            auto c = loadCluster(path.toStdString());
            m_sampleClusters.push_back(c.ok() ? std::optional<Cluster>(c.value()) : std::nullopt);
        }
    }
    const Cluster& now = m_scenario.cluster;
    QComboBox* combo = m_cluster.combo;
    const QSignalBlocker b(combo);
    combo->clear();
    int match = -1;
    QString edited, editedTip; // the file whose cluster this one was, before edits
    for (int i = 0; i < m_cluster.paths.size(); ++i) {
        const QString& path = m_cluster.paths[i];
        const QString name = QFileInfo(path).completeBaseName();
        const std::optional<Cluster>& c = m_sampleClusters[size_t(i)];
        if (c && *c == now) match = combo->count();
        if (c && edited.isEmpty() && c->name == now.name) {
            edited = name;
            editedTip = tr("%1, changed since it was read from %2: %3")
                            .arg(qs(now.name), QFileInfo(path).fileName(),
                                 clusterChanges(*c, now).join(QStringLiteral("; ")));
        }
        combo->addItem(name, path);
        combo->setItemData(combo->count() - 1, path, Qt::ToolTipRole);
    }
    if (match < 0 && !m_clusterFile.isEmpty()) {
        const QString name = QFileInfo(m_clusterFile).completeBaseName();
        if (m_clusterFileCluster == now) {
            combo->insertItem(0, name, m_clusterFile);
            combo->setItemData(0, m_clusterFile, Qt::ToolTipRole);
            match = 0;
        } else if (m_clusterFileCluster.name == now.name) {
            edited = name;
            editedTip = tr("%1, changed since it was read from %2: %3")
                            .arg(qs(now.name), QFileInfo(m_clusterFile).fileName(),
                                 clusterChanges(m_clusterFileCluster, now).join(QStringLiteral("; ")));
        }
    }
    if (match < 0) {
        if (!edited.isEmpty()) {
            combo->insertItem(0, tr("%1 (edited)").arg(edited));
            combo->setItemData(0, editedTip, Qt::ToolTipRole);
        } else {
            combo->insertItem(0, tr("%1 (custom)").arg(qs(now.name)));
            combo->setItemData(0, tr("%1: not one of the sample clusters").arg(qs(now.name)),
                               Qt::ToolTipRole);
        }
        match = 0;
    }
    combo->setCurrentIndex(match);
}

void ScenarioEditor::editCluster() {
    if (m_clusterDialog) {
        m_clusterDialog->raise();
        m_clusterDialog->activateWindow();
        return;
    }
    auto* dialog = new ClusterEditor(m_scenario.cluster, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (m_askSavePath) dialog->setAskPath(m_askSavePath);
    m_clusterDialog = dialog;
    connect(dialog, &ClusterEditor::saved, this, [this](const QString& path, const Cluster& c) {
        m_clusterFile = QFileInfo(path).absoluteFilePath();
        m_clusterFileCluster = c;
        refreshClusterPicker();
    });
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        const Cluster c = dialog->cluster();
        if (c == m_scenario.cluster) return;
        const Cluster before = m_scenario.cluster;
        m_scenario.cluster = c;
        m_cluster.error->hide();
        setScenario(m_scenario);
        showClusterNote(tr("Cluster editor"), before);
        changed();
    });
    dialog->open();
}

bool ScenarioEditor::saveCluster(const QString& path, QString* error) {
    if (!saveClusterFile(m_scenario.cluster, path, error)) return false;
    m_clusterFile = QFileInfo(path).absoluteFilePath();
    m_clusterFileCluster = m_scenario.cluster;
    refreshClusterPicker();
    return true;
}

} // namespace sp::views
