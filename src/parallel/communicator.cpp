#include "parallel/communicator.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <exception>
#include <string>

#include "util/error.h"

namespace canrun {
namespace {

class SingleProcessCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce_sum(float*, int64_t) override {}
  void broadcast(int32_t*, int64_t, int) override {}
};

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) fail(ErrorKind::kRuntime, std::string(call) + " failed with MPI error " +
                                                           std::to_string(status));
}

int mpi_count(int64_t count) {
  if (count > INT_MAX) fail(ErrorKind::kRuntime, "a collective of " + std::to_string(count) + " elements is too large");
  return static_cast<int>(count);
}

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator() {
    // Serialized: bench runs its requests on a thread of its own, one at a time when sharded.
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      fail(ErrorKind::kRuntime, "this Open MPI cannot call MPI from more than one thread (MPI_THREAD_SERIALIZED)");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCommunicator() override {
    // Failing, this rank leaves MPI to end_all_workers: finalising would wait for ranks that
    // may be waiting for it in a collective.
    if (std::uncaught_exceptions() == 0) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_reduce_sum(float* values, int64_t count) override {
    check(MPI_Allreduce(MPI_IN_PLACE, values, mpi_count(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
  }
  void broadcast(int32_t* values, int64_t count, int root) override {
    check(MPI_Bcast(values, mpi_count(count), MPI_INT32_T, root, MPI_COMM_WORLD), "MPI_Bcast");
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::shared_ptr<Communicator> single_process_communicator() {
  return std::make_shared<SingleProcessCommunicator>();
}

bool is_mpi_worker() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

int mpi_world_size() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size ? std::atoi(size) : 0;
}

int mpi_world_rank() {
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  return rank ? std::atoi(rank) : 0;
}

std::shared_ptr<Communicator> mpi_communicator(int expected_size) {
  static std::weak_ptr<Communicator> current;
  std::shared_ptr<Communicator> comm = current.lock();
  if (!comm) {
    comm = std::make_shared<MpiCommunicator>();
    current = comm;
  }
  if (comm->size() != expected_size)
    fail(ErrorKind::kUsage, "--cores " + std::to_string(expected_size) + " does not match the " +
                                std::to_string(comm->size()) + " processes mpirun started");
  return comm;
}

std::string mpi_library_version() {
  // Callable before MPI_Init; the first part names the library and its version.
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  const std::string full(version, static_cast<size_t>(length));
  return full.substr(0, full.find(','));
}

std::string worker_label() {
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (rank == nullptr || size == nullptr) return "";
  return "rank " + std::string(rank) + " of " + size + ": ";
}

void end_all_workers(int status) {
  int initialized = 0, finalized = 0;
  if (!is_mpi_worker()) return;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, status);
}

}  // namespace canrun
