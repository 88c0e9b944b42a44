#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine:
#   .venv/ with the project and its dev tools, the real MCP peers (.ci/peers.sh) and redis-server.
# Idempotent: a second run only checks what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -U pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
# pyright fetches its language server on first use; do it here, not inside the offline tests.
.venv/bin/pyright --version >/dev/null
bash .ci/peers.sh
