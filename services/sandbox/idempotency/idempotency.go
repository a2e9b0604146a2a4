package idempotency

import (
	"crypto/sha256"
	"sync"
)

// Answer is a stored response.
type Answer struct {
	Status int
	Body   []byte
}

type entry struct {
	fingerprint [32]byte
	answer      Answer
	done        chan struct{} // closed once answer is set
}

// Store remembers answers by (account, key).
type Store struct {
	mu      sync.Mutex
	entries map[string]*entry
}

// Outcome says what Run did.
type Outcome int

const (
	// Ran means the request was new and run produced the answer.
	Ran Outcome = iota
	// Replayed means the stored answer of an earlier identical request was returned.
	Replayed
	// Mismatch means the key was used before with other parameters; nothing ran.
	Mismatch
)

// Run answers a POST carrying an idempotency key. params is the request's identity (method, path
// and body, as the caller decides); a concurrent duplicate waits for the first to finish and
// replays its answer. An empty key runs the request unrecorded.
func (s *Store) Run(account, key string, params []byte, run func() Answer) (Answer, Outcome) {
	if key == "" {
		return run(), Ran
	}
	fp := sha256.Sum256(params)
	id := account + "\x00" + key
	s.mu.Lock()
	if s.entries == nil {
		s.entries = map[string]*entry{}
	}
	if e, ok := s.entries[id]; ok {
		s.mu.Unlock()
		<-e.done
		if e.fingerprint != fp {
			return Answer{}, Mismatch
		}
		return e.answer, Replayed
	}
	e := &entry{fingerprint: fp, done: make(chan struct{})}
	s.entries[id] = e
	s.mu.Unlock()
	e.answer = run()
	close(e.done)
	return e.answer, Ran
}
