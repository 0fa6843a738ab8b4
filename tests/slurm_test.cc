// Sweeps on Slurm: the job array's script (computed by hand here), the
// options read strictly, and, where Slurm is installed, a real single-node
// cluster started by the test in a folder of its own (munge with its own key
// and socket, slurmctld and slurmd on free ports; /etc is not touched) that
// runs a sweep with --slurm to the bytes of a local run, and a task killed
// mid-run that ends the sweep, which then resumes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "input/sweep.h"
#include "test_util.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;
using test::wait_until;

fs::path temp(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("gossipsim-slurm-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

fs::path write_sweep(int seeds) {
  nlohmann::json values = nlohmann::json::array();
  for (int s = 1; s <= seeds; ++s) values.push_back(s);
  fs::path p = temp("sweep.json");
  std::ofstream(p) << nlohmann::json{{"name", "slurm-t"},
                                     {"base",
                                      std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json"},
                                     {"set", {{"/stop/virtual_s", 3}, {"/methods", {"gossip", "gossip-scheduled"}}}},
                                     {"axes", {{{"path", "/seed"}, {"values", values}}}}}
                          .dump();
  return p;
}

std::string sweep_command(const fs::path& sweep, const fs::path& out) {
  return std::string(GOSSIPSIM_BINARY) + " sweep " + sweep.string() + " --kernels none --out " + out.string();
}

TEST(Slurm, ArrayListsAndTasksAreWhatTheGridLeaves) {
  EXPECT_EQ(slurm_array_spec({0, 1, 2, 3, 5, 7, 8}), "0-3,5,7-8");
  EXPECT_EQ(slurm_array_spec({4}), "4");
  EXPECT_EQ(slurm_array_spec({}), "");
  // Points 1 and 2 of 6 not done: one task per point, only theirs.
  const std::vector<bool> done = {true, false, false, true, true, true};
  EXPECT_EQ(slurm_tasks(6, done), std::make_pair(size_t(6), std::vector<size_t>{1, 2}));
  // Two tasks: shard 0 holds points 0, 2, 4 (2 not done), shard 1 points 1, 3, 5 (1).
  EXPECT_EQ(slurm_tasks(6, done, 2), std::make_pair(size_t(2), std::vector<size_t>{0, 1}));
  EXPECT_EQ(slurm_tasks(6, std::vector<bool>(6, true)).second, std::vector<size_t>{});
  // Beyond Slurm's default MaxArraySize the tasks are shards of several points.
  const auto big = slurm_tasks(2500, std::vector<bool>(2500, false));
  EXPECT_EQ(big.first, kSlurmMaxTasks);
  EXPECT_EQ(big.second.size(), kSlurmMaxTasks);
}

// The script, run by bash as a task would be (its command an echo, so that
// what the task would start is printed): the quoting survives, and the task
// index lands in --shard.
TEST(Slurm, TheBatchScriptRunsTheShardOfItsTask) {
  SlurmArray job;
  job.job_name = "gossipsim-x";
  job.shards = 7;
  job.tasks = {0, 2, 3, 4};
  job.command = {"/bin/echo", "it's a \"sweep\"", "$HOME", "--shard", "{task}/7"};
  job.sbatch_args = {"--time=01:00:00"};
  job.output = "/o/slurm/%A_%a.log";
  job.chdir = "/w";
  job.cpus_per_task = 3;
  const std::string script = slurm_batch_script(job);
  EXPECT_EQ(script.rfind("#!/bin/bash\n#SBATCH --job-name=gossipsim-x\n#SBATCH --array=0,2-4\n"
                         "#SBATCH --cpus-per-task=3\n#SBATCH --output=/o/slurm/%A_%a.log\n#SBATCH --chdir=/w\n"
                         "#SBATCH --time=01:00:00\n",
                         0),
            0u)
      << script;
  const fs::path file = temp("job.sh");
  std::ofstream(file) << script;
  std::string said;
  EXPECT_EQ(test::run_shell("SLURM_ARRAY_TASK_ID=3 bash " + file.string(), &said), 0) << said;
  EXPECT_EQ(said, "it's a \"sweep\" $HOME --shard 3/7\n");
  fs::remove_all(file.parent_path());
}

TEST(Slurm, SbatchOptionsAreReadStrictly) {
  for (const char* fine : {"--time=02:00:00", "-p", "--partition=gpu", "--job-name=mine", "--qos=low", "-c4"})
    EXPECT_NO_THROW(check_sbatch_arg(fine)) << fine;
  for (const char* bad : {"", "-", "time=1", "--array=0-3", "-a0-3", "--output=x", "-ox", "--error=y", "--chdir=/",
                          "--wait", "--parsable", "--time=1\n#SBATCH --array=2"})
    EXPECT_THROW(check_sbatch_arg(bad), InputError) << bad;
}

// What the command refuses before it writes anything, Slurm or not.
TEST(Slurm, TheCommandLineIsReadStrictly) {
  const fs::path sweep = write_sweep(3), out = temp("refused");
  const std::string cmd = sweep_command(sweep, out);
  const fs::path existing = temp("existing.sbatch");
  std::ofstream(existing) << "mine\n";
  struct Case {
    std::string args, says;
  };
  for (const Case& c :
       std::vector<Case>{{"--slurm-arg=--time=1", "--slurm-arg --time=1: expected --slurm or --slurm-script beside it"},
                         {"--slurm-tasks 2", "--slurm-tasks 2: expected --slurm or --slurm-script beside it"},
                         {"--slurm-script " + temp("s.sbatch").string() + " --shard 0/2", "no --shard with --slurm"},
                         {"--slurm-script " + temp("s.sbatch").string() + " --slurm-arg=--array=0-9",
                          "--slurm-arg --array=0-9: expected an option the array does not set itself"},
                         {"--slurm-script " + existing.string(), "a file that does not exist yet"},
                         {"--slurm-script ''", "--slurm-script: expected a file name"},
                         {"--slurm-script /nonexistent-folder/s.sbatch", "a file in an existing folder"},
                         {"--slurm-script " + temp("s.sbatch").string() + " --slurm-tasks 0", "--slurm-tasks"},
                         {"--slurm-script " + temp("s.sbatch").string() + " --slurm-tasks -3", "--slurm-tasks"},
                         {"--slurm-script " + temp("s.sbatch").string() + " --slurm-tasks 1e9", "--slurm-tasks"}}) {
    SCOPED_TRACE(c.args);
    std::string said;
    EXPECT_NE(test::run_shell(cmd + " " + c.args, &said), 0);
    EXPECT_NE(said.find(c.says), std::string::npos) << said;
    EXPECT_EQ(said.find('\n'), said.size() - 1) << "one line: " << said;
    EXPECT_FALSE(fs::exists(temp("s.sbatch")));
  }
  EXPECT_EQ(read(existing), "mine\n");
  // Without sbatch on PATH, --slurm says what is missing.
  std::string said;
  EXPECT_EQ(test::run_shell("PATH=/nonexistent " + cmd + " --slurm", &said), 2);
  EXPECT_NE(said.find("--slurm: expected Slurm's sbatch on PATH"), std::string::npos) << said;
  fs::remove_all(sweep.parent_path());
}

// --slurm-script writes the script and runs nothing; the script lists the
// points not done.
TEST(Slurm, TheScriptIsWrittenForThePointsNotDone) {
  const fs::path sweep = write_sweep(4), out = temp("scripted"), script = temp("sweep.sbatch");
  ASSERT_EQ(test::run_shell(sweep_command(sweep, out) + " --shard 1/4 > /dev/null 2>&1"), 0);
  std::string said;
  ASSERT_EQ(test::run_shell(sweep_command(sweep, out) + " --slurm-script " + script.string() + " 2>&1", &said), 0)
      << said;
  EXPECT_NE(said.find("3 of 4 points to run, as a Slurm job array of 3 task(s)"), std::string::npos) << said;
  const std::string text = read(script);
  EXPECT_NE(text.find("#SBATCH --array=0,2-3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("'--shard' \"${SLURM_ARRAY_TASK_ID}\"'/4'"), std::string::npos) << text;
  EXPECT_NE(text.find("#SBATCH --output=" + fs::absolute(out).string() + "/slurm/%A_%a.log"), std::string::npos);
  EXPECT_TRUE((fs::status(script).permissions() & fs::perms::owner_exec) != fs::perms::none);
  EXPECT_FALSE(fs::exists(out / "points/0"));
  EXPECT_FALSE(fs::exists(out / "sweep.csv"));
  fs::remove_all(sweep.parent_path());
}

// A single-node Slurm cluster of the test's own, or the reason there is none.
class SlurmCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo"})
      if (test::run_shell(std::string("command -v ") + tool + " > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "Slurm is not installed (" << tool
                     << " is missing: munge, slurmctld, slurmd, slurm-client; scripts/setup installs them)";
    if (::geteuid() != 0) GTEST_SKIP() << "the test's Slurm runs as root (SlurmUser=root)";
    dir_ = temp("cluster");
    fs::create_directories(dir_ / "state");
    fs::create_directories(dir_ / "spool");
    {
      std::ofstream key(dir_ / "munge.key");
      for (int i = 0; i < 128; ++i) key << static_cast<char>('a' + (i * 7919 + ::getpid()) % 26);
    }
    fs::permissions(dir_ / "munge.key", fs::perms::owner_read);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string name = host;
    name = name.substr(0, name.find('.'));
    const std::string d = dir_.string();
    const auto [controller_port, node_port] = free_ports();
    std::ofstream(dir_ / "slurm.conf")
        << "ClusterName=gossipsimtest\nSlurmctldHost=" << name << "(127.0.0.1)\n"
        << "SlurmctldPort=" << controller_port << "\nSlurmdPort=" << node_port << "\n"
        << "SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n"
        << "AuthInfo=socket=" << d << "/munge.sock\n"
        << "StateSaveLocation=" << d << "/state\nSlurmdSpoolDir=" << d << "/spool\n"
        << "SlurmctldPidFile=" << d << "/slurmctld.pid\nSlurmdPidFile=" << d << "/slurmd.pid\n"
        << "SlurmctldLogFile=" << d << "/slurmctld.log\nSlurmdLogFile=" << d << "/slurmd.log\n"
        << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nProctrackType=proctrack/linuxproc\n"
        << "TaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n"
        << "AccountingStorageType=accounting_storage/none\nMpiDefault=none\nReturnToService=2\n"
        << "NodeName=" << name << " NodeAddr=127.0.0.1 CPUs=" << std::max(1l, ::sysconf(_SC_NPROCESSORS_ONLN))
        << " State=UNKNOWN\nPartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
    env_ = "SLURM_CONF=" + d + "/slurm.conf ";
    std::string said;
    const int started =
        test::run_shell("munged --force --key-file=" + d + "/munge.key --socket=" + d + "/munge.sock --pid-file=" + d +
                            "/munged.pid --log-file=" + d + "/munged.log --seed-file=" + d + "/munge.seed && " + env_ +
                            "slurmctld -i && " + env_ + "slurmd -N " + name + " 2>&1",
                        &said);
    ASSERT_EQ(started, 0) << said;
    const bool idle = wait_until(
        [&] {
          std::string state;
          test::run_shell(env_ + "sinfo -h -o %T 2>/dev/null", &state);
          return state.rfind("idle", 0) == 0;
        },
        30);
    ASSERT_TRUE(idle) << "the test's Slurm did not come up:\n"
                      << read(dir_ / "slurmctld.log") << read(dir_ / "slurmd.log");
  }

  void TearDown() override {
    if (dir_.empty()) return;
    test::run_shell(env_ + "scancel --user=root > /dev/null 2>&1");
    wait_until([&] { return jobs().empty(); }, 60);
    for (const char* daemon : {"slurmd", "slurmctld", "munged"}) {
      const fs::path pid_file = dir_ / (std::string(daemon) + ".pid");
      int pid = 0;
      std::ifstream(pid_file) >> pid;
      if (pid > 0) {
        ::kill(pid, SIGTERM);
        EXPECT_TRUE(wait_until([&] { return ::kill(pid, 0) != 0; }, 20)) << daemon << " did not stop";
      }
    }
    fs::remove_all(dir_.parent_path());
  }

  // Two ports free now (both held while the second is chosen).
  static std::pair<int, int> free_ports() {
    int ports[2], sockets[2];
    for (int i = 0; i < 2; ++i) {
      sockets[i] = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t n = sizeof a;
      ::bind(sockets[i], reinterpret_cast<sockaddr*>(&a), sizeof a);
      ::getsockname(sockets[i], reinterpret_cast<sockaddr*>(&a), &n);
      ports[i] = ntohs(a.sin_port);
    }
    for (int s : sockets) ::close(s);
    return {ports[0], ports[1]};
  }

  std::string jobs() const {
    std::string said;
    test::run_shell(env_ + "squeue -h -o %i 2>/dev/null", &said);
    return said;
  }

  fs::path dir_;
  std::string env_;
};

// 1 while some `gossipsim run` or `gossipsim sweep` writes below `out`.
bool alive_under(const fs::path& out) {
  return test::run_shell("pgrep -f -- '[-]-out " + out.string() + "' > /dev/null") == 0;
}

TEST_F(SlurmCluster, ASweepRunsAsAJobArrayToTheBytesOfALocalRun) {
  const fs::path sweep = write_sweep(3), local = temp("local"), out = temp("on-slurm");
  ASSERT_EQ(test::run_shell(sweep_command(sweep, local) + " --jobs 2 > /dev/null 2>&1"), 0);
  std::string said;
  ASSERT_EQ(test::run_shell(env_ + sweep_command(sweep, out) + " --slurm 2>&1", &said), 0) << said;
  EXPECT_NE(said.find("3 of 3 points to run, as a Slurm job array of 3 task(s)"), std::string::npos) << said;
  EXPECT_EQ(read(out / "sweep.csv"), read(local / "sweep.csv"));
  // Submitted again, there is nothing to run: no job, the same sweep.csv.
  ASSERT_EQ(test::run_shell(env_ + sweep_command(sweep, out) + " --slurm 2>&1", &said), 0) << said;
  EXPECT_EQ(said.find("submitting"), std::string::npos) << said;
  EXPECT_EQ(read(out / "sweep.csv"), read(local / "sweep.csv"));
}

// A task killed mid-run (scancel of one task; a time limit or a lost node
// acts alike) cancels the whole array: the sweep ends with what is not done,
// nothing keeps running or stays claimed, and submitted again it finishes
// to the bytes of a local run. Each point run holds 60 s at its start
// (GOSSIPSIM_TEST_HOLD) so that the kill finds it running.
TEST_F(SlurmCluster, AKilledTaskEndsTheSweepAndASecondSubmissionFinishesIt) {
  const fs::path sweep = write_sweep(4), local = temp("local"), out = temp("killed");
  ASSERT_EQ(test::run_shell(sweep_command(sweep, local) + " --jobs 2 > /dev/null 2>&1"), 0);
  const fs::path said_file = temp("killed.said"), code_file = temp("killed.code");
  test::run_shell("(GOSSIPSIM_TEST_HOLD=60 " + env_ + sweep_command(sweep, out) + " --slurm --slurm-tasks 2 > " +
                  said_file.string() + " 2>&1; echo $? > " + code_file.string() + ") > /dev/null 2>&1 &");
  const bool started = wait_until(
      [&] { return test::run_shell("pgrep -f -- '[-]-out " + out.string() + "/points/' > /dev/null") == 0; }, 60);
  ASSERT_TRUE(started) << "no point run started: " << read(said_file);
  std::string job = read(out / "slurm/sbatch.log");
  job = job.substr(0, job.find_first_not_of("0123456789"));
  ASSERT_FALSE(job.empty());
  ASSERT_EQ(test::run_shell(env_ + "scancel " + job + "_1"), 0);
  ASSERT_TRUE(wait_until([&] { return fs::exists(code_file) && !read(code_file).empty(); }, 90))
      << "the sweep did not end: " << read(said_file);
  const std::string said = read(said_file);
  EXPECT_EQ(read(code_file), "3\n") << said;
  EXPECT_NE(said.find("Slurm task " + job + "_1 (point(s) 1, 3) ended without them"), std::string::npos) << said;
  EXPECT_NE(said.find("not done by Slurm job " + job), std::string::npos) << said;
  EXPECT_FALSE(fs::exists(out / "sweep.csv"));
  EXPECT_TRUE(wait_until([&] { return !alive_under(out) && jobs().empty(); }, 30)) << "left running";
  for (const auto& e : fs::directory_iterator(out / "points")) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name.find("lock") == std::string::npos && name.find(".tmp-") == std::string::npos)
        << "left behind: " << name;
  }
  std::string again;
  ASSERT_EQ(test::run_shell(env_ + sweep_command(sweep, out) + " --slurm --slurm-tasks 2 2>&1", &again), 0) << again;
  EXPECT_EQ(read(out / "sweep.csv"), read(local / "sweep.csv")) << again;
}

}  // namespace
}  // namespace gossipsim
