#include "lab/synthetic_weights.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "blocks/decoder_program.h"
#include "checkpoint/config_reader.h"
#include "embed/cross_encoder.h"
#include "models/registry.h"
#include "tensor/dtype.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

// kColumns: I64 integers, each its column's index (a table of expert ids: every token routed to
// experts 0..k-1, valid and distinct whatever the number of experts).
enum class Fill { kRandom, kOnes, kZeros, kColumns };

struct TensorPlan {
  std::string name;
  std::vector<int64_t> shape;
  Fill fill;
};

// The tensors DecoderWeights::load reads, under the names transformers publishes them with.
// A cross-encoder's (config.json naming a *ForSequenceClassification class) also its
// classification head, under the names cross_encoder.h reads.
std::vector<TensorPlan> tensor_plan(const DecoderSpec& spec, const Json& config) {
  std::vector<TensorPlan> plan;
  const bool classifier = spec.output == ModelOutput::kHiddenStates && is_sequence_classifier(config);
  if (classifier) {
    const int64_t labels = classifier_labels(config), h = spec.hidden_size;
    const ClassifierHeadNames head = classifier_head_names(spec, config, "config.json");
    plan.push_back({head.dense + ".weight", {h, h}, Fill::kRandom});
    if (head.dense_bias) plan.push_back({head.dense + ".bias", {h}, Fill::kZeros});
    if (!head.norm.empty()) plan.push_back({head.norm + ".weight", {h}, Fill::kOnes});
    if (!head.norm.empty() && head.norm_bias) plan.push_back({head.norm + ".bias", {h}, Fill::kZeros});
    plan.push_back({head.out + ".weight", {labels, h}, Fill::kRandom});
    plan.push_back({head.out + ".bias", {labels}, Fill::kZeros});
  }
  for (TensorInfo& tensor : decoder_tensors(spec)) {
    const bool matrix = tensor.role == TensorRole::kProjection || tensor.role == TensorRole::kMatrix ||
                        tensor.role == TensorRole::kTable || tensor.role == TensorRole::kFloatTensor;
    // Norms as the model reads them: w = 0 where it multiplies by (1 + w), w = 1 elsewhere.
    const bool zeros = tensor.role == TensorRole::kBias || tensor.role == TensorRole::kOffsetNorm;
    const Fill fill = matrix                                  ? Fill::kRandom
                      : tensor.role == TensorRole::kIndices   ? Fill::kColumns
                      : zeros                                 ? Fill::kZeros
                                                              : Fill::kOnes;
    // A cross-encoder's checkpoint keeps its encoder under the base model's prefix ("bert.").
    std::string name = classifier ? spec.base_model_prefix + tensor.name : std::move(tensor.name);
    plan.push_back({std::move(name), std::move(tensor.shape), fill});
  }
  return plan;
}

const char* fill_name(Fill fill) {
  switch (fill) {
    case Fill::kRandom: return "random";
    case Fill::kOnes: return "ones";
    case Fill::kZeros: return "zeros";
    case Fill::kColumns: return "columns";
  }
  return "?";
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a: each tensor's stream depends only on the seed and its name, not on file order.
uint64_t name_hash(const std::string& name) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

int64_t element_bytes(Fill fill) { return fill == Fill::kColumns ? 8 : 2; }

void write_columns(std::ofstream& out, const TensorPlan& tensor) {
  const int64_t columns = tensor.shape.back();
  std::vector<int64_t> values(static_cast<size_t>(numel(tensor.shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i) % columns;
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 8));
}

void write_tensor(std::ofstream& out, const TensorPlan& tensor, uint64_t seed) {
  if (tensor.fill == Fill::kColumns) return write_columns(out, tensor);
  // Uniform on [-a, a] has standard deviation a / sqrt(3).
  const float half_width = 0.02f * std::sqrt(3.0f);
  const uint16_t constant = f32_to_bf16(tensor.fill == Fill::kOnes ? 1.0f : 0.0f);
  uint64_t state = seed ^ name_hash(tensor.name);
  std::vector<uint16_t> chunk;
  for (int64_t left = numel(tensor.shape); left > 0;) {
    chunk.resize(static_cast<size_t>(std::min<int64_t>(left, 1 << 20)));
    for (uint16_t& value : chunk) {
      if (tensor.fill != Fill::kRandom) {
        value = constant;
        continue;
      }
      const double unit = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
      value = f32_to_bf16(static_cast<float>((2 * unit - 1) * half_width));
    }
    out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk.size() * 2));
    left -= static_cast<int64_t>(chunk.size());
  }
}

std::string safetensors_header(const std::vector<TensorPlan>& plan, uint64_t seed) {
  Json header = {{"__metadata__", {{"format", "pt"}, {"canrun_synthetic_seed", std::to_string(seed)}}}};
  int64_t offset = 0;
  for (const TensorPlan& tensor : plan) {
    const int64_t bytes = numel(tensor.shape) * element_bytes(tensor.fill);
    header[tensor.name] = {{"dtype", tensor.fill == Fill::kColumns ? "I64" : "BF16"},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data section 8-byte aligned
  return text;
}

// The tensors' names and shapes, recorded beside the folder: a canrun that reads other tensors
// for the same config makes the folder again.
Json plan_listing(const std::vector<TensorPlan>& plan) {
  Json listing = Json::array();
  for (const TensorPlan& tensor : plan) listing.push_back({tensor.name, tensor.shape, fill_name(tensor.fill)});
  return listing;
}

void write_checkpoint(const Json& config, const std::vector<TensorPlan>& plan, uint64_t seed, const fs::path& dir) {
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << config.dump(2) << "\n";
  const std::string header = safetensors_header(plan, seed);
  std::ofstream out(dir / "model.safetensors", std::ios::binary);
  const uint64_t length = header.size();
  out.write(reinterpret_cast<const char*>(&length), sizeof(length));  // little-endian on every target we run on
  out << header;
  for (const TensorPlan& tensor : plan) write_tensor(out, tensor, seed);
  out.close();
  if (!out) fail(ErrorKind::kIo, (dir / "model.safetensors").string() + ": cannot write the synthetic weights");
  std::ofstream(dir / "synthetic.json")
      << Json{{"seed", seed}, {"config", config}, {"tensors", plan_listing(plan)}}.dump() << "\n";
}

bool already_made(const Json& config, uint64_t seed, const std::vector<TensorPlan>& plan, const fs::path& dir) {
  const fs::path marker = dir / "synthetic.json";
  if (!fs::is_regular_file(marker) || !fs::is_regular_file(dir / "model.safetensors")) return false;
  try {
    const Json recorded = read_json_file(marker.string(), ErrorKind::kIo);
    return number_or(recorded, "seed", uint64_t{0}) == seed && recorded.contains("config") &&
           recorded["config"] == config && recorded.contains("tensors") && recorded["tensors"] == plan_listing(plan);
  } catch (const std::exception&) {
    return false;  // unreadable: made again
  }
}

// Staging folders of makers that died (a sweep's timeout kills with SIGKILL): "<.name>.tmp-<pid>"
// with no such process any more.
void remove_abandoned_staging(const fs::path& target) {
  const std::string prefix = "." + target.filename().string() + ".tmp-";
  if (!fs::is_directory(target.parent_path())) return;
  for (const fs::directory_entry& item : fs::directory_iterator(target.parent_path())) {
    const std::string name = item.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const pid_t pid = static_cast<pid_t>(std::atol(name.c_str() + prefix.size()));
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(item.path());
  }
}

}  // namespace

std::string synthetic_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/canrun/synthetic";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.cache/canrun/synthetic";
}

void make_synthetic_checkpoint(const Json& config, uint64_t seed, const std::string& dir) {
  const fs::path target(dir);
  const ConfigReader reader(config, dir + "/config.json");
  const std::vector<TensorPlan> plan = tensor_plan(architecture_of(reader).read_spec(reader), config);
  if (already_made(config, seed, plan, target)) return;
  remove_abandoned_staging(target);
  const fs::path staging = target.parent_path() / ("." + target.filename().string() + ".tmp-" + std::to_string(getpid()));
  fs::remove_all(staging);
  try {
    write_checkpoint(config, plan, seed, staging);
    fs::remove_all(target);  // an older config, seed or tensor list; whole or not at all
    fs::rename(staging, target);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
}

}  // namespace canrun
