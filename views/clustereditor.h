#pragma once
// The cluster editor: the GPU type from the built-in database (resources/gpus.yaml) with its figures and
// their source, the nodes (NVLink domains), GPUs per domain and per host, the links (NVLink, NIC); saved as a
// cluster file. Every field is checked as the cluster file's reader checks it: a field that does not validate
// is outlined with its message, keeps its text, and leaves the cluster at its last valid value. The price per
// GPU-hour gets its field once Cluster and the cluster file carry one (its place: the constructor).

#include "core/io/gpudb.h"
#include "core/model/cluster.h"

#include <QDialog>
#include <QHash>

#include <functional>

class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;

namespace sp::views {

/// What differs between two clusters, in words a user checks against the panel: "nodes 64 → 18",
/// "GPU H100 SXM5 80GB → B200 180GB (HGX B200)", "NVLink 450 → 900 GB/s per GPU", ... Empty when equal.
QStringList clusterChanges(const Cluster& before, const Cluster& after);

/// The database entry whose figures the cluster's GPU has, or nullptr (a GPU of the cluster file's own).
const GpuSpec* databaseGpu(const Gpu& g);

/// The cluster with `spec`'s GPU as a cluster file's `gpu: <id>` gives it: its figures, its NVLink link and
/// domain, its NIC, and its family's fitted efficiency factors; nodes and the name are kept, and the host
/// size where it still divides the domain.
Cluster withGpu(const Cluster& c, const GpuSpec& spec);

/// The file name a cluster is offered under: "18x8 B200 HGX" -> "18x8-b200-hgx.yaml".
QString clusterFileName(const Cluster& c);

/// Writes `c` as a cluster file, atomically (a failed write leaves no half file). On error: false and the
/// message in `error`.
bool saveClusterFile(const Cluster& c, const QString& path, QString* error = nullptr);

class ClusterEditor : public QDialog {
    Q_OBJECT
public:
    /// Asks for a file to save to: (title, proposed file name, filter) -> path, or empty to cancel.
    using AskPath = std::function<QString(const QString&, const QString&, const QString&)>;

    explicit ClusterEditor(const Cluster& c, QWidget* parent = nullptr);

    /// The edited cluster: the last valid value of every field.
    const Cluster& cluster() const { return m_cluster; }
    bool isValid() const { return m_errors.isEmpty(); }
    /// The messages of the fields that do not validate.
    QStringList errors() const;

    /// Test access: the GPU type box (database GPUs; first, the cluster's own GPU where it is none of them),
    /// a field's line edit ("name", "nodes", "gpus_per_node", "gpus_per_host", "nvlink_name",
    /// "nvlink_gb_s", "nvlink_latency_us", "mesh_link_gb_s", "nic_name", "nic_gbit_s", "nic_latency_us") and
    /// the message under it, the note saying what the last GPU choice changed, and the GPU figures shown.
    QComboBox* gpuCombo() const { return m_gpu; }
    QLineEdit* field(const QString& key) const;
    QString fieldError(const QString& key) const;
    QString gpuNote() const;
    QString figuresText() const;
    QPushButton* applyButton() const;
    /// Chooses a database GPU by id, as picking it in the box does; false when unknown.
    bool chooseGpu(const QString& id);

    void setAskPath(AskPath ask) { m_askPath = std::move(ask); }
    /// Saves the edited cluster; refused (false, with the message) while a field is invalid.
    bool saveAs(const QString& path, QString* error = nullptr);

    void done(int r) override;

protected:
    void showEvent(QShowEvent* e) override;

signals:
    /// The cluster was written to `path`.
    void saved(const QString& path, const sp::Cluster& cluster);

private:
    struct Field {
        QLineEdit* edit = nullptr;
        QLabel* error = nullptr;
        QString label;
    };
    QWidget* addField(QFormLayout* form, const QString& key, const QString& label, const QString& tip,
                      const QString& placeholder = {});
    void fillGpus();
    void gpuChosen(int index);
    void showCluster(); ///< the fields' texts from m_cluster
    void validate();    ///< m_cluster from the fields' texts, where they all validate
    void showFigures();
    void fitHeight(); ///< grows the dialog to its word-wrapped texts' height at its width
    void saveDialog();

    Cluster m_cluster;
    Cluster m_original; ///< as the dialog opened: its GPU is listed first when it is not in the database
    bool m_hasOwnGpu = false;
    QHash<QString, Field> m_fields;
    QHash<QString, QString> m_errors; ///< field key -> message
    QComboBox* m_gpu = nullptr;
    QLabel* m_gpuNote = nullptr;
    QFormLayout* m_figures = nullptr;
    QFormLayout* m_sources = nullptr; ///< the figures' long rows: efficiency, price, source
    QLabel* m_summary = nullptr;
    QLabel* m_status = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    AskPath m_askPath;
    bool m_loading = false;
    /// The name field's text while it follows the GPU and the counts (a name that counts the cluster, "32x8
    /// H100 SXM", at first; empty: the name is the user's); a name the user types differs from it and stays.
    QString m_followedName;
    QString generatedName() const;
    void followName();
};

} // namespace sp::views
