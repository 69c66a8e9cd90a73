# Writes the commit the build is made from (with "-dirty" when tracked files differ from it)
# into OUTPUT as a C++ string literal. Runs at every build, not only at configure time, so
# result files and fingerprints name the code that was really built; OUTPUT is only touched
# when the commit changes, so an unchanged tree recompiles nothing.
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -P git_commit.cmake
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT commit)
  set(commit "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no
                  WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE changes ERROR_QUIET)
  if(changes)
    string(APPEND commit "-dirty")
  endif()
endif()
file(WRITE "${OUTPUT}.tmp" "\"${commit}\"\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
