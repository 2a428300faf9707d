package main

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/soak/invariant"
)

// panicScanner reads the logs of Rejuv's containers for panics: the
// previous container's when one restarted (the kubelet keeps only the
// last), every running one's at the end.
type panicScanner struct {
	stack *deploy.Stack
	send  func(invariant.Observation)
	log   func(format string, args ...any)
}

// logTimeout bounds reading one log.
const logTimeout = 30 * time.Second

// restarted reads the log of pod's previous container.
func (p *panicScanner) restarted(pod *corev1.Pod) {
	ctx, cancel := context.WithTimeout(context.Background(), logTimeout)
	defer cancel()
	p.scan(ctx, pod.Name, true)
}

// scanAll reads the log of every running container of Rejuv's pods.
func (p *panicScanner) scanAll(ctx context.Context) {
	for _, selector := range []string{deploy.HealerSelector, deploy.DaemonSelector} {
		pods, err := p.stack.Pods(ctx, selector)
		if err != nil {
			p.log("scan for panics: %v", err)
			continue
		}
		for _, pod := range pods {
			call, cancel := context.WithTimeout(ctx, logTimeout)
			p.scan(call, pod.Name, false)
			cancel()
		}
	}
}

func (p *panicScanner) scan(ctx context.Context, pod string, previous bool) {
	log, err := p.stack.Logs(ctx, pod, previous)
	if err != nil {
		p.log("scan for panics: %v", err)
		return
	}
	for line := range strings.Lines(log) {
		if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") || strings.Contains(line, "Observed a panic") {
			p.send(invariant.Panic{At: time.Now(), Pod: pod, Line: strings.TrimSpace(line)})
		}
	}
}
