#pragma once
// The exporters moved to core/export/ (a layer above the cost model); this header stays until every
// caller includes core/export/launch.h.
#include "core/export/launch.h"
