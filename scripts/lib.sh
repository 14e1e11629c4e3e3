# Shared by the scripts in this folder: idempotent installs of every tool the
# project needs, each skipped when already present at the pinned version.
# Source it; do not run it.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
SITE_ROOT="$TARGET_DIR/site"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

# Each step is said as it begins; when the script ends (or before it hands
# over with exec: print_steps), it says how long each of its steps took,
# so a slow first start shows where its minutes went.
STEP_NAME=""
STEP_STARTED=""
STEPS_TAKEN=()
SCRIPT_STARTED="$(date +%s)"
finish_step() {
  if [ -n "$STEP_STARTED" ]; then
    STEPS_TAKEN+=("$(printf '%6ds  %s' "$(($(date +%s) - STEP_STARTED))" "$STEP_NAME")")
    STEP_STARTED=""
  fi
}
say() {
  finish_step
  printf '\033[1m==> %s\033[0m\n' "$*" >&2
  STEP_NAME="$*"
  STEP_STARTED="$(date +%s)"
}
print_steps() {
  finish_step
  [ "${#STEPS_TAKEN[@]}" -gt 0 ] || return 0
  printf '\033[1m==> %s took %ds:\033[0m\n' "$(basename "$0")" "$(($(date +%s) - SCRIPT_STARTED))" >&2
  printf '%s\n' "${STEPS_TAKEN[@]}" >&2
  STEPS_TAKEN=()
}
trap print_steps EXIT
fail() { printf '\033[31merror:\033[0m %s\n' "$*" >&2; exit 1; }

# Run as root, through sudo when we are not root.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else fail "need root (or sudo) to run: $*"
  fi
}

apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    say "apt-get update"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    apt_updated=1
  fi
  say "apt-get install $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ensure_rust() {
  command -v cargo >/dev/null 2>&1 || fail "cargo is not on PATH: install Rust with rustup (https://rustup.rs)"
}

# The browser bundle is built with a pinned nightly: it rebuilds the
# standard library for size (-Zbuild-std, docs/manual/development.md "Building"), which stable
# Rust cannot. Everything else uses the stable toolchain.
BUNDLE_TOOLCHAIN=nightly-2026-05-20

ensure_bundle_toolchain() {
  if ! rustup run "$BUNDLE_TOOLCHAIN" rustc --version >/dev/null 2>&1 \
    || ! rustup component list --toolchain "$BUNDLE_TOOLCHAIN" --installed 2>/dev/null | grep -q '^rust-src'; then
    say "installing Rust $BUNDLE_TOOLCHAIN with its source (for the browser bundle, once)"
    rustup toolchain install "$BUNDLE_TOOLCHAIN" --profile minimal --component rust-src >&2 \
      || fail "rustup could not install $BUNDLE_TOOLCHAIN"
  fi
}

ensure_wasm_target() {
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    say "adding the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown || fail "rustup could not add wasm32-unknown-unknown"
  fi
}

# The wasm-bindgen CLI must be exactly the version of the crate in Cargo.lock.
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock"
}

ensure_wasm_bindgen() {
  local wanted installed=""
  wanted="$(wasm_bindgen_version)"
  [ -n "$wanted" ] || fail "cannot read the wasm-bindgen version from Cargo.lock"
  if command -v wasm-bindgen >/dev/null 2>&1; then
    installed="$(wasm-bindgen --version | awk '{print $2}')"
  fi
  if [ "$installed" != "$wanted" ]; then
    say "installing wasm-bindgen-cli $wanted (about 8 minutes, once)"
    # Not --locked: its own lock file pins a webpki-roots the registry dropped.
    # In a folder of its own (cargo's, removed after), not the project's
    # target folder: the server builds there meanwhile (scripts/build).
    env -u CARGO_TARGET_DIR cargo install wasm-bindgen-cli --version "$wanted" || fail "cargo install wasm-bindgen-cli $wanted failed"
  fi
}

# The split step of the build (tools/wasm-split), installed from this
# repository when its source or lock file changes. Prints its path.
# The splitting library with tools/wasm-split/nested-splits.patch applied,
# in tools/wasm-split/patched (not in git): the crate as published, its
# checksum the one Cargo.lock records, then the patch.
patch_wasm_split_support() {
  local version=0.2.4
  local checksum=f6c1f994b196e31969f4cdbe37d051362659567efc0f5c90cb931a8a5cdc530f
  local into="$ROOT/tools/wasm-split/patched"
  local crate="$into/wasm_split_cli_support-$version.crate"
  mkdir -p "$into"
  command -v curl >/dev/null 2>&1 || apt_install curl
  if [ ! -f "$crate" ] || [ "$(sha256sum "$crate" | awk '{print $1}')" != "$checksum" ]; then
    curl -fsSL -o "$crate" "https://static.crates.io/crates/wasm_split_cli_support/$version/download" \
      || fail "could not download wasm_split_cli_support $version from crates.io"
  fi
  [ "$(sha256sum "$crate" | awk '{print $1}')" = "$checksum" ] \
    || fail "wasm_split_cli_support-$version.crate does not have the checksum Cargo.lock records"
  rm -rf "$into/wasm_split_cli_support"
  mkdir -p "$into/wasm_split_cli_support"
  tar -xzf "$crate" -C "$into/wasm_split_cli_support" --strip-components=1
  (cd "$into/wasm_split_cli_support" && git apply -p1 "$ROOT/tools/wasm-split/nested-splits.patch") \
    || fail "tools/wasm-split/nested-splits.patch does not apply to wasm_split_cli_support $version"
}

ensure_wasm_split() {
  local root="${XDG_CACHE_HOME:-$HOME/.cache}/patchbay/tools"
  local binary="$root/bin/patchbay-wasm-split"
  local wanted
  wanted="$(cat "$ROOT/tools/wasm-split/Cargo.toml" "$ROOT/tools/wasm-split/Cargo.lock" "$ROOT/tools/wasm-split/src/main.rs" "$ROOT/tools/wasm-split/nested-splits.patch" | sha256sum | awk '{print $1}')"
  if [ ! -x "$binary" ] || [ "$(cat "$root/.patchbay-wasm-split" 2>/dev/null)" != "$wanted" ]; then
    say "installing the bundle splitter (tools/wasm-split, about 2 minutes, once)"
    patch_wasm_split_support
    env -u CARGO_TARGET_DIR cargo install --quiet --locked --force --path "$ROOT/tools/wasm-split" --root "$root" >&2 \
      || fail "cargo install --path tools/wasm-split failed"
    echo "$wanted" >"$root/.patchbay-wasm-split"
  fi
  echo "$binary"
}

# Splits the browser bundle INPUT at its `#[lazy]` functions into the folder
# OUT (made afresh): the main module, then a chunk for each part a page
# fetches when it first shows it; the same steps and file names as
# cargo-leptos --split. What a graph's page fetches once it is interactive
# (--late: its room, check and clipboard writer) or when a person points at
# it (a panel, the popups) shares one chunk with the parts shown later, so
# those fetch little more than their own code; the palette and a recorded
# run's page come with a first load (--first) and keep theirs out of it
# (tools/wasm-split).
split_bundle() { # INPUT OUT
  local splitter
  splitter="$(ensure_wasm_split)"
  rm -rf "$2"
  "$splitter" "$1" "$2" page_ \
    --apart home_part_ --first palette_ run_page_ other_page_ \
    --late room_part_ check_graph_ clipboard_part_ together_part_ side_panel_ popups_ >/dev/null
}

ensure_node() {
  command -v npm >/dev/null 2>&1 || apt_install nodejs npm
}

# npm packages (binaryen's wasm-opt, Playwright), reinstalled when the lock changes.
ensure_npm_packages() {
  ensure_node
  local stamp="$ROOT/node_modules/.patchbay-lock"
  if [ ! -f "$stamp" ] || ! cmp -s "$ROOT/package-lock.json" "$stamp"; then
    say "installing npm packages (binaryen, Playwright)"
    (cd "$ROOT" && npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci failed"
    cp "$ROOT/package-lock.json" "$stamp"
  fi
}

ensure_chromium() {
  if [ ! -x /usr/bin/chromium ]; then
    apt_install chromium chromium-driver
  fi
}

# Coding modules keep each run's workspace in git.
ensure_git() {
  command -v git >/dev/null 2>&1 || apt_install git
}

# bubblewrap confines every process a run starts (coding agents, commands,
# git on a run's workspace); without it the server refuses such runs.
ensure_bubblewrap() {
  command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap
}

# A Python package in a virtual environment of its own under the cache,
# (re)made when the pinned version changes; prints the environment's
# python. VENV PACKAGE MODULE
ensure_python_package() {
  local venv="${XDG_CACHE_HOME:-$HOME/.cache}/patchbay/$1" package="$2" module="$3"
  if ! "$venv/bin/python" -c "import $module" >/dev/null 2>&1 \
    || [ "$(cat "$venv/.patchbay-sdk" 2>/dev/null)" != "$package" ]; then
    command -v python3 >/dev/null 2>&1 || apt_install python3
    python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || apt_install python3-venv
    say "installing $package"
    rm -rf "$venv"
    python3 -m venv "$venv" >&2 || return 1
    # shellcheck disable=SC2086 # PACKAGE may name several, space-separated.
    "$venv/bin/pip" install --quiet --disable-pip-version-check $package >&2 || return 1
    echo "$package" >"$venv/.patchbay-sdk"
  fi
  echo "$venv/bin/python"
}

# The official ACP Python SDK, for the test agent that checks our ACP
# client against an independent implementation.
ACP_PYTHON_SDK="agent-client-protocol==0.12.1"
ensure_acp_python_sdk() {
  ensure_python_package acp-venv "$ACP_PYTHON_SDK" acp || fail "pip install $ACP_PYTHON_SDK failed"
}

# The official MCP Python SDK, for a test MCP server written with it;
# prints nothing (with a warning) when pip cannot install it: its tests
# then say they skipped.
MCP_PYTHON_SDK="mcp==2.3.0"
# The official OpenAI Python client, talking to a graph as a model.
OPENAI_PYTHON_SDK="openai==3.57.0"
ensure_mcp_python_sdk() {
  ensure_python_package mcp-venv "$MCP_PYTHON_SDK" mcp \
    || echo "warning: pip could not install $MCP_PYTHON_SDK; its MCP tests will skip" >&2
}

# The official OpenAI Python client, for the test that talks to a graph as
# an OpenAI-compatible model; prints nothing (with a warning) when pip
# cannot install it: that test then says it skipped.
# The API's own checkers: openapi-spec-validator reads /api/openapi.json,
# and schemathesis fuzzes a real server from it (server/tests/openapi.rs).
API_PYTHON_TOOLS="schemathesis==4.32.5 openapi-spec-validator==0.9.0"
ensure_api_python_tools() {
  ensure_python_package api-venv "$API_PYTHON_TOOLS" openapi_spec_validator \
    || echo "warning: pip could not install $API_PYTHON_TOOLS; the OpenAPI checks will skip" >&2
}

ensure_openai_python_sdk() {
  ensure_python_package openai-venv "$OPENAI_PYTHON_SDK" openai \
    || echo "warning: pip could not install $OPENAI_PYTHON_SDK; the OpenAI client test will skip" >&2
}

# Real coding agents for the optional real-agent tests, each spoken to over
# ACP with its model calls sent to a loopback mock: Gemini CLI (Apache-2.0,
# --acp, a mock of Google's API) and Qwen Code (Apache-2.0, --acp, a mock of
# OpenAI's Chat Completions). Each has a folder of its own (npm --no-save
# would prune the other). Prints the path of the agent's script, or nothing
# (with a warning) when npm cannot install it: its test then says it skipped.
REAL_AGENT_PACKAGE="@google/gemini-cli@0.61.0"
SECOND_REAL_AGENT_PACKAGE="@qwen-code/qwen-code@0.24.4"
ensure_npm_agent() {
  ensure_npm_package "$1" "$2" "$3" "a real ACP agent ($2) for the optional real-agent tests"
}

# FOLDER PACKAGE SCRIPT WHAT: an npm package in a folder of its own,
# prints the path of its SCRIPT, or nothing (with a warning) when npm
# cannot install it.
ensure_npm_package() {
  local folder="$1" package="$2" script="$1/$3" what="$4"
  if [ ! -f "$script" ] || [ "$(cat "$folder/.patchbay-package" 2>/dev/null)" != "$package" ]; then
    ensure_node
    say "installing $what"
    mkdir -p "$folder"
    # Qwen Code asks for Node 22 and runs on Debian's 20 (checked); its
    # optional packages (images, a terminal, the clipboard) ACP never uses.
    if (cd "$folder" && npm install --no-audit --no-fund --loglevel=error --no-save --omit=optional \
      --engine-strict=false --prefix "$folder" "$package" >&2); then
      echo "$package" >"$folder/.patchbay-package"
    else
      echo "warning: npm could not install $package; the tests that use it will skip" >&2
      return 0
    fi
  fi
  echo "$script"
}

ensure_real_agent() {
  ensure_npm_agent "${XDG_CACHE_HOME:-$HOME/.cache}/patchbay/real-agents" \
    "$REAL_AGENT_PACKAGE" node_modules/@google/gemini-cli/bundle/gemini.js
}

ensure_second_real_agent() {
  ensure_npm_agent "${XDG_CACHE_HOME:-$HOME/.cache}/patchbay/real-agents/qwen-code" \
    "$SECOND_REAL_AGENT_PACKAGE" node_modules/@qwen-code/qwen-code/cli-entry.js
}

# The reference MCP server (tools echo, get-sum, get-structured-content,
# get-env, trigger-long-running-operation; stdio and Streamable HTTP) for
# the tests of tools from real MCP servers; prints its script or nothing.
MCP_EVERYTHING_PACKAGE="@modelcontextprotocol/server-everything@2026.8.31"
ensure_mcp_everything() {
  ensure_npm_package "${XDG_CACHE_HOME:-$HOME/.cache}/patchbay/mcp-servers/everything" \
    "$MCP_EVERYTHING_PACKAGE" node_modules/@modelcontextprotocol/server-everything/dist/index.js \
    "the reference MCP server ($MCP_EVERYTHING_PACKAGE) for the tool tests"
}

# The reference filesystem MCP server (read_text_file, read-only; write_file,
# not), over a folder it is given, for the tests of calls that wait for a
# person; prints its script or nothing.
MCP_FILESYSTEM_PACKAGE="@modelcontextprotocol/server-filesystem@2026.8.31"
ensure_mcp_filesystem() {
  ensure_npm_package "${XDG_CACHE_HOME:-$HOME/.cache}/patchbay/mcp-servers/filesystem" \
    "$MCP_FILESYSTEM_PACKAGE" node_modules/@modelcontextprotocol/server-filesystem/dist/index.js \
    "the reference filesystem MCP server ($MCP_FILESYSTEM_PACKAGE) for the tool approval tests"
}

# Zopfli writes gzip that any browser reads, about 5% smaller than
# `gzip -9` (issue 41: 930,635 bytes for the whole app against 976,021).
ensure_zopfli() {
  command -v zopfli >/dev/null 2>&1 || apt_install zopfli
}

ensure_build_tools() {
  ensure_rust
  ensure_zopfli
  ensure_git
  ensure_bubblewrap
  ensure_wasm_target
  ensure_bundle_toolchain
  ensure_wasm_bindgen
  ensure_npm_packages
}

# A PostgreSQL server on this machine with a `patchbay` role and a fresh
# `patchbay_test` database; prints its URL and nothing else on stdout (the
# tools it calls may talk, e.g. pg_ctlcluster's "Removed stale pid file.",
# so their stdout goes to stderr).
ensure_postgres_test_database() {
  # Not captured through a pipe: the server started here would inherit it
  # and keep the caller's $(...) waiting forever.
  prepare_postgres_test_database >&2
  local port
  port="$(pg_lsclusters --no-header | awk 'NR == 1 { print $3 }')"
  echo "postgres://patchbay:patchbay@127.0.0.1:$port/patchbay_test"
}

# Runs a command that leaves a server behind without the descriptors this
# script inherited: a server keeps what it inherits for as long as it runs,
# so PostgreSQL started under `flock LOCK scripts/test` held the lock after
# the tests ended (and would keep a caller's pipe open the same way).
without_inherited_descriptors() {
  (
    local descriptor number
    for descriptor in /proc/self/fd/*; do
      number="${descriptor##*/}"
      if [ "$number" -gt 2 ] 2>/dev/null; then
        eval "exec $number>&-" 2>/dev/null || true
      fi
    done
    "$@"
  )
}

prepare_postgres_test_database() {
  if ! command -v pg_lsclusters >/dev/null 2>&1; then
    apt_install postgresql
  fi
  local cluster version name port status
  cluster="$(pg_lsclusters --no-header | head -n 1)"
  if [ -z "$cluster" ]; then
    version="$(ls /usr/lib/postgresql | sort -n | tail -n 1)"
    say "creating PostgreSQL cluster $version/main"
    as_root pg_createcluster "$version" main >/dev/null
    cluster="$(pg_lsclusters --no-header | head -n 1)"
  fi
  read -r version name port status _ <<<"$cluster"
  if [ "$status" != "online" ]; then
    say "starting PostgreSQL $version/$name"
    without_inherited_descriptors as_root pg_ctlcluster "$version" "$name" start
  fi
  local psql=(as_root env PGOPTIONS=--client-min-messages=warning runuser -u postgres -- psql -p "$port" -v ON_ERROR_STOP=1 -qtA)
  if [ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'patchbay'")" ]; then
    "${psql[@]}" -c "CREATE ROLE patchbay LOGIN PASSWORD 'patchbay' CREATEDB" >/dev/null
  fi
  # Tests create a database each (patchbay_test_<random>); clear the last run's.
  "${psql[@]}" -c "ALTER ROLE patchbay CREATEDB" >/dev/null
  local stale
  for stale in $("${psql[@]}" -c "SELECT datname FROM pg_database WHERE datname LIKE 'patchbay_test%'"); do
    "${psql[@]}" -c "DROP DATABASE IF EXISTS $stale WITH (FORCE)" >/dev/null
  done
  "${psql[@]}" -c "CREATE DATABASE patchbay_test OWNER patchbay" >/dev/null
}
