// Bad checkpoints get one clear error naming the file/field, never a crash.
// These tests also run under AddressSanitizer + UBSan in CI.
#include <gtest/gtest.h>

#include <functional>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include "checkpoint/safetensors.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"
#include "util/json.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kFixture = fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models/llama_f32";

class CheckpointErrors : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("canrun_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_file(const std::string& name, const std::string& bytes) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }
  // A safetensors file with the given header and `data_bytes` zero bytes of data.
  std::string write_safetensors(const std::string& name, const std::string& header, size_t data_bytes) {
    std::string bytes(8, '\0');
    const uint64_t length = header.size();
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
    return write_file(name, bytes + header + std::string(data_bytes, '\0'));
  }
  // A copy of a real fixture whose files a test then damages.
  std::string copy_fixture(const fs::path& fixture = kFixture) {
    const fs::path target = dir_ / "model";
    fs::copy(fixture, target, fs::copy_options::recursive);
    return target.string();
  }
  void edit_config(const std::string& model_dir, const std::function<void(Json&)>& edit) {
    const std::string path = model_dir + "/config.json";
    Json config = read_json_file(path, ErrorKind::kIo);
    edit(config);
    std::ofstream(path) << config.dump();
  }

  fs::path dir_;
};

// Runs `action`, expecting an Error of `kind` whose message contains every fragment.
template <typename Action>
void expect_error(Action action, ErrorKind kind, std::initializer_list<std::string> fragments) {
  try {
    action();
    FAIL() << "no error was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const std::string& fragment : fragments) EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

TEST_F(CheckpointErrors, FileShorterThanHeaderLength) {
  const std::string path = write_file("a.safetensors", "abc");
  expect_error([&] { SafetensorsFile::open(path); }, ErrorKind::kCheckpoint, {path, "truncated"});
}

TEST_F(CheckpointErrors, HeaderLengthRunsPastEnd) {
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(200);
  const std::string path = write_file("a.safetensors", bytes + "{}");
  expect_error([&] { SafetensorsFile::open(path); }, ErrorKind::kCheckpoint, {path, "header length 200"});
}

TEST_F(CheckpointErrors, HeaderIsNotJson) {
  const std::string path = write_safetensors("a.safetensors", "{not json", 0);
  expect_error([&] { SafetensorsFile::open(path); }, ErrorKind::kCheckpoint, {path, "header: invalid JSON"});
}

// Limits of the header: a shape of rank 9 and a tensor name of 1025 bytes are refused by name.
TEST_F(CheckpointErrors, HeaderLimits) {
  const std::string deep_shape =
      write_safetensors("rank.safetensors", R"({"w":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}})", 4);
  expect_error([&] { SafetensorsFile::open(deep_shape); }, ErrorKind::kCheckpoint,
               {deep_shape, "tensor 'w'", "9 dimensions, more than 8"});
  const std::string long_name = write_safetensors(
      "name.safetensors", "{\"" + std::string(1025, 'n') + R"(":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4);
  expect_error([&] { SafetensorsFile::open(long_name); }, ErrorKind::kCheckpoint,
               {long_name, "1025 bytes long, more than 1024"});
}

TEST_F(CheckpointErrors, UnknownDtype) {
  const std::string path =
      write_safetensors("a.safetensors", R"({"w":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", 8);
  expect_error([&] { SafetensorsFile::open(path); }, ErrorKind::kCheckpoint, {"'w'", "unknown dtype 'Q7'"});
}

TEST_F(CheckpointErrors, ShapeDisagreesWithByteRange) {
  const std::string path =
      write_safetensors("a.safetensors", R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8);
  expect_error([&] { SafetensorsFile::open(path); }, ErrorKind::kCheckpoint, {"'w'", "needs 12 bytes"});
}

TEST_F(CheckpointErrors, OffsetsRunPastEndOfFile) {
  const std::string path =
      write_safetensors("a.safetensors", R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8);
  expect_error([&] { SafetensorsFile::open(path); }, ErrorKind::kCheckpoint, {"'w'", "run past the end"});
}

TEST_F(CheckpointErrors, OverlappingTensors) {
  const std::string path = write_safetensors(
      "a.safetensors",
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
      12);
  expect_error([&] { SafetensorsFile::open(path); }, ErrorKind::kCheckpoint, {"'a'", "'b'", "overlap"});
}

TEST_F(CheckpointErrors, NegativeOffsets) {
  const std::string path =
      write_safetensors("a.safetensors", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", 8);
  expect_error([&] { SafetensorsFile::open(path); }, ErrorKind::kCheckpoint, {"'w'", "data_offsets"});
}

TEST_F(CheckpointErrors, TruncatedCheckpointFile) {
  const std::string model = copy_fixture();
  const fs::path weights = fs::path(model) / "model.safetensors";
  fs::resize_file(weights, fs::file_size(weights) / 2);
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint, {"model.safetensors", "run past the end"});
}

TEST_F(CheckpointErrors, MissingTensor) {
  const std::string model = copy_fixture();
  // Rename one tensor in the header; the data section stays as it was.
  const std::string path = model + "/model.safetensors";
  const std::string bytes = read_text_file(path);
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | static_cast<uint8_t>(bytes[i]);
  Json header = Json::parse(bytes.substr(8, header_length));
  header["renamed.norm.weight"] = header["model.norm.weight"];
  header.erase("model.norm.weight");
  write_safetensors("model/model.safetensors", header.dump(), 0);
  std::ofstream(path, std::ios::binary | std::ios::app) << bytes.substr(8 + header_length);
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint, {"missing tensor 'model.norm.weight'"});
}

TEST_F(CheckpointErrors, MisshapedTensor) {
  const std::string model = copy_fixture();
  edit_config(model, [](Json& c) { c["intermediate_size"] = c["intermediate_size"].get<int>() * 2; });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint, {"mlp.gate_proj.weight", "has shape", "expected"});
}

// FP8 checkpoints: the scale grid follows weight_block_size, so a scale tensor of another
// shape is named; a quantization method canrun lacks is named with what it reads.
TEST_F(CheckpointErrors, Fp8ScalesAndQuantizationMethods) {
  const std::string model = copy_fixture(fs::path(kFixture).parent_path() / "deepseek_v3_fp8");
  edit_config(model, [](Json& c) { c["quantization_config"]["weight_block_size"] = {16, 16}; });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint,
               {"model.safetensors", "weight_scale_inv' has shape", "expected"});
  edit_config(model, [](Json& c) { c["quantization_config"]["weight_block_size"] = {8}; });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint,
               {"config.json", "weight_block_size", "[rows, columns]"});
  edit_config(model, [](Json& c) { c["quantization_config"] = {{"quant_method", "awq"}}; });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kUnsupportedOption,
               {"quantization_config", "quant_method 'awq'", "fp8"});
  edit_config(model, [](Json& c) { c.erase("quantization_config"); });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint,
               {"q_a_proj.weight", "F8_E4M3", "canrun reads F32, BF16 and F16"});
}

// A Mamba-2 state size the weights do not have: in_proj's rows and the convolution's channels
// follow from it, and the first tensor it sizes is named with both shapes.
TEST_F(CheckpointErrors, MambaStateSizeThatDoesNotMatchTheWeights) {
  const std::string model = copy_fixture(fs::path(kFixture).parent_path() / "nemotron_h");
  edit_config(model, [](Json& c) { c["ssm_state_size"] = 12; });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint,
               {"model.safetensors", "backbone.layers.0.mixer.in_proj.weight", "has shape", "expected"});
}

// A hash router's token table (deepseek_v4's tid2eid) naming an expert the layer does not have
// is named with the value and where it is.
TEST_F(CheckpointErrors, HashRoutingTableOutsideTheExperts) {
  const std::string model = copy_fixture(fs::path(kFixture).parent_path() / "deepseek_v4");
  std::fstream file(model + "/model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
  uint64_t length = 0;
  file.read(reinterpret_cast<char*>(&length), sizeof(length));
  std::string header(length, '\0');
  file.read(header.data(), static_cast<std::streamsize>(length));
  const int64_t begin = Json::parse(header)["model.layers.1.ffn.gate.tid2eid"]["data_offsets"][0].get<int64_t>();
  const int64_t past_the_experts = 8;
  file.seekp(static_cast<std::streamoff>(sizeof(length) + length + begin + 3 * sizeof(int64_t)));  // element 3
  file.write(reinterpret_cast<const char*>(&past_the_experts), sizeof(past_the_experts));
  file.close();
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint,
               {"model.safetensors", "model.layers.1.ffn.gate.tid2eid", "holds 8 at element 3", "outside [0, 8)"});
}

TEST_F(CheckpointErrors, UnknownModelType) {
  const std::string model = copy_fixture();
  // Its "architectures" still names LlamaForCausalLM, which loads it as llama.
  edit_config(model, [](Json& c) { c["model_type"] = "frobnicator"; });
  EXPECT_EQ(Session(model, uncompiled(Backend::kRef)).spec().num_layers, 2);
  edit_config(model, [](Json& c) { c.erase("architectures"); });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kUnsupportedArchitecture,
               {"UNSUPPORTED_ARCHITECTURE: frobnicator", "llama", "qwen3"});
}

TEST_F(CheckpointErrors, AbsurdSizes) {
  const std::string model = copy_fixture();
  edit_config(model, [](Json& c) { c["hidden_size"] = 1000000000000LL; });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint, {"config.json", "'hidden_size'", "outside"});
}

TEST_F(CheckpointErrors, WrongFieldType) {
  const std::string model = copy_fixture();
  edit_config(model, [](Json& c) { c["num_hidden_layers"] = "two"; });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint, {"'num_hidden_layers'", "integer"});
}

TEST_F(CheckpointErrors, KvHeadsMustDivideHeads) {
  const std::string model = copy_fixture();
  edit_config(model, [](Json& c) { c["num_key_value_heads"] = 3; });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint, {"'num_key_value_heads'", "divide"});
}

TEST_F(CheckpointErrors, UnknownRopeType) {
  const std::string model = copy_fixture();
  edit_config(model, [](Json& c) {
    c.erase("rope_parameters");
    c["rope_scaling"] = {{"rope_type", "warp"}, {"factor", 2.0}};
  });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kUnsupportedOption, {"rope_scaling", "'warp'", "llama3"});
}

TEST_F(CheckpointErrors, YarnRopeWithoutFactor) {
  const std::string model = copy_fixture();
  edit_config(model, [](Json& c) {
    c.erase("rope_parameters");
    c["rope_scaling"] = {{"rope_type", "yarn"}, {"original_max_position_embeddings", 64}};
  });
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint,
               {"rope_scaling", "'factor'", "required by rope_type yarn"});
}

TEST_F(CheckpointErrors, ConfigIsNotJson) {
  const std::string model = copy_fixture();
  write_file("model/config.json", "{\"model_type\": ");
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint, {"config.json", "invalid JSON"});
}

TEST_F(CheckpointErrors, IndexNamesMissingShard) {
  const std::string model = copy_fixture();
  fs::remove(fs::path(model) / "model.safetensors");
  write_file("model/model.safetensors.index.json", R"({"weight_map":{"model.norm.weight":"gone.safetensors"}})");
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kIo, {"gone.safetensors", "cannot open"});
}

TEST_F(CheckpointErrors, EosIdOutsideVocabulary) {
  const std::string model = copy_fixture();
  write_file("model/generation_config.json", R"({"eos_token_id": [2, 99999999]})");
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint, {"generation_config.json", "'eos_token_id'"});
}

TEST_F(CheckpointErrors, PromptLongerThanCache) {
  Session session(kFixture.string(), uncompiled(Backend::kRef));
  const std::vector<int32_t> prompt(10, 1);
  GenerateRequest request;
  request.max_new_tokens = 8;
  request.cache_capacity = 12;
  expect_error([&] { session.generate(prompt, request); }, ErrorKind::kUsage,
               {"18 positions", "KV cache of 12"});
}

}  // namespace
}  // namespace canrun

namespace canrun {
namespace {

// A value nested 100,000 levels deep overflowed the stack when the document was copied; every
// JSON file of a checkpoint is now refused past 64 levels, by name, before it is parsed.
TEST_F(CheckpointErrors, DeeplyNestedJsonIsRefusedByName) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const char* name : {"config.json", "generation_config.json", "tokenizer.json", "model.safetensors.index.json"}) {
    const std::string model = copy_fixture();
    const std::string path = write_file(std::string("model/") + name, "{\"x\": " + deep + "}");
    const ErrorKind kind = std::string(name) == "tokenizer.json" ? ErrorKind::kTokenizer : ErrorKind::kCheckpoint;
    if (kind == ErrorKind::kTokenizer) {
      expect_error([&] { Tokenizer::from_file(path); }, kind, {path, "nested deeper than 64 levels"});
    } else {
      expect_error([&] { Session session(model, uncompiled(Backend::kRef)); }, kind, {path, "nested deeper than 64 levels"});
    }
    fs::remove_all(model);
  }
  const std::string header = write_safetensors("deep.safetensors", "{\"x\": " + deep + "}", 0);
  expect_error([&] { SafetensorsFile::open(header); }, ErrorKind::kCheckpoint, {header, "header", "nested deeper than 64"});
}

// Brackets inside strings are text, not nesting; 64 levels are allowed, 65 are not.
TEST_F(CheckpointErrors, NestingLimitCountsOnlyStructure) {
  EXPECT_NO_THROW(parse_json("{\"a\": \"" + std::string(1000, '[') + "\\\"[\"}", "x.json", ErrorKind::kIo));
  EXPECT_NO_THROW(parse_json(std::string(64, '[') + std::string(64, ']'), "x.json", ErrorKind::kIo));
  expect_error([&] { parse_json(std::string(65, '[') + std::string(65, ']'), "x.json", ErrorKind::kIo); },
               ErrorKind::kIo, {"x.json: nested deeper than 64 levels at byte 64"});
  expect_error([&] { parse_json("[1]", "x.json", ErrorKind::kIo, {2, 64}); }, ErrorKind::kIo,
               {"x.json: 3 bytes, larger than"});
}

// A string field is a word; one of 100,000 bytes is refused, and no error repeats a huge value.
TEST_F(CheckpointErrors, HugeValuesAreCutInErrors) {
  const std::string model = copy_fixture();
  edit_config(model, [](Json& c) { c["model_type"] = std::string(100000, 'x'); });
  try {
    Session(model, uncompiled(Backend::kRef));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'model_type': is 100000 bytes long, more than 1024"), std::string::npos);
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
  }
  edit_config(model, [](Json& c) { c["model_type"] = "llama"; c["hidden_size"] = std::string(100000, '7'); });
  try {
    Session(model, uncompiled(Backend::kRef));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'hidden_size': must be an integer"), std::string::npos) << e.what();
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
  }
}

// 1e999 does not fit a double: an error naming the file and the number, not an escaped
// nlohmann exception.
TEST_F(CheckpointErrors, NumberOutsideDoubleRangeIsNamed) {
  const std::string model = copy_fixture();
  std::string config = read_text_file(model + "/config.json");
  config.insert(config.rfind('}'), ", \"rope_theta_x\": 1e999");
  write_file("model/config.json", config);
  expect_error([&] { Session(model, uncompiled(Backend::kRef)); }, ErrorKind::kCheckpoint,
               {model + "/config.json", "1e999"});
}

// A FIFO where a file should be would block a read forever; a folder is not a file. Both are
// refused by name before anything is read.
TEST_F(CheckpointErrors, NonRegularFilesAreRefusedNotWaitedOn) {
  for (const char* name : {"config.json", "model.safetensors", "tokenizer.json"}) {
    const std::string model = copy_fixture();
    const std::string path = model + "/" + name;
    fs::remove(path);
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
    if (std::string(name) == "tokenizer.json") {
      expect_error([&] { Tokenizer::from_file(path); }, ErrorKind::kIo, {path, "not a regular file"});
    } else {
      expect_error([&] { Session session(model, uncompiled(Backend::kRef)); }, ErrorKind::kIo, {path, "not a regular file"});
    }
    fs::remove_all(model);
  }
  const std::string model = copy_fixture();
  fs::remove(model + "/config.json");
  fs::create_directory(model + "/config.json");
  expect_error([&] { Session session(model, uncompiled(Backend::kRef)); }, ErrorKind::kIo,
               {model + "/config.json", "not a regular file"});
}

}  // namespace
}  // namespace canrun
