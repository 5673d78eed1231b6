"""The checks of manifests_test.py, one module for each part of the rendered objects.

  lookups     rendering with kubectl kustomize, and finding objects, containers, flags,
              env and mounts in what it renders; running the built berthd
  rendered    the rendered base, classes and monitoring directories and berthd's --help,
              which every check class reads (Rendered)
  objects     every object: names, namespaces, kustomization fields, pinned images
  containers  berthd's container and its CSI sidecars: flags, mounts, the socket
  prestop     the preStop hook and the grace period around it
  cluster     RBAC, the CSIDriver and the storage, snapshot and attributes classes
  crds        the CustomResourceDefinitions: group, names, scope, status subresource,
              structural schemas, printer columns
  ports       listeners, declared ports, probes and the scrape configuration
"""
