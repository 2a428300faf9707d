package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a component the harness started, identified by its PID and the
// kernel's start time for that PID, so that a reused PID is never mistaken
// for it.
type Process struct {
	Name      string `json:"name"`
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
	Log       string `json:"log"`

	// exited is closed when the harness started the process itself and
	// has reaped it.
	exited chan struct{}
}

// spec describes how to start a component.
type spec struct {
	name string
	path string
	args []string
	env  []string
	dir  string
}

// startProcess starts a component in its own session with output to its log
// file, so that it outlives the harness command (make up) and is stopped only
// through Down.
func startProcess(logDir string, s spec) (*Process, error) {
	if !isExecutable(s.path) {
		return nil, fmt.Errorf("start %s: binary %q is missing or not executable", s.name, s.path)
	}
	logPath := filepath.Join(logDir, s.name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: open log: %w", s.name, err)
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "==== %s harness: %s %s\n", time.Now().Format(time.RFC3339), s.path, strings.Join(s.args, " "))
	cmd := exec.Command(s.path, s.args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.name, err)
	}
	p := &Process{Name: s.name, PID: cmd.Process.Pid, Log: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	st, err := procStartTime(p.PID)
	if err != nil {
		// It died at once; the log says why.
		return p, nil
	}
	p.StartTime = st
	return p, nil
}

// Alive reports whether the process is still the one the harness started
// and has not exited.
func (p *Process) Alive() bool {
	if p == nil || p.PID <= 0 {
		return false
	}
	if p.exited != nil {
		select {
		case <-p.exited:
			return false
		default:
		}
	}
	st, state, err := procStat(p.PID)
	if err != nil || state == "Z" || state == "X" {
		return false
	}
	return p.StartTime == 0 || st == p.StartTime
}

// Stop sends SIGTERM (and SIGCONT, for a paused process), waits up to
// grace, then SIGKILL, and waits for the process to be gone. Stopping a process that is already gone is not an error.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Alive() {
		return nil
	}
	if err := syscall.Kill(p.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s (pid %d): %w", p.Name, p.PID, err)
	}
	// A paused process (Pause) takes its SIGTERM once continued.
	_ = syscall.Kill(p.PID, syscall.SIGCONT)
	if p.waitGone(grace) {
		return nil
	}
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", p.Name, p.PID, err)
	}
	if !p.waitGone(5 * time.Second) {
		return fmt.Errorf("stop %s (pid %d): still running after SIGKILL", p.Name, p.PID)
	}
	return nil
}

func (p *Process) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !p.Alive() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !p.Alive()
}

// LogTail returns the last n lines of the process's log.
func (p *Process) LogTail(n int) string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return tail(string(b), n)
}

// waitReady polls check until it succeeds, the process dies or ctx ends; the
// error of a failed start carries the end of the component's log.
func (p *Process) waitReady(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if !p.Alive() {
			return fmt.Errorf("%s exited during start-up (log %s):\n%s", p.Name, p.Log, indent(p.LogTail(25)))
		}
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w (log %s):\n%s", p.Name, timeout, last, p.Log, indent(p.LogTail(25)))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// procStat reads a process's start time (in clock ticks since boot) and
// state from /proc.
func procStat(pid int) (startTime uint64, state string, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", err
	}
	// The command name may contain spaces and parentheses; fields start
	// after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, "", fmt.Errorf("parse /proc/%d/stat", pid)
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); start time is field 22.
	if len(fields) < 20 {
		return 0, "", fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(fields))
	}
	st, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("parse /proc/%d/stat start time: %w", pid, err)
	}
	return st, fields[0], nil
}

func procStartTime(pid int) (uint64, error) {
	st, _, err := procStat(pid)
	return st, err
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func since(t time.Time) time.Duration {
	return time.Since(t).Round(10 * time.Millisecond)
}
