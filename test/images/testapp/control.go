package main

import (
	"errors"
	"fmt"
	"strconv"
)

// Control keys, the same for /control query parameters and control file lines.
const (
	keyReady         = "ready"
	keyLive          = "live"
	keyIgnoreSigterm = "ignoreSigterm"
	keyGrowRate      = "growRate"
	keyGrowLimit     = "growLimit"
	keyExit          = "exit"
	keyFree          = "free"
)

// controls is one parsed set of run-time changes; nil fields stay as they are.
type controls struct {
	ready         *bool
	live          *bool
	ignoreSigterm *bool
	growRate      *int64
	growLimit     *int64
	exit          *int
	free          bool
}

// keyValue is one control as written: its order matters when a key repeats.
type keyValue struct{ key, value string }

// parseControls parses all settings before any is applied, so that a request
// or file with one bad value changes nothing. The error names the key and value.
func parseControls(kvs []keyValue) (controls, error) {
	var c controls
	for _, kv := range kvs {
		if err := c.set(kv.key, kv.value); err != nil {
			return controls{}, fmt.Errorf("control %s=%q: %w", kv.key, kv.value, err)
		}
	}
	return c, nil
}

func (c *controls) set(key, value string) error {
	switch key {
	case keyReady:
		return setBoolControl(&c.ready, value)
	case keyLive:
		return setBoolControl(&c.live, value)
	case keyIgnoreSigterm:
		return setBoolControl(&c.ignoreSigterm, value)
	case keyGrowRate:
		return setBytesControl(&c.growRate, value)
	case keyGrowLimit:
		return setBytesControl(&c.growLimit, value)
	case keyExit:
		code, err := strconv.Atoi(value)
		if err != nil || code < 0 || code > 255 {
			return errors.New("want an exit code from 0 to 255")
		}
		c.exit = &code
		return nil
	case keyFree:
		var free *bool
		if err := setBoolControl(&free, value); err != nil {
			return err
		}
		c.free = *free
		return nil
	default:
		return fmt.Errorf("unknown key; want one of %s, %s, %s, %s, %s, %s, %s",
			keyReady, keyLive, keyIgnoreSigterm, keyGrowRate, keyGrowLimit, keyExit, keyFree)
	}
}

func setBoolControl(field **bool, value string) error {
	switch value {
	case "true":
		v := true
		*field = &v
	case "false":
		v := false
		*field = &v
	default:
		return errors.New("want true or false")
	}
	return nil
}

func setBytesControl(field **int64, value string) error {
	v, err := parseBytes(value)
	if err != nil {
		return err
	}
	*field = &v
	return nil
}
