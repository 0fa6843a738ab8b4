#include "sim/methods/registry.h"

#include <deque>
#include <stdexcept>

#include "sim/methods/method.h"

namespace gossipsim {

// The built-in methods, each row defined in its own file, in the order
// results and docs list them. A new method adds its line here.
MethodType gossip_type();
MethodType gossip_overlap_type();
MethodType gossip_scheduled_type();
MethodType gosgd_type();
MethodType dpsgd_type();
MethodType adpsgd_type();
MethodType sgp_type();
MethodType osgp_type();
MethodType allreduce_type();
MethodType single_type();

namespace {

struct Registry {
  std::deque<MethodType> rows;  // stable addresses: options point at their row
  std::vector<const MethodType*> order;

  Registry() {
    for (auto make : {gossip_type, gossip_overlap_type, gossip_scheduled_type, gosgd_type, dpsgd_type, adpsgd_type,
                      sgp_type, osgp_type, allreduce_type, single_type})
      add(make());
  }
  void add(MethodType t) {
    if (t.name.empty() || !t.make) throw std::invalid_argument("a method row needs a name and a factory");
    for (const MethodType* r : order)
      if (r->name == t.name) throw std::invalid_argument("method " + t.name + " is registered already");
    rows.push_back(std::move(t));
    order.push_back(&rows.back());
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

const std::vector<const MethodType*>& method_types() { return registry().order; }

std::vector<std::string> method_names() {
  std::vector<std::string> names;
  for (const MethodType* t : method_types()) names.push_back(t->name);
  return names;
}

const MethodType* find_method_type(const std::string& name) {
  for (const MethodType* t : method_types())
    if (t->name == name) return t;
  return nullptr;
}

void register_method(MethodType type) { registry().add(std::move(type)); }

const EnumNames<MergeRule>& merge_rule_names() {
  static const EnumNames<MergeRule> names = {{"average", MergeRule::kAverage}, {"gosgd", MergeRule::kSumWeights}};
  return names;
}

const EnumNames<Ready>& ready_names() {
  static const EnumNames<Ready> names{{"iteration-end", Ready::kIterationEnd}, {"link-free", Ready::kLinkFree}};
  return names;
}

MethodTraits traits_of(const MethodOptions& m) {
  MethodTraits t;
  t.trains_alone = m.type->trains_alone;
  t.reference = m.type->reference;
  t.merge = m.type->merge == MethodType::Merge::kOwn ? "own" : name_of(m.merge, merge_rule_names());
  if (m.type->send_rule) t.ready = name_of(m.ready, ready_names());
  return t;
}

}  // namespace gossipsim
