// EcStripe: where the cells of one erasure-coded chunk are (protect=ec:K+M),
// as meta records it (chunks.ec, docs/formats/meta-schema.md) and hands it
// to `t0fs layout`: the code, the chunk version and length the cells were
// cut from, and each cell's node and volume.
//
// Its text form, one line: "K+M UNIT VERSION LENGTH N:V,N:V,..." with one
// node:volume pair per cell in cell order (0:0 for a cell that no node
// holds); "" is no stripe. Parse refuses anything else.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/status.h"

namespace t0fs::ec {

struct CellPlace {
  NodeId node;  // 0: no node holds it
  VolumeId volume;
  friend bool operator==(const CellPlace&, const CellPlace&) = default;
};

struct EcStripe {
  uint32_t k = 0;  // 0: no stripe
  uint32_t m = 0;
  uint64_t unit = 0;
  uint64_t version = 0;          // the chunk version the cells hold
  uint64_t length = 0;           // the chunk's bytes at that version
  std::vector<CellPlace> cells;  // k + m, in cell order

  bool empty() const { return k == 0; }
  // Cells a node holds.
  uint32_t placed() const;
  friend bool operator==(const EcStripe&, const EcStripe&) = default;
};

std::string FormatStripe(const EcStripe& stripe);
// kInvalidArgument naming what is wrong.
Result<EcStripe> ParseStripe(std::string_view text);

}  // namespace t0fs::ec
