#include "compile/plan_file.h"

#include "plan/checksum.h"
#include "util/error.h"

namespace canrun {

Json run_shape_json(const Program& program, const RunShape& shape, const BufferPlan& buffers) {
  Json steps = Json::array();
  for (const auto& step : program.steps()) {
    const StepCost cost = step->cost(program, shape);
    steps.push_back({{"name", step->name()},
                     {"kind", std::string(step->kind())},
                     {"inputs", step->inputs()},
                     {"outputs", step->outputs()},
                     {"flops", cost.flops},
                     {"weight_bytes", cost.weight_bytes}});
  }
  Json values = Json::array();
  for (size_t v = 0; v < program.values().size(); ++v)
    values.push_back({{"name", program.values()[v].name}, {"bytes", buffers.bytes[v]}, {"offset", buffers.offsets[v]}});
  const StepCost total = program.cost(shape);
  return {{"tokens", shape.tokens},
          {"positions", shape.positions},
          {"flops", total.flops},
          {"weight_bytes", total.weight_bytes},
          {"arena_bytes", buffers.arena_bytes},
          {"activation_bytes_without_reuse", buffers.total_bytes},
          {"steps", steps},
          {"values", values}};
}

BufferPlan buffer_plan_from_json(const Json& json, const Program& program, int64_t tokens, const std::string& where) {
  const BufferPlan derived = plan_buffers(program, tokens);
  BufferPlan plan;
  try {
    plan.tokens = json.at("tokens").get<int64_t>();
    plan.arena_bytes = json.at("arena_bytes").get<int64_t>();
    plan.total_bytes = json.at("activation_bytes_without_reuse").get<int64_t>();
    const Json& values = json.at("values");
    for (size_t v = 0; v < values.size(); ++v) {
      if (v < program.values().size() && values[v].at("name").get<std::string>() != program.values()[v].name) break;
      plan.bytes.push_back(values[v].at("bytes").get<int64_t>());
      plan.offsets.push_back(values[v].at("offset").get<int64_t>());
    }
  } catch (const Json::exception& e) {
    fail(ErrorKind::kRuntime, where + ": malformed buffer plan: " + e.what());
  }
  if (plan.tokens != tokens || plan.bytes != derived.bytes || plan.offsets != derived.offsets ||
      plan.arena_bytes != derived.arena_bytes)
    fail(ErrorKind::kRuntime, where + ": the buffer plan for " + std::to_string(tokens) +
                                  " tokens does not match the model (remove the entry with `canrun cache rm`)");
  return plan;
}

std::string program_fingerprint(const Program& program) {
  Json values = Json::array(), steps = Json::array();
  for (const ValueInfo& v : program.values())
    values.push_back({v.name, v.width, v.rows == ValueRows::kTokens ? "tokens" : "last"});
  for (const auto& step : program.steps())
    steps.push_back({step->name(), std::string(step->kind()), step->inputs(), step->outputs()});
  return xxh3_128_hex(Json{{"values", values}, {"steps", steps}, {"output", program.output()}}.dump());
}

std::string matrices_fingerprint(const Program& program) {
  Json matrices = Json::array();
  for (const NamedMatrix& m : program.matrices()) {
    Json entry = {m.name, m.matrix->rows(), m.matrix->cols(), std::string(dtype_name(m.matrix->dtype()))};
    if (m.matrix->block_cols() > 0) entry.push_back(m.matrix->block_cols());  // FP8's scale blocks
    matrices.push_back(std::move(entry));
  }
  return xxh3_128_hex(matrices.dump());
}

}  // namespace canrun
