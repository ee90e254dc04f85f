package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcp-tools/mcp-tools/tools"
)

// Tasks on the wire, in both protocol eras. mcp-go v1.2.1 has a task
// engine of its own for 2025-11-25, but it keeps tasks in one process's
// memory, cancels a task's context as soon as the creating request returns,
// and knows nothing of the 2026-07-28 extension; so the server answers
// every task method itself, in front of mcp-go (the HTTP guard and the
// stdio filter route them here), and never registers a tool with mcp-go's
// task support.
//
// 2025-11-25 (specification, basic/utilities/tasks): a client asks for a
// task with params.task {ttl} on tools/call, for a tool whose descriptor
// says execution.taskSupport "optional" or "required" ("Tool-Level
// Negotiation"); the reply is CreateTaskResult {task: Task} ("Creating
// Tasks"); tasks/get returns the Task, tasks/result waits for the end and
// returns the tool's result with the related-task _meta, tasks/cancel
// returns the cancelled Task (-32602 for an ended one). The server declares
// tasks.cancel and tasks.requests.tools.call; it does not declare
// tasks.list (tasks live in a store shared by replicas, which has no index
// of a client's tasks), so tasks/list is -32601.
//
// 2026-07-28, the io.modelcontextprotocol/tasks extension (SEP-2663): a
// client declares the extension in each request's client capabilities; the
// server alone decides whether a call becomes a task ("Task Creation"): for
// a tool with a task mode it always does when the extension is declared.
// The reply is flat, resultType "task" with the Task's fields (ttlMs,
// pollIntervalMs); tasks/get returns resultType "complete" with the result
// inline ("Task Polling"); tasks/update and tasks/cancel acknowledge;
// tasks/result and tasks/list do not exist (-32601). A tool whose mode is
// required, called without the extension, is -32021 with the missing
// capability in data ("Error Handling"). The server advertises the
// extension in server/discover.
//
// A call's reply is made by mcp-go's tool handler, which can only return a
// CallToolResult; when the call became a task (or must be refused with a
// JSON-RPC error), the handler marks its result with taskReplyKey in
// _meta, holding the real reply, and the writer of each transport swaps it
// in (rewriteTaskReply) as the message goes out.

// taskExtension is the 2026-07-28 tasks extension's identifier.
const taskExtension = "io.modelcontextprotocol/tasks"

// taskReplyKey marks a result whose whole reply is to be replaced.
const taskReplyKey = "mcp-tools/taskReply"

// relatedTaskKey is the 2025-11-25 related-task _meta key.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// codeMissingCapability is -32021, MISSING_REQUIRED_CLIENT_CAPABILITY.
const codeMissingCapability = mcp.MISSING_REQUIRED_CLIENT_CAPABILITY

// taskWant is a call's request for a task, as the handler read it.
type taskWant struct {
	modern bool          // the 2026-07-28 era
	ttl    time.Duration // asked for (2025-11-25); 0: the server's
	// token and session, for a 2025-11-25 call that asked for progress:
	// the task's progress goes on to that session while it listens.
	token   mcp.ProgressToken
	session string
}

type taskWantKey struct{}

// taskCreated is returned through the chain by a call that became a task.
type taskCreated struct {
	rec    *taskRecord
	modern bool
}

func (*taskCreated) Error() string { return "the call runs as a task" }

// Suspended marks a task's creation as not a failure: the call goes on.
func (*taskCreated) Suspended() {}

// TaskStarted tells telemetry that the call became a task.
func (*taskCreated) TaskStarted() {}

// decideTask reads whether a call of a tool with mode runs as a task. A
// non-nil refusal is the JSON-RPC error to answer instead.
func decideTask(ctx context.Context, mode tools.TaskMode, req mcp.CallToolRequest) (want *taskWant, refusal *taskReply) {
	if overSSE(ctx) {
		// Legacy HTTP+SSE has no tasks: its replies travel on a stream the
		// server does not rewrite, and its task methods would have to too.
		// Every call runs to its end there; tasks are not advertised.
		return nil, nil
	}
	if asked, _ := ctx.Value(localTaskKey{}).(bool); asked {
		// Server.Call with CallOptions.Task.
		if mode == tools.TaskNever {
			return nil, &taskReply{Error: &jsonrpcError{Code: mcp.METHOD_NOT_FOUND,
				Message: fmt.Sprintf("tool %q cannot run as a task: it is not declared with a task mode (task: optional or required)", req.Params.Name)}}
		}
		return &taskWant{modern: true}, nil
	}
	if info := mcpserver.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		// SEP-2663: params.task is ignored; the extension decides.
		declared := info.ClientCapabilities != nil && info.ClientCapabilities.Extensions[taskExtension] != nil
		switch {
		case mode == tools.TaskNever:
			return nil, nil
		case declared:
			return &taskWant{modern: true}, nil
		case mode == tools.TaskRequired:
			return nil, &taskReply{Error: &jsonrpcError{Code: codeMissingCapability,
				Message: fmt.Sprintf("Missing required client capability: tool %q runs only as a task; declare the %s extension", req.Params.Name, taskExtension),
				Data:    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{taskExtension: map[string]any{}}}}}}
		}
		return nil, nil
	}
	asked := req.Params.Task != nil
	switch {
	case asked && mode == tools.TaskNever:
		return nil, &taskReply{Error: &jsonrpcError{Code: mcp.METHOD_NOT_FOUND,
			Message: fmt.Sprintf("tool %q does not support task execution (execution.taskSupport is forbidden); call it without params.task", req.Params.Name)}}
	case !asked && mode == tools.TaskRequired:
		return nil, &taskReply{Error: &jsonrpcError{Code: mcp.METHOD_NOT_FOUND,
			Message: fmt.Sprintf("tool %q must be called as a task (execution.taskSupport is required): add params.task", req.Params.Name)}}
	case asked:
		w := &taskWant{}
		if t := req.Params.Task.TTL; t != nil && *t > 0 {
			// Capped before the conversion, which would wrap around past
			// 292 years (start caps it again, at the server's most).
			w.ttl = time.Duration(min(*t, int64(time.Duration(1<<63-1)/time.Millisecond))) * time.Millisecond
		}
		if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
			if cs := mcpserver.ClientSessionFromContext(ctx); cs != nil {
				w.token, w.session = m.ProgressToken, cs.SessionID()
			}
		}
		return w, nil
	}
	return nil, nil
}

// taskMiddleware, on a tool with a task mode, sits after approval: a call
// that asked for a task (see decideTask) gets one, running work (the rest
// of the tool's chain, with its own logging and metrics) in the
// background; any other call goes on to next.
func (s *Server) taskMiddleware(info tools.Info, work tools.Func) tools.Middleware {
	return func(_ tools.Info, next tools.Func) tools.Func {
		if info.Task == tools.TaskNever {
			return next
		}
		return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
			want, ok := ctx.Value(taskWantKey{}).(*taskWant)
			if !ok {
				return next(ctx, args)
			}
			rec, err := s.tasks.start(ctx, info, args, want, work)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{}, &taskCreated{rec: rec, modern: want.modern}
		}
	}
}

// jsonrpcError is a JSON-RPC error object.
type jsonrpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// taskReply is what replaces a marked result: a result or an error.
type taskReply struct {
	Result map[string]any `json:"result,omitempty"`
	Error  *jsonrpcError  `json:"error,omitempty"`
}

// markReply returns the CallToolResult that carries reply to the writer.
func (s *Server) markReply(reply *taskReply) *mcp.CallToolResult {
	s.taskReplies.Add(1)
	return &mcp.CallToolResult{
		Result:  mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{taskReplyKey: reply}}},
		Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "the call runs as a task"}},
	}
}

// createdReply is the reply to a call that became a task.
func (c *taskCreated) reply() *taskReply {
	if c.modern {
		r := taskFields(c.rec, true, true)
		r["resultType"] = "task"
		return &taskReply{Result: r}
	}
	return &taskReply{Result: map[string]any{"task": taskFields(c.rec, false, false)}}
}

// taskFields renders a task for a client: 2026-07-28 (modern) or
// 2025-11-25 names, and, for a modern tasks/get (detailed), the outcome
// inline. The 2025-11-25 view of a completed task with an error result is
// "failed" (its specification says so); the 2026-07-28 view is "completed"
// with the result (SEP-2663: failed is for protocol errors only).
func taskFields(rec *taskRecord, modern, detailed bool) map[string]any {
	m := map[string]any{
		"taskId":        rec.ID,
		"status":        rec.Status,
		"createdAt":     rec.Created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": rec.Updated.UTC().Format(time.RFC3339Nano),
	}
	if rec.Message != "" {
		m["statusMessage"] = rec.Message
	}
	ttl := rec.TTL
	if age := time.Since(rec.Created); !rec.terminal() && age >= ttl {
		// Past its TTL and still running: kept while it runs, and at
		// least its TTL after it ends (see taskRecord.storeTTL).
		ttl = age + rec.TTL
	}
	if modern {
		m["ttlMs"] = ttl.Milliseconds()
		m["pollIntervalMs"] = rec.Poll.Milliseconds()
	} else {
		m["ttl"] = ttl.Milliseconds()
		m["pollInterval"] = rec.Poll.Milliseconds()
		if rec.Status == taskCompleted && rec.IsError {
			m["status"] = taskFailed
		}
	}
	if modern && detailed {
		switch rec.Status {
		case taskCompleted:
			m["result"] = rec.Result
		case taskFailed:
			m["error"] = jsonrpcError{Code: mcp.INTERNAL_ERROR, Message: rec.Message}
		}
	}
	return m
}

// rewriteTaskReply returns msg (one JSON-RPC message, or one SSE event
// holding one) with a marked result replaced by its reply, and whether it
// did. Anything else comes back as it was.
func rewriteTaskReply(msg []byte) ([]byte, bool) {
	if !bytes.Contains(msg, []byte(taskReplyKey)) {
		return msg, false
	}
	prefix, body, suffix := msg[:0], msg, []byte(nil)
	if i := bytes.Index(msg, []byte("data: ")); bytes.HasPrefix(msg, []byte("event:")) && i >= 0 {
		prefix, body = msg[:i+len("data: ")], msg[i+len("data: "):]
	}
	trimmed := bytes.TrimRight(body, "\r\n")
	suffix = body[len(trimmed):]
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	if json.Unmarshal(trimmed, &resp) != nil || resp.Result.Meta == nil {
		return msg, false
	}
	raw, ok := resp.Result.Meta[taskReplyKey]
	if !ok {
		return msg, false
	}
	var reply struct {
		Result map[string]json.RawMessage `json:"result"`
		Error  json.RawMessage            `json:"error"`
	}
	if json.Unmarshal(raw, &reply) != nil {
		return msg, false
	}
	out := map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": resp.ID}
	if reply.Error != nil {
		out["error"] = reply.Error
	} else {
		// The result's other _meta (mcp-go adds serverInfo on 2026-07-28
		// replies) stays.
		delete(resp.Result.Meta, taskReplyKey)
		if len(resp.Result.Meta) > 0 {
			reply.Result["_meta"], _ = json.Marshal(resp.Result.Meta)
		}
		out["result"] = reply.Result
	}
	b, err := json.Marshal(out)
	if err != nil {
		return msg, false
	}
	return append(append(append([]byte(nil), prefix...), b...), suffix...), true
}

// errorStatus is the HTTP status of a JSON-RPC error response: 200 before
// protocol 2026-07-28; from it on, the mapping its transport defines (as
// mcp-go applies it to its own errors).
func errorStatus(code int, modern bool) int {
	if !modern {
		return http.StatusOK
	}
	switch code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.HEADER_MISMATCH, codeMissingCapability, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// taskWriter swaps marked results in the messages it writes (the HTTP
// response of a call that may become a task). It holds the status until
// the first write, so that a reply swapped for a 2026-07-28 error gets the
// error's HTTP status.
type taskWriter struct {
	*streamWriter
	s       *Server
	modern  bool
	status  int // held by WriteHeader until the first Write or Flush
	written bool
}

func (w *taskWriter) WriteHeader(code int) {
	if !w.written && w.status == 0 {
		w.status = code
	}
}

func (w *taskWriter) header(status int) {
	if w.written {
		return
	}
	w.written = true
	if status == 0 {
		status = w.status
	}
	if status != 0 {
		w.streamWriter.WriteHeader(status)
	}
}

func (w *taskWriter) Write(p []byte) (int, error) {
	out, swapped := rewriteTaskReply(p)
	if !swapped {
		w.header(0)
		return w.streamWriter.Write(p)
	}
	w.s.taskReplies.Add(-1)
	status := 0
	var e struct {
		Error *jsonrpcError `json:"error"`
	}
	if w.status == http.StatusOK && json.Unmarshal(bytes.TrimSpace(out), &e) == nil && e.Error != nil {
		status = errorStatus(e.Error.Code, w.modern)
	}
	w.header(status)
	if _, err := w.streamWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *taskWriter) Flush() {
	w.header(0)
	w.streamWriter.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *taskWriter) Unwrap() http.ResponseWriter { return w.streamWriter }

// taskCall is a tasks/* request, as a transport read it.
type taskCall struct {
	method string
	id     json.RawMessage
	taskID string
	modern bool
	// declared says the 2026-07-28 client declared the tasks extension.
	declared bool
	owner    string
}

// isTaskMethod reports whether the server answers method itself.
func isTaskMethod(method string) bool {
	return strings.HasPrefix(method, "tasks/")
}

// taskCallOf reads what a task method needs from a frame's parts.
func taskCallOf(f frame, owner string) taskCall {
	c := taskCall{method: f.method, id: json.RawMessage(f.id), taskID: f.taskID, modern: f.modern, owner: owner}
	if c.modern && len(f.meta) > 0 {
		var meta struct {
			Caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		}
		if json.Unmarshal(f.meta, &meta) == nil {
			_, c.declared = meta.Caps.Extensions[taskExtension]
		}
	}
	return c
}

// answerTask answers a tasks/* request with one JSON-RPC message, and the
// HTTP status that goes with it. It waits while a 2025-11-25 tasks/result
// waits for its task's end.
func (s *Server) answerTask(ctx context.Context, c taskCall) ([]byte, int) {
	fail := func(code int, msg string) ([]byte, int) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": c.id, "error": jsonrpcError{Code: code, Message: msg}})
		return b, errorStatus(code, c.modern)
	}
	ok := func(result map[string]any) ([]byte, int) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": c.id, "result": result})
		return b, http.StatusOK
	}
	if c.id == nil {
		return nil, http.StatusAccepted // a notification: nothing to answer
	}
	if s.tasks == nil {
		return fail(mcp.METHOD_NOT_FOUND, fmt.Sprintf("Method %s not found: no tool of this server runs as a task", c.method))
	}
	switch {
	case c.modern && (c.method == "tasks/result" || c.method == "tasks/list"):
		return fail(mcp.METHOD_NOT_FOUND, fmt.Sprintf("Method %s not found: it does not exist in protocol %s (the tasks extension has tasks/get, tasks/update and tasks/cancel)", c.method, mcp.ProtocolVersion20260728))
	case !c.modern && (c.method == "tasks/update" || c.method == "tasks/list"):
		return fail(mcp.METHOD_NOT_FOUND, fmt.Sprintf("Method %s not found", c.method))
	case c.modern && !c.declared:
		b, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": c.id, "error": jsonrpcError{Code: codeMissingCapability,
			Message: "Missing required client capability: declare the " + taskExtension + " extension to use " + c.method,
			Data:    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{taskExtension: map[string]any{}}}}}})
		return b, errorStatus(codeMissingCapability, true)
	case c.method != "tasks/get" && c.method != "tasks/result" && c.method != "tasks/cancel" && c.method != "tasks/update":
		return fail(mcp.METHOD_NOT_FOUND, fmt.Sprintf("Method %s not found", c.method))
	case c.taskID == "":
		return fail(mcp.INVALID_PARAMS, "invalid params: taskId is required")
	}
	var rec *taskRecord
	var err error
	switch c.method {
	case "tasks/get", "tasks/update":
		rec, err = s.tasks.get(ctx, c.taskID, c.owner)
	case "tasks/result":
		rec, err = s.tasks.wait(ctx, c.taskID, c.owner)
	case "tasks/cancel":
		rec, err = s.tasks.cancel(ctx, c.taskID, c.owner)
		if errors.Is(err, errTaskTerminal) && c.modern {
			err = nil // SEP-2663: cancelling is an acknowledgement, whatever the state
		}
	}
	switch {
	case errors.Is(err, errTaskNotFound):
		return fail(mcp.INVALID_PARAMS, "Failed to retrieve task: "+err.Error())
	case errors.Is(err, errTaskTerminal):
		return fail(mcp.INVALID_PARAMS, fmt.Sprintf("Cannot cancel task: it has already ended (%s)", taskFields(rec, false, false)["status"]))
	case err != nil && ctx.Err() != nil:
		return nil, 0 // the client went away while waiting
	case err != nil:
		return fail(mcp.INTERNAL_ERROR, "the shared state store cannot be reached; retry in a moment")
	}
	switch {
	case c.method == "tasks/update" || (c.modern && c.method == "tasks/cancel"):
		// The tasks extension acknowledges; no answer was asked for
		// (approval happens before a task starts), so none is taken.
		return ok(map[string]any{"resultType": "complete"})
	case c.method == "tasks/result":
		return taskResultReply(c, rec)
	case c.modern:
		r := taskFields(rec, true, true)
		r["resultType"] = "complete"
		return ok(r)
	}
	return ok(taskFields(rec, false, false))
}

// taskResultReply is the 2025-11-25 tasks/result reply: what the call
// would have returned, with the related-task _meta.
func taskResultReply(c taskCall, rec *taskRecord) ([]byte, int) {
	related := map[string]any{relatedTaskKey: map[string]any{"taskId": rec.ID}}
	if rec.Status == taskCompleted && rec.Result != nil {
		var result map[string]any
		if err := json.Unmarshal(rec.Result, &result); err == nil {
			meta, _ := result["_meta"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta[relatedTaskKey] = related[relatedTaskKey]
			result["_meta"] = meta
			b, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": c.id, "result": result})
			return b, http.StatusOK
		}
	}
	kind := tools.KindCancelled
	if rec.Status == taskFailed {
		kind = tools.KindInternal
	}
	res := render(tools.Outcome{Err: &tools.Error{Kind: kind, Message: rec.Message}}, 0)
	res.Meta.AdditionalFields[relatedTaskKey] = related[relatedTaskKey]
	b, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": c.id, "result": res})
	return b, http.StatusOK
}

// resultText is the text of a result's first text item.
func resultText(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// taskHooks advertise tasks as each era expects, when a tool has a task
// mode: tasks in initialize (2025-11-25), the extension in server/discover
// (2026-07-28), and execution.taskSupport in a 2025-11-25 tools/list (a
// 2026-07-28 Tool has no such field).
func (s *Server) taskHooks(h *mcpserver.Hooks, modes map[string]tools.TaskMode) {
	h.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if res == nil || overSSE(ctx) {
			return
		}
		caps := &mcp.TasksCapability{Cancel: &struct{}{}, Requests: &mcp.TaskRequestsCapability{}}
		caps.Requests.Tools = &struct {
			Call *struct{} `json:"call,omitempty"`
		}{Call: &struct{}{}}
		res.Capabilities.Tasks = caps
	})
	h.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		if res == nil {
			return
		}
		res.Capabilities.Tasks = nil // SEP-2663: never the legacy capability beside the extension
		if res.Capabilities.Extensions == nil {
			res.Capabilities.Extensions = map[string]any{}
		}
		res.Capabilities.Extensions[taskExtension] = map[string]any{}
	})
	h.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if res == nil || mcpserver.IsModernRequest(ctx) || overSSE(ctx) {
			return
		}
		for i := range res.Tools {
			if m := modes[res.Tools[i].Name]; m != tools.TaskNever {
				res.Tools[i].Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupport(m)}
			}
		}
	})
}

// tasksOrNil is s when a tool has a task mode, for the transports to route
// task methods to; nil otherwise (mcp-go then answers them: not found).
func (s *Server) tasksOrNil() *Server {
	if s.tasks == nil {
		return nil
	}
	return s
}
