// Starts a sharded run: this same command again as `cores` workers under Open MPI's mpirun,
// so a user never calls a launcher. Each worker gets OMP_NUM_THREADS (available cores / workers,
// at least 1) and, when workers outnumber cores, OMP_WAIT_POLICY=passive (spinning OpenMP
// threads starve the others), unless the user set them.
#pragma once

namespace canrun {

// Runs `/proc/self/exe` with this process's own arguments under
// `mpirun -np cores --oversubscribe --bind-to none`, waits, and returns its exit status.
// Throws Error(kUsage) naming mpirun when it is not on PATH.
int run_sharded(int cores);

}  // namespace canrun
