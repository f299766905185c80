#!/usr/bin/env python3
"""Checks the deployment artifacts under deploy/ without Docker or a Kubernetes cluster.

  python3 scripts/check-deploy.py [--binary PATH] [--require-static-stdlib]
                                  [--smoke] [--database-url URL]

1. syntax     deploy/compose.yaml and every deploy/k8s/*.yaml (multi-document) parse; the
              kustomization lists every manifest (and `kubectl kustomize` renders it, if kubectl
              is on PATH); the systemd unit passes `systemd-analyze verify` (if present).
2. env        every environment variable set in compose, the k8s manifests (env, ConfigMap,
              Secret), the systemd unit and the Dockerfile's runtime stage is one the service
              reads. The allowed names come from the Swift sources (environment["X"],
              value("X"), integer("X", boolean("X", getenv("X")); POSTGRES_* and PG* are allowed only on
              the postgres container.
3. wiring     k8s readiness probe -> /readyz, liveness -> /healthz, probe / Service / container
              port == PORT == Dockerfile EXPOSE; compose and Dockerfile healthchecks ask /healthz;
              compose's app waits for the one-shot migrate service; Dockerfile shape (toolchain
              version >= swift-tools-version, static stdlib, non-root, STOPSIGNAL, share paths).
              Two database roles everywhere (docs/decisions/0017-two-database-roles.md): compose,
              k8s and systemd each have a migrate step with the owner's URL (MIGRATION_DATABASE_URL)
              that the server never gets; the server's DATABASE_URL names another role; neither is
              the postgres superuser.
4. libraries  with --binary: every shared library the binary loads (ldd) belongs to a package
              the Dockerfile's runtime stage installs, to the base image (libc6, libgcc-s1,
              libstdc++6), or to a dependency apt pulls in with them (read from dpkg on this
              machine). Swift runtime libraries (a binary built without --static-swift-stdlib)
              are reported, and fail with --require-static-stdlib. A missing binary is skipped.
5. smoke      with --smoke and --binary: stages the binary, migrations and public/ in the image's
              /usr/local layout; checks that `serve` with the Dockerfile's ENV alone refuses to
              start without a checkpoint key (one line naming CHECKPOINT_KEY_FILE and
              CHECKPOINT_KEY_GENERATE); runs `serve` with that ENV (HOST/PORT overridden to a free
              local port) and a key file made by openssl (CHECKPOINT_KEY_FILE), runs the Dockerfile and compose HEALTHCHECK commands verbatim,
              asks /healthz and /readyz, and stops it with SIGTERM. With --database-url it also
              runs `countersign migrate` from that layout (no MIGRATIONS_DIR, cwd without
              ./migrations) to show the binary finds <exe>/../share/countersign/migrations, as the
              owner of --owner-url, and checks that serve refuses that owner role.

Exits 0 when every check passes, 1 otherwise. Needs python3 and PyYAML (Debian: python3-yaml).
"""

import base64
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

try:
    import yaml
except ImportError:  # pragma: no cover
    print("check-deploy: PyYAML is missing (apt-get install python3-yaml)", file=sys.stderr)
    sys.exit(1)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEPLOY = os.path.join(ROOT, "deploy")

BASE_IMAGE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6"}
POSTGRES_CONTAINER_VARS = re.compile(r"^(POSTGRES_[A-Z0-9_]+|PG[A-Z0-9_]+)$")
SWIFT_RUNTIME = re.compile(r"^(libswift|libFoundation|lib_FoundationICU|libdispatch|libBlocksRuntime)")


class Report:
    def __init__(self):
        self.rows = []  # (section, status, detail)

    def add(self, section, ok, detail):
        status = {True: "ok", False: "FAIL", None: "skip"}.get(ok, ok)
        self.rows.append((section, status, detail))

    def ok(self, section, detail):
        self.add(section, True, detail)

    def fail(self, section, detail):
        self.add(section, False, detail)

    def info(self, section, detail):
        self.add(section, "info", detail)

    def skip(self, section, detail):
        self.add(section, None, detail)

    @property
    def failed(self):
        return any(status == "FAIL" for _, status, _ in self.rows)

    def print(self):
        width = max(len(s) for s, _, _ in self.rows) if self.rows else 8
        print(f"{'check'.ljust(width)}  status  detail")
        print(f"{'-' * width}  ------  {'-' * 60}")
        for section, status, detail in self.rows:
            lines = detail.splitlines() or [""]
            print(f"{section.ljust(width)}  {status.ljust(6)}  {lines[0]}")
            for extra in lines[1:]:
                print(f"{' ' * width}  {' ' * 6}  {extra}")


def rel(path):
    return os.path.relpath(path, ROOT)


# ------------------------------------------------------------------------------------------------
# 1. syntax


def load_yaml_files(report):
    """Returns {path: [documents]} for compose.yaml and deploy/k8s/*.y*ml."""
    docs = {}
    paths = [os.path.join(DEPLOY, "compose.yaml")]
    paths += sorted(glob.glob(os.path.join(DEPLOY, "k8s", "*.yaml")) + glob.glob(os.path.join(DEPLOY, "k8s", "*.yml")))
    for path in paths:
        if not os.path.exists(path):
            report.fail("syntax", f"{rel(path)} is missing")
            continue
        try:
            with open(path, encoding="utf-8") as f:
                loaded = [d for d in yaml.safe_load_all(f) if d is not None]
        except yaml.YAMLError as error:
            report.fail("syntax", f"{rel(path)}: {error}".replace("\n", " "))
            continue
        docs[path] = loaded
    parsed = sum(len(v) for v in docs.values())
    report.ok("syntax", f"{len(docs)} YAML files, {parsed} documents parse")
    return docs


def check_kustomization(report, docs):
    kpath = os.path.join(DEPLOY, "k8s", "kustomization.yaml")
    if kpath not in docs:
        report.fail("syntax", "deploy/k8s/kustomization.yaml is missing or does not parse")
        return
    listed = set(docs[kpath][0].get("resources", []))
    on_disk = {os.path.basename(p) for p in docs if os.path.dirname(p) == os.path.join(DEPLOY, "k8s")} - {"kustomization.yaml"}
    missing = sorted(listed - on_disk)
    unlisted = sorted(on_disk - listed)
    if missing or unlisted:
        report.fail("syntax", f"kustomization: listed but absent {missing}, present but unlisted {unlisted}")
    else:
        report.ok("syntax", f"kustomization lists all {len(listed)} manifests")
    kubectl = shutil.which("kubectl")
    if not kubectl:
        report.skip("syntax", "kubectl not on PATH: `kubectl kustomize` not run")
        return
    run = subprocess.run([kubectl, "kustomize", os.path.join(DEPLOY, "k8s")], capture_output=True, text=True)
    if run.returncode != 0:
        report.fail("syntax", "kubectl kustomize deploy/k8s: " + run.stderr.strip()[:300])
    else:
        kinds = [d.get("kind") for d in yaml.safe_load_all(run.stdout) if d]
        report.ok("syntax", f"kubectl kustomize renders {len(kinds)} objects: {', '.join(kinds)}")


def check_systemd_syntax(report, unit_path, binary):
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        report.skip("syntax", "systemd-analyze not on PATH: unit not verified")
        return
    if not binary or not os.path.exists(binary):
        report.skip("syntax", "systemd-analyze verify needs --binary (the unit's ExecStart must exist)")
        return
    # The units name /usr/local/bin/countersign; verify copies that point at the given binary, side
    # by side (countersign.service Requires= countersign-migrate.service).
    units = [unit_path] + [p for p in [os.path.join(os.path.dirname(unit_path), "countersign-migrate.service")] if os.path.exists(p)]
    with tempfile.TemporaryDirectory() as tmp:
        copies = []
        for path in units:
            with open(path, encoding="utf-8") as f:
                text = f.read().replace("/usr/local/bin/countersign", os.path.abspath(binary))
            copies.append(os.path.join(tmp, os.path.basename(path)))
            with open(copies[-1], "w", encoding="utf-8") as f:
                f.write(text)
        run = subprocess.run([analyze, "verify", *copies], capture_output=True, text=True, cwd=tmp)
    out = (run.stdout + run.stderr).strip()
    names = " ".join(os.path.basename(p) for p in units)
    if run.returncode != 0 or out:
        report.fail("syntax", f"systemd-analyze verify {names}: " + (out[:300] or f"exit {run.returncode}"))
    else:
        report.ok("syntax", f"systemd-analyze verify {names}: clean")


# ------------------------------------------------------------------------------------------------
# 2. environment variables

ENV_PATTERNS = [
    re.compile(r'environment\[\s*"([A-Z][A-Z0-9_]*)"\s*\]'),
    re.compile(r'\bvalue\(\s*"([A-Z][A-Z0-9_]*)"\s*\)'),
    re.compile(r'\binteger\(\s*"([A-Z][A-Z0-9_]*)"'),
    re.compile(r'\bboolean\(\s*"([A-Z][A-Z0-9_]*)"'),
    re.compile(r'\bgetenv\(\s*"([A-Z][A-Z0-9_]*)"\s*\)'),
]


def service_variables():
    """{name: [file:line]} for every variable the Swift sources (not the tests) read."""
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "Sources", "**", "*.swift"), recursive=True)):
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                for pattern in ENV_PATTERNS:
                    for name in pattern.findall(line):
                        found.setdefault(name, []).append(f"{rel(path)}:{number}")
    return found


def env_names(value):
    """Names from a compose `environment` (mapping or list of K=V / K)."""
    if isinstance(value, dict):
        return list(value.keys())
    if isinstance(value, list):
        return [str(item).split("=", 1)[0] for item in value]
    return []


def dict_env(value):
    """A compose `environment` as {name: value}."""
    return {name: env_value(value, name) for name in env_names(value)}


def env_value(value, name):
    if isinstance(value, dict):
        return value.get(name)
    if isinstance(value, list):
        for item in value:
            key, _, val = str(item).partition("=")
            if key == name:
                return val
    return None


def pod_specs(doc):
    """Pod specs in a workload object (Deployment, Job, CronJob, StatefulSet, DaemonSet, Pod)."""
    kind = doc.get("kind")
    spec = doc.get("spec") or {}
    if kind == "Pod":
        return [spec]
    if kind == "CronJob":
        return [((spec.get("jobTemplate") or {}).get("spec") or {}).get("template", {}).get("spec") or {}]
    if "template" in spec:
        return [(spec.get("template") or {}).get("spec") or {}]
    return []


def containers(pod):
    return (pod.get("initContainers") or []) + (pod.get("containers") or [])


def dockerfile_stages(path):
    """[(name, base, [(instruction, argument)])] with continuation lines joined."""
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    logical, current = [], ""
    for line in raw.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if current and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        logical.append(current)
        current = ""
    args = {}
    stages = []
    for line in logical:
        instruction, _, argument = line.partition(" ")
        instruction = instruction.upper()
        argument = argument.strip()
        if instruction == "ARG" and not stages:
            key, _, default = argument.partition("=")
            args[key] = default
            continue
        if instruction == "FROM":
            parts = argument.split()
            base = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), parts[0])
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else str(len(stages))
            stages.append((name, base, []))
            continue
        if stages:
            stages[-1][2].append((instruction, argument))
    return stages


def dockerfile_env(steps):
    """{name: value} from ENV instructions (K=V ... or K V)."""
    out = {}
    for instruction, argument in steps:
        if instruction != "ENV":
            continue
        if "=" in argument.split()[0]:
            for token in shlex.split(argument):
                key, _, val = token.partition("=")
                out[key] = val
        else:
            key, _, val = argument.partition(" ")
            out[key] = val.strip()
    return out


def systemd_env(path):
    """{name: value} from Environment= lines, and the EnvironmentFile= paths."""
    out, files = {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("Environment="):
                for token in shlex.split(line[len("Environment="):]):
                    key, _, val = token.partition("=")
                    out[key] = val
            elif line.startswith("EnvironmentFile="):
                files.append(line.split("=", 1)[1].lstrip("-"))
    return out, files


def check_env(report, docs, stages, unit_path):
    allowed_map = service_variables()
    allowed = set(allowed_map)
    if not allowed:
        report.fail("env", "found no environment variables in Sources/ (patterns out of date?)")
        return
    report.info("env", "service reads: " + ", ".join(sorted(allowed)))
    problems = []
    used = set()

    def judge(where, names, postgres=False):
        bad = []
        for name in names:
            if name in allowed:
                used.add(name)
            elif postgres and POSTGRES_CONTAINER_VARS.match(name):
                pass
            else:
                bad.append(name)
        if bad:
            problems.append(f"{where}: {', '.join(sorted(bad))}")
        return len(names)

    counts = {}
    compose_path = os.path.join(DEPLOY, "compose.yaml")
    if compose_path in docs and docs[compose_path]:
        services = docs[compose_path][0].get("services") or {}
        n = 0
        for name, service in services.items():
            is_postgres = "postgres" in str(service.get("image", "")).split("/")[-1].split(":")[0]
            n += judge(f"compose service {name}", env_names(service.get("environment")), postgres=is_postgres)
            if service.get("env_file"):
                problems.append(f"compose service {name}: env_file is not checked; set variables inline")
        counts["compose"] = n

    n = 0
    for path, documents in docs.items():
        if os.path.dirname(path) != os.path.join(DEPLOY, "k8s"):
            continue
        for doc in documents:
            kind, name = doc.get("kind"), (doc.get("metadata") or {}).get("name")
            if kind == "ConfigMap":
                n += judge(f"{rel(path)} ConfigMap {name}", list((doc.get("data") or {}).keys()))
            elif kind == "Secret":
                keys = list((doc.get("stringData") or {}).keys()) + list((doc.get("data") or {}).keys())
                n += judge(f"{rel(path)} Secret {name}", keys)
            for pod in pod_specs(doc):
                for container in containers(pod):
                    image = str(container.get("image", ""))
                    is_postgres = image.split("/")[-1].startswith("postgres")
                    names = [e.get("name") for e in container.get("env") or []]
                    n += judge(f"{rel(path)} {kind} {name} container {container.get('name')}", names, postgres=is_postgres)
                    for source in container.get("envFrom") or []:
                        if source.get("prefix"):
                            problems.append(f"{rel(path)} {kind} {name}: envFrom prefix {source['prefix']!r} renames keys")
    counts["k8s"] = n

    unit_env, env_files = systemd_env(unit_path)
    counts["systemd"] = judge("countersign.service Environment=", list(unit_env))
    migrate_unit = os.path.join(DEPLOY, "countersign-migrate.service")
    if os.path.exists(migrate_unit):
        migrate_env, migrate_files = systemd_env(migrate_unit)
        counts["systemd"] += judge("countersign-migrate.service Environment=", list(migrate_env))
        env_files += migrate_files
    if stages:
        runtime_env = dockerfile_env(stages[-1][2])
        counts["Dockerfile"] = judge(f"Dockerfile stage {stages[-1][0]} ENV", list(runtime_env))

    summary = ", ".join(f"{k} {v}" for k, v in counts.items())
    if problems:
        report.fail("env", "variables the service does not read:\n" + "\n".join(problems))
    else:
        report.ok("env", f"all set variables are read by the service ({summary} names)")
    if env_files:
        report.info("env", f"systemd EnvironmentFile {', '.join(env_files)} lives on the host; not checked")
    unused = sorted(allowed - used)
    if unused:
        report.info("env", "read by the service but set nowhere in deploy/ (defaults apply): " + ", ".join(unused))


# ------------------------------------------------------------------------------------------------
# 3. wiring


def k8s_objects(docs):
    for path, documents in docs.items():
        if os.path.dirname(path) == os.path.join(DEPLOY, "k8s"):
            for doc in documents:
                yield path, doc


def resolve_port(port, container):
    if isinstance(port, int):
        return port
    for p in container.get("ports") or []:
        if p.get("name") == port:
            return p.get("containerPort")
    return None


def container_env(container, configmaps, secrets):
    env = {}
    for source in container.get("envFrom") or []:
        if "configMapRef" in source:
            env.update(configmaps.get(source["configMapRef"].get("name"), {}))
        if "secretRef" in source:
            env.update(secrets.get(source["secretRef"].get("name"), {}))
    for e in container.get("env") or []:
        if "value" in e:
            env[e["name"]] = str(e["value"])
    return env


# Variables that carry the owner's power: only a migrate step may have them.
OWNER_ONLY_VARS = ("MIGRATION_DATABASE_URL", "RUNTIME_ROLE_PASSWORD")


def url_user(url):
    """The role a libpq URL connects as ('' when it names none or is not a URL)."""
    try:
        return urllib.parse.urlsplit(str(url or "")).username or ""
    except ValueError:
        return ""


def role_problems(where, serve_env, migrate_env, superusers):
    """Two roles: the server's is neither the migrator's nor a superuser, and it gets no owner secret."""
    problems = []
    serve_user = url_user(serve_env.get("DATABASE_URL"))
    migrate_user = url_user(migrate_env.get("MIGRATION_DATABASE_URL") or migrate_env.get("DATABASE_URL"))
    if not migrate_env.get("MIGRATION_DATABASE_URL"):
        problems.append(f"{where}: the migrate step has no MIGRATION_DATABASE_URL (the owner's URL)")
    for name in OWNER_ONLY_VARS:
        if name in serve_env:
            problems.append(f"{where}: the server is given {name}, the owner's credential")
    if str(serve_env.get("ALLOW_PRIVILEGED_DATABASE_ROLE", "false")).lower() in ("1", "true", "yes", "on"):
        problems.append(f"{where}: the server sets ALLOW_PRIVILEGED_DATABASE_ROLE (development only)")
    if serve_user and serve_user == migrate_user:
        problems.append(f"{where}: serve and migrate both connect as {serve_user}; serve needs the runtime role")
    for label, user in (("serve", serve_user), ("migrate", migrate_user)):
        if user in superusers:
            problems.append(f"{where}: {label} connects as {user}, a superuser")
    return problems, serve_user, migrate_user


def labels_match(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_k8s(report, docs, exposed):
    objects = list(k8s_objects(docs))
    configmaps = {d["metadata"]["name"]: {k: str(v) for k, v in (d.get("data") or {}).items()}
                  for _, d in objects if d.get("kind") == "ConfigMap"}
    secrets = {d["metadata"]["name"]: {k: str(v) for k, v in (d.get("stringData") or {}).items()}
               for _, d in objects if d.get("kind") == "Secret"}
    deployments = [d for _, d in objects if d.get("kind") == "Deployment"]
    if not deployments:
        report.fail("k8s", "no Deployment in deploy/k8s")
        return
    for deployment in deployments:
        dname = deployment["metadata"]["name"]
        pod = pod_specs(deployment)[0]
        pod_labels = ((deployment["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
        problems, notes = [], []
        app_port = None
        for container in pod.get("containers") or []:
            cname = container.get("name")
            env = container_env(container, configmaps, secrets)
            port = int(env.get("PORT", "8080"))
            app_port = port
            if "DATABASE_URL" not in env:
                problems.append(f"{cname}: DATABASE_URL not provided (env or envFrom)")
            if env.get("HOST") not in ("0.0.0.0", "::"):
                problems.append(f"{cname}: HOST={env.get('HOST', '127.0.0.1 (default)')} is not reachable from the kubelet or Service")
            if env.get("MIGRATE_ON_START", "true").lower() not in ("0", "false", "no", "off"):
                notes.append(f"{cname}: MIGRATE_ON_START is on; every replica migrates at start")
            for probe, want in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz"), ("startupProbe", None)):
                spec = container.get(probe)
                if spec is None:
                    if want:
                        problems.append(f"{cname}: no {probe}")
                    continue
                http = spec.get("httpGet") or {}
                path = http.get("path")
                allowed_paths = {want} if want else {"/healthz", "/readyz"}
                if path not in allowed_paths:
                    problems.append(f"{cname}: {probe} path {path!r}, expected {' or '.join(sorted(allowed_paths))}")
                resolved = resolve_port(http.get("port"), container)
                if resolved != port:
                    problems.append(f"{cname}: {probe} port {http.get('port')!r} -> {resolved}, but PORT is {port}")
            resources = container.get("resources") or {}
            for part in ("requests", "limits"):
                if not resources.get(part):
                    problems.append(f"{cname}: no resources.{part}")
            security = container.get("securityContext") or {}
            if not security.get("readOnlyRootFilesystem"):
                problems.append(f"{cname}: readOnlyRootFilesystem is not true")
            if security.get("allowPrivilegeEscalation") is not False:
                problems.append(f"{cname}: allowPrivilegeEscalation is not false")
            run_as_non_root = security.get("runAsNonRoot", (pod.get("securityContext") or {}).get("runAsNonRoot"))
            if not run_as_non_root:
                problems.append(f"{cname}: runAsNonRoot is not set")
            pre_stop = (((container.get("lifecycle") or {}).get("preStop") or {}))
            sleep = None
            if "exec" in pre_stop:
                command = pre_stop["exec"].get("command") or []
                if command and command[0].endswith("sleep") and len(command) > 1:
                    sleep = int(command[1])
            elif "sleep" in pre_stop:
                sleep = int(pre_stop["sleep"].get("seconds", 0))
            grace = pod.get("terminationGracePeriodSeconds", 30)
            if sleep is None:
                problems.append(f"{cname}: no preStop sleep for load-balancer draining")
            elif grace <= sleep:
                problems.append(f"{cname}: terminationGracePeriodSeconds {grace} <= preStop sleep {sleep}")
            else:
                notes.append(f"preStop sleep {sleep}s, grace {grace}s")
        if exposed and app_port not in exposed:
            problems.append(f"PORT {app_port} is not among the Dockerfile's EXPOSE {sorted(exposed)}")
        # Service, HPA, PDB point at this Deployment.
        for _, doc in objects:
            kind = doc.get("kind")
            name = (doc.get("metadata") or {}).get("name")
            spec = doc.get("spec") or {}
            if kind == "Service" and labels_match(spec.get("selector"), pod_labels):
                for p in spec.get("ports") or []:
                    target = p.get("targetPort", p.get("port"))
                    resolved = resolve_port(target, (pod.get("containers") or [{}])[0])
                    if resolved != app_port:
                        problems.append(f"Service {name}: targetPort {target!r} -> {resolved}, expected {app_port}")
                notes.append(f"Service {name}")
            elif kind == "HorizontalPodAutoscaler":
                ref = spec.get("scaleTargetRef") or {}
                if ref.get("kind") == "Deployment" and ref.get("name") == dname:
                    if doc.get("apiVersion") != "autoscaling/v2":
                        problems.append(f"HPA {name}: apiVersion {doc.get('apiVersion')}, expected autoscaling/v2")
                    metrics = [m.get("resource", {}).get("name") for m in spec.get("metrics") or []]
                    if "cpu" not in metrics:
                        problems.append(f"HPA {name}: no CPU metric")
                    notes.append(f"HPA {spec.get('minReplicas')}..{spec.get('maxReplicas')}")
            elif kind == "PodDisruptionBudget" and labels_match((spec.get("selector") or {}).get("matchLabels"), pod_labels):
                notes.append(f"PDB {name}")
        for kind in ("Service", "HPA", "PDB"):
            if not any(n.startswith(kind) for n in notes):
                problems.append(f"no {kind} selects/targets Deployment {dname}")
        if problems:
            report.fail("k8s", f"Deployment {dname}:\n" + "\n".join(problems))
        else:
            report.ok("k8s", f"Deployment {dname}: /readyz and /healthz on port {app_port}; " + ", ".join(notes))
    jobs = [d for _, d in objects if d.get("kind") == "Job"]
    migrating = [(j, c) for j in jobs for c in pod_specs(j)[0].get("containers", []) if "migrate" in (c.get("args") or []) + (c.get("command") or [])]
    if not migrating:
        report.fail("k8s", "no Job runs `migrate`")
        return
    job, job_container = migrating[0]
    migrate_env = container_env(job_container, configmaps, secrets)
    problems, users = [], set()
    for deployment in deployments:
        for container in pod_specs(deployment)[0].get("containers") or []:
            found, serve_user, migrate_user = role_problems(f"Deployment {deployment['metadata']['name']}/{container.get('name')}",
                                                            container_env(container, configmaps, secrets), migrate_env, {"postgres"})
            problems += found
            users.add((serve_user, migrate_user))
    if problems:
        report.fail("k8s", "database roles:\n" + "\n".join(problems))
    else:
        pairs = ", ".join(f"pods as {s}, Job as {m}" for s, m in sorted(users))
        report.ok("k8s", f"migration Job {job['metadata']['name']} runs `countersign migrate` as the owner; {pairs}")


def check_compose(report, docs):
    path = os.path.join(DEPLOY, "compose.yaml")
    if path not in docs:
        return
    services = docs[path][0].get("services") or {}
    problems = []
    db = [n for n, s in services.items() if "postgres" in str(s.get("image", ""))]
    migrate = [n for n, s in services.items() if "migrate" in (s.get("command") or [])]
    apps = [n for n, s in services.items() if "serve" in (s.get("command") or [])]
    if not db:
        problems.append("no postgres service")
    else:
        image = services[db[0]]["image"]
        if not re.search(r":15([.-]|$)", image):
            problems.append(f"postgres image {image} is not PostgreSQL 15")
        test = json.dumps((services[db[0]].get("healthcheck") or {}).get("test"))
        if "pg_isready" not in test:
            problems.append("postgres healthcheck does not use pg_isready")
    if not migrate:
        problems.append("no one-shot service runs `migrate`")
    if not apps:
        problems.append("no service runs `serve`")
    superusers = {str(env_value(services[d].get("environment"), "POSTGRES_USER") or "postgres") for d in db}
    roles = []
    for app in apps:
        for m in migrate:
            found, serve_user, migrate_user = role_problems(f"{app}/{m}", dict_env(services[app].get("environment")),
                                                            dict_env(services[m].get("environment")), superusers)
            problems += found
            roles.append(f"{app} as {serve_user}, {m} as {migrate_user}")
    for app in apps:
        service = services[app]
        env = service.get("environment")
        if str(env_value(env, "MIGRATE_ON_START")).lower() not in ("false", "0", "no", "off"):
            problems.append(f"{app}: MIGRATE_ON_START is not false")
        if str(env_value(env, "HOST")) not in ("0.0.0.0", "::"):
            problems.append(f"{app}: HOST is not 0.0.0.0")
        port = str(env_value(env, "PORT") or "8080")
        depends = service.get("depends_on") or {}
        for m in migrate:
            if not isinstance(depends, dict) or (depends.get(m) or {}).get("condition") != "service_completed_successfully":
                problems.append(f"{app}: does not depend on {m} with condition service_completed_successfully")
        test = " ".join(map(str, (service.get("healthcheck") or {}).get("test") or []))
        if "/healthz" not in test or f"/{port}" not in test and f":{port}" not in test:
            problems.append(f"{app}: healthcheck does not ask /healthz on port {port}")
        published = [str(p).rsplit(":", 1)[-1].split("/")[0] for p in service.get("ports") or []]
        if published and port not in published:
            problems.append(f"{app}: ports {service.get('ports')} do not map container port {port}")
    if problems:
        report.fail("compose", "\n".join(problems))
    else:
        report.ok("compose", f"{', '.join(db)} (pg_isready) -> {', '.join(migrate)} (one-shot) -> {', '.join(apps)} (/healthz, MIGRATE_ON_START=false); "
                  f"{'; '.join(roles)}, never {'/'.join(sorted(superusers))}")


def tools_version():
    with open(os.path.join(ROOT, "Package.swift"), encoding="utf-8") as f:
        m = re.search(r"swift-tools-version:\s*(\d+)\.(\d+)", f.readline())
    return (int(m.group(1)), int(m.group(2))) if m else None


def healthcheck_command(steps):
    for instruction, argument in steps:
        if instruction == "HEALTHCHECK":
            m = re.search(r"\bCMD\s+(.*)$", argument)
            if not m:
                return None
            text = m.group(1).strip()
            return json.loads(text) if text.startswith("[") else ["/bin/sh", "-c", text]
    return None


def apt_packages(steps):
    packages = []
    for instruction, argument in steps:
        if instruction != "RUN":
            continue
        for command in re.split(r"&&|;|\|\|", argument):
            words = command.split()
            if "apt-get" in words and "install" in words:
                for word in words[words.index("install") + 1:]:
                    if not word.startswith("-"):
                        packages.append(word)
    return packages


def check_dockerfile(report, stages):
    if len(stages) < 2:
        report.fail("Dockerfile", f"expected a multi-stage build, found {len(stages)} stage(s)")
        return set()
    build, runtime = stages[0], stages[-1]
    problems, notes = [], []
    m = re.match(r"swift:(\d+)\.(\d+)(?:\.\d+)?-bookworm$", build[1])
    need = tools_version()
    if not m:
        problems.append(f"build stage base {build[1]} is not swift:<6.x>-bookworm")
    elif need and (int(m.group(1)), int(m.group(2))) < need:
        problems.append(f"build stage {build[1]} is older than Package.swift's swift-tools-version {need[0]}.{need[1]}")
    else:
        notes.append(f"build on {build[1]} (tools-version {need[0]}.{need[1]})")
    build_text = " ".join(a for i, a in build[2] if i == "RUN")
    for package in ("libpq-dev", "libpng-dev", "zlib1g-dev", "libdeflate-dev", "pkg-config"):
        if package not in apt_packages(build[2]):
            problems.append(f"build stage does not install {package}")
    if not re.search(r"swift build -c release --static-swift-stdlib --product countersign", build_text):
        problems.append("build stage does not run `swift build -c release --static-swift-stdlib --product countersign`")
    if runtime[1] != "debian:bookworm-slim":
        problems.append(f"runtime stage base {runtime[1]} is not debian:bookworm-slim")
    instructions = {i for i, _ in runtime[2]}
    users = [a for i, a in runtime[2] if i == "USER"]
    if not users or users[-1].split(":")[0] in ("root", "0"):
        problems.append("runtime stage does not switch to a non-root USER")
    stop = [a for i, a in runtime[2] if i == "STOPSIGNAL"]
    if stop != ["SIGTERM"]:
        problems.append(f"STOPSIGNAL is {stop or 'unset'}, expected SIGTERM")
    health = healthcheck_command(runtime[2])
    if not health or "/healthz" not in " ".join(health):
        problems.append("HEALTHCHECK does not ask /healthz")
    exposed = {int(p.split("/")[0]) for i, a in runtime[2] if i == "EXPOSE" for p in a.split()}
    env = dockerfile_env(runtime[2])
    if env.get("HOST") != "0.0.0.0":
        problems.append(f"runtime ENV HOST={env.get('HOST')}, expected 0.0.0.0")
    if int(env.get("PORT", "8080")) not in exposed:
        problems.append(f"PORT {env.get('PORT', '8080')} is not EXPOSEd ({sorted(exposed)})")
    copies = " | ".join(a for i, a in runtime[2] if i == "COPY")
    if "/usr/local/bin/countersign" not in copies:
        problems.append("the binary is not copied to /usr/local/bin/countersign")
    if "/usr/local/share/countersign" not in copies:
        problems.append("migrations/public are not copied under /usr/local/share/countersign")
    if env.get("PUBLIC_DIR") != "/usr/local/share/countersign/public":
        problems.append("PUBLIC_DIR is not /usr/local/share/countersign/public")
    if "ENTRYPOINT" not in instructions and "CMD" not in instructions:
        problems.append("no ENTRYPOINT/CMD")
    if problems:
        report.fail("Dockerfile", "\n".join(problems))
    else:
        report.ok("Dockerfile", "; ".join(notes) + f"; runtime {runtime[1]} installs {' '.join(apt_packages(runtime[2]))}; "
                  f"USER {users[-1]}, EXPOSE {sorted(exposed)}, STOPSIGNAL SIGTERM, HEALTHCHECK /healthz")
    return exposed


def unit_settings(unit_path):
    """{key: [values]} of a systemd unit's settings, in order."""
    with open(unit_path, encoding="utf-8") as f:
        text = f.read()
    settings = {}
    for line in text.splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";")):
            key, _, value = line.partition("=")
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def check_systemd_migrate(settings, migrate_path):
    """Migrations as the owner in a unit of their own, which the server's unit requires and follows."""
    problems = []
    if any("migrate" in v for v in settings.get("ExecStartPre", [])):
        problems.append("ExecStartPre runs migrate in the server's unit: the server would get the owner's URL; "
                        "use countersign-migrate.service")
    unit = os.path.basename(migrate_path)
    if not os.path.exists(migrate_path):
        return problems + [f"deploy/{unit} is missing"]
    for key in ("Requires", "After"):
        if not any(unit in v.split() for v in settings.get(key, [])):
            problems.append(f"{key}= does not name {unit}")
    migrate = unit_settings(migrate_path)
    if not migrate.get("ExecStart", [""])[-1].endswith("countersign migrate"):
        problems.append(f"{unit}: ExecStart does not run `countersign migrate`")
    if migrate.get("Type", [""])[-1] != "oneshot":
        problems.append(f"{unit}: Type is not oneshot")
    shared = set(f.lstrip("-") for f in migrate.get("EnvironmentFile", [])) & set(f.lstrip("-") for f in settings.get("EnvironmentFile", []))
    if shared:
        problems.append(f"{unit} and the server read the same EnvironmentFile {', '.join(sorted(shared))}: the owner's URL must stay apart")
    for name in OWNER_ONLY_VARS:
        if any(v.startswith(name + "=") for v in settings.get("Environment", [])):
            problems.append(f"the server's unit sets {name}")
    return problems


def check_systemd(report, unit_path):
    settings = unit_settings(unit_path)
    want = {"User": None, "EnvironmentFile": None, "NoNewPrivileges": "yes", "ProtectSystem": "strict",
            "PrivateTmp": "yes", "Restart": "on-failure", "KillSignal": "SIGTERM", "TimeoutStopSec": None}
    problems = []
    for key, value in want.items():
        if key not in settings:
            problems.append(f"{key}= missing")
        elif value and settings[key][-1] != value:
            problems.append(f"{key}={settings[key][-1]}, expected {value}")
    if settings.get("User", ["root"])[-1] in ("root", "0"):
        problems.append("runs as root")
    exec_start = settings.get("ExecStart", [""])[-1]
    if not exec_start.endswith("countersign serve"):
        problems.append(f"ExecStart={exec_start} does not run `countersign serve`")
    problems += check_systemd_migrate(settings, os.path.join(DEPLOY, "countersign-migrate.service"))
    if problems:
        report.fail("systemd", "\n".join(problems))
    else:
        report.ok("systemd", f"User={settings['User'][-1]}, EnvironmentFile, hardening, KillSignal=SIGTERM, TimeoutStopSec={settings['TimeoutStopSec'][-1]}; "
                  "Requires/After countersign-migrate.service (migrate as the owner, its own EnvironmentFile)")


# ------------------------------------------------------------------------------------------------
# 4. shared libraries


def elf_needed(path):
    """DT_NEEDED entries of a 64-bit little-endian ELF file, or None if it is not one."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    needed = []
    for s in sections:
        if s[1] != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[s[6]]
        str_off = strtab[4]
        for off in range(s[4], s[4] + s[5], 16):
            tag, val = struct.unpack_from("<qQ", data, off)
            if tag == 0:
                break
            if tag == 1:  # DT_NEEDED
                end = data.index(b"\0", str_off + val)
                needed.append(data[str_off + val:end].decode())
    return needed


def ldd(path):
    run = subprocess.run(["ldd", path], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip() or run.stdout.strip())
    libraries = {}
    for line in run.stdout.splitlines():
        line = line.strip()
        m = re.match(r"^(\S+)\s+=>\s+(\S+)", line)
        if m:
            libraries[m.group(1)] = m.group(2)
        elif line.startswith("/"):
            libraries[os.path.basename(line.split()[0])] = line.split()[0]
    libraries.pop("linux-vdso.so.1", None)
    return libraries


def dpkg_owner(paths):
    """{path: package} using dpkg -S, trying /lib <-> /usr/lib (merged /usr) and the real path."""
    candidates = {}
    for path in paths:
        options = [path, os.path.realpath(path)]
        for p in list(options):
            if p.startswith("/lib"):
                options.append("/usr" + p)
            elif p.startswith("/usr/lib"):
                options.append(p[4:])
        candidates[path] = list(dict.fromkeys(options))
    queries = sorted({c for options in candidates.values() for c in options})
    run = subprocess.run(["dpkg", "-S"] + queries, capture_output=True, text=True)
    owner_of = {}
    for line in run.stdout.splitlines():
        package, _, file = line.partition(": ")
        owner_of[file.strip()] = package.split(":")[0].split(",")[0].strip()
    return {path: next((owner_of[c] for c in options if c in owner_of), None) for path, options in candidates.items()}


def dependency_closure(packages):
    """{package: the named package that pulls it in} over Depends and Pre-Depends, as installed here."""
    pulled = {}
    queue = [(p, p) for p in packages]
    seen = set()
    while queue:
        package, origin = queue.pop()
        if package in seen:
            continue
        seen.add(package)
        pulled.setdefault(package, origin)
        run = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", package], capture_output=True, text=True)
        if run.returncode != 0:
            continue
        for clause in run.stdout.split(","):
            for alternative in clause.split("|"):
                name = alternative.strip().split(" ")[0].split(":")[0]
                if name:
                    queue.append((name, origin))
    return pulled


def check_libraries(report, stages, binary, require_static):
    if not binary:
        report.skip("libraries", "no --binary given: runtime library check not run")
        return
    if not os.path.exists(binary):
        report.skip("libraries", f"{binary} does not exist (build it first: swift build --product countersign); check not run")
        return
    if not shutil.which("ldd") or not shutil.which("dpkg"):
        report.skip("libraries", "ldd or dpkg missing: check not run (needs a Debian machine)")
        return
    release = {}
    if os.path.exists("/etc/os-release"):
        with open("/etc/os-release", encoding="utf-8") as f:
            release = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    codename = release.get("VERSION_CODENAME", "?").strip('"')
    if codename != "bookworm":
        report.info("libraries", f"this machine is {codename}, the runtime image is bookworm: package names may differ")
    runtime_packages = [p for p in apt_packages(stages[-1][2])] if stages else []
    direct = elf_needed(binary) or []
    libraries = ldd(binary)
    owners = dpkg_owner(list(libraries.values()))
    named = set(runtime_packages)
    pulled = dependency_closure(sorted(named | BASE_IMAGE_PACKAGES))
    rows, bad, swift_libs = [], [], []
    used_packages = set()
    for soname, path in sorted(libraries.items(), key=lambda kv: (kv[0] not in direct, kv[0])):
        package = owners.get(path)
        how = "direct" if soname in direct else "indirect"
        if package is None and SWIFT_RUNTIME.match(soname):
            swift_libs.append(soname)
            continue
        if package in named:
            verdict = "named in Dockerfile"
        elif package in BASE_IMAGE_PACKAGES:
            verdict = "base image"
        elif package in pulled and how == "indirect":
            verdict = f"apt dependency of {pulled[package]}"
        else:
            verdict = None
        if package:
            used_packages.add(package)
        rows.append((soname, how, package or "(no package)", verdict or "NOT PROVIDED"))
        if verdict is None:
            bad.append(f"{soname} ({how}, {package or 'no Debian package'}: {path})")
    width = max((len(r[0]) for r in rows), default=10)
    table = "\n".join(f"  {s.ljust(width)}  {h.ljust(8)}  {p.ljust(18)}  {v}" for s, h, p, v in rows)
    summary = f"{binary}: {len(libraries)} libraries ({len(direct)} direct), runtime packages: {' '.join(runtime_packages)}"
    if bad:
        report.fail("libraries", summary + "\n" + table + "\nnot provided by the runtime image:\n  " + "\n  ".join(bad))
    else:
        report.ok("libraries", summary + "\n" + table)
    if swift_libs:
        message = (f"{len(swift_libs)} Swift runtime libraries loaded from the toolchain ({', '.join(sorted(swift_libs)[:4])}, ...): "
                   "this binary was built without --static-swift-stdlib; the image's release build links them in")
        if require_static:
            report.fail("libraries", message)
        else:
            report.info("libraries", message)
    else:
        report.ok("libraries", "no Swift runtime libraries loaded (static Swift stdlib/Foundation)")
    unused = sorted(p for p in named - used_packages if p not in ("ca-certificates", "tzdata"))
    if unused:
        report.info("libraries", "runtime packages the binary does not load: " + ", ".join(unused))


# ------------------------------------------------------------------------------------------------
# 5. smoke run in the image's file layout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_status(url, timeout=5):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


def stage_layout(binary, stage):
    prefix = os.path.join(stage, "usr", "local")
    os.makedirs(os.path.join(prefix, "bin"))
    target = os.path.join(prefix, "bin", "countersign")
    try:
        os.link(os.path.realpath(binary), target)
    except OSError:
        shutil.copy2(binary, target)
    migrations = os.path.join(prefix, "share", "countersign", "migrations")
    public = os.path.join(prefix, "share", "countersign", "public")
    os.makedirs(migrations)
    os.makedirs(public)
    for sql in glob.glob(os.path.join(ROOT, "migrations", "*.sql")):
        shutil.copy2(sql, migrations)
    if os.path.isdir(os.path.join(ROOT, "public")):
        shutil.copytree(os.path.join(ROOT, "public"), public, dirs_exist_ok=True)
    return prefix


def check_smoke(report, stages, docs, binary, database_url, owner_url=None):
    if not binary or not os.path.exists(binary):
        report.skip("smoke", "needs an existing --binary; not run")
        return
    runtime = stages[-1][2]
    health = healthcheck_command(runtime)
    scratch = os.path.join(ROOT, ".build-deploycheck")
    os.makedirs(scratch, exist_ok=True)
    stage = tempfile.mkdtemp(dir=scratch)
    process = None
    try:
        prefix = stage_layout(binary, stage)
        exe = os.path.join(prefix, "bin", "countersign")
        workdir = os.path.join(prefix, "share", "countersign")
        env = {k: v.replace("/usr/local", prefix) for k, v in dockerfile_env(runtime).items()}
        port = free_port()
        env.update(HOST="127.0.0.1", PORT=str(port), MIGRATE_ON_START="false",
                   DATABASE_URL=database_url or "postgres://countersign@127.0.0.1:1/unreachable")
        # The image's DATA_DIR (/var/lib/countersign) stands in the staged layout, never this machine's /var/lib.
        env["DATA_DIR"] = os.path.join(stage, "data")
        base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}

        # The image generates no checkpoint key: without CHECKPOINT_KEY_FILE (or the development setting
        # CHECKPOINT_KEY_GENERATE=true) serve refuses to start, with one line naming both.
        run = subprocess.run([exe, "serve"], env=dict(base_env, **env), cwd=workdir, capture_output=True, text=True, timeout=60)
        named = [line for line in run.stderr.splitlines() if "CHECKPOINT_KEY_FILE" in line and "CHECKPOINT_KEY_GENERATE" in line]
        if run.returncode != 0 and len(named) == 1 and not os.path.exists(env["DATA_DIR"]):
            report.ok("smoke", f"serve without a checkpoint key refuses to start (exit {run.returncode}): {named[0].strip()[:120]}…")
        else:
            report.fail("smoke", f"serve without a checkpoint key: exit {run.returncode}, stderr {run.stderr.strip()[-300:]!r}")
        # As in Kubernetes: a key file made out of band (openssl), named by CHECKPOINT_KEY_FILE.
        key_file = os.path.join(stage, "checkpoint.pem")
        made = shutil.which("openssl") and subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", key_file],
                                                          capture_output=True).returncode == 0
        if made:
            env["CHECKPOINT_KEY_FILE"] = key_file
        else:
            env["CHECKPOINT_KEY_GENERATE"] = "true"
            report.info("smoke", "no openssl: serve runs with CHECKPOINT_KEY_GENERATE=true instead of a key file")
        # Nor does it generate data keys: without DATA_KEY_FILE (or DATA_KEY_GENERATE=true) serve
        # refuses, with one line naming both, and nothing is stored in clear instead.
        run = subprocess.run([exe, "serve"], env=dict(base_env, **env), cwd=workdir, capture_output=True, text=True, timeout=60)
        named = [line for line in run.stderr.splitlines() if "DATA_KEY_FILE" in line and "DATA_KEY_GENERATE" in line]
        if run.returncode != 0 and len(named) == 1:
            report.ok("smoke", f"serve without data keys refuses to start (exit {run.returncode}): {named[0].strip()[:120]}…")
        else:
            report.fail("smoke", f"serve without data keys: exit {run.returncode}, stderr {run.stderr.strip()[-300:]!r}")
        # As in Kubernetes: a key file made out of band (32 random bytes in base64 behind a key id).
        data_keys = os.path.join(stage, "data-keys")
        with open(os.open(data_keys, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as keys:
            keys.write("deploy-check-1 " + base64.b64encode(os.urandom(32)).decode() + "\n")
        env["DATA_KEY_FILE"] = data_keys

        if database_url:
            # As the owner (--owner-url); the runtime role is DATABASE_URL's user, which serve uses below.
            migrate_env = dict(base_env, MIGRATION_DATABASE_URL=owner_url or database_url,
                               RUNTIME_ROLE=url_user(database_url))  # no MIGRATIONS_DIR: <exe>/../share lookup
            run = subprocess.run([exe, "migrate"], env=migrate_env, cwd=stage, capture_output=True, text=True, timeout=120)
            lines = run.stdout.strip().splitlines() or [run.stderr.strip()]
            if run.returncode == 0:
                report.ok("smoke", f"migrate from the image layout (<exe>/../share/countersign/migrations): {'; '.join(lines[-3:])}")
            else:
                report.fail("smoke", f"migrate from the image layout exited {run.returncode}: {run.stderr.strip()[-300:]}")
            if owner_url and url_user(owner_url) != url_user(database_url):
                run = subprocess.run([exe, "serve"], env=dict(base_env, **dict(env, DATABASE_URL=owner_url)), cwd=workdir,
                                     capture_output=True, text=True, timeout=60)
                named = [line for line in run.stderr.splitlines() if "ALLOW_PRIVILEGED_DATABASE_ROLE" in line]
                if run.returncode != 0 and len(named) == 1:
                    report.ok("smoke", f"serve as the owner refuses to start (exit {run.returncode}): {named[0].strip()[:140]}…")
                else:
                    report.fail("smoke", f"serve as the owner: exit {run.returncode}, stderr {run.stderr.strip()[-300:]!r}")
        else:
            report.skip("smoke", "no --database-url: `countersign migrate` from the image layout not run")

        log = open(os.path.join(stage, "serve.log"), "w+")
        process = subprocess.Popen([exe, "serve"], env=dict(base_env, **env), cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None and http_status(f"http://127.0.0.1:{port}/healthz", 1) != 200:
            time.sleep(0.3)
        results = []
        ok = True
        status = http_status(f"http://127.0.0.1:{port}/healthz")
        ok &= status == 200
        results.append(f"GET /healthz {status}")
        ready = http_status(f"http://127.0.0.1:{port}/readyz")
        want_ready = 200 if database_url else 503
        ok &= ready == want_ready
        results.append(f"GET /readyz {ready} (want {want_ready}{'' if database_url else ', no database'})")
        if health:
            run = subprocess.run(health, env=dict(base_env, PORT=str(port)), capture_output=True, text=True, timeout=10)
            ok &= run.returncode == 0
            results.append(f"Dockerfile HEALTHCHECK exit {run.returncode}")
        compose_path = os.path.join(DEPLOY, "compose.yaml")
        for name, service in ((docs.get(compose_path) or [{}])[0].get("services") or {}).items():
            test = (service.get("healthcheck") or {}).get("test") or []
            if "serve" in (service.get("command") or []) and test and test[0] == "CMD":
                container_port = str(env_value(service.get("environment"), "PORT") or "8080")
                command = [part.replace(f"/{container_port}", f"/{port}") for part in test[1:]]
                run = subprocess.run(command, capture_output=True, text=True, timeout=10)
                ok &= run.returncode == 0
                results.append(f"compose {name} healthcheck exit {run.returncode}")
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=30)
            results.append(f"SIGTERM -> exit {code} in {time.monotonic() - started:.1f}s")
            ok &= code == 0
        except subprocess.TimeoutExpired:
            results.append("SIGTERM -> still running after 30s")
            ok = False
        process = None
        log.seek(0)
        tail = log.read()[-400:]
        log.close()
        if ok:
            report.ok("smoke", "serve in the image layout: " + "; ".join(results))
        else:
            report.fail("smoke", "serve in the image layout: " + "; ".join(results) + "\nlog tail: " + tail)
    finally:
        if process is not None:
            process.kill()
            process.wait()
        shutil.rmtree(stage, ignore_errors=True)
        try:
            os.rmdir(scratch)
        except OSError:
            pass


# ------------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", help="a built countersign binary for the ldd and smoke checks (skipped when absent)")
    parser.add_argument("--require-static-stdlib", action="store_true",
                        help="fail when the binary loads Swift runtime libraries (use with a --static-swift-stdlib build)")
    parser.add_argument("--smoke", action="store_true", help="run the binary in the image's file layout and probe it")
    parser.add_argument("--database-url", help="with --smoke: the runtime role's URL of a scratch database that serve uses")
    parser.add_argument("--owner-url", help="with --database-url: the owner's URL of it, for `countersign migrate` (default: --database-url)")
    options = parser.parse_args()

    report = Report()
    docs = load_yaml_files(report)
    check_kustomization(report, docs)
    dockerfile = os.path.join(DEPLOY, "Dockerfile")
    unit = os.path.join(DEPLOY, "countersign.service")
    stages = dockerfile_stages(dockerfile) if os.path.exists(dockerfile) else []
    if not stages:
        report.fail("Dockerfile", "deploy/Dockerfile is missing or has no FROM")
    if not os.path.exists(unit):
        report.fail("systemd", "deploy/countersign.service is missing")
    else:
        check_systemd_syntax(report, unit, options.binary)
        check_systemd(report, unit)
    check_env(report, docs, stages, unit)
    exposed = check_dockerfile(report, stages) if stages else set()
    check_compose(report, docs)
    check_k8s(report, docs, exposed)
    if stages:
        check_libraries(report, stages, options.binary, options.require_static_stdlib)
        if options.smoke:
            check_smoke(report, stages, docs, options.binary, options.database_url, options.owner_url)
    report.print()
    print("check-deploy: " + ("FAILED" if report.failed else "all checks passed"))
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
