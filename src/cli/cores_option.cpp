#include "cli/cores_option.h"

#include "parallel/shard_launcher.h"
#include "parallel/shard_layout.h"
#include "runtime/model_config.h"

namespace canrun {

void add_cores_option(CLI::App& command, int& cores) {
  command
      .add_option("--cores", cores,
                  "Worker processes the model is sharded over (tensor parallel; expert parallel for "
                  "mixture-of-experts), started with mpirun (default 1: no sharding)")
      ->check(CLI::Range(1, kMaxCores));
}

std::shared_ptr<Communicator> communicator_for(int cores, const std::string& model_dir) {
  if (cores == 1) return single_process_communicator();
  if (is_mpi_worker()) return mpi_communicator(cores);
  check_shardable(read_model_spec(model_dir), cores);
  throw WorkersEnded{run_sharded(cores)};
}

}  // namespace canrun
