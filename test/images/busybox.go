package images

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// busyboxEnv names a static busybox to use instead of the system's.
const busyboxEnv = "REJUV_BUSYBOX"

// busyboxPaths are where Debian's busybox-static puts it, in order.
var busyboxPaths = []string{"/bin/busybox", "/usr/bin/busybox"}

// busyboxApplets are linked to /bin/busybox in images with Busybox set.
var busyboxApplets = []string{
	"sh", "ls", "cat", "echo", "sleep", "touch", "rm", "mkdir", "ps", "kill",
	"env", "date", "test", "grep", "wget", "head", "tail", "wc", "id", "true", "false",
}

// busyboxHint ends every busybox error with what to do about it.
const busyboxHint = "install the Debian package busybox-static or set " + busyboxEnv + " to a static busybox binary"

// findBusybox returns the path of a static busybox: $REJUV_BUSYBOX when set,
// else the first of busyboxPaths that exists. It must be static because the
// images have no libc for a dynamic one to load.
func findBusybox() (string, error) {
	path := os.Getenv(busyboxEnv)
	if path == "" {
		for _, p := range busyboxPaths {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return "", fmt.Errorf("busybox: none at %v; %s", busyboxPaths, busyboxHint)
		}
	}
	if err := checkStatic(path); err != nil {
		return "", fmt.Errorf("busybox: %w; %s", err, busyboxHint)
	}
	return path, nil
}

// checkStatic fails unless path is an ELF executable without a PT_INTERP
// program header, that is, one that needs no dynamic loader.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s does not exist", path)
	}
	if err != nil {
		return fmt.Errorf("%s is not a readable ELF executable: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", path)
		}
	}
	return nil
}
