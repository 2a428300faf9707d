package catalogue

// The rows of the architecture diagram, top to bottom, in pixels: the
// users; the API server; the manager beside the daemon; Prometheus and
// Grafana beside the node. Arrows run in the gaps between the rows.
const (
	rowUsers  = 16
	rowAPI    = 200
	rowParts  = 422
	rowBottom = 730
)

// Architecture is how Rejuv's parts fit, as docs/architecture.svg draws
// it (make docs). Every name in it is one the code, the manifests or
// docs/operations.md use; docs/design.md, section 1, has the same picture
// in text.
func Architecture() Diagram {
	return Diagram{
		Title: "How Rejuv's parts fit",
		Desc: "Users write RecreatePolicies and ContainerRecreateRequests (CRRs) to the cluster's API server, " +
			"with kubectl, GitOps or kubectl rejuv. The manager (Deployment rejuv-healer, two replicas, leader-elected) " +
			"watches policies, pods and CRRs, serves the admission, conversion and readiness-gate webhooks, " +
			"and creates a CRR when a policy's schedule or rules and its safety gates say so. " +
			"The daemon (DaemonSet rejuv-daemon, one per node) watches the CRRs of its own node, " +
			"runs preStop and stops the container through the CRI; the kubelet restarts it in the same pod, " +
			"and the daemon reports in the CRR's status. Prometheus scrapes the metrics of both, " +
			"Grafana shows them, and the manager may query Prometheus for a policy's signals.",
		Width:   960,
		Height:  954,
		Regions: []Region{usersRegion(), apiRegion(), managerRegion(), daemonRegion(), monitoringRegion(), nodeRegion()},
		Arrows:  arrows(),
	}
}

func usersRegion() Region {
	return Region{
		Title: "users: kubectl / kubectl rejuv / GitOps",
		X:     16, Y: rowUsers, W: 928, H: 104,
		Fill: "#f3effa", Stroke: "#8f7cc0",
		Boxes: []Box{
			{Title: "kubectl / GitOps", X: 32, Y: rowUsers + 32, W: 440, H: 60, Lines: []string{
				"apply RecreatePolicy objects: which pods, when;",
				"or a ContainerRecreateRequest by hand",
			}},
			{Title: "kubectl rejuv", X: 488, Y: rowUsers + 32, W: 440, H: 60, Lines: []string{
				"restart POD (a CRR) or KIND/NAME (a rolling run);",
				"create crr, pause --all, status, explain, policy test",
			}},
		},
	}
}

func apiRegion() Region {
	y := rowAPI + 50
	return Region{
		Title:    "the cluster's API server",
		Subtitle: "stores the objects, calls the manager's webhooks, enforces Rejuv's admission policies",
		X:        16, Y: rowAPI, W: 928, H: 122,
		Fill: "#eef1f5", Stroke: "#7d8da1",
		Boxes: []Box{
			{Title: "RecreatePolicy", X: 32, Y: y, W: 212, H: 60, Lines: []string{
				"rejuv.dev/v1alpha1: pods,", "triggers, gates; status",
			}},
			{Title: "CRR", X: 260, Y: y, W: 212, H: 60, Lines: []string{
				"ContainerRecreateRequest,", "apps.kruise.io",
			}},
			{Title: "pods and events", X: 488, Y: y, W: 212, H: 60, Lines: []string{
				"readiness gate and", "condition KruisePodReady",
			}},
			{Title: "admission policies", X: 716, Y: y, W: 212, H: 60, Lines: []string{
				"creating a CRR needs the", "right to delete its pod",
			}},
		},
	}
}

func managerRegion() Region {
	top, bottom := rowParts+50, rowParts+138
	return Region{
		Title:    "manager (Deployment, 2 replicas, leader-elected)",
		Subtitle: "rejuv-healer: the leader runs the controllers, every replica the webhooks",
		X:        16, Y: rowParts, W: 560, H: 226,
		Fill: "#e9f2fc", Stroke: "#5b8cc9",
		Boxes: []Box{
			{Title: "webhooks", X: 32, Y: top, W: 256, H: 76, Lines: []string{
				"CRR mutate and validate;",
				"RecreatePolicy validate;",
				"pod readiness gate; CRD conversion",
			}},
			{Title: "policy controller", X: 304, Y: top, W: 256, H: 76, Lines: []string{
				"selects pods; triggers: cron, or",
				"Rego rules over signals; safety",
				"gates; then creates the CRR",
			}},
			{Title: "signals", X: 32, Y: bottom, W: 256, H: 76, Lines: []string{
				"pods (informer), metrics.k8s.io",
				"working set over a window,",
				"Prometheus PromQL (optional)",
			}},
			{Title: "CRR controller", X: 304, Y: bottom, W: 256, H: 76, Lines: []string{
				"ends CRRs the daemon cannot finish",
				"(deadline, pod gone, node lost);",
				"holds the pod not ready; TTL",
			}},
		},
	}
}

func daemonRegion() Region {
	return Region{
		Title:    "daemon (DaemonSet, one per node)",
		Subtitle: "rejuv-daemon: runs the CRRs of its own node",
		X:        600, Y: rowParts, W: 344, H: 226,
		Fill: "#eaf6ec", Stroke: "#5fa36b",
		Boxes: []Box{
			{Title: "executor", X: 616, Y: rowParts + 50, W: 312, H: 76, Lines: []string{
				"per pod one CRR at a time, oldest first;",
				"preStop, stop, then waits for the new",
				"container to run minStartedSeconds",
			}},
			{Title: "CRI client", X: 616, Y: rowParts + 138, W: 312, H: 76, Lines: []string{
				"finds containerd, CRI-O or cri-dockerd",
				"by its socket (a hostPath mount);",
				"checks it with the Version call",
			}},
		},
	}
}

func monitoringRegion() Region {
	y := rowBottom + 32
	return Region{
		Title: "Prometheus / Grafana",
		X:     16, Y: rowBottom, W: 520, H: 120,
		Fill: "#fdf1e7", Stroke: "#d0874a",
		Boxes: []Box{
			{Title: "Prometheus", X: 32, Y: y, W: 240, H: 76, Lines: []string{
				"scrapes rejuv-healer-metrics",
				"and rejuv-daemon-metrics;",
				"alert rules: config/prometheus",
			}},
			{Title: "Grafana", X: 288, Y: y, W: 232, H: 76, Lines: []string{
				"dashboards: overview, policy,",
				"nodes and daemons",
				"(config/grafana)",
			}},
		},
	}
}

func nodeRegion() Region {
	return Region{
		Title: "node: kubelet + container runtime",
		X:     644, Y: rowBottom, W: 300, H: 208,
		Fill: "#f8f3e6", Stroke: "#b89a4e",
		Boxes: []Box{
			{Title: "container runtime", X: 660, Y: rowBottom + 32, W: 268, H: 60, Lines: []string{
				"containerd, CRI-O or cri-dockerd:",
				"stops and starts the containers",
			}},
			{Title: "kubelet", X: 660, Y: rowBottom + 136, W: 268, H: 60, Lines: []string{
				"sees the container exited, starts",
				"a new one: same pod, IP, volumes",
			}},
		},
	}
}

// arrows are what flows between the parts, each a vertical line but one,
// labelled on its right, the label's lines centred on the gap it crosses.
func arrows() []Arrow {
	usersBottom, apiTop := rowUsers+92, rowAPI
	apiBottom, partsTop := rowAPI+122, rowParts
	partsBottom, bottomTop := rowParts+226, rowBottom
	return []Arrow{
		vertical(100, usersBottom, apiTop, "RecreatePolicy, CRR"),
		vertical(560, usersBottom, apiTop, "CRR, RecreatePolicy (restartAt),", "ConfigMap rejuv-pause"),

		vertical(48, apiBottom, partsTop, "webhooks: admission,", "conversion, readiness gate", "(rejuv-webhook-service)"),
		vertical(330, apiBottom, partsTop, "watch: policies, pods,", "CRRs, PDBs, nodes;", "reads metrics.k8s.io"),
		vertical(500, partsTop, apiBottom, "CRRs (create, end);", "KruisePodReady;", "policy status"),
		vertical(660, apiBottom, partsTop, "watch: CRRs and", "pods of its node"),
		vertical(830, partsTop, apiBottom, "CRR status,", "events"),

		vertical(100, partsBottom, bottomTop, "metrics"),
		vertical(300, bottomTop, partsBottom, "PromQL query results", "(--prometheus-url)"),
		vertical(720, partsBottom, bottomTop, "CRI: ExecSync (preStop),", "StopContainer"),
		// The daemon's metrics pass between Prometheus and the node.
		{
			Points: []Point{{620, partsBottom}, {620, rowBottom + 60}, {536, rowBottom + 60}},
			Label:  Label{Lines: []string{"metrics"}, X: 612, Y: (partsBottom+bottomTop)/2 + 4, End: true},
		},

		vertical(700, rowBottom+136, rowBottom+92, "restarts the container"),
	}
}

// vertical is an arrow at x from one y to another, labelled on its right.
func vertical(x, from, to int, label ...string) Arrow {
	mid := (from + to) / 2
	return Arrow{
		Points: []Point{{x, from}, {x, to}},
		Label:  Label{Lines: label, X: x + 10, Y: mid - (len(label)-1)*lineStep/2 + 4},
	}
}
