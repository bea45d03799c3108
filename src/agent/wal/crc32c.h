#pragma once

// CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), the
// checksum of the agent's WAL (docs/wal_format.md).
//
// Debian ships no crc32c library, so this is a small one: a slicing-by-8
// table fallback plus the SSE4.2 crc32 instruction when the CPU has it
// (chosen once per process from __builtin_cpu_supports; the choice is a
// pure function of the hardware, so it is not mutable global state).
//
// Thread-safety: pure functions; safe from any thread.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace apollo::wal::crc32c {

// Returns the CRC32C of concat(A, data[0,n)) where init_crc is the CRC32C of
// some string A. Extend(0, data, n) is the CRC32C of data.
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view s) { return Extend(0, s.data(), s.size()); }

// The portable table path, exposed so tests can check both paths agree.
uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n);

// True when Extend() uses the SSE4.2 instruction on this CPU.
bool HardwareAccelerated();

// A CRC stored next to the data it covers is masked (as leveldb does): the
// CRC of a string that itself contains embedded CRCs is otherwise prone to
// degenerate cases (e.g. CRC of zeros followed by its own CRC).
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;

inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace apollo::wal::crc32c
