#!/usr/bin/env python3
"""Checks that includes point down the layers of DESIGN.md, and prints the
folder-level include graph.

    scripts/check_layers.py            # exit 1 and name each bad include
    scripts/check_layers.py --dot      # the graph in Graphviz form

Each folder may include only the folders listed for it (and itself); gRPC
and the generated stubs are for server/rpc/ and client/ only.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# folder -> folders it may include (itself implied). Longest prefix wins.
ALLOWED = {
    "core": [],
    "core/proto": ["core", "proto"],
    "kernels/cpu": ["core"],
    "kernels/cuda": ["core"],
    "server/device": ["core", "kernels/cpu"],
    "server/device/cpu": ["core", "kernels/cpu", "server/device"],
    "server/device/cuda": ["core", "kernels/cuda", "server/device"],
    "server/device/factory": ["core", "server/device", "server/device/cpu", "server/device/cuda"],
    "server/program": ["core", "server/device"],
    "server/session": ["core", "server/device", "server/program"],
    "server/rpc": ["core", "core/proto", "proto", "server/device", "server/program",
                   "server/session"],
    "client": ["core", "core/proto", "proto"],
}
# Folders that may include gRPC headers or the generated .grpc.pb.h stubs.
GRPC_OK = ("server/rpc", "client")
# Folders that may include generated messages (resident.pb.h).
MESSAGES_OK = ("core/proto", "server/rpc", "client")
SOURCES = (".h", ".cc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)


def layer_of(path):
    best = None
    for folder in ALLOWED:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def main():
    dot = "--dot" in sys.argv
    problems, edges = [], set()
    for top in ALLOWED:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith(SOURCES):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), ROOT)
                src = layer_of(os.path.dirname(rel))
                if src is None:
                    continue
                text = open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace").read()
                for inc in INCLUDE.findall(text):
                    if inc.startswith("grpc") or inc.endswith(".grpc.pb.h"):
                        if not src.startswith(GRPC_OK):
                            problems.append(f"{rel}: includes {inc}: gRPC is for server/rpc/ and client/")
                        continue
                    if inc.startswith("resident/v1/"):
                        if not src.startswith(MESSAGES_OK):
                            problems.append(f"{rel}: includes {inc}: wire messages stop at core/proto/")
                        edges.add((src, "proto"))
                        continue
                    dst = layer_of(os.path.dirname(inc))
                    if dst is None:
                        if inc.split("/")[0] in ("tests", "bench", "scripts"):
                            problems.append(f"{rel}: includes {inc}: production code includes no tests")
                        continue
                    if dst == src:
                        continue
                    edges.add((src, dst))
                    if dst not in ALLOWED[src]:
                        problems.append(f"{rel}: includes {inc}: {src} may not depend on {dst}")
    if dot:
        print("digraph layers {")
        for a, b in sorted(edges):
            print(f'  "{a}" -> "{b}";')
        print("}")
    else:
        for a, b in sorted(edges):
            print(f"{a} -> {b}")
    for p in problems:
        print("LAYERING:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
