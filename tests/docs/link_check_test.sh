#!/usr/bin/env bash
# README.md and docs/*.md: every relative link and anchor resolves inside the
# repository, and nothing names ../shared (a clone has only the repository).
# Then the checker itself must catch the three kinds of broken link in
# tests/docs/testdata/broken.md, and pass its good ones.
set -u
cd "$(dirname "$0")/../.."
fail=0
python3 tests/docs/link_check.py . || fail=1
if grep -rn '\.\./shared' README.md docs/; then
  echo "FAIL: README.md or docs/ names ../shared (outside the repository)"; fail=1
fi
out=$(python3 tests/docs/link_check.py . tests/docs/testdata/broken.md); rc=$?
expected="tests/docs/testdata/broken.md:7: ../../../../shared/ARCHITECTURE.md leaves the repository
tests/docs/testdata/broken.md:8: ../../../docs/nope.md: no such file
tests/docs/testdata/broken.md:9: ../../../docs/operations.md#no-such-heading: no heading #no-such-heading in docs/operations.md
link_check: 1 files, 3 broken link(s)"
if [ "$rc" != 1 ] || [ "$out" != "$expected" ]; then
  echo "FAIL: the checker on tests/docs/testdata/broken.md (exit $rc) said:"; echo "$out"; fail=1
fi
[ $fail = 0 ] && echo "docs links: OK"
exit $fail
