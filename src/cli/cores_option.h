// `--cores N` of generate, embed, rerank and bench: one process (1, the default), or N workers that this
// command starts under mpirun and that hold a part of the model each.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "parallel/communicator.h"

namespace canrun {

// Thrown once the workers a command started have ended: main exits with their status.
struct WorkersEnded {
  int status = 0;
};

void add_cores_option(CLI::App& command, int& cores);

// The communicator a command with --cores `cores` runs with: single-process for 1; MPI in a
// worker. Otherwise starts the workers (after checking that the model in `model_dir` can be
// split, so that the error comes once) and throws WorkersEnded when they are done.
std::shared_ptr<Communicator> communicator_for(int cores, const std::string& model_dir);

}  // namespace canrun
