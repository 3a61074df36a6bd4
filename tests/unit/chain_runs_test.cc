// core/chain_runs.h: which instruction runs fold into loops.
#include "core/chain_runs.h"

#include <vector>

#include "gtest/gtest.h"

namespace resident {
namespace {

// x op c for values: instruction i reads `a`, `b` and defines value i.
ChainStep Step(int64_t op, int64_t a, int64_t b, int64_t out) {
  ChainStep s;
  s.op = op;
  s.operand[0] = a;
  s.operand[1] = b;
  s.output = out;
  return s;
}

struct Case {
  std::vector<ChainStep> steps;
  std::vector<int> uses;
  std::vector<bool> is_output;
};

// Counts reads of each value and marks `outputs`.
Case Make(const std::vector<ChainStep>& steps, const std::vector<int64_t>& outputs) {
  Case c{steps, std::vector<int>(steps.size(), 0), std::vector<bool>(steps.size(), false)};
  for (const ChainStep& s : steps) {
    for (int64_t v : s.operand) {
      if (v >= 0) ++c.uses[v];
    }
  }
  for (int64_t o : outputs) c.is_output[o] = true;
  return c;
}

std::vector<ChainRun> Runs(const Case& c) { return FindChainRuns(c.steps, c.uses, c.is_output); }

TEST(ChainRunsTest, DoublingFromAHandleIsOneRunOnBothSides) {
  std::vector<ChainStep> s = {Step(0, -2, -2, 0)};
  for (int64_t i = 1; i < 10; ++i) s.push_back(Step(0, i - 1, i - 1, i));
  const std::vector<ChainRun> r = Runs(Make(s, {9}));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].begin, 0u);
  EXPECT_EQ(r[0].end, 9u);
  EXPECT_EQ(r[0].side, ChainSide::kBoth);
}

TEST(ChainRunsTest, AFixedOperandOnEitherSide) {
  // x = x + h (h a handle), from x = h + h: the run starts at 1.
  std::vector<ChainStep> s = {Step(0, -2, -2, 0)};
  for (int64_t i = 1; i < 6; ++i) s.push_back(Step(0, i - 1, -2, i));
  std::vector<ChainRun> r = Runs(Make(s, {5}));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].begin, 1u);
  EXPECT_EQ(r[0].end, 5u);
  EXPECT_EQ(r[0].side, ChainSide::kFirst);
  // x = v0 - x with v0 a value, from x = v0 - h: the run starts on the
  // handle.
  s = {Step(-1, -1, -1, 0), Step(1, 0, -3, 1)};
  for (int64_t i = 2; i < 7; ++i) s.push_back(Step(1, 0, i - 1, i));
  r = Runs(Make(s, {6}));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].begin, 1u);
  EXPECT_EQ(r[0].end, 6u);
  EXPECT_EQ(r[0].side, ChainSide::kSecond);
}

TEST(ChainRunsTest, AnOutputOrASecondReaderOrAnotherOpEndsARun) {
  std::vector<ChainStep> s = {Step(0, -2, -2, 0)};
  for (int64_t i = 1; i < 12; ++i) s.push_back(Step(0, i - 1, i - 1, i));
  // Value 5 is an output: runs 0..5 and 6..11.
  std::vector<ChainRun> r = Runs(Make(s, {5, 11}));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].end, 5u);
  EXPECT_EQ(r[1].begin, 6u);
  EXPECT_EQ(r[1].end, 11u);
  // Value 5 read once more (by a last, different instruction).
  s.push_back(Step(7, 5, -2, 12));
  r = Runs(Make(s, {11, 12}));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].end, 5u);
  EXPECT_EQ(r[1].begin, 6u);
  // A different op in the middle: 0..3 and 5..11; 4 stays.
  s.pop_back();
  s[4].op = 3;
  r = Runs(Make(s, {11}));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].end, 3u);
  EXPECT_EQ(r[1].begin, 5u);
}

TEST(ChainRunsTest, ShortRunsAndNonChainingStepsStay) {
  std::vector<ChainStep> s = {Step(0, -2, -2, 0), Step(0, 0, 0, 1), Step(0, 1, 1, 2)};
  EXPECT_TRUE(Runs(Make(s, {2})).empty()) << "3 < kMinChainRun";
  s.push_back(Step(0, 2, 2, 3));
  EXPECT_EQ(Runs(Make(s, {3})).size(), 1u);
  s[2].op = -1;  // e.g. a loop
  EXPECT_TRUE(Runs(Make(s, {3})).empty());
  // The fixed operand must not be the chain itself: x + x then x + h.
  s = {Step(0, -2, -2, 0), Step(0, 0, -2, 1), Step(0, 1, -2, 2), Step(0, 2, -3, 3),
       Step(0, 3, -3, 4)};
  EXPECT_TRUE(Runs(Make(s, {4})).empty()) << "the fixed operand changed at 3";
}

}  // namespace
}  // namespace resident
