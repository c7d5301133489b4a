// Package shard keeps the state of sharded firings in the database: one
// parent per firing of a job with shards, and one item per shard, so
// that whether a firing is done is decided from durable state alone.
//
// The protocol, step by step (see docs/sharding.md):
//
//  1. The node that runs a sharded job's firing creates its parent (state
//     creating) with its items (state pending) in one transaction
//     ([Store.Create]). Creating it again creates nothing.
//  2. It records the parent's execution in the history and schedules one
//     one-shot trigger per item, whose key is derived from the parent
//     and the item's index, then marks the parent running
//     ([Store.Created]). A node that dies in between leaves a parent
//     creating; another node finishes the step ([Store.Stalled]).
//  3. An item's attempt starts only through [Store.Start], which refuses
//     an item that already ended (so an item runs at most once to
//     success) and an item another firing of the same index already took
//     (so a trigger made twice runs once).
//  4. An item's final end ([Store.End]) locks the parent's row, marks the
//     item succeeded or failed and counts the items left, in one
//     transaction; the end that leaves none decides the parent, in that
//     same transaction. The node that decided records the parent's end in
//     the history and marks it recorded ([Store.Recorded]); a parent
//     decided and not recorded for a while is recorded by another node.
//  5. [Store.RerunFailed] turns a failed parent back to creating, in a new
//     round, with its failed items pending again; step 2 follows.
package shard
