package main

import (
	"io"
	"reflect"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{
			name: "defaults",
			want: options{listen: ":8080", ready: true, live: true, warmUpTime: 30 * time.Second, forgeCount: 1},
		},
		{
			name: "all set",
			args: []string{
				"--listen=127.0.0.1:9000", "--ready=false", "--live=false", "--ignore-sigterm",
				"--startup-delay=2s", "--grow-rate=1Mi", "--grow-limit=2M", "--grow-after=20s", "--free-every=1m", "--exit-after=1m",
				"--exit-code=3", "--control-file=/etc/testapp/control", "--warm-up=150Mi", "--warm-up-time=20s",
				"--forge-url=https://a/x", "--forge-url=https://b/y", "--forge-body={}", "--forge-count=5",
			},
			want: options{
				listen: "127.0.0.1:9000", ignoreSigterm: true, startupDelay: 2 * time.Second,
				growRate: 1 << 20, growLimit: 2_000_000, growAfter: 20 * time.Second, freeEvery: time.Minute, exitAfter: time.Minute, exitCode: 3,
				controlFile: "/etc/testapp/control", warmUp: 150 << 20, warmUpTime: 20 * time.Second,
				forgeURLs: []string{"https://a/x", "https://b/y"}, forgeBody: "{}", forgeCount: 5,
			},
		},
		{name: "bad quantity", args: []string{"--grow-rate=lots"}, wantErr: true},
		{name: "negative quantity", args: []string{"--grow-limit=-1Mi"}, wantErr: true},
		{name: "no warm-up time", args: []string{"--warm-up=1Mi", "--warm-up-time=0s"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFlags(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseFlags(%q) = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "512Ki", want: 512 << 10},
		{in: "1Mi", want: 1 << 20},
		{in: "1.5Mi", want: 3 << 19},
		{in: "2M", want: 2_000_000},
		{in: "1000", want: 1000},
		{in: "0", want: 0},
		{in: "0.5", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "1MB", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseBytes(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
