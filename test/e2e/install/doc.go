// Package install tests the three ways users install Rejuv, as the README
// writes them, on the real cluster: make deploy (kustomize), the single
// config/install.yaml, and the Helm chart with a helm built from its Go
// module, and a release's install file and chart. Each installs, runs a
// recreation through the installed stack, uninstalls, and finds the
// cluster's objects as they were before; TestUpgradeKeepsWorkInFlight
// installs the previous release by each path, upgrades to this one with
// work in flight, and uninstalls while a pod is held. It never runs
// beside package e2e: both install cluster-wide objects. make test runs
// the paths from the source tree (TestInstallWithTheSingleFile,
// TestInstallWithHelm, TestInstallBesideOpenKruise) on the oldest
// supported Kubernetes, the others on the newest.
package install
