// Package workingset keeps the memory history that leak rules judge: it
// samples the working set of the containers that policies select, keeps a
// bounded window per container and fits the line the rules read.
//
// Shared with the kubectl plugin on purpose: kubectl rejuv policy backtest
// samples and windows the working set as the manager does.
package workingset
