#include "compile/compiler.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "compile/fingerprint.h"
#include "compile/panel_tuner.h"
#include "compile/plan_file.h"
#include "compile/weight_packing.h"
#include "kernels/cpu/instruction_set.h"
#include "plan/plan_cache.h"
#include "plan/plan_manifest.h"
#include "util/error.h"
#include "util/mapped_file.h"
#include "util/temporary_directory.h"
#include "util/version.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kAlignment = 64;  // each packed matrix starts on a cache line

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}


void write_json_file(const fs::path& path, const Json& json) {
  std::ofstream out(path);
  out << json.dump() << "\n";
  if (!out.flush()) fail(ErrorKind::kIo, path.string() + ": cannot write");
}

// Writes every matrix as panels into one file, mapped for writing so nothing is copied twice.
// Matrix by matrix, the packed pages go to the page cache and the checkpoint pages the matrix
// was read from are let go, so the process never holds the model twice.
Json write_packed_weights(const std::vector<NamedMatrix>& matrices, const fs::path& path, const WeightStore* store,
                          DType products, const ProgressReport& progress) {
  Json slots = Json::array();
  int64_t size = 0;
  for (const NamedMatrix& named : matrices) {
    const WeightMatrix& m = *named.matrix;
    const DType dtype = packed_dtype(m, products);
    const int64_t bytes = WeightMatrix::panel_bytes(dtype, m.rows(), m.cols(), m.block_cols());
    slots.push_back({{"name", named.name}, {"dtype", std::string(dtype_name(dtype))}, {"rows", m.rows()},
                     {"cols", m.cols()}, {"block_cols", m.block_cols()}, {"offset", size}, {"bytes", bytes}});
    size += (bytes + kAlignment - 1) / kAlignment * kAlignment;
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(ErrorKind::kIo, path.string() + ": cannot create: " + std::strerror(errno));
  // The blocks are reserved before the mapping is written: a sparse file's page on a full disk
  // would be a SIGBUS at the write, not an error here.
  if (const int error = size > 0 ? ::posix_fallocate(fd, 0, size) : 0; error != 0) {
    ::close(fd);
    fail(ErrorKind::kIo, path.string() + ": cannot reserve " + std::to_string(size) + " bytes: " + std::strerror(error));
  }
  void* mapping = size > 0 ? ::mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                           : nullptr;
  ::close(fd);
  if (mapping == MAP_FAILED) fail(ErrorKind::kIo, path.string() + ": cannot map: " + std::strerror(errno));
  auto* base = static_cast<std::byte*>(mapping);
  const int64_t count = static_cast<int64_t>(matrices.size());
  // A few MiB of panels at a time, so that the largest matrix (a vocabulary-wide head) is not
  // resident twice, as its rows and as its panels.
  constexpr int64_t kPanelsAtOnce = 256;
  for (size_t i = 0; i < matrices.size(); ++i) {
    if (progress) progress("compiling: packing weights", static_cast<int64_t>(i), count);
    const WeightMatrix& m = *matrices[i].matrix;
    std::byte* dst = base + slots[i].at("offset").get<int64_t>();
    const std::span<const std::byte> rows = m.row_bytes();
    const size_t row_bytes = rows.size() / static_cast<size_t>(std::max<int64_t>(1, m.rows()));
    // Panel q holds rows 16q to 16q + 15: as many bytes in the panels as in the rows, halved
    // where f32 rows are packed as bf16.
    const size_t rows_per_panel = row_bytes * WeightMatrix::kPanelWidth;
    const size_t packed_per_panel = rows_per_panel * dtype_size(packed_dtype(m, products)) / dtype_size(m.dtype());
    for (int64_t first = 0; first < m.panel_count(); first += kPanelsAtOnce) {
      const int64_t end = std::min(m.panel_count(), first + kPanelsAtOnce);
      pack_panel_range(m, first, end, dst, products);
      const size_t panels = static_cast<size_t>(end - first);
      // A shared file mapping's dropped pages stay in the page cache, written back from there.
      release_pages({dst + static_cast<size_t>(first) * packed_per_panel, panels * packed_per_panel});
      const size_t offset = static_cast<size_t>(first) * rows_per_panel;
      if (store != nullptr)
        store->release_if_mapped(rows.subspan(offset, std::min(rows.size() - offset, panels * rows_per_panel)));
    }
    release_pages({dst, static_cast<size_t>(slots[i].at("bytes").get<int64_t>())});  // the scales, the padding
  }
  if (size > 0) ::munmap(mapping, static_cast<size_t>(size));
  if (progress) progress("compiling: packing weights", count, count);
  return slots;
}

// What a plan key's shapes say of the products: nothing for the weights as stored (the keys
// plans had before bf16 products), "products=bf16" when f32 matrices are packed as bf16.
std::string products_text(DType products) { return products == DType::kBF16 ? "products=bf16" : ""; }

std::string shapes_text(const CompiledModel::Shape& shape, DType products) {
  const std::string text = "prefill=" + std::to_string(shape.bucket) + ";cache=" + std::to_string(shape.cache_capacity);
  return products == DType::kF32 ? text : text + ";" + products_text(products);
}

int64_t folder_bytes(const fs::path& dir) {
  int64_t bytes = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) bytes += static_cast<int64_t>(entry.file_size());
  return bytes;
}

}  // namespace

std::vector<int64_t> default_prompt_buckets() {
  std::vector<int64_t> buckets;
  for (int64_t b = 16; b <= 32768; b *= 2) buckets.push_back(b);
  return buckets;
}

std::vector<int64_t> parse_prompt_buckets(std::string_view text, std::string_view option) {
  std::vector<int64_t> buckets;
  const auto bad = [&](const std::string& why) {
    fail(ErrorKind::kUsage, std::string(option) + " '" + std::string(text) + "': " + why);
  };
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + begin, text.data() + end, value);
    if (ec != std::errc() || ptr != text.data() + end || value < 1)
      bad("'" + std::string(text.substr(begin, end - begin)) + "' is not a positive whole number");
    if (!buckets.empty() && value <= buckets.back()) bad("lengths must be in ascending order");
    buckets.push_back(value);
    begin = end + 1;
  }
  return buckets;
}

CompiledModel::CompiledModel(Program& program, int64_t max_positions, std::string model_dir, Shard shard,
                             CompileOptions options, const WeightStore* store)
    : program_(program),
      max_positions_(max_positions),
      model_dir_(std::move(model_dir)),
      shard_(shard),
      options_(std::move(options)) {
  const auto start = std::chrono::steady_clock::now();
  if (options_.use_cache) {
    const fs::path root = options_.cache_dir.empty() ? PlanCache::default_root() : options_.cache_dir;
    config_fingerprint_ = config_fingerprint(model_dir_);
    weights_fingerprint_ = weights_fingerprint(model_dir_, root / "file-digests");
  }
  load_weights(store);
  stats_.seconds += seconds_since(start);
}

std::string CompiledModel::label() const {
  // The folder's name, as `cache ls` shows it; "models/x/" names x too.
  fs::path dir = fs::path(model_dir_).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  return dir.filename().string();
}

std::string CompiledModel::shard_name() const {
  return "tp" + std::to_string(shard_.size) + ".rank" + std::to_string(shard_.rank);
}

std::string kernel_isa() { return std::string(cpu::instruction_set_name(cpu::chosen_instruction_set())); }

namespace {

// Runs `build` into the cache entry for `key` (or a throwaway folder when the cache is off) and
// hands its folder to `use`.
template <typename Build, typename Use>
void with_plan_files(const CompileOptions& options, const PlanKey& key, const std::string& label, CompileStats& stats,
                     const Build& build, const Use& use) {
  if (!options.use_cache) {
    const TemporaryDirectory dir("canrun-plan-");  // what `use` maps stays readable after it goes
    build(dir.path());
    ++stats.compilations;
    use(dir.path());
    return;
  }
  const fs::path root = options.cache_dir.empty() ? PlanCache::default_root() : options.cache_dir;
  PlanCache cache(root);
  bool built = false;
  std::optional<PlanEntry> found;
  try {
    found = cache.get_or_build(key, build, &built, {label});
  } catch (const Error& e) {
    // A cache folder that cannot take the entry (a full disk, no write permission) costs the
    // cache, not the run (get_or_build removed its temporary folder); a cache that is no folder
    // at all is the caller's mistake.
    std::error_code ignored;
    if (e.kind() != ErrorKind::kIo || !fs::is_directory(root, ignored)) throw;
    std::cerr << "warning: plan cache " << root.string() << ": " << e.what() << "; compiling without the cache"
              << std::endl;
    CompileOptions uncached = options;
    uncached.use_cache = false;
    return with_plan_files(uncached, key, label, stats, build, use);
  }
  const PlanEntry& entry = *found;
  ++(built ? stats.compilations : stats.cache_hits);
  std::error_code absent;
  if (!built && fs::exists(entry.dir / kPulledFromName, absent)) ++stats.pulled_hits;
  stats.plan_bytes += folder_bytes(entry.dir);
  use(entry.dir);
}

}  // namespace

void CompiledModel::load_weights(const WeightStore* store) {
  PlanKey key{"weights", kVersion, kernel_isa(), "cpu", config_fingerprint_, weights_fingerprint_,
              products_text(options_.products), shard_name(), matrices_fingerprint(program_)};
  const std::vector<NamedMatrix>& matrices = program_.matrices();
  with_plan_files(
      options_, key, label(), stats_,
      [&](const fs::path& dir) {
        write_json_file(dir / "matrices.json", write_packed_weights(matrices, dir / "weights.bin", store, options_.products,
                                                             options_.progress));
      },
      [&](const fs::path& dir) {
        const Json slots = read_json_file((dir / "matrices.json").string(), ErrorKind::kIo);
        // Read in page by page as the run touches it: by then the copies it replaces (transposed,
        // cut or widened at load) are freed, so the two are never resident together.
        packed_ = std::make_unique<MappedFile>((dir / "weights.bin").string(), /*populate=*/false);
        const std::span<const std::byte> bytes = packed_->bytes();
        std::map<std::string, const Json*> by_name;
        for (const Json& slot : slots) by_name[slot.at("name").get<std::string>()] = &slot;
        // Everything is checked before any matrix is swapped, so a bad plan leaves the model intact.
        std::vector<std::pair<WeightMatrix*, WeightMatrix>> packed;
        for (const NamedMatrix& named : matrices) {
          const WeightMatrix& m = *named.matrix;
          const auto found = by_name.find(named.name);
          const std::string where = (dir / "matrices.json").string() + ": matrix '" + named.name + "'";
          if (found == by_name.end()) fail(ErrorKind::kRuntime, where + " is missing");
          const Json& slot = *found->second;
          const int64_t offset = slot.at("offset").get<int64_t>();
          const DType dtype = packed_dtype(m, options_.products);
          const int64_t size = WeightMatrix::panel_bytes(dtype, m.rows(), m.cols(), m.block_cols());
          if (slot.at("rows").get<int64_t>() != m.rows() || slot.at("cols").get<int64_t>() != m.cols() ||
              slot.at("dtype").get<std::string>() != dtype_name(dtype) ||
              slot.value("block_cols", int64_t{0}) != m.block_cols() || offset % kAlignment != 0 || offset < 0 ||
              offset + size > static_cast<int64_t>(bytes.size()))
            fail(ErrorKind::kRuntime, where + " does not match the model (remove the entry with `canrun cache rm`)");
          packed.push_back({named.matrix, WeightMatrix::panels_borrowing(dtype, bytes.data() + offset, m.rows(),
                                                                         m.cols(), m.block_cols())});
        }
        for (auto& [target, matrix] : packed) *target = std::move(matrix);
      });
}

const CompiledModel::Plans& CompiledModel::prepare(int64_t prompt_length, int64_t new_tokens) {
  const auto bucket = std::lower_bound(options_.buckets.begin(), options_.buckets.end(), prompt_length);
  if (bucket == options_.buckets.end())
    fail(ErrorKind::kUsage, "a prompt of " + std::to_string(prompt_length) +
                                " tokens is longer than the largest prompt bucket, " +
                                std::to_string(options_.buckets.back()) + " (--buckets)");
  // The static KV cache: the bucket plus the new tokens, rounded up to a power of two so that
  // nearby lengths share a plan, and never past the model's positions.
  int64_t capacity = 1;
  while (capacity < *bucket + new_tokens) capacity *= 2;
  capacity = std::max(std::min(capacity, max_positions_), prompt_length + new_tokens);
  for (const Plans& done : compiled_)
    if (done.shape.bucket == *bucket && done.shape.cache_capacity == capacity) return done;
  const auto start = std::chrono::steady_clock::now();
  const int64_t built_before = stats_.compilations;
  Plans plans;
  plans.shape = {*bucket, capacity};
  load_shape(plans);
  if (!compiled_.empty() && stats_.compilations > built_before) ++stats_.recompilations;
  compiled_.push_back(std::move(plans));
  stats_.buckets.push_back(*bucket);
  stats_.seconds += seconds_since(start);
  return compiled_.back();
}

void CompiledModel::load_shape(Plans& plans) {
  const Shape& shape = plans.shape;
  PlanKey key{"graph", kVersion, kernel_isa(), "cpu", config_fingerprint_, weights_fingerprint_,
              shapes_text(shape, options_.products), shard_name(), program_fingerprint(program_)};
  const auto build = [&](const fs::path& dir) {
    const RunShape prefill{shape.bucket, shape.cache_capacity}, decode{1, shape.cache_capacity};
    // One tuning per distinct matrix shape of the prefill; experts run a row at a time.
    std::vector<const WeightMatrix*> to_tune;
    std::set<std::tuple<int64_t, int64_t, DType>> shapes;
    for (const NamedMatrix& named : program_.matrices()) {
      const WeightMatrix& m = *named.matrix;
      if (shape.bucket < 2 || named.name == "lm_head" || named.name.find(".experts.") != std::string::npos) continue;
      if (shapes.insert({m.rows(), m.cols(), m.dtype()}).second) to_tune.push_back(&m);
    }
    const std::string step = "compiling: tuning the products of a " + std::to_string(shape.bucket) + "-token prompt";
    const int64_t count = static_cast<int64_t>(to_tune.size());
    Json kernels = Json::array();
    for (const WeightMatrix* m : to_tune) {
      if (options_.progress) options_.progress(step, static_cast<int64_t>(kernels.size()), count);
      kernels.push_back(tuned_json(tune_panel_product(*m, shape.bucket)));
    }
    if (options_.progress && count > 0) options_.progress(step, count, count);
    write_json_file(dir / "graph.json",
                    {{"shapes", shapes_text(shape, options_.products)},
                     {"prefill", run_shape_json(program_, prefill, plan_buffers(program_, prefill.tokens))},
                     {"decode", run_shape_json(program_, decode, plan_buffers(program_, decode.tokens))},
                     {"kernels", kernels}});
  };
  with_plan_files(options_, key, label(), stats_, build, [&](const fs::path& dir) {
    const fs::path path = dir / "graph.json";
    const Json plan = read_json_file(path.string(), ErrorKind::kIo);
    try {
      for (const Json& kernel : plan.at("kernels")) {
        const TunedProduct tuned = tuned_from_json(kernel, path.string());
        plans.prefill.choices.panels.set(tuned.shape, tuned.choice);
        ++stats_.tuned_products;
        if (tuned.choice.kernel == cpu::ProductKernel::kOnednn) ++stats_.onednn_products;
      }
      plans.prefill.buffers = buffer_plan_from_json(plan.at("prefill"), program_, shape.bucket, path.string());
      plans.decode.buffers = buffer_plan_from_json(plan.at("decode"), program_, 1, path.string());
    } catch (const Json::exception& e) {
      fail(ErrorKind::kIo, path.string() + ": malformed plan: " + e.what());
    }
    stats_.peak_activation_bytes = std::max(
        {stats_.peak_activation_bytes, plans.prefill.buffers.arena_bytes, plans.decode.buffers.arena_bytes});
  });
}

Json CompiledModel::stats_json() const {
  return {{"compile_s", stats_.seconds},
          {"compilations", stats_.compilations},
          {"plan_cache_hits", stats_.cache_hits},
          {"pulled_plan_hits", stats_.pulled_hits},
          {"recompilations", stats_.recompilations},
          {"plan_bytes", stats_.plan_bytes},
          {"peak_activation_bytes", stats_.peak_activation_bytes},
          {"tuned_products", stats_.tuned_products},
          {"onednn_products", stats_.onednn_products},
          {"buckets", stats_.buckets}};
}

}  // namespace canrun
