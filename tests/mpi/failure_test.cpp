// Rank failure, under mpirun with 2 ranks (tests/mpi/failure.sh checks what
// the job printed and how it ended). Modes:
//   kill      rank 1 dies by SIGKILL after the session is up; rank 0 must
//             exit 75 within the deadline, naming rank 1 and when it was
//             last heard
//   stop      rank 1 stops itself (SIGSTOP); the same on rank 0
//   goodbye   rank 1 closes its session and lingers; rank 0 stays up past
//             two deadlines (a closed session is not a silent rank) and a
//             submit_at and an actor ask to rank 1 fail at once with
//             remote_error
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include <strata/mpi.hpp>

namespace {
int twice(int x) { return 2 * x; }
STRATA_MPI_REMOTE(twice);

struct ping {};
struct echo : strata::actor<echo> {
  int receive(strata::actor_context&, const ping&) { return 7; }
};
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "kill" && mode != "stop" && mode != "goodbye") {
    std::fprintf(stderr, "usage: failure_test kill|stop|goodbye\n");
    return 2;
  }
  strata::config rc;
  rc.workers = 1;
  rc.oversubscribe = true;
  rc.bind = strata::bind_policy::none;
  strata::runtime rt{rc};
  strata::mpi::config c = strata::mpi::config::from_env();
  c.heartbeat_ms = 100;
  c.deadline_ms = 2000;
  auto mpi = std::make_unique<strata::mpi::session>(argc, argv, rt, c);
  const int me = mpi->rank();
  mpi->publish(rt.spawn_actor<echo>(), "echo");
  auto peer = mpi->actor_at<echo>(1 - me, "echo");
  auto f = mpi->submit_at(1 - me, twice, 21);
  if (f.get() != 42 || peer.ask(ping{}).get() != 7) return 3;
  mpi->wait_quiescent();
  const auto t0 = std::chrono::steady_clock::now();
  if (me == 1) {
    if (mode == "kill") std::raise(SIGKILL);
    if (mode == "stop") std::raise(SIGSTOP);
    mpi.reset();  // goodbye; MPI_Finalize waits for rank 0
    return 0;
  }
  // Rank 0: wait for the verdict (kill, stop) or outlive it (goodbye).
  std::this_thread::sleep_for(std::chrono::milliseconds(mode == "goodbye" ? 5000 : 15000));
  if (mode != "goodbye") {
    std::fprintf(stderr, "failure_test: rank 0 is still running %.1f s after rank 1 went away\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return 4;
  }
  try {
    (void)mpi->submit_at(1, twice, 1);
    std::fprintf(stderr, "failure_test: submit_at to a closed rank did not fail\n");
    return 5;
  } catch (const strata::mpi::remote_error& e) {
    std::printf("failure_test: goodbye ok: %s\n", e.what());
  }
  try {
    (void)peer.ask(ping{});
    std::fprintf(stderr, "failure_test: an actor ask to a closed rank did not fail\n");
    return 6;
  } catch (const strata::mpi::remote_error& e) {
    std::printf("failure_test: goodbye ok for actors: %s\n", e.what());
  }
  return 0;
}
