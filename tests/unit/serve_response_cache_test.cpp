// The Space's kept API answers: found again on the same snapshot, dropped when a newer one
// arrives, bounded by bytes with the least recently used going first.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "serve/response_cache.h"

namespace canrun {
namespace {

std::shared_ptr<const std::string> body_of(size_t bytes, char fill = 'x') {
  return std::make_shared<const std::string>(bytes, fill);
}

TEST(ServeResponseCache, FindsWhatWasKeptForTheSameSnapshot) {
  ResponseCache cache(1 << 20);
  EXPECT_EQ(cache.find(1, "/api/rows?a"), nullptr);
  cache.insert(1, "/api/rows?a", body_of(10, 'a'));
  const auto found = cache.find(1, "/api/rows?a");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(*found, std::string(10, 'a'));
  EXPECT_EQ(cache.find(1, "/api/rows?b"), nullptr);
}

TEST(ServeResponseCache, ANewerSnapshotDropsEverythingAndAnOlderOneIsNotKept) {
  ResponseCache cache(1 << 20);
  cache.insert(1, "k", body_of(10));
  EXPECT_EQ(cache.find(2, "k"), nullptr);
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  cache.insert(1, "k", body_of(10));  // a request that started on the old snapshot ends late
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.find(1, "k"), nullptr);
  cache.insert(2, "k", body_of(10));
  EXPECT_NE(cache.find(2, "k"), nullptr);
}

TEST(ServeResponseCache, EvictsTheLeastRecentlyUsedToStayWithinTheBound) {
  ResponseCache cache(100);  // key + body bytes
  cache.insert(1, "a", body_of(39));
  cache.insert(1, "b", body_of(39));
  EXPECT_EQ(cache.bytes(), 80u);
  ASSERT_NE(cache.find(1, "a"), nullptr);  // "a" is now the most recently used
  cache.insert(1, "c", body_of(39));
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_LE(cache.bytes(), 100u);
  EXPECT_NE(cache.find(1, "a"), nullptr);
  EXPECT_EQ(cache.find(1, "b"), nullptr);
  EXPECT_NE(cache.find(1, "c"), nullptr);
}

TEST(ServeResponseCache, KeepsNothingLargerThanTheBoundAndNothingAtZero) {
  ResponseCache small(100);
  small.insert(1, "big", body_of(200));
  EXPECT_EQ(small.entries(), 0u);
  ResponseCache off(0);
  off.insert(1, "k", body_of(1));
  EXPECT_EQ(off.find(1, "k"), nullptr);
}

TEST(ServeResponseCache, AHandedOutBodyOutlivesItsEviction) {
  ResponseCache cache(50);
  cache.insert(1, "a", body_of(40, 'a'));
  const auto held = cache.find(1, "a");
  cache.insert(1, "b", body_of(40, 'b'));
  EXPECT_EQ(cache.find(1, "a"), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(*held, std::string(40, 'a'));
}

}  // namespace
}  // namespace canrun
