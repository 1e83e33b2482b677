"""The harness's own calls to a cluster's kube-apiserver, outside the traffic a run measures.

- `kubeconfig`: reading a kubeconfig for the harness's clients, the way kubectl reads it;
- `waiting`: bounded waits and retries (a deadline or an attempt limit on every one; 429/5xx retried);
- `calling`: one HTTP request to a URL, the apiserver's or another (etcd's gateway, a scheduler's /metrics),
  and the unverified TLS for self-signed serving certificates on the loopback;
- `rest`: a few synchronous apiserver calls (readiness, version, objects of the set-up);
- `posting`: creating many objects fast (concurrent POSTs over kept-alive connections);
- `watchloop`: a collection kept up in a thread (list, then short watch requests round after round);
- `pki`: the aggregation layer's certificates (CA, serving and client certs; pure, PEM out);
- `apiservice`: the scheduler's API on a cluster (the Kueue CRDs, the visibility APIService).
"""
