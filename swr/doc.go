// Package swr is stampedeless's read-through policy and the Filler that
// acts on it.
//
// The policy, Decide, takes what the store holds for a key and whether the
// key is cooling down after a failed load, and returns how GETFILL answers
// and what origin work that starts. It is a pure function of its inputs,
// so its table (docs/design.md, section The swr decision table) is tested
// without a network, a store or a clock.
//
// The Filler acts on it: it answers from the store when it can, else from
// the key's one flight to the origin (loader.Group), which asks the Fleet
// first in --redis mode (cluster implements it). It remembers the origin's
// recent "no such key" answers and, through loader.Cooldown, its failures.
// commands/readthrough's GETFILL and FILL.INFO call it; its clock is
// Options.Now, the one the store runs on.
package swr
