package webpage

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/boombuler/barcode/qr"

	"github.com/berthhq/berth/pkg/locale"
)

// TOTPKey is what the layout's "totpKey" template shows while a user enrols an authenticator
// app: the key's QR code and its secret for typing.
type TOTPKey struct {
	QR     template.HTML
	Secret string
	locale.Printer
}

// NewTOTPKey renders the otpauth URL as a QR code. The code is inline SVG drawn from the matrix
// alone (no text of the URL reaches the markup), so the pages' CSP needs no img-src for it.
func NewTOTPKey(otpauthURL, secret string, p locale.Printer) (TOTPKey, error) {
	code, err := qr.Encode(otpauthURL, qr.M, qr.Auto)
	if err != nil {
		return TOTPKey{}, fmt.Errorf("qr code: %w", err)
	}
	n := code.Bounds().Dx()
	var path strings.Builder
	for y := range n {
		for x := range n {
			if r, _, _, _ := code.At(x, y).RGBA(); r == 0 {
				fmt.Fprintf(&path, "M%d %dh1v1h-1z", x+4, y+4)
			}
		}
	}
	// A quiet zone of four modules on every side, as scanners expect.
	svg := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %[1]d %[1]d" width="200" height="200" role="img" aria-label="%[3]s" shape-rendering="crispEdges"><rect width="%[1]d" height="%[1]d" fill="#fff"/><path d="%[2]s" fill="#000"/></svg>`,
		n+8, path.String(), template.HTMLEscapeString(p.T("mfa.enrol.qrAlt")))
	return TOTPKey{QR: template.HTML(svg), Secret: secret, Printer: p}, nil // #nosec G203 -- built from numbers and an escaped catalog text
}

// RecoveryCodes is what the layout's "recoveryCodes" template shows: new recovery codes, once.
type RecoveryCodes struct {
	Codes []string
	locale.Printer
}

// Passkey is a WebAuthn ceremony a page runs with the layout's "passkeyScript": its options'
// JSON, the sealed state the form posts back, and the answer's script nonce.
type Passkey struct {
	Options, State, Nonce string
}
