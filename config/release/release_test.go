package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/config"
)

// TestPinValuesPinsBothImages: the chart's values.yaml, pinned, names both
// images in the registry by digest and keeps every other line.
func TestPinValuesPinsBothImages(t *testing.T) {
	values, err := os.ReadFile("../helm/rejuv/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	healer, daemon := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	got, err := pinValues(values, "registry.example.com/team/", []image{{Name: "rejuv-healer", Digest: healer}, {Name: "rejuv-daemon", Digest: daemon}})
	if err != nil {
		t.Fatal(err)
	}
	text := string(got)
	healerAt, daemonAt := strings.Index(text, "  healer:\n"), strings.Index(text, "  daemon:\n")
	for _, want := range []struct {
		line    string
		section int
	}{
		{"    repository: registry.example.com/team/rejuv-healer\n", healerAt},
		{`    digest: "` + healer + `"`, healerAt},
		{"    repository: registry.example.com/team/rejuv-daemon\n", daemonAt},
		{`    digest: "` + daemon + `"`, daemonAt},
	} {
		at := strings.Index(text, want.line)
		if at < 0 || at < want.section || want.section == healerAt && at > daemonAt {
			t.Errorf("pinned values.yaml lacks %q in its section", want.line)
		}
	}
	if a, b := strings.Count(string(values), "\n"), strings.Count(string(got), "\n"); a != b {
		t.Errorf("pinned values.yaml has %d lines, want %d", b, a)
	}
	if _, err := pinValues([]byte("image:\n  healer:\n    repository: x\n"), "r", []image{{Name: "rejuv-healer", Digest: healer}}); err == nil || !strings.Contains(err.Error(), "no image.healer.digest to set") {
		t.Errorf("values without a digest field: %v, want an error naming image.healer.digest", err)
	}
}

// TestCheckRefusesWhatGivesNoRelease names the input at fault.
func TestCheckRefusesWhatGivesNoRelease(t *testing.T) {
	full := filepath.Join(t.TempDir(), "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	version, err := config.Version()
	if err != nil {
		t.Fatal(err)
	}
	good := options{version: version, commit: "abc", registry: "r.example.com", out: t.TempDir(), urlBase: "https://example.com/dl"}
	for _, tt := range []struct {
		change func(*options)
		want   string
	}{
		{func(o *options) { o.version = "0.1.0" }, `-version "0.1.0": want vMAJOR.MINOR.PATCH`},
		{func(o *options) { o.version = "v9.9.9" }, "-version v9.9.9: the chart's appVersion (config/helm/rejuv/Chart.yaml) is " + version},
		{func(o *options) { o.commit = "" }, "-commit: empty"},
		{func(o *options) { o.registry = "" }, "-registry: empty"},
		{func(o *options) { o.urlBase = "ftp://x" }, `-url-base "ftp://x": want an http(s) URL`},
		{func(o *options) { o.out = full }, "not empty"},
	} {
		o := good
		tt.change(&o)
		if err := o.check(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("check(%+v) = %v, want an error containing %q", o, err, tt.want)
		}
	}
	if err := good.check(); err != nil {
		t.Errorf("check of good options: %v", err)
	}
}

// TestChecksumsListEveryOtherFile in sha256sum's format.
func TestChecksumsListEveryOtherFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"b.yaml": "b", "a.tgz": "a"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeChecksums(dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, checksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	want := "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb  a.tgz\n" +
		"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b.yaml\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS =\n%s\nwant\n%s", got, want)
	}
}
