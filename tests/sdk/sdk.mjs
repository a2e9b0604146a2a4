// Drives the published browser SDK (@userdocks/web-client-sdk, pinned in package.json) against a
// running Berth edge, the way an app's page does after the hosted login page redirected back to it:
// exchange the code from the redirect URL, read the token, refresh it.
//
// Node stands in for the browser with the globals the SDK touches: window.location (the redirect
// URL the SDK reads code, state, service and client_id from, and checks the token's redirectUri
// against), window.crypto, localStorage (where it keeps the client id and the refresh token) and
// navigator (its language guess). There is no window.Worker, so the SDK keeps the token in memory
// instead of a web worker. fetch and atob are Node's own, like a browser's.
//
// Environment: BERTH_BASE_URL (the edge), BERTH_CLIENT_ID (the app), BERTH_REDIRECT_URI (the
// app's registered redirect URI), BERTH_CALLBACK_URL (the redirect the login page produced).
// Prints one JSON summary line on stdout; exits 1 when an expectation fails.
//
// The SDK does not read state or nonce from localStorage when it exchanges a code: it takes state
// from the redirect URL and sends a fresh nonce with every token request, which the server must
// echo in the ID token. So nothing needs to be planted for them.

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is required`);
    process.exit(2);
  }
  return v;
};

const baseUrl = env('BERTH_BASE_URL');
const clientId = env('BERTH_CLIENT_ID');
const redirectUri = env('BERTH_REDIRECT_URI');
const callback = new URL(env('BERTH_CALLBACK_URL'));

const storage = new Map();
globalThis.localStorage = {
  getItem: (k) => (storage.has(k) ? storage.get(k) : null),
  setItem: (k, v) => storage.set(k, String(v)),
  removeItem: (k) => storage.delete(k),
  clear: () => storage.clear(),
};
globalThis.window = {
  location: { href: callback.href, origin: callback.origin, pathname: callback.pathname },
  crypto: globalThis.crypto,
  addEventListener() {},
  removeEventListener() {},
};
if (typeof globalThis.navigator === 'undefined') {
  // Node 20 has no navigator; Node 21+ has one with a language.
  globalThis.navigator = { language: 'en-US', languages: ['en-US'] };
}

// Record every token request's outcome: the SDK swallows failures and returns an empty token, so
// these are what explain a failed expectation. Bodies of failed answers only — never tokens.
const requests = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const res = await realFetch(input, init);
  const entry = { url: String(input), status: res.status };
  if (!res.ok) {
    entry.body = await res.clone().text();
  }
  requests.push(entry);
  return res;
};

// Imported after the globals exist, as a page loads it after the browser set them up.
const { default: userdocks } = await import('@userdocks/web-client-sdk');

await userdocks.initialize({
  authServer: { apiUri: baseUrl, loginUri: `${baseUrl}/login`, domain: 'berth.test' },
  app: { origin: baseUrl, clientId, redirectUri, refreshType: 'refresh' },
});

const failures = [];
const expect = (ok, what) => {
  if (!ok) failures.push(what);
};

// getToken returns the SDK's stored token object and recomputes expiresIn (seconds left) from the
// ID token's exp; copy the fields before the next call changes it.
const snapshot = async () => {
  const t = await userdocks.getToken();
  return { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresIn: t.expiresIn };
};

const exchanged = await userdocks.exchangeCodeForToken();
const first = await snapshot();
expect(exchanged === true, 'exchangeCodeForToken did not report success');
expect(typeof first.accessToken === 'string' && first.accessToken !== '', 'no access token after the code exchange');
expect(typeof first.refreshToken === 'string' && first.refreshToken !== '', 'no refresh token after the code exchange');
expect(first.expiresIn > 0, `expiresIn after the code exchange is ${first.expiresIn}, want > 0`);

const refreshed = await userdocks.refresh();
const second = await snapshot();
expect(refreshed === true, 'refresh did not report success');
expect(typeof second.accessToken === 'string' && second.accessToken !== '', 'no access token after refresh');
expect(second.accessToken !== first.accessToken, 'refresh returned the same access token');
expect(typeof second.refreshToken === 'string' && second.refreshToken !== '', 'no refresh token after refresh');
expect(second.refreshToken !== first.refreshToken, 'refresh token was not rotated');
expect(second.expiresIn > 0, `expiresIn after refresh is ${second.expiresIn}, want > 0`);

const summary = {
  exchanged,
  accessToken: Boolean(first.accessToken),
  expiresIn: first.expiresIn,
  refreshed,
  refreshedAccessToken: Boolean(second.accessToken),
  refreshedExpiresIn: second.expiresIn,
  accessTokenChanged: Boolean(second.accessToken) && second.accessToken !== first.accessToken,
  refreshTokenRotated: Boolean(second.refreshToken) && second.refreshToken !== first.refreshToken,
  requests,
  failures,
};
console.log(JSON.stringify(summary));
userdocks.terminate();
process.exit(failures.length === 0 ? 0 : 1);
