// What each backend holds the linear layers' weights as: ref widens everything to f32; cpu
// keeps a bf16 checkpoint's matrices bf16, through fused splits, Conv1D transposes and tied
// heads alike (synthetic bf16 checkpoints from the fixtures' configs).
#include <gtest/gtest.h>

#include <filesystem>

#include "lab/synthetic_weights.h"
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

TEST(CpuWeights, Bf16CheckpointsStayBf16OnCpuOnly) {
  // llama_tied: tied head; phi3: fused qkv and gate_up; gpt2: Conv1D, fused qkv, tied head.
  for (const std::string name : {"llama_bf16", "llama_tied", "phi3", "gpt2"}) {
    expect_linear_dtype(name, Backend::kCpu, DType::kBF16);
    expect_linear_dtype(name, Backend::kRef, DType::kF32);
  }
}

TEST(CpuWeights, Fp8CheckpointsStayFp8OnCpuOnly) {
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
    const WeightMatrix* o_proj = session.program().find_matrix("layers.0.o_proj");
    ASSERT_NE(o_proj, nullptr);
    EXPECT_EQ(o_proj->dtype(), backend == Backend::kCpu ? DType::kF8E4M3 : DType::kF32);
    EXPECT_EQ(session.program().find_matrix("lm_head")->dtype(), DType::kF32);
    EXPECT_EQ(fp8 > 0, backend == Backend::kCpu);
  }
}

}  // namespace
}  // namespace canrun
