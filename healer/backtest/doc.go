// Package backtest replays a RecreatePolicy over the history of the pods it
// would have selected (their containers' instances and working set, as
// Prometheus and kube-state-metrics recorded them) and reports what the
// policy would have recreated, beside the kernel's OOM kills of the same
// period: caught, missed and unneeded. It runs the manager's own windows
// (package workingset) and passes (recreatepolicy.Replay), not a copy of
// them.
//
// Shared with the kubectl plugin on purpose: kubectl rejuv policy backtest
// runs it on the user's machine.
package backtest
