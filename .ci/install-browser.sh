#!/usr/bin/env bash
# Install a headless browser (Debian's chromium) for tests/replay/test_replay_browser.py.
# Idempotent and quiet; never fails the build: when it cannot install (no root,
# no apt, no network) it says so on stderr and exits 0, and the browser test
# skips with a clear reason.
set -u
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser: apt-get not available; the browser test will skip" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "install-browser: not root and no passwordless sudo; the browser test will skip" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq >/dev/null 2>&1 && $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; }; then
  echo "install-browser: apt-get install chromium failed; the browser test will skip" >&2
fi
exit 0
