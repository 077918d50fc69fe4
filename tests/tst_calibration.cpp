// The cost model against public measurements (tests/data/calibration): median absolute error under 25%.
#include "core/cost/calibration.h"

#include <QTest>

using namespace sp;

class TestCalibration : public QObject {
    Q_OBJECT
private slots:
    void medianErrorUnder25Percent() {
        auto rep =
            runCalibration(SHARDPLAN_TESTDATA_DIR "/calibration/measurements.yaml", SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(rep.ok(), rep.error().str().c_str());
        for (const auto& r : rep->rows)
            qInfo("%-62s %12.1f %12.1f %+6.0f%%", r.id.c_str(), r.measured, r.predicted, 100 * r.error);
        qInfo("median absolute error %.1f%% over %zu measurements", 100 * rep->medianAbsError,
              rep->rows.size());
        QVERIFY(rep->rows.size() >= 12);
        QVERIFY(rep->medianAbsError < 0.25);
    }
};

QTEST_GUILESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
