package emailchange

// templates holds every mail's text, by kind and lower-case language code, one place to move
// into a message catalog.
var templates = map[Kind]map[string]template{
	Confirm: {
		"en": newTemplate("confirm-en",
			`Confirm your new email address for {{.App}}`,
			`Hello,

someone asked to use this address for an account of {{.App}}. To confirm that it is yours, open
this link and press "Confirm":
{{.Link}}

The link is valid for 24 hours and works once. Until it is used, the account keeps its old address.
If you did not ask for this, ignore this email: nothing changes.
`,
			`<!DOCTYPE html>
<html lang="en"><body>
<p>Hello,</p>
<p>someone asked to use this address for an account of <strong>{{.App}}</strong>. To confirm that it is yours, open this link and press “Confirm”:</p>
<p><a href="{{.Link}}">Confirm the new address</a></p>
<p>The link is valid for 24 hours and works once. Until it is used, the account keeps its old address.
If you did not ask for this, ignore this email: nothing changes.</p>
</body></html>
`),
		"de": newTemplate("confirm-de",
			`Bestätige deine neue E-Mail-Adresse für {{.App}}`,
			`Hallo,

jemand möchte diese Adresse für ein Konto bei {{.App}} verwenden. Um zu bestätigen, dass sie dir
gehört, öffne diesen Link und klicke auf „Bestätigen“:
{{.Link}}

Der Link ist 24 Stunden gültig und funktioniert einmal. Bis dahin behält das Konto seine alte Adresse.
Wenn du das nicht angefordert hast, ignoriere diese E-Mail: Es ändert sich nichts.
`,
			`<!DOCTYPE html>
<html lang="de"><body>
<p>Hallo,</p>
<p>jemand möchte diese Adresse für ein Konto bei <strong>{{.App}}</strong> verwenden. Um zu bestätigen, dass sie dir gehört, öffne diesen Link und klicke auf „Bestätigen“:</p>
<p><a href="{{.Link}}">Neue Adresse bestätigen</a></p>
<p>Der Link ist 24 Stunden gültig und funktioniert einmal. Bis dahin behält das Konto seine alte Adresse.
Wenn du das nicht angefordert hast, ignoriere diese E-Mail: Es ändert sich nichts.</p>
</body></html>
`),
	},
	Taken: {
		"en": newTemplate("taken-en",
			`Someone tried to use your email address at {{.App}}`,
			`Hello,

someone asked to change the email address of an account of {{.App}} to this address. This
address already belongs to your account there, so nothing was changed and your account is as it was.

If it was you, sign in with this address instead. If it was not, you can ignore this email.
`,
			`<!DOCTYPE html>
<html lang="en"><body>
<p>Hello,</p>
<p>someone asked to change the email address of an account of <strong>{{.App}}</strong> to this address. This address already belongs to your account there, so nothing was changed and your account is as it was.</p>
<p>If it was you, sign in with this address instead. If it was not, you can ignore this email.</p>
</body></html>
`),
		"de": newTemplate("taken-de",
			`Jemand wollte deine E-Mail-Adresse bei {{.App}} verwenden`,
			`Hallo,

jemand wollte die E-Mail-Adresse eines Kontos bei {{.App}} auf diese Adresse ändern. Die Adresse
gehört dort bereits zu deinem Konto, daher wurde nichts geändert, und dein Konto bleibt, wie es war.

Warst du das, melde dich stattdessen mit dieser Adresse an. Wenn nicht, kannst du diese E-Mail ignorieren.
`,
			`<!DOCTYPE html>
<html lang="de"><body>
<p>Hallo,</p>
<p>jemand wollte die E-Mail-Adresse eines Kontos bei <strong>{{.App}}</strong> auf diese Adresse ändern. Die Adresse gehört dort bereits zu deinem Konto, daher wurde nichts geändert, und dein Konto bleibt, wie es war.</p>
<p>Warst du das, melde dich stattdessen mit dieser Adresse an. Wenn nicht, kannst du diese E-Mail ignorieren.</p>
</body></html>
`),
	},
	Changed: {
		"en": newTemplate("changed-en",
			`The email address of your {{.App}} account was changed`,
			`Hello,

the email address of your account of {{.App}} was changed to another address, which confirmed the
change. This address is no longer used for the account.

If you did not make this change, contact the support of {{.App}} at once.
`,
			`<!DOCTYPE html>
<html lang="en"><body>
<p>Hello,</p>
<p>the email address of your account of <strong>{{.App}}</strong> was changed to another address, which confirmed the change. This address is no longer used for the account.</p>
<p>If you did not make this change, contact the support of {{.App}} at once.</p>
</body></html>
`),
		"de": newTemplate("changed-de",
			`Die E-Mail-Adresse deines Kontos bei {{.App}} wurde geändert`,
			`Hallo,

die E-Mail-Adresse deines Kontos bei {{.App}} wurde auf eine andere Adresse geändert, die die
Änderung bestätigt hat. Diese Adresse wird für das Konto nicht mehr verwendet.

Wenn du das nicht warst, wende dich sofort an den Support von {{.App}}.
`,
			`<!DOCTYPE html>
<html lang="de"><body>
<p>Hallo,</p>
<p>die E-Mail-Adresse deines Kontos bei <strong>{{.App}}</strong> wurde auf eine andere Adresse geändert, die die Änderung bestätigt hat. Diese Adresse wird für das Konto nicht mehr verwendet.</p>
<p>Wenn du das nicht warst, wende dich sofort an den Support von {{.App}}.</p>
</body></html>
`),
	},
}
