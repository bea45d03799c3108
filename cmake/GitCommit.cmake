# Writes OUT: one C++ string literal naming the commit the build is from,
# e.g. "859bee0c1a2b" or "859bee0c1a2b-dirty" (the tree differs from it), or
# "unknown" outside a git checkout (a release tarball of the sources). A
# given -DAPOLLO_GIT_COMMIT wins (a packager who knows better). Run at every
# build (cmake -P), so the commit is never stale; the file is rewritten only
# when it changes, so an unchanged commit rebuilds nothing.
#   cmake -DSRC=<repo> -DOUT=<file> [-DAPOLLO_GIT_COMMIT=<id>] -P GitCommit.cmake
set(commit "unknown")
if(APOLLO_GIT_COMMIT)
  set(commit "${APOLLO_GIT_COMMIT}")
else()
  find_program(GIT git)
  if(GIT)
    execute_process(COMMAND ${GIT} -C "${SRC}" rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE head RESULT_VARIABLE rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND head)
      set(commit "${head}")
      # Tracked files only: build output and scratch files do not count.
      execute_process(COMMAND ${GIT} -C "${SRC}" diff --quiet HEAD --
                      RESULT_VARIABLE dirty ERROR_QUIET)
      if(NOT dirty EQUAL 0)
        set(commit "${commit}-dirty")
      endif()
    endif()
  endif()
endif()
string(REGEX REPLACE "[^A-Za-z0-9._+-]" "" commit "${commit}")
set(text "\"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
