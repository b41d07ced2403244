// The one top-k: routing, greedy choice and the recorded top ids all break ties as torch does.
#include <gtest/gtest.h>

#include "kernels/top_k.h"

namespace canrun {
namespace {

TEST(TopK, LargestFirstTiesTowardsTheLowerIndex) {
  const std::vector<float> values = {0.5f, 2.0f, 2.0f, -1.0f, 3.0f, 0.5f};
  EXPECT_EQ(top_k_indices(values, 5), (std::vector<int32_t>{4, 1, 2, 0, 5}));
  EXPECT_EQ(top_k_indices(values, 10).size(), 6u);
  EXPECT_EQ(top_k_indices(values, 0).size(), 0u);
  // One: the first maximum, as torch.argmax.
  EXPECT_EQ(top_k_indices(std::vector<float>{1.0f, 7.0f, 7.0f}, 1), std::vector<int32_t>{1});
  EXPECT_EQ(top_k_indices(values, 1), std::vector<int32_t>{4});
}

}  // namespace
}  // namespace canrun
