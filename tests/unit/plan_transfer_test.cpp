// Sharing plans: push to a folder or an HTTP server (cpp-httplib, in-process), pull into an
// empty cache, entries verified; a corrupted remote file fails the pull and installs nothing;
// a missing index or a refused request is an error naming the URL.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "plan/plan_cache.h"
#include "plan/plan_transfer.h"
#include "plan_test_files.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

PlanKey shard_key(int rank) {
  return {"weights", "1.0", "portable", "cpu", "c0ffee", "beef", "", "tp2.rank" + std::to_string(rank)};
}

// Serves <dir> under /plans: GET reads files, PUT writes them (when the Authorization header is
// what `token` says, if set).
class PlanServer {
 public:
  explicit PlanServer(fs::path dir, std::string token = "") : dir_(std::move(dir)), token_(std::move(token)) {
    server_.Get(R"(/plans/(.*))", [this](const httplib::Request& request, httplib::Response& response) {
      const fs::path path = dir_ / request.matches[1].str();
      if (!fs::is_regular_file(path)) {
        response.status = 404;
        return;
      }
      response.set_content(read_file(path), "application/octet-stream");
    });
    server_.Put(R"(/plans/(.*))", [this](const httplib::Request& request, httplib::Response& response) {
      if (!token_.empty() && request.get_header_value("Authorization") != token_) {
        response.status = 401;
        return;
      }
      write_file(dir_ / request.matches[1].str(), request.body);
      response.status = 201;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~PlanServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/plans"; }

 private:
  fs::path dir_;
  std::string token_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

class PlanTransferTest : public testing::Test {
 protected:
  static fs::path test_dir() {
    return fs::temp_directory_path() /
           ("canrun_transfer_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
  }

  void SetUp() override {
    fs::remove_all(base_);
    for (int rank = 0; rank < 2; ++rank)
      source_.get_or_build(shard_key(rank), [rank](const fs::path& dir) {
        write_file(dir / "weights.bin", std::string(10000 + rank, static_cast<char>('a' + rank)));
      }, nullptr, {"tiny-llama"});
  }
  void TearDown() override { fs::remove_all(base_); }

  // Every entry of `cache` verified, and nothing else in its version folder but lock files.
  void expect_pulled(const PlanCache& cache) {
    for (int rank = 0; rank < 2; ++rank) {
      const std::optional<PlanEntry> entry = cache.find(shard_key(rank));
      ASSERT_TRUE(entry.has_value()) << rank;
      EXPECT_EQ(read_file(entry->file("weights.bin")), std::string(10000 + rank, static_cast<char>('a' + rank)));
      EXPECT_EQ(entry->manifest["label"], "tiny-llama");
    }
  }

  void expect_empty(const PlanCache& cache) {
    EXPECT_TRUE(cache.list(true, false).empty());
    std::error_code ignored;
    for (auto it = fs::directory_iterator(cache.root() / "1.0", ignored); it != fs::directory_iterator(); ++it)
      EXPECT_EQ(it->path().extension(), ".lock") << it->path();
  }

  TransferOptions quiet() const { return {{}, false}; }

  fs::path base_ = test_dir();
  PlanCache source_{base_ / "source", "1.0"};
  PlanCache target_{base_ / "target", "1.0"};
};

TEST_F(PlanTransferTest, FolderPushThenPull) {
  const std::string remote = (base_ / "shared").string();
  TransferReport pushed = push_plans(source_, remote, quiet());
  EXPECT_EQ(pushed.copied, 2);
  EXPECT_EQ(pushed.bytes, 20001u);
  const Json index = Json::parse(read_file(base_ / "shared" / "1.0" / "index.json"));
  EXPECT_EQ(index["compiler_version"], "1.0");
  ASSERT_EQ(index["entries"].size(), 2u);
  EXPECT_TRUE(fs::exists(base_ / "shared" / "1.0" / shard_key(0).digest() / "manifest.json"));
  pushed = push_plans(source_, remote, quiet());
  EXPECT_EQ(pushed.copied, 0);
  EXPECT_EQ(pushed.present, 2);

  TransferReport pulled = pull_plans(target_, remote, quiet());
  EXPECT_EQ(pulled.copied, 2);
  EXPECT_EQ(pulled.bytes, 20001u);
  expect_pulled(target_);
  pulled = pull_plans(target_, remote, quiet());
  EXPECT_EQ(pulled.copied, 0);
  EXPECT_EQ(pulled.present, 2);
}

TEST_F(PlanTransferTest, PushesFromTwoCachesShareOneIndex) {
  const std::string remote = (base_ / "shared").string();
  push_plans(source_, remote, quiet());
  PlanKey other = shard_key(0);
  other.isa = "x86_64-avx2-fma";
  target_.get_or_build(other, [](const fs::path& dir) { write_file(dir / "weights.bin", "packed"); });
  EXPECT_EQ(push_plans(target_, remote, quiet()).copied, 1);
  EXPECT_EQ(Json::parse(read_file(base_ / "shared" / "1.0" / "index.json"))["entries"].size(), 3u);
  PlanCache third(base_ / "third", "1.0");
  EXPECT_EQ(pull_plans(third, remote, quiet()).copied, 3);
  EXPECT_TRUE(third.find(other).has_value());
}

TEST_F(PlanTransferTest, HttpPushThenPull) {
  PlanServer server(base_ / "served");
  EXPECT_EQ(push_plans(source_, server.url(), quiet()).copied, 2);
  EXPECT_TRUE(fs::exists(base_ / "served" / "1.0" / "index.json"));
  EXPECT_EQ(pull_plans(target_, server.url() + "/", quiet()).copied, 2);
  expect_pulled(target_);
}

TEST_F(PlanTransferTest, CorruptedRemoteFileFailsAndInstallsNothing) {
  PlanServer server(base_ / "served");
  push_plans(source_, server.url(), quiet());
  const fs::path remote_file = base_ / "served" / "1.0" / shard_key(1).digest() / "weights.bin";
  std::string bytes = read_file(remote_file);
  bytes[5000] ^= 1;
  write_file(remote_file, bytes);
  try {
    pull_plans(target_, server.url(), quiet());
    FAIL() << "pull succeeded";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(server.url() + "/1.0/" + shard_key(1).digest() + "/weights.bin: xxh3 "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("nothing was installed"), std::string::npos) << message;
  }
  expect_empty(target_);
}

TEST_F(PlanTransferTest, MissingIndexIsAnError) {
  PlanServer server(base_ / "served");
  try {
    pull_plans(target_, server.url(), quiet());
    FAIL() << "pull succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find(server.url() + "/1.0/index.json: not found"), std::string::npos) << e.what();
  }
  expect_empty(target_);
}

// A remote index nested 100,000 levels deep crashed the pull; it is an error naming the index.
TEST_F(PlanTransferTest, DeeplyNestedIndexIsAnError) {
  PlanServer server(base_ / "served");
  fs::create_directories(base_ / "served" / "1.0");
  write_file(base_ / "served" / "1.0" / "index.json",
             "{\"entries\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  try {
    pull_plans(target_, server.url(), quiet());
    FAIL() << "pull succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/1.0/index.json: nested deeper than 64 levels"), std::string::npos)
        << e.what();
  }
  expect_empty(target_);
}

TEST_F(PlanTransferTest, HeadersAreSentAndRefusalsNamed) {
  PlanServer server(base_ / "served", "Bearer s3cret");
  try {
    push_plans(source_, server.url(), quiet());
    FAIL() << "push succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(": HTTP 401 on PUT"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(base_ / "served" / "1.0" / "index.json"));
  EXPECT_EQ(push_plans(source_, server.url(), {{"Authorization: Bearer s3cret"}, false}).copied, 2);
}

TEST_F(PlanTransferTest, BadLocationsAreUsageErrors) {
  for (const std::string location : {"", "ftp://host/plans", "http:///plans"}) {
    try {
      pull_plans(target_, location, quiet());
      FAIL() << location;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << location << ": " << e.what();
    }
  }
  try {
    push_plans(source_, (base_ / "shared").string(), {{"Authorization: x"}, false});
    FAIL() << "header accepted for a folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  }
}

TEST_F(PlanTransferTest, UnreachableServerIsNamed) {
  try {
    pull_plans(target_, "http://127.0.0.1:9/plans", quiet());
    FAIL() << "pull succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("http://127.0.0.1:9/plans/1.0/index.json: "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace canrun
