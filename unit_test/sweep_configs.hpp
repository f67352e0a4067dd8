// Every schedule x launch combination of the grammar sweep: the tests of kcla::multiply
// run each of them against their reference.
#pragma once

#include <kcla/sweep_cost_model.hpp>

namespace kcla::test {

struct SweepConfig {
  SweepSchedule schedule;
  SweepLaunch launch;
};

inline constexpr SweepConfig kSweepConfigs[] = {
    {SweepSchedule::full_array, SweepLaunch::per_level},
    {SweepSchedule::full_array, SweepLaunch::graph},
    {SweepSchedule::full_array, SweepLaunch::fused},
    {SweepSchedule::layered, SweepLaunch::per_level},
    {SweepSchedule::layered, SweepLaunch::graph},
    {SweepSchedule::layered, SweepLaunch::fused},
};

}  // namespace kcla::test
