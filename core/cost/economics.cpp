#include "core/cost/economics.h"

namespace sp {

ServingCost servingCost(const Cluster& c, int gpus, double tokensPerS) {
    ServingCost r;
    const double g = double(gpus);
    if (c.pricePerGpuHour > 0) {
        r.priced = true;
        r.usdPerGpuHour = c.pricePerGpuHour;
        r.usdPerHour = g * c.pricePerGpuHour;
        r.priceSource = c.priceSource;
        // $ an hour over the tokens of an hour, per million.
        if (tokensPerS > 0) r.usdPerMillionTokens = r.usdPerHour / (tokensPerS * 3600.0) * 1e6;
    }
    if (c.gpu.tdpW > 0) {
        r.powered = true;
        r.tdpW = c.gpu.tdpW;
        r.megawatts = g * c.gpu.tdpW * 1e-6;
        r.tokensPerSPerMegawatt = tokensPerS / r.megawatts;
    }
    return r;
}

} // namespace sp
