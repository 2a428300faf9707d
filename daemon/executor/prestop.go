package executor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// preStop runs the preStop hook of the request's container c in its
// instance containerID before its stop, as the kubelet would: exec in the
// container through the CRI, an HTTP GET or a TCP connection to the pod's
// own IP (hookHost), or a sleep. ctx bounds it (the grace period and the
// request's deadline). A failed hook is reported; the stop goes on, as
// with the kubelet.
func (p *pass) preStop(ctx context.Context, c *v1beta1.ContainerRecreateRequestContainer, containerID string) error {
	h, pod, ports := c.PreStop, p.pod, c.Ports
	switch {
	case h == nil:
		return nil
	case h.Exec != nil:
		timeout := int64(30)
		if d, ok := ctx.Deadline(); ok {
			timeout = max(1, int64(time.Until(d).Seconds()))
		}
		resp, err := p.rt.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: containerID, Cmd: h.Exec.Command, Timeout: timeout})
		if err != nil {
			return fmt.Errorf("preStop exec %q: %w", strings.Join(h.Exec.Command, " "), err)
		}
		if resp.ExitCode != 0 {
			return fmt.Errorf("preStop exec %q exited %d: %s", strings.Join(h.Exec.Command, " "), resp.ExitCode, strings.TrimSpace(string(resp.Stderr)))
		}
		return nil
	case h.HTTPGet != nil:
		return preStopHTTP(ctx, h.HTTPGet, pod, ports)
	case h.TCPSocket != nil:
		host, err := hookHost("tcpSocket", h.TCPSocket.Host, pod)
		if err != nil {
			return err
		}
		port, err := resolvePort(h.TCPSocket.Port, ports)
		if err != nil {
			return fmt.Errorf("preStop tcpSocket: %w", err)
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("preStop tcpSocket: %w", err)
		}
		return conn.Close()
	case h.Sleep != nil:
		select {
		case <-ctx.Done():
			return fmt.Errorf("preStop sleep %ds: %w", h.Sleep.Seconds, ctx.Err())
		case <-time.After(v1beta1.SecondsDuration(h.Sleep.Seconds)):
			return nil
		}
	}
	return nil
}

func preStopHTTP(ctx context.Context, g *corev1.HTTPGetAction, pod *corev1.Pod, ports []corev1.ContainerPort) error {
	host, err := hookHost("httpGet", g.Host, pod)
	if err != nil {
		return err
	}
	port, err := resolvePort(g.Port, ports)
	if err != nil {
		return fmt.Errorf("preStop httpGet: %w", err)
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: g.Path}
	if p, err := url.Parse(g.Path); err == nil {
		u.Path, u.RawQuery = p.Path, p.RawQuery
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("preStop httpGet %s: %w", u.String(), err)
	}
	for _, h := range g.HTTPHeaders {
		req.Header.Add(h.Name, h.Value)
	}
	if host := req.Header.Get("Host"); host != "" {
		req.Host = host
	}
	// The kubelet's defaults, where the hook sets none (an empty Accept
	// is sent as none).
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header.Set("User-Agent", hookUserAgent)
	}
	if v, ok := req.Header["Accept"]; !ok {
		req.Header.Set("Accept", "*/*")
	} else if len(v) == 1 && v[0] == "" {
		req.Header.Del("Accept")
	}
	resp, err := hookClient.Do(req)
	if isPlainHTTPAnswer(err) {
		// An https hook answered in plain http: the kubelet tries again
		// in http, without the Authorization header.
		retry := req.Clone(ctx)
		retry.URL.Scheme = "http"
		retry.Header.Del("Authorization")
		resp, err = hookClient.Do(retry)
	}
	if err != nil {
		return fmt.Errorf("preStop httpGet %s: %w", u.String(), err)
	}
	// As the kubelet, any answer counts as the hook having run, whatever
	// its status.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	return resp.Body.Close()
}

// hookHost returns where a preStop httpGet or tcpSocket hook (kind) is
// sent: the pod's own IP. The kubelet sends a hook that names a host from
// the node; the daemon would send it from rejuv-system's network identity,
// which NetworkPolicies may let reach what the pod may not, so a hook that
// names another host is not run. A pod without an IP yet has no address
// to send it to (an empty host would be the daemon's own).
func hookHost(kind, host string, pod *corev1.Pod) (string, error) {
	ip := pod.Status.PodIP
	switch {
	case ip == "":
		return "", fmt.Errorf("preStop %s not run: the pod has no IP yet", kind)
	case host != "" && host != ip:
		return "", fmt.Errorf("preStop %s not run: its host (lifecycle.preStop.%s.host) is %q, and the daemon sends hooks only to the pod's own IP, %s", kind, kind, host, ip)
	}
	return ip, nil
}

// hookUserAgent is the User-Agent of a preStop httpGet the hook sets none
// for, in the kubelet's form (kube-lifecycle/VERSION).
const hookUserAgent = "kube-lifecycle/rejuv"

// isPlainHTTPAnswer tells whether an https request failed because the
// server answered in plain http.
func isPlainHTTPAnswer(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "server gave HTTP response to HTTPS client")
}

// hookClient calls preStop httpGet hooks as the kubelet does: an https
// hook's certificate is not verified (the pod's own, which nothing could
// verify), no proxy, no connection kept, and a redirect to another host
// is not followed: its response counts, so the hook cannot be sent
// elsewhere.
var hookClient = &http.Client{
	Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet: the pod's certificate
		DisableKeepAlives: true,
	},
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if req.URL.Hostname() != via[0].URL.Hostname() {
			return http.ErrUseLastResponse
		}
		return nil
	},
}

// resolvePort turns a number or a port name of the container into a number.
func resolvePort(p intstr.IntOrString, ports []corev1.ContainerPort) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	for _, cp := range ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("the container has no port named %q", p.StrVal)
}
