package harness

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for the client certificate FILE.crt in
// pkiDir, with the certificates embedded so the file stands alone.
func writeKubeconfig(path, server, pkiDir, certFile string) error {
	ca, err := os.ReadFile(filepath.Join(pkiDir, "ca.crt"))
	if err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	crt, err := os.ReadFile(filepath.Join(pkiDir, certFile+".crt"))
	if err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	key, err := os.ReadFile(filepath.Join(pkiDir, certFile+".key"))
	if err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	const name = "rejuv-harness"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[certFile] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: certFile}
	cfg.CurrentContext = name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
