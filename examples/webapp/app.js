// The example app's whole logic. A real app hard-codes its client id and Berth's address; this
// page reads them from /dev/example/config.json, which the all-in-one writes for the demo app.
//
// The flow: without a session the page offers the hosted sign-in and sign-up pages
// (userdocks.redirectTo). They send the browser back here with an authorization code, which the
// SDK exchanges for tokens (route 1, POST /api/v1/tokens). With the access token the page reads the
// user (GET /v1/users/me) and the user's tenant (GET /v1/tenants/me).

const show = (id, text) => { document.getElementById(id).textContent = text; };

async function callAPI(path, accessToken) {
  const res = await fetch(path, { headers: { Authorization: `Bearer ${accessToken}` } });
  const body = await res.json();
  if (!res.ok || !body.success) {
    throw new Error(`${path}: ${res.status} ${body.error || ''}`);
  }
  return body.data;
}

async function main() {
  const config = await (await fetch('/dev/example/config.json')).json();
  if (!config.clientId) {
    show('status', config.problem);
    return;
  }
  const here = `${window.location.origin}${window.location.pathname}`;
  await userdocks.initialize({
    authServer: {
      apiUri: window.location.origin,
      loginUri: `${window.location.origin}/login`,
      // The SDK loads its token-keeping web worker from <sdkUri>/v1/identity-worker.js.
      sdkUri: `${window.location.origin}/dev/example`,
      domain: window.location.host,
    },
    app: { origin: window.location.origin, clientId: config.clientId, redirectUri: here, refreshType: 'refresh' },
  });
  document.getElementById('sign-in').onclick = () => userdocks.redirectTo({ type: 'signIn' });
  document.getElementById('sign-up').onclick = () => userdocks.redirectTo({ type: 'signUp' });

  // Back from the hosted page: exchange the code (single use), then drop it from the address bar.
  // Otherwise try the refresh token the SDK kept from an earlier visit.
  if (new URLSearchParams(window.location.search).has('code')) {
    await userdocks.exchangeCodeForToken();
    window.history.replaceState(null, '', here);
  } else {
    await userdocks.refresh();
  }
  const { accessToken } = await userdocks.getToken();
  if (!accessToken) {
    show('status', 'Not signed in.');
    document.getElementById('actions').hidden = false;
    return;
  }
  const [user, tenant] = await Promise.all([callAPI('/v1/users/me', accessToken), callAPI('/v1/tenants/me', accessToken)]);
  show('user-email', user.email);
  show('user-name', user.name);
  show('tenant-name', tenant.name);
  show('tenant-id', tenant.id);
  show('status', 'Signed in.');
  document.getElementById('who').hidden = false;
}

main().catch((err) => show('status', `Something went wrong: ${err.message}`));
