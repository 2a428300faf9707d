package plugin

import "fmt"

// UsageError is a command line that cannot be run as given: the process
// exits with cli.ExitUsage.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// FailedError is work that ran and failed (a recreation that failed, a
// policy test whose results differ from those expected), which the
// command has reported already: the process exits non-zero without
// printing it again.
type FailedError struct{ What string }

func (e *FailedError) Error() string { return e.What }
