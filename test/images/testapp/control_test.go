package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseControls(t *testing.T) {
	tests := []struct {
		name    string
		kvs     []keyValue
		want    controls
		wantErr []string // substrings of the error
	}{
		{name: "nothing"},
		{
			name: "all keys",
			kvs: []keyValue{
				{"ready", "false"}, {"live", "true"}, {"ignoreSigterm", "true"},
				{"growRate", "1Mi"}, {"growLimit", "0"}, {"exit", "3"}, {"free", "true"},
			},
			want: controls{ready: new(false), live: new(true), ignoreSigterm: new(true), growRate: new(int64(1 << 20)), growLimit: new(int64(0)), exit: new(3), free: true},
		},
		{name: "last repeat wins", kvs: []keyValue{{"ready", "true"}, {"ready", "false"}}, want: controls{ready: new(false)}},
		{name: "bad bool", kvs: []keyValue{{"ready", "yes"}}, wantErr: []string{"ready", `"yes"`, "true or false"}},
		{name: "bad quantity", kvs: []keyValue{{"growRate", "fast"}}, wantErr: []string{"growRate", `"fast"`}},
		{name: "negative quantity", kvs: []keyValue{{"growLimit", "-1Ki"}}, wantErr: []string{"growLimit", `"-1Ki"`, "negative"}},
		{name: "exit code out of range", kvs: []keyValue{{"exit", "256"}}, wantErr: []string{"exit", `"256"`}},
		{name: "unknown key", kvs: []keyValue{{"colour", "red"}}, wantErr: []string{"colour", `"red"`, "unknown key"}},
		{name: "one bad spoils all", kvs: []keyValue{{"ready", "false"}, {"live", "maybe"}}, wantErr: []string{"live", `"maybe"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseControls(tt.kvs)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("parseControls(%v) = %+v, want an error", tt.kvs, got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := describe(got); d != describe(tt.want) {
				t.Errorf("parseControls(%v) = %s, want %s", tt.kvs, d, describe(tt.want))
			}
		})
	}
}

// describe prints controls with their pointers followed, for comparing.
func describe(c controls) string {
	var parts []string
	add := func(key string, v any) { parts = append(parts, fmt.Sprintf("%s=%v", key, v)) }
	if c.ready != nil {
		add(keyReady, *c.ready)
	}
	if c.live != nil {
		add(keyLive, *c.live)
	}
	if c.ignoreSigterm != nil {
		add(keyIgnoreSigterm, *c.ignoreSigterm)
	}
	if c.growRate != nil {
		add(keyGrowRate, *c.growRate)
	}
	if c.growLimit != nil {
		add(keyGrowLimit, *c.growLimit)
	}
	if c.exit != nil {
		add(keyExit, *c.exit)
	}
	add(keyFree, c.free)
	return strings.Join(parts, " ")
}

func TestStateUpdateLogsOneLinePerChange(t *testing.T) {
	var logs syncBuffer
	a := newApp(defaultOptions(t), slogTo(&logs), "h")
	a.apply(controls{ready: new(false), growRate: new(int64(1024))}, "test")
	a.apply(controls{ready: new(false)}, "test") // no change, no line
	if got := strings.Count(logs.String(), "state changed"); got != 2 {
		t.Errorf("got %d state change lines, want 2:\n%s", got, logs.String())
	}
}
