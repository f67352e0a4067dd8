// GPU energy through NVML's cumulative energy counter, loaded at run time (libnvidia-ml
// ships with the driver, not the toolkit, so nothing links against it). On builds or
// machines without it, available() is false and benchmarks print "n/a".
#pragma once

#include <string>

namespace kcla::bench {

class EnergyMeter {
 public:
  EnergyMeter();  // finds the GPU of the current CUDA device; never throws
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  bool available() const { return device_ != nullptr; }
  /// Why the meter is unavailable (empty when available).
  const std::string& reason() const { return reason_; }
  /// Energy used by the GPU since the driver loaded, in joules.
  double joules() const;
  /// Mean power over `seconds` of sleeping, in watts (the idle draw subtracted later).
  double idle_watts(double seconds) const;

 private:
  void* library_ = nullptr;
  void* device_ = nullptr;
  void* get_energy_ = nullptr;
  std::string reason_;
};

}  // namespace kcla::bench
