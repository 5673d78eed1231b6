"""The checks of manifests_test.py, one module for each part of the rendered objects.

  lookups     rendering with kubectl kustomize, and finding objects, containers, flags,
              env and mounts in what it renders; running the built berthd
  rendered    the rendered base, classes and monitoring directories, berthd's --help and
              `berthd controller --help`, which every check class reads (Rendered)
  objects     every object: names, namespaces, kustomization fields, pinned images
  containers  the node's and the controller's berthd containers and their CSI sidecars:
              flags, mounts, the socket, leader election, capacity tracking
  prestop     the preStop hook and the grace period around it
  cluster     each service account's RBAC, the CSIDriver and the storage, snapshot and
              attributes classes
  crds        the CustomResourceDefinitions: group, names, scope, status subresource,
              structural schemas, printer columns
  ports       listeners, declared ports and probes of both pods, and the scrape
              configuration
"""
