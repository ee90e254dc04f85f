package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/tools"
)

// Tasks: a call of a tool whose Info.Task allows it may run as a task. The
// client gets a handle at once, after everything that decides whether the
// call may run at all (validation, budget, approval), and polls it; the
// work runs in the background under the rest of the tool's governance
// (limits, timeout, logging, metrics). Task records live in the state
// store, so that any replica answers for any task:
//
//	task:<id>        the record (status, last progress message, result)
//	task-alive:<id>  renewed every second by the replica running the task;
//	                 a working task whose mark is gone ended with its replica
//	task-final:<id>  the task's terminal record: the first one written wins
//	                 (SET NX), and it is read before task:<id>, so a
//	                 cancelled task stays cancelled when its work ends
//	                 later, and a late progress report cannot revive it;
//	                 the replica running the task looks for it at each
//	                 heartbeat, and stops the work when it is there (a
//	                 cancel's message to it may have been lost)
//
// The protocol side (both eras' shapes and methods) is in taskproto.go.

// Defaults for task settings.
const (
	// DefaultTaskTTL is how long a task and its result are kept after the
	// task is created, and the most a client may ask for (a task still
	// running then is kept until it ends; see taskRecord.storeTTL).
	DefaultTaskTTL = time.Hour
	// DefaultTaskPollInterval is the polling interval suggested to clients.
	DefaultTaskPollInterval = time.Second
)

// maxRunningTasks bounds the tasks one server runs at once (each holds a
// goroutine, and a process or a connection while its tool runs); past it,
// a call that would become a task is refused before it is created.
const maxRunningTasks = 1000

// Task liveness: how often a running task's replica renews its mark, and
// how long the mark lives. A task whose replica dies is seen failed at
// most taskAliveTTL after the death (on the next poll).
const (
	taskHeartbeat = time.Second
	taskAliveTTL  = 4 * time.Second
)

// Task statuses as stored. A task that ran to its end is "completed"
// whether its result is an error or not (the 2025-11-25 view calls an
// error result "failed"; see taskView); "failed" is a task that has no
// result: its replica stopped, or the server shut down, first.
const (
	taskWorking   = "working"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

// taskRecord is what the store keeps of a task.
type taskRecord struct {
	ID      string          `json:"id"`
	Owner   string          `json:"o,omitempty"` // the principal or session that created it ("": none)
	Tool    string          `json:"t"`
	Status  string          `json:"s"`
	Message string          `json:"m,omitempty"` // the status message: the last progress report, or why it ended
	Created time.Time       `json:"c"`
	Updated time.Time       `json:"u"`
	TTL     time.Duration   `json:"ttl"`
	Poll    time.Duration   `json:"p"`
	Result  json.RawMessage `json:"r,omitempty"` // the CallToolResult, once completed
	IsError bool            `json:"e,omitempty"` // the result is an error result
}

func (r *taskRecord) terminal() bool { return r.Status != taskWorking }

// expires is when the record goes, unless the task is still running
// then (see storeTTL).
func (r *taskRecord) expires() time.Time { return r.Created.Add(r.TTL) }

// keep is how long a task that outlives its TTL is kept past its last
// sign of life (its replica's heartbeat), and its end past the end: its
// TTL, and never less than twice the liveness mark's life, so that a poll
// sees it between two heartbeats, and sees the replica that ran it gone.
func (r *taskRecord) keep() time.Duration { return max(r.TTL, 2*taskAliveTTL) }

// storeTTL is how long the store keeps r, written now: until its TTL is
// over; a working task near or past it, for keep, which the heartbeat of
// its replica renews. A task is never dropped while it runs: its result
// would be lost, and the work would run on where no one can read or
// cancel it.
func (r *taskRecord) storeTTL() time.Duration {
	ttl := time.Until(r.expires())
	if !r.terminal() && ttl < 2*taskAliveTTL {
		ttl = r.keep()
	}
	return ttl
}

// Errors of the task operations; the protocol side maps them to JSON-RPC.
var (
	errTaskNotFound = errors.New("task not found: it never existed, it expired, or it belongs to another client")
	errTaskTerminal = errors.New("the task has already ended")
)

// taskEngine starts, watches and ends tasks.
type taskEngine struct {
	s    *Server
	ttl  time.Duration
	poll time.Duration

	mu      sync.Mutex
	running map[string]context.CancelFunc // tasks running on this replica
	owned   map[string]int                // task places taken, by owner (see reserve)
	places  int                           // task places taken in all
	stop    func()                        // the cancel subscription
}

// chanTaskCancel carries the id of a task cancelled on any replica.
const chanTaskCancel = "tasks:cancel"

func newTaskEngine(s *Server) *taskEngine {
	e := &taskEngine{s: s, ttl: s.opts.TaskTTL, poll: s.opts.TaskPollInterval, running: map[string]context.CancelFunc{}, owned: map[string]int{}}
	e.stop = s.store.Subscribe(chanTaskCancel, func(msg []byte) {
		e.mu.Lock()
		cancel := e.running[string(msg)]
		e.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	})
	return e
}

func (e *taskEngine) close() { e.stop() }

func taskKey(id string) string { return "task:" + id }

// taskOwner is who a task created in ctx belongs to: the authenticated
// principal, else the session, else no one (a sessionless client without
// authentication: the task id, unguessable, is then the only key).
func taskOwner(ctx context.Context) string {
	sess, _ := tools.SessionFrom(ctx)
	switch {
	case sess.Principal != "":
		return sess.Principal
	case sess.ID != "":
		return "session:" + sess.ID
	}
	return ""
}

// maxOwnerTasks is the most tasks one owner (a principal, or a session)
// may have running on this replica: twice the calls a session runs at once
// (the rest of them wait their turn), so that one client cannot take the
// server's every task place (maxRunningTasks) from the others. Tasks
// without an owner (sessionless clients without authentication, which
// cannot be told apart) share only the server's bound.
func (e *taskEngine) maxOwnerTasks() int { return min(2*e.s.opts.MaxInFlight, maxRunningTasks) }

// reserve takes a task place for owner, or says why there is none. A
// place is taken from before the task's record is written until its work
// has ended, so that calls arriving together cannot all pass the bounds.
func (e *taskEngine) reserve(owner string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.places >= maxRunningTasks {
		return &tools.Error{Kind: tools.KindUnavailable,
			Message: fmt.Sprintf("the server is busy: %d tasks are running on it, the most it runs at once; the tool did not run; retry later", maxRunningTasks)}
	}
	if most := e.maxOwnerTasks(); owner != "" && e.owned[owner] >= most {
		return &tools.Error{Kind: tools.KindUnavailable,
			Message: fmt.Sprintf("too many tasks: this client has %d running on this server, the most one client may have; the tool did not run; wait for one to end, or cancel one", most)}
	}
	e.owned[owner]++
	e.places++
	return nil
}

// release gives back owner's task place.
func (e *taskEngine) release(owner string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.places--
	if e.owned[owner]--; e.owned[owner] <= 0 {
		delete(e.owned, owner)
	}
}

// start creates a task for the call of info with args and runs work (the
// rest of the call's governed chain) in the background. It returns once
// the record is in the store, so that any replica finds it.
func (e *taskEngine) start(ctx context.Context, info tools.Info, args json.RawMessage, want *taskWant, work tools.Func) (*taskRecord, error) {
	ttl := want.ttl
	if ttl <= 0 || ttl > e.ttl {
		ttl = e.ttl
	}
	// Refused before anything is written: a refused task leaves no record.
	owner := taskOwner(ctx)
	if err := e.reserve(owner); err != nil {
		return nil, err
	}
	if !e.s.calls.start() {
		e.release(owner)
		return nil, &tools.Error{Kind: tools.KindCancelled, Message: "the server is shutting down; the task was not started"}
	}
	started := false
	defer func() {
		if !started {
			e.s.calls.done()
			e.release(owner)
		}
	}()
	now := time.Now().UTC().Truncate(time.Millisecond)
	rec := &taskRecord{ID: rand.Text(), Owner: owner, Tool: info.Name, Status: taskWorking,
		Message: "the task is running", Created: now, Updated: now, TTL: ttl, Poll: e.poll}
	if err := e.put(ctx, rec); err != nil {
		return nil, unavailable("the task cannot be created", err)
	}
	if err := e.s.store.Set(ctx, "task-alive:"+rec.ID, []byte{1}, taskAliveTTL); err != nil {
		return nil, unavailable("the task cannot be created", err)
	}
	started = true
	// The work outlives the request that created it: it ends when it is
	// done, cancelled (tasks/cancel, on any replica), or when the server's
	// shutdown grace is over.
	runCtx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), taskWantKey{}, nil))
	stopLink := context.AfterFunc(e.s.hardStop, cancel)
	e.mu.Lock()
	e.running[rec.ID] = cancel
	e.mu.Unlock()
	go func() {
		defer e.s.calls.done()
		defer stopLink()
		defer cancel()
		defer func() {
			e.mu.Lock()
			delete(e.running, rec.ID)
			e.mu.Unlock()
			e.release(owner)
		}()
		e.run(runCtx, rec, args, want, work)
	}()
	return rec, nil
}

// run does the task's work, keeps its liveness mark and its status message
// up to date, and records its end.
func (e *taskEngine) run(ctx context.Context, rec *taskRecord, args json.RawMessage, want *taskWant, work tools.Func) {
	alive := make(chan struct{})
	go func() {
		t := time.NewTicker(taskHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				hctx, cancel := context.WithTimeout(context.Background(), taskHeartbeat)
				_ = e.s.store.Set(hctx, "task-alive:"+rec.ID, []byte{1}, taskAliveTTL)
				if time.Until(rec.expires()) < 2*taskAliveTTL {
					// Near or past its TTL and still running: kept while it runs.
					_, _ = e.s.store.Get(hctx, taskKey(rec.ID), rec.keep())
				}
				if _, err := e.s.store.Get(hctx, "task-final:"+rec.ID, 0); err == nil {
					// It ended elsewhere (cancelled, or seen failed) and the
					// message that stops its work was lost (delivery is at
					// most once): stop it now.
					e.mu.Lock()
					stop := e.running[rec.ID]
					e.mu.Unlock()
					if stop != nil {
						stop()
					}
				}
				cancel()
			case <-alive:
				return
			}
		}
	}()
	defer close(alive)

	// Progress becomes the polled status message (at most one store
	// write per heartbeat); a 2025-11-25 client's progressToken still
	// gets its notifications while its session can take them (the
	// 2026-07-28 extension forbids progress notifications for tasks).
	var mu sync.Mutex
	p := &progressSender{ctx: context.Background(), every: taskHeartbeat, writesBefore: -1, notify: func(params map[string]any) {
		msg, _ := params["message"].(string)
		if msg == "" {
			msg = fmt.Sprintf("progress %v", params["progress"])
			if total, ok := params["total"]; ok {
				msg += fmt.Sprintf(" of %v", total)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		e.update(rec.ID, func(r *taskRecord) bool {
			if r.terminal() {
				return false
			}
			r.Message = msg
			return true
		})
	}}
	var notify *progressSender
	if want.token != nil && want.session != "" {
		notify = &progressSender{ctx: context.Background(), every: e.s.opts.ProgressInterval, writesBefore: -1, notify: func(params map[string]any) {
			params["progressToken"] = want.token
			_ = e.s.mcp.SendNotificationToSpecificClient(want.session, string(mcp.MethodNotificationProgress), params)
		}}
		defer notify.flush()
	}
	ctx = tools.WithProgress(ctx, func(progress, total float64, message string) {
		p.report(progress, total, message)
		if notify != nil {
			notify.report(progress, total, message)
		}
	})

	var res tools.Result
	var err error
	returned := false
	defer func() {
		if !returned {
			// The tool called runtime.Goexit: this goroutine ends, but the
			// task ends with the call's outcome, not later as the task of
			// a replica that died.
			e.end(rec, tools.Result{}, internalError(rec.Tool))
		}
	}()
	res, err = work(ctx, args)
	returned = true
	p.flush()
	e.end(rec, res, err)
}

// end records the end of the task rec with the outcome of its work.
func (e *taskEngine) end(rec *taskRecord, res tools.Result, err error) {
	out := render(tools.Settle(res, err), e.s.opts.MaxResultBytes)
	final := *rec
	final.Status, final.IsError = taskCompleted, out.IsError
	final.Message = "the task completed"
	if out.IsError {
		final.Message = "the task ended with an error: " + tools.Truncate(resultText(out), 200)
	}
	if e.s.hardStop.Err() != nil && out.IsError {
		// The server shut down under it: its result is not the tool's.
		final.Status, final.Message, final.IsError = taskFailed, "the server shut down before the task finished; its work was stopped", false
	} else if final.Result, err = json.Marshal(out); err != nil {
		final.Status, final.Message = taskFailed, "the task's result could not be encoded"
	}
	if !e.finish(context.Background(), &final) {
		return // cancelled meanwhile: it stays cancelled
	}
	e.s.log.LogAttrs(context.Background(), slog.LevelDebug, "task ended", slog.String("task", rec.ID),
		slog.String("tool", rec.Tool), slog.String("status", final.Status))
}

// finish writes a terminal record, unless another terminal status was
// written first; it reports whether it wrote. A task that ends after its
// TTL (it was kept while it ran) is kept for keep after its end, and its
// TTL grows to say so.
func (e *taskEngine) finish(ctx context.Context, rec *taskRecord) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	ttl := rec.expires().Sub(now)
	if ttl <= 0 {
		ttl = rec.keep()
		rec.TTL = now.Sub(rec.Created) + ttl
	}
	rec.Updated = now
	b, err := json.Marshal(rec)
	if err != nil {
		return false
	}
	first, err := e.s.store.SetNX(ctx, "task-final:"+rec.ID, b, ttl)
	if err != nil {
		e.s.log.Warn("task end not recorded: the state store cannot be reached; the task will read as failed", "task", rec.ID, "err", err)
		return false
	}
	if first {
		// The working record may have been kept past the TTL, beyond the
		// terminal one: it must not be read once that one has gone.
		_ = e.s.store.Delete(ctx, taskKey(rec.ID))
	}
	return first
}

// put writes rec for the rest of its time to live (storeTTL).
func (e *taskEngine) put(ctx context.Context, rec *taskRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	ttl := rec.storeTTL()
	if ttl <= 0 {
		return nil
	}
	return e.s.store.Set(ctx, taskKey(rec.ID), b, ttl)
}

// update reads the record, changes it, and writes it back when change
// says so. (Only the replica running a task updates its working record;
// once the task has a terminal record, read returns that one, and no
// update can hide it.)
func (e *taskEngine) update(id string, change func(*taskRecord) bool) {
	ctx, cancel := context.WithTimeout(context.Background(), taskHeartbeat)
	defer cancel()
	rec, err := e.read(ctx, id)
	if err != nil || !change(rec) {
		return
	}
	rec.Updated = time.Now().UTC().Truncate(time.Millisecond)
	_ = e.put(ctx, rec)
}

// read returns the record of a task, its terminal one when it has ended,
// or errTaskNotFound.
func (e *taskEngine) read(ctx context.Context, id string) (*taskRecord, error) {
	b, err := e.s.store.Get(ctx, "task-final:"+id, 0)
	if errors.Is(err, state.ErrNotFound) {
		b, err = e.s.store.Get(ctx, taskKey(id), 0)
	}
	if errors.Is(err, state.ErrNotFound) {
		return nil, errTaskNotFound
	}
	if err != nil {
		return nil, err
	}
	var rec taskRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, errTaskNotFound
	}
	return &rec, nil
}

// get returns owner's task. A working task whose replica stopped renewing
// its liveness mark is ended as failed here, by whichever replica looks.
func (e *taskEngine) get(ctx context.Context, id, owner string) (*taskRecord, error) {
	rec, err := e.read(ctx, id)
	if err != nil {
		return nil, err
	}
	if rec.Owner != owner {
		return nil, errTaskNotFound // never another's: not even that it exists
	}
	if rec.terminal() {
		return rec, nil
	}
	if _, err := e.s.store.Get(ctx, "task-alive:"+id, 0); errors.Is(err, state.ErrNotFound) {
		lost := *rec
		lost.Status = taskFailed
		lost.Message = "the server replica running this task stopped before the task ended (it crashed, was killed, or lost the state store); its work is lost: start the call again"
		if e.finish(ctx, &lost) {
			return &lost, nil
		}
		return e.read(ctx, id) // another terminal status won
	} else if err != nil {
		return nil, err
	}
	return rec, nil
}

// cancel ends owner's working task as cancelled, on whichever replica
// runs it, and returns the record as it now is.
func (e *taskEngine) cancel(ctx context.Context, id, owner string) (*taskRecord, error) {
	rec, err := e.get(ctx, id, owner)
	if err != nil {
		return nil, err
	}
	if rec.terminal() {
		return rec, errTaskTerminal
	}
	done := *rec
	done.Status, done.Message = taskCancelled, "the task was cancelled at the client's request"
	if !e.finish(ctx, &done) {
		rec, err = e.read(ctx, id)
		if err != nil {
			return nil, err
		}
		return rec, errTaskTerminal
	}
	if err := e.s.store.Publish(ctx, chanTaskCancel, []byte(id)); err != nil {
		e.s.log.Warn("task cancellation not announced: the state store cannot be reached; its work runs to its end, and its result is dropped", "task", id, "err", err)
	}
	return &done, nil
}

// wait returns owner's task once it has ended, or ctx's error. When ctx
// ends, it looks once more: a stdio session stops its waits after the
// shutdown let the tasks end, and a task that ended in the last poll
// interval is still answered.
func (e *taskEngine) wait(ctx context.Context, id, owner string) (*taskRecord, error) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		rec, err := e.get(ctx, id, owner)
		if err != nil || rec.terminal() {
			return rec, err
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			if rec, err := e.get(last, id, owner); err == nil && rec.terminal() {
				return rec, nil
			}
			return nil, ctx.Err()
		}
	}
}
