// What each backend holds the linear layers' weights as: both keep a bf16 checkpoint's matrices
// bf16 (through fused splits, Conv1D transposes and tied heads alike) and an FP8 one's FP8, so
// neither holds an f32 copy of the model; ref widens each row as it uses it, which gives exactly
// the products of the widened matrix (synthetic bf16 checkpoints from the fixtures' configs).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "kernels/ref/ops.h"
#include "lab/synthetic_weights.h"
#include "random_values.h"
#include "runtime/session.h"
#include "util/json.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

// A synthetic bf16 checkpoint with the config of fixture `name`.
fs::path bf16_checkpoint(const std::string& name) {
  const fs::path fixture = fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models" / name;
  const fs::path dir = fs::path(testing::TempDir()) / ("canrun_cpu_weights_" + name);
  make_synthetic_checkpoint(read_json_file((fixture / "config.json").string(), ErrorKind::kIo), kSyntheticSeed,
                            dir.string());
  return dir;
}

void expect_linear_dtype(const std::string& name, Backend backend, DType expected) {
  SCOPED_TRACE(name + " on " + std::string(backend_name(backend)));
  const Session session(bf16_checkpoint(name).string(), uncompiled(backend));
  for (const char* matrix : {"layers.0.q_proj", "layers.0.k_proj", "layers.0.v_proj", "layers.0.o_proj",
                             "layers.0.up_proj", "layers.0.down_proj", "lm_head"}) {
    const WeightMatrix* m = session.program().find_matrix(matrix);
    ASSERT_NE(m, nullptr) << matrix;
    EXPECT_EQ(m->dtype(), expected) << matrix;
  }
}

TEST(CpuWeights, Bf16CheckpointsStayBf16OnBothBackends) {
  // llama_tied: tied head; phi3: fused qkv and gate_up; gpt2: Conv1D, fused qkv, tied head.
  for (const std::string name : {"llama_bf16", "llama_tied", "phi3", "gpt2"}) {
    expect_linear_dtype(name, Backend::kCpu, DType::kBF16);
    expect_linear_dtype(name, Backend::kRef, DType::kBF16);
  }
}

TEST(CpuWeights, Fp8CheckpointsStayFp8OnBothBackends) {
  // deepseek_v3_fp8 stores every layer projection, experts included, as F8_E4M3; its head is f32.
  const fs::path fixture = fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models/deepseek_v3_fp8";
  for (Backend backend : {Backend::kCpu, Backend::kRef}) {
    SCOPED_TRACE(std::string(backend_name(backend)));
    const Session session(fixture.string(), uncompiled(backend));
    int64_t fp8 = 0;
    for (const NamedMatrix& named : session.program().matrices()) {
      if (named.matrix->dtype() != DType::kF8E4M3) continue;
      ++fp8;
      EXPECT_EQ(named.matrix->block_cols(), 8) << named.name;
    }
    EXPECT_EQ(session.program().find_matrix("layers.0.o_proj")->dtype(), DType::kF8E4M3);
    EXPECT_EQ(session.program().find_matrix("lm_head")->dtype(), DType::kF32);
    EXPECT_GT(fp8, 0);
  }
}

// ref::linear over a stored matrix equals ref::linear over its rows widened to f32, bit for bit:
// keeping weights as stored changes ref's memory, never its numbers.
void expect_same_products(const WeightMatrix& stored, int64_t rows, std::mt19937& rng) {
  const int64_t out = stored.rows(), in = stored.cols();
  std::vector<float> widened(static_cast<size_t>(out * in));
  for (int64_t o = 0; o < out; ++o) stored.copy_row(o, widened.data() + o * in);
  const std::vector<float> x = random_values(rows * in, rng), bias = random_values(out, rng);
  std::vector<float> expected(static_cast<size_t>(rows * out)), got(expected.size());
  ref::linear(x.data(), rows, in, widened.data(), bias.data(), out, expected.data());
  ref::linear(x.data(), rows, stored, bias.data(), got.data());
  EXPECT_EQ(std::memcmp(expected.data(), got.data(), got.size() * sizeof(float)), 0);
}

TEST(CpuWeights, RefWidensStoredRowsToTheSameProducts) {
  std::mt19937 rng(7);
  // Large enough for the products to spread over threads, with an odd input width.
  const int64_t out = 300, in = 1037;
  std::vector<uint16_t> bf16(static_cast<size_t>(out * in));
  const std::vector<float> values = random_values(out * in, rng);
  for (size_t i = 0; i < bf16.size(); ++i) bf16[i] = f32_to_bf16(values[i]);
  const WeightMatrix bf16_matrix = WeightMatrix::bf16_owning(bf16, out, in);
  for (int64_t rows : {1, 5}) expect_same_products(bf16_matrix, rows, rng);

  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> fp8(static_cast<size_t>(out * in));
  for (uint8_t& b : fp8) {
    b = static_cast<uint8_t>(byte(rng));
    if ((b & 0x7f) == 0x7f) b ^= 1;  // S.1111.111 is E4M3's NaN: any finite value of either sign
  }
  const int64_t block = 128, blocks = (in + block - 1) / block;
  const WeightMatrix fp8_matrix = WeightMatrix::scaled_bytes_owning(
      DType::kF8E4M3, fp8, FloatBuffer::owning(random_values(out * blocks, rng)), block, out, in);
  for (int64_t rows : {1, 5}) expect_same_products(fp8_matrix, rows, rng);

  std::vector<uint8_t> int8(static_cast<size_t>(out * in));
  for (uint8_t& b : int8) b = static_cast<uint8_t>(byte(rng));  // every int8 value
  const WeightMatrix int8_matrix = WeightMatrix::scaled_bytes_owning(
      DType::kI8, int8, FloatBuffer::owning(random_values(out * blocks, rng)), block, out, in);
  for (int64_t rows : {1, 5}) expect_same_products(int8_matrix, rows, rng);

  std::vector<uint8_t> int4(static_cast<size_t>(out * scaled_bytes_for(DType::kI4, in)));  // an odd width
  for (uint8_t& b : int4) b = static_cast<uint8_t>(byte(rng));
  const WeightMatrix int4_matrix = WeightMatrix::scaled_bytes_owning(
      DType::kI4, int4, FloatBuffer::owning(random_values(out * blocks, rng)), block, out, in);
  for (int64_t rows : {1, 5}) expect_same_products(int4_matrix, rows, rng);
}

}  // namespace
}  // namespace canrun
