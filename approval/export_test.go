package approval

import "time"

// SetClock replaces a signer's clock, for tests.
func SetClock(s *Signer, now func() time.Time) { s.now = now }

// UsedNonces reports how many used nonces s still keeps, for tests.
func UsedNonces(s *Signer) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.used)
}
