// What a row was run with: each component of the software stack and its version, and the
// (compiler version, library version) pair that names the row's dataset file.
#pragma once

#include <string>
#include <vector>

#include "lab/dataset.h"

namespace canrun {

// For the built-in engine: ("canrun-<version>", "cpu-<isa>"): the tested backend and the
// instruction set its kernels run with here (kernel_isa(), e.g. cpu-x86_64-avx2-fma), which the
// plan cache's keys name too.
VersionPair engine_version_pair();

// canrun, backend, isa, compile step, g++, Arrow, MPI, glibc, os, kernel, cpu.
std::vector<StackComponent> software_stack();

// The machine's host name.
std::string host_name();

// The git commit of the source tree canrun was configured from ("unknown" outside a checkout).
std::string source_commit();

}  // namespace canrun
