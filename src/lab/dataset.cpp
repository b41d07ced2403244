#include "lab/dataset.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/exception.h>
#include <parquet/properties.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>

#include "util/atomic_file.h"
#include "util/error.h"

namespace canrun {
namespace {

constexpr const char* kFileSuffix = ".parquet";
constexpr const char* kSeparator = "__";

void check(const arrow::Status& status, const std::string& where) {
  if (!status.ok()) fail(ErrorKind::kIo, where + ": " + status.ToString());
}

template <typename T>
T check(arrow::Result<T> result, const std::string& where) {
  check(result.status(), where);
  return std::move(result).ValueUnsafe();
}

std::string iso8601(Timestamp time) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  const std::time_t whole = seconds.time_since_epoch().count();
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char text[48];
  const size_t length = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof(text) - length, ".%06lldZ",
                static_cast<long long>((time - seconds).count()));
  return text;
}

// The inverse of iso8601; throws a usage error naming the text.
Timestamp parse_iso8601(const std::string& text) {
  std::tm utc{};
  long long micros = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%6lldZ%n", &utc.tm_year, &utc.tm_mon, &utc.tm_mday,
                  &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &micros, &consumed) != 7 ||
      consumed != static_cast<int>(text.size()))
    fail(ErrorKind::kUsage, "timestamp '" + text + "': expected YYYY-MM-DDTHH:MM:SS.ffffffZ");
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  return Timestamp(std::chrono::seconds(timegm(&utc)) + std::chrono::microseconds(micros));
}

// How one C++ value type maps to an Arrow type, its builder and its array.
template <typename T>
struct Cell;

template <typename T, typename BuilderType, typename ArrayType>
struct PrimitiveCell {
  using Builder = BuilderType;
  using Array = ArrayType;
  static arrow::Status append(Builder& builder, const T& value) { return builder.Append(value); }
  static T get(const Array& array, int64_t i) { return array.Value(i); }
  static Json to_json(const T& value) { return value; }
  static T from_json(const Json& json) { return json.get<T>(); }
};

template <>
struct Cell<int32_t> : PrimitiveCell<int32_t, arrow::Int32Builder, arrow::Int32Array> {
  static std::shared_ptr<arrow::DataType> type() { return arrow::int32(); }
};
template <>
struct Cell<int64_t> : PrimitiveCell<int64_t, arrow::Int64Builder, arrow::Int64Array> {
  static std::shared_ptr<arrow::DataType> type() { return arrow::int64(); }
};
template <>
struct Cell<bool> : PrimitiveCell<bool, arrow::BooleanBuilder, arrow::BooleanArray> {
  static std::shared_ptr<arrow::DataType> type() { return arrow::boolean(); }
};
template <>
struct Cell<double> : PrimitiveCell<double, arrow::DoubleBuilder, arrow::DoubleArray> {
  static std::shared_ptr<arrow::DataType> type() { return arrow::float64(); }
};

template <>
struct Cell<std::string> {
  using Builder = arrow::StringBuilder;
  using Array = arrow::StringArray;
  static std::shared_ptr<arrow::DataType> type() { return arrow::utf8(); }
  static arrow::Status append(Builder& builder, const std::string& value) { return builder.Append(value); }
  static std::string get(const Array& array, int64_t i) { return array.GetString(i); }
  static Json to_json(const std::string& value) { return value; }
  static std::string from_json(const Json& json) { return json.get<std::string>(); }
};

template <>
struct Cell<Timestamp> {
  using Builder = arrow::TimestampBuilder;
  using Array = arrow::TimestampArray;
  static std::shared_ptr<arrow::DataType> type() { return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"); }
  static arrow::Status append(Builder& builder, Timestamp value) {
    return builder.Append(value.time_since_epoch().count());
  }
  static Timestamp get(const Array& array, int64_t i) { return Timestamp(std::chrono::microseconds(array.Value(i))); }
  static Json to_json(Timestamp value) { return iso8601(value); }
  static Timestamp from_json(const Json& json) { return parse_iso8601(json.get<std::string>()); }
};

// A list of numbers: token ids, or a training run's values per step.
template <typename T, typename ValueBuilder, typename ValueArray>
struct ListCell {
  using Builder = arrow::ListBuilder;
  using Array = arrow::ListArray;
  static std::shared_ptr<arrow::DataType> type() { return arrow::list(arrow::CTypeTraits<T>::type_singleton()); }
  static arrow::Status append(Builder& builder, const std::vector<T>& values) {
    ARROW_RETURN_NOT_OK(builder.Append());
    if (values.empty()) return arrow::Status::OK();  // an empty vector's data() may be null: no memcpy from it
    return static_cast<ValueBuilder*>(builder.value_builder())->AppendValues(values.data(), values.size());
  }
  static std::vector<T> get(const Array& array, int64_t i) {
    const auto& values = static_cast<const ValueArray&>(*array.values());
    const T* first = values.raw_values() + array.value_offset(i);
    return {first, first + array.value_length(i)};
  }
  static Json to_json(const std::vector<T>& values) { return values; }
  static std::vector<T> from_json(const Json& json) { return json.get<std::vector<T>>(); }
};

template <>
struct Cell<std::vector<int32_t>> : ListCell<int32_t, arrow::Int32Builder, arrow::Int32Array> {};

template <>
struct Cell<std::vector<double>> : ListCell<double, arrow::DoubleBuilder, arrow::DoubleArray> {};

template <>
struct Cell<std::vector<StackComponent>> {
  using Builder = arrow::ListBuilder;
  using Array = arrow::ListArray;
  static std::shared_ptr<arrow::DataType> type() {
    return arrow::list(arrow::struct_(
        {arrow::field("component", arrow::utf8(), false), arrow::field("version", arrow::utf8(), false)}));
  }
  static arrow::Status append(Builder& builder, const std::vector<StackComponent>& stack) {
    ARROW_RETURN_NOT_OK(builder.Append());
    auto& structs = static_cast<arrow::StructBuilder&>(*builder.value_builder());
    auto& components = static_cast<arrow::StringBuilder&>(*structs.field_builder(0));
    auto& versions = static_cast<arrow::StringBuilder&>(*structs.field_builder(1));
    for (const StackComponent& entry : stack) {
      ARROW_RETURN_NOT_OK(structs.Append());
      ARROW_RETURN_NOT_OK(components.Append(entry.component));
      ARROW_RETURN_NOT_OK(versions.Append(entry.version));
    }
    return arrow::Status::OK();
  }
  static std::vector<StackComponent> get(const Array& array, int64_t i) {
    const auto& structs = static_cast<const arrow::StructArray&>(*array.values());
    const auto& components = static_cast<const arrow::StringArray&>(*structs.GetFieldByName("component"));
    const auto& versions = static_cast<const arrow::StringArray&>(*structs.GetFieldByName("version"));
    std::vector<StackComponent> stack;
    for (int64_t k = array.value_offset(i); k < array.value_offset(i) + array.value_length(i); ++k)
      stack.push_back({components.GetString(k), versions.GetString(k)});
    return stack;
  }
  static Json to_json(const std::vector<StackComponent>& stack) {
    Json list = Json::array();
    for (const StackComponent& entry : stack) list.push_back({{"component", entry.component}, {"version", entry.version}});
    return list;
  }
  static std::vector<StackComponent> from_json(const Json& json) {
    std::vector<StackComponent> stack;
    for (const Json& entry : json) stack.push_back({entry.at("component").get<std::string>(), entry.at("version").get<std::string>()});
    return stack;
  }
};

// One column: its Arrow type, and how a row's member is written, read back and shown as JSON.
struct Column {
  std::string name;
  std::shared_ptr<arrow::DataType> type;
  bool nullable = false;
  bool may_be_absent = false;  // added after files were written: absent reads as null
  std::function<arrow::Status(arrow::ArrayBuilder&, const ResultRow&)> append;
  std::function<void(const arrow::Array&, int64_t, ResultRow&)> read;  // for non-null cells
  std::function<Json(const ResultRow&)> to_json;
  std::function<void(const Json&, ResultRow&)> from_json;  // for non-null values
  std::function<void(ResultRow&)> when_absent;  // for a may_be_absent column a file lacks; none: left as is
};

template <typename T>
Column column(std::string name, T ResultRow::*member) {
  using C = Cell<T>;
  return {std::move(name), C::type(), false, false,
          [member](arrow::ArrayBuilder& builder, const ResultRow& row) {
            return C::append(static_cast<typename C::Builder&>(builder), row.*member);
          },
          [member](const arrow::Array& array, int64_t i, ResultRow& row) {
            row.*member = C::get(static_cast<const typename C::Array&>(array), i);
          },
          [member](const ResultRow& row) { return C::to_json(row.*member); },
          [member](const Json& json, ResultRow& row) { row.*member = C::from_json(json); },
          {}};
}

template <typename T>
Column column(std::string name, std::optional<T> ResultRow::*member) {
  using C = Cell<T>;
  return {std::move(name), C::type(), true, false,
          [member](arrow::ArrayBuilder& builder, const ResultRow& row) {
            const std::optional<T>& value = row.*member;
            return value ? C::append(static_cast<typename C::Builder&>(builder), *value) : builder.AppendNull();
          },
          [member](const arrow::Array& array, int64_t i, ResultRow& row) {
            row.*member = C::get(static_cast<const typename C::Array&>(array), i);
          },
          [member](const ResultRow& row) { return row.*member ? C::to_json(*(row.*member)) : Json(nullptr); },
          [member](const Json& json, ResultRow& row) { row.*member = C::from_json(json); },
          {}};
}

// A nullable column that files written before it existed lack.
Column added_later(Column column) {
  column.may_be_absent = true;
  return column;
}

// Files from before the column are of layout 1.
Column schema_version_column() {
  Column column = added_later(canrun::column("schema_version", &ResultRow::schema_version));
  column.when_absent = [](ResultRow& row) { row.schema_version = 1; };
  return column;
}

// Files from before the column hold generation checks only.
Column workload_column() {
  Column column = added_later(canrun::column("workload", &ResultRow::workload));
  column.when_absent = [](ResultRow& row) { row.workload = "inference"; };
  return column;
}

const std::vector<Column>& columns() {
  static const std::vector<Column> kColumns = {
      column("model_id", &ResultRow::model_id),
      column("revision", &ResultRow::revision),
      column("task", &ResultRow::task),
      column("architecture", &ResultRow::architecture),
      column("parameter_count", &ResultRow::parameter_count),
      column("weights", &ResultRow::weights),
      column("result", &ResultRow::result),
      column("error_type", &ResultRow::error_type),
      column("error_message", &ResultRow::error_message),
      column("cores", &ResultRow::cores),
      column("tp_degree", &ResultRow::tp_degree),
      column("ep_degree", &ResultRow::ep_degree),
      column("wall_time_s", &ResultRow::wall_time_s),
      column("compile_time_s", &ResultRow::compile_time_s),
      added_later(column("recompilations", &ResultRow::recompilations)),
      added_later(column("plan_cache_hit", &ResultRow::plan_cache_hit)),
      added_later(column("peak_activation_bytes", &ResultRow::peak_activation_bytes)),
      added_later(column("graph_breaks", &ResultRow::graph_breaks)),
      added_later(column("eager_fallback", &ResultRow::eager_fallback)),
      column("load_time_s", &ResultRow::load_time_s),
      column("peak_device_memory_bytes", &ResultRow::peak_device_memory_bytes),
      column("peak_host_memory_bytes", &ResultRow::peak_host_memory_bytes),
      column("prompt", &ResultRow::prompt),
      column("generated_text", &ResultRow::generated_text),
      column("generated_token_ids", &ResultRow::generated_token_ids),
      column("reference_token_ids", &ResultRow::reference_token_ids),
      column("matching_prefix_length", &ResultRow::matching_prefix_length),
      added_later(column("verification", &ResultRow::verification)),
      added_later(column("judge_score", &ResultRow::judge_score)),
      added_later(column("judge", &ResultRow::judge)),
      column("software_stack", &ResultRow::software_stack),
      column("reproduce_script", &ResultRow::reproduce_script),
      column("timestamp", &ResultRow::timestamp),
      column("host", &ResultRow::host),
      column("compiler_version", &ResultRow::compiler_version),
      column("library_version", &ResultRow::library_version),
      schema_version_column(),
      added_later(column("reason_code", &ResultRow::reason_code)),
      added_later(column("license", &ResultRow::license)),
      added_later(column("memory_capacity_bytes", &ResultRow::memory_capacity_bytes)),
      added_later(column("planned_memory_bytes", &ResultRow::planned_memory_bytes)),
      added_later(column("tokens_match", &ResultRow::tokens_match)),
      added_later(column("judged_fluent", &ResultRow::judged_fluent)),
      added_later(column("first_divergence_step", &ResultRow::first_divergence_step)),
      added_later(column("plan_source", &ResultRow::plan_source)),
      added_later(column("run_command", &ResultRow::run_command)),
      added_later(column("warm_compile_time_s", &ResultRow::warm_compile_time_s)),
      added_later(column("min_cosine", &ResultRow::min_cosine)),
      added_later(column("max_score_difference", &ResultRow::max_score_difference)),
      added_later(column("sentences_per_s", &ResultRow::sentences_per_s)),
      added_later(column("quantization", &ResultRow::quantization)),
      workload_column(),
      added_later(column("train_steps", &ResultRow::train_steps)),
      added_later(column("train_losses", &ResultRow::train_losses)),
      added_later(column("reference_losses", &ResultRow::reference_losses)),
      added_later(column("grad_norms", &ResultRow::grad_norms)),
      added_later(column("reference_grad_norms", &ResultRow::reference_grad_norms)),
      added_later(column("step_times_s", &ResultRow::step_times_s)),
      added_later(column("loss_tolerance", &ResultRow::loss_tolerance)),
      added_later(column("first_step_outside", &ResultRow::first_step_outside)),
      added_later(column("native_step0_loss", &ResultRow::native_step0_loss)),
      added_later(column("restart_step", &ResultRow::restart_step)),
      added_later(column("restart_check", &ResultRow::restart_check)),
      added_later(column("first_step_time_s", &ResultRow::first_step_time_s)),
      added_later(column("step_time_p50_s", &ResultRow::step_time_p50_s)),
      added_later(column("step_time_p95_s", &ResultRow::step_time_p95_s)),
      added_later(column("train_tokens_per_s", &ResultRow::train_tokens_per_s)),
  };
  return kColumns;
}

// pandas reads a nullable integer or boolean column as float64 or object unless the file's
// "pandas" metadata names its nullable dtype (Int32, Int64, boolean): this keeps them integers.
std::shared_ptr<const arrow::KeyValueMetadata> pandas_metadata() {
  Json described = Json::array();
  for (const Column& c : columns()) {
    if (!c.nullable) continue;
    std::string dtype;
    if (c.type->Equals(*arrow::int32())) dtype = "Int32";
    if (c.type->Equals(*arrow::int64())) dtype = "Int64";
    if (c.type->Equals(*arrow::boolean())) dtype = "boolean";
    if (dtype.empty()) continue;
    described.push_back({{"name", c.name},
                         {"field_name", c.name},
                         {"pandas_type", dtype == "boolean" ? "bool" : c.type->ToString()},
                         {"numpy_type", dtype},
                         {"metadata", nullptr}});
  }
  const Json metadata = {{"index_columns", Json::array()},
                         {"column_indexes", Json::array()},
                         {"columns", described},
                         {"creator", {{"library", "canrun"}}},
                         {"pandas_version", "2.2.0"}};
  return arrow::key_value_metadata({"pandas"}, {metadata.dump()});
}

std::shared_ptr<arrow::Schema> schema() {
  arrow::FieldVector fields;
  for (const Column& c : columns()) fields.push_back(arrow::field(c.name, c.type, c.nullable));
  return arrow::schema(fields, pandas_metadata());
}

void validate_version_part(const std::string& part, const std::string& what) {
  const bool valid_chars = !part.empty() && part.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                                   "0123456789._+-") == std::string::npos;
  if (!valid_chars || part.find(kSeparator) != std::string::npos || part.front() == '.')
    fail(ErrorKind::kUsage, what + " '" + part +
                                "' cannot name a dataset file: use letters, digits and . _ + - (no \"__\", "
                                "not starting with '.')");
}

void validate_rows(const std::string& path, const std::vector<ResultRow>& rows) {
  const std::filesystem::path file(path);
  const std::string file_name = file.filename().string();
  // A sweep shard's part lies in a folder named after the pair.
  const std::string folder_name = file.parent_path().filename().string() + ".parquet";
  for (size_t i = 0; i < rows.size(); ++i) {
    const ResultRow& row = rows[i];
    const std::string where = path + ": row " + std::to_string(i) + " (" + row.model_id + ")";
    if (row.model_id.empty()) fail(ErrorKind::kUsage, where + ": model_id is empty");
    if (row.result.empty()) fail(ErrorKind::kUsage, where + ": result is empty");
    if (row.weights && *row.weights != "real" && *row.weights != "synthetic")
      fail(ErrorKind::kUsage, where + ": weights must be \"real\", \"synthetic\" or null, got \"" + *row.weights + "\"");
    const std::string expected = dataset_file_name({row.compiler_version, row.library_version});
    if (expected != file_name && expected != folder_name)
      fail(ErrorKind::kUsage, where + ": its version pair belongs in " + expected + ", not " + file_name);
  }
}

std::string to_parquet(const std::vector<ResultRow>& rows, const std::string& path) {
  arrow::ArrayVector arrays;
  for (const Column& c : columns()) {
    std::unique_ptr<arrow::ArrayBuilder> builder =
        check(arrow::MakeBuilder(c.type, arrow::default_memory_pool()), path + ": column " + c.name);
    for (const ResultRow& row : rows) check(c.append(*builder, row), path + ": column " + c.name);
    arrays.push_back(check(builder->Finish(), path + ": column " + c.name));
  }
  const auto table = arrow::Table::Make(schema(), arrays, static_cast<int64_t>(rows.size()));
  auto sink = check(arrow::io::BufferOutputStream::Create(), path);
  // store_schema keeps the Arrow types (UTC timestamps, list field names) exact for Arrow readers.
  const auto properties = parquet::WriterProperties::Builder().compression(parquet::Compression::ZSTD)->build();
  const auto arrow_properties = parquet::ArrowWriterProperties::Builder().store_schema()->build();
  check(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink, parquet::DEFAULT_MAX_ROW_GROUP_LENGTH,
                                   properties, arrow_properties),
        path);
  const auto buffer = check(sink->Finish(), path);
  return buffer->ToString();
}

std::shared_ptr<arrow::Table> read_table(const std::string& path) {
  try {
    auto input = check(arrow::io::ReadableFile::Open(path), path);
    auto reader = check(parquet::arrow::OpenFile(input, arrow::default_memory_pool()), path);
    auto table = check(reader->ReadTable(), path);
    table = check(table->CombineChunks(), path);
    // A file from elsewhere may hold offsets past its data or strings that are not UTF-8: both
    // are refused here, before any cell is read.
    const arrow::Status valid = table->ValidateFull();
    if (!valid.ok()) fail(ErrorKind::kIo, path + ": not a valid dataset file: " + valid.message());
    return table;
  } catch (const parquet::ParquetException& e) {
    fail(ErrorKind::kIo, path + ": not a readable Parquet file: " + e.what());
  }
}

}  // namespace

const std::vector<ReasonCode>& reason_codes() {
  static const std::vector<ReasonCode> kCodes = {
      {"needs_memory", "no core count of the profile holds the larger of the tested and the reference run; "
                       "error_message says by how much, and how many cores of the profile's size would"},
      {"cannot_shard", "the model does not fit one core of the profile and its family cannot be split"},
      {"unsupported_architecture", "canrun has no implementation of the model's family"},
      {"not_selected", "the catalog lists the model but does not select it (its reason is in error_message)"},
      {"weights_unavailable", "the real weights could not be had (not in the Hugging Face cache, no network)"},
      {"no_protocol", "the lab has no check protocol for the model's task yet (text-classification), or no "
                      "training check for it (workload train: text-generation only)"},
      {"needs_sharding", "workload train: the model does not fit one core of the profile, and the training check "
                         "runs in one process"},
  };
  return kCodes;
}

std::string workload_setup(const ResultRow& row) {
  std::string setup = row.workload;
  if (row.workload != "train") return setup;
  for (const StackComponent& component : row.software_stack)
    if (component.component == "training" || component.component == "dtype") setup += "; " + component.version;
  return setup;
}

const std::vector<std::string>& dataset_columns() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Column& c : columns()) names.push_back(c.name);
    return names;
  }();
  return kNames;
}

std::string dataset_file_name(const VersionPair& pair) {
  validate_version_part(pair.compiler, "compiler version");
  validate_version_part(pair.library, "library version");
  return pair.compiler + kSeparator + pair.library + kFileSuffix;
}

void write_dataset(const std::string& path, const std::vector<ResultRow>& rows) {
  write_file_atomically(path, dataset_bytes(path, rows));
}

std::string dataset_bytes(const std::string& path, const std::vector<ResultRow>& rows) {
  validate_rows(path, rows);
  return to_parquet(rows, path);
}

std::vector<ResultRow> read_dataset(const std::string& path) {
  const std::shared_ptr<arrow::Table> table = read_table(path);
  std::vector<ResultRow> rows(static_cast<size_t>(table->num_rows()));
  for (const Column& c : columns()) {
    const std::string where = path + ": column '" + c.name + "'";
    const std::shared_ptr<arrow::ChunkedArray> chunks = table->GetColumnByName(c.name);
    if (!chunks && c.may_be_absent) {
      if (c.when_absent)
        for (ResultRow& row : rows) c.when_absent(row);
      continue;
    }
    if (!chunks) fail(ErrorKind::kIo, where + ": missing");
    if (!chunks->type()->Equals(*c.type))
      fail(ErrorKind::kIo, where + ": expected " + c.type->ToString() + ", found " + chunks->type()->ToString());
    if (chunks->num_chunks() == 0) continue;  // no rows
    const arrow::Array& array = *chunks->chunk(0);
    for (int64_t i = 0; i < array.length(); ++i) {
      if (array.IsNull(i)) {
        if (!c.nullable) fail(ErrorKind::kIo, where + ": row " + std::to_string(i) + " is null");
        continue;
      }
      c.read(array, i, rows[static_cast<size_t>(i)]);
    }
  }
  return rows;
}

ResultRow row_from_json(const Json& json) {
  if (!json.is_object()) fail(ErrorKind::kUsage, "a result row must be a JSON object");
  ResultRow row;
  for (const Column& c : columns()) {
    if (!json.contains(c.name)) {
      if (c.may_be_absent) {
        if (c.when_absent) c.when_absent(row);
        continue;
      }
      fail(ErrorKind::kUsage, "result row: field '" + c.name + "' is missing");
    }
    const Json& value = json[c.name];
    if (value.is_null()) {
      if (!c.nullable) fail(ErrorKind::kUsage, "result row: field '" + c.name + "' must not be null");
      continue;
    }
    try {
      c.from_json(value, row);
    } catch (const Json::exception& e) {
      fail(ErrorKind::kUsage, "result row: field '" + c.name + "': " + e.what());
    }
  }
  return row;
}

Json row_to_json(const ResultRow& row) {
  Json json = Json::object();
  for (const Column& c : columns()) json[c.name] = c.to_json(row);
  return json;
}

}  // namespace canrun
