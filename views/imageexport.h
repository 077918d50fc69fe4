#pragma once
// Writing images and text atomically (QSaveFile): a failed export never leaves half a file.

#include <QByteArray>
#include <QRect>
#include <QString>

#include <functional>

class QPainter;
class QWidget;

namespace sp::views {

/// Paints a view into a rectangle (for views that can paint themselves at any size, e.g. the heatmap).
using PaintFunction = std::function<void(QPainter&, const QRect&)>;

/// Saves `widget` as PNG (grabbed, at twice the pixel density when it paints itself) or SVG (by the file's
/// suffix, .svg; QSvgGenerator). With `paint`, the image is painted by it instead of rendering the widget.
bool saveImage(QWidget* widget, const QString& path, QString* error, const PaintFunction& paint = {});
/// Writes bytes atomically.
bool saveFile(const QString& path, const QByteArray& bytes, QString* error);

} // namespace sp::views
