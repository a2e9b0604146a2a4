package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/berthhq/berth/gateway/console"
	"github.com/berthhq/berth/pkg/authn/apikey"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/sealbox"
)

// secretSettings are the deployment secrets gen-secrets makes: their declarations say the name and
// the length, and a test parses the output with them.
var secretSettings = []config.Setting{sealbox.KeySetting, apikey.PepperSetting, console.KeySetting}

// secretSize is the length of a secret whose declaration fixes none.
const secretSize = 32

// genSecrets prints an export line with a fresh random value, in hex, for each secret setting.
func genSecrets(inv *invocation) error {
	if err := inv.parse(); err != nil {
		return err
	}
	var b strings.Builder
	for _, s := range secretSettings {
		n := s.Size
		if n == 0 {
			n = secretSize
		}
		key := make([]byte, n)
		if _, err := rand.Read(key); err != nil {
			return err
		}
		fmt.Fprintf(&b, "export %s=%s\n", s.Name, hex.EncodeToString(key))
	}
	_, err := fmt.Fprint(inv.out, b.String())
	return err
}
