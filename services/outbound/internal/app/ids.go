package app

import (
	"strings"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
)

// errAppNotFound answers a path naming an app other than the key's: the same answer as an unknown
// app, so a key learns nothing about other apps.
var errAppNotFound = fault.NotFound("App not found")

func canonical(id string) string { return strings.ToLower(strings.TrimSpace(id)) }

func isUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && len(s) == 36 && u.String() == s
}

// ownApp holds the path's app to the caller's: a key acts on its own app only.
func ownApp(callerApp, appID string) error {
	appID = canonical(appID)
	if !isUUID(appID) {
		return fault.InvalidField("appId", "must be a UUID")
	}
	if appID != callerApp {
		return errAppNotFound
	}
	return nil
}

// ownEndpoint checks the path's app as ownApp does and that the endpoint id is a UUID.
func ownEndpoint(callerApp, appID, endpointID string) error {
	if err := ownApp(callerApp, appID); err != nil {
		return err
	}
	if !isUUID(canonical(endpointID)) {
		return fault.InvalidField("endpointId", "must be a UUID")
	}
	return nil
}
