#include "sim/event_queue.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/rng.h"

namespace sim {
namespace {

using Key = std::pair<int64_t, uint64_t>;

// Drives the queue as the event loop does -- every new entry at or after the
// time of the last one taken out, with the next sequence number -- and
// checks each entry taken out against an ordered set of the same keys.
// Each phase runs `steps` steps towards its target size.
struct Phase {
  int steps;
  int target_size;
};

void CheckAgainstOrderedSet(uint64_t seed, int64_t spread, const std::vector<Phase>& phases) {
  Rng rng = Rng::ForStream(seed, "event_queue_test");
  EventQueue q;
  std::set<Key> expected;
  int64_t now = 0;
  uint64_t seq = 0;
  auto push = [&](int64_t t) {
    q.Push(EventQueue::Entry{t, seq, reinterpret_cast<void*>(static_cast<uintptr_t>(seq) * 8 + 8)}, now);
    expected.insert({t, seq});
    ++seq;
  };
  bool used_wheel = false, used_heap = false;
  for (const auto [steps, target_size] : phases) {
    for (int step = 0; step < steps; ++step) {
      const uint64_t r = rng.Next();
      (q.wheel() ? used_wheel : used_heap) = true;
      // Grow towards the target size, then hover around it.
      const bool grow = static_cast<int>(expected.size()) < target_size ? (r & 3) != 0 : (r & 3) == 0;
      if (grow || expected.empty()) {
        // Delays of zero (a tie with now), small, and up to `spread`, and now
        // and then one exactly equal to a pending entry's time.
        int64_t t = now;
        switch ((r >> 2) & 3) {
          case 0:
            break;
          case 1:
            t = now + static_cast<int64_t>((r >> 8) % 16);
            break;
          case 2:
            t = now + static_cast<int64_t>((r >> 8) % static_cast<uint64_t>(spread));
            break;
          case 3:
            if (!expected.empty()) t = std::prev(expected.end())->first;
            break;
        }
        push(t);
        continue;
      }
      EventQueue::Entry e{};
      // A limit before the earliest entry takes nothing out.
      const int64_t first = expected.begin()->first;
      if (first > now) {
        ASSERT_FALSE(q.PopDue(first - 1, &e));
      }
      ASSERT_EQ(q.MinTime(), first);
      ASSERT_TRUE(q.PopDue(first, &e));
      ASSERT_EQ(Key(e.t, e.seq), *expected.begin()) << "step " << step;
      ASSERT_EQ(e.h, reinterpret_cast<void*>(static_cast<uintptr_t>(e.seq) * 8 + 8));
      expected.erase(expected.begin());
      now = e.t;
      ASSERT_EQ(q.size(), expected.size());
    }
  }
  // Both layouts served when the phases call for it.
  int most = 0;
  for (const Phase& p : phases) most = std::max(most, p.target_size);
  EXPECT_TRUE(used_heap);
  EXPECT_EQ(used_wheel, static_cast<std::size_t>(most) > EventQueue::kToWheel);
  EventQueue::Entry e{};
  while (q.PopDue(INT64_MAX, &e)) {
    ASSERT_EQ(Key(e.t, e.seq), *expected.begin());
    expected.erase(expected.begin());
  }
  EXPECT_TRUE(expected.empty());
  EXPECT_TRUE(q.empty());
}

TEST(EventQueueTest, HandsOutEntriesInTimeThenSequenceOrder) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    CheckAgainstOrderedSet(seed, 1000000, {{200000, 8}});
    CheckAgainstOrderedSet(seed, 1000000, {{200000, 1000}});
    CheckAgainstOrderedSet(seed, int64_t{1} << 50, {{200000, 300}});
    // Into the wheel and back to the heap, twice.
    CheckAgainstOrderedSet(seed, 1000000, {{50000, 2000}, {50000, 20}, {50000, 700}, {50000, 5}});
  }
}

// Entries at the last representable time (a saturated delay) with the wheel
// on and nothing in its far heap: the removal's compare with the far heap's
// earliest time (INT64_MAX while it is empty) must not read an empty heap.
TEST(EventQueueTest, EntriesAtTheEndOfTimeLeaveInOrderFromTheWheel) {
  EventQueue q;
  std::set<Key> expected;
  const int64_t now = INT64_MAX - 1000;
  uint64_t seq = 0;
  const int n = static_cast<int>(EventQueue::kToWheel) + 100;
  for (int i = 0; i < n; ++i) {
    const int64_t t = i % 3 == 0 ? INT64_MAX : now + (i * 7) % 1000;
    q.Push(EventQueue::Entry{t, seq, reinterpret_cast<void*>(static_cast<uintptr_t>(seq) * 8 + 8)}, now);
    expected.insert({t, seq});
    ++seq;
  }
  ASSERT_TRUE(q.wheel());
  EventQueue::Entry e{};
  while (q.PopDue(INT64_MAX, &e)) {
    ASSERT_FALSE(expected.empty());
    ASSERT_EQ(Key(e.t, e.seq), *expected.begin());
    expected.erase(expected.begin());
  }
  EXPECT_TRUE(expected.empty());
  EXPECT_TRUE(q.empty());
}

// The wheel's buckets are sized from the entries pending when it is set up;
// entries queued later much further out go to the far heap, and the wheel
// is set up again from them once its buckets are empty.
TEST(EventQueueTest, KeepsItsOrderWhenTheSpreadOfTimesGrows) {
  EventQueue q;
  std::set<Key> expected;
  uint64_t seq = 0;
  int64_t now = 0;
  auto push = [&](int64_t t) {
    q.Push(EventQueue::Entry{t, seq, nullptr}, now);
    expected.insert({t, seq++});
  };
  // Many entries at one instant, then a few close by: the narrowest buckets.
  for (int i = 0; i < 600; ++i) push(i % 3);
  ASSERT_TRUE(q.wheel());
  Rng rng = Rng::ForStream(7, "event_queue_test.spread");
  for (int step = 0; step < 100000; ++step) {
    if (expected.size() < 2000 && (rng.Next() & 1) != 0) {
      push(now + static_cast<int64_t>(rng.Next() % (uint64_t{1} << 40)));
      continue;
    }
    EventQueue::Entry e{};
    ASSERT_EQ(q.MinTime(), expected.begin()->first);
    ASSERT_TRUE(q.PopDue(INT64_MAX, &e));
    ASSERT_EQ(Key(e.t, e.seq), *expected.begin()) << "step " << step;
    expected.erase(expected.begin());
    now = e.t;
  }
}

// Once the wheel's buckets are empty and its far heap is large, the wheel
// is set up again from the far entries, its current bucket theirs: a later
// push before that bucket (time has not reached the far entries yet) waits
// in the far heap and still comes out first.
TEST(EventQueueTest, APushBeforeTheCurrentBucketKeepsItsPlace) {
  EventQueue q;
  uint64_t seq = 0;
  for (int i = 0; i < 200; ++i) q.Push(EventQueue::Entry{i, seq++, nullptr}, 0);  // narrow buckets
  for (int i = 0; i < 300; ++i) q.Push(EventQueue::Entry{int64_t{1} << 40 | i, seq++, nullptr}, 0);
  ASSERT_TRUE(q.wheel());
  EventQueue::Entry e{};
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(q.PopDue(INT64_MAX, &e));
    ASSERT_EQ(e.t, i);
  }
  // Nothing due by 500: the wheel is set up again from the far entries.
  EXPECT_FALSE(q.PopDue(500, &e));
  q.Push(EventQueue::Entry{700, seq++, nullptr}, 500);
  q.Push(EventQueue::Entry{600, seq++, nullptr}, 500);
  EXPECT_EQ(q.MinTime(), 600);
  ASSERT_TRUE(q.PopDue(INT64_MAX, &e));
  EXPECT_EQ(e.t, 600);
  ASSERT_TRUE(q.PopDue(INT64_MAX, &e));
  EXPECT_EQ(e.t, 700);
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(q.PopDue(INT64_MAX, &e));
    ASSERT_EQ(e.t, int64_t{1} << 40 | i);
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueueTest, EqualTimesLeaveInInsertionOrder) {
  EventQueue q;
  for (uint64_t s = 0; s < 100; ++s) q.Push(EventQueue::Entry{int64_t{5} - static_cast<int64_t>(s % 2), s, nullptr}, 0);
  EventQueue::Entry e{};
  uint64_t last_odd = 0, last_even = 0;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(q.PopDue(10, &e));
    if (i < 50) {
      EXPECT_EQ(e.t, 4);  // odd sequence numbers, due first
      EXPECT_TRUE(i == 0 || e.seq > last_odd);
      last_odd = e.seq;
    } else {
      EXPECT_EQ(e.t, 5);
      EXPECT_TRUE(i == 50 || e.seq > last_even);
      last_even = e.seq;
    }
  }
  EXPECT_FALSE(q.PopDue(10, &e));
}

TEST(EventQueueTest, RetargetChangesTheHandleInPlace) {
  EventQueue q;
  int a, b, c;
  q.Push(EventQueue::Entry{7, 0, &a}, 0);
  q.Push(EventQueue::Entry{7, 1, &b}, 0);
  q.Push(EventQueue::Entry{9, 2, &a}, 0);
  EXPECT_FALSE(q.Retarget(8, &a, &c));
  EXPECT_TRUE(q.Retarget(9, &a, &c));
  EventQueue::Entry e{};
  ASSERT_TRUE(q.PopDue(100, &e));
  EXPECT_EQ(e.h, &a);
  ASSERT_TRUE(q.PopDue(100, &e));
  EXPECT_EQ(e.h, &b);
  ASSERT_TRUE(q.PopDue(100, &e));
  EXPECT_EQ(e.h, &c);
  EXPECT_EQ(e.seq, 2u);
}

}  // namespace
}  // namespace sim
