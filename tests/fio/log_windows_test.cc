// fio's log averaging (stat.c add_log_sample, __add_stat_to_log,
// finalize_logs) and histogram entries (add_clat_sample, iolog.c
// flush_hist_samples) on hand-made values.
#include <string>

#include "gtest/gtest.h"
#include "models/fio/logs.h"

namespace fio {
namespace {

std::string Text(const IoLog& log, bool offset = false, bool prio = false) {
  std::string out;
  log.AppendText(offset, prio, &out);
  return out;
}

TEST(IoLogTest, EveryValueWithoutAveraging) {
  IoLog log(0, false, true);
  log.Add(0, 9000, kRead, 4096, 8192, 0);
  log.Add(3, 12000, kWrite, 8192, 0, 0);
  EXPECT_TRUE(log.per_unit());
  EXPECT_EQ(Text(log), "0, 9000, 0, 4096, 0\n3, 12000, 1, 8192, 0\n");
  EXPECT_EQ(Text(log, true), "0, 9000, 0, 4096, 8192, 0\n3, 12000, 1, 8192, 0, 0\n");
  EXPECT_EQ(Text(log, true, true), "0, 9000, 0, 4096, 8192, 0x0000\n3, 12000, 1, 8192, 0, 0x0000\n");
}

TEST(IoLogTest, ALatencyWindowClosesAtTheFirstValuePastItsEnd) {
  IoLog log(100, false, true);
  log.Add(10, 1, kRead, 4096, 0, 0);
  log.Add(99, 2, kRead, 4096, 0, 0);
  EXPECT_TRUE(log.entries().empty());
  log.Add(101, 4, kRead, 4096, 0, 0);  // closes [0, 101): mean 7/3 = 2.33 -> 2
  log.Add(150, 5, kRead, 4096, 0, 0);
  log.Add(199, 6, kRead, 4096, 0, 0);  // 199 - 100 < 100: still open
  log.Finalize(230);                   // the job ends: mean 5.5 -> 6 (half up)
  EXPECT_EQ(Text(log), "101, 2, 0, 0, 0\n230, 6, 0, 0, 0\n");
}

TEST(IoLogTest, TheMaximumWithLogMaxValue) {
  IoLog log(100, true, true);
  for (uint64_t t : {10, 20, 30}) log.Add(t, t * 7, kWrite, 4096, 0, 0);
  log.Add(100, 1, kWrite, 4096, 0, 0);
  EXPECT_EQ(Text(log), "100, 210, 1, 0, 0\n");
}

TEST(IoLogTest, ARateWindowClosesWithinOneMillisecondOfItsEnd) {
  IoLog log(500, false, false);
  log.Add(500, 100, kRead, 4096, 0, 0);  // the window [0, 500) ends; the next starts at 500
  log.Add(998, 200, kRead, 4096, 0, 0);  // 2 ms early: waits
  log.Add(999, 300, kRead, 4096, 0, 0);  // 1 ms early: fio's LOG_MSEC_SLACK closes it
  log.Add(1499, 400, kRead, 4096, 0, 0); // from 500 (999 rounded down), 1 ms early again
  EXPECT_EQ(Text(log), "500, 100, 0, 0, 0\n999, 250, 0, 0, 0\n1499, 400, 0, 0, 0\n");
}

TEST(HistLogTest, EntriesCountTheBucketsSinceTheOneBefore) {
  HistLog log(100, 1);
  LatStat s;
  s.Record(1000);
  log.Add(5, kRead, 4096, s.buckets());  // the window starts at 5 ms
  s.Record(1000);
  s.Record(50000);
  log.Add(105, kRead, 4096, s.buckets());  // 3 since the start
  s.Record(50000);
  log.Add(150, kRead, 4096, s.buckets());
  log.Add(206, kRead, 4096, s.buckets());  // 1 more
  ASSERT_EQ(log.entries(), 2u);
  std::string text;
  log.AppendText(&text);
  const std::string first = text.substr(0, text.find('\n'));
  EXPECT_EQ(first.substr(0, 10), "105, 0, 40");
  int columns = 0;
  uint64_t sum = 0;
  size_t at = 0;
  for (size_t next; (next = first.find(", ", at)) != std::string::npos || at < first.size(); at = next + 2) {
    if (next == std::string::npos) next = first.size();
    if (++columns > 3) sum += std::stoull(first.substr(at, next - at));
    if (next == first.size()) break;
  }
  EXPECT_EQ(columns, 3 + LatStat::kBuckets / 2);
  EXPECT_EQ(sum, 3u);
  EXPECT_EQ(text.substr(text.find('\n') + 1, 5), "206, ");
}

TEST(LogFileNameTest, AsFioNamesThem) {
  EXPECT_EQ(LogFileName("", "job", "clat", 3, true), "job_clat.3.log");
  EXPECT_EQ(LogFileName("out/x", "job", "bw", 1, false), "out/x_bw.log");
  EXPECT_EQ(LogFileName("", "j", "clat_hist", 12, true), "j_clat_hist.12.log");
}

}  // namespace
}  // namespace fio
