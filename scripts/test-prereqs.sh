#!/bin/sh
# Run by `npm test` before vitest. Installs the Debian packages the test suites need when we are root
# on a Debian or Ubuntu machine (one `apt-get update`, and only when something is missing); otherwise
# prints the exact command and carries on:
# - chromium: the browser tests (test/browser) drive it through playwright-core; without it they fail
#   and say how to install it (never skipped). CHROMIUM_PATH names another one.
# - redis-server: the fleet suite (test/fleet) runs a real Redis; without it that suite fails with the
#   same message (never skipped).
# - bubblewrap, socat, ripgrep: the srt sandbox test needs them (srt refuses to run without them);
#   without them that test reports in the summary that it could not run (CI sets
#   OCC_REQUIRE_SANDBOX=1 and it fails instead).
# The e2e suites drive the built MCP server (dist/cli.js): build it once if it is not there.
if [ ! -f dist/cli.js ]; then
  echo "test prerequisites: building dist/ (npm run build)" >&2
  npm run build --silent >/dev/null || exit 1
fi

browser=""
if ! command -v chromium >/dev/null 2>&1 && [ -z "${CHROMIUM_PATH:-}" ]; then browser="chromium"; fi
fleet=""
command -v redis-server >/dev/null 2>&1 || fleet="redis-server"
sandbox=""
command -v bwrap >/dev/null 2>&1 || sandbox="$sandbox bubblewrap"
command -v socat >/dev/null 2>&1 || sandbox="$sandbox socat"
command -v rg >/dev/null 2>&1 || sandbox="$sandbox ripgrep"
sandbox="${sandbox# }"
[ -z "$browser$fleet$sandbox" ] && exit 0

can_install=""
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test prerequisites: installing $(echo $browser $fleet $sandbox) with apt-get" >&2
  # Once for all of them; each group is installed on its own, so one that fails does not stop the rest.
  if apt-get update -qq; then can_install=1; else echo "test prerequisites: apt-get update failed" >&2; fi
fi

# install_or_say PACKAGES WHAT-NEEDS-THEM MANUAL-HINT: apt-get install when we can, else say how.
install_or_say() {
  if [ -n "$can_install" ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $1 >/dev/null; then return 0; fi
  if [ -n "$can_install" ]; then
    echo "test prerequisites: apt-get could not install $1: $2" >&2
  elif command -v apt-get >/dev/null 2>&1; then
    echo "test prerequisites: $1 missing: $2. Install: sudo apt-get install -y $1$3" >&2
  else
    echo "test prerequisites: $1 missing: $2. Install $1 with your package manager$3" >&2
  fi
}

[ -n "$browser" ] && install_or_say "$browser" "the browser tests need it" ", or set CHROMIUM_PATH"
[ -n "$fleet" ] && install_or_say "$fleet" "the fleet tests (test/fleet) will fail without a real Redis" ""
[ -n "$sandbox" ] && install_or_say "$sandbox" "needed by the srt sandbox test only" ""
exit 0
