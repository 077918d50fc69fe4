#pragma once
// Display helpers shared by the views: number formats, names and the colour palettes, so every view writes a
// throughput, a byte count or a sharding choice the same way.

#include "core/cost/costmodel.h"
#include "core/model/plan.h"

#include <QColor>
#include <QString>

#include <string>
#include <string_view>

namespace sp::views {

inline QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}
inline QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

/// 180112 -> "180.1k"; 2.9e6 -> "2.90M".
QString formatCompact(double v);
/// Tokens per second, compact: "180.1k tok/s".
QString formatRate(double tokensPerS);
/// 1234567 -> "1,234,567".
QString formatInteger(double v);
/// Bytes in decimal units: "4.03 MB", "146 GB".
QString formatBytes(double bytes);
/// Milliseconds with a sensible number of digits: "0.0188 ms", "49.9 ms", "1,204 ms".
QString formatMs(double ms);
/// Seconds as "0.4 s", "5.7 s", "42 s", "3 min 20 s", "1 h 5 min".
QString formatDuration(double seconds);

/// "pp1 dp4 tp2" and, for MoE models, " | ep8 etp1 edp1".
QString degreesText(const Degrees& d, bool moe);
/// "tp > dp > pp" (innermost first).
QString meshText(const Plan& p);
/// The display name of an operator: "qkv", or "qkv (MoE layers)" for the MoE overrides.
QString opDisplayName(Op op);
QString choiceName(Op op, int choice);
/// A speculative-decoding method as people write it: "MTP", "EAGLE-3", "draft model", "n-gram".
QString specMethodName(SpecMethod m);
/// A plan's speculative decoding in words: "MTP, 3 draft tokens", with `tokensPerStep` (E) when above 0:
/// "MTP, 3 draft tokens, 2.45 tokens a step"; "off" without.
QString specSummary(const Speculative& s, double tokensPerStep = 0);

/// Sharding families for colouring: choices that split the same way share a colour.
enum class ShardFamily { Replicated, Split, Row, Token, Sequence, Batch, ExpertTensor };
inline constexpr int kShardFamilyCount = 7;
ShardFamily familyOf(Op op, int choice);
QColor familyColor(ShardFamily f);
QString familyName(ShardFamily f);
/// Two or three letters for a choice, for narrow cells.
QString choiceAbbrev(Op op, int choice);

/// A stable colour per searcher (megatron grey, sa blue, ga green, ...).
QColor searcherColor(const QString& name);
/// Pipeline stage colours (qualitative, up to 12 distinct, then repeating with a shade change).
QColor stageColor(int stage);
/// A sequential map for shares in [0, 1] (light yellow to dark red).
QColor heatColor(double t);
/// Black or white, whichever reads better on `background`.
QColor textOn(const QColor& background);

/// Link classes and the communication categories of a step.
QColor linkColor(LinkClass l);
/// Speculative decoding's draft passes (the timeline's draft block, the comparison's draft bar).
QColor draftColor();

/// A whole number in [lo, hi] typed in a field (thousands separators allowed): "" and `out`, or the error.
QString parseWholeNumber(const QString& text, qint64 lo, qint64 hi, qint64& out);

} // namespace sp::views
