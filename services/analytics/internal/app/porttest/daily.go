package porttest

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// dailyCases are the cases of the daily series, run by Run with the others.
var dailyCases = []struct {
	name string
	run  func(t *testing.T, s app.Store)
}{
	{"DailySeriesCountsSignInsAndDistinctUsersPerUTCDay", dailySignIns},
	{"DailySeriesHasAZeroRowForEveryDayWithoutFacts", dailyZeroRows},
	{"AFactIsCountedOncePerKeyOnItsEarliestDay", dailyFactOnce},
	{"DailySeriesSumsRevenuePerCurrencyAndCountsAFrozenTenantOncePerDay", dailyFactSums},
	{"ASubscriptionIsActiveFromItsStartUntilTheDayItEnds", dailyActive},
	{"ConcurrentRecordsOfOneFactCountOnce", dailyConcurrent},
	{"ResetEmptiesTheDailyFacts", dailyReset},
	{"AReplayMovingAFactToAnEarlierDayMovesItsCountAndAmountWithIt", dailyReplayMoves},
	{"AUserSigningInTwiceADayIsOneActiveUserOfThatDayAndOfEachOtherDay", dailySignInsTwice},
	{"ATenantFrozenTwiceInADayLeavesTheDayOnlyWithItsLastFreeze", dailyFrozenTwice},
	{"MovingOneCurrencysPaymentLeavesTheOtherCurrencyAndNoZeroAmount", dailyTwoCurrencies},
	{"ReplaysMovingASubscriptionsStartOrEndEarlierMoveTheDaysItIsActive", dailyActiveMoves},
}

// march is midnight UTC of March d, 2026.
func march(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }

// marchWeek is March 4 to 10, the range the daily cases read.
var marchWeek = domain.Range{From: march(4), To: march(10)}

func series(t *testing.T, s app.Store, appID string, r domain.Range) []domain.DailyRow {
	t.Helper()
	got, err := s.DailySeries(ctx, appID, r)
	if err != nil {
		t.Fatalf("DailySeries: %v", err)
	}
	if got.AppID != appID || got.Range != r {
		t.Fatalf("series of %s over %+v, want %s over %+v", got.AppID, got.Range, appID, r)
	}
	return got.Rows
}

func fact(t *testing.T, s app.Store, f domain.Fact) {
	t.Helper()
	if err := s.RecordFact(ctx, f); err != nil {
		t.Fatalf("RecordFact: %v", err)
	}
}

// weekWith is the zero rows of marchWeek with set applied to the row of each March day it names.
func weekWith(set map[int]func(*domain.DailyRow)) []domain.DailyRow {
	rows := domain.NewSeries("", marchWeek).Rows
	for d, f := range set {
		f(&rows[d-4])
	}
	return rows
}

func assertRows(t *testing.T, got, want []domain.DailyRow) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows\n got %+v\nwant %+v", got, want)
	}
}

func dailySignIns(t *testing.T, s app.Store) {
	appID, ada, bob := uuid.NewString(), uuid.NewString(), uuid.NewString()
	for _, in := range []domain.SignIn{
		signIn(appID, ada, march(4)),                         // first instant of the range
		signIn(appID, ada, march(4).Add(time.Hour)),          // Ada again: one active user
		signIn(appID, bob, march(5).Add(-time.Microsecond)),  // last instant of the 4th
		signIn(appID, bob, march(11).Add(-time.Microsecond)), // last instant of the range
		signIn(appID, bob, march(11)),                        // after it
		signIn(appID, bob, march(4).Add(-time.Microsecond)),  // before it
		signIn(uuid.NewString(), ada, march(6)),              // another app's
	} {
		record(t, s, in)
	}
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		4:  func(r *domain.DailyRow) { r.SignIns, r.ActiveUsers = 3, 2 },
		10: func(r *domain.DailyRow) { r.SignIns, r.ActiveUsers = 1, 1 },
	}))
}

func dailyZeroRows(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactNewUser, Key: uuid.NewString(), Day: march(7)})
	year := domain.Range{From: march(1).AddDate(-1, 0, 1), To: march(1)}
	rows := series(t, s, appID, year)
	if len(rows) != 365 {
		t.Fatalf("%d rows, want 365", len(rows))
	}
	for i, r := range rows {
		if want := year.From.AddDate(0, 0, i); !r.Day.Equal(want) || !reflect.DeepEqual(r, domain.DailyRow{Day: want}) {
			t.Fatalf("row %d = %+v, want the zero row of %s", i, r, want)
		}
	}
}

func dailyFactOnce(t *testing.T, s app.Store) {
	appID, user := uuid.NewString(), uuid.NewString()
	fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactNewUser, Key: user, Day: march(8)})
	fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactNewUser, Key: user, Day: march(8)})
	fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactNewUser, Key: user, Day: march(9)}) // later: ignored
	// The same key under another kind or app is another fact.
	fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactNewTenant, Key: user, Day: march(8)})
	fact(t, s, domain.Fact{AppID: uuid.NewString(), Kind: domain.FactNewUser, Key: user, Day: march(8)})
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		8: func(r *domain.DailyRow) { r.NewUsers, r.NewTenants = 1, 1 },
	}))
	fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactNewUser, Key: user, Day: march(5)}) // earlier: moves it
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		5: func(r *domain.DailyRow) { r.NewUsers = 1 },
		8: func(r *domain.DailyRow) { r.NewTenants = 1 },
	}))
}

func dailyFactSums(t *testing.T, s app.Store) {
	appID, tenant, other := uuid.NewString(), uuid.NewString(), uuid.NewString()
	money := func(kind domain.FactKind, currency string, amount int64, d int) domain.Fact {
		return domain.Fact{AppID: appID, Kind: kind, Key: uuid.NewString(), Day: march(d), Currency: currency, Amount: amount}
	}
	for _, f := range []domain.Fact{
		money(domain.FactOneTime, "EUR", 500, 6), money(domain.FactOneTime, "EUR", 250, 6), money(domain.FactOneTime, "USD", 300, 6),
		money(domain.FactRecurring, "EUR", 1000, 6), money(domain.FactRecurring, "CHF", 900, 7),
		money(domain.FactRecurring, "EUR", 1, 11), // after the range
		{AppID: appID, Kind: domain.FactPaymentFailure, Key: uuid.NewString(), Day: march(9)},
		{AppID: appID, Kind: domain.FactPaymentFailure, Key: uuid.NewString(), Day: march(9)},
		{AppID: appID, Kind: domain.FactTenantFrozen, Key: uuid.NewString(), Subject: tenant, Day: march(9)},
		{AppID: appID, Kind: domain.FactTenantFrozen, Key: uuid.NewString(), Subject: tenant, Day: march(9)},
		{AppID: appID, Kind: domain.FactTenantFrozen, Key: uuid.NewString(), Subject: other, Day: march(9)},
		{AppID: appID, Kind: domain.FactTenantFrozen, Key: uuid.NewString(), Subject: tenant, Day: march(10)},
	} {
		fact(t, s, f)
	}
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		6: func(r *domain.DailyRow) {
			r.OneTime = []domain.Money{{Currency: "EUR", Amount: 750}, {Currency: "USD", Amount: 300}}
			r.Recurring = []domain.Money{{Currency: "EUR", Amount: 1000}}
		},
		7:  func(r *domain.DailyRow) { r.Recurring = []domain.Money{{Currency: "CHF", Amount: 900}} },
		9:  func(r *domain.DailyRow) { r.PaymentFailures, r.FrozenTenants = 2, 2 },
		10: func(r *domain.DailyRow) { r.FrozenTenants = 1 },
	}))
}

func dailyActive(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	run := func(start, end time.Time) {
		key := uuid.NewString()
		fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactSubscriptionRun, Key: key, Day: start})
		if !end.IsZero() {
			fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactSubscriptionEnd, Key: key, Day: end})
		}
	}
	run(march(1), time.Time{})                                                                                    // since before the range, running: every day
	run(march(1), march(4))                                                                                       // ended on the range's first day: none
	run(march(5), march(8))                                                                                       // the 5th to the 7th
	run(march(10), time.Time{})                                                                                   // from the last day
	run(march(11), time.Time{})                                                                                   // after the range: none
	run(march(6), march(6))                                                                                       // ended the day it started: none
	fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactSubscriptionEnd, Key: uuid.NewString(), Day: march(9)}) // an end alone: none
	want := weekWith(nil)
	for d, n := range map[int]int64{4: 1, 5: 2, 6: 2, 7: 2, 8: 1, 9: 1, 10: 2} {
		want[d-4].ActiveSubscriptions = n
	}
	assertRows(t, series(t, s, appID, marchWeek), want)
}

func dailyConcurrent(t *testing.T, s app.Store) {
	appID, key := uuid.NewString(), uuid.NewString()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			errs <- s.RecordFact(ctx, domain.Fact{AppID: appID, Kind: domain.FactOneTime, Key: key, Day: march(4 + i%3), Currency: "EUR", Amount: 100})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("RecordFact: %v", err)
		}
	}
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		4: func(r *domain.DailyRow) { r.OneTime = []domain.Money{{Currency: "EUR", Amount: 100}} },
	}))
}

func dailyReset(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactNewUser, Key: uuid.NewString(), Day: march(5)})
	record(t, s, signIn(appID, uuid.NewString(), march(5)))
	if err := s.Reset(ctx); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	assertRows(t, series(t, s, appID, marchWeek), weekWith(nil))
}

func dailyReplayMoves(t *testing.T, s app.Store) {
	appID, inside, outside := uuid.NewString(), uuid.NewString(), uuid.NewString()
	pay := func(key string, d int) domain.Fact {
		return domain.Fact{AppID: appID, Kind: domain.FactOneTime, Key: key, Day: march(d), Currency: "EUR", Amount: 400}
	}
	fact(t, s, pay(inside, 9))
	fact(t, s, pay(outside, 8))
	fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactNewUser, Key: outside, Day: march(10)})
	fact(t, s, pay(inside, 6))                                                                   // moves within the range
	fact(t, s, pay(inside, 7))                                                                   // a later replay: stays on the 6th
	fact(t, s, pay(outside, 2))                                                                  // moves out of the range
	fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactNewUser, Key: outside, Day: march(1)}) // out of the range too
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		6: func(r *domain.DailyRow) { r.OneTime = []domain.Money{{Currency: "EUR", Amount: 400}} },
	}))
	assertRows(t, series(t, s, appID, domain.Range{From: march(1), To: march(2)}), []domain.DailyRow{
		{Day: march(1), NewUsers: 1},
		{Day: march(2), OneTime: []domain.Money{{Currency: "EUR", Amount: 400}}},
	})
}

func dailySignInsTwice(t *testing.T, s app.Store) {
	appID, ada, bob := uuid.NewString(), uuid.NewString(), uuid.NewString()
	again := signIn(appID, ada, march(6).Add(20*time.Hour))
	for _, in := range []domain.SignIn{
		signIn(appID, ada, march(6).Add(time.Hour)), again, again, // the same sign-in replayed counts once
		signIn(appID, ada, march(7).Add(time.Minute)), signIn(appID, bob, march(7)),
	} {
		record(t, s, in)
	}
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		6: func(r *domain.DailyRow) { r.SignIns, r.ActiveUsers = 2, 1 },
		7: func(r *domain.DailyRow) { r.SignIns, r.ActiveUsers = 2, 2 },
	}))
}

func dailyFrozenTwice(t *testing.T, s app.Store) {
	appID, tenant, first, second := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	freeze := func(key string, d int) {
		fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactTenantFrozen, Key: key, Subject: tenant, Day: march(d)})
	}
	freeze(first, 9)
	freeze(second, 9)
	freeze(first, 9) // replayed: still one freeze of one tenant
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		9: func(r *domain.DailyRow) { r.FrozenTenants = 1 },
	}))
	freeze(first, 7) // one freeze moves: the 9th keeps the other
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		7: func(r *domain.DailyRow) { r.FrozenTenants = 1 },
		9: func(r *domain.DailyRow) { r.FrozenTenants = 1 },
	}))
	freeze(second, 7) // the last one moves too: the 7th counts the tenant once
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		7: func(r *domain.DailyRow) { r.FrozenTenants = 1 },
	}))
}

func dailyTwoCurrencies(t *testing.T, s app.Store) {
	appID, eur, usd := uuid.NewString(), uuid.NewString(), uuid.NewString()
	pay := func(key, currency string, amount int64, d int) {
		fact(t, s, domain.Fact{AppID: appID, Kind: domain.FactRecurring, Key: key, Day: march(d), Currency: currency, Amount: amount})
	}
	pay(eur, "EUR", 1200, 8)
	pay(usd, "USD", 1500, 8)
	pay(uuid.NewString(), "USD", 25, 8)
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		8: func(r *domain.DailyRow) {
			r.Recurring = []domain.Money{{Currency: "EUR", Amount: 1200}, {Currency: "USD", Amount: 1525}}
		},
	}))
	pay(eur, "EUR", 1200, 5)
	assertRows(t, series(t, s, appID, marchWeek), weekWith(map[int]func(*domain.DailyRow){
		5: func(r *domain.DailyRow) { r.Recurring = []domain.Money{{Currency: "EUR", Amount: 1200}} },
		8: func(r *domain.DailyRow) { r.Recurring = []domain.Money{{Currency: "USD", Amount: 1525}} },
	}))
}

func dailyActiveMoves(t *testing.T, s app.Store) {
	appID, moved, ending, late := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	sub := func(kind domain.FactKind, key string, d int) {
		fact(t, s, domain.Fact{AppID: appID, Kind: kind, Key: key, Day: march(d)})
	}
	sub(domain.FactSubscriptionEnd, late, 9) // its end arrives first: nothing runs yet
	sub(domain.FactSubscriptionRun, moved, 8)
	sub(domain.FactSubscriptionRun, ending, 5)
	sub(domain.FactSubscriptionEnd, ending, 10)
	want := weekWith(nil)
	for d, n := range map[int]int64{5: 1, 6: 1, 7: 1, 8: 2, 9: 2, 10: 1} {
		want[d-4].ActiveSubscriptions = n
	}
	assertRows(t, series(t, s, appID, marchWeek), want)
	sub(domain.FactSubscriptionRun, late, 6)   // late's start: it runs the 6th to the 8th
	sub(domain.FactSubscriptionRun, moved, 2)  // an earlier payment: it runs from before the range
	sub(domain.FactSubscriptionEnd, ending, 7) // an earlier end: it ran the 5th and 6th
	sub(domain.FactSubscriptionEnd, ending, 8) // a later one changes nothing
	want = weekWith(nil)
	for d, n := range map[int]int64{4: 1, 5: 2, 6: 3, 7: 2, 8: 2, 9: 1, 10: 1} {
		want[d-4].ActiveSubscriptions = n
	}
	assertRows(t, series(t, s, appID, marchWeek), want)
	sub(domain.FactSubscriptionEnd, late, 6) // ends the day it started: it never ran
	for _, d := range []int{6, 7, 8} {
		want[d-4].ActiveSubscriptions--
	}
	assertRows(t, series(t, s, appID, marchWeek), want)
}
