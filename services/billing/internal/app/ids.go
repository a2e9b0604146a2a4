package app

import (
	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
)

// isUUID reports whether s is a UUID in the canonical 36-character form.
func isUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

// errAppNotFound answers a path app that is not the caller's: absent and foreign look alike.
var errAppNotFound = fault.NotFound("App not found")

// ownApp checks that the path's app is the admitted caller's app.
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
