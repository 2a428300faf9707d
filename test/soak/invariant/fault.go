package invariant

// Fault is a kind of fault the soak injects.
type Fault string

// The kinds of fault.
const (
	KillLeader         Fault = "kill -9 the leader"
	KillStandby        Fault = "kill -9 the standby"
	KillDaemon         Fault = "kill -9 a daemon"
	RestartContainerd  Fault = "restart containerd"
	RestartKubelet     Fault = "restart the kubelet"
	RestartAPIServer   Fault = "restart kube-apiserver"
	PauseKubelet       Fault = "pause the kubelet past the node grace"
	RolloutManager     Fault = "roll the manager out"
	RolloutDaemon      Fault = "roll the daemons out"
	WebhookUnreachable Fault = "make the webhook unreachable"
	SlowAPI            Fault = "slow API responses"
	LoseNode           Fault = "lose a node"
)

// Faults are every kind, in the order the summary lists them.
var Faults = []Fault{KillLeader, KillStandby, KillDaemon, RestartContainerd, RestartKubelet,
	RestartAPIServer, PauseKubelet, RolloutManager, RolloutDaemon, WebhookUnreachable, SlowAPI, LoseNode}

// nodeFaults are the kinds aimed at one node: a window's target names it.
var nodeFaults = []Fault{RestartContainerd, RestartKubelet, PauseKubelet, LoseNode}
