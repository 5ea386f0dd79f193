// A case request crosses the pipe field by field: what the planner made is what the worker runs,
// its launch included, and a request from a parent that knows no launch runs stream launches.
#include "harness/worker/worker_protocol.hpp"

#include <gtest/gtest.h>

namespace kwb {
namespace {

CaseRequest graph_request() {
  CaseRequest r;
  r.index = 3;
  r.op = "rmsnorm_fwd";
  r.variant = "baseline_eager_8_launches";
  r.dtype = DType::bf16;
  r.shape = Shape{{{"rows", 1024}, {"cols", 4096}}};
  r.mode = Mode::cold;
  r.flush = FlushKind::clean;
  r.launch = LaunchKind::graph;
  r.preset = "quick";
  r.seed = 42;
  return r;
}

TEST(WorkerProtocol, CaseRequestRoundTripsItsLaunch) {
  const CaseRequest back = case_request_from_json(nlohmann::ordered_json::parse(to_json(graph_request()).dump()));
  EXPECT_EQ(back.launch, LaunchKind::graph);
  EXPECT_EQ(back.flush, FlushKind::clean);
  EXPECT_EQ(back.variant, "baseline_eager_8_launches");
  EXPECT_EQ(back.shape, graph_request().shape);
  EXPECT_EQ(to_json(graph_request())["launch"], "graph");
}

TEST(WorkerProtocol, RequestWithoutALaunchIsAStreamLaunch) {
  auto j = to_json(graph_request());
  j.erase("launch");
  EXPECT_EQ(case_request_from_json(j).launch, LaunchKind::stream);
}

TEST(WorkerProtocol, UnknownLaunchNameIsAMalformedRequestNamingTheField) {
  auto j = to_json(graph_request());
  j["launch"] = "warp";
  try {
    case_request_from_json(j);
    FAIL() << "expected the request to be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "launch: unknown name 'warp'");
  }
}

}  // namespace
}  // namespace kwb
