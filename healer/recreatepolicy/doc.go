// Package recreatepolicy is the policy controller: a pass over a
// RecreatePolicy reads its pods and requests, judges them by its rules,
// has the planner plan the pass (healer/planner: no client call) and acts
// on the plan (the requests that get through, budget charges, events),
// then writes the status once; PreviewPolicy runs the same steps and
// renders the plan. It never stops a container itself.
//
// Shared with the kubectl plugin on purpose: kubectl rejuv policy test and
// explain run PreviewPolicy, the controller's own steps.
package recreatepolicy
