package approval

import "time"

// SetClock replaces a signer's clock, for tests.
func SetClock(s *Signer, now func() time.Time) { s.now = now }
