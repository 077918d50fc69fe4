#pragma once
// The scenario panel: pick or open the model, cluster and workload; edit their key fields with inline
// validation; and the constraint editor (allowed degrees per axis, pinned operator choices, memory headroom).
// It owns an edited copy of the scenario; a field that does not validate is highlighted with its message and
// leaves the copy unchanged.

#include "core/io/formats.h"
#include "core/model/scenario.h"
#include "views/clustereditor.h"
#include "views/degreechecks.h"

#include <QHash>
#include <QPointer>
#include <QWidget>

#include <array>
#include <functional>
#include <optional>
#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QToolButton;

namespace sp::views {

class ScenarioEditor : public QWidget {
    Q_OBJECT
public:
    /// `samplesDir` holds models/, clusters/ and workloads/ listed in the pickers.
    explicit ScenarioEditor(const QString& samplesDir, QWidget* parent = nullptr);

    /// Shows a scenario (no edited() signal).
    void setScenario(const Scenario& s);
    /// The edited scenario: the last valid value of every field.
    const Scenario& scenario() const { return m_scenario; }
    /// Whether every field holds a valid value; errors() lists the messages of those that do not.
    bool isValid() const;
    QStringList errors() const;

    /// Replace one part (from File > Open or a picker); emit edited(). `origin`: the file it came from. A
    /// cluster is taken as its file gives it (a sample's name states its shape: b200-18x8 is 18 nodes of 8),
    /// and the note under the Cluster box lists what that changed (clusterNote()).
    void replaceModel(const Model& m, const QString& origin);
    void replaceCluster(const Cluster& c, const QString& origin);
    void replaceWorkload(const Workload& w, const QString& origin);
    void replaceConstraints(const Constraints& c);
    /// Loads a model, cluster, workload or constraints file into the scenario. On error: false, the message
    /// shown inline and in `error`.
    bool loadPart(FileKind kind, const QString& path, QString* error = nullptr);

    /// Opens the cluster editor on the scenario's cluster (raises it when open); "Apply to Scenario" replaces
    /// the cluster as an edit (edited()).
    void editCluster();
    /// The open cluster editor, or nullptr.
    ClusterEditor* clusterEditor() const { return m_clusterDialog; }
    /// Writes the scenario's cluster as a cluster file (atomically); the Cluster box then names that file.
    bool saveCluster(const QString& path, QString* error = nullptr);
    /// Asks where to save a cluster: (title, proposed file name, filter) -> path or empty; default: a file
    /// dialog.
    using AskPath = std::function<QString(const QString&, const QString&, const QString&)>;
    void setAskSavePath(AskPath ask) { m_askSavePath = std::move(ask); }
    /// What the last change of cluster (a picked or opened file, the cluster editor) changed, as shown
    /// under the Cluster box; empty when hidden.
    QString clusterNote() const;
    /// A part's picker (FileKind::Model, Cluster or Workload): the sample files, or the part's own entry
    /// ("b200-18x8 (edited)", "<name> (custom)") when it is none of them.
    QComboBox* pickerCombo(FileKind kind) const;

    /// Test access: the line edit of a key field ("nodes", "gpus_per_node", "input_tokens", "output_tokens",
    /// "ttft_ms", "tpot_ms"), and the message shown under it.
    QLineEdit* field(const QString& key) const;
    QString fieldError(const QString& key) const;
    /// The message shown under a picker after a failed open (empty when none).
    QString pickerError(FileKind kind) const;
    DegreeChecks* degreeChecks(Axis a) const;
    QComboBox* pinCombo(Op op) const;
    /// Layers per stage: balanced or tuned (Constraints::stageSplit).
    QComboBox* stageSplitCombo() const { return m_stageSplit; }
    /// Operator choices per type, per stage or per layer group (Constraints::granularity), and the layer
    /// groups' count (Constraints::layerGroups, enabled for per layer group only).
    QComboBox* granularityCombo() const { return m_granularity; }
    QSpinBox* layerGroupsSpin() const { return m_layerGroups; }
    /// The prefill token budget: the engines' default (0) or searched (1) (Constraints::searchPrefillBudget;
    /// disabled for decode).
    QComboBox* prefillBudgetCombo() const { return m_prefillBudget; }
    /// Speculative decoding (Constraints::specPolicy, specPin): searched (0), off (1), or pinned to one of
    /// the options the scenario offers (speculativeOptions), labelled "mtp x1". A pin the scenario cannot
    /// run (after a change of model or workload) stays listed, outlined red, with its reason under the row.
    QComboBox* specCombo() const { return m_spec; }
    /// Speculative decoding's acceptance rates (Workload::acceptance): the method whose rates the
    /// "acceptance_rates" field edits (the model's methods; item data: the SpecMethod). The field takes
    /// "0.8, 0.7, 0.6", each in (0, 1]; empty: the model's default, shown as its placeholder.
    QComboBox* acceptanceMethodCombo() const { return m_acceptMethod; }

signals:
    /// A valid change was made to the scenario.
    void edited();
    /// A file could not be loaded (the message has file, line and field).
    void failed(const QString& message);

private:
    struct Field {
        QLineEdit* edit = nullptr;
        QLabel* error = nullptr;
        std::function<QString(const QString&)> apply; ///< validates and applies; returns the error or empty
        std::function<QString()> show;                ///< the current value as text
    };
    struct Picker {
        explicit Picker(FileKind k) : kind(k) {}
        FileKind kind;
        QComboBox* combo = nullptr;
        QLabel* info = nullptr;
        QLabel* error = nullptr;
        QStringList paths;
    };
    QWidget* buildPicker(Picker& p, const QString& subdir, const QString& what);
    /// A validated line edit with its error note under it, added to `form` (or, when null, returned for the
    /// caller to place).
    QWidget* addField(QFormLayout* form, const QString& key, const QString& label, const QString& tip,
                      std::function<QString(const QString&)> apply, std::function<QString()> show,
                      const QString& placeholder = {});
    void setFieldError(Field& f, const QString& error);
    void refreshFields();
    void refreshInfo();
    void refreshPickers();
    /// The Cluster box: the sample equal to the scenario's cluster, else the file it was opened from or
    /// saved to, else "<sample> (edited)" for a sample's cluster changed since, else "<name> (custom)".
    void refreshClusterPicker();
    void showClusterNote(const QString& what, const Cluster& before);
    /// The Model, Cluster and Workload groups' rows: the picker with its info and error notes, and the key
    /// fields.
    void buildModel(QFormLayout* form);
    void buildCluster(QFormLayout* form);
    void buildWorkload(QFormLayout* form);
    void buildConstraints(QFormLayout* form);
    void rebuildConstraints();
    void refreshPinToggle();
    /// Lists the spec combo's items for the scenario and selects its policy; refreshSpecCheck marks a pin
    /// the scenario cannot run.
    void refreshSpec();
    void refreshSpecCheck();
    /// The acceptance row: the model's methods, and the chosen one's rates (a text under an error stays).
    void refreshAcceptance();
    SpecMethod acceptanceMethod() const;
    void checkDtypes();
    void constraintsEdited();
    void refreshSpace();
    void pickerActivated(Picker& p, int index);
    void openPart(Picker& p);
    void changed();

    QString m_samplesDir;
    Scenario m_scenario;
    QHash<QString, Field> m_fields;
    Picker m_model{FileKind::Model}, m_cluster{FileKind::Cluster}, m_workload{FileKind::Workload};
    QComboBox* m_phase = nullptr;
    QComboBox* m_dtypes[3] = {};
    QLabel* m_dtypeError = nullptr;
    std::array<DegreeChecks*, kAxisCount> m_degrees{};
    std::array<QComboBox*, kOpCount> m_pins{};
    QFormLayout* m_pinForm = nullptr;
    QToolButton* m_pinToggle = nullptr; ///< shows or folds m_pinPanel, naming the pinned operators
    QWidget* m_pinPanel = nullptr;
    QFormLayout* m_constraintForm = nullptr;
    QComboBox* m_memoryRule = nullptr;
    QDoubleSpinBox* m_headroom = nullptr; ///< the memory fraction (0: the engine's default)
    QComboBox* m_stageSplit = nullptr;
    QComboBox* m_granularity = nullptr;
    QSpinBox* m_layerGroups = nullptr;
    QComboBox* m_prefillBudget = nullptr;
    QComboBox* m_spec = nullptr;
    QLabel* m_specError = nullptr;
    QComboBox* m_acceptMethod = nullptr;
    QWidget* m_acceptRow = nullptr;
    QSpinBox* m_gpus = nullptr;
    QLabel* m_spaceInfo = nullptr;
    bool m_loading = false;
    QLabel* m_clusterNote = nullptr;
    std::vector<std::optional<Cluster>> m_sampleClusters; ///< m_cluster.paths read once (nullopt: broken)
    QString m_clusterFile; ///< the cluster file last opened or saved outside the samples
    Cluster m_clusterFileCluster;
    QPointer<ClusterEditor> m_clusterDialog;
    AskPath m_askSavePath;
};

} // namespace sp::views
