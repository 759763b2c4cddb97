#!/usr/bin/env bash
# Builds Examples/Chores as the package of its own it is (on this repository by path), and runs
# its tests against the eventual-server built from this repository unchanged, with Chores'
# declaration deployed to it (the tests deploy it, as an operator would: apps deploy).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
timeout --kill-after=30 1200 swift build --product eventual-server
cd Examples/Chores
timeout --kill-after=30 1800 swift build --build-tests
EVENTUAL_SERVER="$root/.build/debug/eventual-server" timeout --kill-after=30 900 swift test --skip-build
