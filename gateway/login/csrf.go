package login

import "github.com/berthhq/berth/gateway/webpage"

// csrfCookie holds the page's double-submit token, scoped to the page's path: nothing else on the
// edge reads it but the password-reset pages under it (RecoverPath), which share it.
const csrfCookie = "berth_login_csrf"

// CSRF is the page's CSRF check (webpage.CSRF), shared by the password-reset pages.
var CSRF = webpage.CSRF{Cookie: csrfCookie, Path: Path}
