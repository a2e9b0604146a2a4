// Package stream consumes the identity, tenant and billing streams for the outbound context: each
// event an app hears about becomes deliveries to the app's subscribed endpoints, recorded in the
// transaction of the event's inbox record (app.Service.Publish).
package stream
