// The cluster editor's functions on clusters (views/clustereditor.h): what differs between two, a database
// GPU put into one, and the file one is saved as.
#include "views/clustereditor.h"

#include "core/io/formats.h"
#include "views/format.h"

#include <QRegularExpression>

#include <cmath>

namespace sp::views {

namespace {
/// 3.35 -> "3.35", 1979 -> "1,979", 0.5 -> "0.5": figures as the database writes them, with separators.
QString num(double v) {
    if (v == std::floor(v) && std::abs(v) < 1e15) return formatInteger(v);
    return QString::number(v, 'g', 6);
}
} // namespace

QStringList clusterChanges(const Cluster& a, const Cluster& b) {
    QStringList out;
    const QString arrow = QStringLiteral(" \u2192 ");
    auto change = [&](const QString& what, const QString& x, const QString& y, const QString& unit = {}) {
        if (x != y) out << what + QLatin1Char(' ') + x + arrow + y + unit;
    };
    if (a.name != b.name)
        out << QObject::tr("name \u201c%1\u201d%2\u201c%3\u201d").arg(qs(a.name), arrow, qs(b.name));
    change(QObject::tr("nodes"), num(a.nodes), num(b.nodes));
    change(QObject::tr("GPUs per NVLink domain"), num(a.gpusPerNode), num(b.gpusPerNode));
    change(QObject::tr("GPUs per host"), num(a.hostGpus()), num(b.hostGpus()));
    if (a.gpus() != b.gpus()) change(QObject::tr("GPUs in all"), num(a.gpus()), num(b.gpus()));
    if (a.gpu.name != b.gpu.name)
        out << QObject::tr("GPU %1%2%3").arg(qs(a.gpu.name), arrow, qs(b.gpu.name));
    else if (!(a.gpu == b.gpu))
        out << QObject::tr("%1's figures").arg(qs(b.gpu.name));
    change(QObject::tr("HBM"), num(a.gpu.hbmGB), num(b.gpu.hbmGB), QObject::tr(" GB"));
    change(QObject::tr("HBM bandwidth"), num(a.gpu.hbmTBs), num(b.gpu.hbmTBs), QObject::tr(" TB/s"));
    change(QObject::tr("NVLink"), num(a.intraNode.gbPerS), num(b.intraNode.gbPerS),
           QObject::tr(" GB/s per GPU"));
    change(QObject::tr("NVLink latency"), num(a.intraNode.latencyUs), num(b.intraNode.latencyUs),
           QObject::tr(" \u00b5s"));
    change(QObject::tr("NIC"), num(a.interNode.gbPerS * 8), num(b.interNode.gbPerS * 8),
           QObject::tr(" Gb/s per GPU"));
    change(QObject::tr("NIC latency"), num(a.interNode.latencyUs), num(b.interNode.latencyUs),
           QObject::tr(" \u00b5s"));
    if (!(a.efficiency == b.efficiency))
        // "NVIDIA Blackwell's factors", without the fit's figures (the cluster editor shows those).
        out << (b.efficiencySource.empty()
                    ? QObject::tr("efficiency factors")
                    : QObject::tr("efficiency: %1")
                          .arg(qs(b.efficiencySource).section(QStringLiteral(", "), 0, 0)));
    if (a.pricePerGpuHour != b.pricePerGpuHour)
        out << QObject::tr("price per GPU-hour %1%2%3")
                   .arg(a.pricePerGpuHour > 0 ? QStringLiteral("$") + num(a.pricePerGpuHour)
                                              : QObject::tr("none"),
                        arrow,
                        b.pricePerGpuHour > 0 ? QStringLiteral("$") + num(b.pricePerGpuHour)
                                              : QObject::tr("none"));
    return out;
}

const GpuSpec* databaseGpu(const Gpu& g) {
    for (const GpuSpec& s : gpuDatabase())
        if (s.gpu == g) return &s;
    return nullptr;
}

Cluster withGpu(const Cluster& c, const GpuSpec& spec) {
    Cluster out = c;
    out.gpu = spec.gpu;
    out.gpusPerNode = spec.scaleUpDomain;
    if (out.gpusPerHost >= out.gpusPerNode || (out.gpusPerHost > 0 && out.gpusPerNode % out.gpusPerHost != 0))
        out.gpusPerHost = 0;
    out.intraNode = spec.scaleUp;
    // As a cluster file naming the GPU gets them (core/io readCluster): the reference system's NIC, and the
    // family's fitted factors (Hopper's defaults where the family has no fit).
    // The network keeps its name where the cluster gives one ("InfiniBand NDR"): a GPU does not rename it.
    out.interNode = Link{c.interNode.name.empty() ? "NIC" : c.interNode.name, spec.nicGbitPerGpu / 8.0, 6.0};
    const GpuFamily* family = findGpuFamily(spec.family);
    out.efficiency = family && family->fitted ? family->efficiency : Efficiency{};
    out.efficiencySource = familySource(family, spec.gpu.name);
    // And the database's price (a cloud list price, dated), as a file naming the GPU gets it.
    out.pricePerGpuHour = spec.pricePerHourUsd;
    out.priceSource = spec.pricePerHourUsd > 0 ? spec.priceSource : std::string();
    return out;
}

QString clusterFileName(const Cluster& c) {
    QString s = qs(c.name).toLower();
    s.replace(QRegularExpression(QStringLiteral("[^a-z0-9.]+")), QStringLiteral("-"));
    s.remove(QRegularExpression(QStringLiteral("^-+|-+$")));
    return (s.isEmpty() ? QStringLiteral("cluster") : s) + QStringLiteral(".yaml");
}

bool saveClusterFile(const Cluster& c, const QString& path, QString* error) {
    const auto r = writeFileAtomic(path.toStdString(), toYaml(c));
    if (!r) {
        if (error) *error = qs(r.error().str());
        return false;
    }
    return true;
}

} // namespace sp::views
