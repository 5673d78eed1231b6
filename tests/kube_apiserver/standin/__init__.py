"""A stand-in for the Kubernetes API server, for tests of what berthd does against one.

  errors      the Status objects a real server answers with, and the exception carrying one
  resources   what is served: the CRDs' kinds, Nodes, Events and VolumeAttachments, and the
              discovery documents
  admission   what a create of a core kind gets besides: a new Node's taint, an Event's namespace rule
  schema      validation against a CRD's openAPIV3Schema, and pruning of unknown fields
  selectors   label and field selectors
  patch       JSON merge patch (RFC 7386) and JSON patch (RFC 6902)
  store       the objects, the global resourceVersion, the watch history and its compaction
  verbs       create, get, list, update, patch, delete: a real server's rules on the store
  watch       the watch stream: initial events, selector transitions, bookmarks, 410
  table       the meta.k8s.io Table kubectl asks for, from the CRDs' printer columns
  http        the HTTPS request handler: auth, routing, counts, the test hooks
  tls         the CA and server certificate, made with the openssl command
  files       the kubeconfigs and the port file, written atomically (real_server.py's too)
"""
