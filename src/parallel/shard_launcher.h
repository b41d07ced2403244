// Starts a sharded run: this same command again as `cores` workers under Open MPI's mpirun,
// so a user never calls a launcher. Each worker gets OMP_NUM_THREADS (available cores / workers,
// at least 1) and, when workers outnumber cores, OMP_WAIT_POLICY=passive (spinning OpenMP
// threads starve the others), unless the user set them.
#pragma once

#include <string>
#include <vector>

namespace canrun {

// Runs `/proc/self/exe` with `arguments` (those after the program name) under
// `mpirun -np cores --oversubscribe --bind-to none`, in this process's group (so whoever kills
// the group ends the workers too), waits, and returns its exit status. With `stderr_path`,
// mpirun's and the workers' standard error go to that file. Throws Error(kUsage) naming
// mpirun when it is not on PATH.
int run_workers(int cores, const std::vector<std::string>& arguments, const std::string& stderr_path = "");

// run_workers with this process's own arguments: the same command, sharded.
int run_sharded(int cores);

}  // namespace canrun
