#include "agent/wal/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace apollo::wal::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

using Tables = std::array<std::array<uint32_t, 256>, 8>;

// Slicing-by-8 tables, built at compile time (no runtime initialisation).
constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) {
      c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    }
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) {
      t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    }
  }
  return t;
}

constexpr Tables kTables = MakeTables();

uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;  // x86/arm64 are little-endian, which the tables assume
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t init_crc, const char* data,
                                                       size_t n) {
  uint64_t crc = ~init_crc;
  while (n >= 8) {
    crc = _mm_crc32_u64(crc, Load64(data));
    data += 8;
    n -= 8;
  }
  uint32_t c = static_cast<uint32_t>(crc);
  while (n > 0) {
    c = _mm_crc32_u8(c, static_cast<uint8_t>(*data));
    ++data;
    --n;
  }
  return ~c;
}

bool DetectSse42() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#endif

}  // namespace

uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n) {
  uint32_t c = ~init_crc;
  while (n >= 8) {
    uint64_t v = Load64(data) ^ c;
    c = kTables[7][v & 0xff] ^ kTables[6][(v >> 8) & 0xff] ^ kTables[5][(v >> 16) & 0xff] ^
        kTables[4][(v >> 24) & 0xff] ^ kTables[3][(v >> 32) & 0xff] ^ kTables[2][(v >> 40) & 0xff] ^
        kTables[1][(v >> 48) & 0xff] ^ kTables[0][v >> 56];
    data += 8;
    n -= 8;
  }
  while (n > 0) {
    c = kTables[0][(c ^ static_cast<uint8_t>(*data)) & 0xff] ^ (c >> 8);
    ++data;
    --n;
  }
  return ~c;
}

bool HardwareAccelerated() {
#if defined(__x86_64__)
  // A function-local static: computed once, immutable afterwards.
  static const bool kHasSse42 = DetectSse42();
  return kHasSse42;
#else
  return false;
#endif
}

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
#if defined(__x86_64__)
  if (HardwareAccelerated()) {
    return ExtendSse42(init_crc, data, n);
  }
#endif
  return ExtendPortable(init_crc, data, n);
}

}  // namespace apollo::wal::crc32c
