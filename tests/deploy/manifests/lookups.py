"""Rendering deploy/kubernetes with kubectl kustomize, and looking things up in what it
renders (one object of a kind, a container, a flag's value, an env var, a mount's volume or
hostPath, every image) or in the built berthd (its --help). A lookup that finds nothing fails the
check with a message rather than raising a KeyError."""

import re
import subprocess

from deploy_common import Failure, yaml


def expect(cond, message):
    if not cond:
        raise Failure(message)


def render(kubectl, directory):
    proc = subprocess.run([kubectl, "kustomize", directory], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0:
        raise Failure(f"`{kubectl} kustomize {directory}` exited {proc.returncode}: "
                      f"{proc.stderr.strip()}")
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc is not None]


def one(objects, kind):
    found = [o for o in objects if o.get("kind") == kind]
    expect(len(found) == 1, f"expected one {kind}, found {len(found)}")
    return found[0]


def container(pod, name, owner="the DaemonSet"):
    for c in pod.get("containers", []) + pod.get("initContainers", []):
        if c.get("name") == name:
            return c
    raise Failure(f"{owner} has no container named {name}")


def flag_on(args, name):
    """Whether a boolean flag is set: a bare "--name", or "--name=true"."""
    return name in args or flag_value(args, name) == "true"


def flag_names(args):
    """The --flag names in a container's args ("--a=1", "--b", "2" -> ["--a", "--b"])."""
    return [a.split("=", 1)[0] for a in args if a.startswith("--")]


def flag_value(args, name):
    """The value of --name in args, either "--name=V" or "--name", "V"; None when absent."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def env_value(c, name):
    for e in c.get("env", []):
        if e.get("name") == name:
            return e
    return None


def expand(arg, c):
    """Kubernetes' $(VAR) expansion, with a stand-in for values taken from the pod."""
    def sub(m):
        e = env_value(c, m.group(1))
        if e is None:
            return m.group(0)
        return e.get("value", "node-1")
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", sub, arg)


def run_berthd(berthd, args):
    proc = subprocess.run([berthd] + args, capture_output=True, text=True, timeout=10,
                          env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    return proc.returncode, proc.stdout + proc.stderr


def help_flags(text):
    return set(re.findall(r"^\s+(--[a-z0-9-]+)", text, re.M))


def mount_volume(pod, c, mount_path):
    """The pod volume behind c's mount at mount_path, or None."""
    for m in c.get("volumeMounts", []):
        if m.get("mountPath") == mount_path:
            for v in pod.get("volumes", []):
                if v.get("name") == m.get("name"):
                    return v
    return None


def mount_source(pod, c, mount_path):
    """The hostPath behind c's mount at mount_path, and the mount, or (None, None)."""
    for m in c.get("volumeMounts", []):
        if m.get("mountPath") == mount_path:
            for v in pod.get("volumes", []):
                if v.get("name") == m.get("name"):
                    return v.get("hostPath", {}).get("path"), m
    return None, None


def images_in(doc):
    """Every container image named anywhere in one object (containers, initContainers)."""
    found = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                found += [c.get("image") for c in value if isinstance(c, dict)]
            else:
                found += images_in(value)
    elif isinstance(doc, list):
        for item in doc:
            found += images_in(item)
    return found
