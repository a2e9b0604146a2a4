package idempotency

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestSameKeySameParamsReplaysTheStoredAnswerWithoutRunningAgain(t *testing.T) {
	var s Store
	runs := 0
	run := func() Answer { runs++; return Answer{Status: 200, Body: []byte{byte(runs)}} }
	first, o1 := s.Run("acct", "k1", []byte("a=1"), run)
	second, o2 := s.Run("acct", "k1", []byte("a=1"), run)
	if o1 != Ran || o2 != Replayed || runs != 1 || string(first.Body) != string(second.Body) {
		t.Fatalf("outcomes %v %v, runs %d, answers %v %v", o1, o2, runs, first, second)
	}
}

func TestSameKeyOtherParamsIsAMismatch(t *testing.T) {
	var s Store
	s.Run("acct", "k1", []byte("a=1"), func() Answer { return Answer{Status: 200} })
	if _, o := s.Run("acct", "k1", []byte("a=2"), func() Answer { t.Fatal("ran"); return Answer{} }); o != Mismatch {
		t.Fatalf("outcome %v, want Mismatch", o)
	}
}

func TestKeysAreScopedByAccount(t *testing.T) {
	var s Store
	s.Run("acct1", "k1", []byte("a=1"), func() Answer { return Answer{Status: 200} })
	if _, o := s.Run("acct2", "k1", []byte("a=2"), func() Answer { return Answer{Status: 201} }); o != Ran {
		t.Fatalf("another account's key was shared: %v", o)
	}
}

func TestConcurrentDuplicatesRunOnce(t *testing.T) {
	var s Store
	var runs atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			s.Run("acct", "k", []byte("p"), func() Answer { runs.Add(1); return Answer{Status: 200} })
		})
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Fatalf("ran %d times", runs.Load())
	}
}
