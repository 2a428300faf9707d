// Package intern keeps one copy of each value many of the manager's cached
// objects hold alike: namespaces, label and annotation keys, the owners
// and labels of one template's pods, the strategy of one policy's
// requests. Each table is bounded; past its bound it starts afresh, the
// values handed out staying valid.
package intern
