package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcp-tools/mcp-tools/tools"
)

// CallOptions configure one Call. The zero value asks no one (a gated tool
// gets Options.Approval's fallback, as a client that cannot ask a person
// does) and reports no progress.
type CallOptions struct {
	// Ask puts an approval question to a person and returns the answer. An
	// error from Ask ends the call: Call returns it, wrapped, and the tool
	// does not run. Nil: the caller cannot ask anyone.
	Ask func(ctx context.Context, q Question) (Answer, error)
	// Progress receives the call's progress reports (total is 0 when
	// unknown), at most one per Options.ProgressInterval, one at a time
	// on a goroutine of Call's. Nil: none is sent.
	//
	// Every report the server sent before the result has been handed to
	// Progress when Call returns (unless Call waited MaxProgressFlush for
	// them).
	Progress func(progress, total float64, message string)
	// ClientName is the client's name, as the server's logs show it.
	// Empty: "mcp-tools".
	ClientName string
	// Task runs the call as a task (the tool's Info.Task must allow it):
	// Call waits for it to end, passing each new status message to
	// Progress, and cancels it when ctx ends first.
	Task bool
}

// Question is what the server asks a person before a gated tool runs.
type Question struct {
	// Message is the question, with a summary of the call.
	Message string
	// Schema is the JSON Schema of the form's content, when the person may
	// change the call's arguments; nil otherwise.
	Schema json.RawMessage
}

// Answer is a person's answer to a Question.
type Answer struct {
	// Accept is true when the person approves the call; false declines it.
	Accept bool
	// Content is the form's content (see Question.Schema) when accepting;
	// nil is an empty form. It is sent as encoding/json writes it: a
	// number past 2^53 given as a json.Number or a Go integer runs
	// exactly; given as a float64, which may be a rounded one, it is
	// refused unless it is the model's own value.
	Content map[string]any
}

// CallResult is the result of a Call, as a client would receive it.
type CallResult struct {
	// Text is the result's text (the error message, for an error result);
	// several text items are joined by newlines.
	Text string
	// Structured is the structured content, as JSON; nil when there is
	// none.
	Structured json.RawMessage
	// IsError is true when the call failed: the tool's error, invalid
	// arguments, a refusal, a timeout.
	IsError bool
	// Kind is the error's kind ("" when IsError is false), and Code its
	// code (0 when it has none): the _meta fields MetaErrorKind and
	// MetaErrorCode.
	Kind tools.Kind
	Code int
	// JSON is the whole MCP CallToolResult as a client receives it.
	JSON json.RawMessage
}

// Call runs one tools/call of the tool called name with args (a JSON
// object; nil is {}), exactly as a client's call runs: the same session
// limits, validation, budget, approval, timeouts and rendering, and it is
// logged as a client's call is. Each Call is a session of its own, opened
// and closed around it, so a budget (Options.MaxCallsPerSession) counts
// each Call apart. A person's approval goes through opt.Ask, which answers
// as a client's elicitation form would.
//
// The error is non-nil only when the call could not be made or finished
// (ctx done, opt.Ask failed, the server shut down before the call was
// answered): a failed tool is a CallResult with IsError set. Call may be
// called concurrently.
func (s *Server) Call(ctx context.Context, name string, args json.RawMessage, opt CallOptions) (CallResult, error) {
	if args == nil {
		args = json.RawMessage("{}")
	}
	t := &localTransport{mcp: s.mcp, id: "local-" + rand.Text(), tool: name, done: make(chan struct{})}
	var copts []client.ClientOption
	if opt.Ask != nil {
		// The answer comes back either way the server asks: as a request
		// to the session (before protocol 2026-07-28) or in an
		// input_required result that the client answers and retries.
		t.elicit = asker(opt.Ask)
		copts = append(copts, client.WithElicitationHandler(asker(opt.Ask)))
	}
	c := client.NewClient(t, copts...)
	defer c.Close()
	if opt.Progress != nil {
		c.OnNotification(func(n mcp.JSONRPCNotification) {
			if n.Method != string(mcp.MethodNotificationProgress) {
				return
			}
			f := n.Params.AdditionalFields
			progress, _ := f["progress"].(float64)
			total, _ := f["total"].(float64)
			message, _ := f["message"].(string)
			opt.Progress(progress, total, message)
		})
	}
	if err := c.Start(ctx); err != nil {
		return CallResult{}, fmt.Errorf("call %q: start the session: %w", name, err)
	}
	clientName := opt.ClientName
	if clientName == "" {
		clientName = "mcp-tools"
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: clientName, Version: s.opts.Version}
	if _, err := c.Initialize(ctx, init); err != nil {
		return CallResult{}, fmt.Errorf("call %q: initialize: %w", name, err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	if opt.Progress != nil {
		req.Params.Meta = &mcp.Meta{ProgressToken: "call"}
	}
	callCtx := ctx
	if opt.Task {
		callCtx = context.WithValue(ctx, localTaskKey{}, true)
	}
	res, err := c.CallTool(callCtx, req)
	if err != nil {
		return CallResult{}, fmt.Errorf("call %q: %w", name, err)
	}
	if id, isTask, err := s.taskOf(res); isTask || err != nil {
		if err != nil {
			return CallResult{}, fmt.Errorf("call %q: %w", name, err)
		}
		return s.followTask(ctx, id, "session:"+t.id, opt.Progress)
	}
	if opt.Progress != nil {
		t.flush(ctx) // every report sent before the result is handed on
	}
	return callResult(res)
}

// callResult reads what a client reads from res.
func callResult(res *mcp.CallToolResult) (CallResult, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return CallResult{}, fmt.Errorf("encode the result: %w", err)
	}
	var wire struct {
		Meta       map[string]json.RawMessage `json:"_meta"`
		Structured json.RawMessage            `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return CallResult{}, fmt.Errorf("decode the result: %w", err)
	}
	r := CallResult{IsError: res.IsError, JSON: raw, Structured: wire.Structured}
	var texts []string
	for _, content := range res.Content {
		if t, ok := mcp.AsTextContent(content); ok {
			texts = append(texts, t.Text)
		}
	}
	r.Text = strings.Join(texts, "\n")
	if k, ok := wire.Meta[MetaErrorKind]; ok {
		_ = json.Unmarshal(k, &r.Kind)
	}
	if c, ok := wire.Meta[MetaErrorCode]; ok {
		_ = json.Unmarshal(c, &r.Code)
	}
	return r, nil
}

// asker adapts CallOptions.Ask to mcp-go's elicitation handler.
type asker func(ctx context.Context, q Question) (Answer, error)

// Elicit asks the question and turns the answer into an elicitation
// result.
func (a asker) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	q := Question{Message: req.Params.Message}
	if req.Params.RequestedSchema != nil {
		b, err := json.Marshal(req.Params.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("encode the question's schema: %w", err)
		}
		q.Schema = b
	}
	ans, err := a(ctx, q)
	if err != nil {
		return nil, err
	}
	if ans.Content == nil {
		ans.Content = map[string]any{}
	}
	action := mcp.ElicitationResponseActionDecline
	if ans.Accept {
		action = mcp.ElicitationResponseActionAccept
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action, Content: ans.Content}}, nil
}

// MaxProgressFlush bounds how long Call waits, after the result, for the
// progress reports sent before it to reach CallOptions.Progress.
const MaxProgressFlush = time.Second

// flushMethod marks the end of a call's notifications on a localTransport.
const flushMethod = "mcp-tools/flush"

// localTransport is mcp-go's in-process transport, with one addition: flush
// waits until every notification sent so far has been handed on, so that
// Call returns with all of its progress reported. The session it registers
// is unregistered by Close.
type localTransport struct {
	mcp    *mcpserver.MCPServer
	id     string
	tool   string                       // the tool the Call is of
	elicit mcpserver.ElicitationHandler // nil: the client cannot ask anyone

	session *mcpserver.InProcessSession
	mu      sync.Mutex
	notify  func(mcp.JSONRPCNotification)
	done    chan struct{}
	once    sync.Once
}

var _ transport.Interface = (*localTransport)(nil)

// Start registers the session and starts handing on its notifications.
func (t *localTransport) Start(ctx context.Context) error {
	t.session = mcpserver.NewInProcessSessionWithHandlers(t.id, nil, t.elicit, nil)
	if err := t.mcp.RegisterSession(ctx, t.session); err != nil {
		return fmt.Errorf("register the session: %w", err)
	}
	go t.forward(t.session.ClientNotifications())
	return nil
}

// forward hands each notification on, in order, until Close.
func (t *localTransport) forward(notes <-chan mcp.JSONRPCNotification) {
	for {
		select {
		case <-t.done:
			return
		case n, ok := <-notes:
			if !ok {
				return
			}
			if n.Method == flushMethod {
				if ch, ok := n.Params.AdditionalFields["done"].(chan struct{}); ok {
					close(ch)
				}
				continue
			}
			t.mu.Lock()
			h := t.notify
			t.mu.Unlock()
			if h != nil {
				h(n)
			}
		}
	}
}

// flush returns once every notification sent before it was handed on, or
// after MaxProgressFlush, or when ctx is done.
func (t *localTransport) flush(ctx context.Context) {
	ch := make(chan struct{})
	if err := t.mcp.SendNotificationToSpecificClient(t.id, flushMethod, map[string]any{"done": ch}); err != nil {
		return // the session's queue is full or gone: nothing to wait for
	}
	timer := time.NewTimer(MaxProgressFlush)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
	case <-ctx.Done():
	case <-t.done:
	}
}

// SendRequest hands request to the server on the session and returns its
// response.
func (t *localTransport) SendRequest(ctx context.Context, request transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	b, err := json.Marshal(request)
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	resp := t.handle(ctx, request, b)
	if b, err = json.Marshal(resp); err != nil {
		return nil, fmt.Errorf("encode the response: %w", err)
	}
	var out transport.JSONRPCResponse
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode the response: %w", err)
	}
	return &out, nil
}

// handle has mcp-go handle the request b on a goroutine of its own: a tool
// that ends its goroutine with runtime.Goexit, which cannot be stopped as a
// panic can, would otherwise end the goroutine of Call's caller (in
// mcp-tools call, the main goroutine: the process died). Its call is
// answered with an internal error, as on the fast paths. A panic that
// escapes mcp-go is raised again on the caller's goroutine, as before.
// (mcp-go's HTTP paths serve calls on goroutines of their own; a hop per
// call there cost 2x a call's time, so they are not given one. Its stdio
// calls are, in callApart: there a lost goroutine is a lost worker.)
func (t *localTransport) handle(ctx context.Context, request transport.JSONRPCRequest, b []byte) mcp.JSONRPCMessage {
	var resp mcp.JSONRPCMessage
	returned, panicked := apart(func() { resp = t.mcp.HandleMessage(t.mcp.WithContext(ctx, t.session), b) })
	switch {
	case panicked != nil:
		panic(panicked)
	case !returned:
		return mcp.NewJSONRPCResultResponse(request.ID, render(tools.Outcome{Err: internalError(t.tool)}, 0))
	}
	return resp
}

// SendNotification hands a notification to the server on the session.
func (t *localTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode the notification: %w", err)
	}
	t.mcp.HandleMessage(t.mcp.WithContext(ctx, t.session), b)
	return nil
}

// SetNotificationHandler sets who receives the server's notifications.
func (t *localTransport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notify = h
}

// Close stops handing on notifications and unregisters the session.
func (t *localTransport) Close() error {
	t.once.Do(func() {
		close(t.done)
		if t.session != nil {
			t.mcp.UnregisterSession(context.Background(), t.id)
		}
	})
	return nil
}

// GetSessionId returns "": the session has no id on the wire.
func (t *localTransport) GetSessionId() string { return "" }

// localTaskKey marks a Call that asked to run as a task (the local
// session has no protocol field for it in every era).
type localTaskKey struct{}

// taskOf reads the marked reply of a call that became a task (or was
// refused as one): the task's id, or the refusal.
func (s *Server) taskOf(res *mcp.CallToolResult) (id string, isTask bool, err error) {
	if res.Meta == nil {
		return "", false, nil
	}
	v, ok := res.Meta.AdditionalFields[taskReplyKey]
	if !ok {
		return "", false, nil
	}
	s.taskReplies.Add(-1) // no writer swaps this one
	b, _ := json.Marshal(v)
	var reply struct {
		Result struct {
			ID   string `json:"taskId"` // 2026-07-28
			Task struct {
				ID string `json:"taskId"`
			} `json:"task"` // 2025-11-25
		} `json:"result"`
		Error *jsonrpcError `json:"error"`
	}
	if err := json.Unmarshal(b, &reply); err != nil {
		return "", true, fmt.Errorf("read the task reply: %w", err)
	}
	if reply.Error != nil {
		return "", true, errors.New(reply.Error.Message)
	}
	if reply.Result.ID != "" {
		return reply.Result.ID, true, nil
	}
	return reply.Result.Task.ID, true, nil
}

// followTask waits for owner's task to end, handing each new status
// message to progress, and returns its result. When ctx ends first, the
// task is cancelled.
func (s *Server) followTask(ctx context.Context, id, owner string, progress func(float64, float64, string)) (CallResult, error) {
	last := ""
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for n := 1.0; ; n++ {
		rec, err := s.tasks.get(ctx, id, owner)
		if err != nil {
			if ctx.Err() != nil {
				cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, _ = s.tasks.cancel(cctx, id, owner)
				cancel()
				return CallResult{}, fmt.Errorf("task %s: %w (the task was cancelled)", id, ctx.Err())
			}
			return CallResult{}, fmt.Errorf("task %s: %w", id, err)
		}
		if progress != nil && rec.Message != last && !rec.terminal() {
			last = rec.Message
			progress(n, 0, rec.Message)
		}
		if rec.terminal() {
			if rec.Status == taskCompleted && rec.Result != nil {
				raw := json.RawMessage(rec.Result)
				res, err := mcp.ParseCallToolResult(&raw)
				if err != nil {
					return CallResult{}, fmt.Errorf("task %s: read the result: %w", id, err)
				}
				return callResult(res)
			}
			kind := tools.KindCancelled
			if rec.Status == taskFailed {
				kind = tools.KindInternal
			}
			return callResult(render(tools.Outcome{Err: &tools.Error{Kind: kind, Message: rec.Message}}, 0))
		}
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}
