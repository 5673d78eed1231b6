"""A CA and a server certificate for 127.0.0.1 and localhost, made with the openssl command
(the stdlib makes no certificates), so clients verify the stand-in as they verify a real
server: with the CA the kubeconfig names."""

import os
import subprocess


def openssl(*args, cwd):
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)}: {proc.stderr.strip()}")


def make_certs(directory):
    """Write ca.crt, server.crt and server.key into directory; returns their paths."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.crt", "-days", "2", "-subj", "/CN=berth-standin-ca", cwd=directory)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
             "server.csr", "-subj", "/CN=localhost", cwd=directory)
    with open(os.path.join(directory, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "san.ext",
             cwd=directory)
    return tuple(os.path.join(directory, n) for n in ("ca.crt", "server.crt", "server.key"))
