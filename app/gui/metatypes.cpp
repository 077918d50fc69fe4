#include "metatypes.h"

namespace sp::app {

void registerMetatypes() {
    qRegisterMetaType<SearchUpdatePtr>("sp::app::SearchUpdatePtr");
    qRegisterMetaType<SearchResultPtr>("sp::app::SearchResultPtr");
    qRegisterMetaType<views::PlanRecordPtr>("sp::views::PlanRecordPtr");
    qRegisterMetaType<SimResultPtr>("sp::app::SimResultPtr");
    qRegisterMetaType<MaxRateRowPtr>("sp::app::MaxRateRowPtr");
    qRegisterMetaType<RateSweepPtr>("sp::app::RateSweepPtr");
    qRegisterMetaType<GpuSizingPtr>("sp::app::GpuSizingPtr");
}

} // namespace sp::app
