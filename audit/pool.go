package audit

import (
	"context"
	"sync"
)

// pool is the audit's one set of workers: n goroutines that visit each job
// sent on jobs and send the result on results. The crawl and -compare
// both fetch through one, so that -concurrency bounds them alike.
type pool struct {
	jobs    chan job
	results chan *result
	wg      sync.WaitGroup
}

// newPool starts n workers that call visit(ctx, job) for each job.
func newPool(ctx context.Context, n int, visit func(context.Context, job) *result) *pool {
	p := &pool{jobs: make(chan job), results: make(chan *result)}
	for range n {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for j := range p.jobs {
				p.results <- visit(ctx, j)
			}
		}()
	}
	return p
}

// stop ends the workers once they have sent their results, and then
// closes results. The caller must read every result of a job it sent
// before, or alongside, stop.
func (p *pool) stop() {
	close(p.jobs)
	p.wg.Wait()
	close(p.results)
}
