#include "core/cost/economics.h"

#include <cstdio>

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

ServingCost servingCost(const Cluster& a, int ga, const Cluster& b, int gb, double tokensPerS) {
    if (a.gpu == b.gpu && a.pricePerGpuHour == b.pricePerGpuHour) return servingCost(a, ga + gb, tokensPerS);
    const ServingCost x = servingCost(a, ga, tokensPerS), y = servingCost(b, gb, tokensPerS);
    ServingCost r;
    const double g = double(ga + gb);
    if (x.priced && y.priced && g > 0) {
        r.priced = true;
        r.usdPerHour = x.usdPerHour + y.usdPerHour;
        r.usdPerGpuHour = r.usdPerHour / g;
        if (tokensPerS > 0) r.usdPerMillionTokens = r.usdPerHour / (tokensPerS * 3600.0) * 1e6;
        // One basis with a note per GPU ("<basis>; 19 clouds", "<basis>; 10 clouds"): the basis once.
        const auto basis = [](const std::string& src) { return src.substr(0, src.find("; ")); };
        const auto note = [](const std::string& src) {
            const size_t at = src.find("; ");
            return at == std::string::npos ? std::string() : src.substr(at + 2);
        };
        if (x.priceSource == y.priceSource)
            r.priceSource = x.priceSource;
        else if (basis(x.priceSource) == basis(y.priceSource))
            r.priceSource = basis(x.priceSource) + "; " + a.gpu.name + ": " + note(x.priceSource) + ", " +
                            b.gpu.name + ": " + note(y.priceSource);
        else
            r.priceSource = a.gpu.name + ": " + x.priceSource + "; " + b.gpu.name + ": " + y.priceSource;
        char buf[300];
        std::snprintf(buf, sizeof buf, "%d %s at $%.4g and %d %s at $%.4g a GPU-hour", ga, a.gpu.name.c_str(),
                      x.usdPerGpuHour, gb, b.gpu.name.c_str(), y.usdPerGpuHour);
        r.mix = buf;
    }
    if (x.powered && y.powered && g > 0) {
        r.powered = true;
        r.megawatts = x.megawatts + y.megawatts;
        r.tdpW = r.megawatts * 1e6 / g;
        r.tokensPerSPerMegawatt = tokensPerS / r.megawatts;
    }
    return r;
}

} // namespace sp
