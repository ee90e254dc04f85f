package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/state"
)

// A fleet: several replicas behind a balancer that does not keep a client
// on one replica, sharing a state.Store. How a streamable HTTP session
// (protocol 2025-11-25 and older) works across them:
//
//   - initialize, on any replica, writes the session's record to the store:
//     its owner (the principal that opened it) and the client's initialize
//     parameters. Every request of the session, on any replica, reads the
//     record (one round trip, which also renews its idle timeout): an
//     unknown or ended session is 404 everywhere, another principal's too.
//   - A replica that meets a session it has not served yet replays the
//     client's initialize into its own mcp-go engine, under the same id, so
//     that the session has its client's capabilities and protocol there
//     too ("hydration"). It forgets it again when it is idle there.
//   - DELETE, on any replica, removes the record (and the session's budget
//     and remembered approvals), and tells the others to drop their copy.
//   - A legacy approval question (elicitation/create) travels on the SSE
//     stream of the POST whose call asks it, so it goes out through the
//     replica that runs the call. mcp-go numbers the questions it sends
//     with a counter of its own process, so two replicas would send the
//     same ids; on its way out, a question's id becomes
//     "mcp-tools:<replica>:<n>", unique in the fleet, naming the replica
//     that waits for the answer. The client's answer is a POST that may
//     land anywhere: the replica it lands on gives it back its number and
//     delivers it, when the id names itself, or publishes it to the replica
//     the id names, which delivers it to the waiting call and
//     acknowledges; only then does the first replica answer 202 (no
//     acknowledgement in answerWait: 404).
//
// Legacy HTTP+SSE sessions are not shared: their stream is the session, so
// a balancer must keep each on one replica.

// sessionRecord is what the store keeps of a streamable HTTP session.
type sessionRecord struct {
	// Owner is the principal that opened the session ("" without auth).
	Owner string `json:"o"`
	// Init is the client's initialize params, replayed on replicas that
	// have not served the session yet.
	Init json.RawMessage `json:"i,omitempty"`
}

func sessionKey(id string) string { return "session:" + id }

// answerWait bounds how long a replica waits for another to take an
// elicitation answer it forwarded.
const answerWait = 5 * time.Second

// Bus channels.
const (
	chanEnded   = "sessions:ended" // a session's id: it ended
	chanAnswers = "answers"        // an answerMsg
	chanAcks    = "acks:"          // + replica id: an answerMsg's id, taken
)

// answerMsg is an elicitation answer forwarded to the other replicas.
type answerMsg struct {
	From    string          `json:"f"` // the forwarding replica
	To      string          `json:"t,omitempty"`
	ID      string          `json:"m"` // this message, for the ack
	Session string          `json:"s"`
	Version string          `json:"v,omitempty"` // Mcp-Protocol-Version
	Body    json.RawMessage `json:"b"`
}

// relay carries what one replica must tell the others: answers it cannot
// deliver itself, and sessions that ended.
type relay struct {
	s       *Server
	h       http.Handler // this replica's mcp-go streamable HTTP handler
	table   *sessionTable
	replica string

	mu    sync.Mutex
	acks  map[string]chan struct{}
	stops []func()
}

// newRelay subscribes to the bus; close unsubscribes.
func newRelay(s *Server, h http.Handler, table *sessionTable) *relay {
	r := &relay{s: s, h: h, table: table, replica: rand.Text(), acks: map[string]chan struct{}{}}
	r.stops = append(r.stops,
		s.store.Subscribe(chanAnswers, r.onAnswer),
		s.store.Subscribe(chanAcks+r.replica, r.onAck),
		s.store.Subscribe(chanEnded, r.onEnded),
	)
	return r
}

func (r *relay) close() {
	for _, stop := range r.stops {
		stop()
	}
}

// forward publishes an answer this replica could not deliver (to the
// replica to, or to any that asked in the session when to is ""), and
// reports whether another replica took it.
func (r *relay) forward(ctx context.Context, to, session, version string, body []byte) bool {
	m := answerMsg{From: r.replica, To: to, ID: rand.Text(), Session: session, Version: version, Body: body}
	b, err := json.Marshal(m)
	if err != nil {
		return false
	}
	taken := make(chan struct{})
	r.mu.Lock()
	r.acks[m.ID] = taken
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.acks, m.ID)
		r.mu.Unlock()
	}()
	if err := r.s.store.Publish(ctx, chanAnswers, b); err != nil {
		r.s.log.Warn("elicitation answer not forwarded: the state store cannot be reached", "err", err)
		return false
	}
	t := time.NewTimer(answerWait)
	defer t.Stop()
	select {
	case <-taken:
		r.s.log.Debug("elicitation answer delivered through another replica", "session", session)
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (r *relay) onAck(msg []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.acks[string(msg)]; ok {
		close(ch)
		delete(r.acks, string(msg))
	}
}

// onAnswer delivers another replica's answer when a call here waits for
// one in that session.
func (r *relay) onAnswer(msg []byte) {
	var m answerMsg
	if json.Unmarshal(msg, &m) != nil || m.From == r.replica {
		return
	}
	if (m.To != "" && m.To != r.replica) || (m.To == "" && !r.s.asking(m.Session)) {
		return
	}
	rec := r.s.serveInternal(context.Background(), r.h, internalReq{}, m.Session, m.Version, m.Body)
	if rec.status != http.StatusAccepted {
		return // not the question this replica asked
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = r.s.store.Publish(ctx, chanAcks+m.From, []byte(m.ID))
}

// onEnded drops this replica's copy of a session ended elsewhere.
func (r *relay) onEnded(msg []byte) {
	id := string(msg)
	if r.table.isLocal(id) {
		r.s.mcp.UnregisterSession(context.Background(), id)
	}
}

// ended tells every replica that the session is over.
func (r *relay) ended(ctx context.Context, id string) {
	if err := r.s.store.Publish(ctx, chanEnded, []byte(id)); err != nil {
		r.s.log.Warn("session end not announced: the state store cannot be reached; other replicas drop it when idle", "err", err)
	}
}

// asking reports whether a call of this replica waits for a person's
// answer in session.
func (s *Server) asking(session string) bool {
	s.asksMu.Lock()
	defer s.asksMu.Unlock()
	return s.asks[session] > 0
}

// startAsking records a question pending in session; the returned func
// ends it.
func (s *Server) startAsking(session string) (done func()) {
	s.asksMu.Lock()
	defer s.asksMu.Unlock()
	if s.asks == nil {
		s.asks = map[string]int{}
	}
	s.asks[session]++
	return func() {
		s.asksMu.Lock()
		defer s.asksMu.Unlock()
		if s.asks[session]--; s.asks[session] <= 0 {
			delete(s.asks, session)
		}
	}
}

// internalKey marks a request this server makes to its own mcp-go engine
// (a hydration, a forwarded answer): the guard already admitted what it
// carries, so its session manager is the server's own.
type internalKey struct{}

// internalReq is what an internal request carries: for a hydration, the
// session's id and owner, which Generate takes instead of a new id.
type internalReq struct {
	hydrate, owner string
}

// recorded is the response of an internal request.
type recorded struct {
	status int
	header http.Header
	body   bytes.Buffer
}

func (r *recorded) Header() http.Header { return r.header }
func (r *recorded) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}
func (r *recorded) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

// serveInternal POSTs body to h as a request of session (none: "").
func (s *Server) serveInternal(ctx context.Context, h http.Handler, in internalReq, session, version string, body []byte) *recorded {
	ctx = context.WithValue(context.WithoutCancel(ctx), internalKey{}, in)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, PathMCP, bytes.NewReader(body))
	rec := &recorded{header: http.Header{}}
	if err != nil {
		rec.status = http.StatusInternalServerError
		return rec
	}
	// mcp-go's DNS-rebinding check reads the Host of a request that came on
	// a loopback connection: this one came from the server itself.
	req.Host = "localhost"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(mcp.HeaderSessionID, session)
	}
	if version != "" {
		req.Header.Set(mcp.HeaderProtocolVersion, version)
	}
	h.ServeHTTP(rec, req)
	return rec
}

// hydrate makes a session another replica opened known to this one's
// mcp-go engine, by replaying its client's initialize under its id.
func (s *Server) hydrate(ctx context.Context, h http.Handler, id string, rec sessionRecord, version string) error {
	if len(rec.Init) == 0 {
		return errors.New("the session's record has no initialize parameters")
	}
	init := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":%s}`, rec.Init)
	if r := s.serveInternal(ctx, h, internalReq{hydrate: id, owner: rec.Owner}, "", "", init); r.status != http.StatusOK {
		return fmt.Errorf("replaying initialize: HTTP %d: %s", r.status, bytes.TrimSpace(r.body.Bytes()))
	}
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r := s.serveInternal(ctx, h, internalReq{}, id, version, note); r.status != http.StatusAccepted {
		return fmt.Errorf("replaying notifications/initialized: HTTP %d", r.status)
	}
	return nil
}

// lookup reads a session's record from the store, renewing its idle
// timeout. known is false for a session that does not exist (any more).
func (t *sessionTable) lookupRecord(ctx context.Context, id string) (sessionRecord, bool, error) {
	var rec sessionRecord
	b, err := t.store.Get(ctx, sessionKey(id), max(t.ttl, 0))
	if errors.Is(err, state.ErrNotFound) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	if json.Unmarshal(b, &rec) != nil {
		return rec, false, nil
	}
	return rec, true, nil
}

// createRecord writes a new session's record.
func (t *sessionTable) createRecord(ctx context.Context, id string, rec sessionRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return t.store.Set(ctx, sessionKey(id), b, max(t.ttl, 0))
}

// askIDPrefix starts the fleet-wide id of a question this server sends a
// client: askIDPrefix + replica + ":" + mcp-go's number.
const askIDPrefix = "mcp-tools:"

// serverRequests are the requests mcp-go sends clients, whose ids a fleet
// rewrites.
var serverRequests = [][]byte{[]byte(`"method":"elicitation/create"`), []byte(`"method":"sampling/createMessage"`), []byte(`"method":"roots/list"`)}

// sseRequestHead is how mcp-go writes a server request on a stream.
var sseRequestHead = []byte(`data: {"jsonrpc":"2.0","id":`)

// tagAsk returns p (what mcp-go writes on a stream) with the id of a server
// request in it made fleet-wide. Anything else comes back as it was.
func (r *relay) tagAsk(p []byte) []byte {
	i := bytes.Index(p, sseRequestHead)
	if i < 0 {
		return p
	}
	isRequest := false
	for _, m := range serverRequests {
		isRequest = isRequest || bytes.Contains(p, m)
	}
	if !isRequest {
		return p
	}
	start := i + len(sseRequestHead)
	end := start
	for end < len(p) && p[end] >= '0' && p[end] <= '9' {
		end++
	}
	if end == start || end >= len(p) || p[end] != ',' {
		return p
	}
	out := make([]byte, 0, len(p)+len(askIDPrefix)+len(r.replica)+3)
	out = append(out, p[:start]...)
	out = append(out, '"')
	out = append(out, askIDPrefix...)
	out = append(out, r.replica...)
	out = append(out, ':')
	out = append(out, p[start:end]...)
	out = append(out, '"')
	return append(out, p[end:]...)
}

// untagAnswer reads a client's answer whose id is fleet-wide: the replica
// that asked, and the body with mcp-go's own number back in place of the
// id.
func untagAnswer(body []byte) (replica string, out []byte, ok bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return "", nil, false
	}
	var id string
	if json.Unmarshal(msg["id"], &id) != nil {
		return "", nil, false
	}
	rest, found := strings.CutPrefix(id, askIDPrefix)
	if !found {
		return "", nil, false
	}
	replica, n, found := strings.Cut(rest, ":")
	if _, err := strconv.ParseInt(n, 10, 64); !found || err != nil || replica == "" {
		return "", nil, false
	}
	msg["id"] = json.RawMessage(n)
	out, err := json.Marshal(msg)
	if err != nil {
		return "", nil, false
	}
	return replica, out, true
}
