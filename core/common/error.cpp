#include "core/common/error.h"

namespace sp {

std::string Error::str() const {
    std::string s;
    if (!file.empty()) {
        s += file;
        if (line > 0) {
            s.append(1, ':').append(std::to_string(line));
            if (column > 0) s.append(1, ':').append(std::to_string(column));
        }
        s.append(": ");
    }
    if (!field.empty()) s.append(field).append(": ");
    s.append(message);
    return s;
}

} // namespace sp
