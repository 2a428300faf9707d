package harness

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// checkPorts fails, naming every taken port, its component and (when it can
// be found) the process holding it, before anything is started.
func checkPorts(cfg Config) error {
	var errs []error
	for _, p := range cfg.portList() {
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p.port))
		if err == nil {
			_ = l.Close()
			continue
		}
		holder := portHolder(p.port)
		if holder != "" {
			holder = " by " + holder
		}
		errs = append(errs, fmt.Errorf("port %d for %s (config.Ports.%s) is already in use%s", p.port, p.component, p.field, holder))
	}
	if len(errs) > 0 {
		return fmt.Errorf("check ports: %w; stop what holds them or choose other ports", errors.Join(errs...))
	}
	return nil
}

// portHolder describes the process listening on a TCP port, e.g.
// "pid 1234 (nc)", or "" when it cannot be told.
func portHolder(port int) string {
	inode := listeningInode(port)
	if inode == "" {
		return ""
	}
	want := "socket:[" + inode + "]"
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		if link, err := os.Readlink(fd); err == nil && link == want {
			pid := strings.Split(fd, "/")[2]
			comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
			return fmt.Sprintf("pid %s (%s)", pid, strings.TrimSpace(string(comm)))
		}
	}
	return ""
}

// listeningInode finds the socket inode of a TCP listener on port.
func listeningInode(port int) string {
	hexPort := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(hexPort) < 4 {
		hexPort = "0" + hexPort
	}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			fields := strings.Fields(line)
			// local_address is field 1, st is field 3 (0A = LISTEN), inode field 9.
			if len(fields) < 10 || fields[3] != "0A" {
				continue
			}
			if strings.HasSuffix(fields[1], ":"+hexPort) {
				return fields[9]
			}
		}
	}
	return ""
}
