#include "views/format.h"

#include "core/io/formats.h"

#include <QHash>
#include <QLocale>
#include <QObject>
#include <QStringList>

#include <algorithm>
#include <array>
#include <cmath>

namespace sp::views {

QString formatCompact(double v) {
    const double a = std::abs(v);
    if (a >= 1e12) return QString::number(v / 1e12, 'f', 2) + QLatin1Char('T');
    if (a >= 1e9) return QString::number(v / 1e9, 'f', 2) + QLatin1Char('G');
    if (a >= 1e6) return QString::number(v / 1e6, 'f', 2) + QLatin1Char('M');
    if (a >= 1e4) return QString::number(v / 1e3, 'f', 1) + QLatin1Char('k');
    if (a >= 1e3) return QString::number(v / 1e3, 'f', 2) + QLatin1Char('k');
    if (a >= 100 || a == 0) return QString::number(v, 'f', 0);
    return QString::number(v, 'g', 3);
}

QString formatRate(double tokensPerS) {
    return formatCompact(tokensPerS) + QStringLiteral(" tok/s");
}

QString formatInteger(double v) {
    QLocale c(QLocale::English);
    return c.toString(qlonglong(std::llround(v)));
}

QString formatBytes(double bytes) {
    const double a = std::abs(bytes);
    if (a >= 1e12) return QString::number(bytes / 1e12, 'f', 2) + QStringLiteral(" TB");
    if (a >= 1e9) return QString::number(bytes / 1e9, 'f', 2) + QStringLiteral(" GB");
    if (a >= 1e6) return QString::number(bytes / 1e6, 'f', 2) + QStringLiteral(" MB");
    if (a >= 1e3) return QString::number(bytes / 1e3, 'f', 1) + QStringLiteral(" kB");
    return QString::number(bytes, 'f', 0) + QStringLiteral(" B");
}

QString formatMs(double ms) {
    const double a = std::abs(ms);
    if (a >= 1000) return formatInteger(ms) + QStringLiteral(" ms");
    if (a >= 10) return QString::number(ms, 'f', 1) + QStringLiteral(" ms");
    if (a >= 0.1 || a == 0) return QString::number(ms, 'f', a == 0 ? 0 : 2) + QStringLiteral(" ms");
    return QString::number(ms, 'g', 3) + QStringLiteral(" ms");
}

QString formatDuration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("-");
    // Under ten seconds a tenth shows ("0.4 s", not "0 s" for a run that took 400 ms).
    if (seconds < 9.95) return QString::number(seconds, 'f', 1) + QStringLiteral(" s");
    const qint64 s = qint64(std::llround(seconds));
    if (s < 60) return QStringLiteral("%1 s").arg(s);
    if (s < 3600) return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60);
    return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

QString degreesText(const Degrees& d, bool moe) {
    QString t = QStringLiteral("pp%1 dp%2 tp%3").arg(d.pp).arg(d.dp).arg(d.tp);
    if (moe) t += QStringLiteral(" | ep%1 etp%2 edp%3").arg(d.ep).arg(d.etp).arg(d.edp);
    return t;
}

QString meshText(const Plan& p) {
    QStringList parts;
    for (Axis a : p.meshOrder) parts << qs(kAxisNames[size_t(a)]);
    return parts.join(QStringLiteral(" > "));
}

QString opDisplayName(Op op) {
    const QString base = qs(kOpNames[size_t(op)]);
    return int(op) >= kBaseOpCount ? base + QStringLiteral(" (MoE layers)") : base;
}

QString choiceName(Op op, int choice) {
    const auto& names = choiceNames(op);
    if (choice < 0 || choice >= int(names.size())) return QStringLiteral("?");
    return qs(names[size_t(choice)]);
}

QString specMethodName(SpecMethod m) {
    switch (m) {
    case SpecMethod::None:
        return QObject::tr("none");
    case SpecMethod::Mtp:
        return QStringLiteral("MTP");
    case SpecMethod::Eagle3:
        return QStringLiteral("EAGLE-3");
    case SpecMethod::Draft:
        return QObject::tr("draft model");
    case SpecMethod::Ngram:
        return QObject::tr("n-gram");
    }
    return {};
}

QString specSummary(const Speculative& s, double tokensPerStep) {
    if (!s.on()) return QObject::tr("off");
    QString t = s.draftTokens == 1
                    ? QObject::tr("%1, 1 draft token").arg(specMethodName(s.method))
                    : QObject::tr("%1, %2 draft tokens").arg(specMethodName(s.method)).arg(s.draftTokens);
    if (tokensPerStep > 0) t += QObject::tr(", %1 tokens a step").arg(tokensPerStep, 0, 'f', 2);
    return t;
}

ShardFamily familyOf(Op op, int c) {
    using F = ShardFamily;
    switch (baseOp(op)) {
    case Op::Embedding:
        return c == choice::EmbVocab ? F::Split : F::Replicated;
    case Op::Norms:
        return c == choice::NormToken ? F::Token : F::Replicated;
    case Op::Router:
        return c == choice::RouterToken ? F::Token : F::Replicated;
    case Op::Attention:
        return c == choice::AttnHead ? F::Split : c == choice::AttnSequence ? F::Sequence : F::Batch;
    case Op::Experts:
        return c == choice::ExpExpert ? F::Split : c == choice::ExpTensor ? F::ExpertTensor : F::Token;
    case Op::SharedExperts:
        return c == choice::SharedColumnRow ? F::Split : F::Token;
    case Op::Qkv:
    case Op::FfnUp:
        return c == 0 ? F::Split : c == 1 ? F::Row : F::Token;
    case Op::OutProj:
    case Op::FfnDown:
        return c == 0 ? F::Row : c == 1 ? F::Split : F::Token;
    case Op::LmHead:
        return c == choice::HeadVocab ? F::Split : c == choice::HeadRow ? F::Row : F::Token;
    default:
        return F::Replicated;
    }
}

QColor familyColor(ShardFamily f) {
    // Okabe-Ito inspired: distinguishable with the common colour-vision deficiencies.
    static const std::array<QColor, kShardFamilyCount> c{
        QColor(0xc8, 0xcc, 0xd2), // replicated: neutral grey
        QColor(0x3b, 0x7d, 0xd8), // split weights: blue
        QColor(0xe6, 0x8a, 0x1e), // row / partial sums: orange
        QColor(0x2f, 0xa5, 0x72), // token: green
        QColor(0x9b, 0x59, 0xb6), // sequence: purple
        QColor(0x1a, 0xb3, 0xc4), // batch: cyan
        QColor(0x1f, 0x3f, 0x8f), // expert tensor: dark blue
    };
    return c[size_t(f)];
}

QString familyName(ShardFamily f) {
    switch (f) {
    case ShardFamily::Replicated:
        return QObject::tr("replicated");
    case ShardFamily::Split:
        return QObject::tr("split weights (column, head, vocab, expert)");
    case ShardFamily::Row:
        return QObject::tr("row (partial sums)");
    case ShardFamily::Token:
        return QObject::tr("token (weights replicated)");
    case ShardFamily::Sequence:
        return QObject::tr("sequence (context parallel)");
    case ShardFamily::Batch:
        return QObject::tr("batch (attention data parallel)");
    case ShardFamily::ExpertTensor:
        return QObject::tr("expert tensor parallel");
    }
    return {};
}

QString choiceAbbrev(Op op, int c) {
    const QString n = choiceName(op, c);
    static const QHash<QString, QString> abbrev{{QStringLiteral("column"), QStringLiteral("col")},
                                                {QStringLiteral("row"), QStringLiteral("row")},
                                                {QStringLiteral("token"), QStringLiteral("tok")},
                                                {QStringLiteral("head"), QStringLiteral("head")},
                                                {QStringLiteral("vocab"), QStringLiteral("voc")},
                                                {QStringLiteral("replicated"), QStringLiteral("rep")},
                                                {QStringLiteral("sequence"), QStringLiteral("seq")},
                                                {QStringLiteral("batch"), QStringLiteral("bat")},
                                                {QStringLiteral("expert"), QStringLiteral("EP")},
                                                {QStringLiteral("tensor"), QStringLiteral("ETP")},
                                                {QStringLiteral("column_row"), QStringLiteral("c+r")}};
    return abbrev.value(n, n.left(3));
}

QColor searcherColor(const QString& name) {
    static const QHash<QString, QColor> fixed{{QStringLiteral("megatron"), QColor(0x6b, 0x72, 0x80)},
                                              {QStringLiteral("random"), QColor(0xe0, 0x7b, 0x24)},
                                              {QStringLiteral("sa"), QColor(0x25, 0x63, 0xeb)},
                                              {QStringLiteral("ga"), QColor(0x16, 0xa3, 0x4a)},
                                              {QStringLiteral("rl"), QColor(0xc0, 0x26, 0xd3)},
                                              {QStringLiteral("exhaustive"), QColor(0x0f, 0x17, 0x2a)}};
    if (auto it = fixed.find(name); it != fixed.end()) return *it;
    const uint h = qHash(name);
    return QColor::fromHsv(int(h % 360), 170, 200);
}

QColor stageColor(int stage) {
    static const std::array<QColor, 12> c{
        QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0x59, 0xa1, 0x4f),
        QColor(0xe1, 0x57, 0x59), QColor(0x76, 0xb7, 0xb2), QColor(0xed, 0xc9, 0x48),
        QColor(0xb0, 0x7a, 0xa1), QColor(0xff, 0x9d, 0xa7), QColor(0x9c, 0x75, 0x5f),
        QColor(0xba, 0xb0, 0xac), QColor(0x86, 0xbc, 0xb6), QColor(0xd3, 0x72, 0x95)};
    const QColor base = c[size_t(stage % 12)];
    const int round = stage / 12;
    return round == 0 ? base : base.darker(100 + 25 * round);
}

QColor heatColor(double t) {
    t = std::clamp(t, 0.0, 1.0);
    // Piecewise-linear through light yellow, orange, red, dark red (a YlOrRd-like ramp).
    static const std::array<QColor, 5> stops{QColor(0xff, 0xfb, 0xe0), QColor(0xfe, 0xd9, 0x76),
                                             QColor(0xfd, 0x8d, 0x3c), QColor(0xe3, 0x1a, 0x1c),
                                             QColor(0x80, 0x00, 0x26)};
    const double x = t * double(stops.size() - 1);
    const int i = std::min(int(x), int(stops.size()) - 2);
    const double f = x - i;
    auto mix = [f](int a, int b) { return int(std::lround(a + (b - a) * f)); };
    const QColor &a = stops[size_t(i)], &b = stops[size_t(i + 1)];
    return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

QColor textOn(const QColor& bg) {
    const double lum = 0.2126 * bg.redF() + 0.7152 * bg.greenF() + 0.0722 * bg.blueF();
    return lum > 0.55 ? QColor(0x1f, 0x29, 0x37) : QColor(Qt::white);
}

QColor linkColor(LinkClass l) {
    switch (l) {
    case LinkClass::Local:
        return QColor(0x9c, 0xa3, 0xaf);
    case LinkClass::NvLink:
        return QColor(0x76, 0xb9, 0x00); // NVIDIA green
    case LinkClass::Network:
        return QColor(0xd9, 0x46, 0xef);
    }
    return Qt::gray;
}

QColor draftColor() {
    return QColor(0x0d, 0x94, 0x88); // teal: apart from the blues of the operators and the links' colours
}

/// A whole number in [lo, hi] (thousands separators allowed), or an error.
QString parseWholeNumber(const QString& text, qint64 lo, qint64 hi, qint64& out) {
    QString t = text.trimmed();
    t.remove(QLatin1Char(',')).remove(QLatin1Char('_'));
    bool ok = false;
    out = t.toLongLong(&ok);
    if (!ok || out < lo || out > hi)
        return QObject::tr("expected a whole number from %1 to %2")
            .arg(formatInteger(double(lo)), formatInteger(double(hi)));
    return {};
}

} // namespace sp::views
