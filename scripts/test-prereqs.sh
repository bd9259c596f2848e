#!/bin/sh
# Run by `npm test` before vitest: the srt sandbox test needs bubblewrap, socat and ripgrep (srt
# refuses to run without them). Installs what is missing with apt-get when we are root on a Debian
# or Ubuntu machine; otherwise prints the exact command and carries on: the sandbox test then
# reports in the summary that it could not run (CI sets OCC_REQUIRE_SANDBOX=1 and it fails instead).
# The e2e suites drive the built MCP server (dist/cli.js): build it once if it is not there.
if [ ! -f dist/cli.js ]; then
  echo "test prerequisites: building dist/ (npm run build)" >&2
  npm run build --silent >/dev/null || exit 1
fi

# The browser tests (test/browser) drive Debian's chromium through playwright-core; without it they
# fail and say how to install it (never skipped).
if ! command -v chromium >/dev/null 2>&1 && [ -z "${CHROMIUM_PATH:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test prerequisites: installing chromium with apt-get (browser tests)" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || echo "test prerequisites: apt-get could not install chromium" >&2
  else
    echo "test prerequisites: chromium is missing (the browser tests need it): sudo apt-get install -y chromium, or set CHROMIUM_PATH" >&2
  fi
fi
# The fleet suite (test/fleet) runs a real Redis: install redis-server when root, else say how.
# Without it that suite fails with the same message (it is never skipped).
if ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test prerequisites: installing redis-server with apt-get (the fleet tests need a real Redis)" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; } ||
      echo "test prerequisites: apt-get could not install redis-server: the fleet tests will fail" >&2
  else
    echo "test prerequisites: redis-server is missing: the fleet tests (test/fleet) will fail. Install it: sudo apt-get install -y redis-server" >&2
  fi
fi

missing=""
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
command -v socat >/dev/null 2>&1 || missing="$missing socat"
command -v rg >/dev/null 2>&1 || missing="$missing ripgrep"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test prerequisites: installing$missing with apt-get" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null && exit 0
  echo "test prerequisites: apt-get could not install$missing" >&2
fi
if command -v apt-get >/dev/null 2>&1; then
  cmd="sudo apt-get install -y$missing"
else
  cmd="install$missing with your package manager"
fi
echo "test prerequisites: missing$missing (needed by the srt sandbox test only). To run it: $cmd" >&2
exit 0
