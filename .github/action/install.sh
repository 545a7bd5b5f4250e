#!/usr/bin/env bash
# Step 1 of the Loom action (action.yml): pick the release binary for this
# runner, download it and the release's SHA256SUMS, verify the binary's
# SHA-256 (and its build attestation when gh can check it), then install it.
# Nothing downloaded is made executable, let alone run, before both checks.
#
# Environment: RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_ACTION_PATH,
# GITHUB_OUTPUT, GITHUB_PATH, GITHUB_SERVER_URL, GITHUB_REPOSITORY (runner);
# LOOM_INPUT_VERSION,
# LOOM_ACTION_REPOSITORY, GH_TOKEN (action.yml); LOOM_RELEASE_BASE_URL (a
# mirror: $LOOM_RELEASE_BASE_URL/v<version>/<asset>), LOOM_SKIP_ATTESTATION=1
# (binaries GitHub did not attest, e.g. a mirror of your own builds).
# Outputs: binary (its path), version; the binary's folder joins PATH for the
# job's later steps (GITHUB_PATH).
set -euo pipefail

fail() {
  echo "::error title=Loom action::$*"
  exit 1
}

# The action's own deno.json names the version of a tag and of `uses: ./`.
version="${LOOM_INPUT_VERSION:-}"
if [ -z "${version}" ]; then
  version=$(sed -nE 's/^[[:space:]]*"version"[[:space:]]*:[[:space:]]*"([^"]+)".*/\1/p' \
    "${GITHUB_ACTION_PATH}/deno.json" | head -n 1)
fi
version="${version#v}"
[[ "${version}" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] ||
  fail "Invalid loom version '${version}': expected a release such as 0.1.0"
tag="v${version}"

# The targets of .github/workflows/release.yml.
suffix=""
case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
  Linux/X64) target=x86_64-unknown-linux-gnu ;;
  Linux/ARM64) target=aarch64-unknown-linux-gnu ;;
  macOS/X64) target=x86_64-apple-darwin ;;
  macOS/ARM64) target=aarch64-apple-darwin ;;
  Windows/X64)
    target=x86_64-pc-windows-msvc
    suffix=.exe
    ;;
  *) fail "No loom release binary for ${RUNNER_OS:-unknown OS} on ${RUNNER_ARCH:-unknown architecture}: releases have Linux X64 and ARM64, macOS X64 and ARM64, Windows X64" ;;
esac
asset="loom-${tag}-${target}${suffix}"

# The repository whose releases (and attestations) to use: the action's own.
# Composite steps see no github.action_repository today (actions/runner#2525),
# so it is read from where the runner keeps a downloaded action,
# .../_actions/OWNER/REPO/REF; `uses: ./` runs in the repository itself.
repository="${LOOM_ACTION_REPOSITORY:-}"
action_path="${GITHUB_ACTION_PATH//\\//}"
if [ -z "${repository}" ] && [[ "${action_path%/}" =~ /_actions/([^/]+)/([^/]+)/[^/]+$ ]]; then
  repository="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
fi
repository="${repository:-${GITHUB_REPOSITORY:-}}"
if [ -n "${LOOM_RELEASE_BASE_URL:-}" ]; then
  base="${LOOM_RELEASE_BASE_URL%/}"
else
  [ -n "${repository}" ] || fail "Cannot locate the loom release: no action repository and no LOOM_RELEASE_BASE_URL"
  base="${GITHUB_SERVER_URL:-https://github.com}/${repository}/releases/download"
fi

temp="${RUNNER_TEMP:?RUNNER_TEMP is not set}"
download=$(mktemp -d "${temp}/loom-download.XXXXXX")
echo "Loom ${version}: ${asset} from ${base}/${tag}/"

fetch() {
  curl --fail --silent --show-error --location --retry 3 --output "$1" "$2"
}
fetch "${download}/SHA256SUMS" "${base}/${tag}/SHA256SUMS" ||
  fail "Cannot download SHA256SUMS of loom ${tag} from ${base}/${tag}/SHA256SUMS: refusing to run a binary that cannot be checked"
fetch "${download}/${asset}" "${base}/${tag}/${asset}" ||
  fail "Cannot download the release asset ${asset} from ${base}/${tag}/${asset} (is there a loom ${tag} release for ${target}?)"

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  else
    shasum -a 256 "$1" | cut -d ' ' -f 1
  fi
}
# `sha256sum` lines: the digest, a space, then ` name` or `*name`.
expected=$(awk -v name="${asset}" '$2 == name || $2 == "*" name { print $1; exit }' "${download}/SHA256SUMS")
[ -n "${expected}" ] ||
  fail "SHA256SUMS of loom ${tag} has no line for ${asset}: refusing to run it"
[[ "${expected}" =~ ^[0-9a-f]{64}$ ]] ||
  fail "SHA256SUMS of loom ${tag} gives ${asset} a malformed digest: refusing to run it"
actual=$(sha256 "${download}/${asset}")
[ "${actual}" = "${expected}" ] ||
  fail "Checksum mismatch for ${asset}: SHA256SUMS says ${expected}, the download is ${actual}; refusing to run it"
echo "SHA-256 of ${asset} matches SHA256SUMS: ${actual}"

# The release workflow attests every binary (actions/attest-build-provenance).
if [ "${LOOM_SKIP_ATTESTATION:-}" = "1" ]; then
  echo "Build attestation of ${asset} not checked: skipped (LOOM_SKIP_ATTESTATION=1)"
elif ! command -v gh >/dev/null 2>&1; then
  echo "Build attestation of ${asset} not checked: skipped (gh is not installed)"
elif [ -z "${GH_TOKEN:-}" ]; then
  echo "Build attestation of ${asset} not checked: skipped (no GH_TOKEN for gh)"
elif [ -z "${repository}" ]; then
  echo "Build attestation of ${asset} not checked: skipped (no repository to check it against)"
elif gh attestation verify "${download}/${asset}" --repo "${repository}" >"${download}/attestation.log" 2>&1; then
  echo "Build attestation of ${asset} verified: built by ${repository}'s release workflow"
else
  sed -e 's/^/  gh: /' "${download}/attestation.log"
  fail "The build attestation of ${asset} does not verify for ${repository}: refusing to run it (set LOOM_SKIP_ATTESTATION=1 only for binaries GitHub did not build)"
fi

bin="${temp}/loom-bin"
mkdir -p "${bin}"
mv "${download}/${asset}" "${bin}/loom${suffix}"
chmod +x "${bin}/loom${suffix}"
rm -rf "${download}"
{
  echo "binary=${bin}/loom${suffix}"
  echo "version=${version}"
} >>"${GITHUB_OUTPUT}"
echo "${bin}" >>"${GITHUB_PATH}"
