#include "program/checkpoint_loader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "tensor/fp8.h"
#include "tensor/mxfp4.h"
#include "tensor/packed_int.h"
#include "util/error.h"
#include "util/mapped_file.h"

namespace canrun {

WeightMatrix CheckpointLoader::matrix_part(const std::string& name, int64_t out, int64_t in, MatrixPart part) {
  if (!conv1d_) return plain_part(name + ".weight", out, in, part);
  const WeightMatrix stored = plain_part(name + ".weight", in, out, {part.cols, part.rows});
  WeightMatrix transposed = stored.transposed();
  store_.release_if_mapped(stored.row_bytes());  // the transposed copy is what the model uses
  return transposed;
}

WeightMatrix CheckpointLoader::plain_part(const std::string& name, int64_t out, int64_t in, MatrixPart part) {
  if (fp8_.present() && store_.contains(name) && store_.records().at(name)->dtype_name == "F8_E4M3")
    return fp8_part(name, out, in, part);
  if (const std::string_view suffix = ".weight"; packed_int_.present() && name.ends_with(suffix)) {
    const std::string stem = name.substr(0, name.size() - suffix.size());
    if (packed_int_.packing == IntPacking::kGptq && store_.contains(stem + ".qweight"))
      return gptq_part(stem, out, in, part);
    if (store_.contains(stem + ".weight_packed")) return packed_int_part(stem, out, in, part);
  }
  const TensorRecord& record = store_.get(name, {out, in});
  const int64_t rows = part.rows.count, cols = part.cols.count;
  if (part.rows.first == 0 && rows == out && cols == in) {
    if (record.dtype != DType::kBF16) return WeightMatrix::f32(read(name, {out, in}), out, in);
    if (reinterpret_cast<uintptr_t>(record.data.data()) % alignof(uint16_t) == 0)
      return WeightMatrix::bf16_borrowing(reinterpret_cast<const uint16_t*>(record.data.data()), out, in);
  }
  // A rank's block: only its rows and columns are copied (and widened), so each rank holds
  // about 1/N of every split matrix; whole rows stored as computed are used in place.
  const size_t element = dtype_size(*record.dtype);
  const auto row_start = [&](int64_t r) {
    return record.data.data() + ((part.rows.first + r) * in + part.cols.first) * static_cast<int64_t>(element);
  };
  const bool in_place = cols == in && reinterpret_cast<uintptr_t>(row_start(0)) % element == 0;
  if (in_place && record.dtype == DType::kBF16)
    return WeightMatrix::bf16_borrowing(reinterpret_cast<const uint16_t*>(row_start(0)), rows, cols);
  if (in_place && record.dtype == DType::kF32)
    return WeightMatrix::f32(
        FloatBuffer::borrowing(reinterpret_cast<const float*>(row_start(0)), static_cast<size_t>(rows * cols)),
        rows, cols);
  // Copied out, the tensor's mapped pages (all of them for a column block) are not needed.
  if (record.dtype == DType::kBF16) {
    std::vector<uint16_t> copy(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) std::memcpy(copy.data() + r * cols, row_start(r), cols * element);
    release_pages(record.data);
    return WeightMatrix::bf16_owning(std::move(copy), rows, cols);
  }
  std::vector<float> values(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    widen_to_f32(*record.dtype, row_start(r), static_cast<size_t>(cols), values.data() + r * cols);
  release_pages(record.data);
  return WeightMatrix::f32(FloatBuffer::owning(std::move(values)), rows, cols);
}

WeightMatrix CheckpointLoader::fp8_part(const std::string& name, int64_t out, int64_t in, MatrixPart part) {
  const TensorRecord& values = store_.get_raw(name, {out, in}, "F8_E4M3");
  const std::vector<int64_t> grid = {(out + fp8_.rows - 1) / fp8_.rows, (in + fp8_.cols - 1) / fp8_.cols};
  const std::vector<float> scales = store_.load_f32(name + "_scale_inv", grid);
  const int64_t rows = part.rows.count, cols = part.cols.count;
  // Kept as FP8 where the part's blocks of inputs are the checkpoint's (a column block starting
  // mid-block is dequantised instead): each row takes its block row's scales.
  if (part.cols.first % fp8_.cols == 0) {
    const int64_t blocks = (cols + fp8_.cols - 1) / fp8_.cols, first_block = part.cols.first / fp8_.cols;
    std::vector<float> row_scales(static_cast<size_t>(rows * blocks));
    for (int64_t r = 0; r < rows; ++r)
      std::copy_n(scales.data() + (part.rows.first + r) / fp8_.rows * grid[1] + first_block, blocks,
                  row_scales.data() + r * blocks);
    const auto* first = reinterpret_cast<const uint8_t*>(values.data.data()) + part.rows.first * in + part.cols.first;
    if (cols == in)
      return WeightMatrix::scaled_bytes_borrowing(DType::kF8E4M3, first, FloatBuffer::owning(std::move(row_scales)),
                                                  fp8_.cols, rows, cols);
    std::vector<uint8_t> copy(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) std::copy_n(first + r * in, cols, copy.data() + r * cols);
    release_pages(values.data);
    return WeightMatrix::scaled_bytes_owning(DType::kF8E4M3, std::move(copy),
                                             FloatBuffer::owning(std::move(row_scales)), fp8_.cols, rows, cols);
  }
  std::vector<float> dequantized(static_cast<size_t>(rows * cols));
  dequantize_fp8(values.data.data(), scales.data(), in, fp8_, part.rows.first, rows, part.cols.first, cols,
                 dequantized.data());
  release_pages(values.data);
  // f32: value times scale rounds once, as transformers dequantises it; a bf16 copy would round
  // again.
  return WeightMatrix::f32(FloatBuffer::owning(std::move(dequantized)), rows, cols);
}

WeightMatrix CheckpointLoader::packed_int_part(const std::string& stem, int64_t out, int64_t in, MatrixPart part) {
  const TensorRecord& words = store_.get_raw(stem + ".weight_packed", {out, packed_int_.words_per_row(in)}, "I32");
  const TensorRecord& scales = store_.get(stem + ".weight_scale", {out, packed_int_.groups(in)});
  if (store_.contains(stem + ".weight_shape")) {
    const TensorRecord& shape = store_.get_raw(stem + ".weight_shape", {2}, "I64");
    int64_t stored[2];
    std::memcpy(stored, shape.data.data(), sizeof stored);
    if (stored[0] != out || stored[1] != in)
      fail(ErrorKind::kCheckpoint, "tensor '" + stem + ".weight_shape' in " + shape.file + " says [" +
                                       std::to_string(stored[0]) + ", " + std::to_string(stored[1]) +
                                       "], expected [" + std::to_string(out) + ", " + std::to_string(in) + "]");
  }
  if (reinterpret_cast<uintptr_t>(words.data.data()) % alignof(uint32_t) != 0)
    fail(ErrorKind::kCheckpoint, "tensor '" + stem + ".weight_packed' in " + words.file +
                                     " is not aligned to its 4-byte words");
  const int64_t rows = part.rows.count, cols = part.cols.count;
  const bool whole_groups = packed_int_.group_size == 0 || part.cols.first % packed_int_.group_size == 0;
  if (whole_groups && (packed_int_.bits == 8 || part.cols.first % 2 == 0)) return int_part(words, scales, in, part);
  const DType dtype = *scales.dtype;
  const auto dequantize_into = [&](void* out) {
    dequantize_packed_int(reinterpret_cast<const uint32_t*>(words.data.data()), scales.data.data(), dtype, in,
                          packed_int_, part.rows.first, rows, part.cols.first, cols, static_cast<std::byte*>(out));
    release_pages(words.data);
  };
  const size_t count = static_cast<size_t>(rows * cols);
  if (dtype == DType::kF32) {
    std::vector<float> values(count);
    dequantize_into(values.data());
    return WeightMatrix::f32(FloatBuffer::owning(std::move(values)), rows, cols);
  }
  std::vector<uint16_t> halves(count);
  dequantize_into(halves.data());
  if (dtype == DType::kBF16) return WeightMatrix::bf16_owning(std::move(halves), rows, cols);
  std::vector<float> widened(count);  // f16, widened as f16 weights are
  widen_to_f32(dtype, reinterpret_cast<const std::byte*>(halves.data()), count, widened.data());
  return WeightMatrix::f32(FloatBuffer::owning(std::move(widened)), rows, cols);
}

// Kept as scaled bytes. An int8 byte is stored as the value plus 128, so flipping its top bit
// gives the int8; int4 nibbles stay as stored (value + 8, WeightMatrix's kI4), used in place
// when the part is the whole matrix and its rows fill their words. The scales are widened to
// f32 (exactly), one per row and group of the part's inputs.
WeightMatrix CheckpointLoader::int_part(const TensorRecord& words, const TensorRecord& scales, int64_t in,
                                        MatrixPart part) {
  const int64_t rows = part.rows.count, cols = part.cols.count;
  const int64_t groups = packed_int_.groups(in), row_bytes = packed_int_.words_per_row(in) * 4;
  const DType dtype = packed_int_.bits == 8 ? DType::kI8 : DType::kI4;
  const int64_t part_row_bytes = scaled_bytes_for(dtype, cols), first_byte = scaled_bytes_for(dtype, part.cols.first);
  const int64_t block = packed_int_.group_size > 0 ? packed_int_.group_size : std::max<int64_t>(cols, 1);
  const int64_t first_group = packed_int_.group_size > 0 ? part.cols.first / block : 0;
  const int64_t part_groups = (cols + block - 1) / block;
  std::vector<float> all_scales(static_cast<size_t>(scales.numel()));
  widen_to_f32(*scales.dtype, scales.data.data(), all_scales.size(), all_scales.data());
  std::vector<float> row_scales(static_cast<size_t>(rows * part_groups));
  for (int64_t r = 0; r < rows; ++r)
    std::copy_n(all_scales.data() + (part.rows.first + r) * groups + first_group, part_groups,
                row_scales.data() + r * part_groups);
  const auto* bytes = reinterpret_cast<const uint8_t*>(words.data.data()) + part.rows.first * row_bytes + first_byte;
  if (dtype == DType::kI4 && part_row_bytes == row_bytes)
    return WeightMatrix::scaled_bytes_borrowing(dtype, bytes, FloatBuffer::owning(std::move(row_scales)), block, rows,
                                                cols);
  std::vector<uint8_t> values(static_cast<size_t>(rows * part_row_bytes));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < part_row_bytes; ++b)
      values[static_cast<size_t>(r * part_row_bytes + b)] = dtype == DType::kI8 ? bytes[r * row_bytes + b] ^ 0x80
                                                                                : bytes[r * row_bytes + b];
  release_pages(words.data);
  return WeightMatrix::scaled_bytes_owning(dtype, std::move(values), FloatBuffer::owning(std::move(row_scales)), block,
                                           rows, cols);
}

// Symmetric weights in order only: every qzeros value is the scheme's stored zero and g_idx (when
// present) puts input i in group i / group_size, else the tensor is named. The part's codes are
// laid out as WeightMatrix's int8 (value) or int4 (value + 8, two to a byte) rows.
WeightMatrix CheckpointLoader::gptq_part(const std::string& stem, int64_t out, int64_t in, MatrixPart part) {
  const int bits = packed_int_.bits;
  const int64_t per_word = 32 / bits, groups = packed_int_.groups(in);
  const uint32_t mask = (1u << bits) - 1;
  const TensorRecord& qweight = store_.get_raw(stem + ".qweight", {(in + per_word - 1) / per_word, out}, "I32");
  const TensorRecord& qzeros = store_.get_raw(stem + ".qzeros", {groups, (out + per_word - 1) / per_word}, "I32");
  const TensorRecord& scale_record = store_.get(stem + ".scales", {groups, out});
  for (const TensorRecord* words : {&qweight, &qzeros})
    if (reinterpret_cast<uintptr_t>(words->data.data()) % alignof(uint32_t) != 0)
      fail(ErrorKind::kCheckpoint, "tensor '" + stem + (words == &qweight ? ".qweight" : ".qzeros") + "' in " +
                                       words->file + " is not aligned to its 4-byte words");
  const auto* zero_words = reinterpret_cast<const uint32_t*>(qzeros.data.data());
  const int64_t zero_row_words = (out + per_word - 1) / per_word;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < out; ++c)
      if (const uint32_t zero = (zero_words[g * zero_row_words + c / per_word] >> (c % per_word * bits)) & mask;
          zero != static_cast<uint32_t>(packed_int_.stored_zero))
        fail(ErrorKind::kUnsupportedOption,
             "tensor '" + stem + ".qzeros' in " + qzeros.file + " holds " + std::to_string(zero) + " for group " +
                 std::to_string(g) + ", output " + std::to_string(c) + ": canrun reads symmetric GPTQ weights (every "
                 "stored zero point " + std::to_string(packed_int_.stored_zero) + ")");
  if (store_.contains(stem + ".g_idx")) {
    const TensorRecord& g_idx = store_.get_raw(stem + ".g_idx", {in}, "I32");
    for (int64_t i = 0; i < in; ++i) {
      int32_t group = 0;
      std::memcpy(&group, g_idx.data.data() + i * 4, 4);
      const int64_t expected = packed_int_.group_size > 0 ? i / packed_int_.group_size : 0;
      if (group != expected)
        fail(ErrorKind::kUnsupportedOption, "tensor '" + stem + ".g_idx' in " + g_idx.file + " puts input " +
                                                std::to_string(i) + " in group " + std::to_string(group) +
                                                ": canrun reads GPTQ inputs in order (no desc_act)");
    }
  }
  std::vector<float> scales(static_cast<size_t>(scale_record.numel()));  // [groups, out]
  widen_to_f32(*scale_record.dtype, scale_record.data.data(), scales.size(), scales.data());
  const auto* words = reinterpret_cast<const uint32_t*>(qweight.data.data());
  const auto code = [&](int64_t input, int64_t output) {
    return static_cast<int32_t>((words[input / per_word * out + output] >> (input % per_word * bits)) & mask);
  };
  const int32_t zero = 1 << (bits - 1);
  const int64_t rows = part.rows.count, cols = part.cols.count;
  const int64_t block = packed_int_.group_size > 0 ? packed_int_.group_size : in;
  const auto group_of = [&](int64_t input) { return packed_int_.group_size > 0 ? input / block : 0; };
  const bool whole_groups = packed_int_.group_size == 0 || part.cols.first % block == 0;
  if (!whole_groups || (bits == 4 && part.cols.first % 2 != 0)) {
    std::vector<float> values(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t input = part.cols.first + j, output = part.rows.first + r;
        values[r * cols + j] = static_cast<float>(code(input, output) - zero) * scales[group_of(input) * out + output];
      }
    release_pages(qweight.data);
    return WeightMatrix::f32(FloatBuffer::owning(std::move(values)), rows, cols);
  }
  const DType dtype = bits == 8 ? DType::kI8 : DType::kI4;
  const int64_t row_bytes = scaled_bytes_for(dtype, cols);
  const int64_t part_block = packed_int_.group_size > 0 ? block : std::max<int64_t>(cols, 1);
  const int64_t part_groups = (cols + part_block - 1) / part_block, first_group = group_of(part.cols.first);
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * row_bytes), 0);
  std::vector<float> row_scales(static_cast<size_t>(rows * part_groups));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t output = part.rows.first + r;
    uint8_t* row = bytes.data() + r * row_bytes;
    for (int64_t j = 0; j < cols; ++j) {
      const int32_t stored = code(part.cols.first + j, output);
      // int8: the value itself (stored - 128); int4: the value + 8, which is the stored code.
      if (bits == 8) row[j] = static_cast<uint8_t>(stored ^ 0x80);
      else row[j / 2] |= static_cast<uint8_t>(stored << (4 * (j % 2)));
    }
    for (int64_t g = 0; g < part_groups; ++g) row_scales[r * part_groups + g] = scales[(first_group + g) * out + output];
  }
  release_pages(qweight.data);
  return WeightMatrix::scaled_bytes_owning(dtype, std::move(bytes), FloatBuffer::owning(std::move(row_scales)),
                                           part_block, rows, cols);
}

WeightMatrix CheckpointLoader::embeddings(const std::string& name, int64_t rows, int64_t cols) {
  return plain_matrix(name, rows, cols);
}

WeightMatrix CheckpointLoader::tied_head(const std::string&, const WeightMatrix& embeddings) {
  return embeddings.view();  // the same table, in place
}

FloatBuffer CheckpointLoader::vector(const std::string& name, int64_t size, TensorRole) { return read(name, {size}); }

FloatBuffer CheckpointLoader::tensor(const std::string& name, std::vector<int64_t> shape) { return read(name, shape); }

FloatBuffer CheckpointLoader::stacked(const std::string& name, std::vector<int64_t> shape, IndexRange) {
  return read(name, shape);
}

FloatBuffer CheckpointLoader::mxfp4(const std::string& name, int64_t prefix, int64_t rows, int64_t cols, IndexRange) {
  if (cols % 32 != 0)
    fail(ErrorKind::kCheckpoint, "tensor '" + name + "': MXFP4 needs a multiple of 32 inputs, got " +
                                     std::to_string(cols));
  const TensorRecord& blocks = store_.get_raw(name + "_blocks", {prefix, rows, cols / 32, 16}, "U8");
  const TensorRecord& scales = store_.get_raw(name + "_scales", {prefix, rows, cols / 32}, "U8");
  return FloatBuffer::owning(dequantize_mxfp4(blocks.data.data(), scales.data.data(), prefix * rows, cols));
}

std::vector<int32_t> CheckpointLoader::indices(const std::string& name, std::vector<int64_t> shape, int64_t bound) {
  const auto found = store_.records().find(name);
  const bool wide = found == store_.records().end() || found->second->dtype_name != "I32";
  const TensorRecord& record = store_.get_raw(name, shape, wide ? "I64" : "I32");
  std::vector<int32_t> values(static_cast<size_t>(record.numel()));
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t value = 0;
    if (wide) {
      std::memcpy(&value, record.data.data() + i * sizeof(int64_t), sizeof(int64_t));
    } else {
      int32_t narrow = 0;
      std::memcpy(&narrow, record.data.data() + i * sizeof(int32_t), sizeof(int32_t));
      value = narrow;
    }
    if (value < 0 || value >= bound)
      fail(ErrorKind::kCheckpoint, record.file + ": tensor '" + name + "' holds " + std::to_string(value) +
                                       " at element " + std::to_string(i) + ", outside [0, " + std::to_string(bound) +
                                       ")");
    values[i] = static_cast<int32_t>(value);
  }
  return values;
}

FloatBuffer CheckpointLoader::read(const std::string& name, const std::vector<int64_t>& shape) {
  const TensorRecord& record = store_.get(name, shape);
  const bool aligned = reinterpret_cast<uintptr_t>(record.data.data()) % alignof(float) == 0;
  if (record.dtype == DType::kF32 && aligned)
    return FloatBuffer::borrowing(reinterpret_cast<const float*>(record.data.data()),
                                  static_cast<size_t>(record.numel()));
  return FloatBuffer::owning(store_.load_f32(name, shape));
}

}  // namespace canrun
