#include "views/imageexport.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QPixmap>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QWidget>

namespace sp::views {

bool saveFile(const QString& path, const QByteArray& bytes, QString* error) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        if (error) *error = QObject::tr("%1: cannot write: %2").arg(path, f.errorString());
        return false;
    }
    if (f.write(bytes) != bytes.size() || !f.commit()) {
        if (error) *error = QObject::tr("%1: cannot write: %2").arg(path, f.errorString());
        f.cancelWriting();
        return false;
    }
    return true;
}

bool saveImage(QWidget* widget, const QString& path, QString* error, const PaintFunction& paint) {
    const QSize size = widget->size().isEmpty() ? widget->sizeHint() : widget->size();
    const QRect rect(QPoint(0, 0), size);
    QByteArray bytes;
    if (QFileInfo(path).suffix().compare(QLatin1String("svg"), Qt::CaseInsensitive) == 0) {
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(size);
        svg.setViewBox(rect);
        svg.setTitle(widget->windowTitle().isEmpty() ? QStringLiteral("Shard Planner")
                                                     : widget->windowTitle());
        svg.setDescription(QStringLiteral("Exported by Shard Planner"));
        QPainter p;
        if (!p.begin(&svg)) {
            if (error) *error = QObject::tr("%1: cannot render SVG").arg(path);
            return false;
        }
        if (paint)
            paint(p, rect);
        else
            widget->render(&p);
        p.end();
    } else {
        QImage image;
        if (paint) {
            image = QImage(size * 2, QImage::Format_ARGB32_Premultiplied);
            image.setDevicePixelRatio(2);
            image.fill(Qt::white);
            QPainter p(&image);
            paint(p, rect);
        } else {
            image = widget->grab().toImage();
        }
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        if (!image.save(&buffer, "PNG")) {
            if (error) *error = QObject::tr("%1: cannot encode PNG").arg(path);
            return false;
        }
    }
    return saveFile(path, bytes, error);
}

} // namespace sp::views
