#include "metatypes.h"

namespace sp::app {

void registerMetatypes() {
    qRegisterMetaType<SearchUpdatePtr>("sp::app::SearchUpdatePtr");
    qRegisterMetaType<SearchResultPtr>("sp::app::SearchResultPtr");
    qRegisterMetaType<views::PlanRecordPtr>("sp::views::PlanRecordPtr");
}

} // namespace sp::app
