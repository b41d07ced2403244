// canrun serve: the Space, a web page and a read-only JSON API over the lab's dataset, reloaded
// when its files change; or, given a model folder, that model behind an OpenAI-compatible API.
#include <omp.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/compile_flags.h"
#include "cli/option_checks.h"
#include "cli/prompt_lookup_flags.h"
#include "hub/model_folder.h"
#include "openai/model_server.h"
#include "serve/server.h"
#include "util/error.h"

namespace canrun {
namespace {

struct ModelServeArgs {
  std::string model;  // as given: a folder or a Hub id
  ModelServerOptions server;
  std::string backend = "cpu";
  CompileFlags compile;
  double max_body_mib = 4;
};

const char* const kSpaceOnly[] = {"--data", "--catalog", "--static", "--reload-interval", "--cache-mib"};
const char* const kModelOnly[] = {"--served-model-name", "--chat-template", "--slots", "--prefill-chunk", "--max-queue",
                                  "--batch-tokens",
                                  "--request-timeout", "--max-body-mib", "--backend", "--no-compile", "--buckets",
                                  "--cache-dir", "--no-plan-cache"};

void serve_the_model(ModelServeArgs& args, const ServeOptions& space, const CLI::App& command) {
  for (const char* option : kSpaceOnly)
    if (command.get_option(option)->count() > 0)
      fail(ErrorKind::kUsage, std::string(option) + " is the Space's (canrun serve without MODEL_DIR)");
  const std::string model_dir = resolve_model_folder(args.model);
  if (!std::filesystem::is_directory(model_dir))
    fail(ErrorKind::kUsage, "MODEL_DIR " + args.model + ": not a folder, nor a Hub id ORG/NAME[@REVISION]");
  // Clients name the model as they know it: the Hub id given, not its cache snapshot's hash (a
  // folder given is named by the server: its own name).
  if (args.server.served_model_name.empty() && model_dir != args.model)
    args.server.served_model_name = args.model.substr(0, args.model.find('@'));
  args.server.host = space.host;
  args.server.port = space.port;
  args.server.idle_timeout_s = space.idle_timeout_s;
  args.server.header_timeout_s = space.header_timeout_s;
  args.server.max_connections = space.max_connections;
  args.server.allowed_hosts = space.allowed_hosts;
  args.server.threads = command.get_option("--threads")->count() > 0 ? space.threads : omp_get_max_threads();
  args.server.max_body_bytes = static_cast<int64_t>(args.max_body_mib * 1024 * 1024);
  SessionOptions session;
  session.backend = parse_backend(args.backend, "--backend");
  session.compile = compile_options(args.compile, session.backend);
  std::cerr << "loading " << model_dir << " ..." << std::endl;
  serve_model(model_dir, session, args.server, [&](const std::string& url) {
    std::cout << "serving " << args.model << " at " << url
              << "/v1 (OpenAI-compatible: /v1/completions, /v1/chat/completions, /v1/models; /health, /metrics; "
                 "Ctrl-C stops after the requests in flight)"
              << std::endl;
  });
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand(
      "serve",
      "Serve the support lab's page and JSON API (/api/rows, /api/model, /api/pairs, /api/catalog) over the\n"
      "dataset folder, reloading it when its files change. Binds 127.0.0.1 unless --host says otherwise.\n"
      "With MODEL_DIR: serve that model behind an OpenAI-compatible API (/v1/completions,\n"
      "/v1/chat/completions, /v1/models, /v1/models/ID, /health, /metrics), streamed or whole, behind the\n"
      "same connection limits and Host check as the Space.");
  command->add_option("--data", options->data_dir,
                      "Dataset folder (default: the dataset canrun ships, " + shipped_dataset_dir() +
                          ", and your own results in " + user_results_dir() +
                          "/, whose rows the page marks as yours; either may be empty or missing)");
  command->add_option("--port", options->port, "TCP port (default 8080; 0 picks a free one)")
      ->check(CLI::Range(0, 65535));
  command->add_option("--host", options->host, "Address to bind (default 127.0.0.1: this machine only)");
  command->add_option("--catalog", options->catalog, "Catalog file (default $CANRUN_CATALOG or data/catalog.jsonl)")
      ->check(regular_file_check());
  command->add_option("--static", options->static_dir,
                      "Folder of the page's files (default $CANRUN_WEB_DIR or web/ of the source tree)")
      ->check(CLI::ExistingDirectory);
  command->add_option("--reload-interval", options->reload_interval_s,
                      "Seconds between checks of the dataset files for changes (default 1)")
      ->check(CLI::Range(0.05, 3600.0));
  command->add_option("--cache-mib", options->cache_mib,
                      "MiB of API answers kept until the dataset changes (default 64; 0 keeps none)")
      ->check(CLI::Range(0, 65536));
  command->add_option("--threads", options->threads,
                      "Worker threads answering requests (default 64); a slow or idle client never holds one.\n"
                      "With MODEL_DIR: threads of each generation step (default: every core)")
      ->check(CLI::Range(1, 1024));
  command->add_option("--max-connections", options->max_connections,
                      "Connections open at once (default 1024); past it a new one gets 503 with Retry-After")
      ->check(CLI::Range(1, 1000000));
  command->add_option("--header-timeout", options->header_timeout_s,
                      "Seconds for a whole request (line, headers, body) to arrive (default 10): from the\n"
                      "connection's opening for its first request, from the first byte for later ones. A request\n"
                      "cut short gets 408; a connection that sent nothing is closed")
      ->check(CLI::Range(0.1, 3600.0));
  command->add_option("--idle-timeout", options->idle_timeout_s,
                      "Seconds a keep-alive connection may wait for its next request (default 5)")
      ->check(CLI::Range(0.1, 3600.0));
  command->add_option("--allow-host", options->allowed_hosts,
                      "Also answer requests whose Host header names this host (repeatable). On a loopback\n"
                      "address only localhost, *.localhost, 127.x.y.z and [::1] are answered, against DNS\n"
                      "rebinding; on any other --host every Host is answered");
  auto model = std::make_shared<ModelServeArgs>();
  command->add_option("model_dir", model->model,
                      "A model folder or a Hub id ORG/NAME[@REVISION]: serve it behind an OpenAI-compatible API "
                      "instead of the Space");
  const std::string group = "Model server (with MODEL_DIR)";
  command->add_option("--served-model-name", model->server.served_model_name,
                      "The model's id in the API (default: the Hub id as given, or the folder's name)")
      ->group(group);
  command->add_option("--chat-template", model->server.chat_template,
                      "A named chat template of the folder for /v1/chat/completions (default: its default)")
      ->group(group);
  command->add_option("--slots", model->server.slots,
                      "Sequences decoded together, a token each per step (default 1)")
      ->check(CLI::Range(1, 256))
      ->group(group);
  command->add_option("--prefill-chunk", model->server.prefill_chunk,
                      "With --slots above 1: a newcomer's prompt runs this many tokens per step, between the "
                      "others' decode steps, so a long prompt does not stall them (default 256; 0: all at once)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->group(group);
  for (CLI::Option* option : add_prompt_lookup_flags(*command, model->server.prompt_lookup)) option->group(group);
  command->add_option("--max-queue", model->server.max_queue,
                      "Requests that may wait for a slot (default 16); past it 429 with Retry-After")
      ->check(CLI::Range(int64_t{0}, int64_t{100000}))
      ->group(group);
  command->add_option("--batch-tokens", model->server.batch_tokens,
                      "An encoder: the waiting requests embedded together, whole, up to this many tokens "
                      "(default 8192)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->group(group);
  command->add_option("--request-timeout", model->server.request_timeout_s,
                      "Seconds from a request's arrival to its last token (default 600); past it 504, or an error "
                      "event in a stream")
      ->check(CLI::PositiveNumber)
      ->group(group);
  command->add_option("--max-body-mib", model->max_body_mib, "Largest request body in MiB (default 4); a request whose Content-Length\n"
                      "announces more gets 413 at once, its body unread")
      ->check(CLI::Range(0.001, 1024.0))
      ->group(group);
  command->add_option("--backend", model->backend, "Kernels: cpu (default, compiled) or ref")
      ->check(CLI::IsMember({"ref", "cpu"}))
      ->group(group);
  add_compile_flags(command, model->compile, /*cache_flags=*/true);
  for (const char* option : {"--no-compile", "--buckets", "--no-plan-cache", "--cache-dir"})
    if (CLI::Option* flag = command->get_option_no_throw(option)) flag->group(group);
  command->callback([options, model, command] {
    if (!model->model.empty()) return serve_the_model(*model, *options, *command);
    for (const char* option : kModelOnly)
      if (command->get_option(option)->count() > 0)
        fail(ErrorKind::kUsage, std::string(option) + " applies to a model server: give MODEL_DIR");
    serve(*options, [](const std::string& url) {
      std::cout << "serving the canrun Space at " << url << " (open it in a browser; Ctrl-C stops)" << std::endl;
    });
  });
}

}  // namespace canrun
