package console

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// fakeAnalytics answers GetDailySeries with the rows fill makes for each day of the asked range
// (ending on the tests' start day) and records the calls; err, when set, refuses them.
type fakeAnalytics struct {
	mu    sync.Mutex
	calls []call
	err   error
	fill  func(i int, r *analyticsv1.DailyRow)
}

func (f *fakeAnalytics) GetDailySeries(ctx context.Context, in *analyticsv1.GetDailySeriesRequest, _ ...grpc.CallOption) (*analyticsv1.DailySeries, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	bearer := ""
	if v := metadata.ValueFromOutgoingContext(ctx, "authorization"); len(v) == 1 {
		bearer = v[0]
	}
	f.calls = append(f.calls, call{method: "GetDailySeries", bearer: bearer, req: in})
	if f.err != nil {
		return nil, f.err
	}
	from := start.AddDate(0, 0, 1-int(in.GetDays()))
	s := &analyticsv1.DailySeries{AppId: in.GetAppId(), From: from.Format(time.DateOnly), To: start.Format(time.DateOnly)}
	for i := range int(in.GetDays()) {
		r := &analyticsv1.DailyRow{Day: from.AddDate(0, 0, i).Format(time.DateOnly)}
		if f.fill != nil {
			f.fill(i, r)
		}
		s.Rows = append(s.Rows, r)
	}
	return s, nil
}

func (f *fakeAnalytics) received() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}
