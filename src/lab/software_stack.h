// What a row was run with: each component of the software stack and its version, and the
// (compiler version, library version) pair that names the row's dataset file.
#pragma once

#include <string>
#include <vector>

#include "lab/dataset.h"

namespace canrun {

// For the built-in engine: ("canrun-<version>", "ref-<isa>"), the ISA being the instruction set
// the ref backend was compiled for (x86_64 baseline unless built with -mavx2 / -mavx512f).
VersionPair engine_version_pair();

// canrun, backend, isa, compile step, g++, Arrow, MPI, glibc, os, kernel, cpu.
std::vector<StackComponent> software_stack();

// The machine's host name.
std::string host_name();

// The git commit of the source tree canrun was configured from ("unknown" outside a checkout).
std::string source_commit();

}  // namespace canrun
