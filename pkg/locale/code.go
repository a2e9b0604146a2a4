package locale

import (
	"strings"

	"github.com/berthhq/berth/pkg/fault"
)

// The languages Berth speaks.
const (
	English = "en"
	German  = "de"
)

// germanCountries are the countries whose code maps to German: where German is the (or a) main
// language of daily life.
var germanCountries = map[string]bool{"AT": true, "CH": true, "DE": true, "LI": true}

// Normalize maps what a client sent to a language Berth speaks: the language codes en and de
// themselves, AT, CH, DE and LI to de, and any other officially assigned ISO 3166-1 alpha-2
// country code to en, all in any letter case and with surrounding space ignored. Anything else
// (a region-qualified code like de-AT, a three-letter code, a made-up one) is not a language: false.
func Normalize(v string) (string, bool) {
	up := strings.ToUpper(strings.TrimSpace(v))
	switch {
	case up == "EN":
		return English, true
	case germanCountries[up]: // DE is Germany and German alike
		return German, true
	case isCountry(up):
		return English, true
	}
	return "", false
}

// Check is Normalize for a request field: its refusal is invalid input naming the field and the rule.
func Check(field, v string) (string, error) {
	lang, ok := Normalize(v)
	if !ok {
		return "", fault.InvalidField(field, "must be en, de or an ISO 3166-1 alpha-2 country code")
	}
	return lang, nil
}

// isCountry reports whether up (upper case) is an officially assigned ISO 3166-1 alpha-2 code.
func isCountry(up string) bool {
	if len(up) != 2 {
		return false
	}
	return strings.Contains(countries, " "+up+" ")
}

// countries are the 249 officially assigned ISO 3166-1 alpha-2 codes, each between spaces (no user-
// assigned, reserved or withdrawn code: those name no country).
const countries = " " +
	"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ " +
	"BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
	"DE DJ DK DM DO DZ " +
	"EC EE EG EH ER ES ET " +
	"FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY " +
	"HK HM HN HR HT HU " +
	"ID IE IL IM IN IO IQ IR IS IT " +
	"JE JM JO JP " +
	"KE KG KH KI KM KN KP KR KW KY KZ " +
	"LA LB LC LI LK LR LS LT LU LV LY " +
	"MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
	"NA NC NE NF NG NI NL NO NP NR NU NZ " +
	"OM " +
	"PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
	"QA " +
	"RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ " +
	"TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
	"UA UG UM US UY UZ " +
	"VA VC VE VG VI VN VU " +
	"WF WS " +
	"YE YT " +
	"ZA ZM ZW "
