// A worker's record completed by the parent (see record_completion.hpp).
#include "harness/session/record_completion.hpp"

#include "harness/catalogue/math_label.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/derive/derive.hpp"
#include "harness/plan/planner.hpp"
#include "harness/record/shell_words.hpp"

namespace kwb {

void complete_record(CaseRecord& rec, const CaseRequest& request, const Ceilings& ceilings, std::int64_t l2_bytes) {
  rec.repro = repro_command(request);
  const Registry& registry = Registry::instance();
  // Which plugin the measured code came from, and the repro line that loads it (the op's plugin
  // too when another one registered the op: its oracle and work model judged the case).
  const PluginSource* variant_source = registry.source_of_variant(request.op, request.variant);
  const PluginSource* op_source = registry.source_of_op(request.op);
  if (variant_source) rec.plugin = *variant_source;
  else if (op_source) rec.plugin = *op_source;
  if (op_source && !(variant_source && *variant_source == *op_source))
    rec.repro += " --plugin " + shell_quote(op_source->path);
  if (variant_source) rec.repro += " --plugin " + shell_quote(variant_source->path);
  if (const Variant* v = registry.find_variant(request.op, request.variant)) {
    rec.role = v->role;
    rec.workspace_bytes =
        v->workspace_bytes ? static_cast<std::int64_t>(v->workspace_bytes(request.shape, request.dtype)) : 0;
    rec.uses = v->uses;
    // A skipped case ran nothing: no math to claim (a tf32-only variant refusing bf16, say).
    if (const Op* op = registry.find_op(request.op); op && rec.disposition != Disposition::skipped)
      rec.math = math_label(*op, *v, request.dtype);
  }
  // Derived with the run's ceilings, then the roof rule: a passed case above its roof by more
  // than the margin is failed here, with its timing and figures kept in the record.
  derive_metrics(rec, registry, ceilings, l2_bytes);
  judge_roofs(rec, l2_bytes);
}

}  // namespace kwb
