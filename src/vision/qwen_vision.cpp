#include "vision/qwen_vision.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "models/rope.h"
#include "util/error.h"

namespace canrun {
namespace {

constexpr float kNormEps = 1e-6f;

// (row, col) of each of an image's patches within its grid, in the processor's order: each
// merge x merge group of patches together, the groups row by row, every frame alike.
std::vector<std::array<int64_t, 2>> patch_cells(const std::array<int64_t, 3>& thw, int64_t merge) {
  std::vector<std::array<int64_t, 2>> cells;
  for (int64_t t = 0; t < thw[0]; ++t)
    for (int64_t block_row = 0; block_row < thw[1] / merge; ++block_row)
      for (int64_t block_col = 0; block_col < thw[2] / merge; ++block_col)
        for (int64_t in_row = 0; in_row < merge; ++in_row)
          for (int64_t in_col = 0; in_col < merge; ++in_col)
            cells.push_back({block_row * merge + in_row, block_col * merge + in_col});
  return cells;
}

// Bilinear taps (align_corners) of `index` on an axis of `size` into a table side `side` wide,
// computed in float32 as transformers' get_vision_interpolation_indices_and_weights does.
struct Taps {
  std::array<int64_t, 2> index;
  std::array<float, 2> weight;
};
Taps bilinear_taps(int64_t index, int64_t size, int64_t side) {
  const float src = static_cast<float>(index) * static_cast<float>(side - 1) /
                    static_cast<float>(std::max<int64_t>(size - 1, 1));
  const float floor = std::floor(src);
  Taps taps;
  for (int k = 0; k < 2; ++k) {
    taps.index[k] = std::clamp<int64_t>(static_cast<int64_t>(floor) + k, 0, side - 1);
    taps.weight[k] = std::max(0.0f, 1.0f - std::fabs(src - floor - static_cast<float>(k)));
  }
  return taps;
}

// `cols` values of each of `rows` rows `stride` apart, as a [rows, cols] matrix, or transposed
// as [cols, rows].
WeightMatrix gathered(const float* in, int64_t rows, int64_t cols, int64_t stride, bool transpose) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[static_cast<size_t>(transpose ? c * rows + r : r * cols + c)] = in[r * stride + c];
  return transpose ? WeightMatrix::f32(FloatBuffer::owning(std::move(out)), cols, rows)
                   : WeightMatrix::f32(FloatBuffer::owning(std::move(out)), rows, cols);
}

// Qwen2.5-VL's windows (transformers' get_vision_window_index): the order the merged tokens of
// the images of `grid_thw` take so that each window's are together (window side: `side` merged
// tokens, row by row of windows), and the windows' lengths in patches.
struct Windows {
  std::vector<int64_t> order;    // merged token indices, window by window
  std::vector<int64_t> lengths;  // patches per window, empty windows left out
};
Windows window_order(const std::vector<std::array<int64_t, 3>>& grid_thw, int64_t merge, int64_t side) {
  Windows windows;
  int64_t offset = 0;
  for (const auto& [t, h, w] : grid_thw) {
    const int64_t rows = h / merge, cols = w / merge;
    const int64_t windows_h = rows / side + 1, windows_w = cols / side + 1;  // padded by side - rows % side
    for (int64_t frame = 0; frame < t; ++frame)
      for (int64_t wh = 0; wh < windows_h; ++wh)
        for (int64_t ww = 0; ww < windows_w; ++ww) {
          int64_t length = 0;
          for (int64_t r = wh * side; r < std::min(rows, (wh + 1) * side); ++r)
            for (int64_t c = ww * side; c < std::min(cols, (ww + 1) * side); ++c, ++length)
              windows.order.push_back(offset + frame * rows * cols + r * cols + c);
          if (length > 0) windows.lengths.push_back(length * merge * merge);
        }
    offset += t * rows * cols;
  }
  return windows;
}

}  // namespace

std::vector<TensorInfo> vision_tower_tensors(const VisionTowerSpec& spec) {
  TensorLister lister(/*conv1d=*/false);
  const QwenVisionEncoder listed(spec, lister);
  return lister.tensors;
}

QwenVisionEncoder::QwenVisionEncoder(VisionTowerSpec spec, TensorVisitor& tensors) : spec_(std::move(spec)) {
  const VisionTowerSpec& s = spec_;
  const std::string& v = s.prefix;
  const bool qwen2 = s.kind == VisionTowerKind::kQwen2Vl, qwen2_5 = s.kind == VisionTowerKind::kQwen2_5Vl;
  FloatBuffer kernel = tensors.tensor(v + "patch_embed.proj.weight",
                                      {s.hidden, s.in_channels, s.temporal_patch_size, s.patch_size, s.patch_size});
  patch_embed_ = WeightMatrix::f32(std::move(kernel), s.hidden, s.patch_width());
  if (s.kind == VisionTowerKind::kQwen3Vl)
    patch_bias_ = tensors.vector(v + "patch_embed.proj.bias", s.hidden, TensorRole::kBias);
  if (s.num_position_embeddings > 0)
    pos_embed_ = tensors.tensor(v + "pos_embed.weight", {s.num_position_embeddings, s.hidden});
  blocks_.resize(static_cast<size_t>(s.depth));
  for (int64_t i = 0; i < s.depth; ++i) {
    const std::string b = v + "blocks." + std::to_string(i) + ".";
    Block& block = blocks_[static_cast<size_t>(i)];
    block.norm1 = visit_norm(tensors, b + "norm1", s.hidden);
    block.norm2 = visit_norm(tensors, b + "norm2", s.hidden);
    block.qkv = tensors.matrix(b + "attn.qkv", 3 * s.hidden, s.hidden);
    block.qkv_b = tensors.vector(b + "attn.qkv.bias", 3 * s.hidden, TensorRole::kBias);
    block.proj = tensors.matrix(b + "attn.proj", s.hidden, s.hidden);
    block.proj_b = tensors.vector(b + "attn.proj.bias", s.hidden, TensorRole::kBias);
    // The MLP: up, act, down (Qwen2-VL's fc1/fc2, Qwen3-VL's linear_fc1/linear_fc2), or SwiGLU.
    const std::string up = qwen2 ? "mlp.fc1" : qwen2_5 ? "mlp.up_proj" : "mlp.linear_fc1";
    const std::string down = qwen2 ? "mlp.fc2" : qwen2_5 ? "mlp.down_proj" : "mlp.linear_fc2";
    if (qwen2_5) {
      block.gate = tensors.matrix(b + "mlp.gate_proj", s.intermediate, s.hidden);
      block.gate_b = tensors.vector(b + "mlp.gate_proj.bias", s.intermediate, TensorRole::kBias);
    }
    block.up = tensors.matrix(b + up, s.intermediate, s.hidden);
    block.up_b = tensors.vector(b + up + ".bias", s.intermediate, TensorRole::kBias);
    block.down = tensors.matrix(b + down, s.hidden, s.intermediate);
    block.down_b = tensors.vector(b + down + ".bias", s.hidden, TensorRole::kBias);
  }
  visit_merger(tensors, v + "merger.", false, merger_);
  deepstack_mergers_.resize(s.deepstack_indexes.size());
  for (size_t j = 0; j < deepstack_mergers_.size(); ++j)
    visit_merger(tensors, v + "deepstack_merger_list." + std::to_string(j) + ".", true, deepstack_mergers_[j]);
}

QwenVisionEncoder::Norm QwenVisionEncoder::visit_norm(TensorVisitor& tensors, const std::string& name,
                                                      int64_t width) const {
  Norm norm;
  norm.weight = tensors.vector(name + ".weight", width, TensorRole::kNorm);
  if (spec_.kind != VisionTowerKind::kQwen2_5Vl) norm.bias = tensors.vector(name + ".bias", width, TensorRole::kBias);
  return norm;
}

void QwenVisionEncoder::visit_merger(TensorVisitor& tensors, const std::string& name, bool norm_after_shuffle,
                                     Merger& merger) const {
  const int64_t merged = spec_.hidden * spec_.merge_size * spec_.merge_size;
  // Qwen3-VL: norm, linear_fc1, linear_fc2; Qwen2-VL and Qwen2.5-VL: ln_q, mlp.0, mlp.2.
  const bool qwen3 = spec_.kind == VisionTowerKind::kQwen3Vl;
  merger.norm = visit_norm(tensors, name + (qwen3 ? "norm" : "ln_q"), norm_after_shuffle ? merged : spec_.hidden);
  const std::string fc1 = name + (qwen3 ? "linear_fc1" : "mlp.0"), fc2 = name + (qwen3 ? "linear_fc2" : "mlp.2");
  merger.fc1 = tensors.matrix(fc1, merged, merged);
  merger.fc1_b = tensors.vector(fc1 + ".bias", merged, TensorRole::kBias);
  merger.fc2 = tensors.matrix(fc2, spec_.out_hidden, merged);
  merger.fc2_b = tensors.vector(fc2 + ".bias", spec_.out_hidden, TensorRole::kBias);
}

void QwenVisionEncoder::normalize(const Norm& norm, const float* x, int64_t rows, int64_t width, float* y,
                                  const KernelTable& kernels) const {
  if (norm.bias.empty())
    kernels.rms_norm(x, norm.weight.data(), rows, width, kNormEps, y);
  else
    kernels.layer_norm(x, norm.weight.data(), norm.bias.data(), rows, width, kNormEps, y);
}

std::vector<float> QwenVisionEncoder::merge(const Merger& merger, bool norm_after_shuffle, const std::vector<float>& x,
                                            int64_t patches, const KernelTable& kernels) const {
  const int64_t group = spec_.merge_size * spec_.merge_size, merged = spec_.hidden * group, tokens = patches / group;
  std::vector<float> normed(x.size());
  // The merge is a view: each group's patches are consecutive rows.
  if (norm_after_shuffle)
    normalize(merger.norm, x.data(), tokens, merged, normed.data(), kernels);
  else
    normalize(merger.norm, x.data(), patches, spec_.hidden, normed.data(), kernels);
  const KernelChoices choices;
  std::vector<float> hidden(static_cast<size_t>(tokens * merged));
  kernels.linear(normed.data(), tokens, merger.fc1, merger.fc1_b.data(), choices, hidden.data());
  kernels.activation(Activation::kGelu, hidden.data(), static_cast<int64_t>(hidden.size()), hidden.data());
  std::vector<float> out(static_cast<size_t>(tokens * spec_.out_hidden));
  kernels.linear(hidden.data(), tokens, merger.fc2, merger.fc2_b.data(), choices, out.data());
  return out;
}

VisionFeatures QwenVisionEncoder::encode(const PixelValues& pixels, const KernelTable& kernels) const {
  const VisionTowerSpec& s = spec_;
  const int64_t hidden = s.hidden, heads = s.heads, head_dim = s.head_dim(), patches = pixels.rows;
  const int64_t group = s.merge_size * s.merge_size;
  if (pixels.cols != s.patch_width())
    fail(ErrorKind::kUsage, "the image processor gives patches of " + std::to_string(pixels.cols) +
                                " values, the vision tower takes " + std::to_string(s.patch_width()) +
                                " (preprocessor_config.json's patch sizes differ from config.json's vision_config)");
  // Per patch: its image's grid cell; and where each frame's attention segment ends.
  std::vector<std::array<int64_t, 2>> cells;
  std::vector<std::array<int64_t, 2>> cell_sizes;  // its grid's (h, w)
  std::vector<int64_t> frames;
  for (const std::array<int64_t, 3>& thw : pixels.grid_thw) {
    if (thw[1] % s.merge_size != 0 || thw[2] % s.merge_size != 0)
      fail(ErrorKind::kUsage, "an image grid of " + std::to_string(thw[1]) + "x" + std::to_string(thw[2]) +
                                  " patches is not a multiple of spatial_merge_size " + std::to_string(s.merge_size));
    for (const auto& cell : patch_cells(thw, s.merge_size)) {
      cells.push_back(cell);
      cell_sizes.push_back({thw[1], thw[2]});
    }
    for (int64_t t = 0; t < thw[0]; ++t) frames.push_back(thw[1] * thw[2]);
  }
  if (static_cast<int64_t>(cells.size()) != patches)
    fail(ErrorKind::kUsage, "pixel_values has " + std::to_string(patches) + " patches, its grids " +
                                std::to_string(cells.size()));

  const KernelChoices choices;
  std::vector<float> x(static_cast<size_t>(patches * hidden));
  kernels.linear(pixels.values.data(), patches, patch_embed_, patch_bias_.empty() ? nullptr : patch_bias_.data(),
                 choices, x.data());
  if (s.num_position_embeddings > 0) {
    // Learned positions, resampled to each image's grid: four taps summed, then added.
    const auto side = static_cast<int64_t>(std::sqrt(static_cast<double>(s.num_position_embeddings)));
    std::vector<float> position(static_cast<size_t>(hidden));
    for (int64_t p = 0; p < patches; ++p) {
      const auto [row, col] = cells[static_cast<size_t>(p)];
      const Taps h = bilinear_taps(row, cell_sizes[static_cast<size_t>(p)][0], side);
      const Taps w = bilinear_taps(col, cell_sizes[static_cast<size_t>(p)][1], side);
      std::fill(position.begin(), position.end(), 0.0f);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          const float* table = pos_embed_.data() + (h.index[i] * side + w.index[j]) * hidden;
          const float weight = h.weight[i] * w.weight[j];
          for (int64_t d = 0; d < hidden; ++d) position[d] += table[d] * weight;
        }
      kernels.add_scaled(x.data() + p * hidden, position.data(), hidden, 1.0f);
    }
  }
  // Qwen2.5-VL: the merged groups of patches reordered window by window, their cells with them.
  Windows windows;
  if (s.kind == VisionTowerKind::kQwen2_5Vl) {
    windows = window_order(pixels.grid_thw, s.merge_size, s.window_size / s.merge_size / s.patch_size);
    std::vector<float> reordered(x.size());
    std::vector<std::array<int64_t, 2>> reordered_cells(cells.size());
    for (size_t j = 0; j < windows.order.size(); ++j)
      for (int64_t k = 0; k < group; ++k) {
        const int64_t from = windows.order[j] * group + k, to = static_cast<int64_t>(j) * group + k;
        std::copy_n(x.begin() + from * hidden, hidden, reordered.begin() + to * hidden);
        reordered_cells[static_cast<size_t>(to)] = cells[static_cast<size_t>(from)];
      }
    x = std::move(reordered);
    cells = std::move(reordered_cells);
  }
  // 2-D rotary: a quarter of each head's frequencies on the row, the next quarter on the column.
  RopeSpec rope;
  rope.theta = s.rope_theta;
  rope.rotary_dim = head_dim / 2;
  const std::vector<float> inv_freq = rope_inverse_frequencies(rope, 0);
  const int64_t quarter = head_dim / 4;
  std::vector<float> cos(static_cast<size_t>(patches * 2 * quarter)), sin(cos.size());
  for (int64_t p = 0; p < patches; ++p)
    for (int axis = 0; axis < 2; ++axis)
      for (int64_t i = 0; i < quarter; ++i) {
        const float angle = static_cast<float>(cells[static_cast<size_t>(p)][axis]) * inv_freq[i];
        cos[p * 2 * quarter + axis * quarter + i] = std::cos(angle);
        sin[p * 2 * quarter + axis * quarter + i] = std::sin(angle);
      }

  VisionFeatures features;
  features.tokens = patches / group;
  std::vector<float> normed(x.size()), qkv(static_cast<size_t>(patches * 3 * hidden)), context(x.size()),
      out(x.size()), up(static_cast<size_t>(patches * s.intermediate));
  std::vector<float> gate(blocks_.front().gate.empty() ? 0 : up.size());  // SwiGLU's (Qwen2.5-VL)
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  for (int64_t layer = 0; layer < s.depth; ++layer) {
    const Block& b = blocks_[static_cast<size_t>(layer)];
    normalize(b.norm1, x.data(), patches, hidden, normed.data(), kernels);
    kernels.linear(normed.data(), patches, b.qkv, b.qkv_b.data(), choices, qkv.data());
    for (int64_t p = 0; p < patches; ++p)
      for (int part = 0; part < 2; ++part)  // q, then k
        kernels.rotary_halves(qkv.data() + p * 3 * hidden + part * hidden, heads, head_dim, head_dim,
                              cos.data() + p * 2 * quarter, sin.data() + p * 2 * quarter);
    // Attention among the patches of one frame of one image (or of one window), every patch
    // seeing all of them.
    const bool windowed = s.kind == VisionTowerKind::kQwen2_5Vl &&
                          std::find(s.full_attention_blocks.begin(), s.full_attention_blocks.end(), layer) ==
                              s.full_attention_blocks.end();
    int64_t first = 0;
    for (const int64_t length : windowed ? windows.lengths : frames) {
      const float* rows = qkv.data() + first * 3 * hidden;
      std::vector<float> q(static_cast<size_t>(length * head_dim)), scores(static_cast<size_t>(length * length)),
          head_out(q.size());
      for (int64_t h = 0; h < heads; ++h) {
        for (int64_t t = 0; t < length; ++t)
          std::copy_n(rows + t * 3 * hidden + h * head_dim, head_dim, q.begin() + t * head_dim);
        // scores = q k^T, then out = softmax(scores * scale) v, as products with k and v^T.
        const WeightMatrix keys = gathered(rows + hidden + h * head_dim, length, head_dim, 3 * hidden, false);
        const WeightMatrix values_t = gathered(rows + 2 * hidden + h * head_dim, length, head_dim, 3 * hidden, true);
        kernels.linear(q.data(), length, keys, nullptr, choices, scores.data());
        for (int64_t t = 0; t < length; ++t) {
          kernels.scale(scores.data() + t * length, length, scale);
          kernels.softmax(scores.data() + t * length, length);
        }
        kernels.linear(scores.data(), length, values_t, nullptr, choices, head_out.data());
        for (int64_t t = 0; t < length; ++t)
          std::copy_n(head_out.begin() + t * head_dim, head_dim, context.begin() + (first + t) * hidden + h * head_dim);
      }
      first += length;
    }
    kernels.linear(context.data(), patches, b.proj, b.proj_b.data(), choices, out.data());
    kernels.add_scaled(x.data(), out.data(), patches * hidden, 1.0f);
    normalize(b.norm2, x.data(), patches, hidden, normed.data(), kernels);
    kernels.linear(normed.data(), patches, b.up, b.up_b.data(), choices, up.data());
    if (gate.empty()) {
      kernels.activation(s.activation, up.data(), static_cast<int64_t>(up.size()), up.data());
    } else {
      kernels.linear(normed.data(), patches, b.gate, b.gate_b.data(), choices, gate.data());
      kernels.gated_activation(s.activation, gate.data(), up.data(), static_cast<int64_t>(up.size()), up.data());
    }
    kernels.linear(up.data(), patches, b.down, b.down_b.data(), choices, out.data());
    kernels.add_scaled(x.data(), out.data(), patches * hidden, 1.0f);
    const auto deepstack = std::find(s.deepstack_indexes.begin(), s.deepstack_indexes.end(), layer);
    if (deepstack != s.deepstack_indexes.end())
      features.deepstack.push_back(
          merge(deepstack_mergers_[static_cast<size_t>(deepstack - s.deepstack_indexes.begin())], true, x, patches,
                kernels));
  }
  features.embeds = merge(merger_, false, x, patches, kernels);
  if (!windows.order.empty()) {  // back to the images' order
    std::vector<float> ordered(features.embeds.size());
    for (size_t j = 0; j < windows.order.size(); ++j)
      std::copy_n(features.embeds.begin() + static_cast<int64_t>(j) * s.out_hidden, s.out_hidden,
                  ordered.begin() + windows.order[j] * s.out_hidden);
    features.embeds = std::move(ordered);
  }
  return features;
}

}  // namespace canrun
