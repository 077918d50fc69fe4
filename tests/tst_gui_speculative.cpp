// Speculative decoding in the scenario panel (views/scenarioeditor_constraints.cpp), in the window,
// offscreen: the acceptance rates the options are priced with are edited beside them (they were seen only
// through the options' tooltips), each checked to lie in (0, 1], refused with a message, and undone as the
// other fields are.
#include "core/model/speculative.h"
#include "gui_fixtures.h"
#include "mainwindow.h"
#include "views/scenarioeditor.h"

#include <QAction>
#include <QClipboard>
#include <QComboBox>
#include <QGuiApplication>
#include <QLineEdit>
#include <QTest>
#include <QUndoStack>

#include "scenarioundo.h"

using namespace sp;
using sp::app::MainWindow;
using sp::views::ScenarioEditor;
using namespace sp::testing;

namespace {
const QString kDeepSeek = kSamples + QStringLiteral("/scenarios/deepseek-v3-b200-18x8.yaml");
}

class TestGuiSpeculative : public QObject {
    Q_OBJECT
private slots:
    // DeepSeek-V3 drafts with its MTP module; the model's default is one rate, 0.85 (its technical report),
    // so a search weighs mtp x1 only. Three rates typed: the workload's, and mtp x1 to x3 offered, x3 at
    // 1 + 0.8 + 0.8 x 0.6 + 0.8 x 0.6 x 0.4 = 2.472 tokens a step. One undo takes the typing back.
    void acceptanceRatesEdited() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kDeepSeek));
        ScenarioEditor* ed = w.scenarioEditor();
        QLineEdit* rates = ed->field(QStringLiteral("acceptance_rates"));
        QVERIFY2(rates, "no acceptance rates field");
        QVERIFY(rates->isVisibleTo(ed) && rates->isEnabled());
        QCOMPARE(ed->scenario().workload.acceptance[size_t(SpecMethod::Mtp)], std::vector<double>{});
        QVERIFY2(rates->placeholderText().contains(QStringLiteral("0.85")),
                 qPrintable(rates->placeholderText()));
        QVERIFY2(rates->toolTip().contains(QStringLiteral("DeepSeek-V3 technical report")),
                 qPrintable(rates->toolTip()));
        QComboBox* spec = ed->specCombo();
        QVERIFY(spec->findText(QStringLiteral("mtp x1")) >= 0);
        QCOMPARE(spec->findText(QStringLiteral("mtp x3")), -1);

        typeInto(rates, QStringLiteral("0.8, 0.6, 0.4"));
        QVERIFY2(ed->errors().isEmpty(), qPrintable(ed->errors().join(QLatin1Char('\n'))));
        QCOMPARE(ed->scenario().workload.acceptance[size_t(SpecMethod::Mtp)],
                 (std::vector<double>{0.8, 0.6, 0.4}));
        const int x3 = spec->findText(QStringLiteral("mtp x3"));
        QVERIFY(x3 >= 0);
        const QString tip = spec->itemData(x3, Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("2.47 tokens a step")), qPrintable(tip));
        QUndoStack* undo = w.scenarioUndo()->stack();
        QCOMPARE(undo->count(), 1);
        QCOMPARE(undo->undoText(), QStringLiteral("Edit workload"));

        w.action(QStringLiteral("undo"))->trigger();
        QCOMPARE(ed->scenario().workload.acceptance[size_t(SpecMethod::Mtp)], std::vector<double>{});
        QCOMPARE(rates->text(), QString());
        QCOMPARE(spec->findText(QStringLiteral("mtp x3")), -1);
        w.action(QStringLiteral("redo"))->trigger();
        QCOMPARE(ed->scenario().workload.acceptance[size_t(SpecMethod::Mtp)],
                 (std::vector<double>{0.8, 0.6, 0.4}));
        QCOMPARE(rates->text(), QStringLiteral("0.8, 0.6, 0.4"));
        // Emptied: the model's default again.
        typeInto(rates, QString());
        QCOMPARE(ed->scenario().workload.acceptance[size_t(SpecMethod::Mtp)], std::vector<double>{});
    }

    // Each rate must be above 0 and at most 1, at most eight of them, numbers: refused with the reason under
    // the field, outlined, the text kept, the scenario and the undo history unchanged.
    void invalidRatesRefused_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::addRow("above 1") << "0.8, 1.2"
                                 << "rate 2 is 1.2: each must be above 0 and at most 1";
        QTest::addRow("zero") << "0"
                              << "rate 1 is 0: each must be above 0 and at most 1";
        QTest::addRow("negative") << "0.9 -0.1"
                                  << "rate 2 is -0.1";
        QTest::addRow("not a number") << "0.8, high"
                                      << "\u201chigh\u201d is no number";
        QTest::addRow("nine rates") << "0.9,0.9,0.9,0.9,0.9,0.9,0.9,0.9,0.9"
                                    << "at most 8 rates (one per draft token), 9 given";
    }
    void invalidRatesRefused() {
        QFETCH(QString, text);
        QFETCH(QString, message);
        MainWindow w(testOptions());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kDeepSeek));
        ScenarioEditor* ed = w.scenarioEditor();
        QLineEdit* rates = ed->field(QStringLiteral("acceptance_rates"));
        QVERIFY2(rates, "no acceptance rates field");
        const Scenario before = ed->scenario();
        // Pasted, as one edit (typed, "0.8, 1" on the way to "0.8, 1.2" is valid and taken).
        QGuiApplication::clipboard()->setText(text);
        rates->setFocus();
        rates->selectAll();
        QTest::keyClick(rates, Qt::Key_V, Qt::ControlModifier);
        const QString error = ed->fieldError(QStringLiteral("acceptance_rates"));
        QVERIFY2(error.startsWith(QStringLiteral("Acceptance rates: ")) && error.contains(message),
                 qPrintable(error));
        QVERIFY(ed->errors().contains(error));
        QVERIFY(rates->property("invalid").toBool());
        QCOMPARE(rates->text(), text);
        QVERIFY(ed->scenario() == before);
        QCOMPARE(w.scenarioUndo()->stack()->count(), 0);
        // Fixed: taken, the message gone.
        typeInto(rates, QStringLiteral("0.7"));
        QVERIFY(ed->fieldError(QStringLiteral("acceptance_rates")).isEmpty());
        QCOMPARE(ed->scenario().workload.acceptance[size_t(SpecMethod::Mtp)], std::vector<double>{0.7});
    }
};

QTEST_MAIN(TestGuiSpeculative)
#include "tst_gui_speculative.moc"
