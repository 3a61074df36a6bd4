#!/usr/bin/env bash
# ctest's python_client: installs the client the README's way
# (`pip install ./client/python`, in a venv cached under the build dir) and
# runs the pytest suite against the build tree's binaries.
#   run_pytest.sh VENV_DIR SERVER_BIN CLI_BIN [PYTEST_ARGS...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$1 server=$2 cli=$3
shift 3
# shellcheck source=venv.sh
source "$root/tests/python/venv.sh"
cd "$root"
ensure_venv "$venv" client/python proto/resident/v1/resident.proto -- "./client/python[bfloat16]" "pytest>=7"
export RESIDENT_SERVER_BINARY=$server RESIDENT_CLI_BINARY=$cli
cd "$root/tests/python"
exec "$venv/bin/python" -m pytest -p no:cacheprovider -q "$@"
