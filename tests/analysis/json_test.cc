#include "analysis/json.h"

#include <cmath>

#include "gtest/gtest.h"

namespace analysis {
namespace {

TEST(JsonTest, NestedObjectsAndArraysAreIndented) {
  JsonWriter j;
  j.BeginObject().Key("a").Number(1.5).Key("b").BeginArray().String("x").Bool(true).Null().EndArray();
  j.Key("c").BeginObject().EndObject().EndObject();
  EXPECT_EQ(j.str(), "{\n  \"a\": 1.5,\n  \"b\": [\n    \"x\",\n    true,\n    null\n  ],\n  \"c\": {}\n}\n");
}

TEST(JsonTest, CompactFormHasNoSpaces) {
  JsonWriter j(0);
  j.BeginArray().Int(-3).Uint(4).EndArray();
  EXPECT_EQ(j.str(), "[-3,4]\n");
}

TEST(JsonTest, StringsAreEscaped) {
  EXPECT_EQ(JsonWriter::Quote("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
}

TEST(JsonTest, NumbersKeepTenDigitsAndNonFiniteIsNull) {
  EXPECT_EQ(FormatNumber(300828.5512345), "300828.5512");
  EXPECT_EQ(FormatNumber(-0.0), "0");
  EXPECT_EQ(FormatNumber(INFINITY), "null");
  EXPECT_EQ(FormatNumber(NAN), "null");
  EXPECT_EQ(FormatNumber(1e-7), "1e-07");
}

}  // namespace
}  // namespace analysis
