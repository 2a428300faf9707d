package config

import (
	_ "embed"
	"fmt"
	"regexp"
)

//go:embed helm/rejuv/Chart.yaml
var chart []byte

var appVersion = regexp.MustCompile(`(?m)^appVersion:\s*"?([^"\s]+)"?\s*$`)

// Version is Rejuv's version as the Helm chart states it: the tag of the
// images that make images builds and every install path names.
func Version() (string, error) {
	return VersionOf(chart)
}

// VersionOf is the version a Chart.yaml states (its appVersion): another
// tree's, such as the previous release's.
func VersionOf(chart []byte) (string, error) {
	m := appVersion.FindSubmatch(chart)
	if m == nil {
		return "", fmt.Errorf("read Rejuv's version: config/helm/rejuv/Chart.yaml has no appVersion")
	}
	return string(m[1]), nil
}
