#include "views/background.h"

#include <QThread>

#if defined(Q_OS_LINUX)
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace sp::views {

void lowerThreadPriority() {
#if defined(Q_OS_LINUX)
    // Under Linux/NPTL the nice value is a per-thread attribute set by thread id (setpriority(2), BUGS),
    // while QThread::setPriority() has no effect under SCHED_OTHER (its priority range is 0..0). Weight of
    // nice 10 against 0: 110 to 1024 (kernel/sched/core.c, sched_prio_to_weight), so one GUI thread
    // outweighs nine workers.
    constexpr int kNice = 10;
    const int tid = int(gettid());
    if (getpriority(PRIO_PROCESS, id_t(tid)) < kNice) setpriority(PRIO_PROCESS, id_t(tid), kNice);
#else
    QThread::currentThread()->setPriority(QThread::LowPriority);
#endif
}

} // namespace sp::views
