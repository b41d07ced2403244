#include "checkpoint/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the format's own limit
// Limits of canrun's own, far above any published checkpoint (DeepSeek-V3 has 91,991 tensors,
// none of rank above 4), so a hostile header cannot make the loader sort millions of entries or
// print megabytes in an error.
constexpr size_t kMaxTensors = 1u << 20;
constexpr size_t kMaxRank = 8;
constexpr size_t kMaxTensorNameBytes = 1024;

// Every dtype the safetensors format defines, with its element size in bits.
size_t safetensors_element_bits(const std::string& name) {
  static const std::map<std::string, size_t> kBits = {
      {"BOOL", 8}, {"U8", 8},   {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8},
      {"I16", 16}, {"U16", 16}, {"F16", 16}, {"BF16", 16},   {"I32", 32},    {"U32", 32},
      {"F32", 32}, {"F64", 64}, {"I64", 64}, {"U64", 64},    {"F4", 4}};
  const auto it = kBits.find(name);
  return it == kBits.end() ? 0 : it->second;
}

[[noreturn]] void bad_file(const std::string& path, const std::string& problem) {
  fail(ErrorKind::kCheckpoint, path + ": " + problem);
}

uint64_t read_u64_le(const std::byte* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(p[i]);
  return value;
}

TensorRecord parse_entry(const std::string& path, const std::string& name, const Json& entry,
                         std::span<const std::byte> data_section) {
  if (name.size() > kMaxTensorNameBytes)
    bad_file(path, "a tensor name is " + std::to_string(name.size()) + " bytes long, more than " +
                       std::to_string(kMaxTensorNameBytes) + ": '" + name.substr(0, 64) + "...'");
  const std::string where = "tensor '" + name + "'";
  if (!entry.is_object()) bad_file(path, where + ": header entry is not an object");
  if (!entry.contains("dtype") || !entry["dtype"].is_string())
    bad_file(path, where + ": missing string field 'dtype'");
  if (!entry.contains("shape") || !entry["shape"].is_array())
    bad_file(path, where + ": missing array field 'shape'");
  if (entry["shape"].size() > kMaxRank)
    bad_file(path, where + ": shape has " + std::to_string(entry["shape"].size()) + " dimensions, more than " +
                       std::to_string(kMaxRank));
  if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
      entry["data_offsets"].size() != 2 || !entry["data_offsets"][0].is_number_unsigned() ||
      !entry["data_offsets"][1].is_number_unsigned())
    bad_file(path, where + ": 'data_offsets' must be two non-negative integers");

  TensorRecord record;
  record.name = name;
  record.file = path;
  record.dtype_name = entry["dtype"].get<std::string>();
  const size_t bits = safetensors_element_bits(record.dtype_name);
  if (bits == 0) bad_file(path, where + ": unknown dtype '" + record.dtype_name + "'");
  record.dtype = parse_dtype(record.dtype_name);

  uint64_t numel = 1;
  for (const Json& dim : entry["shape"]) {
    if (!dim.is_number_unsigned()) bad_file(path, where + ": shape has a non-integer or negative dimension");
    const uint64_t d = dim.get<uint64_t>();
    if (d != 0 && numel > std::numeric_limits<uint64_t>::max() / 64 / d)
      bad_file(path, where + ": shape is absurdly large");
    numel *= d;
    record.shape.push_back(static_cast<int64_t>(d));
  }
  const uint64_t begin = entry["data_offsets"][0].get<uint64_t>();
  const uint64_t end = entry["data_offsets"][1].get<uint64_t>();
  if (end < begin) bad_file(path, where + ": data_offsets end is before begin");
  if (end > data_section.size())
    bad_file(path, where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                       "] run past the end of the file (data section is " +
                       std::to_string(data_section.size()) + " bytes; truncated file?)");
  const uint64_t expected = (numel * bits + 7) / 8;
  if (end - begin != expected)
    bad_file(path, where + ": shape " + shape_string(record.shape) + " of " + record.dtype_name +
                       " needs " + std::to_string(expected) + " bytes but data_offsets span " +
                       std::to_string(end - begin));
  record.data = data_section.subspan(begin, end - begin);
  return record;
}

}  // namespace

int64_t TensorRecord::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path, bool populate) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile(MappedFile(path, populate)));
  const std::span<const std::byte> bytes = file->file_.bytes();
  if (bytes.size() < 8)
    bad_file(path, "truncated: " + std::to_string(bytes.size()) +
                       " bytes, shorter than the 8-byte header length");
  const uint64_t header_len = read_u64_le(bytes.data());
  if (header_len > kMaxHeaderBytes || header_len > bytes.size() - 8)
    bad_file(path, "header length " + std::to_string(header_len) + " runs past the end of the file (" +
                       std::to_string(bytes.size()) + " bytes)");
  const Json header = parse_json(std::string_view(reinterpret_cast<const char*>(bytes.data() + 8), header_len),
                                 path + ": header", ErrorKind::kCheckpoint, {kMaxHeaderBytes, 64});
  if (!header.is_object()) bad_file(path, "header is not a JSON object");
  if (header.size() > kMaxTensors)
    bad_file(path, "header lists " + std::to_string(header.size()) + " tensors, more than " +
                       std::to_string(kMaxTensors));

  const std::span<const std::byte> data_section = bytes.subspan(8 + header_len);
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    file->tensors_.emplace(name, parse_entry(path, name, entry, data_section));
  }

  std::vector<const TensorRecord*> by_offset;
  for (const auto& [name, record] : file->tensors_) by_offset.push_back(&record);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorRecord* a, const TensorRecord* b) { return a->data.data() < b->data.data(); });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorRecord* prev = by_offset[i - 1];
    if (by_offset[i]->data.data() < prev->data.data() + prev->data.size())
      bad_file(path, "tensors '" + prev->name + "' and '" + by_offset[i]->name + "' overlap");
  }
  return file;
}

void WeightStore::drop_resident_pages() const {
  for (const auto& file : files_) release_pages(file->mapping().bytes());
}

void WeightStore::release_if_mapped(std::span<const std::byte> bytes) const {
  if (bytes.empty()) return;
  for (const auto& file : files_) {
    const std::span<const std::byte> mapped = file->mapping().bytes();
    if (bytes.data() >= mapped.data() && bytes.data() + bytes.size() <= mapped.data() + mapped.size())
      return release_pages(bytes);
  }
}

WeightStore WeightStore::open_folder(const std::string& model_dir, bool populate) {
  namespace fs = std::filesystem;
  WeightStore store;
  const fs::path dir(model_dir);
  const fs::path index_path = dir / "model.safetensors.index.json";
  const fs::path single_path = dir / "model.safetensors";

  if (fs::exists(index_path)) {
    const Json index = read_json_file(index_path.string(), ErrorKind::kCheckpoint);
    if (!index.contains("weight_map") || !index["weight_map"].is_object())
      bad_file(index_path.string(), "missing object field 'weight_map'");
    std::map<std::string, size_t> file_slots;
    for (const auto& [tensor, shard] : index["weight_map"].items()) {
      if (!shard.is_string()) bad_file(index_path.string(), "weight_map['" + tensor + "'] is not a file name");
      const std::string shard_name = shard.get<std::string>();
      if (shard_name.find('/') != std::string::npos || shard_name == "..")
        bad_file(index_path.string(), "weight_map['" + tensor + "'] names a file outside the folder");
      if (!file_slots.count(shard_name)) {
        file_slots[shard_name] = store.files_.size();
        store.files_.push_back(SafetensorsFile::open((dir / shard_name).string(), populate));
      }
      const auto& tensors = store.files_[file_slots[shard_name]]->tensors();
      const auto it = tensors.find(tensor);
      if (it == tensors.end())
        bad_file(index_path.string(), "tensor '" + tensor + "' is mapped to " + shard_name +
                                          " but that file does not contain it");
      store.records_[tensor] = &it->second;
    }
  } else if (fs::exists(single_path)) {
    store.files_.push_back(SafetensorsFile::open(single_path.string(), populate));
    for (const auto& [name, record] : store.files_.back()->tensors()) store.records_[name] = &record;
  } else {
    fail(ErrorKind::kCheckpoint,
         model_dir + ": no model.safetensors or model.safetensors.index.json in this folder");
  }
  return store;
}

const TensorRecord& WeightStore::get(const std::string& name, const std::vector<int64_t>& shape) const {
  const auto it = records_.find(name);
  if (it == records_.end()) fail(ErrorKind::kCheckpoint, "missing tensor '" + name + "' in the checkpoint");
  const TensorRecord& record = *it->second;
  if (record.shape != shape)
    fail(ErrorKind::kCheckpoint, record.file + ": tensor '" + name + "' has shape " +
                                     shape_string(record.shape) + ", expected " + shape_string(shape));
  if (!record.dtype)
    fail(ErrorKind::kCheckpoint, record.file + ": tensor '" + name + "' is stored as " + record.dtype_name +
                                     "; canrun reads F32, BF16 and F16");
  return record;
}

const TensorRecord& WeightStore::get_raw(const std::string& name, const std::vector<int64_t>& shape,
                                         const std::string& dtype_name) const {
  const auto it = records_.find(name);
  if (it == records_.end()) fail(ErrorKind::kCheckpoint, "missing tensor '" + name + "' in the checkpoint");
  const TensorRecord& record = *it->second;
  if (record.shape != shape)
    fail(ErrorKind::kCheckpoint, record.file + ": tensor '" + name + "' has shape " +
                                     shape_string(record.shape) + ", expected " + shape_string(shape));
  if (record.dtype_name != dtype_name)
    fail(ErrorKind::kCheckpoint, record.file + ": tensor '" + name + "' is stored as " + record.dtype_name +
                                     ", expected " + dtype_name);
  return record;
}

std::vector<float> WeightStore::load_f32(const std::string& name, const std::vector<int64_t>& shape) const {
  const TensorRecord& record = get(name, shape);
  std::vector<float> values(static_cast<size_t>(record.numel()));
  widen_to_f32(*record.dtype, record.data.data(), values.size(), values.data());
  return values;
}

DType WeightStore::stored_dtype() const {
  std::map<DType, size_t> counts;
  for (const auto& [name, record] : records_) {
    // FP8 values are read only with their scales, so parse_dtype leaves them out; they count here.
    const std::optional<DType> dtype =
        record->dtype_name == dtype_name(DType::kF8E4M3) ? std::optional(DType::kF8E4M3) : record->dtype;
    if (dtype) counts[*dtype] += static_cast<size_t>(record->numel());
  }
  DType best = DType::kF32;
  size_t best_count = 0;
  for (const auto& [dtype, count] : counts)
    if (count > best_count) best = dtype, best_count = count;
  return best;
}

}  // namespace canrun
