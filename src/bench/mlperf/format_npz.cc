// npz = numpy.savez: a zip archive, members stored (no compression), each
// local header with a zip64 extra field (savez opens members with
// force_zip64=True), a central directory and an end record.
#include <fmt/format.h>

#include "bench/mlperf/formats.h"

namespace t0fs::bench::mlperf {
namespace {

constexpr uint64_t kZip64Extra = 20;  // id, size, uncompressed, compressed
constexpr uint64_t kLocalHeader = 30;
constexpr uint64_t kCentralHeader = 46;
constexpr uint64_t kEndRecord = 22;
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01

void Put16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v & 0xff));
  s.push_back(static_cast<char>(v >> 8));
}
void Put32(std::string& s, uint32_t v) {
  for (int idx = 0; idx < 4; ++idx) s.push_back(static_cast<char>((v >> (8 * idx)) & 0xff));
}
void Put64(std::string& s, uint64_t v) {
  for (int idx = 0; idx < 8; ++idx) s.push_back(static_cast<char>((v >> (8 * idx)) & 0xff));
}

struct Member {
  std::string name;
  std::string npy_header;
  uint64_t data_bytes = 0;
  uint64_t size() const { return npy_header.size() + data_bytes; }
};

std::string LocalHeader(const Member& m, uint32_t crc) {
  std::string h;
  Put32(h, 0x04034b50);
  Put16(h, 45);  // version needed: zip64
  Put16(h, 0);   // flags
  Put16(h, 0);   // stored
  Put16(h, 0);   // time
  Put16(h, kDosDate);
  Put32(h, crc);
  Put32(h, 0xffffffff);  // sizes in the zip64 extra
  Put32(h, 0xffffffff);
  Put16(h, static_cast<uint16_t>(m.name.size()));
  Put16(h, static_cast<uint16_t>(kZip64Extra));
  h += m.name;
  Put16(h, 0x0001);
  Put16(h, 16);
  Put64(h, m.size());
  Put64(h, m.size());
  return h;
}

std::string CentralHeader(const Member& m, uint32_t crc, uint64_t local_offset) {
  std::string h;
  Put32(h, 0x02014b50);
  Put16(h, (3 << 8) | 45);  // made by: unix, 4.5
  Put16(h, 45);
  Put16(h, 0);
  Put16(h, 0);
  Put16(h, 0);
  Put16(h, kDosDate);
  Put32(h, crc);
  Put32(h, static_cast<uint32_t>(m.size()));
  Put32(h, static_cast<uint32_t>(m.size()));
  Put16(h, static_cast<uint16_t>(m.name.size()));
  Put16(h, 0);  // extra
  Put16(h, 0);  // comment
  Put16(h, 0);  // disk
  Put16(h, 0);  // internal attributes
  Put32(h, 0600u << 16);  // external attributes (rw-------)
  Put32(h, static_cast<uint32_t>(local_offset));
  h += m.name;
  return h;
}

std::vector<Member> Members(const FileShape& shape) {
  Member x{"x.npy",
           NpyHeader("|u1", fmt::format("({}, {}, {})", shape.dim1, shape.dim2, shape.samples),
                     shape.dim1),
           shape.PayloadBytes()};
  Member y{"y.npy", NpyHeader("<i8", fmt::format("({},)", shape.samples), shape.samples),
           uint64_t{8} * shape.samples};
  return {x, y};
}

}  // namespace

std::string NpyHeader(const std::string& descr, const std::string& shape_repr,
                      uint64_t first_axis) {
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape_repr);
  // numpy >= 1.24 leaves room for the first axis to grow to 21 digits.
  size_t digits = std::to_string(first_axis).size();
  if (digits < 21) dict.append(21 - digits, ' ');
  size_t header_len = dict.size() + 1;
  size_t pad = 64 - ((8 + 2 + header_len) % 64);
  if (pad == 64) pad = 0;
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  Put16(out, static_cast<uint16_t>(header_len + pad));
  out += dict;
  out.append(pad, ' ');
  out.push_back('\n');
  return out;
}

uint64_t NpzBytes(const FileShape& shape) {
  uint64_t total = kEndRecord;
  for (const Member& m : Members(shape)) {
    total += kLocalHeader + m.name.size() + kZip64Extra + m.size();
    total += kCentralHeader + m.name.size();
  }
  return total;
}

Status WriteNpz(const FileShape& shape, FileSink& sink) {
  std::vector<Member> members = Members(shape);
  std::vector<uint32_t> crcs;
  std::vector<uint64_t> offsets;
  for (const Member& m : members) {
    if (sink.offset() + m.size() > 0xffffffffULL) {
      return Status(StatusCode::kInvalidArgument, "npz members above 4 GiB are not supported");
    }
    offsets.push_back(sink.offset());
    RETURN_IF_ERROR(sink.Append(LocalHeader(m, 0)));
    sink.BeginChecksum(ChecksumKind::kCrc32);
    RETURN_IF_ERROR(sink.Append(m.npy_header));
    if (m.name == "x.npy") {
      RETURN_IF_ERROR(sink.AppendRandom(m.data_bytes));
    } else {
      RETURN_IF_ERROR(sink.Append(std::string(m.data_bytes, '\0')));  // labels: 0
    }
    crcs.push_back(sink.checksum());
    sink.BeginChecksum(ChecksumKind::kNone);
  }
  uint64_t cd_offset = sink.offset();
  std::string cd;
  for (size_t idx = 0; idx < members.size(); ++idx) {
    cd += CentralHeader(members[idx], crcs[idx], offsets[idx]);
  }
  std::string end;
  Put32(end, 0x06054b50);
  Put16(end, 0);
  Put16(end, 0);
  Put16(end, static_cast<uint16_t>(members.size()));
  Put16(end, static_cast<uint16_t>(members.size()));
  Put32(end, static_cast<uint32_t>(cd.size()));
  Put32(end, static_cast<uint32_t>(cd_offset));
  Put16(end, 0);
  RETURN_IF_ERROR(sink.Append(cd + end));
  // The CRCs are known only now: patch them into the local headers.
  for (size_t idx = 0; idx < members.size(); ++idx) {
    std::string crc;
    Put32(crc, crcs[idx]);
    RETURN_IF_ERROR(sink.PatchAt(offsets[idx] + 14, std::as_bytes(std::span(crc.data(), 4))));
  }
  return Status::Ok();
}

}  // namespace t0fs::bench::mlperf
