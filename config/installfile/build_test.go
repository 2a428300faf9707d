package installfile

import (
	"strings"
	"testing"
)

// TestBuildPinsRejuvsImagesInARegistry: config/default built for a
// registry names both of Rejuv's images there, pinned by the digests given,
// and no image of theirs anywhere else.
func TestBuildPinsRejuvsImagesInARegistry(t *testing.T) {
	healer := "sha256:" + strings.Repeat("a", 64)
	daemon := "sha256:" + strings.Repeat("b", 64)
	overrides, err := InRegistry("registry.example.com/team/", map[string]string{"rejuv-healer": healer, "rejuv-daemon": daemon})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Build("../default", overrides...)
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if img, ok := strings.CutPrefix(strings.TrimSpace(line), "image: "); ok {
			images = append(images, img)
		}
	}
	want := []string{"registry.example.com/team/rejuv-healer@" + healer, "registry.example.com/team/rejuv-daemon@" + daemon}
	if strings.Join(images, " ") != strings.Join(want, " ") {
		t.Errorf("images = %v, want %v", images, want)
	}
}

// TestInRegistryRefusesWhatIsNotARegistry names the registry or the digest
// at fault.
func TestInRegistryRefusesWhatIsNotARegistry(t *testing.T) {
	for _, tt := range []struct {
		registry string
		digests  map[string]string
		want     string
	}{
		{"team", nil, `registry "team": want a registry's host`},
		{"Registry.Example.com/Team", nil, `registry "Registry.Example.com/Team": want a registry's host`},
		{"127.0.0.1:5000", map[string]string{"rejuv-healer": "sha256:abc"}, `image rejuv-healer: digest "sha256:abc"`},
	} {
		_, err := InRegistry(tt.registry, tt.digests)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("InRegistry(%q, %v) = %v, want an error containing %q", tt.registry, tt.digests, err, tt.want)
		}
	}
}
