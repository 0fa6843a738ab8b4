// Reading a scenario: JSON (a file, or a document with --set applied) into
// sim/scenario.h's typed options, every option checked where it is read.
// Unknown keys are refused; every error is an InputError that names the
// file, the JSON path and what was expected.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json_reader.h"
#include "sim/scenario.h"

namespace gossipsim {

// Applies "--set /json/pointer=value" overrides: value is parsed as JSON, or
// taken as a string when it is not valid JSON.
void apply_overrides(nlohmann::json& doc, const std::vector<std::string>& sets, const std::string& file);

Scenario parse_scenario(const nlohmann::json& doc, const std::string& file);
// The /network section alone (net replay files share it; they have no
// profiles). Profiles are read against the built topology by parse_scenario.
NetworkOptions parse_network(const JsonReader& r, bool allow_profiles = false);
Scenario load_scenario(const std::string& file, const std::vector<std::string>& sets = {});

// Refuses, at /limits/memory_gb, a scenario whose estimate exceeds it.
void check_memory(const Scenario& sc, int64_t model_bytes = 0, int64_t data_bytes = 0);

}  // namespace gossipsim
