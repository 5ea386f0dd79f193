// The device state a case must leave as it found it, so that one variant cannot change the numbers
// of the cases after it in the same worker.
//
// What is read (each value names the API that sets it):
//  - the device limits: stack size, printf FIFO, malloc heap, device-runtime sync depth and
//    pending launches, L2 fetch granularity, and the persisting L2 limit (the set-aside that a
//    stream's access policy window fills: while it stands, every other kernel has that much less
//    L2; an RMSNorm read 47.5 us after such a variant against 24.9 us in a fresh process);
//  - the device's cache configuration, its flags, the current device, its current memory pool
//    and that pool's release threshold;
//  - the attributes of the case's stream: access policy window, priority, synchronization policy,
//    memory sync domain.
// What a variant may change: anything of its own: per-function attributes (dynamic shared memory,
// cache preference, cluster shape), its library handles and plans, streams it creates. The
// per-thread stack size also grows by itself when a kernel's frame needs more (the driver raises
// the limit at launch and keeps it): an increase of it is not the variant's doing, so it is put
// back between cases without failing anyone. Persisting L2 lines cannot be read at all: they are
// returned to normal before every case (cudaCtxResetPersistingL2Cache) whatever happened.
// Shared memory bank configuration is not read: it is fixed on every GPU since Volta and its
// getter is deprecated.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kwb {

// One value of the device state, as read.
struct StateValue {
  std::string name;                    // what it is and the API that sets it
  std::optional<std::uint64_t> value;  // nullopt: this device or driver does not report it
  std::string shown;                   // the value in words, for messages ("0 B", "prefer shared")
  // The driver raises it by itself when a kernel needs more (the stack size): an increase is no
  // change for describe_changes(), though restore() puts it back.
  bool grows_on_demand = false;
};

// Every value the guard reads, in a fixed order.
struct DeviceState {
  std::vector<StateValue> values;
};

// "what: from -> to" for each value that differs between two readings (of the same probes, in the
// same order), joined by "; "; empty when none does. An increase of a grows_on_demand value does
// not count. A value one reading has and the other lacks counts as a change ("unreadable").
std::string describe_changes(const DeviceState& before, const DeviceState& after);

// A byte count for messages: "0 B", "1024 B", "48 MiB (50331648 B)".
std::string show_bytes(std::uint64_t bytes);

// Reads the state every case must start from (what the worker found when it started), reads it
// again around each case, and puts it back.
class DeviceStateGuard {
 public:
  // `fresh_stream`: a stream made the way each case's stream is made; its attributes are the
  // baseline's. Throws CudaError when the current device cannot be read.
  explicit DeviceStateGuard(cudaStream_t fresh_stream);

  // The device-wide values and those of `stream`, in the baseline's order.
  DeviceState capture(cudaStream_t stream) const;

  // Sets back every device-wide value that differs from the baseline (the stream's are not: each
  // case gets a fresh stream) and returns persisting L2 lines to normal. Throws CudaError naming
  // the value when the driver refuses to set it back (the printf FIFO and malloc heap cannot change
  // once a kernel used them): the context then keeps the change and the worker must be replaced.
  void restore() const;

  const DeviceState& baseline() const { return baseline_; }

 private:
  int device_ = 0;
  bool has_persisting_l2_ = false;  // cudaDevAttrMaxPersistingL2CacheSize > 0
  DeviceState baseline_;
};

}  // namespace kwb
