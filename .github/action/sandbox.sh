#!/usr/bin/env bash
# Step 2 of the Loom action (action.yml), on Linux runners: install
# bubblewrap, which loom uses to confine the test command, and let it create
# user namespaces. Ubuntu 24.04's AppArmor forbids unprivileged user
# namespaces (kernel.apparmor_restrict_unprivileged_userns=1); older kernels
# have no such switch, and its absence is not an error. Nothing here fails
# the step: without a working bubblewrap, loom confines a `deno` test with
# Deno's own permission flags and refuses any other test unless `args` has
# --unconfined-tests (see docs/security.md).
#
# Environment: LOOM_USERNS_SWITCH, the switch's file (default
# /proc/sys/kernel/apparmor_restrict_unprivileged_userns; tests point it
# elsewhere).
set -uo pipefail

switch="${LOOM_USERNS_SWITCH:-/proc/sys/kernel/apparmor_restrict_unprivileged_userns}"

# sudo on hosted runners; a root container needs none.
privileged() {
  if command -v sudo >/dev/null 2>&1; then
    sudo -n "$@"
  elif [ "$(id -u)" = "0" ]; then
    "$@"
  else
    echo "Cannot run $1 as root: no sudo"
    return 1
  fi
}

if command -v bwrap >/dev/null 2>&1; then
  echo "bubblewrap is installed: $(bwrap --version 2>&1)"
elif command -v apt-get >/dev/null 2>&1; then
  echo "Installing bubblewrap"
  privileged apt-get update -qq && privileged apt-get install -y -qq bubblewrap ||
    echo "::warning title=Loom action::Cannot install bubblewrap: loom confines a deno test with Deno's flags and refuses other tests (add --unconfined-tests to args to run them unconfined)"
else
  echo "::warning title=Loom action::bubblewrap is missing and there is no apt-get to install it"
fi

if [ -e "${switch}" ]; then
  echo "Allowing unprivileged user namespaces (${switch} exists)"
  privileged sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 ||
    echo "::warning title=Loom action::Cannot clear kernel.apparmor_restrict_unprivileged_userns: bubblewrap may be unable to build a sandbox"
else
  echo "No ${switch} on this kernel: user namespaces need no switch"
fi

if command -v bwrap >/dev/null 2>&1 &&
  bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev -- true >/dev/null 2>&1; then
  echo "bubblewrap can build a sandbox"
else
  echo "bubblewrap cannot build a sandbox here: loom will say which confinement the tests ran under"
fi
exit 0
