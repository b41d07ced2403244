// A row's reproduce script never runs what a value in it says: model ids, revisions, results
// and version pairs with newlines, quotes, $(...), backticks, semicolons and NUL stay data, in
// comments and in commands. Checked by running the quoting and the script itself in bash.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lab/reproduce.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kHostile = {
    "org/model",
    "my models/model v2",
    "evil\ntouch pwned_newline #",
    "carriage\rtouch pwned_cr",
    "quote'; touch pwned_quote; echo '",
    "double\"; touch pwned_double; echo \"",
    "$(touch pwned_dollar)",
    "`touch pwned_backtick`",
    "semi; touch pwned_semi",
    "back\\slash\n\\'mixed'\t$HOME",
    std::string("nul\0; touch pwned_nul", 21),
};

// What bash can hold of `text`: an argument ends at a NUL, so the quoted NUL and what follows it
// are dropped (never run).
std::string as_bash_argument(const std::string& text) { return text.substr(0, text.find('\0')); }

// What bash makes of `words`: each argument on a line of its own, via printf.
std::string bash_arguments(const TemporaryDirectory& dir, const std::string& words) {
  const fs::path script = dir.path() / "print.sh";
  std::ofstream(script) << "printf '%s\\0' " << words << "\n";
  const std::string command = "cd '" + dir.path().string() + "' && env -i PATH=/usr/bin:/bin bash print.sh";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  pclose(pipe);
  return out;
}

void expect_nothing_ran(const TemporaryDirectory& dir) {
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().rfind("pwned", 0), std::string::npos) << entry.path();
}

TEST(ReproduceScript, ShellQuoteGivesBashTheTextBack) {
  TemporaryDirectory dir("canrun-quote-");
  for (const std::string& text : kHostile) {
    const std::string quoted = shell_quote(text);
    EXPECT_EQ(quoted.find('\n'), std::string::npos) << quoted;
    EXPECT_EQ(bash_arguments(dir, quoted), as_bash_argument(text) + std::string(1, '\0')) << quoted;
  }
  EXPECT_EQ(shell_quote("org/model-1.5B"), "org/model-1.5B");  // plain text stays as it is
  expect_nothing_ran(dir);
}

TEST(ReproduceScript, HostileValuesStayData) {
  for (const std::string& value : kHostile) {
    TemporaryDirectory dir("canrun-repro-");
    ReproduceInputs inputs;
    inputs.model_id = value;
    inputs.check_arguments = shell_quote(value) + " --profile local";
    inputs.weights = "real";
    inputs.revision = value;
    inputs.expected_result = value;
    inputs.version_pair = value + " / " + value;
    const std::string script = reproduce_script(inputs);
    std::ofstream(dir.path() / "repro.sh") << script;

    // It parses, and run without CANRUN_REPO it stops at the clone, before anything else.
    const std::string in_dir = "cd '" + dir.path().string() + "' && env -i PATH=/usr/bin:/bin ";
    EXPECT_EQ(std::system((in_dir + "bash -n repro.sh").c_str()), 0) << script;
    EXPECT_NE(std::system((in_dir + "bash repro.sh > /dev/null 2>&1").c_str()), 0) << script;
    expect_nothing_ran(dir);

    // The check line hands canrun the model id as one argument, exactly.
    std::istringstream lines(script);
    std::string line;
    int check_lines = 0;
    while (std::getline(lines, line)) {
      const std::string prefix = "build/canrun check ";
      if (line.rfind(prefix, 0) != 0) continue;
      ++check_lines;
      const std::string arguments = line.substr(prefix.size(), line.find(" --json") - prefix.size());
      EXPECT_EQ(bash_arguments(dir, arguments), as_bash_argument(value) + std::string(1, '\0') + "--profile" + std::string(1, '\0') +
                                                    "local" + std::string(1, '\0'));
    }
    EXPECT_EQ(check_lines, 1) << script;
    expect_nothing_ran(dir);
  }
}

// A local folder's script says how to get the folder: the committed script that made it when
// its .canrun-source names one (and nothing else is ever run from that file), else where it was.
TEST(ReproduceScript, ALocalFolderSaysHowToGetIt) {
  TemporaryDirectory dir("canrun-repro-");
  const fs::path folder = dir.path() / "model";
  fs::create_directories(folder);
  EXPECT_EQ(folder_source_command(folder.string()), "");
  std::ofstream(folder / ".canrun-source") << "bash tools/fetch_smollm2.sh\n";
  EXPECT_EQ(folder_source_command(folder.string()), "bash tools/fetch_smollm2.sh");
  for (const char* hostile : {"bash tools/x.sh; touch pwned", "rm -rf /", "bash tools/../../x.sh", "bash tools/$(x).sh"}) {
    std::ofstream(folder / ".canrun-source", std::ios::trunc) << hostile << "\n";
    EXPECT_EQ(folder_source_command(folder.string()), "") << hostile;
  }

  ReproduceInputs inputs;
  inputs.model_id = "org/model";
  inputs.weights = "real";
  inputs.origin = WeightsOrigin::kLocalFolder;
  inputs.folder = "models/org model";
  inputs.host = "lab-7";
  inputs.check_arguments = shell_quote(inputs.folder);
  std::string script = reproduce_script(inputs);
  EXPECT_NE(script.find("# models/org model is a local folder of lab-7: copy it here first.\n"), std::string::npos);
  EXPECT_NE(script.find("#   build/canrun pull org/model\n"), std::string::npos) << script;
  EXPECT_NE(script.find("test -d 'models/org model' || { echo"), std::string::npos) << script;
  inputs.folder_source = "bash tools/fetch_smollm2.sh";
  script = reproduce_script(inputs);
  EXPECT_NE(script.find("test -d 'models/org model' || bash tools/fetch_smollm2.sh\n"), std::string::npos) << script;

  inputs.origin = WeightsOrigin::kHub;
  inputs.revision = "0123abcd";
  script = reproduce_script(inputs);
  EXPECT_NE(script.find("build/canrun pull org/model@0123abcd\n"), std::string::npos) << script;
  EXPECT_NE(script.find("hf download org/model --revision 0123abcd"), std::string::npos) << script;
}

}  // namespace
}  // namespace canrun
