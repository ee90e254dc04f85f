package approval

import "sync"

// Memory remembers "approved for the rest of this session", per session
// and tool. Nothing is remembered across sessions. The zero value is ready.
type Memory struct {
	mu sync.Mutex
	m  map[string]map[string]bool
}

// Remember records that tool needs no more questions in session.
func (m *Memory) Remember(session, tool string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]map[string]bool{}
	}
	if m.m[session] == nil {
		m.m[session] = map[string]bool{}
	}
	m.m[session][tool] = true
}

// Remembered reports whether tool was approved for the rest of session.
func (m *Memory) Remembered(session, tool string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[session][tool]
}

// Forget drops what was remembered for session, when it ends.
func (m *Memory) Forget(session string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, session)
}
