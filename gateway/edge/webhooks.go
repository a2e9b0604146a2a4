package edge

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// Routes 3 and 4 take the provider's raw bytes: a generated handler would decode and re-encode
// the body, and the pspx signature is over the bytes as sent. The edge mounts them itself and
// forwards body, headers and host unchanged to the webhook-ingest service, then renders its
// receipt as the route's whole body ({received:true, ...}) or a failure in the /api/v1 family.

// Paths of the webhook routes (their proto declares them too, for the route table).
const (
	PspxWebhookPath = "/api/v1/webhooks/pspx"
	PspyWebhookPath = "/api/v1/webhooks/pspy"
)

// mountWebhooks registers routes 3 and 4 on mux over the webhook module's connection.
func mountWebhooks(mux pathHandler, cc grpc.ClientConnInterface, log *slog.Logger) error {
	client := webhookv1.NewWebhookIngestServiceClient(cc)
	for path, send := range map[string]func(context.Context, *webhookv1.Delivery, ...grpc.CallOption) (*webhookv1.Receipt, error){
		PspxWebhookPath: client.ReceivePspx,
		PspyWebhookPath: client.ReceivePspy,
	} {
		err := mux.HandlePath(http.MethodPost, path, func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
			forwardWebhook(w, r, send, log)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func forwardWebhook(w http.ResponseWriter, r *http.Request, send func(context.Context, *webhookv1.Delivery, ...grpc.CallOption) (*webhookv1.Receipt, error), log *slog.Logger) {
	body, err := io.ReadAll(r.Body) // the middleware bounds it at maxBody
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeFailure(w, edgev1.Family_FAMILY_API, failure{status: http.StatusBadRequest, message: "The request body is larger than 1 MiB"})
			return
		}
		writeFailure(w, edgev1.Family_FAMILY_API, failure{status: http.StatusBadRequest, message: "The request body could not be read"})
		return
	}
	// Header and query text goes into proto strings, which must be UTF-8; a provider sends
	// nothing else, and whatever else arrives can at most fail the signature or be ignored.
	text := func(v string) string { return strings.ToValidUTF8(v, "\uFFFD") }
	rec, err := send(r.Context(), &webhookv1.Delivery{Body: body, ContentType: text(r.Header.Get("Content-Type")),
		Signature: text(r.Header.Get("Pspx-Signature")), Host: text(r.Host), PaymentProviderUuid: text(r.URL.Query().Get("paymentProviderUuid"))})
	if err != nil {
		f := failureOf(err)
		if f.status >= http.StatusInternalServerError && !clientGone(r) {
			log.ErrorContext(r.Context(), "request failed", slog.String("route", r.URL.Path), slog.String("error", err.Error()))
		}
		writeFailure(w, edgev1.Family_FAMILY_API, f)
		return
	}
	// Unset fields stay out: {"received":true} unless the receipt says more.
	buf, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(rec)
	if err != nil {
		writeFailure(w, edgev1.Family_FAMILY_API, failure{status: http.StatusInternalServerError, message: internalMessage})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf)
}
