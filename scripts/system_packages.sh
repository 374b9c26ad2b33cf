#!/usr/bin/env bash
# System packages the tests use, from Debian's archive: chromium drives the console tests
# (plugins/heta_server/tests/test_console_browser.py). `make install` runs this; it changes nothing when
# chromium is already there, or when this machine has no apt-get (the test then says it skipped).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends chromium
