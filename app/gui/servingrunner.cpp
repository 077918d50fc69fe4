#include "servingrunner.h"

#include "views/background.h"
#include "views/servingcompare.h"

#include <QMutex>
#include <QMutexLocker>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace sp::app {

/// SimProgressFn -> Qt: report() and setStep() run on the worker; the latest progress reaches the GUI thread
/// in one queued call at a time (later reports replace the pending one).
class ServingRunner::Relay final : public QObject {
public:
    Relay(ServingRunner* owner, quint64 run) : QObject(owner), m_owner(owner), m_run(run) {}

    void report(const SimProgress& p) {
        QMutexLocker lock(&m_mutex);
        // A new run of a capacity search or a sizing starts from 0 completed.
        if (p.completed < m_completed && m_seen) ++m_simulation;
        m_seen = true;
        m_completed = p.completed, m_total = p.total;
        post(lock);
    }
    void addPoint(const SweepPoint& point) {
        QMutexLocker lock(&m_mutex);
        m_points.push_back(point);
        m_pointsChanged = true;
        post(lock);
    }
    void setStep(const QString& step) {
        QMutexLocker lock(&m_mutex);
        m_step = step;
        m_stepChanged = true;
        post(lock);
    }

    /// GUI thread.
    void flush() {
        qint64 completed = 0, total = 0;
        int simulation = 0;
        QString step;
        bool stepChanged = false, seen = false;
        std::shared_ptr<RateSweep> sofar;
        {
            QMutexLocker lock(&m_mutex);
            if (!m_posted) return;
            completed = m_completed, total = m_total, simulation = m_simulation, seen = m_seen;
            step = m_step, stepChanged = m_stepChanged;
            if (m_pointsChanged) {
                sofar = std::make_shared<RateSweep>();
                sofar->ok = true;
                sofar->points = m_points;
            }
            m_posted = m_stepChanged = m_pointsChanged = false;
        }
        if (m_run != m_owner->m_slot.current()) return;
        if (sofar) emit m_owner->sweepGrew(m_run, std::move(sofar));
        if (stepChanged) emit m_owner->stepChanged(m_run, step);
        if (seen) emit m_owner->progress(m_run, completed, total, simulation);
    }

private:
    void post(QMutexLocker<QMutex>& lock) {
        if (m_posted) return;
        m_posted = true;
        lock.unlock();
        QMetaObject::invokeMethod(
            this, [this] { flush(); }, Qt::QueuedConnection);
    }

    ServingRunner* m_owner;
    quint64 m_run;
    QMutex m_mutex;
    qint64 m_completed = 0, m_total = 0; ///< guarded by m_mutex, as all below
    int m_simulation = 0;
    QString m_step;
    std::vector<SweepPoint> m_points; ///< a sweep's points done
    bool m_seen = false, m_posted = false, m_stepChanged = false, m_pointsChanged = false;
};

ServingRunner::ServingRunner(QObject* parent) : QObject(parent) {}

ServingRunner::~ServingRunner() = default;

void ServingRunner::stop() {
    m_slot.stop();
}

void ServingRunner::cancel() {
    m_slot.next();
    m_running = false;
}

template <class Result, class Job, class Deliver> quint64 ServingRunner::launch(Job job, Deliver deliver) {
    const quint64 run = m_slot.next();
    auto* relay = new Relay(this, run);
    std::stop_token stop = m_slot.token();
    struct Outcome {
        std::shared_ptr<const Result> result;
        QString error;
    };
    QFuture<Outcome> f = QtConcurrent::run(m_slot.pool(), [job, relay, stop]() -> Outcome {
        views::lowerThreadPriority();
        try {
            return {job(*relay, stop), {}};
        } catch (const std::exception& e) {
            return {nullptr, QString::fromUtf8(e.what())};
        }
    });
    m_running = true;
    f.then(this, [this, run, relay, deliver](Outcome o) {
        relay->flush();
        relay->deleteLater();
        if (run != m_slot.current()) return;
        m_running = false;
        if (!o.result)
            emit failed(run, o.error);
        else
            deliver(run, o.result);
    });
    m_slot.track(QFuture<void>(f));
    return run;
}

namespace {
SimProgressFn reporter(auto& relay) {
    return [&relay](const SimProgress& p) { relay.report(p); };
}
} // namespace

template <class Run> quint64 ServingRunner::launchSimulation(Run run) {
    return launch<SimResult>([run](Relay& relay, std::stop_token stop) { return run(reporter(relay), stop); },
                             [this](quint64 id, const SimResultPtr& r) {
                                 if (!r->ok)
                                     emit failed(id, QString::fromStdString(r->error));
                                 else
                                     emit simulated(id, r);
                             });
}

quint64 ServingRunner::simulate(const Scenario& scenario, const Plan& plan, const SimOptions& options) {
    return launchSimulation([scenario, plan, options](const SimProgressFn& progress, std::stop_token stop) {
        return sp::simulate(scenario, plan, options, progress, stop);
    });
}

quint64 ServingRunner::simulate(const Scenario& scenario, const DisaggPlan& plan, const DisaggOptions& model,
                                const SimOptions& options) {
    return launchSimulation(
        [scenario, plan, model, options](const SimProgressFn& progress, std::stop_token stop) {
            return sp::simulate(DisaggModel(scenario, model), plan, options, progress, stop);
        });
}

quint64 ServingRunner::capacity(const Scenario& scenario, const MaxRateOptions& options) {
    return launch<MaxRateRow>(
        [scenario, options](Relay& relay, std::stop_token stop) {
            // The scenario's own cluster (options.gpus empty): one row.
            auto rows = maxRatePerGpu(scenario, options, reporter(relay), stop);
            if (rows.empty()) throw std::runtime_error("capacity: no answer");
            return std::make_shared<const MaxRateRow>(std::move(rows.front()));
        },
        [this](quint64 run, const MaxRateRowPtr& r) {
            // A stopped bisection is an answer (it says it is none); a plan that does not fit is an error.
            if (!r->error.empty() && !r->stopped)
                emit failed(run, QString::fromStdString(r->error));
            else
                emit capacityFound(run, r);
        });
}

template <class Run> quint64 ServingRunner::launchSweep(const RateSweepOptions& options, Run run) {
    return launch<RateSweep>(
        [options, run](Relay& relay, std::stop_token stop) {
            const size_t n = options.rates.size();
            const auto step = [&relay, &options, n](size_t i) {
                if (i < n)
                    relay.setStep(QObject::tr("%1 (%2 of %3)")
                                      .arg(views::rateText(options.rates[i]))
                                      .arg(i + 1)
                                      .arg(n));
            };
            step(0);
            auto r = run(reporter(relay), stop, [&relay, &step](const SweepPoint& p, size_t i) {
                relay.addPoint(p);
                step(i + 1);
            });
            return std::make_shared<const RateSweep>(std::move(r));
        },
        [this](quint64 id, const RateSweepPtr& r) {
            if (!r->ok)
                emit failed(id, QString::fromStdString(r->error));
            else
                emit swept(id, r);
        });
}

quint64 ServingRunner::sweep(const Scenario& scenario, const Plan& plan, const RateSweepOptions& options) {
    return launchSweep(options, [scenario, plan, options](const SimProgressFn& progress, std::stop_token stop,
                                                          const SweepPointFn& onPoint) {
        return sweepRates(CostModel(scenario), plan, options, progress, stop, onPoint);
    });
}

quint64 ServingRunner::sweep(const Scenario& scenario, const DisaggPlan& plan, const DisaggOptions& model,
                             const RateSweepOptions& options) {
    return launchSweep(options, [scenario, plan, model, options](const SimProgressFn& progress,
                                                                 std::stop_token stop,
                                                                 const SweepPointFn& onPoint) {
        return sweepRates(DisaggModel(scenario, model), plan, options, progress, stop, onPoint);
    });
}

quint64 ServingRunner::sizeGpus(const Scenario& scenario, const CapacityOptions& options) {
    return launch<views::GpuSizing>(
        [scenario, options](Relay& relay, std::stop_token stop) {
            auto z = std::make_shared<views::GpuSizing>();
            z->rate = options.rate;
            z->gpus = options.gpus;
            z->requests = options.sim.requests;
            z->moe = scenario.model.moe.present();
            z->workload = scenario.workload;
            // One GPU type at a time, so the status can say which: fewestGpus answers each type on its own,
            // so its rows are those of one call with the whole list.
            const size_t n = options.gpus.size();
            for (size_t i = 0; i < n && !stop.stop_requested(); ++i) {
                relay.setStep(QObject::tr("%1 (%2 of %3)")
                                  .arg(QString::fromStdString(options.gpus[i]))
                                  .arg(i + 1)
                                  .arg(n));
                CapacityOptions one = options;
                one.gpus = {options.gpus[i]};
                for (CapacityRow& r : fewestGpus(scenario, one, reporter(relay), stop)) {
                    r.run = nullptr; // the table shows its figures; the runs are large
                    z->rows.push_back(std::move(r));
                }
            }
            z->stopped = stop.stop_requested();
            return std::shared_ptr<const views::GpuSizing>(std::move(z));
        },
        [this](quint64 run, const GpuSizingPtr& z) { emit sized(run, z); });
}

} // namespace sp::app
