#!/usr/bin/env bash
# ensure_venv DIR INPUT... -- PIP_ARGS...
# A virtual environment in DIR with PIP_ARGS installed, made again only when
# PIP_ARGS or the contents of the INPUT files/folders change (a stamp of
# their hashes), so repeated ctest runs in one build dir skip pip.
ensure_venv() {
  local dir=$1; shift
  local inputs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do inputs+=("$1"); shift; done
  shift
  local stamp
  stamp=$( {
    printf '%s\n' "$@"
    for p in "${inputs[@]}"; do
      find "$p" -type f ! -path '*/build/*' ! -path '*.egg-info*' ! -path '*/__pycache__/*' \
        ! -path '*/src/resident/v1/*' -print0 | sort -z | xargs -0 sha256sum
    done
  } | sha256sum | cut -d' ' -f1)
  if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ]; then
    return 0
  fi
  local python=${PYTHON:-python3}
  if [ ! -x "$dir/bin/python" ]; then
    "$python" -m venv "$dir" || {
      echo "venv: '$python -m venv' failed (Debian: apt-get install python3-venv)" >&2
      return 1
    }
  fi
  "$dir/bin/pip" uninstall -q -y resident >/dev/null 2>&1 || true
  "$dir/bin/pip" install -q --disable-pip-version-check "$@"
  echo "$stamp" >"$dir/.stamp"
}
