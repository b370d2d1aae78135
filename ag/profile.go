package ag

import "time"

// profileStep accumulates where time goes between two runs of a tape.
type profileStep struct {
	record, signature, compile, run, download time.Duration
	hits, misses, downloads                   int
}

// Profile collects per-run timings of a tape (Tape.Profile turns it on).
type Profile struct {
	cur profileStep
}
