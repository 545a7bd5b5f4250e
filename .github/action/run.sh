#!/usr/bin/env bash
# Step 3 of the Loom action (action.yml): run the slice with the verified
# binary, write the job summary (`loom report --markdown`) and the HTML
# report (`loom report --html`), set the outputs,
# then pass or fail the step: a slice that stops without completing (exit 1)
# fails it unless allow-incomplete is true; bad input (2) and failures (3,
# signals) always do. The outputs are set in every case.
#
# Environment: RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY,
# GITHUB_WORKSPACE (runner); LOOM_BIN and LOOM_INPUT_* (action.yml);
# ANTHROPIC_API_KEY / OPENAI_API_KEY, read by loom itself and never printed;
# LOOM_SESSION_KEY (64 hex digits, from a secret), the key that signs a
# session's journal, written to a private file for loom so that a later job
# can resume the session (a fresh runner has no key of its own).
set -uo pipefail

fail() {
  echo "::error title=Loom action::$*"
  exit 1
}

bin="${LOOM_BIN:?LOOM_BIN is not set: the install step did not run}"
temp="${RUNNER_TEMP:?RUNNER_TEMP is not set}"
run_dir=$(mktemp -d "${temp}/loom-run.XXXXXX")
report="${run_dir}/context-report.json"

allow="${LOOM_INPUT_ALLOW_INCOMPLETE:-false}"
case "${allow}" in
  true | false) ;;
  *) fail "Invalid allow-incomplete '${allow}': expected true or false" ;;
esac

# The session key: never echoed, never left in loom's environment.
if [ -n "${LOOM_SESSION_KEY:-}" ]; then
  [[ "${LOOM_SESSION_KEY}" =~ ^[0-9a-f]{64}$ ]] ||
    fail "LOOM_SESSION_KEY is not 64 lowercase hex digits (make one with: openssl rand -hex 32)"
  if [ -z "${LOOM_SESSION_KEY_FILE:-}" ]; then
    key_dir="${temp}/loom-session-key"
    (umask 077 && mkdir -p "${key_dir}" && printf '%s\n' "${LOOM_SESSION_KEY}" >"${key_dir}/session.key") ||
      fail "Cannot write the session key file under ${key_dir}"
    export LOOM_SESSION_KEY_FILE="${key_dir}/session.key"
  fi
  unset LOOM_SESSION_KEY
fi

# `args`, split as a shell would (quotes, backslashes) but never evaluated.
extra=()
if [ -n "${LOOM_INPUT_ARGS//[[:space:]]/}" ]; then
  printf '%s' "${LOOM_INPUT_ARGS}" | xargs printf '%s\0' >"${run_dir}/args" ||
    fail "Cannot split the args input into arguments (an unbalanced quote?)"
  while IFS= read -r -d '' word; do extra+=("${word}"); done <"${run_dir}/args"
fi

session="${LOOM_INPUT_SESSION:-}"
args=(run)
if [ -n "${session}" ] && [ -f "${session}/journal.jsonl" ]; then
  echo "Resuming the session in ${session}: its intent, model, workspace, test command and policy come from the session"
  args+=(--resume "${session}")
else
  model="${LOOM_INPUT_MODEL:-}"
  [ -n "${model}" ] || fail "The model input is required (anthropic:MODEL or openai:MODEL)"
  intent="${LOOM_INPUT_INTENT:-}"
  intent_file="${LOOM_INPUT_INTENT_FILE:-}"
  if [ -n "${intent}" ] && [ -n "${intent_file}" ]; then
    fail "Give intent or intent-file, not both"
  elif [ -z "${intent}" ] && [ -z "${intent_file}" ]; then
    fail "The intent or intent-file input is required"
  fi
  args+=(
    --workspace "${LOOM_INPUT_WORKSPACE:-${GITHUB_WORKSPACE:-.}}"
    --model "${model}"
    --context-policy "${LOOM_INPUT_CONTEXT_POLICY:-bounded}"
  )
  if [ -n "${intent}" ]; then args+=(--intent "${intent}"); else args+=(--intent-file "${intent_file}"); fi
  if [ -n "${LOOM_INPUT_TEST:-}" ]; then args+=(--test "${LOOM_INPUT_TEST}"); fi
  if [ -n "${session}" ]; then
    mkdir -p "$(dirname "${session}")"
    args+=(--session "${session}")
  fi
fi
if [ -n "${LOOM_INPUT_MAX_STEPS:-}" ]; then args+=(--max-steps "${LOOM_INPUT_MAX_STEPS}"); fi
args+=(--context-report "${report}")
args+=(${extra[@]+"${extra[@]}"})

# What loom prints quotes the model and the workspace (hostile): no line of
# it may act as a workflow command, so commands stop until the random token.
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
echo "::stop-commands::${token}"
# The command line, with the intent's text shortened to its length.
shown=()
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[i]}" = --intent ] && [ $((i + 1)) -lt ${#args[@]} ]; then
    shown+=(--intent "<${#args[i + 1]} characters>")
    i=$((i + 1))
  else
    shown+=("${args[i]}")
  fi
done
echo "loom ${shown[*]}"
"${bin}" "${args[@]}" </dev/null
code=$?
echo "::${token}::"

outcome=not_started
revision=""
html=""
if [ -s "${report}" ]; then
  # The report is loom's own pretty JSON: the stop reason is the one
  # 4-space "stop" key, the latest revision the one 2-space "revision" key.
  outcome=$(sed -nE 's/^    "stop": "([a-z_]+)",?$/\1/p' "${report}" | head -n 1)
  revision=$(sed -nE 's/^  "revision": "(rev-[0-9]+-[0-9a-f]+)",?$/\1/p' "${report}" | head -n 1)
  if ! "${bin}" report --markdown "${report}" >>"${GITHUB_STEP_SUMMARY}" </dev/null; then
    echo "::warning title=Loom action::Cannot render the context report into the job summary"
  fi
  # The same run as one self-contained page, for actions/upload-artifact.
  html="${run_dir}/context-report.html"
  if ! "${bin}" report --html "${report}" "${html}" </dev/null; then
    echo "::warning title=Loom action::Cannot write the HTML report"
    html=""
  fi
else
  report=""
  # shellcheck disable=SC2016 # the backticks are Markdown
  printf '### Loom slice did not start\n\n`loom run` exited %s before it wrote a context report; the log says why.\n' \
    "${code}" >>"${GITHUB_STEP_SUMMARY}"
fi

# Multi-line-safe outputs: each value between random delimiters.
output() {
  local delimiter
  delimiter="loom_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  printf '%s<<%s\n%s\n%s\n' "$1" "${delimiter}" "$2" "${delimiter}" >>"${GITHUB_OUTPUT}"
}
output outcome "${outcome}"
output exit-code "${code}"
output revision "${revision}"
output report "${report}"
output html-report "${html}"
output session "${session}"

case "${code}" in
  0)
    echo "The slice completed${revision:+ with ${revision}}"
    ;;
  1)
    if [ "${allow}" = "true" ]; then
      echo "::notice title=Loom action::The slice stopped without completing (${outcome}); allow-incomplete is true"
    else
      fail "The slice stopped without completing (${outcome}); see the job summary (allow-incomplete: true lets the step pass)"
    fi
    ;;
  *)
    fail "loom run failed with exit code ${code} (${outcome}); see the log and the job summary"
    ;;
esac
