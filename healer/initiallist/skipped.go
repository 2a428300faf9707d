package initiallist

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Skipped passes every event but the creates of the informer's initial
// list. Use it only on a watch whose mapping enqueues objects of the
// controller's own kind: those are enqueued at the controller's start.
var Skipped = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return !e.IsInInitialList },
}
