package app_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

// inParallel runs n calls at once (released together) and returns the gRPC code of each.
func inParallel(n int, call func(i int) error) []codes.Code {
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		got   = make([]codes.Code, n)
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i] = codeOf(call(i))
		}()
	}
	close(start)
	wg.Wait()
	return got
}

func count(cs []codes.Code, c codes.Code) int {
	n := 0
	for _, x := range cs {
		if x == c {
			n++
		}
	}
	return n
}

func (f *fixture) signInFrom(email, pw, ip string) (string, error) {
	out, err := f.svc.SignIn(context.Background(), app.SignInInput{Params: f.params(), Email: email, Password: pw, ClientIP: ip})
	return out.URL, err
}

// The defect this guards: limits were checked before and recorded after hashing, so 24 parallel
// wrong passwords all passed a limit of 10. Reserved before hashing, exactly 10 are checked.
func TestParallelWrongPasswordsPassTheLimitExactly(t *testing.T) {
	f := newFixture(t)
	f.signUp(t, "grace@example.test")
	got := inParallel(24, func(int) error {
		_, err := f.signIn("grace@example.test", "wrong password!")
		return err
	})
	if checked, refused := count(got, codes.InvalidArgument), count(got, codes.ResourceExhausted); checked != app.DefaultLoginLimits.PerEmailAddress || refused != 24-checked {
		t.Fatalf("%d passwords checked and %d refused, want %d and %d (%v)", checked, refused, app.DefaultLoginLimits.PerEmailAddress, 24-app.DefaultLoginLimits.PerEmailAddress, got)
	}
}

// Attackers on other addresses use up their own (email, address) allowance, not the owner's; only
// the loose per-email limit, far above the strict one, can stop the owner, and only for its window.
func TestOtherAddressesCannotLockTheOwnerOutForLong(t *testing.T) {
	f := newFixture(t, func(c *app.Config) { c.Limits = app.LoginLimits{PerEmailAddress: 2, PerEmail: 6, PerIP: 100} })
	f.signUp(t, "grace@example.test")
	for i := range 2 {
		attacker := fmt.Sprintf("198.51.100.%d", i+1)
		for range 2 {
			_, err := f.signInFrom("grace@example.test", "wrong password!", attacker)
			wantStatus(t, "attacker guess", err, codes.InvalidArgument)
		}
		_, err := f.signInFrom("grace@example.test", "wrong password!", attacker)
		wantStatus(t, "attacker over the strict limit", err, codes.ResourceExhausted)
	}
	// Four failures on other addresses: the owner's address is untouched, and a success resets
	// the email's counts.
	if _, err := f.signIn("grace@example.test", goodPassword); err != nil {
		t.Fatalf("owner after attackers hit the strict limit: %v", err)
	}
	for i := range 6 {
		_, err := f.signInFrom("grace@example.test", "wrong password!", fmt.Sprintf("192.0.2.%d", i+1))
		wantStatus(t, "distributed guess", err, codes.InvalidArgument)
	}
	_, err := f.signIn("grace@example.test", goodPassword)
	wantStatus(t, "owner while the loose per-email limit is reached", err, codes.ResourceExhausted)
	f.now = f.now.Add(app.DefaultLoginLimits.Window + time.Second)
	if _, err := f.signIn("grace@example.test", goodPassword); err != nil {
		t.Fatalf("owner once the window passed: %v", err)
	}
}

// An IPv6 subscriber holds a whole /64: its addresses share one allowance, a neighbouring /64
// has its own.
func TestIPv6AddressesCountByTheirSlash64(t *testing.T) {
	f := newFixture(t)
	f.signUp(t, "grace@example.test")
	for i := range app.DefaultLoginLimits.PerEmailAddress {
		_, err := f.signInFrom("grace@example.test", "wrong password!", fmt.Sprintf("2001:db8:1:2::%x", i+1))
		wantStatus(t, "guess from the /64", err, codes.InvalidArgument)
	}
	_, err := f.signInFrom("grace@example.test", goodPassword, "2001:db8:1:2:ffff::1")
	wantStatus(t, "another address of the same /64", err, codes.ResourceExhausted)
	if _, err := f.signInFrom("grace@example.test", goodPassword, "2001:db8:1:3::1"); err != nil {
		t.Fatalf("the neighbouring /64: %v", err)
	}
}

// Each sign-up creates a user and a tenant: one address gets SignUps per hour, successful or not.
func TestSignUpsAreLimitedPerAddress(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	signUp := func(email, ip string) error {
		_, err := f.svc.SignUp(ctx, app.SignUpInput{Params: f.params(), Email: email, Password: goodPassword, ClientIP: ip})
		return err
	}
	for i := range app.DefaultLoginLimits.SignUps {
		if err := signUp(fmt.Sprintf("u%d@example.test", i), clientIP); err != nil {
			t.Fatalf("sign-up %d: %v", i, err)
		}
	}
	err := signUp("one-more@example.test", clientIP)
	wantStatus(t, "sign-up over the address's limit", err, codes.ResourceExhausted)
	if got := grpcx.RetryAfterOf(grpcx.StatusOf(err)); got != time.Hour {
		t.Errorf("retry-after = %v, want the hour", got)
	}
	if _, err := f.svc.GetUser(ctx, f.app.ID, "one-more@example.test"); err == nil {
		t.Error("the refused sign-up created a user")
	}
	if err := signUp("elsewhere@example.test", "198.51.100.9"); err != nil {
		t.Fatalf("sign-up from another address: %v", err)
	}
	f.now = f.now.Add(time.Hour + time.Second)
	if err := signUp("later@example.test", clientIP); err != nil {
		t.Fatalf("sign-up after the hour: %v", err)
	}
	// Parallel sign-ups from one fresh address pass exactly the limit.
	got := inParallel(24, func(i int) error {
		return signUp(fmt.Sprintf("p%d@example.test", i), "203.0.113.99")
	})
	if n := count(got, codes.OK); n != app.DefaultLoginLimits.SignUps {
		t.Errorf("%d parallel sign-ups passed, want %d (%v)", n, app.DefaultLoginLimits.SignUps, got)
	}
}

// countingHasher is a slow hasher that records the most hashes it ever ran at once, and how many
// it ran.
type countingHasher struct {
	real                 *password.Hasher
	delay                time.Duration
	running, peak, calls atomic.Int32
}

func (h *countingHasher) do(fn func()) {
	h.calls.Add(1)
	n := h.running.Add(1)
	for {
		p := h.peak.Load()
		if n <= p || h.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(h.delay)
	fn()
	h.running.Add(-1)
}

func (h *countingHasher) Hash(pw string) (s string, err error) {
	h.do(func() { s, err = h.real.Hash(pw) })
	return s, err
}

func (h *countingHasher) Verify(phc, pw string) (ok bool) {
	h.do(func() { ok = h.real.Verify(phc, pw) })
	return ok
}

func (h *countingHasher) Burn(pw string) { h.do(func() { h.real.Burn(pw) }) }

// 200 parallel sign-ins (known and unknown emails, every one from its own address) never run more
// hashes at once than the bound; the excess is told "busy" (ResourceExhausted, a second's
// retry-after) after the short wait, not queued behind the others.
func TestPasswordHashingRunsUnderItsConcurrencyBound(t *testing.T) {
	argon, err := password.NewHasher(cheapPasswords)
	if err != nil {
		t.Fatal(err)
	}
	h := &countingHasher{real: argon}
	const bound, wait = 3, 20 * time.Millisecond
	f := newFixture(t, func(c *app.Config) { c.Hasher, c.HashConcurrency, c.HashWait = h, bound, wait })
	f.signUp(t, "grace@example.test")
	h.delay = 50 * time.Millisecond
	var slowest atomic.Int64
	got := inParallel(200, func(i int) error {
		start := time.Now()
		email := "grace@example.test"
		if i%2 == 1 {
			email = fmt.Sprintf("nobody%d@example.test", i)
		}
		_, err := f.signInFrom(email, "wrong password!", fmt.Sprintf("10.0.%d.%d", i/250, i%250))
		if codeOf(err) == codes.ResourceExhausted {
			if d := time.Since(start); int64(d) > slowest.Load() {
				slowest.Store(int64(d))
			}
			if ra := grpcx.RetryAfterOf(grpcx.StatusOf(err)); ra != time.Second {
				return fmt.Errorf("busy retry-after = %v", ra)
			}
		}
		return err
	})
	if p := h.peak.Load(); p > bound {
		t.Errorf("%d hashes ran at once, bound %d", p, bound)
	}
	busy := count(got, codes.ResourceExhausted)
	if busy == 0 || count(got, codes.InvalidArgument)+busy != 200 {
		t.Fatalf("answers = %v, want wrong-password and busy only, some busy", got)
	}
	if d := time.Duration(slowest.Load()); d > time.Second {
		t.Errorf("a busy answer took %v; it must come after the short wait", d)
	}
	// Busy attempts were never checked, so they do not count against the user: the owner is
	// not locked out by the flood (10 at most were checked against the strict limit).
	h.delay = 0
	if _, err := f.signIn("grace@example.test", goodPassword); err != nil && codeOf(err) != codes.ResourceExhausted {
		t.Fatalf("owner after the flood: %v", err)
	}
}
