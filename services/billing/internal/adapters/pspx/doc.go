// Package pspx is billing's client of the pspx REST API: it implements app.Pspx with the
// provider's form-encoded requests and JSON answers, through the one retrying request loop
// (httpcall), with the secret key of the call's connection and a pinned API version. Answers are
// decoded into what the port needs and nothing more, except the invoice and payment-intent
// objects the port keeps as sent; the provider's error objects become *app.ProviderError.
package pspx
