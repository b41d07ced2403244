// Built-in device profiles, sizes with units, and user profile files refused field by field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "lab/device_profile.h"
#include "util/error.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

// One file per test: CTest runs tests in parallel processes.
std::string write_profiles(const std::string& text) {
  const fs::path path = fs::temp_directory_path() /
                        ("canrun_lab_profiles_" +
                         std::string(testing::UnitTest::GetInstance()->current_test_info()->name()) + ".json");
  std::ofstream(path) << text;
  return path.string();
}

void expect_error(const std::function<void()>& action, const std::string& fragment) {
  try {
    action();
    FAIL() << "no error; expected one containing: " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(LabDeviceProfile, BuiltIns) {
  const std::vector<DeviceProfile> profiles = builtin_profiles();
  ASSERT_EQ(profiles.size(), 3u);
  const DeviceProfile& trn2 = find_profile(profiles, "trn2");
  EXPECT_EQ(trn2.max_cores, 16);
  EXPECT_EQ(trn2.memory_per_core_bytes, 24LL << 30);
  const DeviceProfile& h200 = find_profile(profiles, "h200");
  EXPECT_EQ(h200.max_cores, 1);
  EXPECT_EQ(h200.memory_per_core_bytes, 141'000'000'000);
  // This machine: one core holding all its memory, which /proc/meminfo reports in KiB.
  const DeviceProfile& local = find_profile(profiles, "local");
  EXPECT_EQ(local.max_cores, 1);
  EXPECT_GT(local.memory_per_core_bytes, 256LL << 20);
  EXPECT_EQ(local.memory_per_core_bytes % 1024, 0);
  EXPECT_NE(local.description.find("CPUs sharing"), std::string::npos);
  expect_error([&] { find_profile(profiles, "tpu"); }, "unknown device profile 'tpu' (known: local, trn2, h200)");
}

TEST(LabDeviceProfile, ByteSizes) {
  EXPECT_EQ(parse_byte_size("24 GiB"), 24LL << 30);
  EXPECT_EQ(parse_byte_size("24GiB"), 24LL << 30);
  EXPECT_EQ(parse_byte_size("141 GB"), 141'000'000'000);
  EXPECT_EQ(parse_byte_size("1.5 TiB"), 3LL << 39);
  EXPECT_EQ(parse_byte_size("512 MiB"), 512LL << 20);
  EXPECT_EQ(parse_byte_size("4096"), 4096);
  expect_error([] { parse_byte_size("lots"); }, "not a positive size");
  expect_error([] { parse_byte_size("-1 GiB"); }, "not a positive size");
  expect_error([] { parse_byte_size("24 gigs"); }, "unknown unit 'gigs'");
  expect_error([] { parse_byte_size("24 GiB each"); }, "unexpected 'each'");
  EXPECT_EQ(format_bytes(24LL << 30), "24.0 GiB");
  EXPECT_EQ(format_bytes(7 << 20), "7.0 MiB");
}

TEST(LabDeviceProfile, UserProfilesFile) {
  const std::string path = write_profiles(R"({"profiles": [
      {"name": "inf2", "cores": 12, "memory_per_core": "16 GiB", "description": "Inferentia2"},
      {"name": "box", "cores": 2, "memory_per_core": 1073741824}]})");
  const std::vector<DeviceProfile> profiles = available_profiles(path);
  ASSERT_EQ(profiles.size(), 5u);
  EXPECT_EQ(find_profile(profiles, "inf2").memory_per_core_bytes, 16LL << 30);
  EXPECT_EQ(find_profile(profiles, "inf2").description, "Inferentia2");
  EXPECT_EQ(find_profile(profiles, "box").max_cores, 2);
  EXPECT_EQ(find_profile(profiles, "box").description, "from " + path);
}

TEST(LabDeviceProfile, BadUserProfilesNameTheField) {
  const auto load = [](const std::string& text) { return [text] { load_profiles(write_profiles(text)); }; };
  expect_error(load(R"({"profile": []})"), "field 'profiles': must be a non-empty list");
  expect_error(load(R"({"profiles": [3]})"), "profiles[0]: must be a JSON object");
  expect_error(load(R"({"profiles": [{"cores": 1, "memory_per_core": 1}]})"), "profiles[0]: field 'name'");
  expect_error(load(R"({"profiles": [{"name": "a", "cores": 0, "memory_per_core": 1}]})"),
               "profiles[0]: field 'cores'");
  expect_error(load(R"({"profiles": [{"name": "a", "cores": 1, "memory_per_core": -5}]})"),
               "profiles[0]: field 'memory_per_core'");
  expect_error(load(R"({"profiles": [{"name": "a", "cores": 1, "memory_per_core": "5 parsecs"}]})"),
               "unknown unit 'parsecs'");
  expect_error(load("{not json"), "invalid JSON");
  expect_error([] { available_profiles(write_profiles(R"({"profiles": [{"name": "h200", "cores": 1,
                                                          "memory_per_core": 1}]})")); },
               "profile 'h200' is defined twice");
}

}  // namespace
}  // namespace canrun
