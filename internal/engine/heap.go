package engine

import "github.com/chime-scheduler/chime/store"

// triggerHeap orders acquired triggers by fire time, then priority (highest
// first).
type triggerHeap []store.TriggerRecord

func (h triggerHeap) Len() int { return len(h) }
func (h triggerHeap) Less(i, j int) bool {
	if !h[i].NextFireTime.Equal(h[j].NextFireTime) {
		return h[i].NextFireTime.Before(h[j].NextFireTime)
	}
	return h[i].Priority > h[j].Priority
}
func (h triggerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *triggerHeap) Push(x any)   { *h = append(*h, x.(store.TriggerRecord)) }
func (h *triggerHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	*h = old[:n-1]
	return x
}
