#!/usr/bin/env bash
# Installs what the tests need, then builds and runs the whole suite.
# Ends with one line "N passed, N failed[, N skipped]" that CI reads.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v git >/dev/null 2>&1 || need_apt+=(git)
# ssh:// destinations are tested against a real sshd on loopback; sshfs mounts play the network filesystem.
[ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need_apt+=(openssh-client)
command -v ssh-keygen >/dev/null 2>&1 || need_apt+=(openssh-client)
command -v sshfs >/dev/null 2>&1 || need_apt+=(sshfs)
# The shipped alert rules are checked and unit-tested with Prometheus' promtool.
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${need_apt[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "missing ${need_apt[*]}: install them (as root this script does it with apt-get)" >&2
    exit 1
  fi
fi

# The dashboard is tested in a real browser; without one that test is skipped with a notice.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: chromium (for the dashboard browser test)"
    { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
      || echo "NOTICE: chromium could not be installed; the dashboard browser test will be skipped" >&2
  else
    echo "NOTICE: /usr/bin/chromium is missing; the dashboard browser test will be skipped" >&2
  fi
fi

npm ci --no-audit --no-fund --loglevel=error
npm run build --silent
REFRELAY_SKIP_BUILD=1 node scripts/run-tests.mjs "$@"
