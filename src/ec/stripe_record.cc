#include "ec/stripe_record.h"

#include <fmt/format.h>

#include <charconv>

#include "ec/erasure_code.h"

namespace t0fs::ec {
namespace {

// Reads one unsigned number of `text` at `pos` followed by `end` (or the
// end of the text when `end` is 0).
bool Number(std::string_view text, size_t& pos, char end, uint64_t& out) {
  const char* first = text.data() + pos;
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  if (ec != std::errc() || ptr == first) return false;
  pos = static_cast<size_t>(ptr - text.data());
  if (end == 0) return pos == text.size();
  if (pos >= text.size() || text[pos] != end) return false;
  ++pos;
  return true;
}

}  // namespace

uint32_t EcStripe::placed() const {
  uint32_t n = 0;
  for (const CellPlace& c : cells) n += c.node.value() != 0;
  return n;
}

std::string FormatStripe(const EcStripe& stripe) {
  if (stripe.empty()) return "";
  std::string out = fmt::format("{}+{} {} {} {} ", stripe.k, stripe.m, stripe.unit, stripe.version,
                                stripe.length);
  for (size_t i = 0; i < stripe.cells.size(); ++i) {
    if (i > 0) out += ',';
    out += fmt::format("{}:{}", stripe.cells[i].node.value(), stripe.cells[i].volume.value());
  }
  return out;
}

Result<EcStripe> ParseStripe(std::string_view text) {
  EcStripe s;
  if (text.empty()) return s;
  auto bad = [&](std::string_view what) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("erasure-coded stripe '{}': {}", text, what));
  };
  size_t pos = 0;
  uint64_t k = 0, m = 0;
  if (!Number(text, pos, '+', k) || !Number(text, pos, ' ', m)) return bad("no K+M");
  if (k == 0 || m == 0 || k + m > kMaxCells) return bad("K+M out of range");
  s.k = static_cast<uint32_t>(k);
  s.m = static_cast<uint32_t>(m);
  if (!Number(text, pos, ' ', s.unit) || s.unit == 0) return bad("no unit");
  if (!Number(text, pos, ' ', s.version)) return bad("no version");
  if (!Number(text, pos, ' ', s.length)) return bad("no length");
  for (uint64_t i = 0; i < k + m; ++i) {
    uint64_t node = 0, volume = 0;
    const bool last = i + 1 == k + m;
    if (!Number(text, pos, ':', node) || !Number(text, pos, last ? 0 : ',', volume)) {
      return bad(fmt::format("cell {} is not node:volume (K+M = {} cells)", i, k + m));
    }
    s.cells.push_back(CellPlace{NodeId(node), VolumeId(volume)});
  }
  return s;
}

}  // namespace t0fs::ec
