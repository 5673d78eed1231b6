"""The files a test's API server leaves for its clients, the stand-in's and a real one's
alike: each kubeconfig and the port, written atomically (a client that sees the file reads
it whole)."""

import os

import yaml


def write_atomically(path, text):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def kubeconfig(cluster, server, ca, user, token):
    """A kubeconfig whose context `cluster` is `user` with a bearer token, verifying the
    server with the CA file."""
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": cluster, "cluster": {"server": server, "certificate-authority": ca}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}],
        "current-context": cluster}, sort_keys=False)
