// Command demo is `make demo`: it starts the local cluster (or reuses it),
// runs Rejuv's manager and daemon against it, applies the samples of
// config/samples and shows, live, what the policies decide and how each
// recreation ends. It leaves the cluster and the objects up for looking
// around.
package main
