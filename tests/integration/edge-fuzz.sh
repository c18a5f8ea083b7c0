#!/usr/bin/env bash
# A short libFuzzer run over the edge's request parser and answer rules
# (tests/fuzz/edge short: src/edge/answer.c, the nginx module's decisions):
# hostile bytes never crash a worker nor name another object.
set -uo pipefail
cd "$(dirname "$0")/../.."
exec tests/fuzz/edge short
