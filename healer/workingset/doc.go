// Package workingset keeps the memory history that leak rules judge: it
// samples the working set of the containers that policies select, keeps a
// bounded window per container and fits the line the rules read.
package workingset
