#pragma once

namespace apollo {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace apollo
