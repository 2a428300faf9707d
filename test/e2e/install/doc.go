// Package install tests the three ways users install Rejuv, as the README
// writes them, on the real cluster: make deploy (kustomize), the single
// config/install.yaml, and the Helm chart with a helm built from its Go
// module. Each installs, runs a recreation through the installed stack,
// uninstalls, and finds the cluster's objects as they were before. It runs
// after package e2e, never beside it: both install cluster-wide objects.
package install
