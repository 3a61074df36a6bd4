"""Builds the resident package, generating its gRPC stubs from proto/.

The stubs are made by grpcio-tools (a build requirement) from the checkout's
proto/resident/v1/resident.proto, or from $RESIDENT_PROTO_DIR, into the
build tree: they are never written into the source tree (except for an
editable install, where they go to src/resident/v1/, which git ignores).
The runtime dependencies are pinned to at least the grpcio and protobuf
versions the generated code checks for at import.
"""

import atexit
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PROTO = "resident/v1/resident.proto"


def proto_dir() -> Path:
    candidates = [os.environ.get("RESIDENT_PROTO_DIR"), HERE.parent.parent / "proto"]
    for c in candidates:
        if c and (Path(c) / PROTO).is_file():
            return Path(c)
    sys.exit(
        f"resident: cannot find {PROTO}: build from a checkout of the repository "
        "(pip install ./client/python) or set RESIDENT_PROTO_DIR to its proto/ folder"
    )


def generate(out: Path) -> None:
    from grpc_tools import protoc  # the build requirement

    import grpc_tools

    includes = Path(grpc_tools.__file__).parent / "_proto"  # google/protobuf/*.proto
    (out / "resident" / "v1").mkdir(parents=True, exist_ok=True)
    args = [
        "grpc_tools.protoc",
        f"-I{proto_dir()}",
        f"-I{includes}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        PROTO,
    ]
    if protoc.main(args) != 0:
        sys.exit(f"resident: protoc failed on {PROTO}")
    (out / "resident" / "v1" / "__init__.py").write_text(
        '"""Generated from proto/resident/v1/resident.proto at build time."""\n'
    )


def runtime_requirements(generated: Path) -> list:
    """grpcio and protobuf at least as new as the generated code checks for."""
    pb2 = (generated / "resident" / "v1" / "resident_pb2.py").read_text()
    grpc_py = (generated / "resident" / "v1" / "resident_pb2_grpc.py").read_text()
    reqs = ["numpy>=1.22"]
    m = re.search(r"GRPC_GENERATED_VERSION = '([0-9.]+)'", grpc_py)
    reqs.append(f"grpcio>={m.group(1)}" if m else "grpcio")
    m = re.search(r"Protobuf Python Version: ([0-9]+)\.([0-9.]+)", pb2)
    reqs.append(f"protobuf>={m.group(1)}.{m.group(2)},<{int(m.group(1)) + 1}" if m else "protobuf")
    return reqs


# Generated once per build, copied into the build tree by build_py.
GENERATED = Path(tempfile.mkdtemp(prefix="resident-stubs-"))
atexit.register(shutil.rmtree, GENERATED, True)
generate(GENERATED)


class BuildPyWithStubs(build_py):
    def run(self):
        super().run()
        dest = HERE / "src" if getattr(self, "editable_mode", False) else Path(self.build_lib)
        shutil.copytree(GENERATED / "resident" / "v1", dest / "resident" / "v1", dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildPyWithStubs}, install_requires=runtime_requirements(GENERATED))
