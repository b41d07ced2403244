// canrun generate MODEL_DIR --prompt TEXT | --chat --user TEXT [--image FILE...] [--backend ref|cpu]
// [--cores N]: text generation, greedy or sampled as generation_config.json and the sampling flags
// say, printed as it is generated; an image-text-to-text model also reads the prompt's images.
// Sharded, every worker runs the same generation and rank 0 alone prints.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "chat/conversation_file.h"
#include "chat/image_parts.h"
#include "cli/commands.h"
#include "cli/compile_flags.h"
#include "cli/cores_option.h"
#include "cli/image_options.h"
#include "cli/kv_dtype_option.h"
#include "cli/model_argument.h"
#include "cli/option_checks.h"
#include "cli/prompt_lookup_flags.h"
#include "cli/sampling_flags.h"
#include "runtime/activation_dump.h"
#include "runtime/session.h"
#include "tokenizer/text_stream.h"
#include "tokenizer/tokenizer.h"
#include "util/json.h"
#include "util/process_stats.h"
#include "util/progress_line.h"
#include "vision/multimodal_prompt.h"

namespace canrun {
namespace {

struct GenerateArgs {
  std::string model_dir;
  std::string prompt;
  std::string prompt_file;
  bool chat = false;
  std::optional<std::string> system, user, messages_file, tools_file, chat_template;
  ImageFlags images;
  int64_t max_new_tokens = 32;
  int64_t cache_tokens = 0;
  DType kv_dtype = DType::kF32;
  int64_t top_logits = 0;
  std::string backend = "cpu";
  CompileFlags compile;
  SamplingFlags sampling;
  PromptLookup prompt_lookup;
  int cores = 1;
  bool json = false;
  std::string dump_dir;
  std::string dump_steps_list;  // comma-separated
};

double per_second(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void run_generate(const GenerateArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const Backend backend = parse_backend(args.backend, "--backend");
  if (!args.dump_dir.empty() && args.cores > 1)
    fail(ErrorKind::kUsage, "--dump: dumps are written by one process (--cores 1)");
  if (args.dump_dir.empty() && !args.dump_steps_list.empty()) fail(ErrorKind::kUsage, "--dump-steps needs --dump DIR");
  SessionOptions options;
  options.backend = backend;
  options.compile = compile_options(args.compile, backend);
  // The prompt and its images before the model loads, so a bad conversation or image costs no load.
  std::string prompt;
  std::optional<ChatTemplate> chat;
  std::vector<std::string> image_paths = args.images.files;
  if (!image_paths.empty()) check_takes_images(read_model_spec(args.model_dir), args.model_dir, "--image");
  if (args.chat || !image_paths.empty()) {
    Conversation conversation;
    if (args.chat) conversation = make_conversation(args.messages_file, args.system, args.user, args.tools_file);
    if (!args.images.files.empty()) {
      if (args.messages_file)
        fail(ErrorKind::kUsage, "--image: with --messages, give the images as the messages' image blocks");
      // The user turn (--user, or --prompt as one) holds the images, then the text.
      const std::string text = args.user ? *args.user : args.prompt_file.empty() ? args.prompt
                                                                                  : read_text_file(args.prompt_file);
      if (args.chat) conversation.messages.erase(conversation.messages.size() - 1);
      conversation.messages.push_back(user_message_with_images(image_paths.size(), text));
      continue_or_prompt(conversation);
    } else {
      image_paths = image_files(conversation.messages);
      if (!image_paths.empty())
        check_takes_images(read_model_spec(args.model_dir), args.model_dir, "--messages: image blocks");
    }
    chat.emplace(ChatTemplate::from_model_dir(args.model_dir, args.chat_template, conversation.tools.has_value()));
    prompt = chat->render(conversation);
  } else {
    prompt = args.prompt_file.empty() ? args.prompt : read_text_file(args.prompt_file);
  }
  const std::optional<PreparedImages> images = prepare_images(args.model_dir, image_paths, args.images.max_pixels);
  options.comm = communicator_for(args.cores, args.model_dir);
  const bool prints = options.comm->rank() == 0;
  // A cold compile's steps on stderr, until the prompt's bucket is ready.
  ProgressLine progress("generate", progress_style(args.json || !prints));
  if (options.compile) options.compile->progress = progress.reporter();
  Session session(args.model_dir, options);
  const auto tokenizer_start = std::chrono::steady_clock::now();
  const Tokenizer tokenizer =
      Tokenizer::from_file((std::filesystem::path(args.model_dir) / "tokenizer.json").string());
  // The model folder's load: its config and weights, and its tokenizer.
  const double load_seconds = session.load_seconds() + seconds_since(tokenizer_start);

  // A rendered chat carries its special tokens already, as apply_chat_template encodes it.
  std::vector<int32_t> prompt_ids = tokenizer.encode(prompt, /*add_special_tokens=*/!chat).ids;
  // Each image's placeholder repeated per image token, as the model's processor does; the images
  // through the vision tower.
  std::shared_ptr<const VisualInputs> visual;
  double vision_seconds = 0;
  if (session.takes_images()) {
    prompt_ids = expand_image_placeholders(prompt_ids, session.spec().image_token_id,
                                           images ? images->token_counts : std::vector<int64_t>{});
    if (images) {
      const auto vision_start = std::chrono::steady_clock::now();
      visual = session.encode_images(prompt_ids, images->pixels);
      vision_seconds = seconds_since(vision_start);
    }
  }
  std::optional<ActivationDump> dump;
  if (!args.dump_dir.empty()) dump.emplace(args.dump_dir, session.program(),
                 args.dump_steps_list.empty() ? std::vector<std::string>{} : comma_items(args.dump_steps_list),
                 "--dump-steps");
  GenerateRequest request;
  request.max_new_tokens = args.max_new_tokens;
  request.cache_capacity = args.cache_tokens;
  request.kv_dtype = args.kv_dtype;
  // With --top-logits: the top ids at every generated position, what the top-5 rule compares.
  request.top_ids = args.top_logits;
  request.sampling = sampling_params(args.sampling, session.generation());
  request.prefill_observer = dump ? &*dump : nullptr;
  request.visual = visual;
  request.prompt_lookup = args.prompt_lookup;
  TextStream stream(tokenizer);
  const bool streams = prints && !args.json;
  if (streams)
    request.on_token = [&stream](int32_t id) {
      const std::string piece = stream.push(id);
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    };
  // Compiling the prompt's bucket counts towards the time to the first token, not towards prefill.
  if (!prompt_ids.empty()) session.prepare(static_cast<int64_t>(prompt_ids.size()), args.max_new_tokens);
  progress.close();
  const double before_prefill = seconds_since(start);
  const GenerationResult result = session.generate(prompt_ids, request);
  // From the command's start to the first generated token: load, compile and prefill.
  const double first_token_seconds = before_prefill + result.prefill_seconds;
  const std::string text = tokenizer.decode(result.tokens);
  if (dump)
    dump->finish({{"model", args.model_dir}, {"backend", args.backend}, {"prompt", prompt}, {"prompt_ids", prompt_ids}});

  const double prompt_count = static_cast<double>(prompt_ids.size());
  const double decode_steps = result.tokens.empty() ? 0.0 : static_cast<double>(result.tokens.size() - 1);
  const int64_t peak_rss = peak_resident_bytes();
  if (!prints) return;
  const CompiledModel* compiled = session.compiled();
  if (args.json) {
    Json out = {
        {"model", args.model_dir},
        {"backend", args.backend},
        {"cores", args.cores},
        {"model_type", session.spec().model_type},
        {"stored_dtype", std::string(dtype_name(session.stored_dtype()))},
        {"prompt", prompt},
        {"images", image_paths},
        {"chat_template", chat ? Json(chat->origin()) : Json(nullptr)},
        {"prompt_ids", prompt_ids},
        {"generated_ids", result.tokens},
        {"text", text},
        {"stopped_at_eos", result.stopped_at_eos},
        {"seed", result.seed ? Json(*result.seed) : Json(nullptr)},
        {"timings",
         {{"load_s", load_seconds},
          {"compile_s", compiled ? Json(compiled->stats().seconds) : Json(nullptr)},
          {"recompilations", compiled ? compiled->stats().recompilations : 0},
          {"vision_s", visual ? Json(vision_seconds) : Json(nullptr)},
          {"start_to_first_token_s", first_token_seconds},
          {"prefill_s", result.prefill_seconds},
          {"prefill_tokens_per_s", per_second(prompt_count, result.prefill_seconds)},
          {"decode_s", result.decode_seconds},
          {"decode_tokens_per_s", per_second(decode_steps, result.decode_seconds)}}},
        {"prompt_lookup", prompt_lookup_json(args.prompt_lookup, result.drafted_tokens, result.accepted_tokens)},
        {"plan", compiled ? compiled->stats_json() : Json(nullptr)},
        {"kv_cache_bytes", result.kv_cache_bytes},
        {"activation_bytes", result.activation_bytes},
        {"peak_rss_bytes", peak_rss},
    };
    if (args.top_logits > 0 && !result.top_ids.empty()) {
      // The k largest logits after the prompt, highest first: where to look when a generation
      // differs from another implementation's.
      Json top = Json::array();
      for (int32_t id : result.top_ids.front()) top.push_back({{"id", id}, {"logit", result.prompt_logits[id]}});
      out["prompt_top_logits"] = top;
      out["generated_top_ids"] = result.top_ids;
    }
    std::cout << out.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    return;
  }
  // The rest of the streamed text, before the timing line when both go to one terminal.
  std::cout << stream.finish() << std::endl;
  if (compiled) {
    const CompileStats& plan = compiled->stats();
    std::fprintf(stderr, "compile %.2f s (%lld plan entries from the cache, %lld built) | ",
                 plan.seconds, static_cast<long long>(plan.cache_hits), static_cast<long long>(plan.compilations));
  }
  if (visual) std::fprintf(stderr, "vision %zu images %.3f s | ", image_paths.size(), vision_seconds);
  if (args.prompt_lookup.draft_tokens > 0) std::fprintf(stderr, "%s | ", prompt_lookup_summary(result.drafted_tokens, result.accepted_tokens).c_str());
  std::fprintf(stderr,
               "load %.2f s | prefill %zu tokens %.3f s (%.1f tok/s) | decode %zu tokens %.3f s (%.2f tok/s) | "
               "peak RSS %.0f MiB%s%s\n",
               load_seconds, prompt_ids.size(), result.prefill_seconds,
               per_second(prompt_count, result.prefill_seconds), result.tokens.size(), result.decode_seconds,
               per_second(decode_steps, result.decode_seconds), static_cast<double>(peak_rss) / (1 << 20),
               result.stopped_at_eos ? " | stopped at eos" : "",
               result.seed ? (" | seed " + std::to_string(*result.seed)).c_str() : "");
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* command = app.add_subcommand(
      "generate",
      "Generate text from a Hugging Face model folder, from a prompt or a chat: greedy, or sampled as its "
      "generation_config.json or the sampling flags say; printed as it is generated");
  command->add_option("model_dir", args->model_dir,
                      "Model folder (config.json, *.safetensors, tokenizer.json), or a Hub id ORG/NAME[@REVISION] "
                      "found in the Hugging Face cache or downloaded into it")
      ->required()
      ->transform(hub_model_folder());
  auto* prompt = command->add_option("--prompt,-p", args->prompt, "Prompt text");
  auto* prompt_file = command->add_option("--prompt-file", args->prompt_file, "Read the prompt from a file");
  prompt->excludes(prompt_file);
  auto* chat = command->add_flag("--chat", args->chat,
                                 "Render the conversation with the folder's chat template (chat_template.jinja, or "
                                 "tokenizer_config.json's chat_template), as transformers' apply_chat_template does, "
                                 "with the generation prompt; implied by --user and --messages");
  auto* system = command->add_option("--system", args->system, "Chat: the system message");
  auto* user = command->add_option("--user", args->user, "Chat: the user message");
  auto* messages = command->add_option("--messages", args->messages_file,
                                       "Chat: the whole conversation, a JSON list of {\"role\", \"content\", ...} "
                                       "objects (OpenAI style); ending with an assistant message, the model continues "
                                       "that message");
  auto* tools = command->add_option("--tools", args->tools_file,
                                    "Chat: a JSON list of tool (function) schemas, for templates that take tools");
  auto* chat_template = command->add_option("--chat-template", args->chat_template,
                                            "Chat: the folder's template of this name (default: 'default', or "
                                            "'tool_use' with --tools when the folder has one)");
  for (CLI::Option* option : {chat, system, user, messages, tools, chat_template}) {
    option->excludes(prompt);
    option->excludes(prompt_file);
  }
  messages->excludes(user);
  messages->excludes(system);
  add_image_options(*command, args->images,
                    "An image for an image-text-to-text model (JPEG, PNG or WebP; repeat for more): the prompt "
                    "becomes a user turn of the images then the text, rendered with the chat template");
  command->add_option("--max-new-tokens,-n", args->max_new_tokens, "Tokens to generate (default 32)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  command->add_option("--cache-tokens", args->cache_tokens,
                      "KV cache capacity in positions (default: prompt + max new tokens)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  add_kv_dtype_option(*command, args->kv_dtype);
  command->add_option("--backend", args->backend,
                      "Kernels: cpu (default; compiled: weights packed for its kernels, bf16 kept as bf16, f32 "
                      "accumulation, the processor's best instruction set or CANRUN_ISA's) or ref (the "
                      "yardstick: weights as stored, each widened to f32 as a product reads it, double accumulation)")
      ->check(CLI::IsMember({"ref", "cpu"}));
  add_compile_flags(command, args->compile);
  add_sampling_flags(command, args->sampling);
  add_prompt_lookup_flags(*command, args->prompt_lookup);
  add_cores_option(*command, args->cores);
  command->add_flag("--json", args->json, "Print text, token ids and timings as JSON");
  command->add_option("--dump", args->dump_dir,
                      "Write the values every step of the prompt's forward pass computes to this folder (one .npy "
                      "per value, and manifest.json), to compare with transformers (tools/compare_steps.py)");
  command->add_option("--dump-steps", args->dump_steps_list,
                      "With --dump: only these steps, comma-separated, by full name (layers.3.q_proj) or within "
                      "every layer (q_proj, attention, mlp_residual)")
      ->check(comma_list_check());
  command->add_option("--top-logits", args->top_logits,
                      "With --json: also print the K largest logits after the prompt, and the ids of the K "
                      "largest at every generated position")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  command->callback([args, prompt, prompt_file] {
    args->chat = args->chat || args->user || args->messages_file;
    if (!args->chat && (args->system || args->tools_file || args->chat_template))
      throw Error(ErrorKind::kUsage, "generate: --system, --tools and --chat-template belong to a chat: add --user TEXT "
                                     "or --messages FILE");
    if (!args->chat && prompt->count() == 0 && prompt_file->count() == 0)
      throw Error(ErrorKind::kUsage, "generate: give --prompt TEXT, --prompt-file FILE, or a chat (--user TEXT or "
                                     "--messages FILE)");
    run_generate(*args);
  });
}

}  // namespace canrun
