package webpage

import (
	"net/http"
	"strings"
	"testing"

	"github.com/boombuler/barcode/qr"

	"github.com/berthhq/berth/pkg/locale"
)

func TestTheTOTPKeysQRCodeIsInlineSVGOfTheMatrixWithoutTheURLsText(t *testing.T) {
	const url = "otpauth://totp/Shop:ada@example.com?issuer=Shop&secret=JBSWY3DPEHPK3PXP"
	k, err := NewTOTPKey(url, "JBSWY3DPEHPK3PXP", locale.For("de"))
	if err != nil {
		t.Fatal(err)
	}
	svg := string(k.QR)
	code, _ := qr.Encode(url, qr.M, qr.Auto)
	dark := 0
	for y := range code.Bounds().Dy() {
		for x := range code.Bounds().Dx() {
			if r, _, _, _ := code.At(x, y).RGBA(); r == 0 {
				dark++
			}
		}
	}
	if !strings.HasPrefix(svg, "<svg ") || strings.Count(svg, "h1v1h-1z") != dark || dark == 0 {
		t.Errorf("the SVG draws %d modules, the code has %d dark ones", strings.Count(svg, "h1v1h-1z"), dark)
	}
	if strings.Contains(svg, "otpauth") || strings.Contains(svg, "JBSWY3DPEHPK3PXP") {
		t.Error("the QR code's markup carries the key's text")
	}
	if !strings.Contains(svg, `aria-label="QR-Code des Schlüssels`) {
		t.Errorf("the QR code is not labelled in the page's language: %s", svg[:200])
	}
}

func TestAllowScriptAddsOnlyTheNonceToThePolicy(t *testing.T) {
	h := http.Header{}
	SetSecurityHeaders(h, "", "")
	before := h.Get("Content-Security-Policy")
	AllowScript(h, "n0nce")
	if got := h.Get("Content-Security-Policy"); got != before+"; script-src 'nonce-n0nce'" {
		t.Errorf("CSP = %q", got)
	}
}
