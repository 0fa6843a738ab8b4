// The methods, one row each: everything a layer needs to know of a method
// besides its protocol, in one place. The scenario reader reads a method's
// options through its row, the runner builds it and asks whether it trains
// alone, the cluster takes its merge rule from the options the row settled,
// and summary.json carries the row's traits so that the plots draw from
// what a result says rather than from method names (ns-3's TypeId and
// SimGrid's register_actor play this part there).
//
// Adding a method is a file in sim/methods/ that defines its protocol and
// its row (a function returning a MethodType), and one line in registry.cc
// that lists it; docs/adding-a-method.md walks through one. A test
// (tests/methods_test.cc) fails if a registered method is missing from the
// invariant suite that every method must pass.
//
// Thread safety: rows are added before any scenario is read (at start-up,
// or by a test) and only read afterwards.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/enum_names.h"
#include "sim/method_options.h"

namespace gossipsim {

class Cluster;
class JsonReader;
class Method;

struct MethodType {
  // How the method's merges are chosen.
  enum class Merge {
    kOption,  // the scenario's "merge" option: average (default) or gosgd
    kFixed,   // always `merge_rule`; the option is refused
    kOwn,     // the protocol weighs its merges itself (merge_held with weights); the option is refused
  };

  std::string name;     // as written in /methods and in results
  std::string summary;  // one line: what it is (docs, --help, errors)
  Merge merge = Merge::kOption;
  MergeRule merge_rule = MergeRule::kAverage;  // kFixed: the rule
  // One model on one node, no network: the centralised reference. The
  // runner trains one node, plays no churn, splits nothing by region.
  bool trains_alone = false;
  // The method the tool exists to study: tables report its speed-up over
  // every other method of a result.
  bool reference = false;
  // It takes "ready" (MethodOptions::ready): when a node may start a send.
  bool send_rule = false;
  // Reads the method's own options from its /methods entry (an object);
  // name, label, local_steps and merge are read before. May be empty.
  std::function<void(const JsonReader&, MethodOptions&)> read_options;
  std::function<std::unique_ptr<Method>(Cluster&)> make;
};

// Every row, in the order they were registered (built-in ones first).
const std::vector<const MethodType*>& method_types();
std::vector<std::string> method_names();
// The row of `name`; nullptr when there is none.
const MethodType* find_method_type(const std::string& name);
// Adds a row; refuses (std::invalid_argument) an empty or taken name or a
// row without `make`.
void register_method(MethodType type);

// The names of MergeRule in JSON ("average", "gosgd") and in summaries.
const EnumNames<MergeRule>& merge_rule_names();
// The names of Ready ("iteration-end", "link-free").
const EnumNames<Ready>& ready_names();

// A method's traits as summary.json writes them ("traits").
struct MethodTraits {
  bool trains_alone = false, reference = false;
  std::string merge;  // "average", "gosgd" or "own"
  std::string ready;  // the send rule of a method that has one ("iteration-end", "link-free"); else empty
};
MethodTraits traits_of(const MethodOptions& m);

}  // namespace gossipsim
