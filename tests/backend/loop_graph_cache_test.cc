// The bookkeeping of a stream's kept loop graphs (LoopGraphCache): which
// executable a loop of a given shape gets back, the capacity, and shapes
// whose update CUDA refused. Entries here hold no CUDA objects (null graphs
// are destroyed as nothing), so this runs without a GPU; the handle field
// tells the entries apart.
#include "server/device/cuda/loop_graph.h"

#include <optional>

#include "gtest/gtest.h"

namespace resident::cuda_internal {
namespace {

CachedLoopGraph Entry(uint64_t shape, unsigned long long tag) {
  CachedLoopGraph g;
  g.shape = shape;
  g.handle = tag;
  return g;
}

TEST(LoopGraphCacheTest, TakesTheMostRecentOfAShapeAndTakesItOut) {
  LoopGraphCache cache(0);
  EXPECT_FALSE(cache.Take(7).has_value());
  cache.Put(Entry(7, 1), 4);
  cache.Put(Entry(8, 2), 4);
  cache.Put(Entry(7, 3), 4);
  EXPECT_EQ(cache.size(), 3);
  std::optional<CachedLoopGraph> g = cache.Take(7);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->handle, 3u);
  g = cache.Take(7);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->handle, 1u);
  EXPECT_FALSE(cache.Take(7).has_value());
  EXPECT_EQ(cache.size(), 1);
}

TEST(LoopGraphCacheTest, DropsTheLeastRecentlyKeptBeyondItsCapacity) {
  LoopGraphCache cache(0);
  cache.Put(Entry(1, 1), 2);
  cache.Put(Entry(2, 2), 2);
  cache.Put(Entry(3, 3), 2);
  EXPECT_EQ(cache.size(), 2);
  EXPECT_FALSE(cache.Take(1).has_value());
  EXPECT_TRUE(cache.Take(2).has_value());
  // Taken and put back: the most recent again.
  cache.Put(Entry(2, 2), 2);
  cache.Put(Entry(4, 4), 2);
  EXPECT_FALSE(cache.Take(3).has_value());
  EXPECT_TRUE(cache.Take(2).has_value());
  EXPECT_TRUE(cache.Take(4).has_value());
}

TEST(LoopGraphCacheTest, CapacityZeroKeepsNothing) {
  LoopGraphCache cache(0);
  cache.Put(Entry(1, 1), 0);
  EXPECT_EQ(cache.size(), 0);
  EXPECT_FALSE(cache.Take(1).has_value());
}

TEST(LoopGraphCacheTest, ARefusedShapeIsNeitherKeptNorTakenAgain) {
  LoopGraphCache cache(0);
  cache.Put(Entry(5, 1), 4);
  cache.Put(Entry(6, 2), 4);
  EXPECT_FALSE(cache.Refused(5));
  cache.Refuse(5);
  EXPECT_TRUE(cache.Refused(5));
  EXPECT_FALSE(cache.Refused(6));
  EXPECT_EQ(cache.size(), 1) << "the kept graph of the refused shape stays";
  cache.Put(Entry(5, 3), 4);  // dropped at once
  EXPECT_EQ(cache.size(), 1);
  EXPECT_FALSE(cache.Take(5).has_value());
  EXPECT_TRUE(cache.Take(6).has_value());
}

}  // namespace
}  // namespace resident::cuda_internal
