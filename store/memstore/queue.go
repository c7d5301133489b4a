package memstore

import (
	"container/heap"

	"github.com/chime-scheduler/chime/store"
)

// dueQueue is a binary heap of the WAITING triggers that have a next fire
// time, earliest first, then highest priority, then by key. It implements
// heap.Interface; use sync to keep it in step with a trigger's state.
type dueQueue []*trigger

func (q dueQueue) Len() int { return len(q) }

func (q dueQueue) Less(i, j int) bool {
	a, b := &q[i].rec, &q[j].rec
	if !a.NextFireTime.Equal(b.NextFireTime) {
		return a.NextFireTime.Before(b.NextFireTime)
	}
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	return keyLess(a.Key, b.Key)
}

func (q dueQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].heapIndex = i
	q[j].heapIndex = j
}

// Push implements heap.Interface.
func (q *dueQueue) Push(x any) {
	t := x.(*trigger)
	t.heapIndex = len(*q)
	*q = append(*q, t)
}

// Pop implements heap.Interface.
func (q *dueQueue) Pop() any {
	old := *q
	n := len(old) - 1
	t := old[n]
	old[n] = nil
	t.heapIndex = -1
	*q = old[:n]
	return t
}

// sync puts t in the queue, moves it, or takes it out, according to its
// state and next fire time. O(log n).
func (q *dueQueue) sync(t *trigger) {
	want := t.rec.State == store.StateWaiting && !t.rec.NextFireTime.IsZero()
	switch {
	case want && t.heapIndex < 0:
		heap.Push(q, t)
	case want:
		heap.Fix(q, t.heapIndex)
	case t.heapIndex >= 0:
		heap.Remove(q, t.heapIndex)
	}
}

// remove takes t out of the queue if it is there.
func (q *dueQueue) remove(t *trigger) {
	if t.heapIndex >= 0 {
		heap.Remove(q, t.heapIndex)
	}
}
