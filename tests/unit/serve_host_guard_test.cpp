// The DNS rebinding guard: on a loopback address only loopback names and addresses, and the
// names given with --allow-host, are answered; off on any other address.
#include <gtest/gtest.h>

#include <string>

#include "serve/host_guard.h"

namespace canrun {
namespace {

TEST(ServeHostGuard, LoopbackNamesAndAddressesAreAnswered) {
  const HostGuard guard(true, {});
  for (const char* host : {"localhost", "localhost:8080", "LOCALHOST.", "app.localhost:1", "127.0.0.1",
                           "127.1.2.3:80", "[::1]", "[::1]:8080", "[::ffff:127.0.0.1]:8080"})
    EXPECT_EQ(guard.refusal(host), std::nullopt) << host;
}

TEST(ServeHostGuard, OtherNamesAreRefusedWithTheReason) {
  const HostGuard guard(true, {});
  for (const char* host : {"evil.example", "evil.example:8080", "localhost.evil.example", "128.0.0.1",
                           "[::2]:80", "0.0.0.0", "192.168.1.10:8080"}) {
    const std::optional<HttpError> refusal = guard.refusal(host);
    ASSERT_TRUE(refusal) << host;
    EXPECT_EQ(refusal->status(), 421);
    EXPECT_NE(std::string(refusal->what()).find("not answered"), std::string::npos) << host << ": " << refusal->what();
    EXPECT_NE(std::string(refusal->what()).find("--allow-host"), std::string::npos) << host;
  }
  for (const char* host : {"", "local host", "[::1", "[nonsense]", "::1", "localhost:80:80", "localhost:abc"}) {
    const std::optional<HttpError> refusal = guard.refusal(host);
    ASSERT_TRUE(refusal) << host;
    EXPECT_EQ(refusal->status(), 400);
    EXPECT_NE(std::string(refusal->what()).find("is not a host name"), std::string::npos) << host;
  }
}

TEST(ServeHostGuard, AllowedHostsAreAnsweredOnAnyPort) {
  const HostGuard guard(true, {*allowed_host("Space.Lan"), *allowed_host("fe80::1"), *allowed_host("[fe80::2]")});
  EXPECT_EQ(guard.refusal("space.lan:8080"), std::nullopt);
  EXPECT_EQ(guard.refusal("SPACE.LAN"), std::nullopt);
  EXPECT_EQ(guard.refusal("[fe80::1]:8080"), std::nullopt);
  EXPECT_EQ(guard.refusal("[fe80::2]"), std::nullopt);
  EXPECT_NE(guard.refusal("other.lan"), std::nullopt);
}

TEST(ServeHostGuard, AllowHostValuesHaveNoPort) {
  EXPECT_EQ(allowed_host("space.lan:8080"), std::nullopt);
  EXPECT_EQ(allowed_host("[::1]:80"), std::nullopt);
  EXPECT_EQ(allowed_host(""), std::nullopt);
  EXPECT_EQ(allowed_host("a b"), std::nullopt);
  EXPECT_EQ(allowed_host("192.168.1.10"), "192.168.1.10");
}

TEST(ServeHostGuard, OffWhenNotOnLoopback) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("::"));
  const HostGuard guard(false, {});
  EXPECT_EQ(guard.refusal("evil.example"), std::nullopt);
}

}  // namespace
}  // namespace canrun
