#include "core/common/error.h"

namespace sp {

std::string Error::str() const {
    std::string s;
    if (!file.empty()) {
        s += file;
        if (line > 0) {
            s += ':' + std::to_string(line);
            if (column > 0) s += ':' + std::to_string(column);
        }
        s += ": ";
    }
    if (!field.empty()) s += field + ": ";
    s += message;
    return s;
}

} // namespace sp
