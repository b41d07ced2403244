// What every fuzz target shares: a private scratch folder for inputs that canrun reads as files,
// and the rule that an input is refused only with canrun's own errors. Any other exception (a
// JSON type error escaping a reader, say) is a finding, as is every sanitizer report.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>
#include <typeinfo>

#include "serve/http_error.h"
#include "util/error.h"

namespace canrun::fuzz {

namespace fs = std::filesystem;

// A folder of this process's own, in memory where /dev/shm exists; made on first use, removed
// at exit (targets overwrite the same few files in it).
inline const fs::path& scratch() {
  static const fs::path dir = [] {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    fs::path made = base / ("canrun-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(made);
    return made;
  }();
  static const struct Remover {
    ~Remover() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remover;
  return dir;
}

// Writes the input as `relative` under the scratch folder; returns its path.
inline std::string write_input(const fs::path& relative, const uint8_t* data, size_t size) {
  const fs::path path = scratch() / relative;
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  return path.string();
}

// Runs `action`; canrun::Error and HttpError are the expected refusals, anything else aborts.
template <class Action>
void refuse_only_with_canrun_errors(Action&& action) {
  try {
    action();
  } catch (const Error&) {
  } catch (const HttpError&) {
  } catch (const std::bad_alloc&) {
    // Past -rss_limit_mb libFuzzer reports the input itself; an allocation refused is not a bug.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uncaught %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
}

}  // namespace canrun::fuzz
