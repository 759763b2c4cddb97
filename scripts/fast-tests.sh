#!/usr/bin/env bash
# The fast lane for the inner loop: builds, then runs every test except those tagged
# .endToEnd (the built executables, a real server across commands), .soak or .browser
# (Tests/TestSupport/Tags.swift). CI (.ci/run) runs every test.
#
# Usage: scripts/fast-tests.sh [swift test arguments, e.g. --filter SyncTests]
#
# The tests left out are read from the tags in Tests/: swift test on Swift 6.3 cannot select
# by tag (`--skip tag:…` arrives with a later Swift Testing), so their ids are skipped by name.
# Environment: DATABASE_URL, when set, runs the storage tests on PostgreSQL too (slower);
#   FAST_TESTS_LIST=1 prints the skip expression and exits.
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_DIR"
command -v python3 >/dev/null 2>&1 || { echo "fast-tests: python3 is required" >&2; exit 1; }

# One alternative per tagged suite (^Module\.Suite/) or test (^Module\.Suite/test\().
SKIP="$(python3 - <<'PY'
import pathlib, re
lane = re.compile(r"\.tags\([^)]*\.(endToEnd|soak|browser)\b")
declaration = re.compile(r"^(?:@\w+\s+)*(?:public\s+|final\s+)*(?:struct|class|enum|actor|extension)\s+(\w+)")
function = re.compile(r"\bfunc\s+(\w+)\s*\(")
patterns = []
for path in sorted(pathlib.Path("Tests").rglob("*.swift")):
    module = path.relative_to("Tests").parts[0]
    pending = None  # "suite" or "test", from a tagged attribute not yet attached
    current = None  # the innermost top-level type seen so far
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("@Suite") and lane.search(stripped):
            pending = "suite"
        elif stripped.startswith("@Test") and lane.search(stripped):
            pending = "test"
        top = declaration.match(line)
        if top:
            current = top.group(1)
            if pending == "suite":
                patterns.append(rf"^{module}\.{current}/")
                pending = None
        found = function.search(stripped)
        if found and pending == "test" and current:
            patterns.append(rf"^{module}\.{current}/{found.group(1)}\(")
            pending = None
print("|".join(patterns))
PY
)"
[[ -n "$SKIP" ]] || { echo "fast-tests: no tagged tests found under Tests/" >&2; exit 1; }
if [[ "${FAST_TESTS_LIST:-0}" == 1 ]]; then
    echo "$SKIP" | tr '|' '\n'
    exit 0
fi

swift build --build-tests
exec swift test --skip-build --skip "$SKIP" "$@"
