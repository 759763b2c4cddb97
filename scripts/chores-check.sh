#!/usr/bin/env bash
# Builds Examples/Chores as the package of its own it is (on this repository by path), and runs
# its tests against the eventual-server built from this repository unchanged, with Chores'
# declaration deployed to it (the tests deploy it, as an operator would: apps deploy).
#
# NB: Chores builds into this repository's build folder (CHORES_SCRATCH, by default .build), so
# that the dependencies both packages share (swift-nio, GRDB, Hummingbird, ...) are built once:
# built apart, they took 20 of CI's 60 minutes again. Eventual's own modules are built once more
# as a dependency's (warnings off), and this repository's next build builds them back; CI runs
# this check last for that reason.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
scratch="${CHORES_SCRATCH:-$root/.build}"
timeout --kill-after=30 1200 swift build --product eventual-server
server="$root/.build/debug/eventual-server"
# NB: a copy: building Chores into the same folder relinks nothing of the server's, but the
# tests must run the binary this repository built, whatever Chores' build leaves beside it.
cp "$server" "$root/.build/eventual-server-for-chores"
cd Examples/Chores
timeout --kill-after=30 1800 swift build --scratch-path "$scratch" --build-tests
EVENTUAL_SERVER="$root/.build/eventual-server-for-chores" \
    timeout --kill-after=30 900 swift test --scratch-path "$scratch" --skip-build
