# Writes OUT, a header with the commit a build was made from: run at every
# build (the gossipsim_build_info target), it rewrites the header only when
# what it says changed, so nothing recompiles otherwise. Outside a git
# checkout the commit is "unknown".
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
  set(dirty "false")
else()
  # Changes to tracked files make the build something no commit holds.
  execute_process(COMMAND git -C "${SOURCE_DIR}" diff --quiet HEAD -- RESULT_VARIABLE changed ERROR_QUIET)
  if(changed)
    set(dirty "true")
  else()
    set(dirty "false")
  endif()
endif()
set(text "// Written by cmake/build_info.cmake at every build.\n#pragma once\n#define GOSSIPSIM_COMMIT \"${commit}\"\n#define GOSSIPSIM_COMMIT_DIRTY ${dirty}\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
