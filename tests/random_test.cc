#include "base/random.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/distribution.h"

namespace gossipsim {
namespace {

Distribution parse(const std::string& text, Distribution::Domain d = Distribution::Domain::kPositive) {
  static nlohmann::json keep;
  keep = nlohmann::json::parse(text);
  return Distribution::parse(JsonReader(keep, "d.json", "/x"), d);
}

std::string error_of(const std::string& text, Distribution::Domain d = Distribution::Domain::kPositive) {
  try {
    parse(text, d);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Streams, AreStableAndIndependentOfEachOther) {
  Streams s(7);
  Rng a = s.stream("access-up", 3), b = s.stream("access-up", 3), c = s.stream("access-up", 4),
      d = s.stream("latency", 3);
  uint64_t x = a();
  EXPECT_EQ(x, b());
  EXPECT_NE(x, c());
  EXPECT_NE(x, d());
  EXPECT_NE(Streams(8).stream("access-up", 3)(), x);
}

TEST(Streams, UniformIndexCoversItsRange) {
  Rng r(1);
  std::vector<int> count(5, 0);
  for (int k = 0; k < 5000; ++k) ++count[uniform_index(r, 5)];
  for (int c : count) EXPECT_NEAR(c, 1000, 150);
}

TEST(Distributions, SampleMeansMatchTheirLaws) {
  Rng r(2);
  auto mean_of = [&](const Distribution& d) {
    double s = 0;
    for (int k = 0; k < 20000; ++k) s += d.sample(r);
    return s / 20000;
  };
  EXPECT_EQ(mean_of(parse("5")), 5);
  EXPECT_NEAR(mean_of(parse(R"({"dist":"uniform","min":2,"max":4})")), 3, 0.05);
  EXPECT_NEAR(mean_of(parse(R"({"dist":"normal","mean":10,"std":1})")), 10, 0.05);
  EXPECT_NEAR(mean_of(parse(R"({"dist":"exponential","mean":3})")), 3, 0.1);
  EXPECT_NEAR(mean_of(parse(R"({"dist":"lognormal","median":100,"sigma":0.5})")), 100 * std::exp(0.125), 2);
  EXPECT_NEAR(mean_of(parse(R"({"dist":"pareto","scale":1,"shape":3})")), 1.5, 0.05);
  EXPECT_NEAR(mean_of(parse(R"({"dist":"empirical","values":[1,10],"weights":[3,1]})")), 3.25, 0.1);
}

// E[min(X, T)], against closed forms computed here.
TEST(Distributions, ExpectedMinimumFollowsTheClosedForms) {
  auto read = [](const char* json) {
    nlohmann::json j = nlohmann::json::parse(json);
    return Distribution::parse(JsonReader(j, "t"), Distribution::Domain::kPositive, {1e-9, 1e9});
  };
  EXPECT_NEAR(read(R"({"dist":"exponential","mean":2})").expected_min(3), 2 * (1 - std::exp(-1.5)), 1e-6);
  EXPECT_NEAR(read(R"({"dist":"uniform","min":1,"max":3})").expected_min(2), 1.75, 1e-6);
  EXPECT_DOUBLE_EQ(read("0.5").expected_min(2), 0.5);
  EXPECT_DOUBLE_EQ(read("5").expected_min(2), 2);
  // Infinite mean: xm + xm^a (T^(1-a) - xm^(1-a)) / (1 - a).
  const double a = 0.99, T = 1e6;
  EXPECT_TRUE(std::isinf(read(R"({"dist":"pareto","scale":1,"shape":0.99})").mean()));
  EXPECT_NEAR(read(R"({"dist":"pareto","scale":1,"shape":0.99})").expected_min(T),
              1 + (std::pow(T, 1 - a) - 1) / (1 - a), 1e-3);
  // A rare huge value: the mean is about 1 s, the typical gap 1 us.
  const Distribution rare = read(R"({"dist":"empirical","values":[1e-6,1e9],"weights":[1e9,1]})");
  EXPECT_NEAR(rare.mean(), 1.0, 1e-3);
  EXPECT_NEAR(rare.expected_min(60), (1e-6 * 1e9 + 60) / (1e9 + 1), 1e-12);
  // Lognormal, mu = ln m: e^(mu + s^2/2) Phi((ln T - mu - s^2)/s) + T (1 - Phi((ln T - mu)/s)).
  auto phi = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  const double mu = std::log(1.5), s = 0.8, t = 2;
  EXPECT_NEAR(read(R"({"dist":"lognormal","median":1.5,"sigma":0.8})").expected_min(t),
              std::exp(mu + s * s / 2) * phi((std::log(t) - mu - s * s) / s) + t * (1 - phi((std::log(t) - mu) / s)),
              1e-5);
}

TEST(Distributions, TruncatedNormalNeverGoesNegative) {
  Rng r(3);
  Distribution d = parse(R"({"dist":"normal","mean":1,"std":2})", Distribution::Domain::kNonNegative);
  for (int k = 0; k < 10000; ++k) EXPECT_GE(d.sample(r), 0);
}

TEST(Distributions, InvalidParametersNameTheirPath) {
  EXPECT_NE(error_of(R"({"dist":"uniform","min":5,"max":1})").find("d.json: /x/max: expected a number >= min"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"dist":"lognormal","median":-1,"sigma":1})").find("/x/median"), std::string::npos);
  EXPECT_NE(error_of(R"({"dist":"normal","mean":1,"std":-1})").find("/x/std"), std::string::npos);
  EXPECT_NE(error_of(R"({"dist":"empirical","values":[]})").find("/x/values"), std::string::npos);
  EXPECT_NE(error_of(R"({"dist":"empirical","values":[1,2],"weights":[1]})").find("/x/weights"), std::string::npos);
  EXPECT_NE(error_of(R"({"dist":"pareto","scale":1,"shape":0})").find("/x/shape"), std::string::npos);
  EXPECT_NE(error_of(R"({"dist":"zipf"})").find("/x/dist: expected one of constant"), std::string::npos);
  EXPECT_NE(error_of(R"({"dist":"uniform","min":1,"max":2,"mode":3})")
                .find("/x/mode: unknown key; expected one of: dist, max, min"),
            std::string::npos);
  EXPECT_NE(error_of("-3").find("/x: expected a number > 0"), std::string::npos);
  EXPECT_NE(error_of(R"("fast")").find("/x"), std::string::npos);
}

}  // namespace
}  // namespace gossipsim
