// Reads .safetensors files (single or sharded with model.safetensors.index.json)
// by memory-mapping them; tensor data is never copied until a caller widens it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tensor/dtype.h"
#include "util/mapped_file.h"

namespace canrun {

struct TensorRecord {
  std::string name;
  std::string dtype_name;       // as stored; may be one canrun cannot compute with
  std::optional<DType> dtype;   // set when canrun can widen it to f32
  std::vector<int64_t> shape;
  std::span<const std::byte> data;  // inside the file's mapping
  std::string file;                 // for messages

  int64_t numel() const;
};

// One .safetensors file, validated at open: header bounds, JSON, dtypes, shapes
// matching byte ranges, ranges inside the data section and not overlapping.
class SafetensorsFile {
 public:
  static std::unique_ptr<SafetensorsFile> open(const std::string& path, bool populate = true);
  const std::map<std::string, TensorRecord>& tensors() const { return tensors_; }
  const MappedFile& mapping() const { return file_; }

 private:
  explicit SafetensorsFile(MappedFile file) : file_(std::move(file)) {}
  MappedFile file_;
  std::map<std::string, TensorRecord> tensors_;
};

// All weight files of a model folder, addressed by tensor name.
class WeightStore {
 public:
  // Opens model.safetensors, or every shard listed in model.safetensors.index.json; reads the
  // files in up front when `populate` (MappedFile).
  static WeightStore open_folder(const std::string& model_dir, bool populate = true);
  // release_pages (util/mapped_file.h) over every file: its matrices were replaced by packed copies.
  void drop_resident_pages() const;
  // release_pages over `bytes` when they lie inside one of the files' mappings (a tensor read in
  // place); anything else (a copy on the heap) is left alone.
  void release_if_mapped(std::span<const std::byte> bytes) const;

  bool contains(const std::string& name) const { return records_.count(name) > 0; }
  // Throws Error(kCheckpoint) naming the tensor when it is missing or its shape differs.
  const TensorRecord& get(const std::string& name, const std::vector<int64_t>& shape) const;
  // A tensor kept in a storage type canrun does not compute with (e.g. U8 for packed MXFP4),
  // checked for shape and that stored type.
  const TensorRecord& get_raw(const std::string& name, const std::vector<int64_t>& shape,
                              const std::string& dtype_name) const;
  // The tensor widened to f32 (one copy), after the same checks as get().
  std::vector<float> load_f32(const std::string& name, const std::vector<int64_t>& shape) const;
  const std::map<std::string, const TensorRecord*>& records() const { return records_; }
  DType stored_dtype() const;  // the most common dtype, for reporting

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorRecord*> records_;
};

std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace canrun
