#include "bench/workload.h"

#include <charconv>

#include "util/error.h"

namespace canrun {
namespace {

bool parse_count(std::string_view text, int64_t& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

int64_t draw(const LengthDistribution& lengths, std::mt19937_64& random) {
  return std::uniform_int_distribution<int64_t>(lengths.low, lengths.high)(random);
}

}  // namespace

std::string LengthDistribution::text() const {
  return low == high ? std::to_string(low) : std::to_string(low) + "-" + std::to_string(high);
}

LengthDistribution parse_lengths(std::string_view text, std::string_view option, int64_t minimum) {
  const auto bad = [&](const std::string& why) {
    fail(ErrorKind::kUsage, std::string(option) + " '" + std::string(text) + "': " + why +
                                " (a length like 128, or a range like 64-512)");
  };
  LengthDistribution lengths;
  const size_t dash = text.find('-');
  const bool range = dash != std::string_view::npos;
  if (!parse_count(range ? text.substr(0, dash) : text, lengths.low)) bad("not a whole number");
  lengths.high = lengths.low;
  if (range && !parse_count(text.substr(dash + 1), lengths.high)) bad("the range's end is not a whole number");
  if (lengths.low < minimum) bad("must be at least " + std::to_string(minimum));
  if (lengths.high < lengths.low) bad("the range ends below its start");
  if (lengths.high > 1'000'000) bad("longer than 1,000,000 tokens");
  return lengths;
}

std::vector<BenchRequest> make_requests(const Workload& workload, int64_t vocab_size) {
  std::mt19937_64 random(workload.seed);
  std::uniform_int_distribution<int32_t> token(0, static_cast<int32_t>(vocab_size - 1));
  std::vector<BenchRequest> requests(static_cast<size_t>(workload.warmup + workload.requests));
  for (BenchRequest& request : requests) {
    request.prompt.resize(static_cast<size_t>(draw(workload.prompt, random)));
    for (int32_t& id : request.prompt) id = token(random);
    request.output_tokens = draw(workload.output, random);
    request.kv_dtype = workload.kv_dtype;
  }
  return requests;
}

namespace {

int32_t next_id(int32_t id, int64_t vocab_size) { return static_cast<int32_t>((id + 1) % vocab_size); }

}  // namespace

std::vector<int32_t> image_prompt_prefix(int32_t image_token_id, const std::vector<int64_t>& token_counts,
                                         int64_t vocab_size) {
  std::vector<int32_t> prefix;
  for (const int64_t count : token_counts) {
    prefix.insert(prefix.end(), static_cast<size_t>(count), image_token_id);
    prefix.push_back(next_id(image_token_id, vocab_size));
  }
  return prefix;
}

void add_images(std::vector<BenchRequest>& requests, const std::vector<int32_t>& prefix,
                std::shared_ptr<const PixelValues> pixels, int32_t image_token_id, int64_t vocab_size) {
  for (BenchRequest& request : requests) {
    for (int32_t& id : request.prompt)
      if (id == image_token_id) id = next_id(id, vocab_size);
    request.prompt.insert(request.prompt.begin(), prefix.begin(), prefix.end());
    request.pixels = pixels;
  }
}

}  // namespace canrun
