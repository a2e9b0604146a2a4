package login

import "github.com/berthhq/berth/gateway/webpage"

// csrfCookie holds the page's double-submit token, scoped to the page's path.
const csrfCookie = "berth_login_csrf"

// csrf is the page's CSRF check (webpage.CSRF).
var csrf = webpage.CSRF{Cookie: csrfCookie, Path: Path}
