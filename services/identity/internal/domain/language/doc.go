// Package language is the one rule for the `language` a client sends to identity (route 18, route
// 23, users created by operators): Berth speaks English and German, and the published REST wrapper
// sends an ISO 3166-1 country code where a language is meant, so a country maps to the language
// its people read Berth's mails and pages in.
package language
