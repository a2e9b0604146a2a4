package app

import (
	"strings"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
)

func canonical(id string) string { return strings.ToLower(strings.TrimSpace(id)) }

func isUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && len(s) == 36 && u.String() == s
}

// ownEndpoint checks the path's app as authn.OwnApp does and that the endpoint id is a UUID.
func ownEndpoint(callerApp, appID, endpointID string) error {
	if err := authn.OwnApp(callerApp, appID); err != nil {
		return err
	}
	if !isUUID(canonical(endpointID)) {
		return fault.InvalidField("endpointId", "must be a UUID")
	}
	return nil
}
