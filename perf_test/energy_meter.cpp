#include "energy_meter.hpp"

#include <kcla/config.hpp>

#include <chrono>
#include <thread>

#if KCLA_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#endif

namespace kcla::bench {

#if KCLA_HAVE_CUDA
namespace {
// The few NVML entry points used, with their C signatures (nvml.h): return codes are an
// enum whose success value is 0, devices an opaque pointer.
using nvml_init_t = int (*)();
using nvml_shutdown_t = int (*)();
using nvml_by_bus_id_t = int (*)(const char*, void**);
using nvml_energy_t = int (*)(void*, unsigned long long*);
}  // namespace
#endif

EnergyMeter::EnergyMeter() {
#if KCLA_HAVE_CUDA
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    reason_ = "libnvidia-ml.so.1 not found";
    return;
  }
  auto init = reinterpret_cast<nvml_init_t>(dlsym(library_, "nvmlInit_v2"));
  auto by_bus =
      reinterpret_cast<nvml_by_bus_id_t>(dlsym(library_, "nvmlDeviceGetHandleByPciBusId_v2"));
  get_energy_ = dlsym(library_, "nvmlDeviceGetTotalEnergyConsumption");
  if (!init || !by_bus || !get_energy_) {
    reason_ = "NVML lacks the energy entry points";
    return;
  }
  if (init() != 0) {
    reason_ = "nvmlInit failed";
    return;
  }
  int device = 0;
  char bus_id[64] = {};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
    reason_ = "cannot read the CUDA device's PCI bus id";
    return;
  }
  void* handle = nullptr;
  if (by_bus(bus_id, &handle) != 0 || !handle) {
    reason_ = std::string("NVML does not know GPU ") + bus_id;
    return;
  }
  unsigned long long probe = 0;
  if (reinterpret_cast<nvml_energy_t>(get_energy_)(handle, &probe) != 0) {
    reason_ = "the GPU does not report its energy counter";
    return;
  }
  device_ = handle;
#else
  reason_ = "not a CUDA build";
#endif
}

EnergyMeter::~EnergyMeter() {
#if KCLA_HAVE_CUDA
  if (library_) {
    if (device_)
      if (auto shutdown = reinterpret_cast<nvml_shutdown_t>(dlsym(library_, "nvmlShutdown")))
        shutdown();
    dlclose(library_);
  }
#endif
}

double EnergyMeter::joules() const {
#if KCLA_HAVE_CUDA
  if (!device_) return 0;
  unsigned long long millijoules = 0;
  reinterpret_cast<nvml_energy_t>(get_energy_)(device_, &millijoules);
  return static_cast<double>(millijoules) * 1e-3;
#else
  return 0;
#endif
}

double EnergyMeter::idle_watts(double seconds) const {
  if (!available()) return 0;
  const double e0 = joules();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double e1 = joules();
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t > 0 ? (e1 - e0) / t : 0;
}

}  // namespace kcla::bench
