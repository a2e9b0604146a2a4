package convert_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/webhook/internal/app"
	"github.com/berthhq/berth/services/webhook/internal/convert"
	"github.com/berthhq/berth/services/webhook/internal/domain"

	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

func TestAReceiptSetsOnlyTheFieldsThatSaySomething(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   app.Receipt
		want *webhookv1.Receipt
	}{
		{"applied", app.Receipt{}, &webhookv1.Receipt{Received: true}},
		{"another deployment's object", app.Receipt{WrongHost: true, Host: "other.example"},
			&webhookv1.Receipt{Received: true, Host: proto.String("other.example"), WrongHost: proto.Bool(true)}},
		{"ignored", app.Receipt{Ignored: true}, &webhookv1.Receipt{Received: true, Ignored: proto.Bool(true)}},
		{"a pspy payment not paid", app.Receipt{Status: "pending"}, &webhookv1.Receipt{Received: true, Status: proto.String("pending")}},
		{"a host without the wrong-host verdict is not shown", app.Receipt{Host: "berth.example"}, &webhookv1.Receipt{Received: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := convert.Receipt(tc.in); !proto.Equal(got, tc.want) {
				t.Fatalf("Receipt(%+v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestADeliveryKeepsEveryFieldTheEdgeHandsOver(t *testing.T) {
	in := &webhookv1.Delivery{Body: []byte(`{"id":"evt_1"}`), ContentType: "application/json", Signature: "t=1,v1=ab",
		Host: "berth.example", PaymentProviderUuid: "5f0c"}
	want := app.Delivery{Body: in.Body, ContentType: in.ContentType, Signature: in.Signature, Host: in.Host, PaymentProviderUUID: in.PaymentProviderUuid}
	got := convert.Delivery(in)
	if string(got.Body) != string(want.Body) || got.ContentType != want.ContentType || got.Signature != want.Signature ||
		got.Host != want.Host || got.PaymentProviderUUID != want.PaymentProviderUUID {
		t.Fatalf("Delivery = %+v, want %+v", got, want)
	}
}

func TestFiltersReadRFC3339TimesAsUTCAndRefuseOthers(t *testing.T) {
	since := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		list      *webhookv1.ListEventsRequest
		want      domain.Filter
		wantField string // the field refused; "" when the filter is valid
	}{
		{"everything", &webhookv1.ListEventsRequest{}, domain.Filter{}, ""},
		{"every criterion", &webhookv1.ListEventsRequest{ConnectionId: "c1", Outcome: "failed", Provider: "pspx", Limit: 20,
			Since: "2026-03-04T07:06:07+02:00", Until: "2026-03-05T05:06:07Z"},
			domain.Filter{ConnectionID: "c1", Outcome: "failed", Provider: "pspx", Limit: 20, Since: since, Until: since.Add(24 * time.Hour)}, ""},
		{"since not RFC 3339", &webhookv1.ListEventsRequest{Since: "yesterday"}, domain.Filter{}, "since"},
		{"until not RFC 3339", &webhookv1.ListEventsRequest{Until: "2026-03-05"}, domain.Filter{}, "until"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := convert.ListFilter(tc.list)
			replay, replayErr := convert.ReplayFilter(&webhookv1.ReplayEventsRequest{
				ConnectionId: tc.list.GetConnectionId(), Since: tc.list.GetSince(), Until: tc.list.GetUntil()})
			if tc.wantField != "" {
				for _, err := range []error{err, replayErr} {
					if !fault.Is(err, fault.KindInvalid) {
						t.Fatalf("err = %v, want the field %s refused", err, tc.wantField)
					}
				}
				return
			}
			if err != nil || replayErr != nil {
				t.Fatal(err, replayErr)
			}
			if !sameFilter(got, tc.want) {
				t.Fatalf("ListFilter = %+v, want %+v", got, tc.want)
			}
			wantReplay := domain.Filter{ConnectionID: tc.want.ConnectionID, Since: tc.want.Since, Until: tc.want.Until}
			if !sameFilter(replay, wantReplay) {
				t.Fatalf("ReplayFilter = %+v, want %+v", replay, wantReplay)
			}
		})
	}
}

func sameFilter(a, b domain.Filter) bool {
	return a.ConnectionID == b.ConnectionID && a.Outcome == b.Outcome && a.Provider == b.Provider && a.Limit == b.Limit &&
		a.Since.Equal(b.Since) && a.Until.Equal(b.Until) && a.Since.Location() == b.Since.Location()
}

func TestAStoredCallIsListedWithItsBodysSizeAndItsTimesInUTC(t *testing.T) {
	received := time.Date(2026, 3, 4, 5, 6, 7, 123000000, time.FixedZone("CET", 3600))
	pending := domain.Event{ID: "e1", Provider: "pspx", ProviderEventID: "evt_1", Type: "invoice.paid", ConnectionID: "c1", Test: true,
		Outcome: "failed", Attempts: 2, LastError: "billing unavailable", Body: []byte("12345"), ReceivedAt: received}
	applied := pending
	applied.ID, applied.Outcome, applied.AppliedAt = "e2", "applied", received.Add(time.Minute)
	got := convert.EventList([]domain.Event{pending, applied})
	want := &webhookv1.EventList{Events: []*webhookv1.Event{
		{Id: "e1", Provider: "pspx", ProviderEventId: "evt_1", Type: "invoice.paid", ConnectionId: "c1", Test: true, Outcome: "failed",
			Attempts: 2, LastError: "billing unavailable", ReceivedAt: "2026-03-04T04:06:07.123Z", BodyBytes: 5},
		{Id: "e2", Provider: "pspx", ProviderEventId: "evt_1", Type: "invoice.paid", ConnectionId: "c1", Test: true, Outcome: "applied",
			Attempts: 2, LastError: "billing unavailable", ReceivedAt: "2026-03-04T04:06:07.123Z", AppliedAt: "2026-03-04T04:07:07.123Z", BodyBytes: 5},
	}}
	if !proto.Equal(got, want) {
		t.Fatalf("EventList =\n %v\nwant\n %v", got, want)
	}
	if got := convert.EventList(nil); len(got.GetEvents()) != 0 {
		t.Fatalf("an empty list renders as %v", got)
	}
	if got, want := convert.ReplayResult(app.Replayed{Replayed: 3, Applied: 2, Failed: 1}),
		(&webhookv1.ReplayResult{Replayed: 3, Applied: 2, Failed: 1}); !proto.Equal(got, want) {
		t.Fatalf("ReplayResult = %v, want %v", got, want)
	}
}
