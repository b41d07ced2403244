// Collectives between the workers of a sharded run. One process (size 1) makes no MPI call at
// all, so unsharded runs and unit tests never initialise MPI; workers started by mpirun talk
// through Open MPI (shared memory between processes on one host, the network across hosts).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "parallel/shard.h"

namespace canrun {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank ends with the element-wise sum over all ranks.
  virtual void all_reduce_sum(float* values, int64_t count) = 0;
  // Every rank ends with `root`'s values.
  virtual void broadcast(int32_t* values, int64_t count, int root) = 0;
  Shard shard() const { return {rank(), size()}; }
};

// size 1: the collectives are no-ops.
std::shared_ptr<Communicator> single_process_communicator();

// True when this process was started by mpirun as one rank of a job.
bool is_mpi_worker();

// The number of ranks of that job and this process's rank in it, known before MPI_Init (0 when
// this process is not a worker).
int mpi_world_size();
int mpi_world_rank();

// The MPI_COMM_WORLD communicator: MPI_Init on first use, MPI_Finalize when the last holder
// lets go. Throws Error(kUsage) when the world's size differs from `expected_size`.
std::shared_ptr<Communicator> mpi_communicator(int expected_size);

// The MPI library sharded runs use, e.g. "Open MPI v4.1.4" (for the software stack of a report).
std::string mpi_library_version();

// "rank R of N: " in a worker of a sharded run, "" elsewhere: what prefixes a worker's error.
std::string worker_label();

// After a worker of a sharded run failed: ends every rank with `status` (the others may be
// waiting for it in a collective). Returns at once when this process is not such a worker.
void end_all_workers(int status);

}  // namespace canrun
